//===- StreamingUnrollTest.cpp - 8 vectors an iteration of a stream ------===//
//
// StreamingUnrollPass alone on hand-written unit loops: which loops get
// `llvm.loop.unroll.count` 8 in their followup for the vectorised loop (a
// short loop that loads and stores buffers) and which keep LLVM's own
// choice (scratch, an atomic, a call that touches memory, a long body, no
// store, an address loaded in the loop, a unit count that is not a
// constant, a loop without the followup, a count already set). The end-to-end
// check is test/CodeGen/streaming-unroll.kiln.
//
//===----------------------------------------------------------------------===//

#include "StreamingUnroll.h"

#include "FunctionPassTestUtil.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <string>

using namespace kiln;
using namespace llvm;

namespace {

/// A unit loop in the lowering's shape: %x and %y are buffers' data
/// pointers loaded from %args, %scratch the scratch argument. \p Body is
/// the loop's work on %i (a unit index, i64); \p LoopID the latch's loop
/// ID, with \p Extra metadata after it.
std::string unitLoop(const std::string &Body,
                     const std::string &LoopID = "!0",
                     const std::string &Extra = "") {
  return R"(
declare void @opaque(ptr)
declare float @llvm.fabs.f32(float)
define void @f(ptr noalias %args, ptr noalias %scratch) {
entry:
  %xp = getelementptr inbounds ptr, ptr %args, i64 1
  %x = load ptr, ptr %xp, align 8
  %yp = getelementptr inbounds ptr, ptr %args, i64 2
  %y = load ptr, ptr %yp, align 8
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
)" + Body + R"(
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, 256
  br i1 %done, label %exit, label %loop, !llvm.loop )" +
         LoopID + R"(
exit:
  ret void
}
!0 = distinct !{!0, !1, !2, !3}
!1 = !{!"llvm.loop.parallel_accesses", !4}
!2 = !{!"llvm.loop.unroll.disable"}
!3 = !{!"llvm.loop.vectorize.followup_vectorized", !5}
!4 = distinct !{}
!5 = !{!"llvm.loop.mustprogress"}
!6 = distinct !{!6, !1, !2}
)" + Extra;
}

/// saxpy's body: y[i] = 0.5 * x[i] + y[i].
const char *Saxpy = R"(
  %px = getelementptr inbounds float, ptr %x, i64 %i
  %vx = load float, ptr %px, align 4, !llvm.access.group !4
  %py = getelementptr inbounds float, ptr %y, i64 %i
  %vy = load float, ptr %py, align 4, !llvm.access.group !4
  %m = fmul float %vx, 5.000000e-01
  %s = fadd float %m, %vy
  store float %s, ptr %py, align 4, !llvm.access.group !4
)";

/// \p IR after StreamingUnrollPass, printed.
std::string afterPass(const std::string &IR) {
  return test::runOnParsedIR(IR, StreamingUnrollPass());
}

bool capped(const std::string &Out) {
  return Out.find("!\"llvm.loop.unroll.count\", i32 8") != std::string::npos;
}

TEST(StreamingUnroll, CapsAStreamingLoop) {
  std::string Out = afterPass(unitLoop(Saxpy));
  ASSERT_TRUE(capped(Out)) << Out;
  // The count is in the followup, beside what was there; the loop's own
  // attributes (parallel accesses, no unrolling before the vectoriser) stay.
  EXPECT_NE(Out.find("!{!\"llvm.loop.vectorize.followup_vectorized\", !"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("llvm.loop.unroll.disable"), std::string::npos) << Out;
  EXPECT_NE(Out.find("llvm.loop.parallel_accesses"), std::string::npos)
      << Out;
  // The new loop ID refers to itself.
  size_t At = Out.find("!llvm.loop !");
  ASSERT_NE(At, std::string::npos);
  std::string Id = Out.substr(At + 11, Out.find('\n', At) - At - 11);
  EXPECT_NE(Out.find(Id + " = distinct !{" + Id + ","), std::string::npos)
      << Out;
}

TEST(StreamingUnroll, LeavesScratchAccesses) {
  // Shared memory and per-unit registers live in the scratch argument.
  std::string Body = std::string(Saxpy) + R"(
  %ps = getelementptr inbounds float, ptr %scratch, i64 %i
  store float %s, ptr %ps, align 4
)";
  EXPECT_FALSE(capped(afterPass(unitLoop(Body))));
}

