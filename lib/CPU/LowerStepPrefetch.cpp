//===- LowerStepPrefetch.cpp - Prefetch of a cube-level loop's next step --===//
//
// A cube-level `for` whose body starts by loading from buffers at indices
// that jump a page or more from one step to the next (a tiled matmul's rows
// of B: 16 rows N floats apart, 16 new pages every step) waits on those
// loads every step: no hardware prefetcher follows them, and the barrier
// after them keeps the next step's loads from overlapping this step's work.
// Right after the body's first barrier, once this step's loads are done,
// the lines that the next step's first segment will load are prefetched
// into L2, one unit in every cache line's worth of units, the index
// recomputed with the loop variable one step ahead. They arrive while this
// step computes (docs/Lowering.md §4, "Prefetch of the next step").
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

/// The most units of one step's loads prefetched, a line each, per buffer
/// (a cube of 256 f32 units reading one element each touches 16 lines).
static constexpr uint32_t MaxPrefetchedLines = 32;
/// llvm.prefetch's locality: 2 is prefetcht1, into L2. Into L1 (3) is
/// slower: the 16 rows of B fall into one L1 set, and the prefetches hold
/// L1 fill buffers that the step's own loads need (docs/Lowering.md §16,
/// "Prefetch of the next step").
static constexpr unsigned StepPrefetchLocality = 2;
/// How deep an index's chain of integer operations may be.
static constexpr unsigned MaxIndexDepth = 8;

Value *ControlEmitter::indexAt(const Operand &O, uint32_t Unit, ValueId Iv,
                               Value *IvAt, bool &UsesIv, unsigned Depth) {
  llvm::IRBuilder<> &B = Cx.B;
  if (O.isLiteral())
    return Values.value(O);
  ValueId Id = O.Value;
  if (Id >= Cx.K.Values.size() || Depth > MaxIndexDepth)
    return nullptr;
  Type T = Cx.K.value(Id).Ty;
  if (!T.isInteger() || T.isLine())
    return nullptr;
  if (Id == Iv) {
    UsesIv = true;
    return IvAt;
  }
  auto C = Values.CubeValues.find(Id);
  if (C != Values.CubeValues.end())
    return C->second;
  const ValuePlan &P = Cx.Live[Id];
  const Operation *Def = P.Def ? P.Def : P.Remat;
  if (!Def || P.NeedsSlot || Def->Result != Id)
    return nullptr;
  switch (Def->opClass()) {
  case OpClass::Builtin:
  case OpClass::BuiltinXYZ:
    return Pos.atUnit(B.getInt32(Unit), [&] { return Pos.emitBuiltin(*Def); });
  default:
    break;
  }
  if (Def->Operands.size() != 2 ||
      (Def->Kind != OpKind::Add && Def->Kind != OpKind::Sub &&
       Def->Kind != OpKind::Mul && Def->Kind != OpKind::Shl))
    return nullptr;
  Value *L = indexAt(Def->Operands[0], Unit, Iv, IvAt, UsesIv, Depth + 1);
  Value *R = L ? indexAt(Def->Operands[1], Unit, Iv, IvAt, UsesIv, Depth + 1)
               : nullptr;
  if (!L || !R || L->getType() != R->getType())
    return nullptr;
  // The same wrapping arithmetic as the kernel's (a hint only: an index
  // past the buffer is never accessed).
  switch (Def->Kind) {
  case OpKind::Add:
    return B.CreateAdd(L, R);
  case OpKind::Sub:
    return B.CreateSub(L, R);
  case OpKind::Mul:
    return B.CreateMul(L, R);
  case OpKind::Shl: { // a shift by the width or more is not a prefetch
    auto *Amount = llvm::dyn_cast<llvm::ConstantInt>(R);
    if (!Amount || Amount->getZExtValue() >= L->getType()->getIntegerBitWidth())
      return nullptr;
    return B.CreateShl(L, R);
  }
  default: // no index arithmetic this follows: no prefetch
    return nullptr;
  }
}

