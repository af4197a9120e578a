//===- UniformGathers.cpp - Masked gathers from one address ---------------===//
//
// See UniformGathers.h.
//
//===----------------------------------------------------------------------===//

#include "UniformGathers.h"

#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

using namespace llvm;

PreservedAnalyses kiln::UniformGathersPass::run(Function &F,
                                                FunctionAnalysisManager &) {
  SmallVector<IntrinsicInst *, 8> Gathers;
  for (Instruction &I : instructions(F))
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      if (II->getIntrinsicID() == Intrinsic::masked_gather &&
          getSplatValue(II->getArgOperand(0)))
        Gathers.push_back(II);
  for (IntrinsicInst *G : Gathers) {
    Value *Ptr = getSplatValue(G->getArgOperand(0));
    auto *VecTy = cast<FixedVectorType>(G->getType());
    Align Alignment = cast<ConstantInt>(G->getArgOperand(1))->getAlignValue();
    Value *Mask = G->getArgOperand(2), *PassThru = G->getArgOperand(3);
    IRBuilder<> B(G);
    Type *ElemTy = VecTy->getElementType();
    Value *V;
    auto Load = [&]() {
      LoadInst *L = B.CreateAlignedLoad(ElemTy, Ptr, Alignment,
                                        G->getName() + ".uniform");
      L->setAAMetadata(G->getAAMetadata());
      L->copyMetadata(*G, {LLVMContext::MD_access_group});
      return L;
    };
    if (auto *C = dyn_cast<Constant>(Mask); C && C->isAllOnesValue()) {
      V = Load();
    } else {
      // The load only where some lane asks for it: an address no active
      // lane reads may be past the end of its buffer.
      Value *Any = B.CreateOrReduce(Mask);
      BasicBlock *Head = G->getParent();
      Instruction *ThenTerm = SplitBlockAndInsertIfThen(Any, G, false);
      B.SetInsertPoint(ThenTerm);
      LoadInst *L = Load();
      B.SetInsertPoint(G);
      PHINode *Phi = B.CreatePHI(ElemTy, 2);
      Phi->addIncoming(L, ThenTerm->getParent());
      Phi->addIncoming(PoisonValue::get(ElemTy), Head);
      V = Phi;
    }
    Value *Splat = B.CreateVectorSplat(VecTy->getElementCount(), V);
    Value *R = B.CreateSelect(Mask, Splat, PassThru);
    R->takeName(G);
    G->replaceAllUsesWith(R);
    G->eraseFromParent();
  }

  // Scatters to one address: the lanes store in order, so the last active
  // lane's value is what memory keeps.
  SmallVector<IntrinsicInst *, 8> Scatters;
  for (Instruction &I : instructions(F))
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      if (II->getIntrinsicID() == Intrinsic::masked_scatter &&
          getSplatValue(II->getArgOperand(1)))
        Scatters.push_back(II);
  for (IntrinsicInst *S : Scatters) {
    Value *Val = S->getArgOperand(0);
    Value *Ptr = getSplatValue(S->getArgOperand(1));
    Align Alignment = cast<ConstantInt>(S->getArgOperand(2))->getAlignValue();
    Value *Mask = S->getArgOperand(3);
    auto *VecTy = cast<FixedVectorType>(Val->getType());
    unsigned N = VecTy->getNumElements();
    IRBuilder<> B(S);
    auto Store = [&](Value *Lane) {
      StoreInst *St = B.CreateAlignedStore(B.CreateExtractElement(Val, Lane),
                                           Ptr, Alignment);
      St->setAAMetadata(S->getAAMetadata());
      St->copyMetadata(*S, {LLVMContext::MD_access_group});
    };
    if (auto *C = dyn_cast<Constant>(Mask); C && C->isAllOnesValue()) {
      Store(B.getInt32(N - 1));
    } else if (N <= 64) {
      // The store only where some lane is active: an address no active
      // lane writes may be past the end of its buffer.
      Value *Bits = B.CreateBitCast(Mask, B.getIntNTy(N));
      Value *Any = B.CreateICmpNE(Bits, ConstantInt::get(Bits->getType(), 0));
      Instruction *ThenTerm = SplitBlockAndInsertIfThen(Any, S, false);
      B.SetInsertPoint(ThenTerm);
      Value *Lead = B.CreateBinaryIntrinsic(Intrinsic::ctlz, Bits,
                                            B.getTrue()); // Bits != 0
      Value *Last = B.CreateSub(ConstantInt::get(Bits->getType(), N - 1), Lead);
      Store(B.CreateZExtOrTrunc(Last, B.getInt32Ty()));
    } else {
      continue;
    }
    S->eraseFromParent();
  }
  return Gathers.empty() && Scatters.empty() ? PreservedAnalyses::all()
                                             : PreservedAnalyses::none();
}
