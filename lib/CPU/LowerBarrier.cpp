//===- LowerBarrier.cpp - Barrier objects and asynchronous copies ---------===//
//
// docs/LangRef.md §13 gives the semantics, docs/Lowering.md "Barrier
// objects" the design. A barrier's state is four u32 words:
//
//   [0] pending arrivals of the current phase
//   [1] expected arrivals per phase (the count it was declared with)
//   [2] completed phases (the token of the current phase)
//   [3] pending transaction bytes (signed: a copy may complete its bytes
//       before they are expected)
//
// The phase completes when [0] and [3] are both 0: [2] grows by one and [0]
// starts again from [1]. Every change goes through one internal function of
// the module (kiln.barrier.update). The units of a cube run on one thread,
// so a cube's barrier needs no atomics. Copies run at once, element by
// element, which a GPU's asynchronous copy may also do: the destination is
// unspecified to the kernel until the wait, so it cannot tell.
//
// A wait on a cube's barrier is a split: every unit has run up to it, so a
// phase that has not completed there never will, and the wait records a
// fault (CubeABI.h) instead of hanging; execution goes on.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "kiln/CPU/CubeABI.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

namespace {
/// Word offsets in a barrier's state.
enum StateWord : unsigned { Pending = 0, Expected = 1, Phase = 2, Tx = 3 };
} // namespace

Value *BarrierEmitter::operandI32(const Operand &O, Value *Unit) {
  Value *V = Values.value(O, Unit);
  return Cx.B.CreateZExtOrTrunc(V, Cx.I32);
}

Value *BarrierEmitter::statePtr(ValueId Bar) {
  const ValueInfo &VI = Cx.K.value(Bar);
  uint64_t Bytes = BarrierStateWords * 4;
  if (VI.Kind == ValueKind::Shared)
    return Memory.scratchPtr(Cx.Layout.Of[Bar].Offset);
  llvm::IRBuilder<> &B = Cx.B;
  Value *Idx = B.CreateMul(B.CreateZExt(Pos.Unit, Cx.I64), B.getInt64(Bytes));
  return B.CreateInBoundsGEP(Cx.I8, Memory.scratchPtr(Cx.Layout.Of[Bar].Offset),
                             Idx);
}

static Value *word(llvm::IRBuilder<> &B, Value *State, StateWord W) {
  return B.CreateConstInBoundsGEP1_64(B.getInt32Ty(), State, W);
}

Value *BarrierEmitter::siteOf(const Operation &Op) {
  if (OpNumbers.empty())
    forEachOperation(Cx.K, [&](const Operation &O, unsigned N) {
      OpNumbers[&O] = N;
    });
  // Named by its barrier: "barrier_wait %bar", "%bar = barrier_cube".
  std::string Site = opName(Op.Kind).str();
  if (Op.opClass() == OpClass::BarrierDecl)
    Site = "%" + Cx.K.value(Op.Result).Name + " = " + Site;
  else if (!Op.Operands.empty() && !Op.Operands[0].isLiteral() &&
           Op.Operands[0].Value < Cx.K.Values.size())
    Site += " %" + Cx.K.value(Op.Operands[0].Value).Name;
  if (Op.Loc.isValid())
    Site += " at " + std::to_string(Op.Loc.Line) + ":" +
            std::to_string(Op.Loc.Col);
  Site += " (operation #" + std::to_string(OpNumbers.lookup(&Op)) + ")";
  return Cx.B.CreateGlobalStringPtr(Site, "kiln.site");
}

