//===- LoopVersioningTest.cpp - Twins of unit loops without their checks --===//
//
// LoopVersioning.h alone, on hand-written LLVM IR shaped like the emitter's
// unit loops (docs/Lowering.md §7): an innermost loop with
// llvm.loop.parallel_accesses, a constant trip count and guarded accesses.
//
//===----------------------------------------------------------------------===//

#include "LoopVersioning.h"
#include "ScalarFallbackLoops.h"

#include "llvm/Analysis/ConstantFolding.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <functional>
#include <memory>

using namespace kiln::lowering;

namespace {

/// 16 units storing to buf[u + Off] behind a bounds check of the unsigned
/// kind the emitter makes (index >> (count > 2^32-1) < min(count, 2^32-1)),
/// and, in block %use, a kernel's own test `u < n` against a parameter.
const char *UnitLoopIR = R"(
define void @cube(ptr %buf, i64 %count, i32 %n, i32 %off) {
entry:
  %lim64 = call i64 @llvm.umin.i64(i64 %count, i64 4294967295)
  %lim = trunc i64 %lim64 to i32
  %big = icmp ugt i64 %count, 4294967295
  %shift = zext i1 %big to i32
  br label %pre

pre:
  br label %unit

unit:
  %u = phi i32 [ 0, %pre ], [ %next, %latch ]
  %own = icmp ult i32 %u, %n
  br i1 %own, label %use, label %latch

use:
  %idx = add i32 %u, %off
  %half = lshr i32 %idx, %shift
  %inb = icmp ult i32 %half, %lim
  br i1 %inb, label %store, label %latch

store:
  %idx64 = zext i32 %idx to i64
  %p = getelementptr inbounds float, ptr %buf, i64 %idx64
  store float 1.0, ptr %p, align 4, !llvm.access.group !2
  br label %latch

latch:
  %next = add nuw nsw i32 %u, 1
  %more = icmp ult i32 %next, 16
  br i1 %more, label %unit, label %exit, !llvm.loop !0

exit:
  ret void
}

declare i64 @llvm.umin.i64(i64, i64)

!0 = distinct !{!0, !1, !3}
!1 = !{!"llvm.loop.parallel_accesses", !2}
!2 = distinct !{}
!3 = !{!"llvm.loop.unroll.disable"}
)";

struct Parsed {
  llvm::LLVMContext Ctx;
  std::unique_ptr<llvm::Module> M;
  llvm::Function *F = nullptr;

  explicit Parsed(const std::string &Text) {
    llvm::SMDiagnostic Diag;
    M = llvm::parseAssemblyString(Text, Diag, Ctx);
    if (!M) {
      std::string Msg;
      llvm::raw_string_ostream OS(Msg);
      Diag.print("versioning", OS);
      ADD_FAILURE() << Msg;
      return;
    }
    F = M->getFunction("cube");
  }
  llvm::BasicBlock *block(llvm::StringRef Name) const {
    for (llvm::BasicBlock &BB : *F)
      if (BB.getName() == Name)
        return &BB;
    return nullptr;
  }
  llvm::Instruction *inst(llvm::StringRef Name) const {
    for (llvm::Instruction &I : llvm::instructions(*F))
      if (I.getName() == Name)
        return &I;
    ADD_FAILURE() << "no instruction %" << Name.str();
    return nullptr;
  }
  /// The condition of \p BB's conditional branch (null when none).
  llvm::Value *condition(llvm::StringRef BB) const {
    llvm::BasicBlock *Blk = block(BB);
    auto *Br =
        Blk ? llvm::dyn_cast<llvm::BranchInst>(Blk->getTerminator()) : nullptr;
    return Br && Br->isConditional() ? Br->getCondition() : nullptr;
  }
  /// The bounds check of UnitLoopIR as the emitter records it.
  BoundsGuard guard() const {
    return {inst("inb"), inst("idx"), F->getArg(1), false};
  }
  bool valid() const { return !llvm::verifyFunction(*F, &llvm::errs()); }
};

