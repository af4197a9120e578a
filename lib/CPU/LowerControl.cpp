//===- LowerControl.cpp - Barrier fission and control flow ----------------===//
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

void ControlEmitter::startDeadBlock() {
  Cx.B.SetInsertPoint(Cx.newBlock("dead"));
}

void ControlEmitter::emitSegment(llvm::ArrayRef<const Operation *> Ops) {
  Pos.InnerDim = Cx.Seg->patterns().innermostDim(Ops);
  if (!emitNarrowedSegment(Ops) && !emitSplitSegment(Ops))
    emitSegmentWith([&] {
      for (const Operation *Op : Ops)
        lowerUnitOp(*Op);
    });
  Pos.InnerDim = 0;
}

bool ControlEmitter::emitNarrowedSegment(
    llvm::ArrayRef<const Operation *> Ops) {
  if (Ops.empty() || Ops.back()->opClass() != OpClass::If)
    return false;
  const Operation &If = *Ops.back();
  const UnitRangeGuard *G = Cx.Seg->unitRangeGuard(If);
  if (If.Regions.empty())
    return false;
  // A unit outside the range skips the whole segment: what comes before the
  // `if` must be pure and kept nowhere (no per-unit slot to fill).
  // Declarations emit nothing (the analysis laid out their storage).
  llvm::ArrayRef<const Operation *> Prefix = Ops.drop_back();
  for (const Operation *Op : Prefix)
    if (!(isPureValueOp(Op->opClass()) || isDeclaration(Op->opClass())) ||
        (Op->Result != NoValue && Op->Result < Cx.Live.Values.size() &&
         Cx.Live[Op->Result].NeedsSlot))
      return emitSplitNarrowedSegment(If, Prefix);
  // Every m-th unit (a modular guard): a stepped loop over dimension 0.
  // Anything else of the box form: a range per dimension.
  if (!G || !G->modular())
    return emitBoxedSegment(If, Prefix);
  emitSteppedSegment(If, *G, Prefix);
  return true;
}

void ControlEmitter::emitSteppedSegment(
    const Operation &If, const UnitRangeGuard &G,
    llvm::ArrayRef<const Operation *> Prefix) {
  // The bound and the step, once for the cube.
  Value *At = Pos.unitForUniforms();
  Value *Lo, *Hi, *Step;
  unitRangeOf(G, At, Prefix, Lo, Hi, Step);
  emitSegmentWith(
      [&] {
        for (const Operation *Op : Prefix)
          lowerUnitOp(*Op);
        lowerBlock(If.Regions[0], Level::Unit);
      },
      Lo, Hi, Step);
}

void ControlEmitter::uniformsAt(Value *At,
                                llvm::ArrayRef<const Operation *> Prefix,
                                llvm::ArrayRef<Operand> Wanted,
                                llvm::SmallVectorImpl<Value *> &Out) {
  llvm::DenseSet<ValueId> Needed;
  for (const Operand &O : Wanted)
    if (!O.isLiteral())
      Needed.insert(O.Value);
  for (const Operation *Op : llvm::reverse(Prefix))
    if (Op->Result != NoValue && Needed.contains(Op->Result))
      for (const Operand &O : Op->Operands)
        if (!O.isLiteral())
          Needed.insert(O.Value);
  Values.SegValues.clear();
  Value *SavedUnit = Pos.Unit;
  Pos.Unit = At;
  for (const Operation *Op : Prefix)
    if (Op->Result != NoValue && Needed.contains(Op->Result))
      if (Value *V = Op->opClass() == OpClass::Len ||
                             Op->opClass() == OpClass::Get
                         ? Memory.lowerMemoryOp(*Op)
                         : Scalar.lowerValueOp(*Op))
        Values.SegValues[Op->Result] = V;
  for (const Operand &O : Wanted)
    Out.push_back(Values.value(O));
  Pos.Unit = SavedUnit;
  Values.SegValues.clear();
}