llvm::Function *BarrierEmitter::faultFunction() {
  if (FaultFn)
    return FaultFn;
  // void kiln.fault(KernelFault *F, i32 code, ptr state, ptr site)
  llvm::LLVMContext &Ctx = Cx.Ctx;
  auto *FT = llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx),
                                     {Cx.Ptr, Cx.I32, Cx.Ptr, Cx.Ptr}, false);
  FaultFn = llvm::Function::Create(FT, llvm::GlobalValue::InternalLinkage,
                                   "kiln.fault", Cx.M.get());
  FaultFn->setDoesNotThrow();
  FaultFn->addFnAttr(llvm::Attribute::NoInline); // cold, keep loops small
  FaultFn->addFnAttr(llvm::Attribute::Cold);
  llvm::IRBuilder<> B(Ctx);
  BasicBlock *Entry = BasicBlock::Create(Ctx, "entry", FaultFn);
  BasicBlock *Try = BasicBlock::Create(Ctx, "try", FaultFn);
  BasicBlock *Fill = BasicBlock::Create(Ctx, "fill", FaultFn);
  BasicBlock *Done = BasicBlock::Create(Ctx, "done", FaultFn);
  Value *F = FaultFn->getArg(0), *Code = FaultFn->getArg(1);
  Value *State = FaultFn->getArg(2), *Site = FaultFn->getArg(3);
  B.SetInsertPoint(Entry);
  B.CreateCondBr(B.CreateIsNull(F), Done, Try);
  B.SetInsertPoint(Try);
  // The first fault of the launch wins; the others are dropped.
  auto *Cas = B.CreateAtomicCmpXchg(
      F, B.getInt32(0), Code, llvm::MaybeAlign(4),
      llvm::AtomicOrdering::SequentiallyConsistent,
      llvm::AtomicOrdering::SequentiallyConsistent);
  B.CreateCondBr(B.CreateExtractValue(Cas, 1), Fill, Done);
  B.SetInsertPoint(Fill);
  auto Copy = [&](unsigned Offset, StateWord W) {
    Value *V = B.CreateAlignedLoad(Cx.I32, word(B, State, W), llvm::Align(4));
    B.CreateAlignedStore(V, B.CreateConstInBoundsGEP1_64(Cx.I8, F, Offset),
                         llvm::Align(4));
  };
  Copy(4, Pending);
  Copy(8, Tx);
  Copy(12, Phase);
  B.CreateAlignedStore(Site, B.CreateConstInBoundsGEP1_64(Cx.I8, F, 16),
                       llvm::Align(8));
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  B.CreateRetVoid();
  return FaultFn;
}

llvm::Function *BarrierEmitter::updateFunction() {
  if (UpdateFn)
    return UpdateFn;
  // i32 kiln.barrier.update(ptr state, i32 arrivals, i32 txdelta,
  //                          ptr fault, ptr site): the token
  llvm::LLVMContext &Ctx = Cx.Ctx;
  auto *FT = llvm::FunctionType::get(
      Cx.I32, {Cx.Ptr, Cx.I32, Cx.I32, Cx.Ptr, Cx.Ptr}, false);
  UpdateFn = llvm::Function::Create(FT, llvm::GlobalValue::InternalLinkage,
                                    "kiln.barrier.update", Cx.M.get());
  UpdateFn->setDoesNotThrow();
  llvm::IRBuilder<> B(Ctx);
  BasicBlock *Entry = BasicBlock::Create(Ctx, "entry", UpdateFn);
  BasicBlock *Over = BasicBlock::Create(Ctx, "too_many", UpdateFn);
  BasicBlock *Count = BasicBlock::Create(Ctx, "count", UpdateFn);
  BasicBlock *Complete = BasicBlock::Create(Ctx, "complete", UpdateFn);
  BasicBlock *Done = BasicBlock::Create(Ctx, "done", UpdateFn);
  Value *State = UpdateFn->getArg(0), *Arrivals = UpdateFn->getArg(1);
  Value *TxDelta = UpdateFn->getArg(2), *Fault = UpdateFn->getArg(3);
  Value *Site = UpdateFn->getArg(4);
  llvm::Align A4(4);
  B.SetInsertPoint(Entry);
  Value *Token = B.CreateAlignedLoad(Cx.I32, word(B, State, Phase), A4);
  Value *Tx0 = B.CreateAlignedLoad(Cx.I32, word(B, State, Tx), A4);
  B.CreateAlignedStore(B.CreateAdd(Tx0, TxDelta), word(B, State, Tx), A4);
  Value *Pend = B.CreateAlignedLoad(Cx.I32, word(B, State, Pending), A4);
  B.CreateCondBr(B.CreateICmpUGT(Arrivals, Pend), Over, Count);
  B.SetInsertPoint(Over);
  // More arrivals than the phase expects: recorded, and the phase counts
  // them as all it expected.
  B.CreateCall(faultFunction(),
               {Fault, B.getInt32(BarrierTooManyArrivals), State, Site});
  B.CreateBr(Count);
  B.SetInsertPoint(Count);
  llvm::PHINode *Arr = B.CreatePHI(Cx.I32, 2);
  Arr->addIncoming(Arrivals, Entry);
  Arr->addIncoming(Pend, Over);
  Value *Left = B.CreateSub(Pend, Arr);
  B.CreateAlignedStore(Left, word(B, State, Pending), A4);
  Value *Tx1 = B.CreateAlignedLoad(Cx.I32, word(B, State, Tx), A4);
  Value *Zero = B.getInt32(0);
  B.CreateCondBr(
      B.CreateAnd(B.CreateICmpEQ(Left, Zero), B.CreateICmpEQ(Tx1, Zero)),
      Complete, Done);
  B.SetInsertPoint(Complete);
  B.CreateAlignedStore(B.CreateAdd(Token, B.getInt32(1)), word(B, State, Phase),
                       A4);
  B.CreateAlignedStore(
      B.CreateAlignedLoad(Cx.I32, word(B, State, Expected), A4),
      word(B, State, Pending), A4);
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  B.CreateRet(Token);
  return UpdateFn;
}

