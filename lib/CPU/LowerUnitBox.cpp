//===- LowerUnitBox.cpp - Segments narrowed to a box of units -------------===//
//
// A segment that ends in `if (index OP bound && ...)`, each index a unit's
// position along one dimension plus an offset (UnitRange.h,
// UnitBoxCondition), runs each dimension's unit loop over the units whose
// comparisons hold instead of testing (and, vectorised, masking) every
// unit: the tail cubes of a grid do part of the work, and cubes with none
// of it skip the segment (docs/Lowering.md §4, "Narrowed unit loops").
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

namespace {

/// Whether the sums below need 128 bits: a 64-bit type on the way.
bool needsWide(const UnitIndexBound &Bd) {
  auto Big = [](Type T) { return bitWidth(T.elementKind()) >= 64; };
  if (Big(Bd.CmpTy))
    return true;
  for (const UniformTerm &T : Bd.Index.Terms)
    if (Big(T.Ty))
      return true;
  for (const IndexStep &S : Bd.Index.Checks)
    if (Big(S.Ty))
      return true;
  return false;
}

} // namespace

Value *kiln::lowering::clampToUnits(llvm::IRBuilder<> &B, Value *V,
                                    uint32_t Units) {
  llvm::Type *T = V->getType();
  V = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, V,
                              llvm::ConstantInt::get(T, Units));
  V = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, V,
                              llvm::ConstantInt::get(T, 0));
  return B.CreateTrunc(V, B.getInt32Ty());
}

void kiln::lowering::unitsWhere(llvm::IRBuilder<> &B, OpKind Pred, Value *Edge,
                                uint32_t Units, Value *&Lo, Value *&Hi) {
  Value *One = llvm::ConstantInt::get(Edge->getType(), 1);
  switch (Pred) {
  case OpKind::Lt:
    Hi = clampToUnits(B, Edge, Units);
    break;
  case OpKind::Le:
    Hi = clampToUnits(B, B.CreateAdd(Edge, One), Units);
    break;
  case OpKind::Gt:
    Lo = clampToUnits(B, B.CreateAdd(Edge, One), Units);
    break;
  case OpKind::Ge:
    Lo = clampToUnits(B, Edge, Units);
    break;
  default: // Eq: the one position at Edge, if any
    Lo = clampToUnits(B, Edge, Units);
    Hi = clampToUnits(B, B.CreateAdd(Edge, One), Units);
    break;
  }
}

