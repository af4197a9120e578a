//===- pathfinder.cpp - Rodinia's pathfinder in the foreign-kernel corpus -===//
//
// The cheapest path from the top row to every column of the bottom row of
// a Rows x Cols grid of weights, moving down straight or diagonally, after
// Rodinia's opencl/pathfinder: one dynproc_kernel launch per PyramidHeight
// rows, the two row buffers swapping roles. The input is the host's: every
// weight drawn uniformly from 0..9 (rand() % 10 after srand(9) there,
// corpus::Random here); the first row is the starting sums, the other rows
// the wall. The debug buffer of 16384 ints is Rodinia's too.
//
// The launch is the host's: Rows * Cols work-items (its global size, one
// per grid cell), in work-groups of 250, its local size for a device whose
// largest work-group is 256 (see pathfinder.kiln); most work-groups lie
// past the last column and compute nothing.
//
// Rodinia's host has no reference (it only prints the result); the check
// is the serial row-by-row recurrence, compared exactly.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int BlockSize = 250; // the kernels' local size (see above)
constexpr int Halo = 1;        // Rodinia's HALO
constexpr int DebugInts = 16384;

class PathfinderInstance : public corpus::Instance {
public:
  explicit PathfinderInstance(int Size)
      : Rows(Size == 0 ? 20 : 100), Cols(Size == 0 ? 1000 : 100000),
        PyramidHeight(Size == 0 ? 5 : 20) {
    Data.resize(size_t(Rows) * Cols);
    corpus::Random R(9);
    for (int32_t &V : Data)
      V = int32_t(R.below(10));
  }

  void setup(corpus::Backend &B) override {
    Wall = B.create((size_t(Rows) - 1) * Cols * sizeof(int32_t),
                    Data.data() + Cols);
    Result[0] = B.create(size_t(Cols) * sizeof(int32_t), Data.data());
    Result[1] = B.create(size_t(Cols) * sizeof(int32_t));
    OutputBuffer = B.create(std::vector<int32_t>(DebugInts, 0));
  }

  void run(corpus::Backend &B) override {
    using corpus::Arg;
    Launches = 0;
    int BorderCols = PyramidHeight * Halo;
    // Rodinia's global size, Rows * Cols, over its local size.
    corpus::Dim3 Cubes{uint32_t(size_t(Rows) * Cols / BlockSize)};
    int Src = 1;
    FinalRet = 0;
    for (int T = 0; T < Rows - 1; T += PyramidHeight) {
      std::swap(Src, FinalRet);
      int Iteration = std::min(PyramidHeight, Rows - T - 1);
      B.launch("dynproc_kernel", Cubes, {BlockSize},
               {Arg::i32(Iteration), Arg::buf(Wall), Arg::buf(Result[Src]),
                Arg::buf(Result[FinalRet]), Arg::i32(Cols), Arg::i32(Rows),
                Arg::i32(T), Arg::i32(BorderCols), Arg::i32(Halo),
                Arg::buf(OutputBuffer)});
      ++Launches;
    }
    B.finish();
  }

  bool check(corpus::Backend &B, std::string &Why) override {
    std::vector<int32_t> Got = B.read<int32_t>(Result[FinalRet], Cols);
    // Row by row: the smallest of the three upper neighbours plus the
    // weight.
    std::vector<int32_t> Src(Data.begin(), Data.begin() + Cols), Dst(Cols);
    for (int T = 1; T < Rows; ++T) {
      for (int X = 0; X < Cols; ++X) {
        int32_t Min = Src[X];
        if (X > 0)
          Min = std::min(Min, Src[X - 1]);
        if (X < Cols - 1)
          Min = std::min(Min, Src[X + 1]);
        Dst[X] = Data[size_t(T) * Cols + X] + Min;
      }
      Src.swap(Dst);
    }
    for (int X = 0; X < Cols; ++X)
      if (Got[X] != Src[X]) {
        Why = "column " + std::to_string(X) + " is " + std::to_string(Got[X]) +
              ", expected " + std::to_string(Src[X]);
        return false;
      }
    return true;
  }

  unsigned launches() const override { return Launches; }

private:
  int Rows, Cols, PyramidHeight;
  std::vector<int32_t> Data;
  corpus::Buf Wall, Result[2], OutputBuffer;
  int FinalRet = 0;
  unsigned Launches = 0;
};

// The native kernel: one parallel loop over the work-groups; each computes
// its segment's valid columns and advances them Iteration rows with plain
// loops over the columns each step computes (the work-items that pass the
// kernel's range tests), in two small arrays for the rows.
void dynprocNative(const corpus::NativeLaunch &L) {
  int Iteration = L.value<int32_t>(0);
  const int32_t *GpuWall = L.ptr<int32_t>(1);
  const int32_t *GpuSrc = L.ptr<int32_t>(2);
  int32_t *GpuResults = L.ptr<int32_t>(3);
  int Cols = L.value<int32_t>(4);
  int StartStep = L.value<int32_t>(6), Border = L.value<int32_t>(7);
  int HaloW = L.value<int32_t>(8);
  int32_t *OutputBuffer = L.ptr<int32_t>(9);
  int Bs = int(L.Cube.X);
  int Groups = int(L.Cubes.X);
#pragma omp parallel for
  for (int Bx = 0; Bx < Groups; ++Bx) {
    int SmallBlockCols = Bs - Iteration * HaloW * 2;
    int BlkX = SmallBlockCols * Bx - Border;
    int BlkXmax = BlkX + Bs - 1;
    int ValidXmin = BlkX < 0 ? -BlkX : 0;
    int ValidXmax = BlkXmax > Cols - 1 ? Bs - 1 - (BlkXmax - Cols + 1) : Bs - 1;
    if (ValidXmin > ValidXmax)
      continue; // no column of this work-group is in the grid
    std::vector<int32_t> Prev(Bs), Result(Bs);
    for (int Tx = ValidXmin; Tx <= ValidXmax; ++Tx)
      Prev[Tx] = GpuSrc[BlkX + Tx];
    int Lo = 0, Hi = -1;
    for (int I = 0; I < Iteration; ++I) {
      Lo = std::max(I + 1, ValidXmin);
      Hi = std::min(Bs - I - 2, ValidXmax);
      for (int Tx = Lo; Tx <= Hi; ++Tx) {
        int W = std::max(Tx - 1, ValidXmin), E = std::min(Tx + 1, ValidXmax);
        int Shortest = std::min(std::min(Prev[W], Prev[Tx]), Prev[E]);
        Result[Tx] = Shortest + GpuWall[Cols * (StartStep + I) + BlkX + Tx];
      }
      if (I == 0 && Lo <= 11 && 11 <= Hi)
        OutputBuffer[GpuSrc[BlkX + 11]] = 1; // Rodinia's debug write
      if (I == Iteration - 1)
        break;
      for (int Tx = Lo; Tx <= Hi; ++Tx)
        Prev[Tx] = Result[Tx];
    }
    for (int Tx = Lo; Tx <= Hi; ++Tx)
      GpuResults[BlkX + Tx] = Result[Tx];
  }
}

} // namespace

KILN_CORPUS_NATIVE(dynproc_kernel, dynprocNative);

KILN_CORPUS_BENCHMARK(pathfinder,
                      "cheapest paths down a 100 x 100000 grid, 20 rows a "
                      "launch (Rodinia opencl/pathfinder)",
                      [](int Size) {
                        return std::make_unique<PathfinderInstance>(Size);
                      });
