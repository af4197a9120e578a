//===- StreamTest.cpp - Streams and events of the C API -------------------===//

#include "CAPITestSupport.h"

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

using namespace kiln::capi::test;

namespace {

using Clock = std::chrono::steady_clock;

/// Iterations of @spin: well over 2^24, where a float sum of 1.0s stops
/// growing, and long enough (tens of milliseconds) that the host queues more
/// work before it ends.
constexpr uint32_t SpinIterations = 60u << 20;
/// What @spin leaves in data[0] when data[0] was 1.0.
constexpr float SpinResult = 16777216.0f;

struct CAPIStreamTest : ::testing::Test {
  void SetUp() override {
    D = memoryDevice();
    Vadd = loadKernel(D, VaddText);
    Affine = loadKernel(D, AffineText);
    ASSERT_KILN_OK(kiln_stream_create(D, &S));
  }
  void TearDown() override {
    if (Spin)
      EXPECT_KILN_OK(kiln_kernel_destroy(Spin));
    EXPECT_KILN_OK(kiln_stream_destroy(S));
    EXPECT_KILN_OK(kiln_kernel_destroy(Affine));
    EXPECT_KILN_OK(kiln_kernel_destroy(Vadd));
    EXPECT_KILN_OK(kiln_device_destroy(D));
  }
  kiln_kernel spin() {
    if (!Spin)
      Spin = loadKernel(D, SpinText);
    return Spin;
  }
  /// Queues @spin on \p Stream over \p Data (whose data[0] should be 1.0).
  kiln_status queueSpin(kiln_stream Stream, kiln_buffer Data) {
    kiln_arg Args[2] = {kiln_arg_buffer(Data, f32(), KILN_ACCESS_READ_WRITE),
                        kiln_arg_u32(SpinIterations)};
    return kiln_stream_launch(Stream, spin(), dim(1), Args, 2);
  }
  /// Queues y = a * y + b over all of \p Y.
  kiln_status queueAffine(kiln_stream Stream, kiln_buffer Y, uint32_t N,
                          float A, float B) {
    kiln_arg Args[4] = {kiln_arg_buffer(Y, f32(), KILN_ACCESS_READ_WRITE),
                        kiln_arg_f32(A), kiln_arg_f32(B), kiln_arg_u32(N)};
    return kiln_stream_launch(Stream, Affine, dim((N + 63) / 64), Args, 4);
  }
  /// A launch of @vadd with three arguments: refused, fails the stream.
  kiln_status queueInvalidLaunch(kiln_stream Stream, kiln_buffer B) {
    kiln_arg Args[3] = {kiln_arg_buffer(B, f32(), KILN_ACCESS_READ),
                        kiln_arg_buffer(B, f32(), KILN_ACCESS_READ),
                        kiln_arg_buffer(B, f32(), KILN_ACCESS_WRITE)};
    return kiln_stream_launch(Stream, Vadd, dim(1), Args, 3);
  }

  kiln_device D = nullptr;
  kiln_kernel Vadd = nullptr, Affine = nullptr, Spin = nullptr;
  kiln_stream S = nullptr;
};

TEST_F(CAPIStreamTest, CopiesLaunchAndEvent) {
  const uint32_t N = 777;
  std::vector<float> A(N), B(N), C(N, -1.0f);
  for (uint32_t I = 0; I < N; ++I) {
    A[I] = 0.5f * float(I);
    B[I] = 1000.0f - float(I);
  }
  kiln_buffer BA, BB, BC;
  ASSERT_KILN_OK(kiln_buffer_allocate(N * 4, &BA));
  ASSERT_KILN_OK(kiln_buffer_allocate(N * 4, &BB));
  ASSERT_KILN_OK(kiln_buffer_allocate(N * 4, &BC));
  ASSERT_KILN_OK(kiln_stream_copy_to_buffer(S, BA, 0, A.data(), N * 4));
  ASSERT_KILN_OK(kiln_stream_copy_to_buffer(S, BB, 0, B.data(), N * 4));
  kiln_arg Args[4] = {kiln_arg_buffer(BA, f32(), KILN_ACCESS_READ),
                      kiln_arg_buffer(BB, f32(), KILN_ACCESS_READ),
                      kiln_arg_buffer(BC, f32(), KILN_ACCESS_WRITE),
                      kiln_arg_u32(N)};
  ASSERT_KILN_OK(kiln_stream_launch(S, Vadd, dim((N + 63) / 64), Args, 4));
  ASSERT_KILN_OK(kiln_stream_copy_from_buffer(S, C.data(), BC, 0, N * 4));
  // Empty copies need no memory.
  ASSERT_KILN_OK(kiln_stream_copy_to_buffer(S, BA, 0, nullptr, 0));
  ASSERT_KILN_OK(kiln_stream_copy_from_buffer(S, nullptr, BA, N * 4, 0));
  kiln_event E = nullptr;
  ASSERT_KILN_OK(kiln_stream_record_event(S, &E));
  ASSERT_NE(E, nullptr);
  ASSERT_KILN_OK(kiln_event_synchronize(E));
  bool Complete = false;
  ASSERT_KILN_OK(kiln_event_query(E, &Complete));
  EXPECT_TRUE(Complete);
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A[I] + B[I]) << "at " << I;
  EXPECT_KILN_OK(kiln_stream_status(S));
  EXPECT_KILN_OK(kiln_stream_synchronize(S));
  EXPECT_KILN_OK(kiln_event_destroy(E));
  for (kiln_buffer Buf : {BA, BB, BC})
    EXPECT_KILN_OK(kiln_buffer_destroy(Buf));
}