UnitBox ControlEmitter::boxSpan(const UnitBoxCondition &Box,
                                llvm::ArrayRef<const Operation *> Prefix,
                                Value *&Exact, Value *At) {
  llvm::IRBuilder<> &B = Cx.B;

  // The bounds and offsets, once for the cube.
  if (!At)
    At = Pos.unitForUniforms();
  llvm::SmallVector<Operand, 8> Wanted;
  for (const UnitIndexBound &Bd : Box.Bounds) {
    Wanted.push_back(Bd.Bound);
    for (const UniformTerm &T : Bd.Index.Terms)
      Wanted.push_back(T.Value);
  }
  llvm::SmallVector<Value *, 8> Got;
  uniformsAt(At, Prefix, Wanted, Got);

  // Each comparison, exactly: pos OP bound - offset in 64 bits (128 with a
  // 64-bit type), then clamped to the dimension.
  UnitBox Span;
  Exact = B.getTrue();
  unsigned Next = 0;
  for (const UnitIndexBound &Bd : Box.Bounds) {
    const UnitIndex &Ix = Bd.Index;
    llvm::Type *Wide = needsWide(Bd) ? llvm::Type::getInt128Ty(Cx.Ctx) : Cx.I64;
    auto Const = [&](int64_t V) {
      return llvm::ConstantInt::get(Wide, V, true);
    };
    auto Extend = [&](Value *V, Type T) {
      return T.isSigned() ? B.CreateSExt(V, Wide) : B.CreateZExt(V, Wide);
    };
    Value *Bound = Extend(Got[Next++], Bd.CmpTy);
    // The offset reached after the first N terms, the cube's own part of
    // an absolute position included.
    llvm::SmallVector<Value *, 4> TermSums;
    Value *Base = Const(0);
    if (Ix.Absolute) {
      uint32_t D = Cx.K.CubeDim[Ix.Dim];
      Value *Cube = Ix.AbsoluteLinear ? Pos.CubeLinear : Pos.CubePos[Ix.Dim];
      Base = B.CreateMul(B.CreateZExt(Cube, Wide), Const(D));
    }
    TermSums.push_back(Base);
    for (const UniformTerm &T : Ix.Terms) {
      Value *V = Extend(Got[Next++], T.Ty);
      TermSums.push_back(T.Negated ? B.CreateSub(TermSums.back(), V)
                                   : B.CreateAdd(TermSums.back(), V));
    }
    // Every step of the index fits its type for every unit of this cube:
    // positions [0, cube_dim) of the dimension.
    int64_t Last = int64_t(Cx.K.CubeDim[Ix.Dim]) - 1;
    for (const IndexStep &S : Ix.Checks) {
      unsigned W = bitWidth(S.Ty.elementKind());
      Value *Low = B.CreateAdd(TermSums[S.Terms], Const(S.Literal));
      Value *High = B.CreateAdd(Low, Const(Last));
      llvm::APInt Min = S.Ty.isSigned() ? llvm::APInt::getSignedMinValue(W)
                                        : llvm::APInt::getMinValue(W);
      llvm::APInt Max = S.Ty.isSigned() ? llvm::APInt::getSignedMaxValue(W)
                                        : llvm::APInt::getMaxValue(W);
      unsigned WW = Wide->getIntegerBitWidth();
      Value *MinC = llvm::ConstantInt::get(
          Wide, S.Ty.isSigned() ? Min.sext(WW) : Min.zext(WW));
      Value *MaxC = llvm::ConstantInt::get(
          Wide, S.Ty.isSigned() ? Max.sext(WW) : Max.zext(WW));
      Exact = B.CreateAnd(Exact, B.CreateAnd(B.CreateICmpSGE(Low, MinC),
                                             B.CreateICmpSLE(High, MaxC)));
    }
    // pos + offset OP bound  <=>  pos OP bound - offset.
    Value *Offset = B.CreateAdd(TermSums.back(), Const(Ix.Literal));
    Value *Edge = B.CreateSub(Bound, Offset);
    uint32_t Units = Cx.K.CubeDim[Ix.Dim];
    Value *Lo = B.getInt32(0), *Hi = B.getInt32(Units);
    unitsWhere(B, Bd.Pred, Edge, Units, Lo, Hi);
    unsigned D = Ix.Dim;
    Span.Begin[D] = Span.Begin[D] ? B.CreateBinaryIntrinsic(
                                        llvm::Intrinsic::umax, Span.Begin[D], Lo)
                                  : Lo;
    Span.End[D] = Span.End[D] ? B.CreateBinaryIntrinsic(llvm::Intrinsic::umin,
                                                        Span.End[D], Hi)
                              : Hi;
  }
  return Span;
}

bool ControlEmitter::availableAtCubeStart(const Operand &O, unsigned Depth) {
  if (O.isLiteral())
    return true;
  if (Depth > 32 || O.Value >= Cx.K.Values.size())
    return false;
  if (Values.CubeValues.count(O.Value))
    return true;
  const ValuePlan &P = Cx.Live[O.Value];
  if (!P.Remat || P.NeedsSlot)
    return false;
  for (const Operand &In : P.Remat->Operands)
    if (!availableAtCubeStart(In, Depth + 1))
      return false;
  return true;
}

bool ControlEmitter::launchInvariant(const Operand &O, unsigned Depth) {
  if (O.isLiteral())
    return true;
  if (Depth > 32)
    return false;
  if (llvm::is_contained(Cx.K.Params, O.Value))
    return true;
  const Operation *Def = Cx.Seg->patterns().def(O.Value);
  if (!Def || !Def->Regions.empty())
    return false;
  if (Def->opClass() == OpClass::Builtin ||
      Def->opClass() == OpClass::BuiltinXYZ)
    return Def->Kind == OpKind::CubeDim || Def->Kind == OpKind::CubeCount ||
           Def->Kind == OpKind::PlaneDim;
  if (!isPureValueOp(Def->opClass()))
    return false;
  for (const Operand &In : Def->Operands)
    if (!launchInvariant(In, Depth + 1))
      return false;
  return true;
}

