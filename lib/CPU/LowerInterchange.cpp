//===- LowerInterchange.cpp - Emission of interchanged `for` loops --------===//
//
// A per-unit `for` chosen by LoopInterchange.h runs as rounds at cube level,
// a unit loop per round (docs/Lowering.md §4, §13 fixes 4 and 5).
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

void ControlEmitter::lowerInterchangedFor(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  Type T = Op.ResultType;
  bool Sg = T.isSigned();
  BasicBlock *Exit = Cx.newBlock("xfor.end");
  Value *First = Pos.firstActiveOrSkip(Exit);
  Value *Hi = Values.value(Op.Operands[1], First);
  Value *Step = Op.Operands.size() > 2
                    ? Values.value(Op.Operands[2], First)
                    : llvm::ConstantInt::get(Hi->getType(), 1);
  // Iterations are computed in a type wider than needed, so that lo + r*step
  // never wraps: round r runs only when minlo + r*step < hi, so r*step < 2^W
  // and every unit's sum stays below 2^(W+1). A unit whose k + step
  // overflows the type is simply past hi, as in lowerFor.
  llvm::Type *WideTy = bitWidth(T.elementKind()) <= 32
                           ? Cx.I64
                           : llvm::Type::getInt128Ty(Cx.Ctx);
  auto Widen = [&](Value *V) {
    return Sg ? B.CreateSExt(V, WideTy) : B.CreateZExt(V, WideTy);
  };
  Value *HiW = Widen(Hi), *StepW = Widen(Step);
  // A step that is not positive runs no iteration (it could never end).
  Value *Zero = llvm::Constant::getNullValue(Step->getType());
  Value *StepOk = Sg ? B.CreateICmpSGT(Step, Zero) : B.CreateICmpNE(Step, Zero);
  BasicBlock *Start = Cx.newBlock("xfor.start");
  B.CreateCondBr(StepOk, Start, Exit);
  B.SetInsertPoint(Start);
  if (std::optional<int64_t> C = Cx.Seg->unitStrideLowerBound(Op)) {
    lowerUnitStrideRounds(Op, *C, Hi->getType(), WideTy, HiW, StepW, Exit);
    return;
  }
  // The smallest lower bound decides how many rounds run. A flag set by the
  // units that ran (a phi through the round's unit loop) let jump threading
  // split that loop, which then did not vectorise.
  // The largest lower bound tells whether every unit is in range in a round:
  // such a "full" round runs a copy of the unit loop without the per-unit
  // range test (hist_local: all rounds but the last).
  llvm::AllocaInst *MinLo = Cx.entryAlloca(WideTy, "xfor.minlo");
  llvm::AllocaInst *MaxLo = Cx.entryAlloca(WideTy, "xfor.maxlo");
  unsigned WW = WideTy->getIntegerBitWidth();
  B.CreateStore(
      llvm::ConstantInt::get(WideTy, llvm::APInt::getSignedMaxValue(WW)),
      MinLo);
  B.CreateStore(
      llvm::ConstantInt::get(WideTy, llvm::APInt::getSignedMinValue(WW)),
      MaxLo);
  emitSegmentWith([&] {
    Value *Lo = Widen(Values.value(Op.Operands[0]));
    B.CreateStore(B.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                          B.CreateLoad(WideTy, MinLo), Lo),
                  MinLo);
    B.CreateStore(B.CreateBinaryIntrinsic(llvm::Intrinsic::smax,
                                          B.CreateLoad(WideTy, MaxLo), Lo),
                  MaxLo);
  });
  Value *Min = B.CreateLoad(WideTy, MinLo);
  Value *Max = B.CreateLoad(WideTy, MaxLo);
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *Round = Cx.newBlock("xfor.round");
  BasicBlock *UnitsBB = Cx.newBlock("xfor.units");
  BasicBlock *Full = Cx.newBlock("xfor.full");
  BasicBlock *Partial = Cx.newBlock("xfor.partial");
  BasicBlock *Next = Cx.newBlock("xfor.next");
  B.CreateBr(Round);
  B.SetInsertPoint(Round);
  llvm::PHINode *R = B.CreatePHI(WideTy, 2, "round");
  R->addIncoming(llvm::ConstantInt::get(WideTy, 0), Pre);
  Value *Offs = B.CreateMul(R, StepW, "", /*HasNUW=*/true, /*HasNSW=*/true);
  B.CreateCondBr(
      B.CreateICmpSLT(B.CreateAdd(Min, Offs, "", false, /*HasNSW=*/true), HiW),
      UnitsBB, Exit);
  B.SetInsertPoint(UnitsBB);
  // Max and Offs are both below 2^W (Offs as for Min above): no wrap.
  B.CreateCondBr(
      B.CreateICmpSLT(B.CreateAdd(Max, Offs, "", false, /*HasNSW=*/true), HiW),
      Full, Partial);
  auto EmitRound = [&](bool Checked) {
    emitSegmentWith([&] {
      Value *KW =
          B.CreateAdd(Widen(Values.value(Op.Operands[0])), Offs, "", false,
                      /*HasNSW=*/true);
      if (Checked) {
        // Both sides are extensions of W-bit values: a signed compare in the
        // wide type is right for signed and unsigned bounds alike.
        BasicBlock *Run = Cx.newBlock("xfor.body");
        B.CreateCondBr(B.CreateICmpSLT(KW, HiW), Run, Pos.UnitLatch);
        B.SetInsertPoint(Run);
      }
      Values.define(Op.Result, B.CreateTrunc(KW, Hi->getType()));
      lowerBlock(Op.Regions[0], Level::Unit);
    });
    B.CreateBr(Next);
  };
  B.SetInsertPoint(Full);
  EmitRound(/*Checked=*/false);
  B.SetInsertPoint(Partial);
  EmitRound(/*Checked=*/true);
  B.SetInsertPoint(Next);
  Cx.emitStopPoll(); // docs/Lowering.md, "Cancellation"
  R->addIncoming(B.CreateAdd(R, llvm::ConstantInt::get(WideTy, 1)),
                 B.GetInsertBlock());
  B.CreateBr(Round);
  B.SetInsertPoint(Exit);
}

