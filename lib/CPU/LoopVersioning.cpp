//===- LoopVersioning.cpp - Unit loops without bounds checks when safe ----===//
//
// In the bounds-checked variant every access of a unit loop is guarded, and
// the vectoriser turns the guards into masked loads and stores, which cost
// as much as the memory traffic (docs/Lowering.md §13, fix 3). Most cubes
// access only in-bounds elements, and most
// indices rise with the unit (absolute_pos + a uniform offset), so an
// innermost unit loop whose guarded indices are affine in the unit with a
// non-negative constant step gets a twin without those guards, entered when a
// check before the loop finds the *last* unit's index of each of them in
// bounds (then every unit's is). Any other guard stays in both loops.
//
//===----------------------------------------------------------------------===//

#include "LoopVersioning.h"

#include "ScalarFallbackLoops.h"
#include "UnitLoop.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

namespace {

/// The closest enclosing unit loop of \p BB.
llvm::Loop *unitLoopOf(llvm::LoopInfo &LI, llvm::BasicBlock *BB) {
  for (llvm::Loop *L = LI.getLoopFor(BB); L; L = L->getParentLoop())
    if (isUnitLoop(L))
      return L;
  return nullptr;
}

/// Whether every value defined in \p L is used only inside it and its exit
/// block has no phi: then the twin can share the exit unchanged.
bool isSelfContained(const llvm::Loop *L) {
  llvm::BasicBlock *Exit = L->getExitBlock();
  if (!Exit || llvm::isa<llvm::PHINode>(Exit->begin()))
    return false;
  for (llvm::BasicBlock *BB : L->blocks())
    for (llvm::Instruction &I : *BB)
      for (llvm::User *U : I.users())
        if (!L->contains(llvm::cast<llvm::Instruction>(U)->getParent()))
          return false;
  return true;
}

} // namespace

