//===- DeviceLimitsTest.cpp - Kernels against the device's limits ---------===//

#include "Support/RawKernelBuilder.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace kiln;
using namespace kiln::test;
using testing::ElementsAre;
using testing::IsEmpty;

namespace {

using KB = RawKernelBuilder;

TEST(DeviceLimitsTest, UnitsPerCube) {
  KB B("k", 64);
  B.kernel().CubeDim = {64, 32, 1};
  B.kernel().CubeDimRank = 2;
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:1:1: error: cube_dim(64, 32, 1) has 2048 "
                          "units per cube; the device allows at most 1024"));
  DeviceLimits Big;
  Big.MaxUnitsPerCube = 4096;
  EXPECT_THAT(diagnose(B.kernel(), Big), IsEmpty());
}

TEST(DeviceLimitsTest, PerDimensionAndZero) {
  KB B;
  B.kernel().CubeDim = {1, 0, 65};
  B.kernel().CubeDimRank = 3;
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:1:1: error: cube_dim.y is 0; every "
                          "dimension must be at least 1",
                          "t.kiln:1:1: error: cube_dim.z = 65 exceeds the "
                          "device limit of 64"));
}

TEST(DeviceLimitsTest, PlaneDimRequest) {
  KB B;
  B.kernel().PlaneDim = 16;
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:1:1: error: plane_dim(16) requested but "
                          "the device runs planes of 32 units"));
  DeviceLimits Sixteen;
  Sixteen.PlaneDim = 16;
  EXPECT_THAT(diagnose(B.kernel(), Sixteen), IsEmpty());
}

TEST(DeviceLimitsTest, SharedMemory) {
  KB B;
  B.array(OpKind::Shared, "a", F32, 8192);                            // 32 KiB
  B.array(OpKind::Shared, "b", Type::line(ScalarKind::F32, 4), 2048); // 64 KiB
  // Exactly the limit is fine; one more element is not.
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
  B.array(OpKind::Shared, "c", F32, 1);
  B.array(OpKind::Shared, "d", F32, 1);
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:4:3: error: shared memory reaches 65540 "
                          "bytes with %c; the device allows at most 65536 "
                          "bytes per cube"));
}

TEST(DeviceLimitsTest, SharedMemoryLimitSetByHand) {
  KB B;
  B.array(OpKind::Shared, "a", F32, 16);
  DeviceLimits L;
  L.MaxSharedBytes = 64;
  EXPECT_THAT(diagnose(B.kernel(), L), IsEmpty());
  L.MaxSharedBytes = 63;
  EXPECT_THAT(diagnose(B.kernel(), L),
              ElementsAre("t.kiln:2:3: error: shared memory reaches 64 bytes "
                          "with %a; the device allows at most 63 bytes per "
                          "cube"));
}

TEST(DeviceLimitsTest, HugeArraysDoNotOverflow) {
  KB B;
  B.array(OpKind::Shared, "a", Type::line(ScalarKind::F64, 16),
          uint64_t(1) << 62);
  B.array(OpKind::LocalArray, "l", F64, ~uint64_t(0));
  std::vector<std::string> D = diagnose(B.kernel());
  ASSERT_EQ(D.size(), 2u);
  EXPECT_EQ(D[0], "t.kiln:2:3: error: shared memory reaches "
                  "18446744073709551615 bytes with %a; the device allows at "
                  "most 65536 bytes per cube");
  EXPECT_EQ(D[1], "t.kiln:3:3: error: per-unit memory (vars and local "
                  "arrays) reaches 18446744073709551615 bytes with %l; the "
                  "device allows at most 65536 bytes per unit");
}

TEST(DeviceLimitsTest, LocalMemoryPerUnit) {
  KB B;
  B.var("v", Type::scalar(ScalarKind::F64));
  B.array(OpKind::LocalArray, "l", F32, 4);
  DeviceLimits L;
  L.MaxLocalBytesPerUnit = 23;
  EXPECT_THAT(diagnose(B.kernel(), L),
              ElementsAre("t.kiln:3:3: error: per-unit memory (vars and "
                          "local arrays) reaches 24 bytes with %l; the device "
                          "allows at most 23 bytes per unit"));
}

TEST(DeviceLimitsTest, EmptyArrays) {
  KB B;
  B.array(OpKind::Shared, "s", F32, 0);
  B.array(OpKind::LocalArray, "l", F32, 0);
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:2:3: error: shared %s has 0 elements; "
                          "arrays need at least one",
                          "t.kiln:3:3: error: local_array %l has 0 elements; "
                          "arrays need at least one"));
}

TEST(DeviceLimitsTest, UnsupportedElementTypes) {
  KB B;
  B.param("p", F64);
  ValueId X = B.param("x", F32);
  B.op(OpKind::Cast, Type::scalar(ScalarKind::F16), {KB::v(X)});
  B.var("h", Type::line(ScalarKind::F16, 2));
  B.op(OpKind::Add, F32, {KB::v(X), KB::lit(F32, 0)});
  DeviceLimits L;
  L.SupportsType[unsigned(ScalarKind::F64)] = false;
  L.SupportsType[unsigned(ScalarKind::F16)] = false;
  EXPECT_THAT(
      diagnose(B.kernel(), L),
      ElementsAre("t.kiln:1:10: error: parameter %p has element type 'f64', "
                  "which the device does not support",
                  "t.kiln:2:3: error: result %v2 of cast has element type "
                  "'f16', which the device does not support",
                  "t.kiln:3:3: error: var %h has element type 'f16', which "
                  "the device does not support"));
}

TEST(DeviceLimitsTest, InvalidLineWidth) {
  KB B;
  B.param("p", Type::line(ScalarKind::F32, 5));
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:1:10: error: parameter %p has a line of 5 "
                          "lanes; lines have 1, 2, 3, 4, 8 or 16"));
}

} // namespace
