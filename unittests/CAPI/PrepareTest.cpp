//===- PrepareTest.cpp - kiln_kernel_prepare and the device counters ------===//

#include "CAPITestSupport.h"

#include <gtest/gtest.h>

using namespace kiln::capi::test;

namespace {

kiln_device_counters countersOf(kiln_device D) {
  kiln_device_counters C;
  std::memset(&C, 0xff, sizeof(C));
  EXPECT_KILN_OK(kiln_device_get_counters(D, &C));
  return C;
}

TEST(CAPIPrepareTest, LaunchesAfterPrepareNeverCompile) {
  kiln_device D = memoryDevice();
  kiln_kernel K = loadKernel(D, VaddText);
  EXPECT_EQ(countersOf(D).compiled, 1u);
  ASSERT_KILN_OK(kiln_kernel_prepare(K, KILN_PREPARE_ALL));
  kiln_device_counters C = countersOf(D);
  EXPECT_EQ(C.compiled, 4u);
  EXPECT_EQ(C.launch_links, 0u);

  const uint32_t N = 500;
  std::vector<float> Init(2 * N + 16);
  for (size_t I = 0; I < Init.size(); ++I)
    Init[I] = float(I % 13);
  kiln_buffer Pool = floatBuffer(Init);
  kiln_stream S = nullptr;
  ASSERT_KILN_OK(kiln_stream_create(D, &S));
  // Unaligned: one element in, c apart from a and b.
  kiln_arg Unaligned[4] = {
      kiln_arg_view(Pool, f32(), 4, N, KILN_ACCESS_READ),
      kiln_arg_view(Pool, f32(), 4, N, KILN_ACCESS_READ),
      kiln_arg_view(Pool, f32(), 4 + 4 * N, N, KILN_ACCESS_WRITE),
      kiln_arg_u32(N)};
  ASSERT_KILN_OK(kiln_stream_launch(S, K, dim((N + 63) / 64), Unaligned, 4));
  // In place, aligned: a = a + a.
  kiln_arg InPlace[4] = {
      kiln_arg_view(Pool, f32(), 0, N, KILN_ACCESS_READ),
      kiln_arg_view(Pool, f32(), 0, N, KILN_ACCESS_READ),
      kiln_arg_view(Pool, f32(), 0, N, KILN_ACCESS_READ_WRITE),
      kiln_arg_u32(N)};
  ASSERT_KILN_OK(kiln_stream_launch(S, K, dim((N + 63) / 64), InPlace, 4));
  ASSERT_KILN_OK(kiln_stream_synchronize(S));
  std::vector<float> Out = floatsOf(Pool);
  for (uint32_t I = 0; I < N; ++I) {
    ASSERT_EQ(Out[I], 2 * Init[I]) << "in place, at " << I;
    ASSERT_EQ(Out[1 + N + I], 2 * Init[1 + I]) << "unaligned, at " << I;
  }
  C = countersOf(D);
  EXPECT_EQ(C.launch_links, 0u);
  EXPECT_EQ(C.launch_compiles, 0u);
  EXPECT_EQ(C.compiled, 4u);

  EXPECT_KILN_OK(kiln_stream_destroy(S));
  EXPECT_KILN_OK(kiln_buffer_destroy(Pool));
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIPrepareTest, FlagsNameTheVariants) {
  kiln_device D = memoryDevice();
  kiln_kernel K = loadKernel(D, VaddText);
  ASSERT_KILN_OK(kiln_kernel_prepare(K, 0));
  EXPECT_EQ(countersOf(D).compiled, 1u);
  ASSERT_KILN_OK(kiln_kernel_prepare(K, KILN_PREPARE_MAY_ALIAS));
  EXPECT_EQ(countersOf(D).compiled, 2u);
  ASSERT_KILN_OK(kiln_kernel_prepare(K, KILN_PREPARE_UNALIGNED));
  EXPECT_EQ(countersOf(D).compiled, 3u);
  // Both: the one for unaligned and overlapping views is left.
  ASSERT_KILN_OK(kiln_kernel_prepare(K, KILN_PREPARE_ALL));
  EXPECT_EQ(countersOf(D).compiled, 4u);
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
  EXPECT_KILN_OK(kiln_device_destroy(D));
}

TEST(CAPIPrepareTest, Misuse) {
  EXPECT_EQ(kiln_kernel_prepare(nullptr, KILN_PREPARE_ALL),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(kiln_last_error(), "kiln_kernel_prepare: kernel is NULL");
  kiln_device D = memoryDevice();
  kiln_kernel K = loadKernel(D, VaddText);
  EXPECT_EQ(kiln_kernel_prepare(K, 4), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_last_error()).find("kiln_prepare_flags"),
            std::string::npos)
      << kiln_last_error();
  EXPECT_EQ(countersOf(D).compiled, 1u);
  EXPECT_EQ(kiln_device_get_counters(D, nullptr), KILN_ERROR_INVALID_ARGUMENT);
  kiln_device_counters C;
  EXPECT_EQ(kiln_device_get_counters(nullptr, &C),
            KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_KILN_OK(kiln_device_destroy(D));
  // The device is gone: nothing more can be compiled.
  EXPECT_EQ(kiln_kernel_prepare(K, KILN_PREPARE_ALL), KILN_ERROR_CANCELLED);
  EXPECT_KILN_OK(kiln_kernel_destroy(K));
}

} // namespace