TEST(LoopVersioningTest, AffineChecksGetATwinWithoutThem) {
  Parsed P(UnitLoopIR);
  ASSERT_TRUE(P.F);
  BoundsGuard G = P.guard();
  versionUnitLoops(*P.F, {G}, {P.block("unit")});
  ASSERT_TRUE(P.valid());

  // The twin: every block cloned with ".inb", both checks now true.
  ASSERT_TRUE(P.block("unit.inb"));
  ASSERT_TRUE(P.block("use.inb"));
  EXPECT_EQ(P.condition("unit.inb"), llvm::ConstantInt::getTrue(P.Ctx));
  EXPECT_EQ(P.condition("use.inb"), llvm::ConstantInt::getTrue(P.Ctx));
  // The original loop keeps both.
  EXPECT_EQ(P.condition("unit"), P.inst("own"));
  EXPECT_EQ(P.condition("use"), P.inst("inb"));

  // The preheader picks the twin when the last unit's index and unit are in
  // range; otherwise the original loop runs from a preheader of its own.
  auto *Br = llvm::cast<llvm::BranchInst>(P.block("pre")->getTerminator());
  ASSERT_TRUE(Br->isConditional());
  EXPECT_FALSE(llvm::isa<llvm::Constant>(Br->getCondition()));
  EXPECT_EQ(Br->getSuccessor(1), P.block("unit.guarded.ph"));
  EXPECT_EQ(Br->getSuccessor(1)->getSingleSuccessor(), P.block("unit"));
  EXPECT_NE(Br->getSuccessor(0)->getSingleSuccessor(), nullptr);
  EXPECT_EQ(Br->getSuccessor(0)->getSingleSuccessor(), P.block("unit.inb"));

  // Each loop has its own ID; the twin's keeps the unit-loop hints.
  auto LoopID = [&](llvm::StringRef Latch) {
    return P.block(Latch)->getTerminator()->getMetadata(
        llvm::LLVMContext::MD_loop);
  };
  llvm::MDNode *Orig = LoopID("latch"), *Twin = LoopID("latch.inb");
  ASSERT_TRUE(Orig && Twin);
  EXPECT_NE(Orig, Twin);
  EXPECT_EQ(Twin->getOperand(0), Twin);
  ASSERT_EQ(Twin->getNumOperands(), Orig->getNumOperands());
  for (unsigned I = 1; I < Orig->getNumOperands(); ++I)
    EXPECT_EQ(Twin->getOperand(I), Orig->getOperand(I));
}

/// The value of \p V (a constant expression of the arguments, as the
/// versioning's entry check is) for the arguments \p Args.
llvm::Constant *evaluate(llvm::Value *V, const Parsed &P,
                         llvm::ArrayRef<uint64_t> Args) {
  llvm::DenseMap<llvm::Value *, llvm::Constant *> Vals;
  for (unsigned I = 0; I < Args.size(); ++I)
    Vals[P.F->getArg(I + 1)] =
        llvm::ConstantInt::get(P.F->getArg(I + 1)->getType(), Args[I]);
  const llvm::DataLayout &DL = P.M->getDataLayout();
  std::function<llvm::Constant *(llvm::Value *)> Get =
      [&](llvm::Value *V) -> llvm::Constant * {
    if (auto *C = llvm::dyn_cast<llvm::Constant>(V))
      return C;
    if (auto It = Vals.find(V); It != Vals.end())
      return It->second;
    auto *I = llvm::cast<llvm::Instruction>(V);
    llvm::Constant *R = nullptr;
    if (auto *Cmp = llvm::dyn_cast<llvm::ICmpInst>(I)) {
      R = llvm::ConstantFoldCompareInstOperands(
          Cmp->getPredicate(), Get(I->getOperand(0)), Get(I->getOperand(1)),
          DL);
    } else if (auto *Cast = llvm::dyn_cast<llvm::CastInst>(I)) {
      R = llvm::ConstantFoldCastOperand(Cast->getOpcode(),
                                        Get(I->getOperand(0)), I->getType(),
                                        DL);
    } else if (auto *Call = llvm::dyn_cast<llvm::IntrinsicInst>(I)) {
      llvm::APInt A = llvm::cast<llvm::ConstantInt>(Get(Call->getArgOperand(0)))
                          ->getValue(),
                  B = llvm::cast<llvm::ConstantInt>(Get(Call->getArgOperand(1)))
                          ->getValue();
      switch (Call->getIntrinsicID()) {
      case llvm::Intrinsic::umin:
        R = llvm::ConstantInt::get(I->getType(), A.ult(B) ? A : B);
        break;
      case llvm::Intrinsic::umax:
        R = llvm::ConstantInt::get(I->getType(), A.ugt(B) ? A : B);
        break;
      default:
        break;
      }
    } else if (auto *Sel = llvm::dyn_cast<llvm::SelectInst>(I)) {
      R = Get(Sel->getCondition())->isOneValue() ? Get(Sel->getTrueValue())
                                                 : Get(Sel->getFalseValue());
    } else {
      R = llvm::ConstantFoldBinaryOpOperands(
          I->getOpcode(), Get(I->getOperand(0)), Get(I->getOperand(1)), DL);
    }
    EXPECT_TRUE(R) << "cannot evaluate " << I->getOpcodeName();
    Vals[V] = R;
    return R;
  };
  return Get(V);
}

