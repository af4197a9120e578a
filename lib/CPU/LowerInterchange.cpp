//===- LowerInterchange.cpp - Emission of interchanged `for` loops --------===//
//
// A per-unit `for` chosen by LoopInterchange.h runs as rounds at cube level,
// a unit loop per round (docs/Lowering.md §4, §13 fixes 4 and 5); each round
// prefetches the buffer elements of the round two ahead (§13, fix 6).
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

/// Rounds ahead whose elements are prefetched, and the most bytes of one
/// buffer one round reads that are prefetched (a unit loop of 256 u32 reads
/// 1 KiB); rounds closer than PrefetchMinJumpBytes are not (docs/Lowering.md
/// §4).
static constexpr unsigned PrefetchRounds = 2;
static constexpr uint64_t PrefetchSpanBytes = 4096;

/// The buffers that body \p Blk loads (at any depth) at index \p Iv, the
/// interchanged loop's own variable, with their element sizes.
static void collectDirectLoads(const IRKernel &K, const Block &Blk, ValueId Iv,
                               std::vector<std::pair<ValueId, unsigned>> &Out) {
  for (const Operation &Op : Blk.Ops) {
    for (const Block &R : Op.Regions)
      collectDirectLoads(K, R, Iv, Out);
    if (Op.Kind != OpKind::Load || Op.Operands.size() < 2 ||
        Op.Operands[1].Value != Iv || Op.Operands[0].isLiteral())
      continue;
    ValueId Mem = Op.Operands[0].Value;
    if (K.value(Mem).Kind != ValueKind::Buffer)
      continue;
    if (llvm::none_of(Out, [&](const auto &P) { return P.first == Mem; }))
      Out.push_back({Mem, K.value(Mem).Ty.storeSize()});
  }
}

void ControlEmitter::emitRoundPrefetch(const Operation &Op, Value *Round,
                                       Value *Min, Value *Max, Value *HiW,
                                       Value *StepW) {
  std::vector<std::pair<ValueId, unsigned>> Bufs;
  collectDirectLoads(Cx.K, Op.Regions[0], Op.Result, Bufs);
  if (Bufs.empty())
    return;
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *I64 = Cx.I64;
  // Round r + D's indices are [Min, Max] + (r + D) * step, in 64 bits: the
  // loop variable has at most 32 (the caller checks), so nothing wraps.
  Value *Ahead = B.CreateMul(
      B.CreateAdd(Round, llvm::ConstantInt::get(I64, PrefetchRounds)), StepW);
  Value *First = B.CreateAdd(Min, Ahead);
  Value *Last = B.CreateAdd(Max, Ahead);
  Value *Runs = B.CreateICmpSLT(First, HiW);
  for (auto [Mem, Size] : Bufs) {
    Value *SizeC = llvm::ConstantInt::get(I64, Size);
    // Only rounds that jump a page or more: within a page the hardware
    // prefetchers follow the reads themselves. (One value a statement: the
    // order of the instructions does not depend on the host compiler.)
    Value *Jump = B.CreateMul(StepW, SizeC);
    Value *Far = B.CreateICmpUGE(
        Jump, llvm::ConstantInt::get(I64, PrefetchMinJumpBytes));
    Value *Span = B.CreateMul(B.CreateSub(Max, Min), SizeC);
    Value *Short =
        B.CreateICmpULE(Span, llvm::ConstantInt::get(I64, PrefetchSpanBytes));
    Value *Want = B.CreateAnd(Runs, B.CreateAnd(Far, Short));
    // From the line of the first byte to that of the last, 64 bytes apart.
    Value *FirstByte = B.CreateMul(First, SizeC);
    Value *Begin =
        B.CreateAnd(FirstByte, llvm::ConstantInt::get(I64, ~uint64_t(63)));
    BasicBlock *Pre = B.GetInsertBlock();
    BasicBlock *Loop = Cx.newBlock("xfor.prefetch");
    BasicBlock *Done = Cx.newBlock("xfor.prefetched");
    B.CreateCondBr(Want, Loop, Done);
    B.SetInsertPoint(Loop);
    llvm::PHINode *Off = B.CreatePHI(I64, 2, "prefetch.off");
    Off->addIncoming(Begin, Pre);
    // A hint: an address outside the buffer (a unit past hi, a negative
    // index) is never accessed.
    emitReadPrefetch(B, B.CreateGEP(Cx.I8, Memory.BufBase.lookup(Mem), Off),
                     /*Locality=*/3);
    Value *NextOff = B.CreateAdd(Off, llvm::ConstantInt::get(I64, 64));
    Off->addIncoming(NextOff, Loop);
    Value *LastByte = B.CreateAdd(B.CreateMul(Last, SizeC),
                                  llvm::ConstantInt::get(I64, Size - 1));
    B.CreateCondBr(B.CreateICmpSLE(NextOff, LastByte), Loop, Done);
    B.SetInsertPoint(Done);
  }
}

