// Staging memory cost per cube-step: G cubes of one column (cy..cy+G-1) in lockstep share B's tile.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <sys/mman.h>
static float *alloc(size_t n) { void *p = mmap(0, n * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); memset(p, 1, n * 4); return (float *)p; }
int main(int argc, char **argv) {
  int G = atoi(argv[1]), GX = argc > 2 ? atoi(argv[2]) : 1;
  const int N = 1024, T = N / 16;
  float *A = alloc(size_t(N) * N), *B = alloc(size_t(N) * N);
  alignas(64) static float scratch[16 * 512];
  std::vector<double> times;
  for (int rep = 0; rep < 21; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    __m512 sink = _mm512_setzero_ps();
    for (int cy = 0; cy < 32; cy += G)
      for (int cx = 0; cx < 64; cx += GX)
        for (int t = 0; t < T; ++t) {
          for (int g = 0; g < G; ++g)
            for (int gx = 0; gx < GX; ++gx) {
              float *S = scratch + (g * GX + gx) * 512;
              for (int r = 0; r < 16; ++r) {
                size_t ai = size_t((cy + g) * 16 + r) * N + t * 16;
                size_t bi = size_t(t * 16 + r) * N + (cx + gx) * 16;
                _mm512_store_ps(S + r * 16, _mm512_loadu_ps(A + ai));
                _mm512_store_ps(S + 256 + r * 16, _mm512_loadu_ps(B + bi));
              }
            }
          sink = _mm512_add_ps(sink, _mm512_load_ps(scratch + (t & 15) * 16));
          asm volatile("" ::: "memory");
        }
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    volatile float f = _mm512_reduce_add_ps(sink); (void)f;
  }
  std::sort(times.begin(), times.end());
  double steps = 32.0 * 64 * T;
  printf("G %d GX %d: median %.2f ms, %.1f ns/cube-step [min %.1f]\n", G, GX, times[10], times[10] * 1e6 / steps, times[0]*1e6/steps);
}