void ControlEmitter::unitRangeOf(const UnitRangeGuard &G, Value *At,
                                 llvm::ArrayRef<const Operation *> Prefix,
                                 Value *&Lo, Value *&Hi, Value *&Step) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::SmallVector<Value *, 2> Got;
  llvm::SmallVector<Operand, 2> Wanted = {G.Bound};
  if (G.UniformModulus)
    Wanted.push_back(G.ModulusValue);
  uniformsAt(At, Prefix, Wanted, Got);
  Value *Bound = Got[0];

  // unit + c OP bound, exactly: in 64 bits (128 for 64-bit types), then
  // clamped to [0, units].
  bool Sg = G.CmpTy.isSigned();
  llvm::Type *Wide = bitWidth(G.CmpTy.elementKind()) >= 64
                         ? llvm::Type::getInt128Ty(Cx.Ctx)
                         : Cx.I64;
  auto Const = [&](int64_t V) { return llvm::ConstantInt::get(Wide, V, true); };
  Value *Wb = Sg ? B.CreateSExt(Bound, Wide) : B.CreateZExt(Bound, Wide);
  Value *Edge = B.CreateSub(Wb, Const(G.Offset)); // unit < Edge: index < bound
  Lo = B.getInt32(0);
  Hi = B.getInt32(Cx.Units);
  Step = nullptr;
  if (G.modular()) {
    // (unit + c) % m == r: no unit unless 0 <= r < m; else every m-th unit
    // from the first, (r - c mod m) mod m (r and c mod m are in [0, m)).
    Value *M = Const(G.Modulus);
    if (G.UniformModulus) {
      // `rem` by m as the kernel computes it, for a dividend unit + c >= 0:
      // by 0 it is 0, which is the remainder by 1; by a negative m (signed)
      // the remainder by -m. A step past the last unit ends the loop as
      // well as m does, and keeps unit + step below 2^32.
      Value *MV = Sg ? B.CreateSExt(Got[1], Wide) : B.CreateZExt(Got[1], Wide);
      MV = B.CreateSelect(B.CreateICmpSLT(MV, Const(0)), B.CreateNeg(MV), MV);
      M = B.CreateSelect(B.CreateICmpEQ(MV, Const(0)), Const(1), MV,
                         "modulus");
      Value *Capped = B.CreateSelect(B.CreateICmpULT(M, Const(Cx.Units)), M,
                                     Const(Cx.Units));
      Step = B.CreateTrunc(Capped, Cx.I32, "unit.step");
    } else {
      Step = B.getInt32(G.Modulus);
    }
    Value *NotNegative = B.CreateICmpSGE(Wb, Const(0));
    Value *InRange = B.CreateAnd(NotNegative, B.CreateICmpSLT(Wb, M));
    Value *First = B.CreateSRem(
        B.CreateAdd(B.CreateSub(Wb, B.CreateSRem(Const(G.Offset), M)), M), M);
    Lo = clampToUnits(B, B.CreateSelect(InRange, First, Const(Cx.Units)),
                      Cx.Units);
  } else {
    unitsWhere(B, G.Pred, Edge, Cx.Units, Lo, Hi);
  }
  if (!llvm::isa<llvm::Constant>(Lo))
    Lo->setName("unit.lo");
  if (!llvm::isa<llvm::Constant>(Hi))
    Hi->setName("unit.hi");
}

void ControlEmitter::lowerGuardedIf(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  if (Op.Operands.empty() || Op.Regions.empty()) {
    Cx.fail(Op.Loc, "malformed 'if'");
    return;
  }
  // The units that may pass: those of an enclosing range, narrowed to this
  // condition's own range when it is one (one-dimensional cubes only).
  Value *Lo = Pos.RangeBegin ? Pos.RangeBegin : B.getInt32(0);
  Value *Hi = Pos.RangeEnd ? Pos.RangeEnd : B.getInt32(Cx.Units);
  const UnitRangeGuard *G = Cx.Seg->unitRangeGuard(Op);
  bool Ranged = G && !G->modular();
  if (Ranged) {
    Value *GLo, *GHi, *Step;
    unitRangeOf(*G, Pos.GuardFirst ? Pos.GuardFirst : Lo, {}, GLo, GHi, Step);
    Lo = B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, Lo, GLo);
    Hi = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Hi, GHi);
  }
  // A range is exact: its units need no test of their own.
  const Operand Cond = Op.Operands[0];
  if (!Ranged)
    Pos.Guards.push_back(
        [this, Cond](Value *U) { return Values.value(Cond, U); });

  // The first unit in [Lo, Hi) that passes every guard, Hi when none does.
  Value *First = Lo;
  if (!Pos.Guards.empty()) {
    BasicBlock *Pre = B.GetInsertBlock();
    BasicBlock *Head = Cx.newBlock("guard.scan");
    BasicBlock *Test = Cx.newBlock("guard.test");
    BasicBlock *Next = Cx.newBlock("guard.next");
    BasicBlock *Done = Cx.newBlock("guard.found");
    B.CreateBr(Head);
    B.SetInsertPoint(Head);
    llvm::PHINode *U = B.CreatePHI(Cx.I32, 2, "guard.unit");
    U->addIncoming(Lo, Pre);
    B.CreateCondBr(B.CreateICmpULT(U, Hi), Test, Done);
    B.SetInsertPoint(Test);
    for (auto &Guard : Pos.Guards) {
      BasicBlock *Pass = Cx.newBlock("guard.pass");
      B.CreateCondBr(Guard(U), Pass, Next);
      B.SetInsertPoint(Pass);
    }
    B.CreateBr(Done);
    B.SetInsertPoint(Next);
    U->addIncoming(B.CreateAdd(U, B.getInt32(1)), Next);
    B.CreateBr(Head);
    B.SetInsertPoint(Done);
    First = U;
  }
  // No unit passes: the body does not run, and nothing of it (not even a
  // uniform bound, which may load) is evaluated.
  BasicBlock *Run = Cx.newBlock("guard.if");
  BasicBlock *Merge = Cx.newBlock("guard.endif");
  B.CreateCondBr(B.CreateICmpULT(First, Hi), Run, Merge);
  B.SetInsertPoint(Run);
  Value *SavedBegin = Pos.RangeBegin, *SavedEnd = Pos.RangeEnd,
        *SavedFirst = Pos.GuardFirst;
  if (Ranged || SavedBegin) {
    Pos.RangeBegin = Lo;
    Pos.RangeEnd = Hi;
  }
  Pos.GuardFirst = First;
  lowerCubeBlock(Op.Regions[0]);
  Pos.GuardFirst = SavedFirst;
  Pos.RangeBegin = SavedBegin;
  Pos.RangeEnd = SavedEnd;
  if (!Ranged)
    Pos.Guards.pop_back();
  if (!Cx.terminated())
    B.CreateBr(Merge);
  B.SetInsertPoint(Merge);
}

