//===- LivenessTest.cpp - Values across segments, remat, scratch layout ---===//
//
// SegmentLiveness.h, Rematerialization.h and ScratchLayout.h alone.
//
//===----------------------------------------------------------------------===//

#include "PassTestUtil.h"
#include "Rematerialization.h"
#include "ScratchLayout.h"
#include "SegmentLiveness.h"
#include "Segmentation.h"

#include "kiln/IR/Uniformity.h"

using namespace kiln;
using namespace kiln::lowering;
using namespace kiln::test;

namespace {

const char *TwoSegments = R"(
kernel @k cube_dim(16) (%b: buffer<f32, read_write>, %n: u32) {
  %t = shared f32[16]
  %l = local_array u32[3]
  %v1 = var f32
  %v2 = var u32
  %u = unit_pos : u32
  %i = add %u, %n : u32
  %j = mul %i, 2:u32 : u32
  %f = load %b[%u] : f32
  %g = add %f, 1.0:f32 : f32
  set %v1, %g
  set %v2, %j
  %w = get %v2 : u32
  store %l[0:u32], %w
  sync_cube
  %h = add %f, %g : f32
  %r = get %v1 : f32
  store %b[%j], %h
  store %t[%u], %r
  %p = plane_sum %f : f32
}
)";

struct Analyzed {
  Module M;
  const IRKernel &K;
  UniformityInfo U;
  Segmentation S;
  Liveness L;
  explicit Analyzed(const char *Text)
      : M(parseVerified(Text)), K(M.Kernels.at(0)), U(K), S(K, U, 32),
        L(analyzeLiveness(K, S)) {}
  const ValuePlan &plan(const char *Name) { return L[valueNamed(K, Name)]; }
};

TEST(LivenessTest, ValuesUsedAcrossABarrierAreKeptOrRecomputed) {
  Analyzed A(TwoSegments);
  EXPECT_EQ(A.L.Segments, 2u);
  EXPECT_EQ(A.plan("f").DefSeg, 0);
  EXPECT_TRUE(A.plan("f").NeedsSlot); // a load, used after the barrier
  EXPECT_TRUE(A.plan("g").NeedsSlot); // a float, never recomputed
  EXPECT_FALSE(A.plan("h").NeedsSlot); // used in its own segment only
  EXPECT_EQ(A.plan("h").DefSeg, 1);
  // Builtins and short integer chains over them are recomputed.
  EXPECT_FALSE(A.plan("u").NeedsSlot);
  EXPECT_NE(A.plan("u").Remat, nullptr);
  EXPECT_EQ(A.plan("j").RematDepth, 2);
  EXPECT_FALSE(A.plan("j").NeedsSlot);
  // A plane result is computed at cube level into a per-unit slot.
  EXPECT_EQ(A.plan("p").DefSeg, CubeSegment);
  EXPECT_TRUE(A.plan("p").NeedsSlot);
  // Vars: used in both segments, or in one.
  EXPECT_TRUE(A.plan("v1").MultiSegment);
  EXPECT_FALSE(A.plan("v2").MultiSegment);
}

TEST(LivenessTest, RematDepthCountsTheChain) {
  Analyzed A(TwoSegments);
  auto Cost = [&](const char *Name) {
    return rematCost(*opDefining(A.K, Name), A.K, A.L.Values);
  };
  ASSERT_TRUE(Cost("u") && Cost("i") && Cost("j"));
  EXPECT_EQ(Cost("u")->Depth, 0u);
  EXPECT_FALSE(Cost("u")->Uniform); // unit_pos
  EXPECT_EQ(Cost("i")->Depth, 1u); // over a parameter
  EXPECT_EQ(Cost("j")->Depth, 2u);
  EXPECT_EQ(Cost("j")->VaryingDepth, 2u);
  EXPECT_FALSE(Cost("f")); // memory
  EXPECT_FALSE(Cost("g")); // float
  EXPECT_FALSE(Cost("w")); // a var's value
}