void ControlEmitter::skipCubeOutside(const UnitBoxCondition &Box,
                                     BasicBlock *Skip, BasicBlock *SkipRow,
                                     unsigned WalkDim) {
  for (const UnitIndexBound &Bd : Box.Bounds) {
    if (!availableAtCubeStart(Bd.Bound))
      return;
    for (const UniformTerm &T : Bd.Index.Terms)
      if (!availableAtCubeStart(T.Value))
        return;
  }
  // The rest of the row along the walk: a dimension whose every bound and
  // offset is the same for every cube of the launch says the same for the
  // cubes that follow, when its index does not move along the walk (its
  // range is this cube's), or moves forward with it and this cube is
  // already past an upper bound (a range ending at 0: every later cube is
  // further past it).
  enum RowRule : uint8_t { None, Same, PastEnd };
  RowRule Rule[3] = {None, None, None};
  bool AnyRule = false;
  for (unsigned D = 0; D < 3; ++D) {
    bool Bounded = false, Invariant = true, Moves = false;
    for (const UnitIndexBound &Bd : Box.Bounds) {
      if (Bd.Index.Dim != D)
        continue;
      Bounded = true;
      Invariant = Invariant && launchInvariant(Bd.Bound);
      for (const UniformTerm &T : Bd.Index.Terms)
        Invariant = Invariant && launchInvariant(T.Value);
      Moves = Moves || Bd.Index.AbsoluteLinear ||
              (Bd.Index.Absolute && D == WalkDim);
    }
    if (Bounded && Invariant) {
      Rule[D] = Moves ? PastEnd : Same;
      AnyRule = true;
    }
  }
  // One segment is one boxed loop already: such a kernel gets the test
  // only to skip rows.
  if (!AnyRule && !Cx.Seg->anySplit())
    return;

  llvm::IRBuilder<> &B = Cx.B;
  // The bounds are the same for every unit: unit 0's stand for the cube.
  Value *Exact = nullptr;
  UnitBox Span = boxSpan(Box, {}, Exact, B.getInt32(0));
  Value *Empty = B.getFalse();
  for (unsigned D = 0; D < 3; ++D)
    if (Span.Begin[D])
      Empty = B.CreateOr(Empty, B.CreateICmpUGE(Span.Begin[D], Span.End[D]));
  // Where an index may wrap for some unit, the box says nothing: run.
  Value *Nothing = B.CreateAnd(Exact, Empty, "cube.nothing");
  BasicBlock *Run = Cx.newBlock("cube.run");
  if (!AnyRule) {
    B.CreateCondBr(Nothing, Skip, Run);
    B.SetInsertPoint(Run);
    return;
  }
  Value *RowEmpty = B.getFalse();
  bool MovingChecks = false;
  for (unsigned D = 0; D < 3; ++D) {
    if (Rule[D] == None || !Span.Begin[D])
      continue;
    Value *Done = Rule[D] == PastEnd
                      ? B.CreateICmpEQ(Span.End[D], B.getInt32(0))
                      : B.CreateICmpUGE(Span.Begin[D], Span.End[D]);
    RowEmpty = B.CreateOr(RowEmpty, Done);
    for (const UnitIndexBound &Bd : Box.Bounds)
      MovingChecks = MovingChecks ||
                     (Bd.Index.Dim == D && Rule[D] == PastEnd &&
                      !Bd.Index.Checks.empty());
  }
  // An index checked at run time (it may wrap far along the grid) must be
  // exact for the rest of the row too, or a later cube's units could pass
  // the comparison after all: exact at this cube and at the row's last,
  // it is exact in between (the positions only grow along the row).
  if (MovingChecks) {
    Value *SavedPos = Pos.CubePos[WalkDim], *SavedLinear = Pos.CubeLinear;
    Value *Last = B.CreateSub(Pos.CubeCount[WalkDim], B.getInt32(1));
    Value *Stride = B.getInt32(1);
    for (unsigned D = 0; D < WalkDim; ++D)
      Stride = B.CreateMul(Stride, Pos.CubeCount[D]);
    Pos.CubePos[WalkDim] = Last;
    Pos.CubeLinear = B.CreateAdd(
        SavedLinear, B.CreateMul(B.CreateSub(Last, SavedPos), Stride));
    Value *ExactAtLast = nullptr;
    (void)boxSpan(Box, {}, ExactAtLast, B.getInt32(0));
    Pos.CubePos[WalkDim] = SavedPos;
    Pos.CubeLinear = SavedLinear;
    RowEmpty = B.CreateAnd(RowEmpty, ExactAtLast);
  }
  BasicBlock *Empties = Cx.newBlock("cube.empty");
  B.CreateCondBr(Nothing, Empties, Run);
  B.SetInsertPoint(Empties);
  B.CreateCondBr(RowEmpty, SkipRow, Skip);
  B.SetInsertPoint(Run);
}