/// The loop ID on \p Latch's branch.
llvm::MDNode *loopID(const Parsed &P, llvm::StringRef Latch) {
  return P.block(Latch)->getTerminator()->getMetadata(
      llvm::LLVMContext::MD_loop);
}

/// Whether \p ID carries the named loop attribute, and its value (or
/// true when it has none).
bool hasAttribute(const llvm::MDNode *ID, llvm::StringRef Name,
                  bool *Value = nullptr) {
  for (const llvm::MDOperand &Op : ID->operands())
    if (auto *N = llvm::dyn_cast<llvm::MDNode>(Op.get()))
      if (N->getNumOperands() >= 1)
        if (auto *S = llvm::dyn_cast<llvm::MDString>(N->getOperand(0));
            S && S->getString() == Name) {
          if (Value)
            *Value = N->getNumOperands() < 2 ||
                     !llvm::mdconst::extract<llvm::ConstantInt>(
                          N->getOperand(1))
                          ->isZero();
          return true;
        }
  return false;
}

/// Whether the lowering marked \p ID's loop to be left scalar.
bool markedScalar(const llvm::MDNode *ID) {
  return hasAttribute(ID, "kiln.loop.scalar_fallback");
}

/// Whether \p ID turns the vectoriser off.
bool vectorizationOff(const llvm::MDNode *ID) {
  bool On = true;
  return hasAttribute(ID, "llvm.loop.vectorize.enable", &On) && !On;
}

TEST(LoopVersioningTest, TheEntryCheckTestsTheLastUnit) {
  // With %off = 0 the last unit's index is 15: with 16 elements the twin
  // runs, with 15 it does not.
  Parsed P(UnitLoopIR);
  ASSERT_TRUE(P.F);
  versionUnitLoops(*P.F, {P.guard()}, {P.block("unit")});
  ASSERT_TRUE(P.valid());
  auto *Cond = P.condition("pre");
  ASSERT_TRUE(Cond);
  // The check only reads the arguments: evaluate it by hand for a few.
  auto Eval = [&](uint64_t Count, uint32_t N, uint32_t Off) {
    return evaluate(Cond, P, {Count, N, Off})->isOneValue();
  };
  EXPECT_TRUE(Eval(16, 16, 0));
  EXPECT_FALSE(Eval(15, 16, 0)); // unit 15's index is out of bounds
  EXPECT_FALSE(Eval(16, 15, 0)); // unit 15 fails `u < n`
  EXPECT_TRUE(Eval(116, 16, 100));
  EXPECT_FALSE(Eval(115, 16, 100));
}

TEST(LoopVersioningTest, AChecklessTwinOnlyForAffineIndices) {
  // unit * unit is not affine in the unit: its check stays in both loops,
  // while `u < n` is still dropped from the twin.
  std::string Text = UnitLoopIR;
  std::string From = "%idx = add i32 %u, %off";
  Text.replace(Text.find(From), From.size(), "%idx = mul i32 %u, %u");
  Parsed P(Text);
  ASSERT_TRUE(P.F);
  versionUnitLoops(*P.F, {P.guard()}, {P.block("unit")});
  ASSERT_TRUE(P.valid());
  ASSERT_TRUE(P.block("use.inb"));
  EXPECT_EQ(P.condition("unit.inb"), llvm::ConstantInt::getTrue(P.Ctx));
  EXPECT_FALSE(llvm::isa<llvm::Constant>(P.condition("use.inb")));
  EXPECT_EQ(P.condition("use"), P.inst("inb"));
}

