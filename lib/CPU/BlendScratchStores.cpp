//===- BlendScratchStores.cpp - Masked stores to scratch as blends --------===//
//
// See BlendScratchStores.h.
//
//===----------------------------------------------------------------------===//

#include "BlendScratchStores.h"

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

namespace {

/// The opcode named \p Name in \p MII, or 0. A linear search of some
/// 20,000 names: done once per CPU and feature string (below).
unsigned opcodeNamed(const MCInstrInfo &MII, StringRef Name) {
  for (unsigned Op = 1, E = MII.getNumOpcodes(); Op < E; ++Op)
    if (MII.getName(Op) == Name)
      return Op;
  return 0;
}

/// Micro-ops of a 256-bit `vmaskmovps` store on \p STI, 0 when unknown.
unsigned maskedStoreMicroOps(const MCSubtargetInfo &STI,
                             const MCInstrInfo &MII) {
  const MCSchedModel &SM = STI.getSchedModel();
  if (!SM.hasInstrSchedModel())
    return 0;
  unsigned Op = opcodeNamed(MII, "VMASKMOVPSYmr");
  if (!Op)
    return 0;
  const MCSchedClassDesc *SC =
      SM.getSchedClassDesc(MII.get(Op).getSchedClass());
  if (!SC || !SC->isValid() || SC->isVariant())
    return 0;
  return SC->NumMicroOps;
}

} // namespace

bool kiln::maskedStoresAreMicrocoded(const TargetMachine &TM,
                                     const Function &F) {
  if (!TM.getTargetTriple().isX86())
    return false;
  const TargetSubtargetInfo *ST = TM.getSubtargetImpl(F);
  const MCInstrInfo *MII = TM.getMCInstrInfo();
  if (!ST || !MII || ST->checkFeatures("+avx512f") ||
      !ST->checkFeatures("+avx"))
    return false;
  // The answer depends only on the CPU and features: cached, as compiles
  // run on many threads.
  static std::mutex Lock;
  static StringMap<bool> Known;
  std::string Key = (ST->getCPU() + "|" + ST->getFeatureString()).str();
  std::lock_guard<std::mutex> L(Lock);
  auto It = Known.find(Key);
  if (It != Known.end())
    return It->second;
  bool Expensive = maskedStoreMicroOps(*ST, *MII) > 4;
  Known[Key] = Expensive;
  return Expensive;
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
