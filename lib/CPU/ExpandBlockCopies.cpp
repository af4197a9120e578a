//===- ExpandBlockCopies.cpp - Fixed-size copies and fills as loops -------===//
//
// See ExpandBlockCopies.h.
//
//===----------------------------------------------------------------------===//

#include "ExpandBlockCopies.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Support/Alignment.h"

using namespace llvm;

namespace {

/// Gives a move made for \p From the same aliasing metadata.
void copyAliasMetadata(const Instruction &From, Instruction &To) {
  for (unsigned Kind : {LLVMContext::MD_alias_scope, LLVMContext::MD_noalias,
                        LLVMContext::MD_tbaa})
    if (MDNode *N = From.getMetadata(Kind))
      To.setMetadata(Kind, N);
}

/// Replaces \p Intrinsic (a memcpy or memset of \p Length bytes) by a loop
/// of \p VectorBytes-byte moves and an inline tail.
void expand(MemIntrinsic &Intrinsic, uint64_t Length, uint64_t VectorBytes) {
  LLVMContext &Ctx = Intrinsic.getContext();
  Type *I64 = Type::getInt64Ty(Ctx);
  auto *VecTy = FixedVectorType::get(Type::getInt8Ty(Ctx), VectorBytes);
  auto *Copy = dyn_cast<MemCpyInst>(&Intrinsic);
  auto *Fill = dyn_cast<MemSetInst>(&Intrinsic);
  Value *Dst = Intrinsic.getRawDest();
  Value *Src = Copy ? Copy->getRawSource() : nullptr;
  Align DstAlign = Intrinsic.getDestAlign().valueOrOne();
  Align SrcAlign = Copy ? Copy->getSourceAlign().valueOrOne() : Align(1);
  uint64_t Body = Length / VectorBytes * VectorBytes;

  BasicBlock *Pre = Intrinsic.getParent();
  BasicBlock *Exit = Pre->splitBasicBlock(&Intrinsic, "block.copy.exit");
  Function *F = Pre->getParent();
  BasicBlock *Loop = BasicBlock::Create(Ctx, "block.copy", F, Exit);
  Pre->getTerminator()->setSuccessor(0, Loop);

  // A fill value that is not a constant is splatted once, before the loop:
  // in the loop the splat's instructions would come before its phi.
  Value *Splat = nullptr;
  if (Fill)
    Splat = IRBuilder<>(Pre->getTerminator())
                .CreateVectorSplat(VectorBytes, Fill->getValue());
  IRBuilder<> B(Loop);
  PHINode *Offset = B.CreatePHI(I64, 2, "block.offset");
  Offset->addIncoming(ConstantInt::get(I64, 0), Pre);
  // Offsets are multiples of VectorBytes: each move is as aligned as the
  // block's start, up to a vector.
  Align VecAlign(VectorBytes);
  Value *Moved = Splat;
  if (Copy) {
    LoadInst *Load =
        B.CreateAlignedLoad(VecTy, B.CreateInBoundsGEP(B.getInt8Ty(), Src, Offset),
                            std::min(SrcAlign, VecAlign));
    copyAliasMetadata(Intrinsic, *Load);
    Moved = Load;
  }
  StoreInst *Store = B.CreateAlignedStore(
      Moved, B.CreateInBoundsGEP(B.getInt8Ty(), Dst, Offset),
      std::min(DstAlign, VecAlign));
  copyAliasMetadata(Intrinsic, *Store);
  Value *Next = B.CreateNUWAdd(Offset, ConstantInt::get(I64, VectorBytes));
  Offset->addIncoming(Next, Loop);
  B.CreateCondBr(B.CreateICmpULT(Next, ConstantInt::get(I64, Body)), Loop,
                 Exit);

  if (uint64_t Tail = Length - Body) {
    IRBuilder<> T(&Intrinsic);
    Value *TailDst = T.CreateConstInBoundsGEP1_64(T.getInt8Ty(), Dst, Body);
    Align TailDstAlign = commonAlignment(DstAlign, Body);
    CallInst *Rest;
    if (Copy)
      Rest = T.CreateMemCpyInline(
          TailDst, TailDstAlign,
          T.CreateConstInBoundsGEP1_64(T.getInt8Ty(), Src, Body),
          commonAlignment(SrcAlign, Body), T.getInt64(Tail));
    else
      Rest = T.CreateMemSetInline(TailDst, TailDstAlign, Fill->getValue(),
                                  T.getInt64(Tail));
    copyAliasMetadata(Intrinsic, *Rest);
  }
  Intrinsic.eraseFromParent();
}

} // namespace

PreservedAnalyses kiln::ExpandBlockCopiesPass::run(Function &F,
                                                   FunctionAnalysisManager &AM) {
  SmallVector<std::pair<MemIntrinsic *, uint64_t>, 4> Blocks;
  uint64_t VectorBytes = 0;
  for (Instruction &I : instructions(F)) {
    auto *MI = dyn_cast<MemIntrinsic>(&I);
    if (!MI || MI->isVolatile() || !(isa<MemCpyInst>(MI) || isa<MemSetInst>(MI)))
      continue;
    // memcpy.inline and memset.inline are code generation's to expand.
    if (isa<MemCpyInlineInst>(MI) || isa<MemSetInlineInst>(MI))
      continue;
    auto *Length = dyn_cast<ConstantInt>(MI->getLength());
    if (!Length)
      continue;
    if (!VectorBytes) {
      const TargetTransformInfo &TTI = AM.getResult<TargetIRAnalysis>(F);
      VectorBytes = std::max<uint64_t>(
          TTI.getRegisterBitWidth(TargetTransformInfo::RGK_FixedWidthVector)
                  .getFixedValue() /
              8,
          16);
    }
    if (Length->getZExtValue() > ExpandedCopyMinVectors * VectorBytes)
      Blocks.push_back({MI, Length->getZExtValue()});
  }
  for (auto [MI, Length] : Blocks)
    expand(*MI, Length, VectorBytes);
  return Blocks.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}