Value *ControlEmitter::wholeCube(const UnitBox &Span) {
  unsigned Dims = 0;
  for (unsigned D = 0; D < 3; ++D)
    Dims += Cx.K.CubeDim[D] > 1;
  if (Dims < 2)
    return nullptr;
  llvm::IRBuilder<> &B = Cx.B;
  Value *All = nullptr;
  for (unsigned D = 0; D < 3; ++D) {
    if (!Span.Begin[D] || Cx.K.CubeDim[D] <= 1)
      continue;
    Value *Full = B.CreateAnd(
        B.CreateICmpEQ(Span.Begin[D], B.getInt32(0)),
        B.CreateICmpEQ(Span.End[D], B.getInt32(Cx.K.CubeDim[D])));
    All = All ? B.CreateAnd(All, Full) : Full;
  }
  if (All)
    All->setName("box.is.cube");
  return All;
}

bool ControlEmitter::emitBoxedSegment(
    const Operation &If, llvm::ArrayRef<const Operation *> Prefix,
    const UnitBox *Outer) {
  const UnitBoxCondition *Box = Cx.Seg->unitBox(If);
  if (!Box)
    return false;
  llvm::IRBuilder<> &B = Cx.B;
  Value *Exact = nullptr;
  UnitBox Span = boxSpan(*Box, Prefix, Exact);
  // Inside an enclosing box (a boxed `if` in a boxed `if`'s body): its
  // ranges too.
  for (unsigned D = 0; Outer && D < 3; ++D) {
    if (!Outer->Begin[D])
      continue;
    Span.Begin[D] = Span.Begin[D]
                        ? B.CreateBinaryIntrinsic(llvm::Intrinsic::umax,
                                                  Span.Begin[D], Outer->Begin[D])
                        : Outer->Begin[D];
    Span.End[D] = Span.End[D] ? B.CreateBinaryIntrinsic(llvm::Intrinsic::umin,
                                                        Span.End[D], Outer->End[D])
                              : Outer->End[D];
  }
  for (unsigned D = 0; D < 3; ++D) {
    if (Span.Begin[D] && !llvm::isa<llvm::Constant>(Span.Begin[D]))
      Span.Begin[D]->setName(std::string("unit.lo.") + "xyz"[D]);
    if (Span.End[D] && !llvm::isa<llvm::Constant>(Span.End[D]))
      Span.End[D]->setName(std::string("unit.hi.") + "xyz"[D]);
  }

  // Inside the box, the comparisons hold: only the other conjuncts, if
  // any, are tested. A body that ends in a boxed `if` of its own (a row's
  // lead unit under the row's guard) runs as two nests: the rest of the
  // body over this box, then that `if` over both boxes, rather than as a
  // divergent `if` inside the loop (which the vectoriser may refuse: a
  // store to one address under it has no vector form without scatters).
  const Operation *Inner = nullptr;
  llvm::SmallVector<const Operation *, 16> Before, InnerRecomputed;
  if (Box->Complete && !If.Regions[0].Ops.empty() &&
      If.Regions[0].Ops.back().opClass() == OpClass::If) {
    Before.assign(Prefix.begin(), Prefix.end());
    for (const Operation &Op : If.Regions[0].Ops)
      if (&Op != &If.Regions[0].Ops.back())
        Before.push_back(&Op);
    if (!Before.empty() &&
        splitBeforeNarrowedIf(If.Regions[0].Ops.back(), Before,
                              InnerRecomputed) &&
        Cx.Seg->unitBox(If.Regions[0].Ops.back()))
      Inner = &If.Regions[0].Ops.back();
  }
  auto Narrowed = [&] {
    for (const Operation *Op : Prefix)
      lowerUnitOp(*Op);
    if (Box->Complete)
      lowerBlock(If.Regions[0], Level::Unit);
    else
      lowerUnitOp(If);
  };
  // A cube of two or three dimensions runs short rows: where the box is
  // the whole cube (every cube inside the grid's edges), a twin nest with
  // the cube's constant bounds runs instead, whose rows the vectoriser
  // covers without a remainder and unrolls fully, where the box's bounds
  // cost a trip-count test, a remainder and the loop itself every row
  // (§4, "Narrowed unit loops").
  // A one-dimensional cube's box: its loop split where the selects it runs
  // change (emitSplitNests), as a segment without a box would be.
  auto NestOverBox = [&](llvm::function_ref<void()> Body,
                         llvm::ArrayRef<const Operation *> BodyOps) {
    Value *Full = wholeCube(Span);
    if (!Full) {
      emitSplitNests(Body, &Span, splitComparisons(BodyOps));
      return;
    }
    BasicBlock *WholeBB = Cx.newBlock("box.whole");
    BasicBlock *PartBB = Cx.newBlock("box.part");
    BasicBlock *Join = Cx.newBlock("box.join");
    B.CreateCondBr(Full, WholeBB, PartBB);
    B.SetInsertPoint(WholeBB);
    emitSegmentWith(Body, nullptr, nullptr, nullptr, nullptr);
    if (!Cx.terminated())
      B.CreateBr(Join);
    B.SetInsertPoint(PartBB);
    emitSegmentWith(Body, nullptr, nullptr, nullptr, &Span);
    if (!Cx.terminated())
      B.CreateBr(Join);
    B.SetInsertPoint(Join);
  };
  auto EmitInBox = [&] {
    if (!Inner) {
      llvm::SmallVector<const Operation *, 16> NarrowedOps(Prefix.begin(),
                                                           Prefix.end());
      if (Box->Complete)
        for (const Operation &Op : If.Regions[0].Ops)
          NarrowedOps.push_back(&Op);
      else
        NarrowedOps.push_back(&If);
      NestOverBox(Narrowed, NarrowedOps);
      return;
    }
    NestOverBox(
        [&] {
          for (const Operation *Op : Before)
            lowerUnitOp(*Op);
        },
        Before);
    emitBoxedSegment(*Inner, InnerRecomputed, &Span);
  };
  auto Whole = [&] {
    for (const Operation *Op : Prefix)
      lowerUnitOp(*Op);
    lowerUnitOp(If);
  };
  if (auto *C = llvm::dyn_cast<llvm::ConstantInt>(Exact); C && C->isOne()) {
    EmitInBox();
    return true;
  }
  // An index may wrap in its type for some unit of this cube (a grid of
  // 2^31 units or more along the dimension, an offset near the type's
  // limit): the whole segment, with the test, scalar.
  BasicBlock *InBox = Cx.newBlock("box");
  BasicBlock *Fallback = Cx.newBlock("box.fallback");
  BasicBlock *Done = Cx.newBlock("box.done");
  llvm::MDBuilder MDB(Cx.Ctx);
  B.CreateCondBr(Exact, InBox, Fallback, MDB.createBranchWeights(1000000, 1));
  B.SetInsertPoint(InBox);
  EmitInBox();
  if (!Cx.terminated())
    B.CreateBr(Done);
  B.SetInsertPoint(Fallback);
  emitSegmentWith(Whole, nullptr, nullptr, nullptr, Outer, /*Cold=*/true);
  if (!Cx.terminated())
    B.CreateBr(Done);
  B.SetInsertPoint(Done);
  return true;
}