void ControlEmitter::emitSegmentWith(llvm::function_ref<void()> Body,
                                     Value *Begin, Value *End, Value *Step,
                                     const UnitBox *Box, bool Cold) {
  llvm::IRBuilder<> &B = Cx.B;
  Values.SegValues.clear();
  SegmentHoistedJump = false;
  Pos.emitNest(Body, Begin, End, Step, Box, Cold);
  Values.SegValues.clear();
  if (SegmentHoistedJump && !Loops.empty() && Loops.back().Hoisted) {
    // break/continue of a cube-level loop: uniform, so all units agreed.
    LoopTarget &T = Loops.back();
    BasicBlock *NoBreak = Cx.newBlock("nobreak");
    B.CreateCondBr(B.CreateLoad(Cx.I1, T.BreakFlag), T.Break, NoBreak);
    B.SetInsertPoint(NoBreak);
    BasicBlock *NoCont = Cx.newBlock("nocontinue");
    B.CreateCondBr(B.CreateLoad(Cx.I1, T.ContinueFlag), T.Continue, NoCont);
    B.SetInsertPoint(NoCont);
  }
  SegmentHoistedJump = false;
}

static bool isPlaneOp(const Operation &Op) {
  switch (Op.opClass()) {
  case OpClass::PlaneReduce:
  case OpClass::PlaneBool:
  case OpClass::PlaneLane:
  case OpClass::PlaneElect:
  case OpClass::PlaneBallot:
    return true;
  default:
    return false;
  }
}

void ControlEmitter::lowerCubeBlock(const Block &Blk) {
  // Consecutive plane operations go to the PlaneEmitter together: those of
  // the vector form share one loop over planes (docs/Lowering.md §6).
  std::vector<const Operation *> Run, PlaneOps;
  auto FlushPlanes = [&] {
    if (!PlaneOps.empty())
      Plane.lowerPlaneOps(PlaneOps);
    PlaneOps.clear();
  };
  auto Flush = [&] {
    FlushPlanes();
    if (!Run.empty())
      emitSegment(Run);
    Run.clear();
  };
  for (const Operation &Op : Blk.Ops) {
    if (!Cx.Seg->isCut(Op)) {
      FlushPlanes();
      Run.push_back(&Op);
      continue;
    }
    if (isPlaneOp(Op)) {
      if (!Run.empty()) // the segment before it (no plane operation waits)
        Flush();
      PlaneOps.push_back(&Op);
      continue;
    }
    Flush();
    if (Cx.Seg->isInterchanged(Op)) {
      lowerInterchangedFor(Op);
      continue;
    }
    if (Cx.Seg->isGuardedIf(Op)) {
      lowerGuardedIf(Op);
      continue;
    }
    switch (Op.opClass()) {
    case OpClass::Barrier:
      // The first barrier of a cube-level `for`'s body: this step's first
      // loads are done, prefetch the next step's (LowerStepPrefetch.cpp).
      if (PendingPrefetch.Op && &Blk == &PendingPrefetch.Op->Regions[0]) {
        emitStepPrefetch(*PendingPrefetch.Op, PendingPrefetch.IV,
                         PendingPrefetch.Step, PendingPrefetch.Hi);
        PendingPrefetch = {};
      }
      break; // the cut between two unit loops is the barrier
    case OpClass::BarrierDecl:
    case OpClass::BarrierWait:
      Barriers.lowerCubeOp(Op); // a cube's barrier, between unit loops
      break;
    case OpClass::If:
      lowerIf(Op, Level::Cube);
      break;
    case OpClass::For:
      lowerFor(Op, Level::Cube);
      break;
    case OpClass::Loop:
      lowerLoop(Op, Level::Cube);
      break;
    case OpClass::Switch:
      lowerSwitch(Op, Level::Cube);
      break;
    case OpClass::Cmma:
      Cmma.lowerCmmaOp(Op);
      break;
    default:
      Plane.lowerPlaneOp(Op);
      break;
    }
  }
  Flush();
}

