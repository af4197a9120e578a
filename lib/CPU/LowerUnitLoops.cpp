//===- LowerUnitLoops.cpp - Unit loop nests and the "returned" flags ------===//
//
// A segment becomes one loop nest over the units of the cube, z outermost and
// x innermost, with parallel-access and unroll metadata (docs/Lowering.md §4,
// §13 fix 2). Units that returned are skipped through their flag in scratch.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

void KernelLowering::emitCountedLoop(Value *Begin, Value *End,
                                     llvm::function_ref<void(Value *)> Body,
                                     const llvm::Twine &Name) {
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *Header = newBlock(Name + ".head");
  BasicBlock *BodyBB = newBlock(Name + ".body");
  BasicBlock *Exit = newBlock(Name + ".end");
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  llvm::PHINode *I = B.CreatePHI(Begin->getType(), 2, Name);
  I->addIncoming(Begin, Pre);
  B.CreateCondBr(B.CreateICmpULT(I, End), BodyBB, Exit);
  B.SetInsertPoint(BodyBB);
  Body(I);
  Value *Next = B.CreateAdd(I, llvm::ConstantInt::get(I->getType(), 1));
  I->addIncoming(Next, B.GetInsertBlock());
  B.CreateBr(Header);
  B.SetInsertPoint(Exit);
}

Value *KernelLowering::unitFinished(Value *U) {
  auto *L = B.CreateAlignedLoad(
      I8,
      B.CreateInBoundsGEP(I8, scratchPtr(Layout.FlagsOffset), B.CreateZExt(U, I64)),
      llvm::Align(1));
  tagScope(L, FlagScopeKey);
  return B.CreateICmpNE(L, B.getInt8(0));
}

Value *KernelLowering::firstActiveUnit() {
  if (!Layout.HasFlags)
    return B.getInt32(0);
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *Header = newBlock("active.scan");
  BasicBlock *Check = newBlock("active.check");
  BasicBlock *Next = newBlock("active.next");
  BasicBlock *Done = newBlock("active.done");
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  llvm::PHINode *I = B.CreatePHI(I32, 2, "first_active");
  I->addIncoming(B.getInt32(0), Pre);
  B.CreateCondBr(B.CreateICmpEQ(I, B.getInt32(Units)), Done, Check);
  B.SetInsertPoint(Check);
  B.CreateCondBr(unitFinished(I), Next, Done);
  B.SetInsertPoint(Next);
  I->addIncoming(B.CreateAdd(I, B.getInt32(1)), Next);
  B.CreateBr(Header);
  B.SetInsertPoint(Done);
  return I;
}

Value *KernelLowering::firstActiveOrSkip(BasicBlock *Skip) {
  if (!Layout.HasFlags)
    return B.getInt32(0);
  Value *First = firstActiveUnit();
  BasicBlock *Cont = newBlock("active");
  B.CreateCondBr(B.CreateICmpEQ(First, B.getInt32(Units)), Skip, Cont);
  B.SetInsertPoint(Cont);
  return First;
}

void KernelLowering::emitUnitLoop(llvm::ArrayRef<const Operation *> Ops) {
  emitUnitLoopWith([&] {
    for (const Operation *Op : Ops)
      lowerUnitOp(*Op);
  });
}