void ControlEmitter::skipUnlessStepPositive(Value *Step, bool Signed,
                                            BasicBlock *Exit) {
  // A step that is not positive runs no iteration (it could never end).
  llvm::IRBuilder<> &B = Cx.B;
  Value *Zero = llvm::Constant::getNullValue(Step->getType());
  Value *StepOk =
      Signed ? B.CreateICmpSGT(Step, Zero) : B.CreateICmpNE(Step, Zero);
  BasicBlock *Start = Cx.newBlock("xfor.start");
  B.CreateCondBr(StepOk, Start, Exit);
  B.SetInsertPoint(Start);
}

void ControlEmitter::lowerInterchangedFor(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  Type T = Op.ResultType;
  bool Sg = T.isSigned();
  BasicBlock *Exit = Cx.newBlock("xfor.end");
  Value *First = Pos.firstActiveOrSkip(Exit);
  if (Cx.Seg->roundsByUpperBound(Op)) {
    lowerUpperBoundRounds(Op, First, Exit);
    return;
  }
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
  skipUnlessStepPositive(Step, Sg, Exit);
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
  Rounds Rs = beginRounds(Min, HiW, StepW, Exit);
  Value *Offs = Rs.Offs;
  BasicBlock *Full = Cx.newBlock("xfor.full");
  BasicBlock *Partial = Cx.newBlock("xfor.partial");
  BasicBlock *Next = Cx.newBlock("xfor.next");
  if (WideTy == Cx.I64)
    emitRoundPrefetch(Op, Rs.R, Min, Max, HiW, StepW);
  // Max and Offs are both below 2^W (Offs as for Min above): no wrap.
  B.CreateCondBr(
      B.CreateICmpSLT(B.CreateAdd(Max, Offs, "", false, /*HasNSW=*/true), HiW),
      Full, Partial);
  auto EmitRound = [&](bool Checked) {
    emitSegmentWith([&] {
      Pos.NoWrapPositions = true;
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
      // lo <= k < hi here, so k's extension to 64 bits (zext or sext by
      // its type) is KW itself: indices at k use KW, which the unit loop
      // steps as a pointer (docs/Lowering.md §13, fix 6).
      Value *K = B.CreateTrunc(KW, Hi->getType());
      if (WideTy == Cx.I64)
        Memory.WideIndex[K] = {KW, Sg};
      Values.define(Op.Result, K);
      lowerBlock(Op.Regions[0], Level::Unit);
      Memory.WideIndex.erase(K);
      Pos.NoWrapPositions = false;
    });
    B.CreateBr(Next);
  };
  B.SetInsertPoint(Full);
  EmitRound(/*Checked=*/false);
  B.SetInsertPoint(Partial);
  EmitRound(/*Checked=*/true);
  B.SetInsertPoint(Next);
  endRound(Rs, Exit);
}

