//===- UniformityTest.cpp - Barriers and plane ops under divergence -------===//

#include "Support/RawKernelBuilder.h"

#include "kiln/IR/Builder.h"
#include "kiln/IR/Uniformity.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace kiln;
using namespace kiln::test;
using testing::ElementsAre;
using testing::IsEmpty;

namespace {

using KB = RawKernelBuilder;

TEST(UniformityTest, BarrierUnderDivergentIf) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32, {}, 1);
  ValueId C = B.op(OpKind::Lt, Bool, {KB::v(U), KB::u32(4)});
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:5:3: error: sync_cube under divergent "
                          "control flow: the condition at 4:20 depends on "
                          "unit_pos.x"));
}

TEST(UniformityTest, EverySourceOfDivergence) {
  for (OpKind Source : {OpKind::UnitPos, OpKind::AbsolutePos,
                        OpKind::UnitPosPlane, OpKind::PlanePos}) {
    KB B;
    ValueId U = B.op(Source, U32);
    ValueId C = B.op(OpKind::Eq, Bool, {KB::v(U), KB::u32(0)});
    B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });
    EXPECT_THAT(diagnose(B.kernel()),
                ElementsAre("t.kiln:5:3: error: sync_cube under divergent "
                            "control flow: the condition at 4:20 depends on " +
                            opName(Source).str()));
  }
  // The result of an atomic.
  KB B;
  ValueId Buf = B.buffer("b", U32, AccessKind::ReadWrite);
  ValueId Old =
      B.op(OpKind::AtomicAdd, U32, {KB::v(Buf), KB::u32(0), KB::u32(1)});
  ValueId C = B.op(OpKind::Eq, Bool, {KB::v(Old), KB::u32(0)});
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:5:3: error: sync_cube under divergent "
                          "control flow: the condition at 4:20 depends on "
                          "the result of atomic_add at 2:3"));
}

TEST(UniformityTest, UniformSourcesAllowBarriers) {
  KB B;
  ValueId N = B.param("n", U32);
  ValueId Buf = B.buffer("b", U32, AccessKind::Read);
  ValueId Cp = B.op(OpKind::CubePos, U32);
  ValueId Cd = B.op(OpKind::CubeDim, U32, {}, 2);
  ValueId Cc = B.op(OpKind::CubeCount, U32);
  ValueId Pd = B.op(OpKind::PlaneDim, U32);
  ValueId L = B.op(OpKind::Load, U32, {KB::v(Buf), KB::v(Cp)});
  ValueId Len = B.op(OpKind::Len, U32, {KB::v(Buf)});
  ValueId S = B.op(OpKind::Add, U32, {KB::v(N), KB::v(Cd)});
  S = B.op(OpKind::Add, U32, {KB::v(S), KB::v(Cc)});
  S = B.op(OpKind::Add, U32, {KB::v(S), KB::v(Pd)});
  S = B.op(OpKind::Add, U32, {KB::v(S), KB::v(L)});
  S = B.op(OpKind::Add, U32, {KB::v(S), KB::v(Len)});
  ValueId C = B.op(OpKind::Lt, Bool, {KB::v(S), KB::u32(100)});
  B.ifThen(KB::v(C), [&] {
    B.effect(OpKind::SyncCube);
    B.op(OpKind::PlaneSum, F32, {KB::lit(F32, 0)});
  });
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(UniformityTest, LoadAtDivergentIndexIsDivergent) {
  KB B;
  ValueId Buf = B.buffer("b", U32, AccessKind::Read);
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId L = B.op(OpKind::Load, U32, {KB::v(Buf), KB::v(U)});
  ValueId C = B.op(OpKind::Eq, Bool, {KB::v(L), KB::u32(0)});
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:6:3: error: sync_cube under divergent "
                          "control flow: the condition at 5:20 depends on "
                          "unit_pos"));
}