// Indirect launches: the count is read from a buffer when the launch runs.
TEST_F(CAPIStreamTest, IndirectLaunch) {
  const uint32_t N = 64 * 8;
  kiln_buffer X = floatBuffer(std::vector<float>(N, 0.0f));
  kiln_buffer Counts = nullptr;
  ASSERT_KILN_OK(kiln_buffer_allocate(12, &Counts));
  uint32_t Later[3] = {3, 1, 1};
  ASSERT_KILN_OK(kiln_stream_copy_to_buffer(S, Counts, 0, Later, 12));
  kiln_buffer_view View = {Counts, 0, 3, kiln_scalar(KILN_U32),
                           KILN_ACCESS_READ};
  kiln_arg Args[4] = {kiln_arg_buffer(X, f32(), KILN_ACCESS_READ_WRITE),
                      kiln_arg_f32(1.0f), kiln_arg_f32(2.0f), kiln_arg_u32(N)};
  ASSERT_KILN_OK(kiln_stream_launch_indirect(S, Affine, &View, Args, 4));
  ASSERT_KILN_OK(kiln_stream_synchronize(S));
  std::vector<float> Got = floatsOf(X);
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(Got[I], I < 3 * 64 ? 2.0f : 0.0f) << I;
  // Synchronous, on the device.
  ASSERT_KILN_OK(kiln_device_launch_indirect(D, Affine, &View, Args, 4));
  Got = floatsOf(X);
  EXPECT_EQ(Got[0], 4.0f);
  EXPECT_EQ(Got[3 * 64], 0.0f);
  // A view that cannot hold a count, and none at all.
  kiln_buffer_view Short = {Counts, 0, 2, kiln_scalar(KILN_U32),
                            KILN_ACCESS_READ};
  EXPECT_EQ(kiln_device_launch_indirect(D, Affine, &Short, Args, 4),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("at least 3 u32"));
  EXPECT_EQ(kiln_device_launch_indirect(D, Affine, nullptr, Args, 4),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("cube_counts is NULL"));
  EXPECT_KILN_OK(kiln_buffer_destroy(Counts));
  EXPECT_KILN_OK(kiln_buffer_destroy(X));
}

TEST_F(CAPIStreamTest, CopyBuffer) {
  kiln_buffer X = floatBuffer({0, 1, 2, 3, 4, 5, 6, 7});
  kiln_buffer Y = floatBuffer(std::vector<float>(8, -1.0f));
  // Between buffers, at offsets.
  ASSERT_KILN_OK(kiln_stream_copy_buffer(S, Y, 4, X, 8, 12));
  // Within one buffer, overlapping: memmove.
  ASSERT_KILN_OK(kiln_stream_copy_buffer(S, X, 4, X, 0, 16));
  ASSERT_KILN_OK(kiln_stream_synchronize(S));
  EXPECT_EQ(floatsOf(Y), (std::vector<float>{-1, 2, 3, 4, -1, -1, -1, -1}));
  EXPECT_EQ(floatsOf(X), (std::vector<float>{0, 0, 1, 2, 3, 5, 6, 7}));
  EXPECT_KILN_OK(kiln_buffer_destroy(X));
  EXPECT_KILN_OK(kiln_buffer_destroy(Y));
}

