//===- SerialProductScans.cpp - 64-bit product scans as loops -------------===//
//
// See SerialProductScans.h.
//
//===----------------------------------------------------------------------===//

#include "SerialProductScans.h"

#include "KeepLoop.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ValueHandle.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

namespace {

/// The scan's input when \p Last heads the tagged shape, else null.
Value *scanInput(Instruction &Last) {
  auto *VT = dyn_cast<FixedVectorType>(Last.getType());
  if (!VT || !VT->getElementType()->isIntegerTy(64) ||
      !isPowerOf2_32(VT->getNumElements()))
    return nullptr;
  Value *V = &Last;
  for (unsigned Step = 0; Step < Log2_32(VT->getNumElements()); ++Step) {
    auto *Mul = dyn_cast<BinaryOperator>(V);
    if (!Mul || Mul->getOpcode() != Instruction::Mul)
      return nullptr;
    auto *Shift = dyn_cast<ShuffleVectorInst>(Mul->getOperand(0));
    if (!Shift || Shift->getOperand(0) != Mul->getOperand(1))
      return nullptr;
    V = Mul->getOperand(1);
  }
  return V;
}

/// Whether \p F's target runs the log2(P) vector steps of a <P x i64>
/// product scan slower than P - 1 dependent scalar multiplies.
bool loopIsCheaper(const TargetTransformInfo &TTI, FixedVectorType *VT) {
  unsigned Lanes = VT->getNumElements();
  InstructionCost Steps =
      TTI.getArithmeticInstrCost(Instruction::Mul, VT,
                                 TargetTransformInfo::TCK_RecipThroughput) *
      Log2_32(Lanes);
  InstructionCost Chain =
      TTI.getArithmeticInstrCost(Instruction::Mul, VT->getElementType(),
                                 TargetTransformInfo::TCK_Latency) *
      (Lanes - 1);
  return Steps.isValid() && Chain.isValid() && Steps > Chain;
}

/// Replaces the scan ending at \p Last (of \p Input) by a loop over a stack
/// copy of the lanes: lane i becomes lane i - 1's product times lane i.
void serialize(Instruction &Last, Value *Input) {
  Function &F = *Last.getFunction();
  auto *VT = cast<FixedVectorType>(Last.getType());
  Type *I64 = VT->getElementType();
  IRBuilder<> B(&*F.getEntryBlock().getFirstInsertionPt());
  AllocaInst *Lanes = B.CreateAlloca(VT, nullptr, "plane.prod");

  BasicBlock *Pre = Last.getParent();
  BasicBlock *End = Pre->splitBasicBlock(Last.getIterator(), "plane.prod.end");
  BasicBlock *Head = BasicBlock::Create(F.getContext(), "plane.prod.head", &F, End);
  BasicBlock *Body = BasicBlock::Create(F.getContext(), "plane.prod.body", &F, End);
  Pre->getTerminator()->eraseFromParent();
  B.SetInsertPoint(Pre);
  B.CreateStore(Input, Lanes);
  Value *First = B.CreateExtractElement(Input, uint64_t(0));
  B.CreateBr(Head);

  B.SetInsertPoint(Head);
  PHINode *Lane = B.CreatePHI(B.getInt32Ty(), 2, "plane.prod.lane");
  PHINode *Acc = B.CreatePHI(I64, 2, "plane.prod.acc");
  Lane->addIncoming(B.getInt32(1), Pre);
  Acc->addIncoming(First, Pre);
  B.CreateCondBr(B.CreateICmpULT(Lane, B.getInt32(VT->getNumElements())),
                 Body, End);

  B.SetInsertPoint(Body);
  Value *Slot = B.CreateInBoundsGEP(I64, Lanes, Lane);
  Value *Next = B.CreateMul(Acc, B.CreateLoad(I64, Slot));
  B.CreateStore(Next, Slot);
  Lane->addIncoming(B.CreateAdd(Lane, B.getInt32(1)), Body);
  Acc->addIncoming(Next, Body);
  kiln::keepLoop(B.CreateBr(Head));

  B.SetInsertPoint(End, End->begin());
  Last.replaceAllUsesWith(B.CreateLoad(VT, Lanes, "plane.prod.scan"));
  RecursivelyDeleteTriviallyDeadInstructions(&Last);
}

} // namespace

unsigned kiln::serializeProductScans(Module &M, TargetMachine &TM) {
  unsigned Replaced = 0;
  for (Function &F : M) {
    SmallVector<WeakTrackingVH, 4> Scans;
    for (Instruction &I : instructions(F))
      if (I.getMetadata(ProductScanTag))
        Scans.push_back(&I);
    if (Scans.empty())
      continue;
    TargetTransformInfo TTI = TM.getTargetTransformInfo(F);
    for (WeakTrackingVH &Tagged : Scans) {
      // The input is found again for each scan: rewriting an earlier one
      // deletes its steps, which a later scan's input could have been.
      auto *Last = dyn_cast_or_null<Instruction>(Tagged);
      if (!Last)
        continue;
      Last->setMetadata(ProductScanTag, nullptr); // decided
      Value *Input = scanInput(*Last);
      if (Input && loopIsCheaper(TTI, cast<FixedVectorType>(Last->getType()))) {
        serialize(*Last, Input);
        ++Replaced;
      }
    }
  }
  return Replaced;
}
