//===- gaussian.cpp - Rodinia's gaussian in the foreign-kernel corpus -----===//
//
// The forward phase of Gaussian elimination (no pivoting) on a Size x Size
// system, after Rodinia's opencl/gaussian: per column T, Fan1 then Fan2.
// The input is the host's internal generator (create_matrix, `-s`): the
// symmetric Toeplitz matrix a[i][j] = 10 * exp(-0.01 * |i - j|) and the
// right-hand side b = 1; the multipliers m start at 0 (InitPerRun).
//
// Rodinia's host has no reference for the forward phase (it only prints the
// result); the check is a serial C++ version of the same elimination, in
// the kernels' order, compared on a, b and m. Without pivoting the
// elimination amplifies rounding: at 512, computing each a -= m * x as one
// fused multiply-add or as a multiply and a subtraction (C compilers and
// OpenCL drivers may fuse, Kiln does not) moves some multipliers by 3e-4
// relative, hence the tolerance of 2e-3 relative plus 1e-4.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr uint32_t Fan1Block = 256;
constexpr uint32_t Fan2Block = 16;

class GaussianInstance : public corpus::Instance {
public:
  explicit GaussianInstance(int Size) : Size(Size == 0 ? 64 : 512) {
    // Rodinia's create_matrix.
    int N = this->Size;
    A0.resize(size_t(N) * N);
    std::vector<float> Coe(2 * N - 1);
    float Lambda = -0.01f;
    for (int I = 0; I < N; ++I) {
      float CoeI = 10 * std::exp(Lambda * I);
      Coe[N - 1 + I] = CoeI;
      Coe[N - 1 - I] = CoeI;
    }
    for (int I = 0; I < N; ++I)
      for (int J = 0; J < N; ++J)
        A0[size_t(I) * N + J] = Coe[N - 1 - I + J];
    B0.assign(N, 1.0f);
  }

  void setup(corpus::Backend &B) override {
    ABuf = B.create(A0);
    BBuf = B.create(B0);
    MBuf = B.create(std::vector<float>(size_t(Size) * Size, 0.0f));
  }

  void run(corpus::Backend &B) override {
    using corpus::Arg;
    Launches = 0;
    uint32_t N = uint32_t(Size);
    corpus::Dim3 Cubes1{(N + Fan1Block - 1) / Fan1Block};
    uint32_t G2 = (N + Fan2Block - 1) / Fan2Block;
    corpus::Dim3 Cubes2{G2, G2};
    for (int T = 0; T < Size - 1; ++T) {
      B.launch("Fan1", Cubes1, {Fan1Block},
               {Arg::buf(MBuf), Arg::buf(ABuf), Arg::buf(BBuf),
                Arg::i32(Size), Arg::i32(T)});
      B.launch("Fan2", Cubes2, {Fan2Block, Fan2Block},
               {Arg::buf(MBuf), Arg::buf(ABuf), Arg::buf(BBuf),
                Arg::i32(Size), Arg::i32(T)});
      Launches += 2;
    }
    B.finish();
  }

  bool check(corpus::Backend &B, std::string &Why) override {
    size_t NN = size_t(Size) * Size;
    const double Rel = 2e-3, Abs = 1e-4;
    std::vector<float> A = A0, Bv = B0, M(NN, 0.0f);
    referenceForwardSub(A, Bv, M);
    std::vector<float> GotA = B.read<float>(ABuf, NN);
    std::vector<float> GotB = B.read<float>(BBuf, Size);
    std::vector<float> GotM = B.read<float>(MBuf, NN);
    if (!corpus::closeEnough(GotA.data(), A.data(), NN, Rel, Abs, Why)) {
      Why = "a: " + Why;
      return false;
    }
    if (!corpus::closeEnough(GotB.data(), Bv.data(), Size, Rel, Abs, Why)) {
      Why = "b: " + Why;
      return false;
    }
    if (!corpus::closeEnough(GotM.data(), M.data(), NN, Rel, Abs, Why)) {
      Why = "m: " + Why;
      return false;
    }
    return true;
  }

  unsigned launches() const override { return Launches; }

private:
  // Fan1 and Fan2 of every column, serially, in the kernels' arithmetic.
  void referenceForwardSub(std::vector<float> &A, std::vector<float> &Bv,
                           std::vector<float> &M) const {
    int N = Size;
    for (int T = 0; T < N - 1; ++T) {
      for (int I = T + 1; I < N; ++I)
        M[size_t(N) * I + T] = A[size_t(N) * I + T] / A[size_t(N) * T + T];
      for (int I = T + 1; I < N; ++I) {
        for (int J = T; J < N; ++J)
          A[size_t(N) * I + J] -= M[size_t(N) * I + T] * A[size_t(N) * T + J];
        Bv[I] -= M[size_t(N) * I + T] * Bv[T];
      }
    }
  }

  int Size;
  std::vector<float> A0, B0;
  corpus::Buf ABuf, BBuf, MBuf;
  unsigned Launches = 0;
};

// The native kernels: one parallel loop over the work-items of dimension 0
// (the rows below T) per launch; Fan2 walks dimension 1 (the columns) in
// each.

void fan1Native(const corpus::NativeLaunch &L) {
  float *M = L.ptr<float>(0);
  const float *A = L.ptr<float>(1);
  int Size = L.value<int32_t>(3), T = L.value<int32_t>(4);
#pragma omp parallel for
  for (int Gid = 0; Gid < Size - 1 - T; ++Gid)
    M[size_t(Size) * (Gid + T + 1) + T] =
        A[size_t(Size) * (Gid + T + 1) + T] / A[size_t(Size) * T + T];
}

void fan2Native(const corpus::NativeLaunch &L) {
  const float *M = L.ptr<float>(0);
  float *A = L.ptr<float>(1);
  float *Bv = L.ptr<float>(2);
  int Size = L.value<int32_t>(3), T = L.value<int32_t>(4);
#pragma omp parallel for
  for (int X = 0; X < Size - 1 - T; ++X) {
    size_t Row = size_t(Size) * (X + 1 + T);
    float Mult = M[Row + T];
    for (int Y = 0; Y < Size - T; ++Y)
      A[Row + Y + T] -= Mult * A[size_t(Size) * T + Y + T];
    Bv[X + 1 + T] -= M[Row + T] * Bv[T];
  }
}

} // namespace

KILN_CORPUS_NATIVE(Fan1, fan1Native);
KILN_CORPUS_NATIVE(Fan2, fan2Native);

KILN_CORPUS_BENCHMARK(gaussian,
                      "Gaussian elimination, forward phase, of a 512 x 512 "
                      "system (Rodinia opencl/gaussian)",
                      [](int Size) {
                        return std::make_unique<GaussianInstance>(Size);
                      });
