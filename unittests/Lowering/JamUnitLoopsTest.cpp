//===- JamUnitLoopsTest.cpp - Several units per iteration, interleaved ----===//
//
// JamUnitLoopsPass alone on hand-written loops: which loops it jams (a
// parallel unit loop whose body is a long floating-point chain) and which it
// leaves (a store that reaches the next unit's slot, a short chain, a loop
// not declared parallel, a trip count no factor divides, FMAs that are libm
// calls). The end-to-end
// checks are test/CodeGen/jam-unit-loops.kiln and the bit-exact
// matmul_fma16 of test/Conformance/matmul.kiln.
//
//===----------------------------------------------------------------------===//

#include "JamUnitLoops.h"

#include "FunctionPassTestUtil.h"

#include "kiln/CPU/CodeGen.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"

#include "gtest/gtest.h"

#include <string>

using namespace kiln;
using namespace llvm;

namespace {

/// A unit loop of \p Trips units: each loads its accumulator from
/// %acc + unit * 64 (no access group, as after optimisation), runs a chain
/// of \p Chain FMAs with one broadcast of %a[unit] (in the group) and
/// stores the result at %acc + (unit + \p StoreAhead) * 64. \p Parallel:
/// the loop ID declares the group parallel.
std::string unitLoop(unsigned Trips, unsigned Chain, unsigned StoreAhead,
                     bool Parallel) {
  std::string IR = R"(
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
define void @f(ptr noalias %acc, ptr noalias %a, ptr noalias %b) {
entry:
  %bv = load <16 x float>, ptr %b, align 64
  br label %loop
loop:
  %iv = phi i64 [ 0, %entry ], [ %next, %loop ]
  %off = shl i64 %iv, 6
  %p = getelementptr inbounds i8, ptr %acc, i64 %off
  %x = load <16 x float>, ptr %p, align 64
  %pa = getelementptr inbounds float, ptr %a, i64 %iv
  %s = load float, ptr %pa, align 4, !llvm.access.group !2
  %ins = insertelement <16 x float> poison, float %s, i64 0
  %splat = shufflevector <16 x float> %ins, <16 x float> poison, <16 x i32> zeroinitializer
  %f0 = call <16 x float> @llvm.fma.v16f32(<16 x float> %splat, <16 x float> %bv, <16 x float> %x)
)";
  for (unsigned I = 1; I < Chain; ++I)
    IR += "  %f" + std::to_string(I) +
          " = call <16 x float> @llvm.fma.v16f32(<16 x float> %splat, <16 x "
          "float> %bv, <16 x float> %f" +
          std::to_string(I - 1) + ")\n";
  IR += "  %ahead = add i64 %iv, " + std::to_string(StoreAhead) + "\n";
  IR += R"(  %offs = shl i64 %ahead, 6
  %q = getelementptr inbounds i8, ptr %acc, i64 %offs
  store <16 x float> %f)" +
        std::to_string(Chain - 1) + R"(, ptr %q, align 64
  %next = add nuw nsw i64 %iv, 1
  %done = icmp eq i64 %next, )" +
        std::to_string(Trips) + R"(
  br i1 %done, label %exit, label %loop, !llvm.loop !0
exit:
  ret void
}
)";
  IR += Parallel ? "!0 = distinct !{!0, !1}\n" : "!0 = distinct !{!0}\n";
  IR += "!1 = !{!\"llvm.loop.parallel_accesses\", !2}\n!2 = distinct !{}\n";
  return IR;
}

/// The end of a loop counted by %iv that exits after unit \p End - 1: its
/// latch, the exit block, and the loop ID (!0) declaring access group !2
/// parallel.
std::string parallelLatch(unsigned End) {
  return "  %next = add nuw nsw i64 %iv, 1\n  %done = icmp eq i64 %next, " +
         std::to_string(End) + R"(
  br i1 %done, label %exit, label %loop, !llvm.loop !0
exit:
  ret void
}
!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.parallel_accesses", !2}
!2 = distinct !{}
)";
}

