//===- PrepareTest.cpp - Kernel variants made ready before launches -------===//
//
// Kernel::prepare and Device::prepareKernels: after them, launches with
// unaligned views and with overlapping (in-place) bindings compile nothing
// (Device::counters), give the right results, and the variants are served
// through the store like any other.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Support/TempDir.h"

#include <gtest/gtest.h>

#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;

namespace {

/// y = 2 x: two buffers, so that each variant lowers to code of its own.
constexpr const char *ScaleText = R"(
kernel @scale cube_dim(64) (%x: buffer<f32, read>, %y: buffer<f32, write>,
                            %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %v = load %x[%i] : f32
    %r = mul %v, 2.0:f32 : f32
    store %y[%i], %r
  }
}
)";

/// Queues vadd(A, B, C) of \p N elements on \p S.
void launchVadd(Stream &S, const Kernel &K, const BufferView &A,
                const BufferView &B, const BufferView &C, uint32_t N) {
  ASSERT_TRUE(S.launch(K, {(N + 63) / 64, 1, 1},
                       {Arg::buffer(A, Access::Read),
                        Arg::buffer(B, Access::Read), Arg::buffer(C),
                        Arg::u32(N)})
                  .ok());
}

TEST(PrepareTest, LaunchesAfterPrepareNeverCompile) {
  Device D = memoryDevice();
  Result<Kernel> K = D.loadKernel(VaddText, "vadd");
  ASSERT_TRUE(K.ok()) << K.status().str();
  DeviceCounters Loaded = D.counters();
  EXPECT_EQ(Loaded.Compiled, 1u);
  EXPECT_EQ(Loaded.LaunchLinks, 0u);

  ASSERT_TRUE(K->prepare().ok());
  DeviceCounters Prepared = D.counters();
  // The three variants beside the loaded one, compiled as one batch.
  EXPECT_EQ(Prepared.Compiled, 4u);
  EXPECT_EQ(Prepared.LaunchLinks, 0u);
  // Prepared again: nothing to do.
  ASSERT_TRUE(K->prepare().ok());
  EXPECT_EQ(D.counters().Compiled, 4u);

  const uint32_t N = 1000;
  Buffer Pool = *Buffer::allocate((3 * N + 64) * 4);
  auto *P = static_cast<float *>(Pool.data());
  for (uint32_t I = 0; I < 3 * N + 64; ++I)
    P[I] = float(I % 97);
  Stream S = *D.createStream();
  // Unaligned: views one element into the pool.
  BufferView A = Pool.view(f32(), 4, N), B = Pool.view(f32(), 4 + 4 * N, N),
             C = Pool.view(f32(), 4 + 8 * N, N);
  std::vector<float> Want(N);
  for (uint32_t I = 0; I < N; ++I)
    Want[I] = P[1 + I] + P[1 + N + I];
  launchVadd(S, *K, A, B, C, N);
  ASSERT_TRUE(S.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(P[1 + 2 * N + I], Want[I]) << "unaligned, at " << I;
  // In place, aligned: c = c + b on one view.
  BufferView InPlace = Pool.view(f32(), 0, N);
  BufferView Other = Pool.view(f32(), 4096, N); // aligned, apart
  for (uint32_t I = 0; I < N; ++I)
    Want[I] = P[I] + P[1024 + I];
  launchVadd(S, *K, InPlace, Other, InPlace, N);
  ASSERT_TRUE(S.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(P[I], Want[I]) << "in place, at " << I;
  // In place and unaligned.
  BufferView Odd = Pool.view(f32(), 8, N);
  for (uint32_t I = 0; I < N; ++I)
    Want[I] = P[2 + I] * 2;
  launchVadd(S, *K, Odd, Odd, Odd, N);
  ASSERT_TRUE(S.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(P[2 + I], Want[I]) << "in place, unaligned, at " << I;
  // Synchronous launches too.
  ASSERT_TRUE(D.launch(*K, {(N + 63) / 64, 1, 1},
                       {Arg::buffer(A, Access::Read),
                        Arg::buffer(A, Access::Read), Arg::buffer(A),
                        Arg::u32(N)})
                  .ok());

  DeviceCounters After = D.counters();
  EXPECT_EQ(After.LaunchLinks, 0u);
  EXPECT_EQ(After.LaunchCompiles, 0u);
  EXPECT_EQ(After.Compiled, 4u);
}

TEST(PrepareTest, WithoutPrepareTheLaunchCompilesAndCountsIt) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(VaddText, "vadd");
  const uint32_t N = 100;
  Buffer Pool = *Buffer::allocate((2 * N + 16) * 4);
  BufferView V = Pool.view(f32(), 4, N);
  ASSERT_TRUE(D.launch(K, {2, 1, 1},
                       {Arg::buffer(V, Access::Read),
                        Arg::buffer(Pool.view(f32(), 4 + 4 * N, N),
                                    Access::Read),
                        Arg::buffer(Pool.view(f32(), 4 + 4 * N, N)),
                        Arg::u32(N)})
                  .ok());
  DeviceCounters C = D.counters();
  EXPECT_EQ(C.LaunchLinks, 1u);
  EXPECT_EQ(C.LaunchCompiles, 1u);
  EXPECT_EQ(C.Compiled, 2u);
  // What a launch linked, prepare does not compile again.
  ASSERT_TRUE(K.prepare().ok());
  EXPECT_EQ(D.counters().Compiled, 4u);
}

TEST(PrepareTest, OptionsNameTheVariants) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(VaddText, "vadd");
  PrepareOptions O;
  O.MayAlias = false;
  ASSERT_TRUE(K.prepare(O).ok());
  EXPECT_EQ(D.counters().Compiled, 2u); // the unaligned one only
  O.Unaligned = false;
  ASSERT_TRUE(K.prepare(O).ok()); // none named
  EXPECT_EQ(D.counters().Compiled, 2u);
  O.MayAlias = true;
  ASSERT_TRUE(K.prepare(O).ok()); // the aligned may-alias one
  EXPECT_EQ(D.counters().Compiled, 3u);
  ASSERT_TRUE(K.prepare().ok()); // the last
  EXPECT_EQ(D.counters().Compiled, 4u);
}

TEST(PrepareTest, PrepareKernelsIsOneBatch) {
  Device D = memoryDevice();
  std::vector<Kernel> Ks = {*D.loadKernel(VaddText, "vadd"),
                            *D.loadKernel(ScaleText, "scale")};
  Ks.push_back(Ks[0]); // the same kernel twice is prepared once
  ASSERT_TRUE(D.prepareKernels(Ks).ok());
  EXPECT_EQ(D.counters().Compiled, 8u);

  // Nothing is prepared when a handle is refused.
  Device Other = memoryDevice();
  Kernel Foreign = *Other.loadKernel(VaddText, "vadd");
  std::vector<Kernel> Mixed = {Foreign, Kernel()};
  Status E = D.prepareKernels(Mixed);
  EXPECT_EQ(E.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(E.message().find("belongs to another device"), std::string::npos)
      << E.str();
  EXPECT_EQ(Other.counters().Compiled, 1u);
  Mixed = {Kernel()};
  EXPECT_EQ(D.prepareKernels(Mixed).code(), ErrorCode::InvalidArgument);
}

TEST(PrepareTest, PreparedVariantsComeFromTheStore) {
  kiln::test::TempDir Dir;
  DeviceConfig C;
  C.Store = StoreMode::ReadWrite;
  C.StoreDir = Dir.path();
  {
    Device D = *Device::create(C);
    Kernel K = *D.loadKernel(VaddText, "vadd");
    ASSERT_TRUE(K.prepare().ok());
    EXPECT_EQ(D.counters().Compiled, 4u);
  }
  Device D = *Device::create(C);
  Kernel K = *D.loadKernel(VaddText, "vadd");
  ASSERT_TRUE(K.prepare().ok());
  DeviceCounters N = D.counters();
  EXPECT_EQ(N.Compiled, 0u);
  EXPECT_EQ(N.StoreLoads, 4u);
}

TEST(PrepareTest, NullHandlesAndClosedDevices) {
  EXPECT_EQ(Kernel().prepare().code(), ErrorCode::InvalidArgument);
  Device Null;
  EXPECT_EQ(Null.counters().Compiled, 0u);
  EXPECT_EQ(Null.prepareKernels({}).code(), ErrorCode::InvalidArgument);
  Kernel K;
  {
    Device D = memoryDevice();
    K = *D.loadKernel(VaddText, "vadd");
  }
  EXPECT_EQ(K.prepare().code(), ErrorCode::Cancelled);
}

TEST(PrepareTest, ResultMovesItsValueOut) {
  Device D = memoryDevice();
  Result<Kernel> R = D.loadKernel(VaddText, "vadd");
  ASSERT_TRUE(R.ok());
  Kernel K = *std::move(R);
  EXPECT_TRUE(K.valid());
  EXPECT_FALSE(R->valid()); // moved from: the handle is null
  Result<std::vector<int>> V = std::vector<int>{1, 2, 3};
  std::vector<int> Out = *std::move(V);
  EXPECT_EQ(Out.size(), 3u);
  EXPECT_TRUE(V->empty());
  static_assert(std::is_same_v<decltype(*std::move(V)), std::vector<int> &&>);
}

} // namespace
