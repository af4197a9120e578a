//===- native-bench.cpp - The machine's limits and the native suite -------===//
//
// native-bench [TAG]       (NATIVE_THREADS=N: N threads, default all cores)
//
// What the machine can do, measured with the native versions kiln-bench
// uses (native-kernels.cpp, OpenMP, -O3 -march=native): 64-bit STREAM copy
// and triad (2^25 doubles a stream), the f32 triad of vadd's size (2^24
// floats, 12 B an element as vadd), the vector FMA peak, and each kernel of
// the suite in a process of its own (no Kiln in it), with OpenBLAS's sgemm
// when built with it. Each figure is the median (and best) of 20-30 runs
// after 3 warm-ups, on 1 thread and on NATIVE_THREADS.
//
// Output: "RESULT <TAG> <name> <metric> <value>" (ms, GB/s, GFLOP/s).
// A wrong result prints FAIL on stderr; the program then exits 1.
//
//===----------------------------------------------------------------------===//

#include "native-kernels.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nat = kiln_bench_native;

namespace {

using Clock = std::chrono::steady_clock;
double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

const char *Tag = "native";
bool AnyFailure = false;

void result(const std::string &Name, const char *Metric, double Value) {
  std::printf("RESULT %s %s %s %.6g\n", Tag, Name.c_str(), Metric, Value);
  std::fflush(stdout);
}
void checkResult(const std::string &Name, bool Ok, const std::string &Detail) {
  result(Name, "correct", Ok);
  if (!Ok) {
    std::fprintf(stderr, "FAIL %s: %s\n", Name.c_str(), Detail.c_str());
    AnyFailure = true;
  }
}

/// 3 warm-ups, then \p Runs timed calls of \p Fn; milliseconds each.
template <typename F> std::vector<double> timeRuns(int Runs, F &&Fn) {
  for (int I = 0; I < 3; ++I)
    Fn();
  std::vector<double> T;
  for (int I = 0; I < Runs; ++I) {
    auto T0 = Clock::now();
    Fn();
    T.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - T0).count());
  }
  return T;
}

/// Reports kernel_ms_median / _min and, when \p Amount > 0, the rate
/// (\p Amount bytes or flop a run) as \p RateMetric.
double report(const std::string &Name, const std::vector<double> &T,
              double Amount = 0, const char *RateMetric = "GBps") {
  double Med = median(T), Best = *std::min_element(T.begin(), T.end());
  result(Name, "kernel_ms_median", Med);
  result(Name, "kernel_ms_min", Best);
  if (Amount > 0) {
    result(Name, RateMetric, Amount / (Med * 1e6));
    result(Name, (std::string(RateMetric) + "_best").c_str(),
           Amount / (Best * 1e6));
  }
  return Med;
}

template <typename T> T *alloc(size_t N) {
  void *P = nullptr;
  if (posix_memalign(&P, 64, N * sizeof(T)))
    std::abort();
  return static_cast<T *>(P);
}

// The suite's input generator (a 32-bit LCG, seed 12345), as kiln-bench's.
uint32_t LcgState = 12345u;
uint32_t lcg() {
  LcgState = LcgState * 1664525u + 1013904223u;
  return LcgState;
}
float frand() { return (lcg() >> 8) * (1.0f / 16777216.0f); }