TEST_F(CAPIStreamTest, CopyErrorsLeaveTheStreamAlone) {
  kiln_buffer B = floatBuffer({1, 2, 3, 4});
  float Host[4] = {};
  EXPECT_EQ(kiln_stream_copy_to_buffer(S, B, 8, Host, 12),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("12 bytes at offset 8 do not fit in the "
                           "destination buffer of 16 bytes"));
  EXPECT_EQ(kiln_stream_copy_from_buffer(S, Host, B, 17, 0),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("do not fit in the source buffer of 16 bytes"));
  EXPECT_EQ(kiln_stream_copy_buffer(S, B, 0, B, 4, 16),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("source buffer"));
  EXPECT_EQ(kiln_stream_copy_buffer(S, B, UINT64_MAX, B, 0, 2),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("destination buffer"));
  EXPECT_EQ(kiln_stream_copy_to_buffer(S, B, 0, nullptr, 4),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_stream_copy_to_buffer: src is NULL but size is 4");
  EXPECT_EQ(kiln_stream_copy_from_buffer(S, nullptr, B, 0, 4),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_stream_copy_from_buffer: dst is NULL but size is 4");
  EXPECT_KILN_OK(kiln_stream_status(S));
  ASSERT_KILN_OK(kiln_stream_copy_from_buffer(S, Host, B, 4, 12));
  ASSERT_KILN_OK(kiln_stream_synchronize(S));
  EXPECT_EQ(Host[0], 2.0f);
  EXPECT_EQ(Host[2], 4.0f);
  EXPECT_KILN_OK(kiln_buffer_destroy(B));
}

TEST_F(CAPIStreamTest, ViewsAtOffsets) {
  // A pool holding a and b back to back, each 4 bytes past a 64-byte
  // boundary or worse; c a view 4 bytes into its own buffer, to its end.
  const uint32_t N = 300;
  std::vector<float> Pool(1 + N + 1 + N);
  for (size_t I = 0; I < Pool.size(); ++I)
    Pool[I] = float(I % 97) * 0.75f - 20.0f;
  kiln_buffer P = floatBuffer(Pool);
  kiln_buffer C = floatBuffer(std::vector<float>(N + 1, -7.0f));
  const uint64_t AOffset = 4, BOffset = 4 * (1 + N + 1);
  kiln_arg Args[4] = {
      kiln_arg_view(P, f32(), AOffset, N, KILN_ACCESS_READ),
      kiln_arg_view(P, f32(), BOffset, N, KILN_ACCESS_READ),
      kiln_arg_view(C, f32(), 4, KILN_WHOLE_BUFFER, KILN_ACCESS_WRITE),
      kiln_arg_u32(N)};
  ASSERT_KILN_OK(kiln_stream_launch(S, Vadd, dim((N + 63) / 64), Args, 4));
  ASSERT_KILN_OK(kiln_stream_synchronize(S));
  std::vector<float> Got = floatsOf(C);
  EXPECT_EQ(Got[0], -7.0f); // before the view: untouched
  for (uint32_t I = 0; I < N; ++I) {
    float Want = Pool[1 + I] + Pool[1 + N + 1 + I];
    ASSERT_EQ(Got[1 + I], Want) << "at " << I;
  }

  // The same views through the synchronous launch, into a second output at
  // an offset of 4 floats.
  kiln_buffer C2 = floatBuffer(std::vector<float>(N + 4, -7.0f));
  Args[2] = kiln_arg_view(C2, f32(), 16, N, KILN_ACCESS_WRITE);
  ASSERT_KILN_OK(kiln_device_launch(D, Vadd, dim((N + 63) / 64), Args, 4));
  std::vector<float> Got2 = floatsOf(C2);
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(Got2[4 + I], Got[1 + I]) << "at " << I;
  EXPECT_EQ(Got2[3], -7.0f);
  EXPECT_KILN_OK(kiln_buffer_destroy(C2));
  EXPECT_KILN_OK(kiln_buffer_destroy(C));
  EXPECT_KILN_OK(kiln_buffer_destroy(P));
}

TEST_F(CAPIStreamTest, EventWaitedOnByAnotherStream) {
  kiln_stream Other = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &Other));
  const uint32_t N = 1 << 16;
  kiln_buffer Y = floatBuffer(std::vector<float>(N, 0.0f));
  // S: 20 launches of y = y + 1, then an event.
  for (int I = 0; I < 20; ++I)
    ASSERT_KILN_OK(queueAffine(S, Y, N, 1.0f, 1.0f));
  kiln_event E = nullptr;
  ASSERT_KILN_OK(kiln_stream_record_event(S, &E));
  // Other: waits for it, then reads y and doubles it.
  std::vector<float> Seen(N, -1.0f);
  ASSERT_KILN_OK(kiln_stream_wait_event(Other, E));
  ASSERT_KILN_OK(kiln_stream_copy_from_buffer(Other, Seen.data(), Y, 0, N * 4));
  ASSERT_KILN_OK(queueAffine(Other, Y, N, 2.0f, 0.0f));
  ASSERT_KILN_OK(kiln_stream_synchronize(Other));
  for (uint32_t I = 0; I < N; I += 97)
    ASSERT_EQ(Seen[I], 20.0f) << "at " << I;
  std::vector<float> After = floatsOf(Y);
  for (uint32_t I = 0; I < N; I += 97)
    ASSERT_EQ(After[I], 40.0f) << "at " << I;
  EXPECT_KILN_OK(kiln_event_destroy(E));
  EXPECT_KILN_OK(kiln_buffer_destroy(Y));
  EXPECT_KILN_OK(kiln_stream_destroy(Other));
}

