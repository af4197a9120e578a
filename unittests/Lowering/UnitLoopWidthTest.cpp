//===- UnitLoopWidthTest.cpp - The vector width of simple unit loops ------===//
//
// UnitLoopWidthPass alone on hand-written unit loops with a run-time unit
// count: which loops get `llvm.loop.vectorize.width` (consecutive f32
// accesses, 16 lanes with 512-bit code; i8, 64) and which keep the
// vectoriser's own choice (8 lanes or fewer, a gather, a stride, a call
// that touches memory or maps to libmvec, a division by a value, a cast
// from the unit index, a conditional store, a loop not annotated parallel,
// a value carried from unit to unit, arithmetic wider than the data, a
// constant count, no followup, a loop left scalar). The end-to-end check
// is test/CodeGen/unit-loop-width.kiln.
//
//===----------------------------------------------------------------------===//

#include "UnitLoopWidth.h"

#include "FunctionPassTestUtil.h"

#include "gtest/gtest.h"

#include <string>

using namespace kiln;
using namespace llvm;

namespace {

/// A unit loop from 0 to %n (or to \p Count when given) over buffers %x,
/// %y and %idx loaded from %args; \p Body works on the unit index %i.
std::string unitLoop(const std::string &Body, const std::string &LoopID = "!0",
                     const std::string &Count = "%n",
                     const std::string &Phis = "") {
  return R"(
declare void @opaque(ptr)
declare float @llvm.fabs.f32(float)
declare float @llvm.sin.f32(float)
define void @f(ptr noalias %args, ptr noalias %scratch, i64 %n) {
entry:
  %xp = getelementptr inbounds ptr, ptr %args, i64 1
  %x = load ptr, ptr %xp, align 8
  %yp = getelementptr inbounds ptr, ptr %args, i64 2
  %y = load ptr, ptr %yp, align 8
  %ip = getelementptr inbounds ptr, ptr %args, i64 3
  %idx = load ptr, ptr %ip, align 8
  %go = icmp sgt i64 %n, 0
  br i1 %go, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %latch ]
)" + Phis + Body + R"(
  br label %latch
latch:
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, )" +
         Count + R"(
  br i1 %done, label %exit, label %loop, !llvm.loop )" + LoopID + R"(
exit:
  ret void
}
!0 = distinct !{!0, !1, !3}
!1 = !{!"llvm.loop.parallel_accesses", !4}
!3 = !{!"llvm.loop.vectorize.followup_vectorized", !5}
!4 = distinct !{}
!5 = !{!"llvm.loop.mustprogress"}
!6 = distinct !{!6, !1}
!7 = distinct !{!7, !1, !3, !8}
!8 = !{!"llvm.loop.vectorize.enable", i1 false}
)";
}

/// y[i] = 2 x[i] in \p Type (float or double).
std::string scale(const std::string &Type) {
  return "  %px = getelementptr inbounds " + Type + ", ptr %x, i64 %i\n"
         "  %vx = load " + Type + ", ptr %px, align 4, !llvm.access.group !4\n"
         "  %m = fmul " + Type + " %vx, 2.0\n"
         "  %py = getelementptr inbounds " + Type + ", ptr %y, i64 %i\n"
         "  store " + Type + " %m, ptr %py, align 4, !llvm.access.group !4\n";
}

/// \p IR after UnitLoopWidthPass with \p CPU's target information.
std::string afterPass(const std::string &IR, const char *CPU = "znver4") {
  return test::runOnParsedIR(IR, UnitLoopWidthPass(), CPU);
}

const char *Width16 = "!{!\"llvm.loop.vectorize.width\", i32 16}";

TEST(UnitLoopWidth, GivesSixteenLanesOfF32With512BitCode) {
  std::string Out = afterPass(unitLoop(scale("float")));
  EXPECT_EQ(test::countOf(Out, Width16), 1u) << Out;
  // The rest of the loop's ID stays.
  EXPECT_NE(Out.find("llvm.loop.vectorize.followup_vectorized"),
            std::string::npos)
      << Out;
  // A uniform load and an intrinsic that touches no memory are fine too.
  std::string Uniform =
      "  %u = load float, ptr %x, align 4, !llvm.access.group !4\n"
      "  %a = call float @llvm.fabs.f32(float %u)\n"
      "  %py = getelementptr inbounds float, ptr %y, i64 %i\n"
      "  store float %a, ptr %py, align 4, !llvm.access.group !4\n";
  EXPECT_EQ(test::countOf(afterPass(unitLoop(Uniform)), Width16), 1u);
}

TEST(UnitLoopWidth, CountsTheAccessedTypeNotTheIndexArithmetic) {
  // i8 data computed in i8, indexed through a 32-bit offset made 64-bit:
  // 512 / 8 lanes.
  std::string Bytes =
      "  %o = trunc i64 %i to i32\n"
      "  %o2 = add nuw i32 %o, 7\n"
      "  %oi = zext i32 %o2 to i64\n"
      "  %px = getelementptr inbounds i8, ptr %x, i64 %oi\n"
      "  %vx = load i8, ptr %px, align 1, !llvm.access.group !4\n"
      "  %m = mul i8 %vx, 3\n"
      "  %py = getelementptr inbounds i8, ptr %y, i64 %oi\n"
      "  store i8 %m, ptr %py, align 1, !llvm.access.group !4\n";
  std::string Out = afterPass(unitLoop(Bytes));
  EXPECT_EQ(test::countOf(Out, "!{!\"llvm.loop.vectorize.width\", i32 64}"),
            1u)
      << Out;
}

