//===- LowerPlaneVector.cpp - Plane operations as <P x T> vectors ---------===//
//
// The vector form of the plane operations (docs/Lowering.md §6): when the
// plane size P is a power of two from 4 to 64 and the operand a plain scalar,
// each plane's lanes are loaded from the operand's per-unit slots as one
// <P x T> vector, combined in registers with shufflevector, and stored to the
// result's slots as one vector. Every order is fixed by P alone, never by the
// target, so AVX2 and AVX-512 give the same bits:
//   - reductions: a halving butterfly, lane i of the lower half combined
//     with lane i + h, h = P/2, P/4, ..., 1;
//   - scans: Hillis-Steele, x[i] = x[i - d] op x[i] for d = 1, 2, ..., P/2;
//     the exclusive scan is the inclusive one shifted up a lane.
// Lanes that returned (and those past a partial last plane, which is loaded
// and stored masked) take the operation's neutral element. Lane operations
// are one constant shufflevector for a literal lane, a few selected ones for
// a uniform lane, and a gather from a stack copy of the plane otherwise.
// Consecutive plane operations share one loop over the planes.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"
#include "SerialProductScans.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

/// The integers [From, From + N) as a shufflevector mask.
static llvm::SmallVector<int, 64> iota(unsigned From, unsigned N) {
  llvm::SmallVector<int, 64> M;
  for (unsigned I = 0; I < N; ++I)
    M.push_back(int(From + I));
  return M;
}

/// \p V (a vector of values of \p T) as memory values: bool as i8.
static Value *toMemVector(llvm::IRBuilder<> &B, Value *V, Type T) {
  if (!T.isBool())
    return V;
  auto *VT = llvm::cast<llvm::FixedVectorType>(V->getType());
  return B.CreateZExt(V, llvm::FixedVectorType::get(B.getInt8Ty(),
                                                    VT->getNumElements()));
}

static bool isScan(OpKind Kind) {
  return Kind == OpKind::PlaneInclusiveSum ||
         Kind == OpKind::PlaneExclusiveSum ||
         Kind == OpKind::PlaneInclusiveProd ||
         Kind == OpKind::PlaneExclusiveProd;
}

static bool isSum(OpKind Kind) {
  return Kind == OpKind::PlaneSum || Kind == OpKind::PlaneInclusiveSum ||
         Kind == OpKind::PlaneExclusiveSum;
}

/// Arithmetic the vector form computes as LLVM does on vectors: integers
/// and IEEE floats (f16 as `half`, each operation rounded to f16 as in the
/// scalar form). bf16 is computed by hand (LowerBF16.cpp) and stays scalar.
static bool hasVectorArithmetic(Type T) {
  if (T.isLine())
    return false;
  switch (T.elementKind()) {
  case ScalarKind::F16:
  case ScalarKind::F32:
  case ScalarKind::F64:
    return true;
  default:
    return T.isInteger();
  }
}

bool PlaneEmitter::vectorFormApplies(const Operation &Op) const {
  unsigned P = Cx.PlaneDim;
  if (P < 4 || P > 64 || !llvm::isPowerOf2_32(P))
    return false;
  // Malformed operations go to the scalar form, which reports them.
  unsigned Needs = Op.opClass() == OpClass::PlaneElect  ? 0
                   : Op.opClass() == OpClass::PlaneLane ? 2
                                                        : 1;
  if (Op.Result == NoValue || Op.Operands.size() < Needs)
    return false;
  for (const Operand &O : Op.Operands)
    if (!O.isLiteral() && O.Value >= Cx.K.Values.size())
      return false;
  auto TypeOf = [&](unsigned I) { return Values.operandType(Op.Operands[I]); };
  switch (Op.opClass()) {
  case OpClass::PlaneElect:
    return true;
  case OpClass::PlaneBool:
  case OpClass::PlaneBallot:
    return TypeOf(0) == Type::scalar(ScalarKind::Bool);
  case OpClass::PlaneReduce:
    return hasVectorArithmetic(Op.ResultType) && TypeOf(0) == Op.ResultType;
  case OpClass::PlaneLane: {
    // Only bits move: any scalar, compared by their memory form.
    Type Lane = TypeOf(1);
    return !Op.ResultType.isLine() && TypeOf(0) == Op.ResultType &&
           !Lane.isLine() && Lane.isInteger() &&
           bitWidth(Lane.elementKind()) == 32;
  }
  default:
    return false;
  }
}