// A long chain over cube-uniform inputs is recomputed where it is used (LLVM
// hoists it out of the unit loop); only its unit-varying tail counts
// against MaxRematDepth. A chain of five unit-varying operations is kept.
const char *UniformChain = R"(
kernel @k cube_dim(16) (%b: buffer<u32, read_write>, %n: u32) {
  %c = cube_pos.x : u32
  %a1 = mul %c, 16:u32 : u32
  %a2 = sub %a1, %n : u32
  %a3 = add %a2, 3:u32 : u32
  %a4 = mul %a3, %n : u32
  %a5 = bxor %a4, 7:u32 : u32
  %a6 = add %a5, 1:u32 : u32
  %u = unit_pos.x : u32
  %x = add %a6, %u : u32
  %y1 = mul %u, 3:u32 : u32
  %y2 = add %y1, 1:u32 : u32
  %y3 = bxor %y2, 5:u32 : u32
  %y4 = mul %y3, 3:u32 : u32
  %y5 = add %y4, 1:u32 : u32
  sync_cube
  store %b[%x], %a6
  store %b[%u], %y5
}
)";

TEST(LivenessTest, UniformChainsAreRecomputedAtAnyDepth) {
  Analyzed A(UniformChain);
  EXPECT_FALSE(A.plan("a6").NeedsSlot);
  EXPECT_TRUE(A.plan("a6").RematUniform);
  EXPECT_EQ(A.plan("a6").RematDepth, 6);
  EXPECT_EQ(A.plan("a6").RematVaryingDepth, 0);
  EXPECT_FALSE(A.plan("x").NeedsSlot);
  EXPECT_FALSE(A.plan("x").RematUniform);
  EXPECT_EQ(A.plan("x").RematVaryingDepth, 1);
  EXPECT_EQ(A.plan("y4").RematVaryingDepth, 4);
  EXPECT_EQ(A.plan("y5").Remat, nullptr);
  EXPECT_TRUE(A.plan("y5").NeedsSlot);
}

TEST(LivenessTest, ScratchLayout) {
  Analyzed A(TwoSegments);
  auto L = layoutScratch(A.K, 16, 32, /*ReturnFlags=*/true, A.L);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  auto At = [&](const char *Name) { return L->Of[valueNamed(A.K, Name)]; };
  EXPECT_TRUE(L->HasFlags);
  EXPECT_EQ(L->FlagsOffset, 0u);
  EXPECT_EQ(At("t").Storage, StorageKind::ScratchCube);
  EXPECT_EQ(At("l").Storage, StorageKind::ScratchUnit);
  EXPECT_EQ(At("v1").Storage, StorageKind::ScratchUnit);
  EXPECT_EQ(At("v2").Storage, StorageKind::Alloca);
  EXPECT_FALSE(L->inScratch(valueNamed(A.K, "v2")));
  // Flags (16 B), shared (64 B), local (16*12 B), v1, slots of f, g, p.
  uint64_t Expected[] = {64, 128, 320, 384, 448, 512};
  const char *Order[] = {"t", "l", "v1", "f", "g", "p"};
  for (int I = 0; I < 6; ++I)
    EXPECT_EQ(At(Order[I]).Offset, Expected[I]) << Order[I];
  EXPECT_EQ(L->Bytes, 576u);
  EXPECT_EQ(L->Bytes % 64, 0u);
}

TEST(LivenessTest, ScratchAbove4GiBIsAnError) {
  Analyzed A(TwoSegments);
  // 2^31 units: the local array alone takes 24 GiB.
  auto L = layoutScratch(A.K, 1u << 31, 32, false, A.L);
  ASSERT_FALSE(bool(L));
  EXPECT_NE(llvm::toString(L.takeError()).find("larger than 4 GiB"),
            std::string::npos);
}

} // namespace
