//===- LowerControl.cpp - Unit loops, barrier fission and control flow ----===//
//
// A block is cut at split operations (sync_cube, plane operations, control
// constructs containing one). Each run of other operations becomes one loop
// over the cube's units (a "unit loop"); split constructs are uniform and run
// at cube level, their conditions and bounds read from the first unit that
// has not returned. See docs/Lowering.md.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

void KernelLowering::startDeadBlock() { B.SetInsertPoint(newBlock("dead")); }

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

void KernelLowering::lowerCubeBlock(const Block &Blk) {
  std::vector<const Operation *> Run;
  auto Flush = [&] {
    if (!Run.empty())
      emitUnitLoop(Run);
    Run.clear();
  };
  for (const Operation &Op : Blk.Ops) {
    if (!Seg->isCut(Op)) {
      Run.push_back(&Op);
      continue;
    }
    Flush();
    if (Seg->isInterchanged(Op)) {
      lowerInterchangedFor(Op);
      continue;
    }
    switch (Op.opClass()) {
    case OpClass::Barrier:
      break; // the cut between two unit loops is the barrier
    case OpClass::If:
      lowerCubeIf(Op);
      break;
    case OpClass::For:
      lowerCubeFor(Op);
      break;
    case OpClass::Loop:
      lowerCubeLoop(Op);
      break;
    case OpClass::Switch:
      lowerCubeSwitch(Op);
      break;
    default:
      lowerPlaneOp(Op);
      break;
    }
  }
  Flush();
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

void KernelLowering::lowerUnitBlock(const Block &Blk) {
  for (const Operation &Op : Blk.Ops)
    lowerUnitOp(Op);
}

void KernelLowering::lowerUnitOp(const Operation &Op) {
  switch (Op.opClass()) {
  case OpClass::If:
    return lowerUnitIf(Op);
  case OpClass::For:
    return lowerUnitFor(Op);
  case OpClass::Loop:
    return lowerUnitLoop(Op);
  case OpClass::Switch:
    return lowerUnitSwitch(Op);
  case OpClass::Jump:
    return lowerJump(Op);
  case OpClass::Load:
  case OpClass::Store:
  case OpClass::Len:
  case OpClass::VarDecl:
  case OpClass::ArrayDecl:
  case OpClass::Get:
  case OpClass::Set:
  case OpClass::AtomicRMW:
  case OpClass::AtomicCas:
  case OpClass::AtomicLoad:
  case OpClass::AtomicStore:
    if (Value *V = lowerMemoryOp(Op); V && Op.Result != NoValue)
      define(Op.Result, V);
    return;
  default:
    if (Value *V = lowerValueOp(Op); V && Op.Result != NoValue)
      define(Op.Result, V);
    return;
  }
}

void KernelLowering::lowerJump(const Operation &Op) {
  if (Op.Kind == OpKind::Return) {
    if (Layout.HasFlags) {
      auto *S =
          B.CreateAlignedStore(B.getInt8(1),
                               B.CreateInBoundsGEP(I8, scratchPtr(Layout.FlagsOffset),
                                                   B.CreateZExt(Unit, I64)),
                               llvm::Align(1));
      tagScope(S, FlagScopeKey);
    }
    B.CreateBr(UnitLatch);
    startDeadBlock();
    return;
  }
  if (Loops.empty()) {
    fail(Op.Loc, "'" + opName(Op.Kind) + "' outside a loop");
    return;
  }
  LoopTarget &T = Loops.back();
  bool IsBreak = Op.Kind == OpKind::Break;
  if (!T.Hoisted) {
    B.CreateBr(IsBreak ? T.Break : T.Continue);
  } else {
    B.CreateStore(B.getTrue(), IsBreak ? T.BreakFlag : T.ContinueFlag);
    SegmentHoistedJump = true;
    B.CreateBr(UnitLatch);
  }
  startDeadBlock();
}

void KernelLowering::lowerUnitIf(const Operation &Op) {
  if (Op.Operands.empty() || Op.Regions.empty()) {
    fail(Op.Loc, "malformed 'if'");
    return;
  }
  Value *C = operand(Op, 0);
  BasicBlock *Then = newBlock("then");
  bool HasElse = Op.HasElse && Op.Regions.size() > 1;
  BasicBlock *Else = HasElse ? newBlock("else") : nullptr;
  BasicBlock *Merge = newBlock("endif");
  B.CreateCondBr(C, Then, Else ? Else : Merge);
  B.SetInsertPoint(Then);
  lowerUnitBlock(Op.Regions[0]);
  if (!terminated())
    B.CreateBr(Merge);
  if (Else) {
    B.SetInsertPoint(Else);
    lowerUnitBlock(Op.Regions[1]);
    if (!terminated())
      B.CreateBr(Merge);
  }
  B.SetInsertPoint(Merge);
}

/// Shared by the unit-level and cube-level `for`: checks the step, runs
/// k = lo, lo+s, ... while k < hi, and stops rather than wrap on overflow.
namespace {
struct ForShape {
  BasicBlock *Header, *Body, *Latch, *Exit;
  llvm::PHINode *IV;
};
} // namespace

static ForShape beginFor(KernelLowering &L, Type T, Value *Lo, Value *Hi,
                         Value *Step, BasicBlock *Exit) {
  auto &B = L.B;
  bool Sg = T.isSigned();
  ForShape S;
  S.Header = L.newBlock("for");
  S.Body = L.newBlock("for.body");
  S.Latch = L.newBlock("for.latch");
  S.Exit = Exit;
  // A step that is not positive runs no iteration (it could never end).
  Value *Zero = llvm::Constant::getNullValue(Step->getType());
  Value *StepOk = Sg ? B.CreateICmpSGT(Step, Zero) : B.CreateICmpNE(Step, Zero);
  BasicBlock *Pre = B.GetInsertBlock();
  B.CreateCondBr(StepOk, S.Header, Exit);
  B.SetInsertPoint(S.Header);
  S.IV = B.CreatePHI(Lo->getType(), 2, "k");
  S.IV->addIncoming(Lo, Pre);
  return S;
}

static void endFor(KernelLowering &L, ForShape &S, Type T, Value *Step) {
  auto &B = L.B;
  if (!L.terminated())
    B.CreateBr(S.Latch);
  B.SetInsertPoint(S.Latch);
  auto ID = T.isSigned() ? llvm::Intrinsic::sadd_with_overflow
                         : llvm::Intrinsic::uadd_with_overflow;
  Value *R = B.CreateBinaryIntrinsic(ID, S.IV, Step);
  Value *Next = B.CreateExtractValue(R, 0);
  Value *Ovf = B.CreateExtractValue(R, 1);
  S.IV->addIncoming(Next, S.Latch);
  B.CreateCondBr(Ovf, S.Exit, S.Header);
  B.SetInsertPoint(S.Exit);
}

void KernelLowering::lowerUnitFor(const Operation &Op) {
  Type T = Op.ResultType;
  if (Op.Operands.size() < 2 || Op.Regions.empty() || !T.isInteger() ||
      T.isLine()) {
    fail(Op.Loc, "'for' needs integer bounds and a body");
    return;
  }
  Value *Lo = operand(Op, 0), *Hi = operand(Op, 1);
  Value *Step = Op.Operands.size() > 2
                    ? operand(Op, 2)
                    : llvm::ConstantInt::get(Lo->getType(), 1);
  BasicBlock *Exit = newBlock("for.end");
  ForShape S = beginFor(*this, T, Lo, Hi, Step, Exit);
  Value *In =
      T.isSigned() ? B.CreateICmpSLT(S.IV, Hi) : B.CreateICmpULT(S.IV, Hi);
  B.CreateCondBr(In, S.Body, Exit);
  B.SetInsertPoint(S.Body);
  define(Op.Result, S.IV);
  Loops.push_back({false, Exit, S.Latch, nullptr, nullptr});
  lowerUnitBlock(Op.Regions[0]);
  Loops.pop_back();
  endFor(*this, S, T, Step);
}

void KernelLowering::lowerInterchangedFor(const Operation &Op) {
  Type T = Op.ResultType;
  bool Sg = T.isSigned();
  BasicBlock *Exit = newBlock("xfor.end");
  Value *First = firstActiveOrSkip(Exit);
  Value *Hi = value(Op.Operands[1], First);
  Value *Step = Op.Operands.size() > 2
                    ? value(Op.Operands[2], First)
                    : llvm::ConstantInt::get(Hi->getType(), 1);
  // Iterations are computed in a type wider than needed, so that lo + r*step
  // never wraps: round r runs only when minlo + r*step < hi, so r*step < 2^W
  // and every unit's sum stays below 2^(W+1). A unit whose k + step
  // overflows the type is simply past hi, as in lowerUnitFor.
  llvm::Type *WideTy =
      bitWidth(T.elementKind()) <= 32 ? I64 : llvm::Type::getInt128Ty(Ctx);
  auto Widen = [&](Value *V) {
    return Sg ? B.CreateSExt(V, WideTy) : B.CreateZExt(V, WideTy);
  };
  Value *HiW = Widen(Hi), *StepW = Widen(Step);
  // A step that is not positive runs no iteration (it could never end).
  Value *Zero = llvm::Constant::getNullValue(Step->getType());
  Value *StepOk = Sg ? B.CreateICmpSGT(Step, Zero) : B.CreateICmpNE(Step, Zero);
  BasicBlock *Start = newBlock("xfor.start");
  B.CreateCondBr(StepOk, Start, Exit);
  B.SetInsertPoint(Start);
  // The smallest lower bound decides how many rounds run. A flag set by the
  // units that ran (a phi through the round's unit loop) let jump threading
  // split that loop, which then did not vectorise.
  // The largest lower bound tells whether every unit is in range in a round:
  // such a "full" round runs a copy of the unit loop without the per-unit
  // range test (hist_local: all rounds but the last).
  llvm::AllocaInst *MinLo = entryAlloca(WideTy, "xfor.minlo");
  llvm::AllocaInst *MaxLo = entryAlloca(WideTy, "xfor.maxlo");
  unsigned WW = WideTy->getIntegerBitWidth();
  B.CreateStore(
      llvm::ConstantInt::get(WideTy, llvm::APInt::getSignedMaxValue(WW)),
      MinLo);
  B.CreateStore(
      llvm::ConstantInt::get(WideTy, llvm::APInt::getSignedMinValue(WW)),
      MaxLo);
  emitUnitLoopWith([&] {
    Value *Lo = Widen(value(Op.Operands[0]));
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
  BasicBlock *Round = newBlock("xfor.round");
  BasicBlock *Units = newBlock("xfor.units");
  BasicBlock *Full = newBlock("xfor.full");
  BasicBlock *Partial = newBlock("xfor.partial");
  BasicBlock *Next = newBlock("xfor.next");
  B.CreateBr(Round);
  B.SetInsertPoint(Round);
  llvm::PHINode *R = B.CreatePHI(WideTy, 2, "round");
  R->addIncoming(llvm::ConstantInt::get(WideTy, 0), Pre);
  Value *Offs = B.CreateMul(R, StepW, "", /*HasNUW=*/true, /*HasNSW=*/true);
  B.CreateCondBr(
      B.CreateICmpSLT(B.CreateAdd(Min, Offs, "", false, /*HasNSW=*/true), HiW),
      Units, Exit);
  B.SetInsertPoint(Units);
  // Max and Offs are both below 2^W (Offs as for Min above): no wrap.
  B.CreateCondBr(
      B.CreateICmpSLT(B.CreateAdd(Max, Offs, "", false, /*HasNSW=*/true), HiW),
      Full, Partial);
  auto EmitRound = [&](bool Checked) {
    emitUnitLoopWith([&] {
      Value *KW = B.CreateAdd(Widen(value(Op.Operands[0])), Offs, "", false,
                              /*HasNSW=*/true);
      if (Checked) {
        // Both sides are extensions of W-bit values: a signed compare in the
        // wide type is right for signed and unsigned bounds alike.
        BasicBlock *Run = newBlock("xfor.body");
        B.CreateCondBr(B.CreateICmpSLT(KW, HiW), Run, UnitLatch);
        B.SetInsertPoint(Run);
      }
      define(Op.Result, B.CreateTrunc(KW, Hi->getType()));
      lowerUnitBlock(Op.Regions[0]);
    });
    B.CreateBr(Next);
  };
  B.SetInsertPoint(Full);
  EmitRound(/*Checked=*/false);
  B.SetInsertPoint(Partial);
  EmitRound(/*Checked=*/true);
  B.SetInsertPoint(Next);
  R->addIncoming(B.CreateAdd(R, llvm::ConstantInt::get(WideTy, 1)), Next);
  B.CreateBr(Round);
  B.SetInsertPoint(Exit);
}

void KernelLowering::lowerUnitLoop(const Operation &Op) {
  if (Op.Regions.empty()) {
    fail(Op.Loc, "'loop' without a body");
    return;
  }
  BasicBlock *Header = newBlock("loop");
  BasicBlock *Exit = newBlock("loop.end");
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  Loops.push_back({false, Exit, Header, nullptr, nullptr});
  lowerUnitBlock(Op.Regions[0]);
  Loops.pop_back();
  if (!terminated())
    B.CreateBr(Header);
  B.SetInsertPoint(Exit);
}

/// Emits the dispatch of a switch on \p V; returns the case blocks (the
/// default last when present) and leaves the builder nowhere.
/// Whether case label \p Label is a value of the selector type \p T; a label
/// outside the type's range never matches (it is not truncated).
static bool labelFits(int64_t Label, Type T) {
  unsigned W = bitWidth(T.elementKind());
  if (T.isSigned())
    return W >= 64 || (Label >= -(int64_t(1) << (W - 1)) &&
                       Label < (int64_t(1) << (W - 1)));
  return Label >= 0 && (W >= 64 || uint64_t(Label) < (uint64_t(1) << W));
}

static std::vector<BasicBlock *> beginSwitch(KernelLowering &L,
                                             const Operation &Op, Value *V,
                                             BasicBlock *Merge) {
  Type SelTy = L.operandType(Op.Operands[0]);
  std::vector<BasicBlock *> Blocks;
  for (size_t I = 0; I < Op.Regions.size(); ++I)
    Blocks.push_back(L.newBlock("case"));
  size_t Cases = std::min(Op.CaseValues.size(), Op.Regions.size());
  bool HasDefault = Op.HasDefault && Op.Regions.size() > Cases;
  BasicBlock *Default = HasDefault ? Blocks[Cases] : Merge;
  auto *SI = L.B.CreateSwitch(V, Default, Cases);
  auto *IT = llvm::cast<llvm::IntegerType>(V->getType());
  for (size_t I = 0; I < Cases; ++I) {
    if (!labelFits(Op.CaseValues[I], SelTy))
      continue; // its block stays unreachable
    auto *C =
        llvm::ConstantInt::get(IT, static_cast<uint64_t>(Op.CaseValues[I]));
    if (SI->findCaseValue(C) == SI->case_default()) // first label wins
      SI->addCase(C, Blocks[I]);
  }
  return Blocks;
}

void KernelLowering::lowerUnitSwitch(const Operation &Op) {
  if (Op.Operands.empty() || !operandType(Op.Operands[0]).isInteger() ||
      operandType(Op.Operands[0]).isLine()) {
    fail(Op.Loc, "'switch' needs an integer scalar");
    return;
  }
  BasicBlock *Merge = newBlock("switch.end");
  auto Blocks = beginSwitch(*this, Op, operand(Op, 0), Merge);
  for (size_t I = 0; I < Blocks.size(); ++I) {
    B.SetInsertPoint(Blocks[I]);
    lowerUnitBlock(Op.Regions[I]);
    if (!terminated())
      B.CreateBr(Merge);
  }
  B.SetInsertPoint(Merge);
}

// ---- Cube level: constructs that contain a barrier or a plane operation ----

void KernelLowering::lowerCubeIf(const Operation &Op) {
  if (Op.Operands.empty() || Op.Regions.empty()) {
    fail(Op.Loc, "malformed 'if'");
    return;
  }
  BasicBlock *Merge = newBlock("cube.endif");
  Value *First = firstActiveOrSkip(Merge);
  Value *C = value(Op.Operands[0], First);
  BasicBlock *Then = newBlock("cube.then");
  bool HasElse = Op.HasElse && Op.Regions.size() > 1;
  BasicBlock *Else = HasElse ? newBlock("cube.else") : nullptr;
  B.CreateCondBr(C, Then, Else ? Else : Merge);
  B.SetInsertPoint(Then);
  lowerCubeBlock(Op.Regions[0]);
  if (!terminated())
    B.CreateBr(Merge);
  if (Else) {
    B.SetInsertPoint(Else);
    lowerCubeBlock(Op.Regions[1]);
    if (!terminated())
      B.CreateBr(Merge);
  }
  B.SetInsertPoint(Merge);
}

void KernelLowering::lowerCubeFor(const Operation &Op) {
  Type T = Op.ResultType;
  if (Op.Operands.size() < 2 || Op.Regions.empty() || !T.isInteger() ||
      T.isLine()) {
    fail(Op.Loc, "'for' needs integer bounds and a body");
    return;
  }
  BasicBlock *Exit = newBlock("cube.for.end");
  Value *First = firstActiveOrSkip(Exit);
  Value *Lo = value(Op.Operands[0], First), *Hi = value(Op.Operands[1], First);
  Value *Step = Op.Operands.size() > 2
                    ? value(Op.Operands[2], First)
                    : llvm::ConstantInt::get(Lo->getType(), 1);
  LoopTarget Target{true, Exit, nullptr, entryAlloca(I1, "break"),
                    entryAlloca(I1, "continue")};
  ForShape S = beginFor(*this, T, Lo, Hi, Step, Exit);
  Target.Continue = S.Latch;
  B.CreateStore(B.getFalse(), Target.BreakFlag);
  B.CreateStore(B.getFalse(), Target.ContinueFlag);
  // A loop whose units have all returned ends.
  if (Layout.HasFlags) {
    BasicBlock *Live = newBlock("cube.for.live");
    B.CreateCondBr(B.CreateICmpEQ(firstActiveUnit(), B.getInt32(Units)), Exit,
                   Live);
    B.SetInsertPoint(Live);
  }
  Value *In =
      T.isSigned() ? B.CreateICmpSLT(S.IV, Hi) : B.CreateICmpULT(S.IV, Hi);
  B.CreateCondBr(In, S.Body, Exit);
  B.SetInsertPoint(S.Body);
  CubeValues[Op.Result] = S.IV;
  Loops.push_back(Target);
  lowerCubeBlock(Op.Regions[0]);
  Loops.pop_back();
  endFor(*this, S, T, Step);
}

void KernelLowering::lowerCubeLoop(const Operation &Op) {
  if (Op.Regions.empty()) {
    fail(Op.Loc, "'loop' without a body");
    return;
  }
  BasicBlock *Header = newBlock("cube.loop");
  BasicBlock *Exit = newBlock("cube.loop.end");
  LoopTarget Target{true, Exit, Header, entryAlloca(I1, "break"),
                    entryAlloca(I1, "continue")};
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  B.CreateStore(B.getFalse(), Target.BreakFlag);
  B.CreateStore(B.getFalse(), Target.ContinueFlag);
  if (Layout.HasFlags) {
    BasicBlock *Live = newBlock("cube.loop.live");
    B.CreateCondBr(B.CreateICmpEQ(firstActiveUnit(), B.getInt32(Units)), Exit,
                   Live);
    B.SetInsertPoint(Live);
  }
  Loops.push_back(Target);
  lowerCubeBlock(Op.Regions[0]);
  Loops.pop_back();
  if (!terminated())
    B.CreateBr(Header);
  B.SetInsertPoint(Exit);
}

void KernelLowering::lowerCubeSwitch(const Operation &Op) {
  if (Op.Operands.empty() || !operandType(Op.Operands[0]).isInteger() ||
      operandType(Op.Operands[0]).isLine()) {
    fail(Op.Loc, "'switch' needs an integer scalar");
    return;
  }
  BasicBlock *Merge = newBlock("cube.switch.end");
  Value *First = firstActiveOrSkip(Merge);
  auto Blocks = beginSwitch(*this, Op, value(Op.Operands[0], First), Merge);
  for (size_t I = 0; I < Blocks.size(); ++I) {
    B.SetInsertPoint(Blocks[I]);
    lowerCubeBlock(Op.Regions[I]);
    if (!terminated())
      B.CreateBr(Merge);
  }
  B.SetInsertPoint(Merge);
}