void kiln::lowering::versionUnitLoops(
    llvm::Function &Fn, llvm::ArrayRef<BoundsGuard> Guards,
    llvm::ArrayRef<llvm::BasicBlock *> InnerUnitHeaders) {
  llvm::Function *F = &Fn;
  llvm::Module *M = F->getParent();
  llvm::LLVMContext &Ctx = F->getContext();
  llvm::Type *I32 = llvm::Type::getInt32Ty(Ctx);
  llvm::Type *I64 = llvm::Type::getInt64Ty(Ctx);
  llvm::Triple TT(M->getTargetTriple());
  llvm::TargetLibraryInfoImpl TLII(TT);
  llvm::TargetLibraryInfo TLI(TLII);
  const llvm::DataLayout &DL = M->getDataLayout();
  // One dominator tree and loop forest for the whole function, kept up to
  // date as each twin is made: building them afresh for every loop made
  // this quadratic in the number of unit loops (a kernel of 400 barriers
  // spent a second here). ScalarEvolution is lazy and cheap to make, so
  // each loop gets a fresh one over the updated analyses.
  // The assumption cache too: a fresh one scans the whole function again
  // on its first query, once for every loop. The lowering's assumptions
  // are all in the entry block; any in a twin is registered as it is made.
  llvm::DominatorTree DT(*F);
  llvm::LoopInfo LI(DT);
  llvm::AssumptionCache AC(*F);
  for (llvm::BasicBlock *Header : InnerUnitHeaders) {
    llvm::ScalarEvolution SE(*F, TLI, AC, DT, LI);
    llvm::Loop *L = LI.getLoopFor(Header);
    if (!L || L->getHeader() != Header || !isUnitLoop(L) ||
        !L->getLoopPreheader() || !isSelfContained(L))
      continue;
    // A narrowed loop (a range [Begin, End) of units) has no constant trip
    // count, but a largest one: checking the index of that last possible
    // unit is enough, as the indices only rise with the unit.
    unsigned Trips = SE.getSmallConstantTripCount(L);
    if (Trips == 0)
      Trips = SE.getSmallConstantMaxTripCount(L);
    if (Trips == 0)
      continue;
    llvm::BasicBlock *Pre = L->getLoopPreheader();
    llvm::Instruction *At = Pre->getTerminator();

    // The provable conditions of this loop: an unsigned `I < Bound` with I
    // {Start,+,Step} over the loop (or invariant in it), Step a constant in
    // [0, 2^32) and Bound invariant. They are the bounds checks, and the
    // kernel's own `lt` of such an index against a uniform value (vadd's
    // `if %i < %n`), which masks the same way.
    struct Proven {
      llvm::Instruction *Check;
      const llvm::SCEV *Start;
      uint64_t Step;
      Value *Count;            ///< i64 bound, dominating the loop, or null
      const llvm::SCEV *Bound; ///< else the i32 bound, expanded before it
      bool Signed;
      /// For a wrap condition (Count 2^32): the zero extension of the index
      /// that the twin computes in 64 bits instead.
      llvm::ZExtInst *Widen = nullptr;
    };
    llvm::SCEVExpander Exp(SE, DL, "bounds");
    auto affine = [&](Value *Index, const llvm::SCEV *&Start, uint64_t &Step) {
      const llvm::SCEV *S = SE.getSCEV(Index);
      Step = 0;
      if (SE.isLoopInvariant(S, L)) {
        Start = S;
      } else if (auto *AR = llvm::dyn_cast<llvm::SCEVAddRecExpr>(S)) {
        auto *C = llvm::dyn_cast<llvm::SCEVConstant>(AR->getStepRecurrence(SE));
        if (AR->getLoop() != L || !AR->isAffine() || !C ||
            C->getAPInt().isNegative() || C->getAPInt().getActiveBits() > 32)
          return false;
        Start = AR->getStart();
        Step = C->getAPInt().getZExtValue();
      } else {
        return false;
      }
      return SE.isLoopInvariant(Start, L) && Exp.isSafeToExpandAt(Start, At);
    };
    llvm::SmallVector<Proven, 8> Found;
    llvm::SmallPtrSet<llvm::Instruction *, 16> IsGuard;
    for (const BoundsGuard &G : Guards) {
      IsGuard.insert(G.Check);
      const llvm::SCEV *Start;
      uint64_t Step;
      if (L->contains(G.Check->getParent()) &&
          unitLoopOf(LI, G.Check->getParent()) == L &&
          affine(G.Index32, Start, Step))
        Found.push_back({G.Check, Start, Step, G.Count, nullptr, G.Signed});
    }
    for (llvm::BasicBlock *BB : L->blocks()) {
      // Not a loop's own exit test: true for every unit but the last.
      if (unitLoopOf(LI, BB) != L || LI.getLoopFor(BB)->isLoopExiting(BB))
        continue;
      auto *Br = llvm::dyn_cast<llvm::BranchInst>(BB->getTerminator());
      auto *Cmp = Br && Br->isConditional()
                      ? llvm::dyn_cast<llvm::ICmpInst>(Br->getCondition())
                      : nullptr;
      if (!Cmp || IsGuard.count(Cmp) ||
          Cmp->getPredicate() != llvm::ICmpInst::ICMP_ULT ||
          !Cmp->getOperand(0)->getType()->isIntegerTy(32))
        continue;
      // Only bounds fixed for the launch (literals, parameters): a bound that
      // changes inside the cube, like reduce_sum's `%lid < %st` with `%st`
      // halving each step, is meant to hold for some units only, and a twin
      // for it would never run.
      Value *BoundV = Cmp->getOperand(1);
      auto *BoundI = llvm::dyn_cast<llvm::Instruction>(BoundV);
      if (!llvm::isa<llvm::Constant>(BoundV) &&
          !llvm::isa<llvm::Argument>(BoundV) &&
          !(BoundI && BoundI->getParent() == &F->getEntryBlock()))
        continue;
      const llvm::SCEV *Start, *Bound = SE.getSCEV(BoundV);
      uint64_t Step;
      if (affine(Cmp->getOperand(0), Start, Step) &&
          SE.isLoopInvariant(Bound, L) && Exp.isSafeToExpandAt(Bound, At))
        Found.push_back({Cmp, Start, Step, nullptr, Bound, false});
    }
    // Addresses whose 64-bit offset is the zero extension of a 32-bit index
    // that rises with the unit (every `u32` index: the kernel's arithmetic
    // wraps). The vectoriser can only prove that such an index does not wrap
    // inside a vector with a check of its own before every run of the loop
    // (one for each address, every row of a 2-D cube). The twin computes
    // these offsets in 64 bits instead, under the same condition as a
    // bounds check against 2^32: then no unit's index wraps.
    // Only where the loop runs once for each row of a 2-D cube. A 1-D
    // loop's own check runs once for the whole segment, and a twin for it
    // would cost compile time only; and where a 1-D loop gets a twin for
    // its bounds anyway, 64-bit offsets make softmax_rows' AVX2 code slower
    // (docs/Lowering.md §16, "Row versioning, library copies and 1-D
    // loops").
    Value *Wrap = llvm::ConstantInt::get(I64, 1ull << 32);
    bool WidenHere = L->getParentLoop() && isUnitLoop(L->getParentLoop());
    for (llvm::BasicBlock *BB : L->blocks()) {
      if (!WidenHere || LI.getLoopFor(BB) != L)
        continue;
      for (llvm::Instruction &I : *BB) {
        auto *Z = llvm::dyn_cast<llvm::ZExtInst>(&I);
        if (!Z || !Z->getSrcTy()->isIntegerTy(32) ||
            !Z->getDestTy()->isIntegerTy(64) ||
            llvm::none_of(Z->users(), [](const llvm::User *U) {
              return llvm::isa<llvm::GetElementPtrInst>(U);
            }))
          continue;
        const llvm::SCEV *Wide = SE.getSCEV(Z);
        if (llvm::isa<llvm::SCEVAddRecExpr>(Wide) ||
            SE.isLoopInvariant(Wide, L))
          continue; // affine in 64 bits already, or the same for every unit
        const llvm::SCEV *Start;
        uint64_t Step;
        if (affine(Z->getOperand(0), Start, Step) && Step != 0)
          Found.push_back({nullptr, Start, Step, Wrap, nullptr, false, Z});
      }
    }
    if (Found.empty())
      continue;

    // The last unit the loop runs: its backedge-taken count, when
    // ScalarEvolution has it as an expression of 32 bits at most that can
    // be computed before the loop (a narrowed loop's End - Begin - 1; a
    // constant otherwise). Else the largest count bounds it, which checks
    // the last unit that could run, not the last that does.
    const llvm::SCEV *Taken = SE.getBackedgeTakenCount(L);
    bool ExactTrips = !llvm::isa<llvm::SCEVCouldNotCompute>(Taken) &&
                      Taken->getType()->getIntegerBitWidth() <= 32 &&
                      Exp.isSafeToExpandAt(Taken, At);
    llvm::IRBuilder<> IB(At);
    Value *LastUnit = IB.getInt64(Trips - 1);
    if (ExactTrips) {
      Value *TakenV = Exp.expandCodeFor(Taken, Taken->getType(), At);
      IB.SetInsertPoint(At);
      LastUnit = IB.CreateZExt(TakenV, I64);
    }

    // All hold if, for each, Start + Step*LastUnit < Bound in 64 bits: the
    // i32 index of unit k is (Start + Step*k) mod 2^32, at most that sum,
    // which does not overflow 64 bits (the terms are below 2^32 and 2^64
    // - 2^33). A signed index is in bounds below min(Count, 2^31).
    //
    // In a 2-D cube the loop runs once for every row, and so would the
    // test. A condition whose Start is affine in the enclosing unit loop,
    // {S0, +, Outer step} over the rows (matmul's `row * N + t * 16`), is
    // tested once for all rows there instead: S0 + Outer step * last row +
    // Step * last unit < Bound, in 64 bits, bounds every row's sum. (Both
    // loops run at most 2^16 units, so the sum stays below 2^49.)
    //
    // A boxed nest (docs/Lowering.md §4) runs a range of rows and of units
    // that differs by cube: the last row and unit are then its exact
    // backedge-taken counts, computed before the outer loop, where
    // ScalarEvolution has them (the inner one the same for every row).
    // Both loops must still have a largest trip count of at most 2^16.
    llvm::Loop *Outer = L->getParentLoop();
    llvm::BasicBlock *OuterPre =
        Outer && isUnitLoop(Outer) ? Outer->getLoopPreheader() : nullptr;
    unsigned OuterTrips = OuterPre ? SE.getSmallConstantMaxTripCount(Outer) : 0;
    unsigned InnerTrips = SE.getSmallConstantMaxTripCount(L);
    constexpr unsigned MaxHoistedTrips = 1u << 16;
    llvm::Instruction *AtOuter = OuterPre ? OuterPre->getTerminator() : nullptr;
    auto takenBefore = [&](llvm::Loop *Of, unsigned MaxTrips) -> const
        llvm::SCEV * {
      const llvm::SCEV *T = SE.getBackedgeTakenCount(Of);
      if (!llvm::isa<llvm::SCEVCouldNotCompute>(T) &&
          T->getType()->getIntegerBitWidth() <= 64 &&
          SE.isLoopInvariant(T, Outer) && Exp.isSafeToExpandAt(T, AtOuter))
        return T;
      // Only a constant count is exact; a largest one bounds the units
      // that could run, which checks more than the loop reads.
      if (SE.getSmallConstantTripCount(Of) == MaxTrips)
        return SE.getConstant(I64, MaxTrips - 1);
      return nullptr;
    };
    const llvm::SCEV *OuterTaken = nullptr, *InnerTaken = nullptr;
    if (OuterTrips && OuterTrips <= MaxHoistedTrips && InnerTrips &&
        InnerTrips <= MaxHoistedTrips) {
      OuterTaken = takenBefore(Outer, OuterTrips);
      InnerTaken = takenBefore(L, InnerTrips);
    }
    bool CanHoist = OuterTaken && InnerTaken;
    Value *OuterLast = nullptr, *InnerLast = nullptr;
    if (CanHoist) {
      OuterLast = Exp.expandCodeFor(OuterTaken, OuterTaken->getType(), AtOuter);
      InnerLast = Exp.expandCodeFor(InnerTaken, InnerTaken->getType(), AtOuter);
      llvm::IRBuilder<> TB(AtOuter);
      OuterLast = TB.CreateZExtOrTrunc(OuterLast, I64);
      InnerLast = TB.CreateZExtOrTrunc(InnerLast, I64);
    }
    auto dominatesOuter = [&](Value *V) {
      auto *I = llvm::dyn_cast<llvm::Instruction>(V);
      return !I || DT.dominates(I, AtOuter);
    };
    llvm::IRBuilder<> OB(At);
    Value *NestIn = nullptr;
    Value *AllIn = IB.getTrue();
    llvm::DenseMap<const llvm::ZExtInst *, Value *> WideStart;
    for (const Proven &P : Found) {
      const llvm::SCEV *S0 = nullptr, *OuterStep = nullptr;
      if (CanHoist && (P.Count ? dominatesOuter(P.Count)
                               : SE.isLoopInvariant(P.Bound, Outer) &&
                                     Exp.isSafeToExpandAt(P.Bound, AtOuter))) {
        if (SE.isLoopInvariant(P.Start, Outer)) {
          S0 = P.Start;
          OuterStep = SE.getZero(P.Start->getType());
        } else if (auto *AR = llvm::dyn_cast<llvm::SCEVAddRecExpr>(P.Start);
                   AR && AR->getLoop() == Outer && AR->isAffine() &&
                   SE.isLoopInvariant(AR->getStepRecurrence(SE), Outer)) {
          S0 = AR->getStart();
          OuterStep = AR->getStepRecurrence(SE);
        }
        if (S0 && (!Exp.isSafeToExpandAt(S0, AtOuter) ||
                   !Exp.isSafeToExpandAt(OuterStep, AtOuter)))
          S0 = nullptr;
      }
      Value *Last, *Bound = P.Count;
      if (S0) {
        Value *S0V = Exp.expandCodeFor(S0, I32, AtOuter);
        Value *StepV = Exp.expandCodeFor(OuterStep, I32, AtOuter);
        if (!Bound)
          Bound = Exp.expandCodeFor(P.Bound, I32, AtOuter);
        OB.SetInsertPoint(AtOuter);
        Last = OB.CreateAdd(
            OB.CreateAdd(OB.CreateZExt(S0V, I64),
                         OB.CreateMul(OB.CreateZExt(StepV, I64), OuterLast,
                                      "", /*HasNUW=*/true),
                         "", /*HasNUW=*/true),
            OB.CreateMul(OB.getInt64(P.Step), InnerLast, "", /*HasNUW=*/true),
            "", /*HasNUW=*/true);
      } else {
        Value *Start = Exp.expandCodeFor(P.Start, I32, At);
        if (!Bound)
          Bound = Exp.expandCodeFor(P.Bound, I32, At);
        OB.SetInsertPoint(At);
        Last = OB.CreateAdd(OB.CreateZExt(Start, I64),
                            OB.CreateMul(OB.getInt64(P.Step), LastUnit, "",
                                         /*HasNUW=*/true));
      }
      Bound = OB.CreateZExt(Bound, I64);
      if (P.Signed)
        Bound = OB.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Bound,
                                         OB.getInt64(1ull << 31));
      Value *Holds = OB.CreateICmpULT(Last, Bound);
      if (S0)
        NestIn = NestIn ? OB.CreateAnd(NestIn, Holds) : Holds;
      else
        AllIn = IB.CreateAnd(AllIn, Holds);
      // The twin's 64-bit offsets start from the index of the loop's first
      // unit, computed once before it.
      if (P.Widen) {
        Value *Start = Exp.expandCodeFor(P.Start, I32, At);
        IB.SetInsertPoint(At);
        WideStart[P.Widen] = IB.CreateZExt(Start, I64, "wide.start");
      }
      IB.SetInsertPoint(At);
    }
    if (NestIn)
      AllIn = IB.CreateAnd(AllIn, NestIn);

    // Pre now ends in the check; the loop gets a preheader of its own, and
    // the twin is cloned before it.
    llvm::BasicBlock *PH =
        llvm::SplitBlock(Pre, At, &DT, &LI, nullptr, "unit.guarded.ph");
    llvm::ValueToValueMapTy VMap;
    llvm::SmallVector<llvm::BasicBlock *, 16> Blocks;
    llvm::Loop *Twin = llvm::cloneLoopWithPreheader(PH, Pre, L, VMap, ".inb",
                                                    &LI, &DT, Blocks);
    llvm::remapInstructionsInBlocks(Blocks, VMap);
    for (llvm::BasicBlock *BB : Blocks)
      for (llvm::Instruction &I : *BB)
        if (auto *A = llvm::dyn_cast<llvm::AssumeInst>(&I))
          AC.registerAssumption(A);
    llvm::Instruction *Old = Pre->getTerminator();
    IB.SetInsertPoint(Old);
    IB.CreateCondBr(AllIn, Twin->getLoopPreheader(), PH);
    Old->eraseFromParent();
    // The twin's blocks are in the tree already (under Pre); its edges out
    // of the loop are new ways into the original's exits.
    llvm::SmallPtrSet<llvm::BasicBlock *, 16> InTwin(Blocks.begin(),
                                                     Blocks.end());
    for (llvm::BasicBlock *BB : Blocks)
      for (llvm::BasicBlock *Succ : llvm::successors(BB))
        if (!InTwin.count(Succ))
          DT.insertEdge(BB, Succ);
    for (const Proven &P : Found)
      if (P.Check)
        llvm::cast<llvm::Instruction>(VMap[P.Check])
            ->replaceAllUsesWith(IB.getTrue());
    // The twin's offsets in 64 bits: {zext(Start), +, Step} over the twin,
    // which equals the zero extension there, as no index wraps.
    if (!WideStart.empty()) {
      llvm::ScalarEvolution TwinSE(*F, TLI, AC, DT, LI);
      llvm::SCEVExpander TwinExp(TwinSE, DL, "wide");
      for (const Proven &P : Found) {
        if (!P.Widen)
          continue;
        auto *Z = llvm::cast<llvm::ZExtInst>(VMap[P.Widen]);
        const llvm::SCEV *Offset = TwinSE.getAddRecExpr(
            TwinSE.getUnknown(WideStart[P.Widen]),
            TwinSE.getConstant(I64, P.Step), Twin, llvm::SCEV::FlagNUW);
        Value *W = TwinExp.expandCodeFor(Offset, I64, Z);
        Z->replaceAllUsesWith(W);
        Z->eraseFromParent();
      }
    }

    // Its own loop ID: two loops must not share one.
    llvm::MDNode *ID = L->getLoopID();
    llvm::SmallVector<llvm::Metadata *, 8> Ops;
    Ops.push_back(nullptr);
    for (unsigned I = 1; I < ID->getNumOperands(); ++I)
      Ops.push_back(ID->getOperand(I));
    llvm::MDNode *TwinID = llvm::MDNode::getDistinct(Ctx, Ops);
    TwinID->replaceOperandWith(0, TwinID);
    Twin->setLoopID(TwinID);

    // When every condition is a bounds check and the test above checked
    // the loop's last unit (its trip count is exact), the guarded loop runs
    // only for a cube whose last unit's index passes a buffer's end: the
    // cubes at a buffer's end, and launches that fault. It is marked to be
    // left scalar (ScalarFallbackLoops.h decides once the target is known).
    // A kernel's own condition (vadd's `if %i < %n`, a 2-D `%x < %w`) can
    // leave whole rows or columns of cubes on the guarded loop, and so can
    // a narrowed loop, whose test checks the last unit it could run rather
    // than the last it runs (reduce_plane's loop over 8 plane sums took
    // the guarded loop in every cube): those stay vectorised.
    // A test of wrap conditions alone fails only for indices within a
    // cube's units of 2^32, exact trip count or not; there the vectoriser's
    // own overflow check would have chosen its scalar loop as well.
    bool OnlyBoundsChecks = llvm::all_of(
        Found, [](const Proven &P) { return P.Count != nullptr; });
    bool OnlyWrapChecks = llvm::all_of(
        Found, [](const Proven &P) { return P.Widen != nullptr; });
    if ((OnlyBoundsChecks && ExactTrips) || OnlyWrapChecks)
      markScalarFallback(*L);
  }
}
