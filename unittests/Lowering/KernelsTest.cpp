//===- KernelsTest.cpp - Whole GPU-style kernels against host references
//---===//

#include "LoweringHarness.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <thread>

using namespace kiln;
using namespace kiln::test;

namespace {

TEST(LoweringKernels, TreeReductionInSharedMemory) {
  // s = 128 >> k with a barrier inside a uniform loop.
  const char *Text = R"(
kernel @reduce cube_dim(256) (%in: buffer<f32, read>, %partial: buffer<f32, write>, %n: u32) {
  %s = shared f32[256]
  %lid = unit_pos : u32
  %gid = absolute_pos : u32
  %ok = lt %gid, %n : bool
  %x = var f32
  set %x, 0.0:f32
  if %ok {
    %v = load %in[%gid] : f32
    set %x, %v
  }
  %xv = get %x : f32
  store %s[%lid], %xv
  sync_cube
  for %k = 0:u32 to 8:u32 {
    %st = shr 128:u32, %k : u32
    %active = lt %lid, %st : bool
    if %active {
      %other = add %lid, %st : u32
      %a = load %s[%lid] : f32
      %b = load %s[%other] : f32
      %sum = add %a, %b : f32
      store %s[%lid], %sum
    }
    sync_cube
  }
  %first = eq %lid, 0:u32 : bool
  if %first {
    %total = load %s[0:u32] : f32
    %cube = cube_pos : u32
    store %partial[%cube], %total
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  uint32_t N = 256 * 5 + 17, Cubes = 6;
  std::vector<float> In(N), Partial(Cubes);
  for (uint32_t I = 0; I < N; ++I)
    In[I] = float(int(I % 13) - 6); // small integers: sums are exact
  K.launch({buf(In), buf(Partial), val(N)}, {Cubes, 1, 1});
  for (uint32_t C = 0; C < Cubes; ++C) {
    float Want = 0;
    for (uint32_t I = C * 256; I < std::min(N, (C + 1) * 256); ++I)
      Want += In[I];
    EXPECT_EQ(Partial[C], Want) << C;
  }
}

TEST(LoweringKernels, TiledMatmul2D) {
  const char *Text = TiledMatmulKernel;
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  uint32_t N = 48;
  std::vector<float> A(N * N), Bm(N * N), C(N * N, -1.0f);
  for (uint32_t I = 0; I < N * N; ++I) {
    A[I] = float(int(I * 7 % 11) - 5);
    Bm[I] = float(int(I * 3 % 7) - 3);
  }
  K.launch({buf(A), buf(Bm), buf(C), val(N)}, {N / 16, N / 16, 1});
  for (uint32_t R = 0; R < N; ++R)
    for (uint32_t Cl = 0; Cl < N; ++Cl) {
      float Want = 0;
      for (uint32_t X = 0; X < N; ++X)
        Want = std::fma(A[R * N + X], Bm[X * N + Cl], Want);
      ASSERT_EQ(C[R * N + Cl], Want) << R << "," << Cl;
    }
}

TEST(LoweringKernels, PrefixSumInSharedMemory) {
  // Hillis-Steele inclusive scan: read, barrier, write, barrier per step.
  const char *Text = R"(
kernel @scan cube_dim(128) (%in: buffer<i32, read>, %out: buffer<i32, write>) {
  %s = shared i32[128]
  %u = unit_pos : u32
  %g = absolute_pos : u32
  %x = load %in[%g] : i32
  store %s[%u], %x
  sync_cube
  %d = var u32
  set %d, 1:u32
  loop {
    %dv = get %d : u32
    %done = ge %dv, 128:u32 : bool
    if %done {
      break
    }
    %t = var i32
    set %t, 0:i32
    %has = ge %u, %dv : bool
    if %has {
      %j = sub %u, %dv : u32
      %y = load %s[%j] : i32
      set %t, %y
    }
    sync_cube
    %cur = load %s[%u] : i32
    %tv = get %t : i32
    %nv = add %cur, %tv : i32
    store %s[%u], %nv
    sync_cube
    %d2 = shl %dv, 1:u32 : u32
    set %d, %d2
  }
  %r = load %s[%u] : i32
  store %out[%g], %r
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  uint32_t Cubes = 3, N = 128 * Cubes;
  std::vector<int32_t> In(N), Out(N);
  for (uint32_t I = 0; I < N; ++I)
    In[I] = int32_t(I * 37 % 19) - 9;
  K.launch({buf(In), buf(Out)}, {Cubes, 1, 1});
  for (uint32_t C = 0; C < Cubes; ++C) {
    int32_t Sum = 0;
    for (uint32_t I = 0; I < 128; ++I) {
      Sum += In[C * 128 + I];
      ASSERT_EQ(Out[C * 128 + I], Sum) << C << "," << I;
    }
  }
}

TEST(LoweringKernels, HistogramGlobalAtomics) {
  const char *Text = R"(
kernel @hist cube_dim(64) (%in: buffer<u32, read>, %bins: buffer<u32, read_write>, %n: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    %v = load %in[%i] : u32
    %b = rem %v, 16:u32 : u32
    %old = atomic_add %bins[%b], 1:u32 : u32
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  uint32_t N = 5000;
  std::vector<uint32_t> In(N), Bins(16, 0), Want(16, 0);
  std::mt19937 G(7);
  for (uint32_t I = 0; I < N; ++I) {
    In[I] = G();
    ++Want[In[I] % 16];
  }
  // Cubes run concurrently: split them over threads to exercise real atomics.
  uint32_t Cubes = (N + 63) / 64;
  std::vector<std::thread> Threads;
  LaunchArgs LA{nullptr, {Cubes, 1, 1}, 0, nullptr};
  std::vector<KernelArg> Args = {buf(In), buf(Bins), val(N)};
  LA.Args = Args.data();
  for (uint32_t T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      std::vector<uint8_t> Scratch(K.Metadata.ScratchBytes + 128);
      void *S = reinterpret_cast<void *>((uintptr_t(Scratch.data()) + 63) &
                                         ~uintptr_t(63));
      uint32_t Per = (Cubes + 3) / 4;
      uint32_t B = std::min(Cubes, T * Per), E = std::min(Cubes, B + Per);
      K.Fn(&LA, B, E, S);
    });
  for (auto &T : Threads)
    T.join();
  EXPECT_EQ(Bins, Want);
}

TEST(LoweringKernels, HistogramSharedAtomics) {
  const char *Text = R"(
kernel @hist cube_dim(64) (%in: buffer<u32, read>, %bins: buffer<u32, read_write>, %n: u32) {
  %local = shared u32[16]
  %u = unit_pos : u32
  %small = lt %u, 16:u32 : bool
  if %small {
    store %local[%u], 0:u32
  }
  sync_cube
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    %v = load %in[%i] : u32
    %b = rem %v, 16:u32 : u32
    %old = atomic_add %local[%b], 1:u32 : u32
  }
  sync_cube
  if %small {
    %c = load %local[%u] : u32
    %o = atomic_add %bins[%u], %c : u32
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  uint32_t N = 3001;
  std::vector<uint32_t> In(N), Bins(16, 0), Want(16, 0);
  std::mt19937 G(11);
  for (uint32_t I = 0; I < N; ++I) {
    In[I] = G() % 1000;
    ++Want[In[I] % 16];
  }
  K.launch({buf(In), buf(Bins), val(N)}, {(N + 63) / 64, 1, 1});
  EXPECT_EQ(Bins, Want);
}

TEST(LoweringKernels, EveryAtomic) {
  const char *Text = R"(
kernel @atoms cube_dim(32) (%u: buffer<u32, read_write>, %s: buffer<i32, read_write>,
                            %f: buffer<f32, read_write>, %l: buffer<u64, read_write>,
                            %olds: buffer<u32, write>) {
  %i = unit_pos : u32
  %si = cast %i : i32
  %neg = sub 10:i32, %si : i32
  %a = atomic_add %u[0:u32], %i : u32
  %b = atomic_sub %u[1:u32], 1:u32 : u32
  %c = atomic_min %s[0:u32], %neg : i32
  %d = atomic_max %s[1:u32], %neg : i32
  %e = atomic_and %u[2:u32], 0xFFFFFFFE:u32 : u32
  %g = atomic_or %u[3:u32], %i : u32
  %h = atomic_xor %u[4:u32], 1:u32 : u32
  %x = atomic_exchange %u[5:u32], %i : u32
  %fa = atomic_add %f[0:u32], 0.5:f32 : f32
  %w = atomic_add %l[0:u32], 4294967296:u64 : u64
  %z = eq %i, 3:u32 : bool
  if %z {
    %cas = atomic_cas %u[6:u32], 40:u32, 41:u32 : u32
    store %olds[0:u32], %cas
    %cas2 = atomic_cas %u[6:u32], 40:u32, 99:u32 : u32
    store %olds[1:u32], %cas2
    atomic_store %u[7:u32], 1234:u32
    %ld = atomic_load %u[7:u32] : u32
    store %olds[2:u32], %ld
  }
  %mn = atomic_min %u[8:u32], %i : u32
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<uint32_t> U = {0, 100, 0xFF, 0, 0, 0, 40, 0, 0xFFFFFFFF}, Olds(3);
  std::vector<int32_t> S = {1000, -1000};
  std::vector<float> F = {1.0f};
  std::vector<uint64_t> L = {5};
  K.launch({buf(U), buf(S), buf(F), buf(L), buf(Olds)}, {1, 1, 1});
  EXPECT_EQ(U[0], 31u * 32 / 2);
  EXPECT_EQ(U[1], 100u - 32);
  EXPECT_EQ(S[0], 10 - 31); // signed min
  EXPECT_EQ(S[1], 10);
  EXPECT_EQ(U[2], 0xFEu);
  EXPECT_EQ(U[3], 31u);
  EXPECT_EQ(U[4], 0u); // 32 xors of 1
  EXPECT_LT(U[5], 32u);
  EXPECT_EQ(F[0], 17.0f);
  EXPECT_EQ(L[0], 5 + 32 * 4294967296ull);
  EXPECT_EQ(Olds[0], 40u);
  EXPECT_EQ(Olds[1], 41u); // failed: returns the current value
  EXPECT_EQ(U[6], 41u);
  EXPECT_EQ(Olds[2], 1234u);
  EXPECT_EQ(U[8], 0u); // unsigned min
}

} // namespace