void ControlEmitter::lowerUnitOp(const Operation &Op) {
  switch (Op.opClass()) {
  case OpClass::If:
    return lowerIf(Op, Level::Unit);
  case OpClass::For:
    return lowerFor(Op, Level::Unit);
  case OpClass::Loop:
    return lowerLoop(Op, Level::Unit);
  case OpClass::Switch:
    return lowerSwitch(Op, Level::Unit);
  case OpClass::Jump:
    return lowerJump(Op);
  case OpClass::MatrixDecl:
    return; // a fragment's storage is laid out in scratch (ScratchLayout.h)
  case OpClass::DebugPrint:
    return Scalar.lowerDebugPrint(Op);
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
    if (Value *V = Memory.lowerMemoryOp(Op); V && Op.Result != NoValue)
      Values.define(Op.Result, V);
    return;
  case OpClass::TensorMeta:
    if (Value *V = Memory.emitTensorMeta(Op); V && Op.Result != NoValue)
      Values.define(Op.Result, V);
    return;
  case OpClass::CmmaElem:
  case OpClass::CmmaSet:
    if (Value *V = Cmma.lowerUnitOp(Op); V && Op.Result != NoValue)
      Values.define(Op.Result, V);
    return;
  case OpClass::BarrierDecl:
  case OpClass::BarrierArrive:
  case OpClass::BarrierExpectTx:
  case OpClass::BarrierWait:
  case OpClass::AsyncCopy:
  case OpClass::TensorCopy:
  case OpClass::TensorStoreGroup:
    if (Value *V = Barriers.lowerUnitOp(Op); V && Op.Result != NoValue)
      Values.define(Op.Result, V);
    return;
  default:
    if (auto Known = Values.Known.find(&Op); Known != Values.Known.end()) {
      Values.define(Op.Result, Cx.B.getInt1(Known->second));
      return;
    }
    if (Value *V = Scalar.lowerValueOp(Op); V && Op.Result != NoValue)
      Values.define(Op.Result, V);
    return;
  }
}

void ControlEmitter::lowerJump(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  if (Op.Kind == OpKind::Return) {
    Pos.markReturned();
    startDeadBlock();
    return;
  }
  if (Loops.empty()) {
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' outside a loop");
    return;
  }
  LoopTarget &T = Loops.back();
  bool IsBreak = Op.Kind == OpKind::Break;
  if (!T.Hoisted) {
    B.CreateBr(IsBreak ? T.Break : T.Continue);
  } else {
    B.CreateStore(B.getTrue(), IsBreak ? T.BreakFlag : T.ContinueFlag);
    SegmentHoistedJump = true;
    B.CreateBr(Pos.UnitLatch);
  }
  startDeadBlock();
}

// ---- Constructs, at either level ----
//
// At unit level (inside a unit loop) a construct is ordinary per-unit control
// flow. At cube level (a split construct, outside the unit loops) its
// condition, selector or bounds are read from the first unit that has not
// returned (the construct is skipped when none is left), a `for` induction
// variable is a cube-level value, loops stop once every unit has returned,
// and break/continue go through flags (emitSegmentWith).

/// Names of the blocks a construct at \p L creates: "cube.NAME" at cube level.
static std::string blockName(Level L, const char *Name) {
  return (L == Level::Cube ? "cube." : "") + std::string(Name);
}

void ControlEmitter::lowerBlock(const Block &Blk, Level L) {
  if (L == Level::Cube)
    return lowerCubeBlock(Blk);
  for (const Operation &Op : Blk.Ops)
    lowerUnitOp(Op);
}