TEST(UniformityTest, ClassicReductionWithVarIsUniform) {
  // %s = var u32; set %s, 128; loop { %v = get %s; %done = eq %v, 0;
  // if %done { break }; ...; sync_cube; set %s, shr %v, 1 }
  KB B("reduce", 256);
  ValueId Sh = B.array(OpKind::Shared, "sh", F32, 256);
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId S = B.var("s", U32);
  B.effect(OpKind::Set, {KB::v(S), KB::u32(128)});
  B.loop([&] {
    ValueId V = B.op(OpKind::Get, U32, {KB::v(S)});
    ValueId Done = B.op(OpKind::Eq, Bool, {KB::v(V), KB::u32(0)});
    B.ifThen(KB::v(Done), [&] { B.effect(OpKind::Break); });
    ValueId Act = B.op(OpKind::Lt, Bool, {KB::v(U), KB::v(V)});
    B.ifThen(KB::v(Act), [&] {
      ValueId J = B.op(OpKind::Add, U32, {KB::v(U), KB::v(V)});
      ValueId A = B.op(OpKind::Load, F32, {KB::v(Sh), KB::v(U)});
      ValueId Bv = B.op(OpKind::Load, F32, {KB::v(Sh), KB::v(J)});
      ValueId Sum = B.op(OpKind::Add, F32, {KB::v(A), KB::v(Bv)});
      B.effect(OpKind::Store, {KB::v(Sh), KB::v(U), KB::v(Sum)});
    });
    B.effect(OpKind::SyncCube);
    ValueId Next = B.op(OpKind::Shr, U32, {KB::v(V), KB::u32(1)});
    B.effect(OpKind::Set, {KB::v(S), KB::v(Next)});
  });
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(UniformityTest, ClassicReductionWithForIsUniform) {
  KB B("reduce", 256);
  ValueId N = B.param("n", U32);
  B.forLoop(U32, {KB::u32(0), KB::v(N), KB::u32(1)}, [&](ValueId I) {
    ValueId Stride = B.op(OpKind::Shr, U32, {KB::u32(128), KB::v(I)});
    ValueId Idx = B.op(OpKind::Add, U32, {KB::v(Stride), KB::v(I)});
    B.ifThen(KB::v(B.op(OpKind::Gt, Bool, {KB::v(Idx), KB::u32(3)})),
             [&] { B.effect(OpKind::SyncCube); });
    B.effect(OpKind::SyncCube);
  });
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(UniformityTest, BarrierAfterClosedDivergentIfAndNestedUniformIfs) {
  KB B;
  ValueId N = B.param("n", U32);
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId C = B.op(OpKind::Lt, Bool, {KB::v(U), KB::v(N)});
  B.ifThen(KB::v(C), [&] { B.op(OpKind::Add, U32, {KB::v(U), KB::u32(1)}); });
  B.effect(OpKind::SyncCube);
  ValueId D = B.op(OpKind::Gt, Bool, {KB::v(N), KB::u32(2)});
  B.ifThen(KB::v(D), [&] {
    ValueId E = B.op(OpKind::Gt, Bool, {KB::v(N), KB::u32(8)});
    B.ifThen(
        KB::v(E), [&] { B.effect(OpKind::SyncCube); },
        [&] { B.effect(OpKind::SyncCube); });
  });
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(UniformityTest, BarrierAfterDivergentReturnAtTopLevel) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId C = B.op(OpKind::Ge, Bool, {KB::v(U), KB::u32(10)});
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::Return); });
  B.effect(OpKind::SyncCube);
  ValueId Acc = B.var("acc", U32);
  B.effect(OpKind::Set, {KB::v(Acc), KB::u32(1)});
  ValueId G = B.op(OpKind::Get, U32, {KB::v(Acc)});
  B.ifThen(KB::v(B.op(OpKind::Eq, Bool, {KB::v(G), KB::u32(1)})),
           [&] { B.effect(OpKind::SyncCube); });
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(UniformityTest, LoopLeftByDivergentBreak) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  B.loop([&] {                                                  // line 3
    B.effect(OpKind::SyncCube);                                 // line 4
    ValueId C = B.op(OpKind::Eq, Bool, {KB::v(U), KB::u32(0)}); // line 5
    B.ifThen(KB::v(C), [&] { B.effect(OpKind::Break); });       // 6, 7
  });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:4:3: error: sync_cube under divergent "
                          "control flow: the break at 7:3 leaves the loop at "
                          "3:3 under divergent control flow (the condition "
                          "at 6:20 depends on unit_pos)"));
}