void PlaneEmitter::lowerAsVectors(llvm::ArrayRef<const Operation *> Ops) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  unsigned Full = Cx.Units / P, Tail = Cx.Units % P;
  auto Plane = [&](Value *Index, unsigned Len) {
    Value *Base = B.CreateMul(Index, B.getInt32(P));
    for (const Operation *Op : Ops)
      emitVectorPlane(*Op, Base, Len);
  };
  if (Full == 1) {
    Plane(B.getInt32(0), P);
  } else if (Full > 1) {
    Pos.emitCountedLoop(
        B.getInt32(0), B.getInt32(Full), [&](Value *I) { Plane(I, P); },
        "plane.vec");
    keepLoopOverPlanesEndingAt(B.GetInsertBlock());
  }
  if (Tail)
    Plane(B.getInt32(Full), Tail);
}

Value *PlaneEmitter::laneVector(const Operand &O, Value *Base, unsigned Len) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  Type T = Values.operandType(O);
  if (O.isLiteral())
    return B.CreateVectorSplat(P, Types.toMem(Types.literal(O.Lit), T));
  auto C = Values.CubeValues.find(O.Value);
  if (C != Values.CubeValues.end())
    return B.CreateVectorSplat(P, Types.toMem(C->second, T));
  if (Cx.Live[O.Value].NeedsSlot)
    return Memory.loadSlotVector(O.Value, Base, P, Len);
  // Recomputed where used (docs/Lowering.md §5): lane by lane into a stack
  // copy, a short loop the loop vectoriser may widen.
  auto *VT = llvm::FixedVectorType::get(Types.memType(T), P);
  llvm::AllocaInst *Tmp = Cx.entryAlloca(VT, "plane.lanes");
  Pos.emitCountedLoop(
      B.getInt32(0), B.getInt32(Len),
      [&](Value *L) {
        Value *V = Types.toMem(Values.value(O, B.CreateAdd(Base, L)), T);
        B.CreateStore(V, B.CreateInBoundsGEP(VT->getElementType(), Tmp, L));
      },
      "plane.lanes");
  return B.CreateLoad(VT, Tmp);
}

Value *PlaneEmitter::activeLanes(Value *Base, unsigned Len) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  if (Cx.Layout.HasFlags) // lanes from Len on read as returned
    return B.CreateICmpEQ(Memory.loadFlagVector(Base, P, Len),
                          llvm::Constant::getNullValue(
                              llvm::FixedVectorType::get(Cx.I8, P)));
  if (Len >= P)
    return nullptr;
  llvm::SmallVector<llvm::Constant *, 64> M;
  for (unsigned I = 0; I < P; ++I)
    M.push_back(B.getInt1(I < Len));
  return llvm::ConstantVector::get(M);
}

llvm::Constant *PlaneEmitter::vectorNeutral(OpKind Kind, Type T) {
  // -0.0, not +0.0: x + -0.0 is x for every x, so an inactive lane (or a
  // scan's shifted-in lane) never turns a -0.0 sum into +0.0.
  if (isSum(Kind) && T.isFloat())
    return llvm::ConstantFP::getNegativeZero(Types.valueType(T));
  return identity(Kind, T);
}

Value *PlaneEmitter::vectorReduce(OpKind Kind, Type T, Value *V) {
  llvm::IRBuilder<> &B = Cx.B;
  if (T.isBool())
    return Kind == OpKind::PlaneAll ? B.CreateAndReduce(V)
                                    : B.CreateOrReduce(V);
  // The halving butterfly: the documented order for floats.
  for (unsigned H = Cx.PlaneDim / 2; H >= 1; H /= 2)
    V = combine(Kind, T, B.CreateShuffleVector(V, iota(0, H)),
                B.CreateShuffleVector(V, iota(H, H)));
  return B.CreateExtractElement(V, uint64_t(0));
}

