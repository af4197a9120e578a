//===- lud.cpp - Rodinia's lud in the foreign-kernel corpus ---------------===//
//
// Blocked LU decomposition of a MatrixDim x MatrixDim matrix in place, after
// Rodinia's opencl/lud: per 16-wide block step lud_diagonal, lud_perimeter
// and lud_internal, then a last lud_diagonal. The input is the host's
// internal generator (create_matrix, `-s`): the well-conditioned symmetric
// Toeplitz matrix m[i][j] = 10 * exp(-0.001 * |i - j|). The check is the
// host's lud_verify: L * U (unit lower L, upper U, both read from the
// result) must give the input back; it is computed here in double, where
// Rodinia sums in float, so that the check measures the factorisation only.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int BlockSize = 16; // Rodinia's BLOCK_SIZE

class LudInstance : public corpus::Instance {
public:
  explicit LudInstance(int Size) : MatrixDim(Size == 0 ? 64 : 512) {
    // Rodinia's create_matrix.
    Input.resize(size_t(MatrixDim) * MatrixDim);
    std::vector<float> Coe(2 * MatrixDim - 1);
    float Lambda = -0.001f;
    for (int I = 0; I < MatrixDim; ++I) {
      float CoeI = 10 * std::exp(Lambda * I);
      Coe[MatrixDim - 1 + I] = CoeI;
      Coe[MatrixDim - 1 - I] = CoeI;
    }
    for (int I = 0; I < MatrixDim; ++I)
      for (int J = 0; J < MatrixDim; ++J)
        Input[size_t(I) * MatrixDim + J] = Coe[MatrixDim - 1 - I + J];
  }

  void setup(corpus::Backend &B) override { M = B.create(Input); }

  void run(corpus::Backend &B) override {
    using corpus::Arg;
    Launches = 0;
    int I = 0;
    for (; I < MatrixDim - BlockSize; I += BlockSize) {
      B.launch("lud_diagonal", {1}, {BlockSize},
               {Arg::buf(M), Arg::i32(MatrixDim), Arg::i32(I)});
      ++Launches;
      uint32_t Blocks = uint32_t((MatrixDim - I) / BlockSize - 1);
      // The host skips empty launches (some drivers refuse them).
      if (Blocks > 0) {
        B.launch("lud_perimeter", {Blocks}, {2 * BlockSize},
                 {Arg::buf(M), Arg::i32(MatrixDim), Arg::i32(I)});
        B.launch("lud_internal", {Blocks, Blocks}, {BlockSize, BlockSize},
                 {Arg::buf(M), Arg::i32(MatrixDim), Arg::i32(I)});
        Launches += 2;
      }
    }
    B.launch("lud_diagonal", {1}, {BlockSize},
             {Arg::buf(M), Arg::i32(MatrixDim), Arg::i32(I)});
    ++Launches;
    B.finish();
  }

  bool check(corpus::Backend &B, std::string &Why) override {
    std::vector<float> LU = B.read<float>(M, Input.size());
    // Rodinia's lud_verify: tmp = L * U, compared with the input.
    size_t N = MatrixDim;
    std::vector<float> Product(N * N);
    for (size_t I = 0; I < N; ++I)
      for (size_t J = 0; J < N; ++J) {
        double Sum = 0;
        for (size_t K = 0; K <= std::min(I, J); ++K) {
          double L = I == K ? 1.0 : LU[I * N + K];
          Sum += L * LU[K * N + J];
        }
        Product[I * N + J] = float(Sum);
      }
    return corpus::closeEnough(Product.data(), Input.data(), N * N, 1e-4,
                               1e-4, Why);
  }

  unsigned launches() const override { return Launches; }

private:
  int MatrixDim;
  std::vector<float> Input;
  corpus::Buf M;
  unsigned Launches = 0;
};

// The native kernels: one parallel loop over the work-groups per launch,
// each doing its group's work in place in M with plain loops, the barrier
// phases of the OpenCL kernel one after the other.