void ControlEmitter::lowerUpperBoundRounds(const Operation &Op, Value *First,
                                           BasicBlock *Exit) {
  // hi_u = floor(u / D) + c (Segmentation::roundsByUpperBound), so round k
  // runs for the units with floor(u / D) >= k - c + 1: the suffix from
  // u = (k - c + 1) * D, clamped to [0, units]. The rounds end when k
  // reaches the last unit's bound. The loop has at most 32 bits, so all of
  // this is exact in 64 (|c| < 2^40, D <= 1024).
  const UpperBoundSuffix &F = *Cx.Seg->roundsByUpperBound(Op);
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *I64 = Cx.I64;
  bool Sg = Op.ResultType.isSigned();
  auto Widen = [&](Value *V) {
    return Sg ? B.CreateSExt(V, I64) : B.CreateZExt(V, I64);
  };
  Value *Lo = Values.value(Op.Operands[0], First);
  Value *Step = Op.Operands.size() > 2
                    ? Values.value(Op.Operands[2], First)
                    : llvm::ConstantInt::get(Lo->getType(), 1);
  skipUnlessStepPositive(Step, Sg, Exit);
  auto I64C = [&](int64_t V) {
    return llvm::ConstantInt::get(I64, V, /*IsSigned=*/true);
  };
  int64_t MaxHi = int64_t(Cx.Units - 1) / F.Divisor + F.Offset;
  Rounds Rs = beginRounds(Widen(Lo), I64C(MaxHi), Widen(Step), Exit);
  Value *KW = Rs.First; // lo + r*step, below MaxHi
  Value *From = B.CreateMul(
      B.CreateAdd(B.CreateSub(KW, I64C(F.Offset)), I64C(1)), I64C(F.Divisor));
  From = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, From, I64C(0));
  From = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, From, I64C(Cx.Units));
  From = B.CreateTrunc(From, Cx.I32, "unit.suffix");
  emitSegmentWith(
      [&] {
        // Every unit here has lo <= k < hi_u: k's extension to 64 bits is KW.
        Value *K = B.CreateTrunc(KW, Lo->getType());
        Memory.WideIndex[K] = {KW, Sg};
        Values.define(Op.Result, K);
        lowerBlock(Op.Regions[0], Level::Unit);
        Memory.WideIndex.erase(K);
      },
      From, B.getInt32(Cx.Units));
  endRound(Rs, Exit);
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
  Rounds Rs = beginRounds(llvm::ConstantInt::get(WideTy, C, /*Signed=*/true),
                          HiW, StepW, Exit);
  Value *Offs = Rs.Offs;
  Value *N = B.CreateSub(HiW, Rs.First, "", false, /*HasNSW=*/true);
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
  endRound(Rs, Exit);
}

ControlEmitter::Rounds ControlEmitter::beginRounds(Value *FirstLo, Value *HiW,
                                                   Value *StepW,
                                                   BasicBlock *Exit) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *WideTy = HiW->getType();
  BasicBlock *Pre = B.GetInsertBlock();
  Rounds Rs;
  Rs.Header = Cx.newBlock("xfor.round");
  BasicBlock *UnitsBB = Cx.newBlock("xfor.units");
  B.CreateBr(Rs.Header);
  B.SetInsertPoint(Rs.Header);
  Rs.R = B.CreatePHI(WideTy, 2, "round");
  Rs.R->addIncoming(llvm::ConstantInt::get(WideTy, 0), Pre);
  Rs.Offs = B.CreateMul(Rs.R, StepW, "", /*HasNUW=*/true, /*HasNSW=*/true);
  Rs.First = B.CreateAdd(FirstLo, Rs.Offs, "", false, /*HasNSW=*/true);
  B.CreateCondBr(B.CreateICmpSLT(Rs.First, HiW), UnitsBB, Exit);
  B.SetInsertPoint(UnitsBB);
  return Rs;
}

void ControlEmitter::endRound(const Rounds &Rs, BasicBlock *Exit) {
  llvm::IRBuilder<> &B = Cx.B;
  Cx.emitStopPoll(); // docs/Lowering.md, "Cancellation"
  Rs.R->addIncoming(
      B.CreateAdd(Rs.R, llvm::ConstantInt::get(Rs.R->getType(), 1)),
      B.GetInsertBlock());
  B.CreateBr(Rs.Header);
  B.SetInsertPoint(Exit);
}