TEST(UniformityTest, ForLeftByDivergentContinueOrReturn) {
  for (OpKind Jump : {OpKind::Continue, OpKind::Return}) {
    KB B;
    ValueId U = B.op(OpKind::UnitPos, U32);
    B.forLoop(U32, {KB::u32(0), KB::u32(4)}, [&](ValueId) { // line 3
      ValueId C = B.op(OpKind::Eq, Bool, {KB::v(U), KB::u32(0)});
      B.ifThen(KB::v(C), [&] { B.effect(Jump); }); // 5, 6
      B.op(OpKind::PlaneSum, U32, {KB::u32(1)});   // line 7
    });
    EXPECT_THAT(diagnose(B.kernel()),
                ElementsAre("t.kiln:7:3: error: plane_sum under divergent "
                            "control flow: the " +
                            opName(Jump).str() +
                            " at 6:3 leaves the for at 3:3 under divergent "
                            "control flow (the condition at 5:20 depends on "
                            "unit_pos)"));
  }
}

TEST(UniformityTest, DivergentBreakFromLoopWithoutBarrierIsFine) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  B.loop([&] {
    ValueId C = B.op(OpKind::Eq, Bool, {KB::v(U), KB::u32(0)});
    B.ifThen(KB::v(C), [&] { B.effect(OpKind::Break); });
  });
  B.effect(OpKind::SyncCube);
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(UniformityTest, UniformBreakInSwitchInsideLoop) {
  KB B;
  ValueId N = B.param("n", U32);
  B.loop([&] {
    B.effect(OpKind::SyncCube);
    B.switchOn(KB::v(N), {{0, [&] { B.effect(OpKind::Break); }}});
  });
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(UniformityTest, ForWithDivergentBounds) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  B.forLoop(U32, {KB::u32(0), KB::v(U)}, [&](ValueId) { // line 3
    B.effect(OpKind::SyncCube);
  });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:4:3: error: sync_cube under divergent "
                          "control flow: the bounds of the for at 3:3 depend "
                          "on unit_pos"));
}

TEST(UniformityTest, ForInductionVariableFollowsItsBounds) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  B.forLoop(U32, {KB::v(U), KB::u32(64)}, [&](ValueId I) {}); // line 3
  B.forLoop(U32, {KB::u32(0), KB::u32(64)}, [&](ValueId I) {  // line 4
    ValueId C = B.op(OpKind::Eq, Bool, {KB::v(I), KB::u32(0)});
    B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });
  });
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(UniformityTest, SwitchOnDivergentSelector) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  B.switchOn(KB::v(U), {{1, [] {}}}, [&] {
    B.op(OpKind::PlaneBallot, Type::line(ScalarKind::U32, 4),
         {KB::lit(Bool, 1)});
  });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:4:3: error: plane_ballot under divergent "
                          "control flow: the selector at 3:20 depends on "
                          "unit_pos"));
}

TEST(UniformityTest, VarSetToDivergentValue) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId V = B.var("v", U32);
  B.effect(OpKind::Set, {KB::v(V), KB::v(U)});
  ValueId G = B.op(OpKind::Get, U32, {KB::v(V)});
  ValueId C = B.op(OpKind::Eq, Bool, {KB::v(G), KB::u32(0)}); // line 6
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:8:3: error: sync_cube under divergent "
                          "control flow: the condition at 7:20 depends on "
                          "unit_pos"));
}