Value *PlaneEmitter::vectorScan(OpKind Kind, Type T, Value *V) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  Value *Fill = B.CreateVectorSplat(P, vectorNeutral(Kind, T));
  // Hillis-Steele: after the step of distance D, lane i holds lanes
  // (i - 2D, i] combined; the shifted-in lanes are neutral.
  for (unsigned D = 1; D < P; D *= 2) {
    llvm::SmallVector<int, 64> M;
    for (unsigned I = 0; I < P; ++I)
      M.push_back(I < D ? int(P + I) : int(I - D));
    V = combine(Kind, T, B.CreateShuffleVector(V, Fill, M), V);
  }
  // 64-bit integer product scans are tagged: without a vector 64-bit
  // multiply (AVX2) optimizeModule makes them a loop over the lanes
  // (SerialProductScans.h).
  if ((Kind == OpKind::PlaneInclusiveProd ||
       Kind == OpKind::PlaneExclusiveProd) &&
      T.isInteger() && bitWidth(T.elementKind()) == 64)
    if (auto *Last = llvm::dyn_cast<llvm::Instruction>(V))
      Last->setMetadata(ProductScanTag, llvm::MDNode::get(Cx.Ctx, {}));
  if (Kind == OpKind::PlaneInclusiveSum || Kind == OpKind::PlaneInclusiveProd)
    return V;
  // Exclusive: lane i takes lane i - 1, lane 0 the identity (+0.0, 1).
  llvm::SmallVector<int, 64> M{int(P)};
  for (unsigned I = 1; I < P; ++I)
    M.push_back(int(I - 1));
  return B.CreateShuffleVector(
      V, B.CreateVectorSplat(P, identity(Kind, T)), M);
}

/// The source lane of \p Lane for a plane lane operation with operand \p Arg
/// (both as u32) in a plane of \p Len lanes: the lane itself when the source
/// is outside the plane. The rules of the scalar form, constant-folded.
static unsigned sourceLane(OpKind Kind, unsigned Lane, uint32_t Arg,
                           unsigned Len) {
  uint64_t Src;
  switch (Kind) {
  case OpKind::PlaneShuffleXor:
    Src = Lane ^ Arg;
    break;
  case OpKind::PlaneShuffleUp:
    Src = Arg <= Lane ? Lane - Arg : Len;
    break;
  case OpKind::PlaneShuffleDown:
    Src = uint64_t(Lane) + Arg;
    break;
  default:
    Src = Arg;
    break;
  }
  return Src < Len ? unsigned(Src) : Lane;
}

