//===- UnitLoopWidth.cpp - The vector width of simple unit loops ----------===//
//
// See UnitLoopWidth.h.
//
//===----------------------------------------------------------------------===//

#include "UnitLoopWidth.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopAccessAnalysis.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Metadata.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

using namespace llvm;
using namespace kiln;

namespace {

/// A longer body may hold what makes the cost model choose a narrower
/// factor; such loops are left to it.
constexpr unsigned MaxBodyInstructions = 64;

constexpr StringLiteral FollowupName =
    "llvm.loop.vectorize.followup_vectorized";
constexpr StringLiteral WidthName = "llvm.loop.vectorize.width";

/// Whether \p Ptr, the address of a \p Accessed, is invariant in \p L or
/// consecutive in its induction variable, as the vectoriser asks it
/// (`LoopVectorizationLegality::isConsecutivePtr`: run-time no-wrap
/// predicates allowed).
bool consecutiveOrInvariant(PredicatedScalarEvolution &PSE, const Loop &L,
                            Type *Accessed, Value *Ptr) {
  if (PSE.getSE()->isLoopInvariant(PSE.getSCEV(Ptr), &L))
    return true;
  std::optional<int64_t> Stride =
      getPtrStride(PSE, Accessed, Ptr, &L, DenseMap<Value *, const SCEV *>(),
                   /*Assume=*/true, /*ShouldCheckWrap=*/false);
  return Stride && *Stride == 1;
}

/// Whether integer \p I of \p L only feeds addresses, compares and the
/// induction variable, directly or through other such integers.
bool indexesOnly(const Loop &L, const Instruction &I) {
  SmallVector<const Instruction *, 8> Work{&I};
  SmallPtrSet<const Instruction *, 16> Seen{&I};
  while (!Work.empty()) {
    const Instruction *V = Work.pop_back_val();
    for (const User *U : V->users()) {
      const auto *UI = dyn_cast<Instruction>(U);
      if (!UI || !L.contains(UI))
        return false; // used after the loop
      if (isa<GetElementPtrInst>(UI) || isa<ICmpInst>(UI) ||
          isa<PHINode>(UI))
        continue;
      if (!UI->getType()->isIntegerTy() || isa<CallBase>(UI))
        return false;
      if (Seen.insert(UI).second)
        Work.push_back(UI);
    }
  }
  return true;
}

/// Whether call \p Call is an intrinsic that every x86 vector width does
/// lane by lane in a few instructions. Math that LLVM maps to a vector
/// library (sin, log, exp, pow: libmvec has 4 and 8 lanes of f32 only) or
/// scalarises is left to the cost model, as is anything unknown.
bool cheapLaneWise(const CallBase &Call) {
  const auto *II = dyn_cast<IntrinsicInst>(&Call);
  if (!II)
    return false;
  if (II->isAssumeLikeIntrinsic())
    return true;
  switch (II->getIntrinsicID()) {
  case Intrinsic::fabs:
  case Intrinsic::fma:
  case Intrinsic::fmuladd:
  case Intrinsic::minnum:
  case Intrinsic::maxnum:
  case Intrinsic::minimum:
  case Intrinsic::maximum:
  case Intrinsic::copysign:
  case Intrinsic::sqrt:
  case Intrinsic::floor:
  case Intrinsic::ceil:
  case Intrinsic::trunc:
  case Intrinsic::rint:
  case Intrinsic::nearbyint:
  case Intrinsic::roundeven:
  case Intrinsic::smin:
  case Intrinsic::smax:
  case Intrinsic::umin:
  case Intrinsic::umax:
  case Intrinsic::abs:
    return true;
  default:
    return false;
  }
}

/// The widest scalar type \p L loads or stores, in bits; 0 when the loop is
/// not one whose factor is certain (see UnitLoopWidth.h).
unsigned widestAccessBits(ScalarEvolution &SE, const DominatorTree &DT,
                          const DataLayout &DL, const Loop &L) {
  PredicatedScalarEvolution PSE(SE, const_cast<Loop &>(L));
  unsigned Count = 0, Widest = 0;
  SmallVector<Instruction *, 32> Computed;
  for (BasicBlock *BB : L.blocks())
    for (Instruction &I : *BB) {
      if (I.isTerminator() || I.isDebugOrPseudoInst())
        continue;
      if (auto *Phi = dyn_cast<PHINode>(&I)) {
        // The induction variable only: a value carried from one unit to
        // the next is a recurrence the cost model weighs on its own.
        if (Phi->getParent() != L.getHeader() || !Phi->getType()->isIntegerTy())
          return 0;
        const SCEV *S = SE.getSCEV(Phi);
        if (!isa<SCEVAddRecExpr>(S))
          return 0;
        continue;
      }
      if (++Count > MaxBodyInstructions)
        return 0;
      if (I.isAtomic() || isa<FenceInst>(I))
        return 0;
      if (const auto *Call = dyn_cast<CallBase>(&I)) {
        if (!cheapLaneWise(*Call))
          return 0;
        continue;
      }
      // Division by a value is one lane at a time.
      if (I.isIntDivRem() && !isa<Constant>(I.getOperand(1)))
        return 0;
      Type *Accessed = nullptr;
      Value *Ptr = nullptr;
      if (auto *Load = dyn_cast<LoadInst>(&I)) {
        Accessed = Load->getType();
        Ptr = Load->getPointerOperand();
      } else if (auto *Store = dyn_cast<StoreInst>(&I)) {
        Accessed = Store->getValueOperand()->getType();
        Ptr = Store->getPointerOperand();
      } else if (I.mayReadOrWriteMemory()) {
        return 0;
      } else {
        Computed.push_back(&I);
        continue;
      }
      if (!Accessed->isIntegerTy() && !Accessed->isFloatingPointTy())
        return 0;
      // A conditional access is a masked one, which not every width and
      // type has (no masked byte stores without AVX-512).
      if (!DT.dominates(BB, L.getLoopLatch()))
        return 0;
      uint64_t Bytes = DL.getTypeStoreSize(Accessed);
      if (Bytes != DL.getTypeAllocSize(Accessed) ||
          !consecutiveOrInvariant(PSE, L, Accessed, Ptr))
        return 0;
      Widest = std::max<unsigned>(Widest, Bytes * 8);
    }
  // The cost model's bound comes from the accessed types alone; a loop that
  // computes in a wider type (f32 data in f64, i8 data in i32) may be
  // cheaper at a narrower factor, so its choice is left to it. Integers
  // that only index memory or count units stay scalar and do not count.
  // Operands count as well as results: a cast from the 64-bit induction
  // variable to i8 or f32 data works on 64-bit lanes.
  auto Wider = [&](Type *T) {
    return !T->isVoidTy() && !T->isPointerTy() && !T->isIntegerTy(1) &&
           (!(T->isIntegerTy() || T->isFloatingPointTy()) ||
            T->getScalarSizeInBits() > Widest);
  };
  for (Instruction *I : Computed) {
    Type *T = I->getType();
    if (T->isVoidTy() || T->isPointerTy() || T->isIntegerTy(1) ||
        (T->isIntegerTy() && indexesOnly(L, *I)))
      continue;
    auto WiderOperand = [&](const Use &Op) { return Wider(Op->getType()); };
    if (Wider(T) || any_of(I->operands(), WiderOperand))
      return 0;
  }
  return Widest;
}

/// Whether \p L's ID already says something about its vectorisation other
/// than the followup: a loop kept scalar, or a width someone gave.
bool vectorizationDecided(const Loop &L) {
  MDNode *ID = L.getLoopID();
  return findOptionMDForLoopID(ID, "llvm.loop.vectorize.enable") ||
         findOptionMDForLoopID(ID, WidthName) ||
         findOptionMDForLoopID(ID, "llvm.loop.isvectorized");
}

} // namespace