Value *BarrierEmitter::update(Value *State, Value *Arrivals, Value *TxDelta,
                              const Operation &Op) {
  Value *Fault = FaultSlot ? FaultSlot
                           : llvm::ConstantPointerNull::get(
                                 llvm::PointerType::getUnqual(Cx.Ctx));
  return Cx.B.CreateCall(updateFunction(),
                         {State, Arrivals, TxDelta, Fault, siteOf(Op)});
}

void BarrierEmitter::checkCompleted(Value *State, Value *Token,
                                    const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  // Completed when phase - token > 0 (signed: phases wrap like u32).
  Value *Phases = B.CreateAlignedLoad(Cx.I32, word(B, State, Phase),
                                      llvm::Align(4));
  Value *Done = B.CreateICmpSGT(B.CreateSub(Phases, Token), B.getInt32(0));
  BasicBlock *Fail = Cx.newBlock("barrier.never");
  BasicBlock *Cont = Cx.newBlock("barrier.done");
  B.CreateCondBr(Done, Cont, Fail);
  B.SetInsertPoint(Fail);
  Value *Fault = FaultSlot ? FaultSlot
                           : llvm::ConstantPointerNull::get(
                                 llvm::PointerType::getUnqual(Cx.Ctx));
  B.CreateCall(faultFunction(), {Fault, B.getInt32(BarrierWaitNeverCompletes),
                                 State, siteOf(Op)});
  B.CreateBr(Cont);
  B.SetInsertPoint(Cont);
}

void BarrierEmitter::init(Value *State, Value *Count) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Align A4(4);
  B.CreateAlignedStore(Count, word(B, State, Pending), A4);
  B.CreateAlignedStore(Count, word(B, State, Expected), A4);
  B.CreateAlignedStore(B.getInt32(0), word(B, State, Phase), A4);
  B.CreateAlignedStore(B.getInt32(0), word(B, State, Tx), A4);
}

Value *BarrierEmitter::arrayBase(ValueId Mem) {
  const ValueInfo &VI = Cx.K.value(Mem);
  llvm::IRBuilder<> &B = Cx.B;
  switch (VI.Kind) {
  case ValueKind::Buffer:
    return Memory.BufBase.lookup(Mem);
  case ValueKind::Shared:
    return Memory.scratchPtr(Cx.Layout.Of[Mem].Offset);
  default: {
    uint64_t Stride = VI.Count * VI.Ty.storeSize();
    Value *Idx =
        B.CreateMul(B.CreateZExt(Pos.Unit, Cx.I64), B.getInt64(Stride));
    return B.CreateInBoundsGEP(
        Cx.I8, Memory.scratchPtr(Cx.Layout.Of[Mem].Offset), Idx);
  }
  }
}