void ludDiagonalNative(const corpus::NativeLaunch &L) {
  float *M = L.ptr<float>(0);
  int N = L.value<int32_t>(1), Offset = L.value<int32_t>(2);
  int Groups = int(L.Cubes.X);
#pragma omp parallel for
  for (int G = 0; G < Groups; ++G) {
    float *A = M + size_t(Offset) * N + Offset; // the diagonal block
    for (int I = 0; I < BlockSize - 1; ++I) {
      for (int Tx = I + 1; Tx < BlockSize; ++Tx) {
        for (int J = 0; J < I; ++J)
          A[Tx * N + I] -= A[Tx * N + J] * A[J * N + I];
        A[Tx * N + I] /= A[I * N + I];
      }
      for (int Tx = I + 1; Tx < BlockSize; ++Tx)
        for (int J = 0; J < I + 1; ++J)
          A[(I + 1) * N + Tx] -= A[(I + 1) * N + J] * A[J * N + Tx];
    }
  }
}

void ludPerimeterNative(const corpus::NativeLaunch &L) {
  float *M = L.ptr<float>(0);
  int N = L.value<int32_t>(1), Offset = L.value<int32_t>(2);
  int Groups = int(L.Cubes.X);
#pragma omp parallel for
  for (int Bx = 0; Bx < Groups; ++Bx) {
    const float *Dia = M + size_t(Offset) * N + Offset;
    // The block right of the diagonal one, then the block below it.
    float *Row = M + size_t(Offset) * N + Offset + (Bx + 1) * BlockSize;
    float *Col = M + size_t(Offset + (Bx + 1) * BlockSize) * N + Offset;
    for (int Idx = 0; Idx < BlockSize; ++Idx)
      for (int I = 1; I < BlockSize; ++I)
        for (int J = 0; J < I; ++J)
          Row[I * N + Idx] -= Dia[I * N + J] * Row[J * N + Idx];
    for (int Idx = 0; Idx < BlockSize; ++Idx)
      for (int I = 0; I < BlockSize; ++I) {
        for (int J = 0; J < I; ++J)
          Col[Idx * N + I] -= Col[Idx * N + J] * Dia[J * N + I];
        Col[Idx * N + I] /= Dia[I * N + I];
      }
  }
}

void ludInternalNative(const corpus::NativeLaunch &L) {
  float *M = L.ptr<float>(0);
  int N = L.value<int32_t>(1), Offset = L.value<int32_t>(2);
  int GroupsX = int(L.Cubes.X), GroupsY = int(L.Cubes.Y);
#pragma omp parallel for collapse(2)
  for (int By = 0; By < GroupsY; ++By)
    for (int Bx = 0; Bx < GroupsX; ++Bx) {
      int GlobalRowId = Offset + (By + 1) * BlockSize;
      int GlobalColId = Offset + (Bx + 1) * BlockSize;
      for (int Ty = 0; Ty < BlockSize; ++Ty)
        for (int Tx = 0; Tx < BlockSize; ++Tx) {
          float Sum = 0;
          for (int I = 0; I < BlockSize; ++I)
            Sum += M[size_t(GlobalRowId + Ty) * N + Offset + I] *
                   M[size_t(Offset + I) * N + GlobalColId + Tx];
          M[size_t(GlobalRowId + Ty) * N + GlobalColId + Tx] -= Sum;
        }
    }
}

} // namespace

KILN_CORPUS_NATIVE(lud_diagonal, ludDiagonalNative);
KILN_CORPUS_NATIVE(lud_perimeter, ludPerimeterNative);
KILN_CORPUS_NATIVE(lud_internal, ludInternalNative);

KILN_CORPUS_BENCHMARK(lud,
                      "blocked LU decomposition of a 512 x 512 matrix, "
                      "16 x 16 blocks (Rodinia opencl/lud)",
                      [](int Size) {
                        return std::make_unique<LudInstance>(Size);
                      });
