//===- SignallingNaNMinMax.cpp - minNum of a signalling NaN ---------------===//
//
// See SignallingNaNMinMax.h.
//
//===----------------------------------------------------------------------===//

#include "SignallingNaNMinMax.h"
#include "TargetArch.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/CodeGen/AtomicExpandUtils.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

using namespace llvm;

namespace {

bool mayBeSignallingNaN(Value *V, const DataLayout &DL, Instruction *At) {
  return !computeKnownFPClass(V, DL, fcSNan, /*Depth=*/0, nullptr, nullptr, At)
              .isKnownNever(fcSNan);
}

/// AtomicExpand's compare-and-swap of the bit patterns (a float's cmpxchg
/// compares integers: a NaN in memory matches itself).
void createCmpXchg(IRBuilderBase &B, Value *Addr, Value *Loaded, Value *NewVal,
                   Align Alignment, AtomicOrdering Order, SyncScope::ID SSID,
                   Value *&Success, Value *&NewLoaded) {
  Type *ValueTy = NewVal->getType();
  Type *BitsTy = B.getIntNTy(ValueTy->getPrimitiveSizeInBits());
  Value *Pair = B.CreateAtomicCmpXchg(
      Addr, B.CreateBitCast(Loaded, BitsTy),
      B.CreateBitCast(NewVal, BitsTy), Alignment, Order,
      AtomicCmpXchgInst::getStrongestFailureOrdering(Order), SSID);
  Success = B.CreateExtractValue(Pair, 1, "success");
  NewLoaded = B.CreateBitCast(B.CreateExtractValue(Pair, 0, "newloaded"),
                              ValueTy);
}

bool isMinMax(const IntrinsicInst &II) {
  return II.getIntrinsicID() == Intrinsic::minnum ||
         II.getIntrinsicID() == Intrinsic::maxnum;
}

bool isMinMaxReduction(const IntrinsicInst &II) {
  return II.getIntrinsicID() == Intrinsic::vector_reduce_fmin ||
         II.getIntrinsicID() == Intrinsic::vector_reduce_fmax;
}

/// minnum(a, b) as minnum(isnan(a) ? b : a, isnan(b) ? a : b), each select
/// only where its operand may be a signalling NaN.
bool mendMinMax(IntrinsicInst &II, const DataLayout &DL) {
  Value *A = II.getArgOperand(0), *Bv = II.getArgOperand(1);
  bool MendA = mayBeSignallingNaN(A, DL, &II);
  bool MendB = mayBeSignallingNaN(Bv, DL, &II);
  if (!MendA && !MendB)
    return false;
  IRBuilder<> B(&II);
  if (MendA)
    II.setArgOperand(0, B.CreateSelect(B.CreateFCmpUNO(A, A), Bv, A,
                                       A->getName() + ".nonan"));
  if (MendB)
    II.setArgOperand(1, B.CreateSelect(B.CreateFCmpUNO(Bv, Bv), A, Bv,
                                       Bv->getName() + ".nonan"));
  return true;
}

/// The NaN lanes of a reduction's operand as quiet NaNs.
bool mendReduction(IntrinsicInst &II, const DataLayout &DL) {
  Value *V = II.getArgOperand(0);
  if (!mayBeSignallingNaN(V, DL, &II))
    return false;
  IRBuilder<> B(&II);
  Constant *QNaN = ConstantFP::getQNaN(V->getType());
  II.setArgOperand(0, B.CreateSelect(B.CreateFCmpUNO(V, V), QNaN, V,
                                     V->getName() + ".quiet"));
  return true;
}

} // namespace

bool kiln::giveMinMaxNoSignallingNaN(Function &F, const TargetMachine &TM) {
  if (F.isDeclaration() || !targetArchOf(TM).minMaxQuietsSignallingNaN())
    return false;
  bool Changed = false;
  // Atomics first: their loops' minnum then gets the rule of the others.
  SmallVector<AtomicRMWInst *, 4> Atomics;
  for (Instruction &I : instructions(F))
    if (auto *RMW = dyn_cast<AtomicRMWInst>(&I))
      if (RMW->getOperation() == AtomicRMWInst::FMin ||
          RMW->getOperation() == AtomicRMWInst::FMax)
        Atomics.push_back(RMW);
  for (AtomicRMWInst *RMW : Atomics)
    Changed |= expandAtomicRMWToCmpXchg(RMW, createCmpXchg);

  const DataLayout &DL = F.getParent()->getDataLayout();
  SmallVector<IntrinsicInst *, 16> Calls;
  for (Instruction &I : instructions(F))
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      if (isMinMax(*II) || isMinMaxReduction(*II))
        Calls.push_back(II);
  for (IntrinsicInst *II : Calls)
    Changed |= isMinMax(*II) ? mendMinMax(*II, DL) : mendReduction(*II, DL);
  return Changed;
}

PreservedAnalyses
kiln::SignallingNaNMinMaxPass::run(Function &F, FunctionAnalysisManager &) {
  return giveMinMaxNoSignallingNaN(F, TM) ? PreservedAnalyses::none()
                                          : PreservedAnalyses::all();
}