TEST(LoopVersioningTest, OnlyUnitLoopsAreVersioned) {
  // Without llvm.loop.parallel_accesses the loop is not a unit loop.
  std::string Text = UnitLoopIR;
  std::string From = "!0 = distinct !{!0, !1, !3}";
  Text.replace(Text.find(From), From.size(), "!0 = distinct !{!0, !3}");
  Parsed P(Text);
  ASSERT_TRUE(P.F);
  size_t Blocks = P.F->size();
  versionUnitLoops(*P.F, {P.guard()}, {P.block("unit")});
  ASSERT_TRUE(P.valid());
  EXPECT_EQ(P.F->size(), Blocks);
  EXPECT_FALSE(P.block("unit.inb"));
  EXPECT_EQ(P.condition("pre"), nullptr);
}

TEST(LoopVersioningTest, OnlyTheLoopsNamed) {
  // A unit loop whose header is not among InnerUnitHeaders is left alone.
  Parsed P(UnitLoopIR);
  ASSERT_TRUE(P.F);
  size_t Blocks = P.F->size();
  versionUnitLoops(*P.F, {P.guard()}, {});
  EXPECT_EQ(P.F->size(), Blocks);
}

} // namespace

TEST(LoopVersioningTest, TheGuardedLoopIsScalarWhenItOnlyChecksBounds) {
  // UnitLoopIR drops a kernel's own `u < n` in its twin: whole cubes may
  // take the guarded loop, which stays vectorisable.
  {
    Parsed P(UnitLoopIR);
    ASSERT_TRUE(P.F);
    versionUnitLoops(*P.F, {P.guard()}, {P.block("unit")});
    ASSERT_TRUE(P.valid());
    EXPECT_FALSE(markedScalar(loopID(P, "latch")));
    EXPECT_FALSE(markedScalar(loopID(P, "latch.inb")));
  }
  // Without it, only the bounds check: the guarded loop runs for cubes at a
  // buffer's end, and is left scalar; the twin is not.
  std::string Text = UnitLoopIR;
  std::string From = "br i1 %own, label %use, label %latch";
  Text.replace(Text.find(From), From.size(), "br label %use");
  Parsed P(Text);
  ASSERT_TRUE(P.F);
  versionUnitLoops(*P.F, {P.guard()}, {P.block("unit")});
  ASSERT_TRUE(P.valid());
  llvm::MDNode *Guarded = loopID(P, "latch");
  ASSERT_TRUE(Guarded);
  EXPECT_TRUE(markedScalar(Guarded));
  EXPECT_EQ(Guarded->getOperand(0), Guarded);
  EXPECT_TRUE(hasAttribute(Guarded, "llvm.loop.parallel_accesses"));
  EXPECT_FALSE(markedScalar(loopID(P, "latch.inb")));

  // Settled before the pipeline: no call in it, so the mark becomes
  // `vectorize.enable` false; the twin is left as it is.
  EXPECT_EQ(kiln::settleScalarFallbackLoops(*P.M), 1u);
  Guarded = loopID(P, "latch");
  EXPECT_FALSE(markedScalar(Guarded));
  EXPECT_TRUE(vectorizationOff(Guarded));
  EXPECT_EQ(Guarded->getOperand(0), Guarded);
  EXPECT_TRUE(hasAttribute(Guarded, "llvm.loop.parallel_accesses"));
  EXPECT_FALSE(vectorizationOff(loopID(P, "latch.inb")));
}

