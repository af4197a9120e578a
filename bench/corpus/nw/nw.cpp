//===- nw.cpp - Rodinia's nw in the foreign-kernel corpus -----------------===//
//
// Needleman-Wunsch alignment scores of two random sequences of Len amino
// acids (Len a multiple of 16), after Rodinia's opencl/nw: the score matrix
// of (Len+1) x (Len+1) ints is filled by 16 x 16 blocks, nw_kernel1 over
// the block anti-diagonals of the upper-left triangle, then nw_kernel2
// over those of the lower-right one, penalty 10 (Rodinia's run script).
//
// The input is the host's: each sequence draws its residues uniformly from
// 1..10 (rand() % 10 + 1 there, corpus::Random here), the reference matrix
// holds BLOSUM62 of each pair, the first row and column of the score matrix
// hold -i * penalty. Rodinia's host has no reference for the scores (only
// an optional traceback print); the check is the serial recurrence of the
// same scores over the whole matrix, compared exactly.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <omp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int BlockSize = 16; // Rodinia's BLOCK_SIZE
constexpr int Penalty = 10;

// The BLOSUM62 substitution matrix, in Rodinia's order of the 24 symbols.
const int Blosum62[24][24] = {
    {4, -1, -2, -2, 0, -1, -1, 0, -2, -1, -1, -1,
     -1, -2, -1, 1, 0, -3, -2, 0, -2, -1, 0, -4},
    {-1, 5, 0, -2, -3, 1, 0, -2, 0, -3, -2, 2,
     -1, -3, -2, -1, -1, -3, -2, -3, -1, 0, -1, -4},
    {-2, 0, 6, 1, -3, 0, 0, 0, 1, -3, -3, 0,
     -2, -3, -2, 1, 0, -4, -2, -3, 3, 0, -1, -4},
    {-2, -2, 1, 6, -3, 0, 2, -1, -1, -3, -4, -1,
     -3, -3, -1, 0, -1, -4, -3, -3, 4, 1, -1, -4},
    {0, -3, -3, -3, 9, -3, -4, -3, -3, -1, -1, -3,
     -1, -2, -3, -1, -1, -2, -2, -1, -3, -3, -2, -4},
    {-1, 1, 0, 0, -3, 5, 2, -2, 0, -3, -2, 1,
     0, -3, -1, 0, -1, -2, -1, -2, 0, 3, -1, -4},
    {-1, 0, 0, 2, -4, 2, 5, -2, 0, -3, -3, 1,
     -2, -3, -1, 0, -1, -3, -2, -2, 1, 4, -1, -4},
    {0, -2, 0, -1, -3, -2, -2, 6, -2, -4, -4, -2,
     -3, -3, -2, 0, -2, -2, -3, -3, -1, -2, -1, -4},
    {-2, 0, 1, -1, -3, 0, 0, -2, 8, -3, -3, -1,
     -2, -1, -2, -1, -2, -2, 2, -3, 0, 0, -1, -4},
    {-1, -3, -3, -3, -1, -3, -3, -4, -3, 4, 2, -3,
     1, 0, -3, -2, -1, -3, -1, 3, -3, -3, -1, -4},
    {-1, -2, -3, -4, -1, -2, -3, -4, -3, 2, 4, -2,
     2, 0, -3, -2, -1, -2, -1, 1, -4, -3, -1, -4},
    {-1, 2, 0, -1, -3, 1, 1, -2, -1, -3, -2, 5,
     -1, -3, -1, 0, -1, -3, -2, -2, 0, 1, -1, -4},
    {-1, -1, -2, -3, -1, 0, -2, -3, -2, 1, 2, -1,
     5, 0, -2, -1, -1, -1, -1, 1, -3, -1, -1, -4},
    {-2, -3, -3, -3, -2, -3, -3, -3, -1, 0, 0, -3,
     0, 6, -4, -2, -2, 1, 3, -1, -3, -3, -1, -4},
    {-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1,
     -2, -4, 7, -1, -1, -4, -3, -2, -2, -1, -2, -4},
    {1, -1, 1, 0, -1, 0, 0, 0, -1, -2, -2, 0,
     -1, -2, -1, 4, 1, -3, -2, -2, 0, 0, 0, -4},
    {0, -1, 0, -1, -1, -1, -1, -2, -2, -1, -1, -1,
     -1, -2, -1, 1, 5, -2, -2, 0, -1, -1, 0, -4},
    {-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3,
     -1, 1, -4, -3, -2, 11, 2, -3, -4, -3, -2, -4},
    {-2, -2, -2, -3, -2, -1, -2, -3, 2, -1, -1, -2,
     -1, 3, -3, -2, -2, 2, 7, -1, -3, -2, -1, -4},
    {0, -3, -3, -3, -1, -2, -2, -3, -3, 3, 1, -2,
     1, -1, -2, -2, 0, -3, -1, 4, -3, -2, -1, -4},
    {-2, -1, 3, 4, -3, 0, 1, -1, 0, -3, -4, 0,
     -3, -3, -2, 0, -1, -4, -3, -3, 4, 1, -1, -4},
    {-1, 0, 0, 1, -3, 3, 4, -2, 0, -3, -3, 1,
     -1, -3, -1, 0, -1, -3, -2, -2, 1, 4, -1, -4},
    {0, -1, -1, -1, -2, -1, -1, -1, -1, -1, -1, -1,
     -1, -1, -2, 0, 0, -2, -1, -1, -1, -1, -1, -4},
    {-4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4,
     -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, 1}};

