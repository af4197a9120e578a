//===- StreamingUnroll.cpp - 8 vectors an iteration of a stream ----------===//
//
// See StreamingUnroll.h.
//
//===----------------------------------------------------------------------===//

#include "StreamingUnroll.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Metadata.h"

using namespace llvm;
using namespace kiln;

namespace {

/// A longer body is not a streaming loop: LLVM would not unroll it 16 times
/// in any case, and a forced count would only cost code and compile time.
constexpr unsigned MaxBodyInstructions = 32;

constexpr StringLiteral FollowupName =
    "llvm.loop.vectorize.followup_vectorized";
constexpr StringLiteral UnrollCountName = "llvm.loop.unroll.count";

/// Whether \p Ptr addresses a buffer: its base object is a pointer loaded
/// from memory (the launch's argument table), not the scratch argument, an
/// alloca, or a choice between several bases; and the address is computed
/// in the loop from nothing loaded there (a gather's or scatter's index is:
/// its vector form is one scalar access per lane, which 8 copies would
/// multiply).
bool addressesBuffer(const Loop &L, const Value *Ptr) {
  if (!isa<LoadInst>(getUnderlyingObject(Ptr)))
    return false;
  SmallVector<const Value *, 8> Work{Ptr};
  SmallPtrSet<const Value *, 16> Seen;
  while (!Work.empty()) {
    const auto *I = dyn_cast<Instruction>(Work.pop_back_val());
    if (!I || !L.contains(I) || !Seen.insert(I).second)
      continue;
    if (isa<LoadInst>(I) || isa<CallBase>(I))
      return false;
    if (isa<PHINode>(I))
      continue; // the induction variable
    append_range(Work, I->operands());
  }
  return true;
}

bool streams(const Loop &L) {
  unsigned Count = 0, Stores = 0;
  for (const BasicBlock *BB : L.blocks())
    for (const Instruction &I : *BB) {
      if (isa<PHINode>(I) || I.isTerminator() || I.isDebugOrPseudoInst())
        continue;
      if (++Count > MaxBodyInstructions)
        return false;
      if (I.isAtomic() || isa<FenceInst>(I))
        return false;
      if (const auto *Call = dyn_cast<CallBase>(&I)) {
        if (!isa<IntrinsicInst>(Call) || Call->mayReadOrWriteMemory())
          return false;
        continue;
      }
      if (const auto *Load = dyn_cast<LoadInst>(&I)) {
        if (!addressesBuffer(L, Load->getPointerOperand()))
          return false;
      } else if (const auto *Store = dyn_cast<StoreInst>(&I)) {
        if (!addressesBuffer(L, Store->getPointerOperand()))
          return false;
        ++Stores;
      } else if (I.mayReadOrWriteMemory()) {
        return false;
      }
    }
  return Stores > 0;
}

/// \p L's ID with \p Count added to its followup for the vectorised loop,
/// or null when it has no such followup or the followup already sets an
/// unroll count.
MDNode *withCappedUnroll(const Loop &L, unsigned Count) {
  MDNode *Followup = findOptionMDForLoopID(L.getLoopID(), FollowupName);
  if (!Followup)
    return nullptr;
  // The followup's operands after its name are attribute nodes.
  auto IsCount = [](const MDOperand &Op) {
    auto *Node = dyn_cast<MDNode>(Op.get());
    auto *Name = Node && Node->getNumOperands()
                     ? dyn_cast<MDString>(Node->getOperand(0))
                     : nullptr;
    return Name && Name->getString() == UnrollCountName;
  };
  if (any_of(drop_begin(Followup->operands()), IsCount))
    return nullptr;
  LLVMContext &Ctx = Followup->getContext();
  SmallVector<Metadata *, 4> FollowupOps(Followup->op_begin(),
                                         Followup->op_end());
  FollowupOps.push_back(MDNode::get(
      Ctx, {MDString::get(Ctx, UnrollCountName),
            ConstantAsMetadata::get(
                ConstantInt::get(Type::getInt32Ty(Ctx), Count))}));
  return makePostTransformationMetadata(Ctx, L.getLoopID(), {FollowupName},
                                        {MDNode::get(Ctx, FollowupOps)});
}

} // namespace

PreservedAnalyses StreamingUnrollPass::run(Function &F,
                                           FunctionAnalysisManager &AM) {
  auto &LI = AM.getResult<LoopAnalysis>(F);
  auto &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
  bool Changed = false;
  for (Loop *L : LI.getLoopsInPreorder()) {
    // A constant unit count (a whole cube's units): the vectorised loop has
    // no remainder to run, and a count of 8 divides its iterations or
    // unrolls it fully. A narrowed loop's variable count would leave the
    // vectorised epilogue, which takes the same followup, 8 copies of an
    // iteration that runs once.
    if (!L->isInnermost() || SE.getSmallConstantTripCount(L) == 0 ||
        !streams(*L))
      continue;
    if (MDNode *NewID = withCappedUnroll(*L, StreamingUnrollCount)) {
      L->setLoopID(NewID);
      Changed = true;
    }
  }
  if (!Changed)
    return PreservedAnalyses::all();
  // Only metadata changed.
  PreservedAnalyses PA;
  PA.preserveSet<CFGAnalyses>();
  return PA;
}