void BarrierEmitter::emitCopy(const Operation &Op) {
  // %bar, %src, %srcOffset, %dst, %dstOffset, %count
  llvm::IRBuilder<> &B = Cx.B;
  ValueId Src = Op.Operands[1].Value, Dst = Op.Operands[3].Value;
  Type ElemTy = Cx.K.value(Src).Ty;
  uint64_t Size = ElemTy.storeSize();
  auto Offset64 = [&](const Operand &O) {
    Value *V = Values.value(O);
    return Values.operandType(O).isSigned() ? B.CreateSExt(V, Cx.I64)
                                            : B.CreateZExt(V, Cx.I64);
  };
  Value *SrcOff = Offset64(Op.Operands[2]);
  Value *DstOff = Offset64(Op.Operands[4]);
  Value *Count = B.CreateZExt(Values.value(Op.Operands[5]), Cx.I64);
  Value *SrcBase = arrayBase(Src), *DstBase = arrayBase(Dst);
  Value *SrcCount = nullptr, *DstCount = nullptr;
  if (Cx.Variant.BoundsChecked) {
    auto CountOf = [&](ValueId M) -> Value * {
      const ValueInfo &VI = Cx.K.value(M);
      return VI.Kind == ValueKind::Buffer ? Memory.BufCount.lookup(M)
                                          : B.getInt64(VI.Count);
    };
    SrcCount = CountOf(Src);
    DstCount = CountOf(Dst);
  }
  Pos.emitCountedLoop(
      B.getInt64(0), Count,
      [&](Value *K) {
        Value *SI = B.CreateAdd(SrcOff, K), *DI = B.CreateAdd(DstOff, K);
        Value *To = B.CreateInBoundsGEP(Cx.I8, DstBase,
                                        B.CreateMul(DI, B.getInt64(Size)));
        auto CopyElement = [&] {
          Value *From = B.CreateInBoundsGEP(
              Cx.I8, SrcBase, B.CreateMul(SI, B.getInt64(Size)));
          B.CreateMemCpy(To, llvm::MaybeAlign(1), From, llvm::MaybeAlign(1),
                         Size);
        };
        if (!DstCount) {
          CopyElement();
          return;
        }
        // Checked: an element outside the destination is dropped; one read
        // from outside the source is 0, as a load there would be.
        BasicBlock *Write = Cx.newBlock("copy.write");
        BasicBlock *Read = Cx.newBlock("copy.read");
        BasicBlock *Zero = Cx.newBlock("copy.zero");
        BasicBlock *Next = Cx.newBlock("copy.next");
        B.CreateCondBr(B.CreateICmpULT(DI, DstCount), Write, Next);
        B.SetInsertPoint(Write);
        B.CreateCondBr(B.CreateICmpULT(SI, SrcCount), Read, Zero);
        B.SetInsertPoint(Read);
        CopyElement();
        B.CreateBr(Next);
        B.SetInsertPoint(Zero);
        B.CreateMemSet(To, B.getInt8(0), Size, llvm::MaybeAlign(1));
        B.CreateBr(Next);
        B.SetInsertPoint(Next);
      },
      "copy");
  if (Op.Kind == OpKind::MemcpyAsyncTx) {
    // The copy has completed its bytes on the barrier (u32, wrapping).
    Value *Bytes = B.CreateTrunc(B.CreateMul(Count, B.getInt64(Size)), Cx.I32);
    update(statePtr(Op.Operands[0].Value), B.getInt32(0), B.CreateNeg(Bytes),
           Op);
  }
}

Value *BarrierEmitter::lowerUnitOp(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  switch (Op.Kind) {
  case OpKind::BarrierUnit:
    init(statePtr(Op.Result), B.getInt32(1));
    return nullptr;
  case OpKind::BarrierArrive:
    return update(statePtr(Op.Operands[0].Value), B.getInt32(1), B.getInt32(0),
                  Op);
  case OpKind::BarrierArriveTx:
    return update(statePtr(Op.Operands[0].Value),
                  operandI32(Op.Operands[1]), operandI32(Op.Operands[2]), Op);
  case OpKind::BarrierExpectTx:
    update(statePtr(Op.Operands[0].Value), B.getInt32(0),
           operandI32(Op.Operands[1]), Op);
    return nullptr;
  case OpKind::BarrierWait: {
    // A unit's own barrier (a cube's is waited on at cube level).
    Value *State = statePtr(Op.Operands[0].Value);
    checkCompleted(State, operandI32(Op.Operands[1]), Op);
    return nullptr;
  }
  case OpKind::BarrierArriveAndWait: {
    Value *State = statePtr(Op.Operands[0].Value);
    Value *Token = update(State, B.getInt32(1), B.getInt32(0), Op);
    checkCompleted(State, Token, Op);
    return nullptr;
  }
  case OpKind::MemcpyAsync:
  case OpKind::MemcpyAsyncTx:
    emitCopy(Op);
    return nullptr;
  case OpKind::TmaLoad:
  case OpKind::TmaStore:
    emitTensorCopy(Op);
    return nullptr;
  case OpKind::TmaLoadIm2col:
    emitIm2colLoad(Op);
    return nullptr;
  case OpKind::TmaCommit:
  case OpKind::TmaWaitRead:
  case OpKind::TmaWait:
    // Stores are done when issued (docs/LangRef.md §17): nothing to wait for.
    return nullptr;
  default:
    Cx.fail(Op.Loc, "internal error: '" + opName(Op.Kind) +
                        "' is not a per-unit barrier operation");
    return nullptr;
  }
}