// Rodinia's maximum, in its order of comparisons.
inline int maximum(int A, int B, int C) {
  int K = A <= B ? B : A;
  return K <= C ? C : K;
}

class NwInstance : public corpus::Instance {
public:
  explicit NwInstance(int Size)
      : Len(Size == 0 ? 64 : 4096), Rows(Len + 1), Cols(Len + 1) {
    size_t N = size_t(Rows) * Cols;
    Input.assign(N, 0);
    Reference.assign(N, 0);
    corpus::Random R(7);
    for (int I = 1; I < Rows; ++I)
      Input[size_t(I) * Cols] = int32_t(R.below(10)) + 1;
    for (int J = 1; J < Cols; ++J)
      Input[J] = int32_t(R.below(10)) + 1;
    for (int I = 1; I < Cols; ++I)
      for (int J = 1; J < Rows; ++J)
        Reference[size_t(I) * Cols + J] =
            Blosum62[Input[size_t(I) * Cols]][Input[J]];
    for (int I = 1; I < Rows; ++I)
      Input[size_t(I) * Cols] = -I * Penalty;
    for (int J = 1; J < Cols; ++J)
      Input[J] = -J * Penalty;
  }

  void setup(corpus::Backend &B) override {
    InputItemsets = B.create(Input);
    ReferenceBuf = B.create(Reference);
    OutputItemsets = B.create(Input.size() * sizeof(int32_t));
  }

  void run(corpus::Backend &B) override {
    Launches = 0;
    int Worksize = Cols - 1;
    int BlockWidth = Worksize / BlockSize;
    for (int Blk = 1; Blk <= BlockWidth; ++Blk)
      launch(B, "nw_kernel1", Blk, BlockWidth, Worksize);
    for (int Blk = BlockWidth - 1; Blk >= 1; --Blk)
      launch(B, "nw_kernel2", Blk, BlockWidth, Worksize);
    B.finish();
  }

  bool check(corpus::Backend &B, std::string &Why) override {
    std::vector<int32_t> Got = B.read<int32_t>(InputItemsets, Input.size());
    // The recurrence every block computes, over the whole matrix.
    std::vector<int32_t> Want = Input;
    for (int I = 1; I < Rows; ++I)
      for (int J = 1; J < Cols; ++J) {
        size_t K = size_t(I) * Cols + J;
        Want[K] = maximum(Want[K - Cols - 1] + Reference[K],
                          Want[K - 1] - Penalty, Want[K - Cols] - Penalty);
      }
    for (size_t K = 0; K < Want.size(); ++K)
      if (Got[K] != Want[K]) {
        Why = "score (" + std::to_string(K / Cols) + ", " +
              std::to_string(K % Cols) + ") is " + std::to_string(Got[K]) +
              ", expected " + std::to_string(Want[K]);
        return false;
      }
    return true;
  }