LoopTarget ControlEmitter::loopTarget(Level L, BasicBlock *Break,
                                      BasicBlock *Continue) {
  if (L == Level::Unit)
    return {false, Break, Continue, nullptr, nullptr};
  return {true, Break, Continue, Cx.entryAlloca(Cx.I1, "break"),
          Cx.entryAlloca(Cx.I1, "continue")};
}

void ControlEmitter::lowerIf(const Operation &Op, Level L) {
  llvm::IRBuilder<> &B = Cx.B;
  if (Op.Operands.empty() || Op.Regions.empty()) {
    Cx.fail(Op.Loc, "malformed 'if'");
    return;
  }
  bool Cube = L == Level::Cube;
  if (!Cube && (Memory.Predicate || flattensIf(Op)))
    return lowerFlattenedIf(Op);
  BasicBlock *Merge = Cube ? Cx.newBlock("cube.endif") : nullptr;
  Value *C = Values.value(Op.Operands[0],
                          Cube ? Pos.firstActiveOrSkip(Merge) : nullptr);
  BasicBlock *Then = Cx.newBlock(blockName(L, "then"));
  bool HasElse = Op.HasElse && Op.Regions.size() > 1;
  BasicBlock *Else = HasElse ? Cx.newBlock(blockName(L, "else")) : nullptr;
  if (!Merge)
    Merge = Cx.newBlock("endif");
  B.CreateCondBr(C, Then, Else ? Else : Merge);
  B.SetInsertPoint(Then);
  lowerBlock(Op.Regions[0], L);
  if (!Cx.terminated())
    B.CreateBr(Merge);
  if (Else) {
    B.SetInsertPoint(Else);
    lowerBlock(Op.Regions[1], L);
    if (!Cx.terminated())
      B.CreateBr(Merge);
  }
  B.SetInsertPoint(Merge);
}

/// Shared by the `for` of both levels: checks the step, runs
/// k = lo, lo+s, ... while k < hi, and stops rather than wrap on overflow.
namespace {
struct ForShape {
  BasicBlock *Header, *Body, *Latch, *Exit;
  llvm::PHINode *IV;
};
} // namespace