void limits(int T, const std::string &Suffix) {
  const size_t ND = size_t(1) << 25;
  double *A = alloc<double>(ND), *B = alloc<double>(ND), *C = alloc<double>(ND);
  // First touch by the threads that use them.
  nat::streamTriad(A, B, C, 0.0, ND, T);
  std::fill_n(B, ND, 2.0), std::fill_n(C, ND, 0.5);
  report("stream_copy_" + Suffix,
         timeRuns(20, [&] { nat::streamCopy(A, C, ND, T); }), 16.0 * ND);
  report("stream_triad_" + Suffix,
         timeRuns(20, [&] { nat::streamTriad(A, B, C, 3.0, ND, T); }),
         24.0 * ND);
  std::free(A), std::free(B), std::free(C);
  const size_t NF = size_t(1) << 24;
  float *FA = alloc<float>(NF), *FB = alloc<float>(NF), *FC = alloc<float>(NF);
  nat::triad(FA, FB, FC, 0.0f, NF, T);
  std::fill_n(FB, NF, 2.0f), std::fill_n(FC, NF, 0.5f);
  report("triad_f32_" + Suffix,
         timeRuns(20, [&] { nat::triad(FA, FB, FC, 3.0f, NF, T); }), 12.0 * NF);
  std::free(FA), std::free(FB), std::free(FC);
  if (nat::fmaWidth()) {
    const long Iters = 20'000'000;
    double Flop = 0;
    auto Ts = timeRuns(9, [&] { Flop = nat::fmaPeak(Iters, T); });
    report("fma_peak_" + Suffix, Ts, Flop, "GFLOPs");
    result("fma_peak_" + Suffix, "vector_width", nat::fmaWidth());
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1)
    Tag = argv[1];
  const char *E = std::getenv("NATIVE_THREADS");
  const int T = E ? std::max(1, std::atoi(E)) : omp_get_num_procs();
  result("setup", "threads", T);
  limits(1, "1t");
  limits(T, "nt");

  const size_t N = size_t(1) << 24;
  float *A = alloc<float>(N), *B = alloc<float>(N), *C = alloc<float>(N);
  nat::triad(C, A, B, 0.0f, N, T); // first touch, in parallel
  for (size_t I = 0; I < N; ++I) {
    A[I] = frand();
    B[I] = frand();
  }
  { // vadd
    report("vadd", timeRuns(30, [&] { nat::vadd(A, B, C, N, T); }), 12.0 * N);
    bool Ok = true;
    for (size_t I = 0; I < N; ++I)
      Ok &= C[I] == A[I] + B[I];
    checkResult("vadd", Ok, "a wrong sum");
  }
  { // saxpy, in place on a copy of b
    std::memcpy(C, B, N * 4);
    nat::saxpy(0.5f, A, C, N, T);
    double Err = 0;
    for (size_t I = 0; I < N; ++I)
      Err = std::max(Err, (double)std::fabs(C[I] - (0.5f * A[I] + B[I])));
    checkResult("saxpy", Err <= 1e-6, "max abs error " + std::to_string(Err));
    report("saxpy", timeRuns(30, [&] { nat::saxpy(0.5f, A, C, N, T); }),
           12.0 * N);
  }
  { // reduce_sum: one partial per block of 256
    const size_t G = N / 256;
    std::vector<float> P(G);
    report("reduce_sum",
           timeRuns(30, [&] { nat::blockSums(A, P.data(), G, 256, T); }),
           4.0 * N);
    double S = 0, Ref = 0;
    for (float V : P)
      S += V;
    for (size_t I = 0; I < N; ++I)
      Ref += A[I];
    checkResult("reduce_sum", std::fabs(S - Ref) / Ref < 1e-5,
                "relative error " + std::to_string(std::fabs(S - Ref) / Ref));
  }
  { // softmax_rows, 4096 x 1024, on the first 4M elements of A and C
    const unsigned Rows = 4096, Cols = 1024;
    std::vector<float> X(size_t(Rows) * Cols);
    for (float &V : X)
      V = (frand() - 0.5f) * 8.0f;
    std::memcpy(A, X.data(), X.size() * 4);
    auto check = [&](const std::string &Name) {
      double Err = 0;
      for (unsigned R = 0; R < Rows; R += 7) {
        const float *Xr = A + size_t(R) * Cols;
        double Mx = -1e30, S = 0;
        for (unsigned J = 0; J < Cols; ++J)
          Mx = std::max(Mx, (double)Xr[J]);
        for (unsigned J = 0; J < Cols; ++J)
          S += std::exp(Xr[J] - Mx);
        for (unsigned J = 0; J < Cols; ++J)
          Err = std::max(Err, std::fabs(C[size_t(R) * Cols + J] -
                                        std::exp(Xr[J] - Mx) / S));
      }
      checkResult(Name, Err < 1e-6, "max abs error " + std::to_string(Err));
    };
    if (nat::softmaxRowsVector(A, C, Rows, Cols, T)) {
      report("softmax_rows",
             timeRuns(30,
                      [&] { nat::softmaxRowsVector(A, C, Rows, Cols, T); }),
             8.0 * Rows * Cols);
      check("softmax_rows");
    }
    std::printf("INFO %s vector_expf %s\n", Tag,
                *nat::vectorExpName() ? nat::vectorExpName() : "none");
    report("softmax_rows_scalar",
           timeRuns(30, [&] { nat::softmaxRowsScalar(A, C, Rows, Cols, T); }),
           8.0 * Rows * Cols);
    check("softmax_rows_scalar");
  }
  { // histograms of 2^24 values in 0..255
    uint32_t *D = reinterpret_cast<uint32_t *>(B);
    std::vector<uint32_t> Ref(256, 0), Bins(256);
    for (size_t I = 0; I < N; ++I) {
      D[I] = lcg() >> 24;
      Ref[D[I]]++;
    }
    struct {
      const char *Name;
      void (*Fn)(const uint32_t *, uint32_t *, size_t, int);
    } Hs[] = {{"hist_atomic", nat::histAtomic},
              {"histogram", nat::histPrivate}};
    for (const auto &H : Hs) {
      report(H.Name, timeRuns(H.Fn == nat::histAtomic ? 10 : 30, [&] {
               std::fill(Bins.begin(), Bins.end(), 0u);
               H.Fn(D, Bins.data(), N, T);
             }),
             4.0 * N);
      checkResult(H.Name, Bins == Ref, "bins differ from the reference");
    }
  }
  std::free(A), std::free(B), std::free(C);

  { // matmul 1024
    const unsigned M = 1024;
    float *MA = alloc<float>(M * M), *MB = alloc<float>(M * M),
          *MC = alloc<float>(M * M);
    for (unsigned I = 0; I < M * M; ++I)
      MA[I] = frand() - 0.5f;
    for (unsigned I = 0; I < M * M; ++I)
      MB[I] = frand() - 0.5f;
    auto check = [&](const std::string &Name) {
      double Err = 0;
      for (unsigned I = 0; I < M; I += 31)
        for (unsigned J = 0; J < M; J += 17) {
          double R = 0;
          for (unsigned K = 0; K < M; ++K)
            R += (double)MA[I * M + K] * MB[K * M + J];
          Err = std::max(Err, std::fabs(R - MC[I * M + J]));
        }
      checkResult(Name, Err < 1e-3, "max abs error " + std::to_string(Err));
    };
    const double Flop = 2.0 * M * M * M;
    report("matmul_blocked",
           timeRuns(20, [&] { nat::matmulBlocked(MA, MB, MC, M, T); }), Flop,
           "GFLOPs");
    check("matmul_blocked");
    report("matmul_tiled16",
           timeRuns(20, [&] { nat::matmulTiled16(MA, MB, MC, M, T); }), Flop,
           "GFLOPs");
    check("matmul_tiled16");
    if (nat::haveBlas()) {
      report("sgemm_openblas",
             timeRuns(20, [&] { nat::sgemm(MA, MB, MC, M, T); }), Flop,
             "GFLOPs");
      check("sgemm_openblas");
      std::printf("INFO %s blas %s\n", Tag, nat::blasConfig().c_str());
    }
    std::free(MA), std::free(MB), std::free(MC);
  }
  return AnyFailure ? 1 : 0;
}