/// A unit loop of 16 units with \p Chains independent 16-deep FMA chains a
/// unit, all reading \p Held vectors loaded before the loop (as LICM leaves
/// a tile's rows of B), chain C's k-th FMA the vector (C + k) % Held.
std::string heldLoop(unsigned Chains, unsigned Held) {
  auto N = [](unsigned V) { return std::to_string(V); };
  std::string IR = R"(
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
define void @f(ptr noalias %acc, ptr noalias %a, ptr noalias %b) {
entry:
)";
  for (unsigned H = 0; H < Held; ++H)
    IR += "  %pb" + N(H) + " = getelementptr inbounds i8, ptr %b, i64 " +
          N(64 * H) + "\n  %bv" + N(H) + " = load <16 x float>, ptr %pb" +
          N(H) + ", align 64\n";
  IR += R"(  br label %loop
loop:
  %iv = phi i64 [ 0, %entry ], [ %next, %loop ]
  %pa = getelementptr inbounds float, ptr %a, i64 %iv
  %s = load float, ptr %pa, align 4, !llvm.access.group !2
  %ins = insertelement <16 x float> poison, float %s, i64 0
  %splat = shufflevector <16 x float> %ins, <16 x float> poison, <16 x i32> zeroinitializer
)";
  // Unit iv's chain C ends in %acc[iv * Chains + C].
  IR += "  %slot = mul i64 %iv, " + N(Chains) + "\n";
  for (unsigned C = 0; C < Chains; ++C) {
    std::string Prev = "zeroinitializer";
    for (unsigned K = 0; K < 16; ++K) {
      std::string Name = "%c" + N(C) + "k" + N(K);
      IR += "  " + Name +
            " = call <16 x float> @llvm.fma.v16f32(<16 x float> %splat, "
            "<16 x float> %bv" +
            N((C + K) % Held) + ", <16 x float> " + Prev + ")\n";
      Prev = Name;
    }
    IR += "  %slot" + N(C) + " = add i64 %slot, " + N(C) + "\n  %q" + N(C) +
          " = getelementptr inbounds <16 x float>, ptr %acc, i64 %slot" +
          N(C) + "\n  store <16 x float> " + Prev + ", ptr %q" + N(C) +
          ", align 64, !llvm.access.group !2\n";
  }
  return IR + parallelLatch(16);
}

/// \p IR after JamUnitLoopsPass, compiled for \p CPU.
std::string jammed(const std::string &IR, const char *CPU) {
  return test::runOnParsedIR(IR, JamUnitLoopsPass(), CPU);
}

TEST(JamUnitLoops, JamsAParallelLoopWithALongChain) {
  // 512-bit code: the invariant %bv and 8 units' accumulators fit 32
  // registers, so 8 units run per iteration.
  std::string Out = jammed(unitLoop(16, 16, 0, true), "sapphirerapids");
  EXPECT_NE(Out.find("%iv.jam7 = add nuw nsw i64 %iv, 7"), std::string::npos)
      << Out;
  EXPECT_NE(Out.find("phi i64 [ 0, %entry ], [ %next.jam7, %loop ]"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("icmp eq i64 %next.jam7, 16"), std::string::npos) << Out;
  EXPECT_EQ(test::countOf(Out, "call <16 x float> @llvm.fma.v16f32("), 16u * 8u);
  // Interleaved: the first FMA of every unit before any unit's second.
  size_t Second = Out.find("%f1 = call");
  ASSERT_NE(Second, std::string::npos);
  EXPECT_LT(Out.find("%f0.jam7 = call"), Second) << Out;
}

TEST(JamUnitLoops, FewerUnitsWhenRegistersAreScarce) {
  // AVX2: <16 x float> is two registers; 4 units' chains fit, 8 do not.
  std::string Out = jammed(unitLoop(16, 16, 0, true), "znver3");
  EXPECT_NE(Out.find("%iv.jam3 = add nuw nsw i64 %iv, 3"), std::string::npos)
      << Out;
  EXPECT_EQ(Out.find(".jam4"), std::string::npos) << Out;
}

TEST(JamUnitLoops, LeavesAStoreIntoTheNextUnitsSlot) {
  // Unit i stores where unit i + 1 loads: their order matters.
  std::string Out = jammed(unitLoop(16, 16, 1, true), "sapphirerapids");
  EXPECT_EQ(Out.find(".jam1"), std::string::npos) << Out;
  // Eight units ahead is outside every jammed group of 8 units.
  Out = jammed(unitLoop(16, 16, 8, true), "sapphirerapids");
  EXPECT_NE(Out.find(".jam1"), std::string::npos) << Out;
}

TEST(JamUnitLoops, AliasAnswersHoldAcrossUnits) {
  // Odd units load X[i - 1] and store Y[i], even ones load Y[i - 1] and
  // store X[i]: unit i + 1 loads what unit i stored. Within one iteration
  // the two selects (one condition, swapped arms) never alias, which a
  // plain alias query answers; across units they do, and the load has no
  // access group to vouch for it.
  std::string IR = R"(
define void @f(ptr noalias %X, ptr noalias %Y) {
entry:
  br label %loop
loop:
  %iv = phi i64 [ 1, %entry ], [ %next, %loop ]
  %odd = trunc i64 %iv to i1
  %lb = select i1 %odd, ptr %X, ptr %Y
  %sb = select i1 %odd, ptr %Y, ptr %X
  %ivm = add i64 %iv, -1
  %lp = getelementptr inbounds float, ptr %lb, i64 %ivm
  %f0 = load float, ptr %lp, align 4
)";
  for (int I = 1; I <= 8; ++I)
    IR += "  %f" + std::to_string(I) + " = fadd float %f" +
          std::to_string(I - 1) + ", 1.0\n";
  IR += R"(  %sp = getelementptr inbounds float, ptr %sb, i64 %iv
  store float %f8, ptr %sp, align 4, !llvm.access.group !2
)" + parallelLatch(17);
  EXPECT_EQ(jammed(IR, "sapphirerapids").find(".jam1"), std::string::npos);
}