/// Adds to \p Used every value an operation of \p Blk (nested ones too)
/// reads.
static void collectUses(const Block &Blk, llvm::DenseSet<ValueId> &Used) {
  for (const Operation &Op : Blk.Ops) {
    for (const Operand &O : Op.Operands)
      if (!O.isLiteral())
        Used.insert(O.Value);
    for (const Block &R : Op.Regions)
      collectUses(R, Used);
  }
}

/// Whether \p Blk (nested blocks too) holds a `return`.
static bool holdsReturn(const Block &Blk) {
  for (const Operation &Op : Blk.Ops) {
    if (Op.Kind == OpKind::Return)
      return true;
    for (const Block &R : Op.Regions)
      if (holdsReturn(R))
        return true;
  }
  return false;
}

bool ControlEmitter::splitBeforeNarrowedIf(
    const Operation &If, llvm::ArrayRef<const Operation *> Before,
    llvm::SmallVectorImpl<const Operation *> &Recomputed) {
  const UnitBoxCondition *Box = Cx.Seg->unitBox(If);
  const UnitRangeGuard *G = Cx.Seg->unitRangeGuard(If);
  bool Stepped = G && G->modular();
  if ((!Box && !Stepped) || If.Regions.empty())
    return false;
  auto VarOf = [&](const Operation *Op) {
    return Op->Operands.empty() || Op->Operands[0].isLiteral()
               ? NoValue
               : Op->Operands[0].Value;
  };
  auto KeptPerUnit = [&](ValueId Var) {
    return Var != NoValue && Var < Cx.Live.Values.size() &&
           Cx.Live[Var].MultiSegment;
  };
  llvm::DenseSet<ValueId> SetVars;
  for (const Operation *Op : Before) {
    switch (Op->opClass()) {
    case OpClass::If:
    case OpClass::For:
    case OpClass::Loop:
    case OpClass::Switch:
      // Control flow runs as it would have, unit by unit, in the first
      // loop. A `break` or `continue` in it leaves a cube-level loop (the
      // only loops around a segment), which every unit does alike: after
      // the first loop the cube leaves too, and the second never runs. A
      // `return` would have to skip the unit in the second loop as well.
      if (llvm::any_of(Op->Regions, holdsReturn))
        return false;
      break;
    case OpClass::Jump:
    case OpClass::DebugPrint:
      return false;
    case OpClass::Set:
    case OpClass::VarDecl: {
      // A variable of this segment alone lives in one place for the unit
      // running: the second loop would not see the first loop's value.
      ValueId Var = Op->opClass() == OpClass::Set ? VarOf(Op) : Op->Result;
      if (!KeptPerUnit(Var))
        return false;
      if (Op->opClass() == OpClass::Set)
        SetVars.insert(Var);
      break;
    }
    default:
      break;
    }
  }
  // What the `if` reads of the operations before it, through pure
  // operations and reads of variables kept per unit that nothing before
  // the `if` sets (they read the same in the second loop).
  llvm::DenseSet<ValueId> Needed;
  for (const Block &R : If.Regions)
    collectUses(R, Needed);
  auto Need = [&](const Operand &O) {
    if (!O.isLiteral())
      Needed.insert(O.Value);
  };
  if (Box) {
    if (!Box->Complete && !If.Operands.empty())
      Need(If.Operands[0]);
    for (const UnitIndexBound &Bd : Box->Bounds) {
      Need(Bd.Bound);
      for (const UniformTerm &T : Bd.Index.Terms)
        Need(T.Value);
    }
  } else {
    Need(G->Bound);
    if (G->UniformModulus)
      Need(G->ModulusValue);
  }
  for (const Operation *Op : llvm::reverse(Before)) {
    if (Op->Result == NoValue || !Needed.contains(Op->Result))
      continue;
    bool Reread = Op->opClass() == OpClass::Get && KeptPerUnit(VarOf(Op)) &&
                  !SetVars.contains(VarOf(Op));
    if (!isPureValueOp(Op->opClass()) && !Reread)
      return false;
    for (const Operand &O : Op->Operands)
      if (!O.isLiteral() && !Reread)
        Needed.insert(O.Value);
  }
  for (const Operation *Op : Before)
    if (Op->Result != NoValue && Needed.contains(Op->Result))
      Recomputed.push_back(Op);
  return true;
}