void ControlEmitter::emitStepPrefetch(const Operation &Op, Value *IV,
                                      Value *Step, Value *Hi) {
  // The loads of the first segment: top-level operations before the first
  // barrier or structured operation. (Called at the body's first barrier,
  // so there is one.)
  std::vector<const Operation *> Loads;
  for (const Operation &Inner : Op.Regions[0].Ops) {
    if (!Inner.Regions.empty() || Inner.opClass() == OpClass::Barrier)
      break;
    if (Inner.Kind == OpKind::Load && Inner.Operands.size() == 2 &&
        !Inner.Operands[0].isLiteral() && !Inner.Operands[1].isLiteral() &&
        Inner.Operands[0].Value < Cx.K.Values.size() &&
        Cx.K.value(Inner.Operands[0].Value).Kind == ValueKind::Buffer &&
        Memory.BufBase.count(Inner.Operands[0].Value))
      Loads.push_back(&Inner);
  }
  if (Loads.empty())
    return;
  llvm::IRBuilder<> &B = Cx.B;
  Type T = Op.ResultType;
  bool Sg = T.isSigned();
  // The next step, when there is one (computed wide: IV + step may wrap).
  llvm::Type *WideTy =
      llvm::Type::getIntNTy(Cx.Ctx, IV->getType()->getIntegerBitWidth() + 1);
  auto Widen = [&](Value *V) {
    return Sg ? B.CreateSExt(V, WideTy) : B.CreateZExt(V, WideTy);
  };
  Value *NextW = B.CreateAdd(Widen(IV), Widen(Step));
  Value *HasNext = Sg ? B.CreateICmpSLT(NextW, Widen(Hi))
                      : B.CreateICmpULT(NextW, Widen(Hi));
  Value *Next = B.CreateTrunc(NextW, IV->getType());
  for (const Operation *Ld : Loads) {
    ValueId Mem = Ld->Operands[0].Value;
    unsigned Size = Cx.K.value(Mem).Ty.storeSize();
    if (Size == 0 || Size > 64)
      continue;
    Type IdxTy = Values.operandType(Ld->Operands[1]);
    auto ToBytes = [&](Value *Idx) {
      Value *W = IdxTy.isSigned() ? B.CreateSExt(Idx, Cx.I64)
                                  : B.CreateZExt(Idx, Cx.I64);
      return B.CreateMul(W, llvm::ConstantInt::get(Cx.I64, Size));
    };
    // The index of unit 0 now and a step ahead: prefetch only when the step
    // jumps a page or more.
    bool UsesIv = false;
    Value *Now = indexAt(Ld->Operands[1], 0, Op.Result, IV, UsesIv, 0);
    Value *Ahead =
        Now ? indexAt(Ld->Operands[1], 0, Op.Result, Next, UsesIv, 0) : nullptr;
    if (!Now || !Ahead || !UsesIv)
      continue;
    uint32_t Every = std::max<uint32_t>(1, 64 / Size);
    uint32_t Lines = (Cx.Units + Every - 1) / Every;
    if (Lines > MaxPrefetchedLines)
      continue;
    Value *Jump = B.CreateSub(ToBytes(Ahead), ToBytes(Now));
    Value *AbsJump =
        B.CreateSelect(B.CreateICmpSLT(Jump, llvm::ConstantInt::get(Cx.I64, 0)),
                       B.CreateNeg(Jump), Jump);
    Value *Far = B.CreateICmpUGE(
        AbsJump, llvm::ConstantInt::get(Cx.I64, PrefetchMinJumpBytes));
    BasicBlock *Fetch = Cx.newBlock("cube.for.prefetch");
    BasicBlock *Done = Cx.newBlock("cube.for.prefetched");
    B.CreateCondBr(B.CreateAnd(HasNext, Far), Fetch, Done);
    B.SetInsertPoint(Fetch);
    for (uint32_t U = 0; U < Cx.Units; U += Every) {
      bool Ignored = false;
      Value *Idx = indexAt(Ld->Operands[1], U, Op.Result, Next, Ignored, 0);
      if (!Idx)
        break;
      emitReadPrefetch(
          B, B.CreateGEP(Cx.I8, Memory.BufBase.lookup(Mem), ToBytes(Idx)),
          StepPrefetchLocality);
    }
    B.CreateBr(Done);
    B.SetInsertPoint(Done);
  }
}