TEST(UniformityTest, VarSetUnderDivergentControlFlow) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId V = B.var("v", U32);
  B.effect(OpKind::Set, {KB::v(V), KB::u32(0)});
  ValueId C = B.op(OpKind::Eq, Bool, {KB::v(U), KB::u32(0)});
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::Set, {KB::v(V), KB::u32(1)}); });
  ValueId G = B.op(OpKind::Get, U32, {KB::v(V)});             // line 8
  ValueId D = B.op(OpKind::Eq, Bool, {KB::v(G), KB::u32(0)}); // line 9
  B.ifThen(KB::v(D), [&] { B.effect(OpKind::SyncCube); });    // 10, 11
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:11:3: error: sync_cube under divergent "
                          "control flow: the condition at 10:20 depends on "
                          "unit_pos"));
}

TEST(UniformityTest, VarTaintedLaterInLoopIsAFixedPoint) {
  // The get at the top of the loop reads what the end of the previous
  // iteration set: the analysis must go round the loop again.
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId V = B.var("v", U32);
  B.effect(OpKind::Set, {KB::v(V), KB::u32(0)});
  ValueId W = B.var("w", U32);
  B.effect(OpKind::Set, {KB::v(W), KB::u32(0)});
  B.forLoop(U32, {KB::u32(0), KB::u32(4)}, [&](ValueId) { // line 7
    ValueId G = B.op(OpKind::Get, U32, {KB::v(W)});
    ValueId C = B.op(OpKind::Eq, Bool, {KB::v(G), KB::u32(0)}); // line 9
    B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });    // 10, 11
    ValueId H = B.op(OpKind::Get, U32, {KB::v(V)});
    B.effect(OpKind::Set, {KB::v(W), KB::v(H)});
    B.effect(OpKind::Set, {KB::v(V), KB::v(U)});
  });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:11:3: error: sync_cube under divergent "
                          "control flow: the condition at 10:20 depends on "
                          "unit_pos"));
}

TEST(UniformityTest, LocalArrayStoredAtDivergentIndex) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId L = B.array(OpKind::LocalArray, "l", U32, 4);
  ValueId I = B.op(OpKind::Rem, U32, {KB::v(U), KB::u32(4)});
  B.effect(OpKind::Store, {KB::v(L), KB::v(I), KB::u32(1)});
  ValueId X = B.op(OpKind::Load, U32, {KB::v(L), KB::u32(0)});
  ValueId C = B.op(OpKind::Eq, Bool, {KB::v(X), KB::u32(0)}); // line 7
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:9:3: error: sync_cube under divergent "
                          "control flow: the condition at 8:20 depends on "
                          "unit_pos"));
}

TEST(UniformityTest, PlaneResultsAreDivergent) {
  KB B;
  ValueId S = B.op(OpKind::PlaneSum, U32, {KB::u32(1)});
  ValueId C = B.op(OpKind::Eq, Bool, {KB::v(S), KB::u32(0)});
  B.ifThen(KB::v(C), [&] { B.op(OpKind::PlaneElect, Bool); });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:5:3: error: plane_elect under divergent "
                          "control flow: the condition at 4:20 depends on "
                          "the result of plane_sum at 2:3"));
}

TEST(UniformityTest, ReturnInsideNestedLoopsNamesTheOutermost) {
  KB B;
  ValueId U = B.op(OpKind::UnitPos, U32);
  B.loop([&] {                  // line 3
    B.effect(OpKind::SyncCube); // line 4
    B.loop([&] {                // line 5
      ValueId C = B.op(OpKind::Eq, Bool, {KB::v(U), KB::u32(0)});
      B.ifThen(KB::v(C), [&] { B.effect(OpKind::Return); }); // 7, 8
      B.effect(OpKind::Break);
    });
    B.effect(OpKind::Break);
  });
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:4:3: error: sync_cube under divergent "
                          "control flow: the return at 8:3 leaves the loop "
                          "at 3:3 under divergent control flow (the "
                          "condition at 7:20 depends on unit_pos)"));
}

