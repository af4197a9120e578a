//===- AliasingTest.cpp - Overlapping and in-place bindings ---------------===//
//
// Views of one pool bound to several parameters: the launch must pick code
// compiled without the no-alias assumption whenever a written view overlaps
// another, and the results must be those of the kernel run as written.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <gtest/gtest.h>

#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;

namespace {

/// One unit walks the whole range: each iteration's store is seen by the
/// next iteration's load when out starts one element after in.
constexpr const char *ShiftText = R"(
kernel @shift cube_dim(1) (%in: buffer<f32, read>, %out: buffer<f32, write>,
                           %n: u32) {
  for %j = 0:u32 to %n {
    %v = load %in[%j] : f32
    %w = add %v, 1.0:f32 : f32
    store %out[%j], %w
  }
}
)";

TEST(AliasingTest, OverlappingShiftInOneUnitIsSequential) {
  Device D = memoryDevice();
  Result<Kernel> K = D.loadKernel(ShiftText, "shift");
  ASSERT_TRUE(K.ok()) << K.status().str();
  for (uint32_t N : {7u, 64u, 1000u, 4099u}) {
    Buffer Pool = *Buffer::allocate((N + 1) * 4);
    auto *P = static_cast<float *>(Pool.data());
    for (uint32_t I = 0; I <= N; ++I)
      P[I] = 100.0f - float(I);
    std::vector<float> Ref(P, P + N + 1);
    for (uint32_t J = 0; J < N; ++J)
      Ref[J + 1] = Ref[J] + 1.0f;
    Status S = D.launch(*K, {1, 1, 1},
                        {Arg::buffer(Pool.view(f32(), 0, N), Access::Read),
                         Arg::buffer(Pool.view(f32(), 4, N)), Arg::u32(N)});
    ASSERT_TRUE(S.ok()) << S.str();
    for (uint32_t I = 0; I <= N; ++I)
      ASSERT_EQ(P[I], Ref[I]) << "n " << N << " element " << I;
  }
}

TEST(AliasingTest, SameViewReadAndWritten) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(VaddText, "vadd");
  const uint32_t N = 1000;
  Buffer X = *Buffer::allocate(N * 4), Y = *Buffer::allocate(N * 4);
  auto *XP = static_cast<float *>(X.data());
  auto *YP = static_cast<float *>(Y.data());
  for (uint32_t I = 0; I < N; ++I) {
    XP[I] = float(I);
    YP[I] = 2.0f * float(I) + 1.0f;
  }
  // c = a + b with c the same memory as a: in place.
  Status S = D.launch(K, {(N + 63) / 64, 1, 1},
                      {Arg::buffer(X.view(f32()), Access::Read),
                       Arg::buffer(Y.view(f32()), Access::Read),
                       Arg::buffer(X.view(f32())), Arg::u32(N)});
  ASSERT_TRUE(S.ok()) << S.str();
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(XP[I], 3.0f * float(I) + 1.0f) << I;
  // All three the same memory: x = x + x.
  S = D.launch(K, {(N + 63) / 64, 1, 1},
               {Arg::buffer(X.view(f32()), Access::Read),
                Arg::buffer(X.view(f32()), Access::Read),
                Arg::buffer(X.view(f32())), Arg::u32(N)});
  ASSERT_TRUE(S.ok()) << S.str();
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(XP[I], 6.0f * float(I) + 2.0f) << I;
}

TEST(AliasingTest, UnalignedOverlappingViewsOfOnePool) {
  // A pool with tensors at odd offsets, an in-place update of a view that
  // overlaps the input by half: each unit touches only its own element, so
  // the result is defined and must match.
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(AffineText, "affine");
  const uint32_t N = 777;
  Buffer Pool = *Buffer::allocate(8192);
  auto *P = static_cast<float *>(Pool.data());
  for (uint32_t I = 0; I < 2048; ++I)
    P[I] = float(I % 97);
  std::vector<float> Ref(P, P + 2048);
  const uint64_t Off = 4 * 13; // 52 bytes: aligned to 4, not to 64
  for (uint32_t I = 0; I < N; ++I)
    Ref[13 + I] = 0.5f * Ref[13 + I] - 2.0f;
  Status S = D.launch(K, {(N + 63) / 64, 1, 1},
                      {Arg::buffer(Pool.view(f32(), Off, N)), Arg::f32(0.5f),
                       Arg::f32(-2.0f), Arg::u32(N)});
  ASSERT_TRUE(S.ok()) << S.str();
  for (uint32_t I = 0; I < 2048; ++I)
    ASSERT_EQ(P[I], Ref[I]) << I;
}

} // namespace