bool ControlEmitter::emitSplitNarrowedSegment(
    const Operation &If, llvm::ArrayRef<const Operation *> Prefix) {
  llvm::SmallVector<const Operation *, 16> Recomputed;
  if (Prefix.empty() || !splitBeforeNarrowedIf(If, Prefix, Recomputed))
    return false;
  emitSegmentWith([&] {
    for (const Operation *Op : Prefix)
      lowerUnitOp(*Op);
  });
  if (Cx.terminated())
    return true;
  if (Cx.Seg->unitBox(If))
    return emitBoxedSegment(If, Recomputed);
  emitSteppedSegment(If, *Cx.Seg->unitRangeGuard(If), Recomputed);
  return true;
}

/// Whether \p Op (and what it holds, at any depth) may run split across
/// several nests: no jump (a break, continue or return taken in an early
/// nest would leave before the later nests' units ran their part), and
/// nothing but plain values, memory and structured control flow. \p Count
/// bounds the operations the nests repeat.
static bool splittable(const Operation &Op, unsigned &Count) {
  if (++Count > 64)
    return false;
  switch (Op.opClass()) {
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
  case OpClass::If:
  case OpClass::For:
  case OpClass::Switch:
    break;
  default:
    if (!isPureValueOp(Op.opClass()))
      return false;
  }
  for (const Block &R : Op.Regions)
    for (const Operation &Inner : R.Ops)
      if (!splittable(Inner, Count))
        return false;
  return true;
}