// The per-value answers the lowering uses (which per-unit `for` loops it
// runs interchanged) come from the same analysis.
TEST(UniformityTest, PerValueUniformityWithTheReason) {
  KB B;
  ValueId N = B.param("n", U32);
  ValueId Buf = B.buffer("b", U32, AccessKind::Read);
  ValueId U = B.op(OpKind::UnitPos, U32, {}, 1);
  ValueId Cube = B.op(OpKind::CubePos, U32);
  ValueId Sum = B.op(OpKind::Add, U32, {KB::v(N), KB::v(Cube)});
  ValueId AtUniform = B.op(OpKind::Load, U32, {KB::v(Buf), KB::u32(0)});
  ValueId AtUnit = B.op(OpKind::Load, U32, {KB::v(Buf), KB::v(U)});
  ValueId Var = B.var("s", U32);
  ValueId C = B.op(OpKind::Lt, Bool, {KB::v(U), KB::u32(4)});
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::Set, {KB::v(Var), KB::u32(1)}); });
  ValueId Got = B.op(OpKind::Get, U32, {KB::v(Var)});
  UniformityInfo UI(B.kernel());
  EXPECT_TRUE(UI.isUniform(KB::u32(7)));
  for (ValueId Id : {N, Cube, Sum, AtUniform})
    EXPECT_TRUE(UI.isUniform(KB::v(Id))) << Id;
  for (ValueId Id : {U, AtUnit, C, Var, Got})
    EXPECT_FALSE(UI.isUniform(KB::v(Id))) << Id;
  ASSERT_NE(UI.divergenceRoot(AtUnit), nullptr);
  EXPECT_EQ(*UI.divergenceRoot(AtUnit), "unit_pos.x");
  EXPECT_EQ(*UI.divergenceRoot(Got), "unit_pos.x");
  EXPECT_EQ(UI.divergenceRoot(Sum), nullptr);
}

} // namespace

namespace {

// workgroup_uniform_load (docs/LangRef.md §12.2), built with KernelBuilder:
// its result guards a barrier; an atomic_load of the same element does not.
TEST(UniformityTest, WorkgroupUniformLoad) {
  for (bool Atomic : {false, true}) {
    KernelBuilder B("k");
    B.setCubeDim({64});
    ValueId Out = B.addBuffer("out", U32, AccessKind::Write);
    ValueId Count = B.shared(U32, 1);
    ValueId N = Atomic ? B.atomicLoad(Count, lit::u32(0))
                       : B.workgroupUniformLoad(Count, lit::u32(0));
    B.beginIf(B.op(OpKind::Gt, {N, lit::u32(0)}));
    B.syncCube();
    B.end();
    B.store(Out, B.builtin(OpKind::UnitPos), N);
    llvm::Expected<IRKernel> K = B.finish();
    ASSERT_TRUE(bool(K)) << llvm::toString(K.takeError());
    UniformityInfo UI(*K);
    EXPECT_EQ(UI.isDivergent(N), Atomic);
    if (Atomic)
      EXPECT_THAT(diagnose(*K), ElementsAre(testing::HasSubstr(
                                    "sync_cube under divergent control flow")));
    else
      EXPECT_THAT(diagnose(*K), IsEmpty());
  }
  // A divergent index, and the operation under divergent control flow.
  KernelBuilder B("k");
  B.setCubeDim({64});
  ValueId S = B.shared(U32, 64);
  ValueId U = B.builtin(OpKind::UnitPos);
  B.workgroupUniformLoad(S, U);
  B.beginIf(B.op(OpKind::Lt, {U, lit::u32(3)}));
  B.workgroupUniformLoad(S, lit::u32(0));
  B.end();
  llvm::Expected<IRKernel> K = B.finish();
  ASSERT_TRUE(bool(K)) << llvm::toString(K.takeError());
  EXPECT_THAT(
      diagnose(*K),
      ElementsAre(testing::HasSubstr("the index of workgroup_uniform_load "
                                     "must be uniform, but it depends on "
                                     "unit_pos"),
                  testing::HasSubstr("workgroup_uniform_load under divergent "
                                     "control flow")));
}

} // namespace