TEST_F(CAPIStreamTest, FailureIsStickyUntilReset) {
  kiln_stream Other = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &Other));
  kiln_buffer B = floatBuffer({1, 2, 3, 4});

  EXPECT_EQ(queueInvalidLaunch(S, B), KILN_ERROR_INVALID_LAUNCH);
  std::string Failure = kiln_last_error();
  EXPECT_NE(Failure.find("3 arguments given"), std::string::npos) << Failure;

  // The status says so, and keeps saying so.
  EXPECT_EQ(kiln_stream_status(S), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_EQ(kiln_last_error(), Failure);
  EXPECT_EQ(kiln_stream_status(S), KILN_ERROR_INVALID_LAUNCH);
  // Every later submission is refused with the failure; nothing runs.
  float Nine[4] = {9, 9, 9, 9};
  EXPECT_EQ(kiln_stream_copy_to_buffer(S, B, 0, Nine, 16),
            KILN_ERROR_INVALID_LAUNCH);
  EXPECT_EQ(kiln_last_error(), Failure);
  EXPECT_EQ(kiln_stream_copy_buffer(S, B, 0, B, 4, 4),
            KILN_ERROR_INVALID_LAUNCH);
  EXPECT_EQ(queueAffine(S, B, 4, 0.0f, 9.0f), KILN_ERROR_INVALID_LAUNCH);
  float Host[4] = {};
  EXPECT_EQ(kiln_stream_copy_from_buffer(S, Host, B, 0, 16),
            KILN_ERROR_INVALID_LAUNCH);
  // An event recorded now is complete at once, with the failure.
  kiln_event E = nullptr;
  ASSERT_KILN_OK(kiln_stream_record_event(S, &E));
  bool Complete = false;
  ASSERT_KILN_OK(kiln_event_query(E, &Complete));
  EXPECT_TRUE(Complete);
  EXPECT_EQ(kiln_event_synchronize(E), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_EQ(kiln_last_error(), Failure);
  EXPECT_EQ(kiln_stream_wait_event(S, E), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_EQ(kiln_stream_synchronize(S), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_EQ(kiln_last_error(), Failure);
  EXPECT_EQ(kiln_device_synchronize(D), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_EQ(kiln_last_error(), Failure);
  EXPECT_EQ(floatsOf(B), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Host[0], 0.0f);

  // Another stream is unaffected.
  ASSERT_KILN_OK(queueAffine(Other, B, 4, 1.0f, 1.0f));
  ASSERT_KILN_OK(kiln_stream_synchronize(Other));
  EXPECT_EQ(floatsOf(B), (std::vector<float>{2, 3, 4, 5}));

  // Reset: the failure it cleared, then the stream runs again.
  kiln_status Cleared = KILN_OK;
  ASSERT_KILN_OK(kiln_stream_reset_error(S, &Cleared));
  EXPECT_EQ(Cleared, KILN_ERROR_INVALID_LAUNCH);
  EXPECT_STREQ(kiln_last_error(), "");
  EXPECT_KILN_OK(kiln_stream_status(S));
  ASSERT_KILN_OK(kiln_stream_copy_to_buffer(S, B, 0, Nine, 16));
  ASSERT_KILN_OK(kiln_stream_synchronize(S));
  EXPECT_EQ(floatsOf(B), (std::vector<float>{9, 9, 9, 9}));
  EXPECT_KILN_OK(kiln_device_synchronize(D));
  // Nothing to clear now; out_cleared may be NULL.
  ASSERT_KILN_OK(kiln_stream_reset_error(S, &Cleared));
  EXPECT_EQ(Cleared, KILN_OK);
  ASSERT_KILN_OK(kiln_stream_reset_error(S, nullptr));

  EXPECT_KILN_OK(kiln_event_destroy(E));
  EXPECT_KILN_OK(kiln_buffer_destroy(B));
  EXPECT_KILN_OK(kiln_stream_destroy(Other));
}

TEST_F(CAPIStreamTest, FailureSkipsQueuedWork) {
  // A failed stream and an event recorded on it, complete with the failure.
  kiln_stream Failed = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &Failed));
  kiln_buffer B = floatBuffer({1, 2, 3, 4});
  ASSERT_EQ(queueInvalidLaunch(Failed, B), KILN_ERROR_INVALID_LAUNCH);
  kiln_event FailedEvent = nullptr;
  ASSERT_KILN_OK(kiln_stream_record_event(Failed, &FailedEvent));

  // S: a long launch, a wait on that event, then work queued behind it.
  kiln_buffer Data = floatBuffer({1.0f});
  kiln_buffer Dst = floatBuffer({0, 0, 0, 0});
  ASSERT_KILN_OK(queueSpin(S, Data));
  ASSERT_KILN_OK(kiln_stream_wait_event(S, FailedEvent));
  // Queued while the launch runs (and skipped), or refused if the wait has
  // already failed the stream: either way it never runs.
  float Seven[4] = {7, 7, 7, 7};
  kiln_status Copy = kiln_stream_copy_to_buffer(S, Dst, 0, Seven, 16);
  EXPECT_TRUE(Copy == KILN_OK || Copy == KILN_ERROR_CANCELLED)
      << kiln_status_name(Copy) << ": " << kiln_last_error();
  kiln_status Launch = queueAffine(S, Dst, 4, 1.0f, 100.0f);
  EXPECT_TRUE(Launch == KILN_OK || Launch == KILN_ERROR_CANCELLED)
      << kiln_status_name(Launch) << ": " << kiln_last_error();

  EXPECT_EQ(kiln_stream_synchronize(S), KILN_ERROR_CANCELLED);
  std::string Why = kiln_last_error();
  EXPECT_NE(Why.find("waited for an event of a failed stream"),
            std::string::npos)
      << Why;
  EXPECT_NE(Why.find("invalid launch"), std::string::npos) << Why;
  // The work before the wait ran; the work after it did not.
  EXPECT_EQ(floatsOf(Data)[0], SpinResult);
  EXPECT_EQ(floatsOf(Dst), (std::vector<float>{0, 0, 0, 0}));

  // Sticky until reset.
  EXPECT_EQ(kiln_stream_status(S), KILN_ERROR_CANCELLED);
  EXPECT_EQ(kiln_last_error(), Why);
  EXPECT_EQ(kiln_stream_copy_to_buffer(S, Dst, 0, Seven, 16),
            KILN_ERROR_CANCELLED);
  kiln_status Cleared = KILN_OK;
  ASSERT_KILN_OK(kiln_stream_reset_error(S, &Cleared));
  EXPECT_EQ(Cleared, KILN_ERROR_CANCELLED);
  ASSERT_KILN_OK(kiln_stream_copy_to_buffer(S, Dst, 0, Seven, 16));
  ASSERT_KILN_OK(kiln_stream_synchronize(S));
  EXPECT_EQ(floatsOf(Dst), (std::vector<float>{7, 7, 7, 7}));

  EXPECT_KILN_OK(kiln_event_destroy(FailedEvent));
  EXPECT_KILN_OK(kiln_stream_destroy(Failed));
  for (kiln_buffer Buf : {B, Data, Dst})
    EXPECT_KILN_OK(kiln_buffer_destroy(Buf));
}

TEST_F(CAPIStreamTest, DestroyDoesNotWait) {
  kiln_stream Short = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &Short));
  kiln_buffer Data = floatBuffer({1.0f});
  ASSERT_KILN_OK(queueSpin(Short, Data));
  kiln_event E = nullptr;
  ASSERT_KILN_OK(kiln_stream_record_event(Short, &E));
  auto T0 = Clock::now();
  ASSERT_KILN_OK(kiln_stream_destroy(Short));
  // Destroying the handle did not wait, and the work still runs.
  bool Done = true;
  ASSERT_KILN_OK(kiln_event_query(E, &Done));
  if (Clock::now() - T0 < std::chrono::milliseconds(5)) {
    EXPECT_FALSE(Done);
  }
  ASSERT_KILN_OK(kiln_event_synchronize(E));
  EXPECT_EQ(floatsOf(Data)[0], SpinResult);
  EXPECT_KILN_OK(kiln_event_destroy(E));
  EXPECT_KILN_OK(kiln_buffer_destroy(Data));
}