namespace {
/// The operations a split segment runs, through the values it recomputes.
struct SplitScan {
  const IRKernel &K;
  const Liveness &Live;
  llvm::SmallPtrSet<const Operation *, 32> Seen;
  llvm::SmallVector<const Operation *, 8> Selects;

  void op(const Operation &Op, unsigned Depth) {
    if (Depth > 16 || !Seen.insert(&Op).second)
      return;
    if (Op.opClass() == OpClass::Select)
      Selects.push_back(&Op);
    for (const Operand &O : Op.Operands)
      operand(O, Depth);
    for (const Block &R : Op.Regions)
      for (const Operation &Inner : R.Ops)
        op(Inner, Depth);
  }
  /// A value recomputed where it is used: what computes it runs there too.
  void operand(const Operand &O, unsigned Depth) {
    if (O.isLiteral() || O.Value >= K.Values.size())
      return;
    if (const Operation *Def = Live[O.Value].Remat)
      op(*Def, Depth + 1);
  }
};
} // namespace

llvm::SmallVector<SplitComparison, 4>
ControlEmitter::splitComparisons(llvm::ArrayRef<const Operation *> Ops) {
  llvm::SmallVector<SplitComparison, 4> Cmps;
  unsigned Count = 0;
  for (const Operation *Op : Ops)
    if (!splittable(*Op, Count))
      return Cmps;
  SplitScan Scan{Cx.K, Cx.Live, {}, {}};
  for (const Operation *Op : Ops)
    Scan.op(*Op, 0);
  // The divergent comparisons of the box form on one dimension, one bound
  // each, that the selects test, on the first such comparison's dimension.
  int Dim = -1;
  for (const Operation *Sel : Scan.Selects) {
    const Operand &C = Sel->Operands[0];
    if (C.isLiteral() || C.Value >= Cx.K.Values.size() ||
        !Cx.Uniformity->isDivergent(C.Value))
      continue;
    const Operation *Cmp = Cx.Seg->patterns().def(C.Value);
    if (!Cmp || Cmp->opClass() != OpClass::Compare ||
        llvm::any_of(Cmps,
                     [&](const SplitComparison &S) { return S.Op == Cmp; }) ||
        !(Scan.Seen.count(Cmp) || Cx.Live[C.Value].Remat == Cmp))
      continue;
    std::optional<UnitBoxCondition> Box =
        findUnitBoxOf(Cx.K, *Cx.Uniformity, C.Value);
    if (!Box || !Box->Complete || Box->Bounds.size() != 1)
      continue;
    const UnitIndexBound &Bd = Box->Bounds[0];
    unsigned D = Bd.Index.Dim;
    if (Cx.K.CubeDim[D] <= 1 || (Dim >= 0 && unsigned(Dim) != D) ||
        !availableAtCubeStart(Bd.Bound))
      continue;
    bool Available = true;
    for (const UniformTerm &T : Bd.Index.Terms)
      Available = Available && availableAtCubeStart(T.Value);
    if (!Available)
      continue;
    Dim = int(D);
    Cmps.push_back({Cmp, std::move(*Box)});
    if (Cmps.size() == 4)
      break;
  }
  // Several comparisons are split by the range where none holds: each must
  // hold on one side of its bound only.
  if (Cmps.size() > 1)
    Cmps.erase(llvm::remove_if(Cmps,
                               [](const SplitComparison &S) {
                                 return S.Box.Bounds[0].Pred == OpKind::Eq;
                               }),
               Cmps.end());
  return Cmps;
}