TEST(LoopVersioningTest, AGuardedLoopThatCallsLibmStaysVectorizable) {
  // sinf's vector form (libmvec) rounds differently from the scalar one:
  // the mark is removed and the loop left to the vectoriser. sqrt is exact
  // in both forms and does not count.
  for (const char *Call : {"call float @llvm.sin.f32(float 1.0)",
                           "call float @sinf(float 1.0)",
                           "call float @llvm.sqrt.f32(float 1.0)"}) {
    std::string Text = UnitLoopIR;
    std::string From = "br i1 %own, label %use, label %latch";
    Text.replace(Text.find(From), From.size(), "br label %use");
    From = "  %idx64 = zext i32 %idx to i64";
    Text.replace(Text.find(From), From.size(),
                 std::string("  %v = ") + Call + "\n" + From);
    Text += "declare float @llvm.sin.f32(float)\n"
            "declare float @llvm.sqrt.f32(float)\n"
            "declare float @sinf(float)\n";
    Parsed P(Text);
    ASSERT_TRUE(P.F);
    versionUnitLoops(*P.F, {P.guard()}, {P.block("unit")});
    ASSERT_TRUE(P.valid());
    EXPECT_TRUE(markedScalar(loopID(P, "latch")));
    bool Exact = llvm::StringRef(Call).contains("sqrt");
    EXPECT_EQ(kiln::settleScalarFallbackLoops(*P.M), Exact ? 1u : 0u) << Call;
    EXPECT_FALSE(markedScalar(loopID(P, "latch")));
    EXPECT_EQ(vectorizationOff(loopID(P, "latch")), Exact) << Call;
  }
}

/// A narrowed unit loop: units [%begin, min(%end, 16)), entered when the
/// range is not empty, storing to buf[u + off] behind a bounds check.
const char *NarrowedLoopIR = R"(
define void @cube(ptr %buf, i64 %count, i32 %begin, i32 %end, i32 %off) {
entry:
  %lim64 = call i64 @llvm.umin.i64(i64 %count, i64 4294967295)
  %lim = trunc i64 %lim64 to i32
  %big = icmp ugt i64 %count, 4294967295
  %shift = zext i1 %big to i32
  %stop = call i32 @llvm.umin.i32(i32 %end, i32 16)
  %any = icmp ult i32 %begin, %stop
  br i1 %any, label %pre, label %exit

pre:
  br label %unit

unit:
  %u = phi i32 [ %begin, %pre ], [ %next, %latch ]
  %idx = add i32 %u, %off
  %half = lshr i32 %idx, %shift
  %inb = icmp ult i32 %half, %lim
  br i1 %inb, label %store, label %latch

store:
  %idx64 = zext i32 %idx to i64
  %p = getelementptr inbounds float, ptr %buf, i64 %idx64
  store float 1.0, ptr %p, align 4, !llvm.access.group !2
  br label %latch

latch:
  %next = add nuw nsw i32 %u, 1
  %more = icmp ult i32 %next, %stop
  br i1 %more, label %unit, label %exit, !llvm.loop !0

exit:
  ret void
}

declare i64 @llvm.umin.i64(i64, i64)
declare i32 @llvm.umin.i32(i32, i32)

!0 = distinct !{!0, !1, !3}
!1 = !{!"llvm.loop.parallel_accesses", !2}
!2 = distinct !{}
!3 = !{!"llvm.loop.unroll.disable"}
)";

TEST(LoopVersioningTest, ANarrowedLoopChecksTheLastUnitItRuns) {
  // The entry check tests the index of the last unit that runs, not of
  // unit 15 (the last that could): units [0, 8) over 8 elements take the
  // twin. Earlier the check took unit 15 and sent every such cube to the
  // guarded loop.
  Parsed P(NarrowedLoopIR);
  ASSERT_TRUE(P.F);
  versionUnitLoops(*P.F, {P.guard()}, {P.block("unit")});
  ASSERT_TRUE(P.valid());
  ASSERT_TRUE(P.block("unit.inb"));
  llvm::Value *Cond = P.condition("pre");
  ASSERT_TRUE(Cond);
  // Arguments: count, begin, end, off.
  auto Twin = [&](uint64_t Count, uint32_t Begin, uint32_t End,
                  uint32_t Off) {
    return evaluate(Cond, P, {Count, Begin, End, Off})->isOneValue();
  };
  EXPECT_TRUE(Twin(8, 0, 8, 0));
  EXPECT_FALSE(Twin(7, 0, 8, 0));   // unit 7's index is out of bounds
  EXPECT_TRUE(Twin(16, 4, 100, 0)); // the range stops at 16
  EXPECT_FALSE(Twin(15, 4, 100, 0));
  EXPECT_TRUE(Twin(13, 2, 5, 8));   // units 2..4 at 10..12
  EXPECT_FALSE(Twin(12, 2, 5, 8));
  // Exact, and only bounds checks: the guarded loop is marked scalar.
  EXPECT_TRUE(markedScalar(loopID(P, "latch")));
}
