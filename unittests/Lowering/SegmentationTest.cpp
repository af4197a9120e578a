//===- SegmentationTest.cpp - Splits, interchanged fors, return flags -----===//
//
// Segmentation.h and LoopInterchange.h alone, on verified kernels.
//
//===----------------------------------------------------------------------===//

#include "LoopInterchange.h"
#include "PassTestUtil.h"
#include "Segmentation.h"

#include "kiln/IR/Uniformity.h"

using namespace kiln;
using namespace kiln::lowering;
using namespace kiln::test;

namespace {

TEST(SegmentationTest, BarriersPlaneOpsAndConstructsHoldingThemSplit) {
  Module M = parseVerified(R"(
kernel @k cube_dim(64) (%n: u32) {
  %u = unit_pos : u32
  %c = lt %n, 4:u32 : bool
  if %c {
    sync_cube
  }
  %d = lt %u, 4:u32 : bool
  if %d {
    %x = add %u, 1:u32 : u32
  }
  %s = plane_sum %u : u32
}
)");
  const IRKernel &K = M.Kernels.at(0);
  UniformityInfo U(K);
  Segmentation S(K, U, 32);
  EXPECT_TRUE(S.isSplit(*nthOp(K, OpKind::If, 0)));
  EXPECT_TRUE(S.isSplit(*nthOp(K, OpKind::SyncCube)));
  EXPECT_FALSE(S.isSplit(*nthOp(K, OpKind::If, 1)));
  EXPECT_TRUE(S.isSplit(*opDefining(K, "s")));
  EXPECT_FALSE(S.isSplit(*opDefining(K, "u")));
  EXPECT_FALSE(S.kernelReturns());
  EXPECT_FALSE(S.needsReturnFlags());
}

TEST(SegmentationTest, ReturnFlagsOnlyWithASplit) {
  const char *WithBarrier = R"(
kernel @k cube_dim(4) () {
  %u = unit_pos : u32
  %d = lt %u, 2:u32 : bool
  if %d {
    return
  }
  sync_cube
}
)";
  Module M = parseVerified(WithBarrier);
  UniformityInfo U(M.Kernels.at(0));
  Segmentation S(M.Kernels.at(0), U, 32);
  EXPECT_TRUE(S.kernelReturns());
  EXPECT_TRUE(S.needsReturnFlags());

  Module N = parseVerified(R"(
kernel @k cube_dim(4) () {
  %u = unit_pos : u32
  %d = lt %u, 2:u32 : bool
  if %d {
    return
  }
}
)");
  UniformityInfo UN(N.Kernels.at(0));
  Segmentation SN(N.Kernels.at(0), UN, 32);
  EXPECT_TRUE(SN.kernelReturns());
  EXPECT_FALSE(SN.needsReturnFlags());
}

/// `for %i = LO to HI step 4` in a kernel of 32 units.
std::string forKernel(const char *Lo, const char *Hi, const char *Extra = "") {
  return std::string(R"(
kernel @k cube_dim(32) (%n: u32, %b: buffer<u32, read>) {
  %u = unit_pos : u32
  %m = load %b[0:u32] : u32
  %v = load %b[%u] : u32
  for %i = )") + Lo + " to " + Hi + R"( step 4:u32 {
    %x = add %i, 1:u32 : u32
)" + Extra + R"(  }
}
)";
}

bool interchanged(const std::string &Text) {
  Module M = parseVerified(Text);
  const IRKernel &K = M.Kernels.at(0);
  UniformityInfo U(K);
  Segmentation S(K, U, 32);
  const Operation *For = nthOp(K, OpKind::For);
  bool ByUpper = S.roundsByUpperBound(*For) != nullptr;
  EXPECT_EQ(isInterchangeable(*For, U, S.kernelReturns()),
            S.isInterchanged(*For) && !ByUpper);
  if (!isUpperBoundInterchangeable(*For, U, S.kernelReturns())) {
    EXPECT_FALSE(ByUpper);
  }
  return S.isInterchanged(*For);
}

bool byUpperBound(const std::string &Text) {
  Module M = parseVerified(Text);
  const IRKernel &K = M.Kernels.at(0);
  UniformityInfo U(K);
  Segmentation S(K, U, 32);
  return S.roundsByUpperBound(*nthOp(K, OpKind::For)) != nullptr;
}

TEST(SegmentationTest, InterchangeNeedsOneDivergentBound) {
  EXPECT_TRUE(interchanged(forKernel("%u", "%n")));
  // A load at a uniform index is uniform (the shared analysis).
  EXPECT_TRUE(interchanged(forKernel("%u", "%m")));
  EXPECT_TRUE(interchanged(forKernel("%v", "%n")));
  EXPECT_FALSE(byUpperBound(forKernel("%u", "%n")));
  // A uniform lower bound with `unit + c` as the upper one runs as rounds
  // by the upper bound; one with another per-unit upper bound (a load at
  // the unit's index) stays per unit.
  EXPECT_TRUE(interchanged(forKernel("%n", "%u")));
  EXPECT_TRUE(byUpperBound(forKernel("%n", "%u")));
  EXPECT_FALSE(interchanged(forKernel("%n", "%v")));
  EXPECT_FALSE(interchanged(forKernel("%m", "%n")));
  EXPECT_FALSE(interchanged(forKernel("%u", "%v")));
  EXPECT_FALSE(interchanged(forKernel("%u", "%n", "    break\n")));
  EXPECT_FALSE(interchanged(forKernel("%n", "%u", "    break\n")));
}

TEST(SegmentationTest, NoInterchangeInAKernelThatReturns) {
  std::string T = forKernel("%u", "%n");
  T.insert(T.rfind('}'), "  return\n");
  EXPECT_FALSE(interchanged(T));
}

} // namespace