static ForShape beginFor(LoweringContext &L, Type T, Value *Lo, Value *Hi,
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

/// The most iterations of a `for` with literal bounds that runs without a
/// stop poll: such a loop ends soon by itself (a loop in its body polls on
/// its own), and one fully unrolled would otherwise poll once per copy.
static constexpr uint64_t MaxUnpolledTrips = 4096;

/// Whether \p Op, a `for`, has literal bounds and step and at most
/// MaxUnpolledTrips iterations.
static bool isShortLiteralFor(const Operation &Op) {
  std::optional<uint64_t> N = literalTrips(Op);
  return N && *N <= MaxUnpolledTrips;
}

/// Whether `k + step` cannot wrap for any `k < hi` of \p Op, a `for`: a
/// literal step of 1 (k < hi <= the type's largest value), or literal
/// `step` and `hi` with `hi - 1 + step` inside the type. Such a loop needs
/// no overflow exit at its latch, and LLVM then sees its trip count as the
/// difference of the bounds (a literal loop's as a constant, which is what
/// full unrolling and the vectoriser need).
static bool incrementCannotWrap(const Operation &Op) {
  Type T = Op.ResultType;
  unsigned W = bitWidth(T.elementKind());
  if (W == 0 || W > 64)
    return false;
  auto Read = [&](const Operand &O) -> __int128 {
    uint64_t Bits = O.Lit.Bits;
    if (W < 64)
      Bits &= (uint64_t(1) << W) - 1;
    if (T.isSigned() && (Bits >> (W - 1)) & 1)
      return static_cast<__int128>(Bits) - (static_cast<__int128>(1) << W);
    return Bits;
  };
  __int128 Step = 1;
  if (Op.Operands.size() > 2) {
    if (!Op.Operands[2].isLiteral())
      return false;
    Step = Read(Op.Operands[2]);
  }
  if (Step <= 0)
    return false; // no iteration runs; the latch is never reached
  if (Step == 1)
    return true;
  if (!Op.Operands[1].isLiteral())
    return false;
  __int128 Max = T.isSigned() ? (static_cast<__int128>(1) << (W - 1)) - 1
                              : (static_cast<__int128>(1) << W) - 1;
  return Read(Op.Operands[1]) - 1 + Step <= Max;
}

/// The most operations (nested literal loops counted once per iteration)
/// a per-unit `for` with literal bounds may hold, times its trips, to be
/// marked for full unrolling. LLVM's own full unrolling stops at a cost of
/// 300 instructions at O3, which a short loop with a large body (a
/// neighbour loop of 4 with a hundred operations each) exceeds; left a
/// loop, it keeps the unit loop around it from being vectorised (the
/// vectoriser takes innermost loops only). Unrolled, the unit loop is one
/// straight body.
static constexpr uint64_t MaxUnrolledUnitOps = 2048;

/// The operations of \p Blk, each nested `for` with literal bounds counted
/// per iteration; nullopt when a nested loop has no literal trip count (a
/// loop left a loop: unrolling around it gains nothing for the vectoriser).
static std::optional<uint64_t> unrolledOps(const Block &Blk) {
  uint64_t N = 0;
  for (const Operation &Op : Blk.Ops) {
    OpClass C = Op.opClass();
    if (C == OpClass::Loop)
      return std::nullopt;
    uint64_t Inner = 0;
    for (const Block &R : Op.Regions) {
      std::optional<uint64_t> RN = unrolledOps(R);
      if (!RN)
        return std::nullopt;
      Inner += *RN;
    }
    if (C == OpClass::For) {
      std::optional<uint64_t> Trips = literalTrips(Op);
      if (!Trips || *Trips > MaxUnrolledUnitOps)
        return std::nullopt;
      Inner *= *Trips;
    }
    N += 1 + Inner;
    if (N > MaxUnrolledUnitOps)
      return N;
  }
  return N;
}

/// Whether \p Op, a per-unit `for`, is marked for full unrolling: literal
/// bounds, and its body times its trips within MaxUnrolledUnitOps.
static bool unrollsInUnit(const Operation &Op) {
  std::optional<uint64_t> Trips = literalTrips(Op);
  if (!Trips || *Trips == 0 || *Trips > MaxUnrolledUnitOps ||
      Op.Regions.empty())
    return false;
  std::optional<uint64_t> Body = unrolledOps(Op.Regions[0]);
  return Body && *Body * *Trips <= MaxUnrolledUnitOps;
}

static void endFor(LoweringContext &L, ForShape &S, Type T, Value *Step,
                   bool Poll, bool CannotWrap, bool Unroll) {
  auto &B = L.B;
  if (!L.terminated())
    B.CreateBr(S.Latch);
  B.SetInsertPoint(S.Latch);
  if (Poll) {
    L.emitStopPoll();
    S.Latch = B.GetInsertBlock();
  }
  llvm::BranchInst *Back;
  if (CannotWrap) {
    Value *Next = B.CreateAdd(S.IV, Step, "k.next", /*HasNUW=*/!T.isSigned(),
                              /*HasNSW=*/T.isSigned());
    S.IV->addIncoming(Next, S.Latch);
    Back = B.CreateBr(S.Header);
  } else {
    auto ID = T.isSigned() ? llvm::Intrinsic::sadd_with_overflow
                           : llvm::Intrinsic::uadd_with_overflow;
    Value *R = B.CreateBinaryIntrinsic(ID, S.IV, Step);
    Value *Next = B.CreateExtractValue(R, 0);
    Value *Ovf = B.CreateExtractValue(R, 1);
    S.IV->addIncoming(Next, S.Latch);
    Back = B.CreateCondBr(Ovf, S.Exit, S.Header);
  }
  if (Unroll) {
    llvm::LLVMContext &Ctx = L.Ctx;
    llvm::Metadata *Props[] = {
        nullptr, llvm::MDNode::get(Ctx, {llvm::MDString::get(
                                            Ctx, "llvm.loop.unroll.full")})};
    llvm::MDNode *LoopID = llvm::MDNode::getDistinct(Ctx, Props);
    LoopID->replaceOperandWith(0, LoopID);
    Back->setMetadata(llvm::LLVMContext::MD_loop, LoopID);
  }
  B.SetInsertPoint(S.Exit);
}

void ControlEmitter::lowerFor(const Operation &Op, Level L) {
  llvm::IRBuilder<> &B = Cx.B;
  Type T = Op.ResultType;
  if (Op.Operands.size() < 2 || Op.Regions.empty() || !T.isInteger() ||
      T.isLine()) {
    Cx.fail(Op.Loc, "'for' needs integer bounds and a body");
    return;
  }
  bool Cube = L == Level::Cube;
  BasicBlock *Exit = Cube ? Cx.newBlock("cube.for.end") : nullptr;
  Value *At = Cube ? Pos.firstActiveOrSkip(Exit) : nullptr;
  Value *Lo = Values.value(Op.Operands[0], At),
        *Hi = Values.value(Op.Operands[1], At);
  Value *Step = Op.Operands.size() > 2
                    ? Values.value(Op.Operands[2], At)
                    : llvm::ConstantInt::get(Lo->getType(), 1);
  if (!Exit)
    Exit = Cx.newBlock("for.end");
  LoopTarget Target = loopTarget(L, Exit, nullptr);
  if (!Cube && !isShortLiteralFor(Op) && bitWidth(T.elementKind()) >= 32 &&
      Op.Operands.size() == 2) {
    lowerChunkedFor(Op, Lo, Hi, Target);
    return;
  }
  ForShape S = beginFor(Cx, T, Lo, Hi, Step, Exit);
  Target.Continue = S.Latch;
  if (Cube) {
    B.CreateStore(B.getFalse(), Target.BreakFlag);
    B.CreateStore(B.getFalse(), Target.ContinueFlag);
    Pos.exitWhenAllReturned(Exit, "cube.for.live");
  }
  Value *In =
      T.isSigned() ? B.CreateICmpSLT(S.IV, Hi) : B.CreateICmpULT(S.IV, Hi);
  B.CreateCondBr(In, S.Body, Exit);
  B.SetInsertPoint(S.Body);
  if (Cube) {
    Values.CubeValues[Op.Result] = S.IV;
    // A loop across the units has no barrier: nothing to prefetch for.
    if (!Cx.Seg->runsAcross(Op))
      PendingPrefetch = {&Op, S.IV, Step, Hi};
  } else {
    Values.define(Op.Result, S.IV);
  }
  Loops.push_back(Target);
  lowerBlock(Op.Regions[0], L);
  Loops.pop_back();
  if (PendingPrefetch.Op == &Op)
    PendingPrefetch = {};
  endFor(Cx, S, T, Step, !isShortLiteralFor(Op), incrementCannotWrap(Op),
         !Cube && unrollsInUnit(Op));
}

/// Iterations of a per-unit `for` between two polls of the stop flag.
static constexpr uint64_t PolledChunkTrips = 4096;

// A unit's own `for` of step 1 that would poll every iteration polls once
// per chunk of PolledChunkTrips iterations instead: an outer loop over the
// chunks, which polls at its latch, around the loop itself, which then has
// no atomic load in it (the vectoriser refuses a loop with one, and each
// poll is a load, a compare and a branch an iteration). A `break` leaves
// both loops; a `continue` goes to the inner latch.
void ControlEmitter::lowerChunkedFor(const Operation &Op, Value *Lo, Value *Hi,
                                     LoopTarget Target) {
  llvm::IRBuilder<> &B = Cx.B;
  Type T = Op.ResultType;
  bool Sg = T.isSigned();
  auto Below = [&](Value *X, Value *Y) {
    return Sg ? B.CreateICmpSLT(X, Y) : B.CreateICmpULT(X, Y);
  };
  llvm::Type *Ty = Lo->getType();
  BasicBlock *Exit = Target.Break;
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *ChunkHead = Cx.newBlock("for.chunk");
  BasicBlock *ChunkSet = Cx.newBlock("for.chunk.set");
  BasicBlock *Header = Cx.newBlock("for");
  BasicBlock *Body = Cx.newBlock("for.body");
  BasicBlock *Latch = Cx.newBlock("for.latch");
  BasicBlock *ChunkLatch = Cx.newBlock("for.chunk.latch");
  B.CreateBr(ChunkHead);

  B.SetInsertPoint(ChunkHead);
  llvm::PHINode *Start = B.CreatePHI(Ty, 2, "k.chunk");
  Start->addIncoming(Lo, Pre);
  B.CreateCondBr(Below(Start, Hi), ChunkSet, Exit);

  // start < hi: hi - start read unsigned is the distance left, exactly, and
  // start + chunk below hi when the distance is larger.
  B.SetInsertPoint(ChunkSet);
  Value *Chunk = llvm::ConstantInt::get(Ty, PolledChunkTrips);
  Value *Left = B.CreateSub(Hi, Start);
  Value *End = B.CreateSelect(B.CreateICmpUGT(Left, Chunk),
                              B.CreateAdd(Start, Chunk), Hi, "k.chunk.end");
  B.CreateBr(Header);

  B.SetInsertPoint(Header);
  llvm::PHINode *IV = B.CreatePHI(Ty, 2, "k");
  IV->addIncoming(Start, ChunkSet);
  B.CreateCondBr(Below(IV, End), Body, ChunkLatch);

  B.SetInsertPoint(Body);
  Values.define(Op.Result, IV);
  Target.Continue = Latch;
  Loops.push_back(Target);
  lowerBlock(Op.Regions[0], Level::Unit);
  Loops.pop_back();
  if (!Cx.terminated())
    B.CreateBr(Latch);

  B.SetInsertPoint(Latch);
  Value *Next = B.CreateAdd(IV, B.getIntN(Ty->getIntegerBitWidth(), 1),
                            "k.next", /*HasNUW=*/!Sg, /*HasNSW=*/Sg);
  IV->addIncoming(Next, Latch);
  B.CreateBr(Header);

  B.SetInsertPoint(ChunkLatch);
  Cx.emitStopPoll();
  Start->addIncoming(End, B.GetInsertBlock());
  B.CreateBr(ChunkHead);
  B.SetInsertPoint(Exit);
}

void ControlEmitter::lowerLoop(const Operation &Op, Level L) {
  llvm::IRBuilder<> &B = Cx.B;
  if (Op.Regions.empty()) {
    Cx.fail(Op.Loc, "'loop' without a body");
    return;
  }
  BasicBlock *Header = Cx.newBlock(blockName(L, "loop"));
  BasicBlock *Exit = Cx.newBlock(blockName(L, "loop.end"));
  LoopTarget Target = loopTarget(L, Exit, Header);
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  // Every iteration starts here (a `continue` too): the poll of a loop
  // that may never end.
  Cx.emitStopPoll();
  if (L == Level::Cube) {
    B.CreateStore(B.getFalse(), Target.BreakFlag);
    B.CreateStore(B.getFalse(), Target.ContinueFlag);
    Pos.exitWhenAllReturned(Exit, "cube.loop.live");
  }
  Loops.push_back(Target);
  lowerBlock(Op.Regions[0], L);
  Loops.pop_back();
  if (!Cx.terminated())
    B.CreateBr(Header);
  B.SetInsertPoint(Exit);
}

/// Whether case label \p Label is a value of the selector type \p T; a label
/// outside the type's range never matches (it is not truncated).
static bool labelFits(CaseLabel Label, Type T) {
  return Label.fits(bitWidth(T.elementKind()), T.isSigned());
}

/// Emits the dispatch of a switch on \p V; returns the case blocks (the
/// default last when present) and leaves the builder nowhere.
static std::vector<BasicBlock *> beginSwitch(LoweringContext &L,
                                             const Operation &Op, Type SelTy,
                                             Value *V, BasicBlock *Merge) {
  std::vector<BasicBlock *> Blocks;
  for (size_t I = 0; I < Op.Regions.size(); ++I)
    Blocks.push_back(L.newBlock("case"));
  size_t Cases = std::min(switchCaseCount(Op), Op.Regions.size());
  bool HasDefault = Op.HasDefault && Op.Regions.size() > Cases;
  BasicBlock *Default = HasDefault ? Blocks[Cases] : Merge;
  auto *SI = L.B.CreateSwitch(V, Default, Op.CaseValues.size());
  auto *IT = llvm::cast<llvm::IntegerType>(V->getType());
  for (size_t I = 0; I < Cases; ++I) {
    // Every label of a case (`case 1, 3, 5`) branches to its one block.
    for (CaseLabel Label : switchCaseLabels(Op, I)) {
      if (!labelFits(Label, SelTy))
        continue; // never matches
      auto *C = llvm::ConstantInt::get(IT, Label.bits(),
                                       /*IsSigned=*/Label.isNegative());
      if (SI->findCaseValue(C) == SI->case_default()) // first label wins
        SI->addCase(C, Blocks[I]);
    }
  }
  return Blocks;
}

void ControlEmitter::lowerSwitch(const Operation &Op, Level L) {
  llvm::IRBuilder<> &B = Cx.B;
  if (Op.Operands.empty() || !Values.operandType(Op.Operands[0]).isInteger() ||
      Values.operandType(Op.Operands[0]).isLine()) {
    Cx.fail(Op.Loc, "'switch' needs an integer scalar");
    return;
  }
  BasicBlock *Merge = Cx.newBlock(blockName(L, "switch.end"));
  Value *At = L == Level::Cube ? Pos.firstActiveOrSkip(Merge) : nullptr;
  auto Blocks = beginSwitch(Cx, Op, Values.operandType(Op.Operands[0]),
                            Values.value(Op.Operands[0], At), Merge);
  for (size_t I = 0; I < Blocks.size(); ++I) {
    B.SetInsertPoint(Blocks[I]);
    lowerBlock(Op.Regions[I], L);
    if (!Cx.terminated())
      B.CreateBr(Merge);
  }
  B.SetInsertPoint(Merge);
}