void BarrierEmitter::lowerCubeOp(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  if (Op.Kind == OpKind::BarrierCube) {
    // Set up once per cube; the count is uniform, read from a unit still
    // running (none left: nothing can use the barrier any more).
    BasicBlock *Skip = Cx.newBlock("barrier.skip");
    Value *Count = operandI32(Op.Operands[0], Pos.firstActiveOrSkip(Skip));
    Value *State = statePtr(Op.Result);
    BasicBlock *Zero = Cx.newBlock("barrier.zero");
    BasicBlock *Ok = Cx.newBlock("barrier.init");
    B.CreateCondBr(B.CreateICmpEQ(Count, B.getInt32(0)), Zero, Ok);
    B.SetInsertPoint(Zero);
    init(State, B.getInt32(1));
    Value *Fault = FaultSlot ? FaultSlot
                             : llvm::ConstantPointerNull::get(
                                   llvm::PointerType::getUnqual(Cx.Ctx));
    B.CreateCall(faultFunction(), {Fault, B.getInt32(BarrierZeroArrivalCount),
                                   State, siteOf(Op)});
    B.CreateBr(Skip);
    B.SetInsertPoint(Ok);
    init(State, Count);
    B.CreateBr(Skip);
    B.SetInsertPoint(Skip);
    return;
  }
  // A wait on a cube's barrier: every unit still running has done all it
  // does before the wait. Arrive-and-wait arrives for each of them first, in
  // unit order; then the phase of every unit's token must have completed.
  Value *State = statePtr(Op.Operands[0].Value);
  llvm::AllocaInst *Latest = Cx.entryAlloca(Cx.I32, "latest_token");
  llvm::AllocaInst *Any = Cx.entryAlloca(Cx.I1, "any_waiting");
  B.CreateStore(B.getFalse(), Any);
  bool Arrive = Op.Kind == OpKind::BarrierArriveAndWait;
  Pos.emitCountedLoop(
      B.getInt32(0), B.getInt32(Cx.Units),
      [&](Value *U) {
        BasicBlock *Next = Cx.newBlock("wait.next");
        if (Cx.Layout.HasFlags) {
          BasicBlock *Live = Cx.newBlock("wait.unit");
          B.CreateCondBr(Pos.unitFinished(U), Next, Live);
          B.SetInsertPoint(Live);
        }
        Value *Token = Arrive ? update(State, B.getInt32(1), B.getInt32(0), Op)
                              : operandI32(Op.Operands[1], U);
        // The latest phase any unit waits for (tokens only grow).
        Value *Prev = B.CreateLoad(Cx.I32, Latest);
        Value *Seen = B.CreateLoad(Cx.I1, Any);
        Value *Later = B.CreateICmpSGT(B.CreateSub(Token, Prev), B.getInt32(0));
        B.CreateStore(B.CreateSelect(B.CreateOr(B.CreateNot(Seen), Later),
                                     Token, Prev),
                      Latest);
        B.CreateStore(B.getTrue(), Any);
        B.CreateBr(Next);
        B.SetInsertPoint(Next);
      },
      "wait");
  BasicBlock *Check = Cx.newBlock("wait.check");
  BasicBlock *End = Cx.newBlock("wait.end");
  B.CreateCondBr(B.CreateLoad(Cx.I1, Any), Check, End);
  B.SetInsertPoint(Check);
  checkCompleted(State, B.CreateLoad(Cx.I32, Latest), Op);
  B.CreateBr(End);
  B.SetInsertPoint(End);
}