TEST(StreamingUnroll, LeavesAtomicsAndCallsThatTouchMemory) {
  std::string Atomic = std::string(Saxpy) + R"(
  %old = atomicrmw add ptr %y, i32 1 monotonic, align 4
)";
  EXPECT_FALSE(capped(afterPass(unitLoop(Atomic))));
  std::string Call = std::string(Saxpy) + R"(
  call void @opaque(ptr %py)
)";
  EXPECT_FALSE(capped(afterPass(unitLoop(Call))));
  // An intrinsic that touches no memory is arithmetic.
  std::string Fabs = std::string(Saxpy) + R"(
  %a = call float @llvm.fabs.f32(float %s)
  store float %a, ptr %px, align 4, !llvm.access.group !4
)";
  EXPECT_TRUE(capped(afterPass(unitLoop(Fabs))));
}

TEST(StreamingUnroll, LeavesLongBodiesAndLoopsThatOnlyRead) {
  std::string Long = Saxpy;
  for (int I = 0; I < 30; ++I)
    Long += "  %e" + std::to_string(I) + " = fadd float %s, " +
            std::to_string(I + 1) + ".0\n";
  EXPECT_FALSE(capped(afterPass(unitLoop(Long))));
  const char *ReadOnly = R"(
  %px = getelementptr inbounds float, ptr %x, i64 %i
  %vx = load volatile float, ptr %px, align 4
)";
  EXPECT_FALSE(capped(afterPass(unitLoop(ReadOnly))));
}

TEST(StreamingUnroll, LeavesGathersAndVariableCounts) {
  // A store whose index is loaded in the loop is a scatter once vectorised:
  // one scalar store per lane.
  std::string Scatter = std::string(Saxpy) + R"(
  %k = load i32, ptr %px, align 4, !llvm.access.group !4
  %k64 = zext i32 %k to i64
  %pk = getelementptr inbounds float, ptr %y, i64 %k64
  store float %s, ptr %pk, align 4, !llvm.access.group !4
)";
  EXPECT_FALSE(capped(afterPass(unitLoop(Scatter))));
  // A loop whose unit count is not a constant (a narrowed loop).
  std::string Variable = unitLoop(Saxpy);
  std::string From = "icmp eq i64 %next, 256";
  Variable.replace(Variable.find(From), From.size(), "icmp eq i64 %next, %n");
  From = "define void @f(ptr noalias %args, ptr noalias %scratch)";
  Variable.replace(Variable.find(From), From.size(),
                   "define void @f(ptr noalias %args, ptr noalias %scratch, "
                   "i64 %n)");
  EXPECT_FALSE(capped(afterPass(Variable)));
}

TEST(StreamingUnroll, LeavesLoopsWithoutTheFollowupOrWithACount) {
  // Not a unit loop of the lowering (no followup for the vectorised loop).
  EXPECT_FALSE(capped(afterPass(unitLoop(Saxpy, "!6"))));
  // A followup that already sets a count keeps it.
  std::string Out = afterPass(unitLoop(
      Saxpy, "!7",
      "!7 = distinct !{!7, !1, !2, !8}\n"
      "!8 = !{!\"llvm.loop.vectorize.followup_vectorized\", !9}\n"
      "!9 = !{!\"llvm.loop.unroll.count\", i32 2}\n"));
  EXPECT_FALSE(capped(Out)) << Out;
  EXPECT_NE(Out.find("!\"llvm.loop.unroll.count\", i32 2"), std::string::npos)
      << Out;
}

} // namespace
