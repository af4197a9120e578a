// matmul_tiled's algorithm written by hand with AVX-512 intrinsics, four
// ways, beside OpenBLAS's sgemm in one process (fifteenth session; see the
// README beside this file). Each cube of the kernel is a 16 x 16 tile of C;
// each step of 16 along k copies the 16 x 16 tiles of A and B into a local
// array (the kernel's shared memory) and multiplies out of it.
//
//   regs     the tile's sums in 16 zmm registers across all the steps
//   memory   the sums in memory, loaded and stored back every step (what
//            Kiln's lowering does with a `var` that lives across a barrier)
//   regs+pf  regs, with B's rows of the next step prefetched into L2
//   directB  regs, B's rows read where they are (no copy of B's tile)
//
// Build: g++ -O3 -march=native -std=c++17 same-algorithm.cpp -lopenblas
// Run:   OPENBLAS_CORETYPE=SkylakeX OPENBLAS_THREAD_TIMEOUT=4 ./a.out [N]
#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

enum Variant { Regs, Memory, RegsPrefetch, DirectB };
static unsigned N = 1024;

template <Variant V>
static void cube(const float *A, const float *B, float *C, unsigned Bx,
                 unsigned By, float *Arena) {
  float *As = Arena, *Bs = Arena + 256, *Sums = Arena + 512;
  __m512 Acc[16];
  for (int R = 0; R < 16; ++R)
    Acc[R] = _mm512_setzero_ps();
  if (V == Memory)
    for (int R = 0; R < 16; ++R)
      _mm512_store_ps(Sums + 16 * R, Acc[R]);
  const unsigned Tiles = N / 16;
  for (unsigned T = 0; T < Tiles; ++T) {
    for (int R = 0; R < 16; ++R) {
      _mm512_store_ps(As + 16 * R,
                      _mm512_loadu_ps(A + size_t(By * 16 + R) * N + T * 16));
      if (V != DirectB)
        _mm512_store_ps(Bs + 16 * R, _mm512_loadu_ps(
                                         B + size_t(T * 16 + R) * N + Bx * 16));
    }
    if (V == RegsPrefetch && T + 1 < Tiles)
      for (int R = 0; R < 16; ++R)
        _mm_prefetch((const char *)(B + size_t(T * 16 + 16 + R) * N + Bx * 16),
                     _MM_HINT_T1);
    asm volatile("" ::: "memory"); // the barrier
    if (V == Memory)
      for (int R = 0; R < 16; ++R)
        Acc[R] = _mm512_load_ps(Sums + 16 * R);
    for (int K = 0; K < 16; ++K) {
      __m512 Bk = V == DirectB
                      ? _mm512_loadu_ps(B + size_t(T * 16 + K) * N + Bx * 16)
                      : _mm512_load_ps(Bs + 16 * K);
      for (int R = 0; R < 16; ++R)
        Acc[R] = _mm512_fmadd_ps(_mm512_set1_ps(As[16 * R + K]), Bk, Acc[R]);
    }
    if (V == Memory)
      for (int R = 0; R < 16; ++R)
        _mm512_store_ps(Sums + 16 * R, Acc[R]);
    asm volatile("" ::: "memory"); // the second barrier
  }
  for (int R = 0; R < 16; ++R)
    _mm512_storeu_ps(C + size_t(By * 16 + R) * N + Bx * 16, Acc[R]);
}

// Cubes in row-major order, 16 at a time from a shared counter, on 2 threads.
template <Variant V> static void run(const float *A, const float *B, float *C) {
  const unsigned Cubes = (N / 16) * (N / 16);
  std::atomic<unsigned> Next{0};
  auto Work = [&] {
    alignas(64) float Arena[768];
    for (;;) {
      unsigned C0 = Next.fetch_add(16);
      if (C0 >= Cubes)
        break;
      for (unsigned Cb = C0; Cb < std::min(Cubes, C0 + 16); ++Cb)
        cube<V>(A, B, C, Cb % (N / 16), Cb / (N / 16), Arena);
    }
  };
  std::thread Other(Work);
  Work();
  Other.join();
}

int main(int Argc, char **Argv) {
  if (Argc > 1)
    N = std::atoi(Argv[1]);
  const size_t Elems = size_t(N) * N;
  auto Alloc = [&] { return (float *)std::aligned_alloc(64, Elems * 4); };
  float *A = Alloc(), *B = Alloc(), *C = Alloc(), *Ref = Alloc();
  for (size_t I = 0; I < Elems; ++I)
    A[I] = (I % 7) * 0.25f - 0.5f, B[I] = (I % 5) * 0.5f - 1.0f;
  auto Median = [](auto Fn) {
    std::vector<double> Ms;
    for (int I = 0; I < 21; ++I) {
      auto T0 = std::chrono::steady_clock::now();
      Fn();
      Ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - T0)
                       .count());
    }
    std::sort(Ms.begin(), Ms.end());
    return Ms[10];
  };
  for (int Round = 0; Round < 3; ++Round) {
    double Blas = Median([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.f, A,
                  N, B, N, 0.f, Ref, N);
    });
    double Ms[4] = {Median([&] { run<Regs>(A, B, C); }),
                    Median([&] { run<Memory>(A, B, C); }),
                    Median([&] { run<RegsPrefetch>(A, B, C); }),
                    Median([&] { run<DirectB>(A, B, C); })};
    double Err = 0;
    for (size_t I = 0; I < Elems; ++I)
      Err = std::max(Err, (double)std::fabs(C[I] - Ref[I]));
    std::printf("N=%u sgemm %.2f ms | regs %.2f (%.2fx) | memory %.2f (%.2fx) "
                "| regs+pf %.2f (%.2fx) | directB %.2f (%.2fx) | max err %g\n",
                N, Blas, Ms[0], Ms[0] / Blas, Ms[1], Ms[1] / Blas, Ms[2],
                Ms[2] / Blas, Ms[3], Ms[3] / Blas, Err);
  }
}
