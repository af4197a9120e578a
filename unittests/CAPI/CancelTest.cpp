//===- CancelTest.cpp - kiln_stream_cancel, kiln_stream_set_launch_timeout ===//

#include "CAPITestSupport.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

using namespace kiln::capi::test;
using namespace std::chrono_literals;

namespace {

/// Never ends: every unit counts up in data[unit].
constexpr const char *ForeverText =
    R"(kernel @forever cube_dim(32) (%data: buffer<f32, read_write>) {
  %i = absolute_pos.x : u32
  loop {
    %v = load %data[%i] : f32
    %w = add %v, 1.0:f32 : f32
    store %data[%i], %w
  }
}
)";

struct CAPICancelTest : ::testing::Test {
  void SetUp() override {
    D = memoryDevice();
    Forever = loadKernel(D, ForeverText);
    Affine = loadKernel(D, AffineText);
    ASSERT_KILN_OK(kiln_stream_create(D, &S));
    ASSERT_KILN_OK(kiln_stream_create(D, &Other));
    Counters = floatBuffer(std::vector<float>(4 * 32, 0.0f));
  }
  void TearDown() override {
    EXPECT_KILN_OK(kiln_buffer_destroy(Counters));
    EXPECT_KILN_OK(kiln_stream_destroy(Other));
    EXPECT_KILN_OK(kiln_stream_destroy(S));
    EXPECT_KILN_OK(kiln_kernel_destroy(Affine));
    EXPECT_KILN_OK(kiln_kernel_destroy(Forever));
    EXPECT_KILN_OK(kiln_device_destroy(D));
  }
  kiln_status queueForever(kiln_stream Stream) {
    kiln_arg Arg = kiln_arg_buffer(Counters, f32(), KILN_ACCESS_READ_WRITE);
    return kiln_stream_launch(Stream, Forever, dim(4), &Arg, 1);
  }
  /// y = 2y + 1 on \p Stream over \p Y, which must then hold 2 * old + 1.
  void expectAffineWorks(kiln_stream Stream) {
    const uint32_t N = 1000;
    std::vector<float> In(N);
    for (uint32_t I = 0; I < N; ++I)
      In[I] = float(I);
    kiln_buffer Y = floatBuffer(In);
    kiln_arg Args[4] = {kiln_arg_buffer(Y, f32(), KILN_ACCESS_READ_WRITE),
                        kiln_arg_f32(2.0f), kiln_arg_f32(1.0f),
                        kiln_arg_u32(N)};
    EXPECT_KILN_OK(kiln_stream_launch(Stream, Affine, dim((N + 63) / 64),
                                      Args, 4));
    EXPECT_KILN_OK(kiln_stream_synchronize(Stream));
    std::vector<float> Out = floatsOf(Y);
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(Out[I], 2.0f * float(I) + 1.0f) << I;
    EXPECT_KILN_OK(kiln_buffer_destroy(Y));
  }

  kiln_device D = nullptr;
  kiln_kernel Forever = nullptr, Affine = nullptr;
  kiln_stream S = nullptr, Other = nullptr;
  kiln_buffer Counters = nullptr;
};

TEST_F(CAPICancelTest, CancelStopsAKernelThatNeverEnds) {
  ASSERT_KILN_OK(queueForever(S));
  std::this_thread::sleep_for(20ms);
  EXPECT_KILN_OK(kiln_stream_status(S));
  ASSERT_KILN_OK(kiln_stream_cancel(S));
  EXPECT_EQ(kiln_stream_synchronize(S), KILN_ERROR_CANCELLED);
  EXPECT_TRUE(lastErrorHas("the stream was cancelled"));
  // Some cube ran (which ones the threads took first is theirs to choose).
  std::vector<float> Counted = floatsOf(Counters);
  EXPECT_GT(*std::max_element(Counted.begin(), Counted.end()), 0.0f);
  expectAffineWorks(Other);
  kiln_status Cleared = KILN_OK;
  ASSERT_KILN_OK(kiln_stream_reset_error(S, &Cleared));
  EXPECT_EQ(Cleared, KILN_ERROR_CANCELLED);
  expectAffineWorks(S);
}

TEST_F(CAPICancelTest, ALaunchTimeoutStopsItAndNamesTheLimit) {
  ASSERT_KILN_OK(kiln_stream_set_launch_timeout(S, 25));
  ASSERT_KILN_OK(queueForever(S));
  EXPECT_EQ(kiln_stream_synchronize(S), KILN_ERROR_CANCELLED);
  EXPECT_TRUE(lastErrorHas("launch of kernel 'forever' was stopped at the "
                           "stream's launch timeout of 25 ms"));
  expectAffineWorks(Other);
  ASSERT_KILN_OK(kiln_stream_reset_error(S, nullptr));
  expectAffineWorks(S); // well within 25 ms
}

TEST_F(CAPICancelTest, BadArguments) {
  EXPECT_EQ(kiln_stream_cancel(nullptr), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("kiln_stream_cancel"));
  EXPECT_EQ(kiln_stream_set_launch_timeout(nullptr, 5),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_stream_set_launch_timeout(S, ~uint64_t(0)),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("2^40"));
  EXPECT_KILN_OK(kiln_stream_status(S));
}

} // namespace