Value *PlaneEmitter::vectorLaneOp(const Operation &Op, Value *V, Value *Base,
                                  unsigned Len) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  const Operand &LaneOp = Op.Operands[1];
  if (LaneOp.isLiteral()) { // a constant permutation: one shufflevector
    auto *C = llvm::cast<llvm::ConstantInt>(Types.literal(LaneOp.Lit));
    uint32_t Arg = uint32_t(C->getZExtValue());
    llvm::SmallVector<int, 64> M;
    for (unsigned I = 0; I < P; ++I)
      M.push_back(int(I < Len ? sourceLane(Op.Kind, I, Arg, Len) : I));
    return B.CreateShuffleVector(V, M);
  }
  if (Value *Arg = uniformLane(LaneOp, Base))
    return uniformLaneOp(Op.Kind, V, Arg, Len);
  // A source lane per lane, as sourceLane computes it, in 32 bits: the
  // bounds checks come before any sum that could wrap.
  Value *Arg = laneVector(LaneOp, Base, Len);
  auto *IdxTy = llvm::FixedVectorType::get(Cx.I32, P);
  llvm::SmallVector<llvm::Constant *, 64> Lanes;
  for (unsigned I = 0; I < P; ++I)
    Lanes.push_back(B.getInt32(I));
  Value *Lane = llvm::ConstantVector::get(Lanes);
  Value *LenV = llvm::ConstantInt::get(IdxTy, Len);
  Value *Src, *Valid;
  switch (Op.Kind) {
  case OpKind::PlaneShuffleXor:
    Src = B.CreateXor(Lane, Arg);
    Valid = B.CreateICmpULT(Src, LenV);
    break;
  case OpKind::PlaneShuffleUp:
    Src = B.CreateSub(Lane, Arg);
    Valid = B.CreateAnd(B.CreateICmpULE(Arg, Lane), B.CreateICmpULT(Src, LenV));
    break;
  case OpKind::PlaneShuffleDown:
    Src = B.CreateAdd(Lane, Arg);
    Valid = B.CreateAnd(B.CreateICmpULT(Arg, LenV), B.CreateICmpULT(Src, LenV));
    break;
  default:
    Src = Arg;
    Valid = B.CreateICmpULT(Src, LenV);
    break;
  }
  Value *Idx = B.CreateSelect(Valid, Src, Lane);
  // A variable permutation: a gather from a stack copy of the plane (every
  // index is below P, so it stays in the copy).
  auto *VT = llvm::cast<llvm::FixedVectorType>(V->getType());
  llvm::AllocaInst *Tmp = Cx.entryAlloca(VT, "plane.src");
  B.CreateStore(V, Tmp);
  llvm::Align Al(VT->getElementType()->getPrimitiveSizeInBits() / 8);
  Value *Ptrs = B.CreateInBoundsGEP(VT->getElementType(), Tmp, Idx);
  return B.CreateMaskedGather(VT, Ptrs, Al);
}

Value *PlaneEmitter::uniformLane(const Operand &O, Value *Base) {
  llvm::IRBuilder<> &B = Cx.B;
  auto C = Values.CubeValues.find(O.Value);
  if (C != Values.CubeValues.end())
    return B.CreateZExtOrTrunc(C->second, Cx.I32);
  // A recomputed value (a pure function of parameters, builtins and
  // cube-level induction variables) that is uniform is the same for the
  // plane's first unit, returned or not. A uniform value in a slot is not:
  // a unit that returned never wrote it.
  if (!Cx.Uniformity || !Cx.Uniformity->isUniform(O) ||
      Cx.Live[O.Value].NeedsSlot || !Cx.Live[O.Value].Remat)
    return nullptr;
  return B.CreateZExtOrTrunc(Values.value(O, Base), Cx.I32);
}

Value *PlaneEmitter::uniformLaneOp(OpKind Kind, Value *V, Value *Arg,
                                   unsigned Len) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  Value *LenC = B.getInt32(Len);
  if (Kind == OpKind::PlaneBroadcast || Kind == OpKind::PlaneShuffle) {
    // One source lane: an extractelement and a splat.
    Value *Valid = B.CreateICmpULT(Arg, LenC);
    Value *Src =
        B.CreateExtractElement(V, B.CreateSelect(Valid, Arg, B.getInt32(0)));
    return B.CreateSelect(Valid, B.CreateVectorSplat(P, Src), V);
  }
  // xor, up, down by the same amount in every lane: a barrel of constant
  // shufflevectors, the one for bit b taken when bit b of Arg is set. Lanes
  // whose source is outside the plane keep their value (the last select);
  // the barrel's result there does not matter.
  Value *Perm = V;
  for (unsigned Bit = 1; Bit < P; Bit *= 2) {
    llvm::SmallVector<int, 64> M;
    for (unsigned I = 0; I < P; ++I) {
      unsigned Src = Kind == OpKind::PlaneShuffleXor ? I ^ Bit
                     : Kind == OpKind::PlaneShuffleUp
                         ? (I >= Bit ? I - Bit : I)
                         : (I + Bit < P ? I + Bit : I);
      M.push_back(int(Src));
    }
    Value *Set = B.CreateICmpNE(B.CreateAnd(Arg, B.getInt32(Bit)),
                                B.getInt32(0));
    Perm = B.CreateSelect(Set, B.CreateShuffleVector(Perm, M), Perm);
  }
  llvm::SmallVector<llvm::Constant *, 64> Lanes;
  for (unsigned I = 0; I < P; ++I)
    Lanes.push_back(B.getInt32(I));
  Value *Lane = llvm::ConstantVector::get(Lanes);
  Value *ArgV = B.CreateVectorSplat(P, Arg);
  Value *LenV = B.CreateVectorSplat(P, LenC);
  Value *Valid;
  switch (Kind) {
  case OpKind::PlaneShuffleXor:
    Valid = B.CreateICmpULT(B.CreateXor(Lane, ArgV), LenV);
    break;
  case OpKind::PlaneShuffleUp:
    Valid = B.CreateAnd(B.CreateICmpULE(ArgV, Lane),
                        B.CreateICmpULT(B.CreateSub(Lane, ArgV), LenV));
    break;
  default: // down
    Valid = B.CreateAnd(B.CreateICmpULT(ArgV, LenV),
                        B.CreateICmpULT(B.CreateAdd(Lane, ArgV), LenV));
    break;
  }
  return B.CreateSelect(Valid, Perm, V);
}