TEST(UnitLoopWidth, LeavesLoopsOfFewerThanSixteenLanes) {
  // f64 with 512-bit code and f32 with AVX2 code: 8 lanes, no epilogue.
  EXPECT_EQ(test::countOf(afterPass(unitLoop(scale("double"))),
                          "llvm.loop.vectorize.width"),
            0u);
  EXPECT_EQ(test::countOf(afterPass(unitLoop(scale("float")), "znver3"),
                          "llvm.loop.vectorize.width"),
            0u);
}

TEST(UnitLoopWidth, LeavesLoopsWhoseWidthTheCostModelDecides) {
  std::string Gather =
      "  %pk = getelementptr inbounds i32, ptr %idx, i64 %i\n"
      "  %k = load i32, ptr %pk, align 4\n"
      "  %kk = zext i32 %k to i64\n"
      "  %px = getelementptr inbounds float, ptr %x, i64 %kk\n"
      "  %vx = load float, ptr %px, align 4\n"
      "  %py = getelementptr inbounds float, ptr %y, i64 %i\n"
      "  store float %vx, ptr %py, align 4\n";
  std::string Call = scale("float") + "  call void @opaque(ptr %y)\n";
  std::string Strided =
      "  %i2 = shl nuw nsw i64 %i, 1\n"
      "  %px = getelementptr inbounds float, ptr %x, i64 %i2\n"
      "  %vx = load float, ptr %px, align 4\n"
      "  %py = getelementptr inbounds float, ptr %y, i64 %i\n"
      "  store float %vx, ptr %py, align 4\n";
  std::string Carried = "  %s = phi float [ 0.0, %entry ], [ %m, %latch ]\n";
  // Math LLVM maps to a vector library or scalarises, a division by a
  // value, a cast from the 64-bit unit index to the data.
  auto Mapped = [](const std::string &Compute) {
    return "  %px = getelementptr inbounds float, ptr %x, i64 %i\n"
           "  %vx = load float, ptr %px, align 4, !llvm.access.group !4\n" +
           Compute +
           "  %py = getelementptr inbounds float, ptr %y, i64 %i\n"
           "  store float %m, ptr %py, align 4, !llvm.access.group !4\n";
  };
  std::string Sin = Mapped("  %m = call float @llvm.sin.f32(float %vx)\n");
  std::string Div = Mapped("  %b = bitcast float %vx to i32\n"
                           "  %q = udiv i32 %b, %b\n"
                           "  %m = bitcast i32 %q to float\n");
  std::string FromIndex = Mapped("  %c = uitofp i64 %i to float\n"
                                 "  %m = fadd float %vx, %c\n");
  // A store under a condition is a masked one.
  std::string Conditional =
      "  %px = getelementptr inbounds float, ptr %x, i64 %i\n"
      "  %vx = load float, ptr %px, align 4, !llvm.access.group !4\n"
      "  %pos = fcmp ogt float %vx, 0.0\n"
      "  br i1 %pos, label %then, label %latch\n"
      "then:\n"
      "  %py = getelementptr inbounds float, ptr %y, i64 %i\n"
      "  store float %vx, ptr %py, align 4, !llvm.access.group !4\n";
  // Accesses outside the loop's access group: not annotated parallel (the
  // may-alias variant), where a given width would allow 128 alias checks.
  std::string NotParallel =
      "  %px = getelementptr inbounds float, ptr %x, i64 %i\n"
      "  %vx = load float, ptr %px, align 4\n"
      "  %py = getelementptr inbounds float, ptr %y, i64 %i\n"
      "  store float %vx, ptr %py, align 4\n";
  // f32 data computed in f64, and i8 data computed in i32: the cost model
  // may prefer fewer lanes than the accessed type allows.
  std::string Wider =
      "  %px = getelementptr inbounds float, ptr %x, i64 %i\n"
      "  %vx = load float, ptr %px, align 4\n"
      "  %d = fpext float %vx to double\n"
      "  %m = fmul double %d, 3.0\n"
      "  %t = fptrunc double %m to float\n"
      "  %py = getelementptr inbounds float, ptr %y, i64 %i\n"
      "  store float %t, ptr %py, align 4\n";
  std::string WiderInt =
      "  %px = getelementptr inbounds i8, ptr %x, i64 %i\n"
      "  %vx = load i8, ptr %px, align 1\n"
      "  %w = zext i8 %vx to i32\n"
      "  %m = mul i32 %w, 3\n"
      "  %t = trunc i32 %m to i8\n"
      "  %py = getelementptr inbounds i8, ptr %y, i64 %i\n"
      "  store i8 %t, ptr %py, align 1\n";
  for (const std::string &IR :
       {unitLoop(Gather), unitLoop(Call), unitLoop(Strided), unitLoop(Wider),
        unitLoop(WiderInt), unitLoop(Sin), unitLoop(Div), unitLoop(FromIndex),
        unitLoop(Conditional), unitLoop(NotParallel),
        unitLoop(scale("float"), "!0", "%n", Carried)})
    EXPECT_EQ(test::countOf(afterPass(IR), "llvm.loop.vectorize.width"), 0u)
        << IR;
}

TEST(UnitLoopWidth, LeavesConstantCountsAndLoopsNotForVectors) {
  // A whole cube's units: LLVM knows there is no remainder.
  EXPECT_EQ(test::countOf(afterPass(unitLoop(scale("float"), "!0", "256")),
                          "llvm.loop.vectorize.width"),
            0u);
  // No followup (not a unit loop), or a loop kept scalar.
  for (const char *ID : {"!6", "!7"})
    EXPECT_EQ(test::countOf(afterPass(unitLoop(scale("float"), ID)),
                            "llvm.loop.vectorize.width"),
              0u)
        << ID;
}

} // namespace