  unsigned launches() const override { return Launches; }

private:
  void launch(corpus::Backend &B, const char *Kernel, int Blk, int BlockWidth,
              int Worksize) {
    using corpus::Arg;
    // Rodinia's extension offsets, always 0.
    int OffsetR = 0, OffsetC = 0;
    B.launch(Kernel, {uint32_t(Blk)}, {BlockSize},
             {Arg::buf(ReferenceBuf), Arg::buf(InputItemsets),
              Arg::buf(OutputItemsets), Arg::i32(Cols), Arg::i32(Penalty),
              Arg::i32(Blk), Arg::i32(BlockWidth), Arg::i32(Worksize),
              Arg::i32(OffsetR), Arg::i32(OffsetC)});
    ++Launches;
  }

  int Len, Rows, Cols;
  std::vector<int32_t> Input, Reference;
  corpus::Buf InputItemsets, ReferenceBuf, OutputItemsets;
  unsigned Launches = 0;
};

// The native kernels: one parallel loop over the blocks of the launch's
// anti-diagonal; each block's 16 x 16 scores are filled row by row in
// place, from its north row and west column, as plain loops do it.
void nwBlock(const int32_t *Reference, int32_t *Items, int Cols, int Penalty,
             int BIndexX, int BIndexY, int Base) {
  size_t Corner = size_t(Base) + size_t(Cols) * BlockSize * BIndexY +
                  size_t(BlockSize) * BIndexX;
  for (int I = 1; I <= BlockSize; ++I)
    for (int J = 1; J <= BlockSize; ++J) {
      size_t K = Corner + size_t(I) * Cols + J;
      Items[K] = maximum(Items[K - Cols - 1] + Reference[K],
                         Items[K - 1] - Penalty, Items[K - Cols] - Penalty);
    }
}

void nwKernel1Native(const corpus::NativeLaunch &L) {
  const int32_t *Reference = L.ptr<int32_t>(0);
  int32_t *Items = L.ptr<int32_t>(1);
  int Cols = L.value<int32_t>(3), Penalty = L.value<int32_t>(4);
  int Blk = L.value<int32_t>(5);
  int Base = L.value<int32_t>(8) * Cols + L.value<int32_t>(9);
  int Groups = int(L.Cubes.X);
#pragma omp parallel for
  for (int Bx = 0; Bx < Groups; ++Bx)
    nwBlock(Reference, Items, Cols, Penalty, Bx, Blk - 1 - Bx, Base);
}

void nwKernel2Native(const corpus::NativeLaunch &L) {
  const int32_t *Reference = L.ptr<int32_t>(0);
  int32_t *Items = L.ptr<int32_t>(1);
  int Cols = L.value<int32_t>(3), Penalty = L.value<int32_t>(4);
  int Blk = L.value<int32_t>(5), BlockWidth = L.value<int32_t>(6);
  int Base = L.value<int32_t>(8) * Cols + L.value<int32_t>(9);
  int Groups = int(L.Cubes.X);
#pragma omp parallel for
  for (int Bx = 0; Bx < Groups; ++Bx)
    nwBlock(Reference, Items, Cols, Penalty, Bx + BlockWidth - Blk,
            BlockWidth - Bx - 1, Base);
}

} // namespace

KILN_CORPUS_NATIVE(nw_kernel1, nwKernel1Native);
KILN_CORPUS_NATIVE(nw_kernel2, nwKernel2Native);

KILN_CORPUS_BENCHMARK(nw,
                      "Needleman-Wunsch scores of two 4096-residue "
                      "sequences, 16 x 16 blocks (Rodinia opencl/nw)",
                      [](int Size) {
                        return std::make_unique<NwInstance>(Size);
                      });
