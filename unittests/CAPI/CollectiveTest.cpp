//===- CollectiveTest.cpp - kiln_all_reduce -------------------------------===//

#include "CAPITestSupport.h"

#include <vector>

using namespace kiln::capi::test;

namespace {

struct CAPICollectiveTest : ::testing::Test {
  static constexpr unsigned N = 3;
  kiln_device D[N] = {};
  kiln_stream S[N] = {};
  kiln_buffer B[N] = {};
  void SetUp() override {
    for (unsigned I = 0; I < N; ++I) {
      D[I] = memoryDevice();
      ASSERT_KILN_OK(kiln_stream_create(D[I], &S[I]));
      // 5 elements: not a multiple of the 3 devices.
      B[I] = floatBuffer({float(I), 1.0f, -float(I), 10.0f * float(I), 0.5f});
    }
  }
  void TearDown() override {
    for (unsigned I = 0; I < N; ++I) {
      EXPECT_KILN_OK(kiln_buffer_destroy(B[I]));
      EXPECT_KILN_OK(kiln_stream_destroy(S[I]));
      EXPECT_KILN_OK(kiln_device_destroy(D[I]));
    }
  }
  kiln_collective_member member(unsigned I) {
    kiln_collective_member M;
    M.stream = S[I];
    M.view = kiln_arg_buffer(B[I], f32(), KILN_ACCESS_READ_WRITE).view;
    return M;
  }
};

TEST_F(CAPICollectiveTest, SumMaxMinAcrossThreeDevices) {
  kiln_collective_member M[N] = {member(0), member(1), member(2)};
  ASSERT_KILN_OK(kiln_all_reduce(M, N, KILN_REDUCE_SUM));
  for (unsigned I = 0; I < N; ++I)
    ASSERT_KILN_OK(kiln_stream_synchronize(S[I]));
  for (unsigned I = 0; I < N; ++I)
    EXPECT_EQ(floatsOf(B[I]),
              (std::vector<float>{3.0f, 3.0f, -3.0f, 30.0f, 1.5f}));
  ASSERT_KILN_OK(kiln_all_reduce(M, N, KILN_REDUCE_MAX)); // all equal now
  kiln_collective_member Two[2] = {member(0), member(1)};
  float *Data = nullptr;
  ASSERT_KILN_OK(kiln_buffer_data(B[1], reinterpret_cast<void **>(&Data)));
  for (unsigned I = 0; I < N; ++I)
    ASSERT_KILN_OK(kiln_stream_synchronize(S[I]));
  Data[0] = -7.0f;
  ASSERT_KILN_OK(kiln_all_reduce(Two, 2, KILN_REDUCE_MIN));
  ASSERT_KILN_OK(kiln_stream_synchronize(S[0]));
  ASSERT_KILN_OK(kiln_stream_synchronize(S[1]));
  EXPECT_EQ(floatsOf(B[0])[0], -7.0f);
  EXPECT_EQ(floatsOf(B[2])[0], 3.0f); // not a member
}

TEST_F(CAPICollectiveTest, BadCallsAreRefused) {
  EXPECT_EQ(kiln_all_reduce(nullptr, 2, KILN_REDUCE_SUM),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("members is NULL but member_count is 2"));
  EXPECT_EQ(kiln_all_reduce(nullptr, 0, KILN_REDUCE_SUM),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("no member"));
  kiln_collective_member M[2] = {member(0), member(1)};
  // An op no enumerator has is refused too: HeaderC99.c passes one from C,
  // where any int is a valid enum value (here, passing one by value would be
  // undefined behaviour in the test itself).
  M[1].view.access = KILN_ACCESS_READ;
  EXPECT_EQ(kiln_all_reduce(M, 2, KILN_REDUCE_SUM),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("members[1].view.access must be "
                           "KILN_ACCESS_READ_WRITE"));
  M[1] = member(1);
  M[1].stream = nullptr;
  EXPECT_EQ(kiln_all_reduce(M, 2, KILN_REDUCE_SUM),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("members[1].stream is NULL"));
  M[1] = member(0); // the same device, and the same buffer
  EXPECT_EQ(kiln_all_reduce(M, 2, KILN_REDUCE_SUM),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("a device takes part once"));
  M[1] = member(1);
  M[1].view.count = 4;
  EXPECT_EQ(kiln_all_reduce(M, 2, KILN_REDUCE_SUM),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("counts must match"));
  // Nothing ran.
  for (unsigned I = 0; I < N; ++I)
    ASSERT_KILN_OK(kiln_stream_synchronize(S[I]));
  EXPECT_EQ(floatsOf(B[1])[0], 1.0f);
}

} // namespace