PreservedAnalyses UnitLoopWidthPass::run(Function &F,
                                         FunctionAnalysisManager &AM) {
  auto &LI = AM.getResult<LoopAnalysis>(F);
  auto &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
  auto &DT = AM.getResult<DominatorTreeAnalysis>(F);
  const TargetTransformInfo &TTI = AM.getResult<TargetIRAnalysis>(F);
  const DataLayout &DL = F.getDataLayout();
  unsigned RegisterBits =
      TTI.getRegisterBitWidth(TargetTransformInfo::RGK_FixedWidthVector)
          .getFixedValue();
  bool Changed = false;
  for (Loop *L : LI.getLoopsInPreorder()) {
    // Unit loops carry a followup for their vectorised form; a constant
    // trip count leaves LLVM nothing to decide about a remainder.
    // Parallel loops only: a given width also lets LLVM add up to 128
    // run-time alias checks instead of 8 (the may-alias variant's loops).
    if (!L->isInnermost() || !L->getLoopID() || !L->isAnnotatedParallel() ||
        !findOptionMDForLoopID(L->getLoopID(), FollowupName) ||
        vectorizationDecided(*L) || SE.getSmallConstantTripCount(L) != 0)
      continue;
    unsigned Widest = widestAccessBits(SE, DT, DL, *L);
    if (Widest == 0 || RegisterBits / Widest < EpilogueMinLanes)
      continue;
    unsigned Lanes = RegisterBits / Widest;
    // LLVM narrows the factor to a short loop's largest trip count.
    unsigned MaxTrips = SE.getSmallConstantMaxTripCount(L);
    if (MaxTrips != 0 && MaxTrips < Lanes)
      continue;
    LLVMContext &Ctx = F.getContext();
    MDNode *Width = MDNode::get(
        Ctx, {MDString::get(Ctx, WidthName),
              ConstantAsMetadata::get(
                  ConstantInt::get(Type::getInt32Ty(Ctx), Lanes))});
    L->setLoopID(
        makePostTransformationMetadata(Ctx, L->getLoopID(), {}, {Width}));
    Changed = true;
  }
  if (!Changed)
    return PreservedAnalyses::all();
  PreservedAnalyses PA; // only metadata changed
  PA.preserveSet<CFGAnalyses>();
  return PA;
}