void ControlEmitter::emitSplitNests(llvm::function_ref<void()> Body,
                                    const UnitBox *Span,
                                    llvm::ArrayRef<SplitComparison> Cmps) {
  llvm::IRBuilder<> &B = Cx.B;
  auto Plain = [&] { emitSegmentWith(Body, nullptr, nullptr, nullptr, Span); };
  if (Cmps.empty())
    return Plain();
  // Each comparison's range for this cube, exactly.
  llvm::SmallVector<UnitBox, 4> Ranges;
  llvm::SmallVector<OpKind, 4> Preds;
  unsigned D = 0;
  for (const SplitComparison &Cmp : Cmps) {
    D = Cmp.Box.Bounds[0].Index.Dim;
    Value *Exact = nullptr;
    Ranges.push_back(boxSpan(Cmp.Box, {}, Exact));
    auto *AlwaysExact = llvm::dyn_cast<llvm::ConstantInt>(Exact);
    if (!AlwaysExact || !AlwaysExact->isOne())
      return Plain(); // what was computed folds away
    Preds.push_back(Cmp.Box.Bounds[0].Pred);
  }
  // The span's own range along D.
  Value *Begin = Span && Span->Begin[D] ? Span->Begin[D] : B.getInt32(0);
  Value *End = Span && Span->End[D] ? Span->End[D]
                                    : B.getInt32(Cx.K.CubeDim[D]);
  End = B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, Begin, End);
  auto Clamp = [&](Value *V) {
    return B.CreateBinaryIntrinsic(
        llvm::Intrinsic::umin,
        B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, V, Begin), End);
  };
  // [Lo, Hi): where the comparison holds (one), where none holds (several).
  Value *Lo, *Hi;
  bool Holds = Cmps.size() == 1;
  if (Holds) {
    Lo = Ranges[0].Begin[D];
    Hi = B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, Lo, Ranges[0].End[D]);
  } else {
    Lo = B.getInt32(0);
    Hi = B.getInt32(Cx.K.CubeDim[D]);
    for (size_t I = 0; I < Ranges.size(); ++I) {
      bool Upper = Preds[I] == OpKind::Lt || Preds[I] == OpKind::Le;
      if (Upper) // holds on [0, end): not from end on
        Lo = B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, Lo,
                                     Ranges[I].End[D]);
      else // holds on [begin, n): not before begin
        Hi = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Hi,
                                     Ranges[I].Begin[D]);
    }
    Hi = B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, Lo, Hi);
  }
  Lo = Clamp(Lo);
  Hi = Clamp(Hi);
  Lo->setName("split.lo");
  Hi->setName("split.hi");
  Value *Edges[4] = {Begin, Lo, Hi, End};
  for (unsigned Piece = 0; Piece < 3; ++Piece) {
    UnitBox Range;
    if (Span)
      Range = *Span;
    Range.Begin[D] = Edges[Piece];
    Range.End[D] = Edges[Piece + 1];
    // One comparison: known in every piece. Several: in the middle one.
    if (Holds || Piece == 1)
      for (const SplitComparison &Cmp : Cmps)
        Values.Known[Cmp.Op] = Holds ? Piece == 1 : false;
    emitSegmentWith(Body, nullptr, nullptr, nullptr, &Range);
    Values.Known.clear();
    if (Cx.terminated())
      break;
  }
}

bool ControlEmitter::emitSplitSegment(llvm::ArrayRef<const Operation *> Ops) {
  llvm::SmallVector<SplitComparison, 4> Cmps = splitComparisons(Ops);
  if (Cmps.empty())
    return false;
  emitSplitNests(
      [&] {
        for (const Operation *Op : Ops)
          lowerUnitOp(*Op);
      },
      nullptr, Cmps);
  return true;
}
