//===- BlendScratchStores.cpp - Masked stores to scratch as blends --------===//
//
// See BlendScratchStores.h.
//
//===----------------------------------------------------------------------===//

#include "BlendScratchStores.h"
#include "TargetArch.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCSchedule.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <mutex>

using namespace llvm;

bool kiln::maskedStoresAreMicrocoded(const TargetMachine &TM,
                                     const Function &F) {
  return targetArchOf(TM).maskedStoresAreMicrocoded(TM, F);
}

PreservedAnalyses kiln::BlendScratchStoresPass::run(Function &F,
                                                    FunctionAnalysisManager &) {
  Attribute BytesAttr = F.getFnAttribute(ScratchBytesAttr);
  uint64_t ScratchBytes = 0;
  if (!BytesAttr.isStringAttribute() || F.arg_size() < 4 ||
      BytesAttr.getValueAsString().getAsInteger(10, ScratchBytes) ||
      ScratchBytes == 0 || !maskedStoresAreMicrocoded(TM, F))
    return PreservedAnalyses::all();
  Argument *Scratch = F.getArg(3);
  const DataLayout &DL = F.getDataLayout();

  SmallVector<IntrinsicInst *, 16> Stores;
  for (BasicBlock &BB : F)
    for (Instruction &I : BB)
      if (auto *II = dyn_cast<IntrinsicInst>(&I))
        if (II->getIntrinsicID() == Intrinsic::masked_store &&
            getUnderlyingObject(II->getArgOperand(1), 0) == Scratch)
          Stores.push_back(II);
  bool Changed = false;
  for (IntrinsicInst *MS : Stores) {
    Value *Val = MS->getArgOperand(0), *Ptr = MS->getArgOperand(1);
    Value *Mask = MS->getArgOperand(3);
    Align A = cast<ConstantInt>(MS->getArgOperand(2))->getAlignValue();
    uint64_t VecBytes = DL.getTypeStoreSize(Val->getType());
    if (VecBytes > ScratchBytes)
      continue;
    IRBuilder<> B(MS);
    // Offset <= bytes - width, unsigned: a pointer below the area wraps to a
    // huge offset and takes the masked store.
    Value *Offset = B.CreateSub(B.CreatePtrToInt(Ptr, B.getInt64Ty()),
                                B.CreatePtrToInt(Scratch, B.getInt64Ty()));
    Value *Inside = B.CreateICmpULE(Offset, B.getInt64(ScratchBytes - VecBytes),
                                    "scratch.inside");
    Instruction *Then, *Else;
    SplitBlockAndInsertIfThenElse(Inside, MS, &Then, &Else);
    B.SetInsertPoint(Then);
    LoadInst *Old = B.CreateAlignedLoad(Val->getType(), Ptr, A, "scratch.old");
    StoreInst *New =
        B.CreateAlignedStore(B.CreateSelect(Mask, Val, Old), Ptr, A);
    // The same memory as the masked store: its alias scopes and access group.
    for (Instruction *I : {static_cast<Instruction *>(Old),
                           static_cast<Instruction *>(New)})
      I->copyMetadata(*MS, {LLVMContext::MD_alias_scope,
                            LLVMContext::MD_noalias,
                            LLVMContext::MD_access_group});
    MS->moveBefore(Else);
    Changed = true;
  }
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