//===-- Events ------------------------------------------------------------===//

TEST_F(CAPIStreamTest, EventQueryNeverBlocks) {
  kiln_buffer Data = floatBuffer({1.0f});
  auto T0 = Clock::now();
  ASSERT_KILN_OK(queueSpin(S, Data));
  kiln_event E = nullptr;
  ASSERT_KILN_OK(kiln_stream_record_event(S, &E));
  bool Complete = true;
  ASSERT_KILN_OK(kiln_event_query(E, &Complete));
  // The launch takes far longer than this.
  if (Clock::now() - T0 < std::chrono::milliseconds(5)) {
    EXPECT_FALSE(Complete);
  }
  ASSERT_KILN_OK(kiln_event_synchronize(E));
  ASSERT_KILN_OK(kiln_event_query(E, &Complete));
  EXPECT_TRUE(Complete);
  EXPECT_EQ(floatsOf(Data)[0], SpinResult);
  EXPECT_EQ(kiln_event_query(E, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_event_query: out_complete is NULL");

  // An event on an empty stream is complete at once.
  kiln_event Empty = nullptr;
  ASSERT_KILN_OK(kiln_stream_record_event(S, &Empty));
  ASSERT_KILN_OK(kiln_event_synchronize(Empty));
  EXPECT_KILN_OK(kiln_event_destroy(Empty));
  EXPECT_KILN_OK(kiln_event_destroy(E));
  EXPECT_KILN_OK(kiln_buffer_destroy(Data));
}

TEST_F(CAPIStreamTest, DestroyedEventIsStillWaitedFor) {
  kiln_stream Other = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &Other));
  kiln_buffer Data = floatBuffer({1.0f});
  ASSERT_KILN_OK(queueSpin(S, Data));
  kiln_event E = nullptr;
  ASSERT_KILN_OK(kiln_stream_record_event(S, &E));
  ASSERT_KILN_OK(kiln_stream_wait_event(Other, E));
  ASSERT_KILN_OK(kiln_event_destroy(E)); // the wait keeps what it needs
  float Seen = 0;
  ASSERT_KILN_OK(kiln_stream_copy_from_buffer(Other, &Seen, Data, 0, 4));
  ASSERT_KILN_OK(kiln_stream_synchronize(Other));
  EXPECT_EQ(Seen, SpinResult);
  EXPECT_EQ(kiln_event_synchronize(E), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_event_synchronize: event handle was destroyed");
  EXPECT_KILN_OK(kiln_buffer_destroy(Data));
  EXPECT_KILN_OK(kiln_stream_destroy(Other));
}

TEST_F(CAPIStreamTest, LaunchOnDestroyedStream) {
  kiln_stream Gone = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &Gone));
  ASSERT_KILN_OK(kiln_stream_destroy(Gone));
  kiln_buffer Y = floatBuffer({1, 2});
  EXPECT_EQ(queueAffine(Gone, Y, 2, 1.0f, 1.0f), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(),
               "kiln_stream_launch: stream handle was destroyed");
  ASSERT_KILN_OK(kiln_device_synchronize(D));
  EXPECT_EQ(floatsOf(Y), (std::vector<float>{1, 2}));
  EXPECT_KILN_OK(kiln_buffer_destroy(Y));
}

} // namespace