void ControlEmitter::lowerUnitStrideRounds(const Operation &Op, int64_t C,
                                           llvm::Type *Ty, llvm::Type *WideTy,
                                           Value *HiW, Value *StepW,
                                           BasicBlock *Exit) {
  // lo_u = u + c exactly, so unit u runs round r iff u + c + r*step < hi:
  // the units [0, n_r) with n_r = clamp(hi - c - r*step, 0, units). The
  // rounds end when unit 0 (the smallest lower bound) is past hi. No wrap in
  // the wide type, as in lowerInterchangedFor.
  llvm::IRBuilder<> &B = Cx.B;
  bool Sg = Op.ResultType.isSigned();
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *Round = Cx.newBlock("xfor.round");
  BasicBlock *UnitsBB = Cx.newBlock("xfor.units");
  B.CreateBr(Round);
  B.SetInsertPoint(Round);
  llvm::PHINode *R = B.CreatePHI(WideTy, 2, "round");
  R->addIncoming(llvm::ConstantInt::get(WideTy, 0), Pre);
  Value *Offs = B.CreateMul(R, StepW, "", /*HasNUW=*/true, /*HasNSW=*/true);
  Value *FirstK =
      B.CreateAdd(llvm::ConstantInt::get(WideTy, C, /*Signed=*/true), Offs, "",
                  false, /*HasNSW=*/true);
  B.CreateCondBr(B.CreateICmpSLT(FirstK, HiW), UnitsBB, Exit);
  B.SetInsertPoint(UnitsBB);
  Value *N = B.CreateSub(HiW, FirstK, "", false, /*HasNSW=*/true);
  N = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, N,
                              llvm::ConstantInt::get(WideTy, Cx.Units));
  // Positive here; the smax gives ScalarEvolution the range [0, units] that
  // LoopVersioning's check of the largest trip count needs.
  N = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, N,
                              llvm::ConstantInt::get(WideTy, 0));
  N = B.CreateTrunc(N, Cx.I32, "unit.hi");
  auto Widen = [&](Value *V) {
    return Sg ? B.CreateSExt(V, WideTy) : B.CreateZExt(V, WideTy);
  };
  emitSegmentWith(
      [&] {
        Value *KW = B.CreateAdd(Widen(Values.value(Op.Operands[0])), Offs, "",
                                false, /*HasNSW=*/true);
        Values.define(Op.Result, B.CreateTrunc(KW, Ty));
        lowerBlock(Op.Regions[0], Level::Unit);
      },
      B.getInt32(0), N);
  Cx.emitStopPoll(); // docs/Lowering.md, "Cancellation"
  R->addIncoming(B.CreateAdd(R, llvm::ConstantInt::get(WideTy, 1)),
                 B.GetInsertBlock());
  B.CreateBr(Round);
  B.SetInsertPoint(Exit);
}