void PlaneEmitter::emitVectorPlane(const Operation &Op, Value *Base,
                                   unsigned Len) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  ValueId R = Op.Result;
  auto *BoolVec = llvm::FixedVectorType::get(Cx.I1, P);
  auto *ByteVec = llvm::FixedVectorType::get(Cx.I8, P);
  auto *PlaneInt = llvm::IntegerType::get(Cx.Ctx, P);
  Value *Act = activeLanes(Base, Len);
  switch (Op.opClass()) {
  case OpClass::PlaneElect: {
    // The lowest active lane: the lowest set bit of the active mask.
    Value *Bits = B.CreateBitCast(
        Act ? Act : llvm::Constant::getAllOnesValue(BoolVec), PlaneInt);
    Value *Low = B.CreateAnd(Bits, B.CreateNeg(Bits));
    Memory.storeSlotVector(R, Base,
                           B.CreateZExt(B.CreateBitCast(Low, BoolVec), ByteVec),
                           Len);
    return;
  }
  case OpClass::PlaneBallot: {
    Value *Bit = B.CreateICmpNE(laneVector(Op.Operands[0], Base, Len),
                                llvm::Constant::getNullValue(ByteVec));
    if (Act)
      Bit = B.CreateAnd(Bit, Act);
    Value *Bits = B.CreateBitCast(Bit, PlaneInt);
    auto *Words = llvm::FixedVectorType::get(Cx.I32, 4);
    Value *W;
    if (P <= 32) {
      W = B.CreateInsertElement(llvm::Constant::getNullValue(Words),
                                B.CreateZExt(Bits, Cx.I32), uint64_t(0));
    } else { // P == 64: words 0 and 1
      W = B.CreateShuffleVector(
          B.CreateBitCast(Bits, llvm::FixedVectorType::get(Cx.I32, 2)),
          llvm::Constant::getNullValue(llvm::FixedVectorType::get(Cx.I32, 2)),
          iota(0, 4));
    }
    llvm::SmallVector<int, 256> Splat;
    for (unsigned I = 0; I < 4 * P; ++I)
      Splat.push_back(int(I % 4));
    Memory.storeSlotVector(R, Base, B.CreateShuffleVector(W, Splat), Len);
    return;
  }
  case OpClass::PlaneLane:
    Memory.storeSlotVector(
        R, Base,
        vectorLaneOp(Op, laneVector(Op.Operands[0], Base, Len), Base, Len),
        Len);
    return;
  default:
    break;
  }
  // Reductions, scans, plane_all and plane_any.
  Type T = Values.operandType(Op.Operands[0]);
  Value *V = Types.fromMem(laneVector(Op.Operands[0], Base, Len), T);
  if (Act)
    V = B.CreateSelect(Act, V, B.CreateVectorSplat(P, vectorNeutral(Op.Kind, T)));
  Value *Res = isScan(Op.Kind)
                   ? vectorScan(Op.Kind, T, V)
                   : B.CreateVectorSplat(P, vectorReduce(Op.Kind, T, V));
  Memory.storeSlotVector(R, Base, toMemVector(B, Res, T), Len);
}
