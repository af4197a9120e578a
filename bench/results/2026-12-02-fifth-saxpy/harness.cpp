// Kiln's saxpy cube function (linked from an object) against two loops of
// GCC's, one thread, the same buffers, interleaved; medians of 40 runs.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
extern "C" void kiln_cube_saxpy(void *LA, uint32_t B, uint32_t E, void *S);
constexpr size_t N = 1u << 24;
// y = a * x + y contracted into one FMA (GCC's default for C++).
__attribute__((noinline, target("prefer-vector-width=512"))) void
fused(float A, const float *X, float *Y) {
  for (size_t I = 0; I < N; ++I)
    Y[I] = A * X[I] + Y[I];
}
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
// The kernel's arithmetic: a multiply and an add, each rounded.
__attribute__((noinline, target("prefer-vector-width=512"))) void
exact(float A, const float *X, float *Y) {
  for (size_t I = 0; I < N; ++I)
    Y[I] = A * X[I] + Y[I];
}
#pragma GCC pop_options
int main() {
  float *X = (float *)aligned_alloc(64, N * 4), *Y = (float *)aligned_alloc(64, N * 4);
  for (size_t I = 0; I < N; ++I)
    X[I] = 1, Y[I] = 2;
  float Alpha = 0.5f;
  uint32_t Count = N;
  // The launch arguments as the cube function reads them: per argument a
  // pointer and a size; the cube counts; no stop flag.
  void *Args[8] = {&Alpha, 0, X, (void *)(uintptr_t)N, Y, (void *)(uintptr_t)N, &Count, 0};
  struct {
    void **Args;
    uint32_t CX, CY, CZ, Pad;
    void *Stop;
    uint64_t More[8];
  } LA = {Args, 65536, 1, 1, 0, nullptr, {}};
  char Scratch[4096];
  std::vector<double> T[3];
  for (int It = 0; It < 40; ++It)
    for (int V = 0; V < 3; ++V) {
      auto T0 = std::chrono::steady_clock::now();
      if (V == 0)
        kiln_cube_saxpy(&LA, 0, 65536, Scratch);
      else if (V == 1)
        exact(0.5f, X, Y);
      else
        fused(0.5f, X, Y);
      T[V].push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - T0).count());
    }
  const char *Names[] = {"kiln", "exact", "fused"};
  for (int V = 0; V < 3; ++V) {
    std::sort(T[V].begin(), T[V].end());
    printf("%s %.3f [%.3f, %.3f]  ", Names[V], T[V][20], T[V][4], T[V][36]);
  }
  printf("\n");
}