TEST(JamUnitLoops, LeavesShortChainsUnparallelLoopsAndCalls) {
  EXPECT_EQ(jammed(unitLoop(16, 4, 0, true), "sapphirerapids").find(".jam1"),
            std::string::npos);
  EXPECT_EQ(jammed(unitLoop(16, 16, 0, false), "sapphirerapids").find(".jam1"),
            std::string::npos);
  // Without hardware FMA each FMA is a libm call.
  EXPECT_EQ(jammed(unitLoop(16, 16, 0, true), "x86-64-v2").find(".jam1"),
            std::string::npos);
  // 7 units: no factor of 2, 4 or 8 divides them.
  EXPECT_EQ(jammed(unitLoop(7, 16, 0, true), "sapphirerapids").find(".jam1"),
            std::string::npos);
}

TEST(JamUnitLoops, ALongBodyRunsFewerUnits) {
  // A chain of 216 FMAs: 229 instructions a unit. 8 units would be 1832
  // instructions, over the 1024 of a jammed body; 4 (916) fit.
  std::string Out = jammed(unitLoop(16, 216, 0, true), "sapphirerapids");
  EXPECT_NE(Out.find("%iv.jam3 = add nuw nsw i64 %iv, 3"), std::string::npos)
      << Out;
  EXPECT_EQ(Out.find(".jam4"), std::string::npos) << Out;
  EXPECT_EQ(test::countOf(Out, "call <16 x float> @llvm.fma.v16f32("), 216u * 4u);
}

TEST(JamUnitLoops, HeldLoadsMoveIntoTheLoopWhenNoFactorFits) {
  // AVX2: 16 held <16 x float> are 32 registers, twice what there are.
  // 4 chains a unit are 8 registers; two units (16, plus their operands)
  // do not fit, so the loop is not jammed, but its loads of %b move into
  // the body, where they fit (LLVM would spill and reload them otherwise).
  std::string Out = jammed(heldLoop(4, 16), "znver3");
  EXPECT_EQ(Out.find(".jam1"), std::string::npos) << Out;
  size_t Loop = Out.find("\nloop:");
  ASSERT_NE(Loop, std::string::npos) << Out;
  for (unsigned H = 0; H < 16; ++H)
    EXPECT_GT(Out.find("%bv" + std::to_string(H) + " = load"), Loop) << Out;
  // With 512-bit code 4 units fit (16 chains, 4 operands, 2 temporaries)
  // once the loads move in, and do not with the 16 held.
  Out = jammed(heldLoop(4, 16), "sapphirerapids");
  EXPECT_NE(Out.find("%iv.jam3 = add nuw nsw i64 %iv, 3"), std::string::npos)
      << Out;
  EXPECT_EQ(Out.find(".jam4"), std::string::npos) << Out;
  EXPECT_GT(Out.find("%bv15 = load"), Out.find("\nloop:")) << Out;
}

} // namespace
