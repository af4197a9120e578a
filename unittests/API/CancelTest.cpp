//===- CancelTest.cpp - Stream::cancel and launch timeouts -----------------===//
//
// A kernel that never ends is abandoned (cancel) or stopped at its deadline
// (setLaunchTimeout); its stream reports Cancelled until resetError, and the
// device and its other streams keep working, with checked results.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;
using namespace std::chrono_literals;

namespace {

using kiln::test::SpinText;

ElementType u32() { return ElementType::scalar(ScalarType::U32); }

Status affine(Stream &S, const Kernel &K, const Buffer &B, uint32_t N, float A,
              float C) {
  return S.launch(K, {(N + 63) / 64, 1, 1},
                  {Arg::buffer(B.view(f32(), 0, N)), Arg::f32(A), Arg::f32(C),
                   Arg::u32(N)});
}

/// Queues \p Rounds of y = y + 1 on \p S over \p B (zeroed first).
void queueCount(Stream &S, const Kernel &K, const Buffer &B, uint32_t N,
                int Rounds) {
  std::vector<float> Zero(N, 0.0f);
  ASSERT_TRUE(S.copyToBuffer(B, 0, Zero.data(), N * 4).ok());
  ASSERT_TRUE(S.synchronize().ok());
  for (int R = 0; R < Rounds; ++R)
    ASSERT_TRUE(affine(S, K, B, N, 1.0f, 1.0f).ok());
}

void expectAll(const Buffer &B, uint32_t N, float V) {
  const float *P = static_cast<const float *>(B.data());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(P[I], V) << I;
}

TEST(CancelTest, ANeverEndingKernelIsCancelledAndOtherStreamsGoOn) {
  Device D = memoryDevice(2);
  Kernel Spin = *D.loadKernel(SpinText, "spin");
  Kernel K = *D.loadKernel(AffineText, "affine");
  Stream A = *D.createStream(), B = *D.createStream();
  Buffer Counters = *Buffer::allocate(16 * 64 * 4);
  const uint32_t N = 20000;
  Buffer Y = *Buffer::allocate(N * 4);

  ASSERT_TRUE(A.launch(Spin, {16, 1, 1}, {Arg::buffer(Counters.view(u32()))})
                  .ok());
  Event AfterSpin = *A.record();
  ASSERT_TRUE(affine(A, K, Y, N, 1.0f, 5.0f).ok()); // skipped by the cancel
  queueCount(B, K, Y, N, 0);
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(AfterSpin.isComplete());
  EXPECT_TRUE(A.status().ok());

  ASSERT_TRUE(A.cancel().ok());
  // Every later submission gets the cancellation back.
  EXPECT_EQ(affine(A, K, Y, N, 1.0f, 1.0f).code(), ErrorCode::Cancelled);
  Status Sync = A.synchronize();
  EXPECT_EQ(Sync.code(), ErrorCode::Cancelled);
  EXPECT_EQ(Sync.message(), "the stream was cancelled");
  EXPECT_EQ(AfterSpin.synchronize().code(), ErrorCode::Cancelled);
  // Some cube ran (which ones the threads took first is theirs to choose).
  const uint32_t *Counted = static_cast<const uint32_t *>(Counters.data());
  EXPECT_NE(*std::max_element(Counted, Counted + 16 * 64), 0u)
      << "the kernel never ran";

  // The other stream and the device work, with checked results.
  queueCount(B, K, Y, N, 7);
  ASSERT_TRUE(B.synchronize().ok());
  expectAll(Y, N, 7.0f);
  ASSERT_TRUE(D.synchronize().code() == ErrorCode::Cancelled);

  // Reset, the cancelled stream runs work again.
  EXPECT_EQ(A.resetError().code(), ErrorCode::Cancelled);
  EXPECT_TRUE(A.status().ok());
  queueCount(A, K, Y, N, 3);
  EXPECT_TRUE(A.synchronize().ok());
  expectAll(Y, N, 3.0f);
  EXPECT_TRUE(D.synchronize().ok());
}

TEST(CancelTest, ATimeoutStopsTheLaunchAndFailsTheStream) {
  Device D = memoryDevice(2);
  Kernel Spin = *D.loadKernel(SpinText, "spin");
  Kernel K = *D.loadKernel(AffineText, "affine");
  Stream S = *D.createStream(), Other = *D.createStream();
  Buffer Counters = *Buffer::allocate(4 * 64 * 4);
  const uint32_t N = 4096;
  Buffer Y = *Buffer::allocate(N * 4);

  ASSERT_TRUE(S.setLaunchTimeout(40).ok());
  // Ends well within its limit.
  queueCount(S, K, Y, N, 2);
  ASSERT_TRUE(S.synchronize().ok());
  expectAll(Y, N, 2.0f);
  // Never ends: stopped at 40 ms; the work after it is skipped.
  ASSERT_TRUE(
      S.launch(Spin, {4, 1, 1}, {Arg::buffer(Counters.view(u32()))}).ok());
  Status Skipped = affine(S, K, Y, N, 1.0f, 100.0f);
  Event E = *S.record();
  Status Sync = S.synchronize();
  EXPECT_EQ(Sync.code(), ErrorCode::Cancelled);
  EXPECT_NE(Sync.message().find("launch of kernel 'spin' was stopped at the "
                                "stream's launch timeout of 40 ms"),
            std::string::npos)
      << Sync.message();
  EXPECT_EQ(E.synchronize().code(), ErrorCode::Cancelled);
  if (Skipped.ok())
    expectAll(Y, N, 2.0f);

  // Another stream without a limit is unaffected.
  queueCount(Other, K, Y, N, 5);
  ASSERT_TRUE(Other.synchronize().ok());
  expectAll(Y, N, 5.0f);

  // The limit stays for later launches of the stream; 0 lifts it.
  EXPECT_EQ(S.resetError().code(), ErrorCode::Cancelled);
  queueCount(S, K, Y, N, 4);
  EXPECT_TRUE(S.synchronize().ok());
  expectAll(Y, N, 4.0f);
  ASSERT_TRUE(S.setLaunchTimeout(0).ok());
  ASSERT_TRUE(
      S.launch(Spin, {4, 1, 1}, {Arg::buffer(Counters.view(u32()))}).ok());
  std::this_thread::sleep_for(60ms);
  EXPECT_TRUE(S.status().ok()) << "no limit: still running";
  ASSERT_TRUE(S.cancel().ok());
  EXPECT_EQ(S.synchronize().code(), ErrorCode::Cancelled);
}

TEST(CancelTest, CancelOfAnIdleOrFailedStreamAndBadArguments) {
  Device D = memoryDevice(2);
  Kernel K = *D.loadKernel(AffineText, "affine");
  Stream S = *D.createStream();
  const uint32_t N = 256;
  Buffer Y = *Buffer::allocate(N * 4);
  // Idle: nothing to stop, the stream is failed all the same.
  ASSERT_TRUE(S.cancel().ok());
  EXPECT_EQ(S.status().code(), ErrorCode::Cancelled);
  EXPECT_EQ(S.resetError().code(), ErrorCode::Cancelled);
  queueCount(S, K, Y, N, 1);
  EXPECT_TRUE(S.synchronize().ok());
  expectAll(Y, N, 1.0f);
  // A stream failed by a bad launch keeps that failure when cancelled.
  EXPECT_EQ(S.launch(K, {1, 1, 1}, {Arg::f32(1.0f)}).code(),
            ErrorCode::InvalidLaunch);
  ASSERT_TRUE(S.cancel().ok());
  EXPECT_EQ(S.status().code(), ErrorCode::InvalidLaunch);
  EXPECT_EQ(S.resetError().code(), ErrorCode::InvalidLaunch);

  EXPECT_EQ(S.setLaunchTimeout(uint64_t(1) << 41).code(),
            ErrorCode::InvalidArgument);
  Stream Null;
  EXPECT_EQ(Null.cancel().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(Null.setLaunchTimeout(5).code(), ErrorCode::InvalidArgument);
}

TEST(CancelTest, DestroyingTheDeviceAfterACancelDoesNotHang) {
  Stream S;
  Event E;
  {
    Device D = memoryDevice(2);
    Kernel Spin = *D.loadKernel(SpinText, "spin");
    Buffer Counters = *Buffer::allocate(8 * 64 * 4);
    S = *D.createStream();
    ASSERT_TRUE(
        S.launch(Spin, {8, 1, 1}, {Arg::buffer(Counters.view(u32()))}).ok());
    E = *S.record();
    std::this_thread::sleep_for(20ms);
    ASSERT_TRUE(S.cancel().ok());
  } // drains: the launch stops, so this returns
  EXPECT_EQ(S.synchronize().code(), ErrorCode::Cancelled);
  EXPECT_EQ(E.synchronize().code(), ErrorCode::Cancelled);
}

} // namespace