void KernelLowering::emitUnitLoopWith(llvm::function_ref<void()> Body) {
  SegValues.clear();
  SegmentHoistedJump = false;
  AccessGroup = llvm::MDNode::getDistinct(Ctx, {});
  // One loop per dimension of size > 1, z outermost, x innermost, so that
  // the loop the vectoriser sees runs over consecutive unit_pos.x (and
  // absolute_pos.x) with no division in the way.
  struct Level {
    unsigned Dim;
    llvm::PHINode *IV;
    BasicBlock *Body, *Latch, *Exit;
  };
  std::vector<Level> Levels;
  for (int D = 2; D >= 0; --D) {
    if (K.CubeDim[D] <= 1 && !(D == 0 && Levels.empty())) {
      UnitXYZ[D] = B.getInt32(0);
      continue;
    }
    BasicBlock *Pre = B.GetInsertBlock();
    Level L{unsigned(D), nullptr, newBlock("unit"), newBlock("unit.latch"),
            newBlock("unit.end")};
    B.CreateBr(L.Body);
    B.SetInsertPoint(L.Body);
    L.IV = B.CreatePHI(I32, 2, std::string("unit.") + "xyz"[D]);
    L.IV->addIncoming(B.getInt32(0), Pre);
    UnitXYZ[D] = L.IV;
    Levels.push_back(L);
  }
  uint32_t DX = K.CubeDim[0], DXY = K.CubeDim[0] * K.CubeDim[1];
  // Every unit index is below 2^31, so none of this wraps.
  Value *U = UnitXYZ[0];
  if (K.CubeDim[1] > 1)
    U = B.CreateAdd(U, B.CreateMul(UnitXYZ[1], B.getInt32(DX), "", true, true),
                    "", true, true);
  if (K.CubeDim[2] > 1)
    U = B.CreateAdd(U, B.CreateMul(UnitXYZ[2], B.getInt32(DXY), "", true, true),
                    "", true, true);
  if (llvm::isa<llvm::Instruction>(U))
    U->setName("u");
  Unit = U;
  UnitLatch = Levels.back().Latch;
  InnerUnitHeaders.push_back(Levels.back().Body);
  if (Layout.HasFlags) {
    // Units that returned skip the rest of the kernel.
    BasicBlock *Work = newBlock("unit.active");
    B.CreateCondBr(unitFinished(U), UnitLatch, Work);
    B.SetInsertPoint(Work);
  }
  Body();

  // The units of a segment are independent: vectorise without checks. No
  // llvm.loop.vectorize.enable: it vectorises nothing more here (measured on
  // the bench kernels) but makes LLVM print a warning to stderr for every
  // unit loop it cannot vectorise (atomics, libm calls), from inside a library.
  llvm::MDNode *Parallel = llvm::MDNode::get(
      Ctx,
      {llvm::MDString::get(Ctx, "llvm.loop.parallel_accesses"), AccessGroup});
  llvm::MDNode *Progress = llvm::MDNode::get(
      Ctx, {llvm::MDString::get(Ctx, "llvm.loop.mustprogress")});
  // No unrolling of a unit loop before the vectoriser has seen it: full
  // unrolling runs first and turned short unit loops (matmul's 16-unit rows)
  // into straight-line scalar code with a branch per bounds check, neither
  // vectorised nor cheap to compile (Loop Strength Reduction alone took a
  // third of the matmul's code generation). The vectorised loop gets a fresh
  // loop ID (followup) that allows unrolling again: fully unrolling it after
  // vectorisation is what drops reduce_sum's all-false masked iterations
  // (without the followup it ran 5x slower). docs/Lowering.md, "Performance
  // notes".
  llvm::MDNode *NoUnroll = llvm::MDNode::get(
      Ctx, {llvm::MDString::get(Ctx, "llvm.loop.unroll.disable")});
  llvm::MDNode *AfterVectorising = llvm::MDNode::get(
      Ctx, {llvm::MDString::get(Ctx, "llvm.loop.vectorize.followup_vectorized"),
            Progress});
  for (auto It = Levels.rbegin(); It != Levels.rend(); ++It) {
    if (!terminated())
      B.CreateBr(It->Latch);
    B.SetInsertPoint(It->Latch);
    Value *Next = B.CreateAdd(It->IV, B.getInt32(1), "", true, true);
    It->IV->addIncoming(Next, It->Latch);
    auto *Br =
        B.CreateCondBr(B.CreateICmpULT(Next, B.getInt32(K.CubeDim[It->Dim])),
                       It->Body, It->Exit);
    llvm::TempMDTuple Tmp = llvm::MDNode::getTemporary(Ctx, {});
    llvm::MDNode *LoopID = llvm::MDNode::getDistinct(
        Ctx, {Tmp.get(), Parallel, Progress, NoUnroll, AfterVectorising});
    LoopID->replaceOperandWith(0, LoopID);
    Br->setMetadata(llvm::LLVMContext::MD_loop, LoopID);
    B.SetInsertPoint(It->Exit);
  }

  Unit = nullptr;
  UnitLatch = nullptr;
  AccessGroup = nullptr;
  UnitXYZ[0] = UnitXYZ[1] = UnitXYZ[2] = nullptr;
  SegValues.clear();
  if (SegmentHoistedJump && !Loops.empty() && Loops.back().Hoisted) {
    // break/continue of a cube-level loop: uniform, so all units agreed.
    LoopTarget &T = Loops.back();
    BasicBlock *NoBreak = newBlock("nobreak");
    B.CreateCondBr(B.CreateLoad(I1, T.BreakFlag), T.Break, NoBreak);
    B.SetInsertPoint(NoBreak);
    BasicBlock *NoCont = newBlock("nocontinue");
    B.CreateCondBr(B.CreateLoad(I1, T.ContinueFlag), T.Continue, NoCont);
    B.SetInsertPoint(NoCont);
  }
  SegmentHoistedJump = false;
}

