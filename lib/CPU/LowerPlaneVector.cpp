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
// Consecutive plane operations share one loop over the planes. A result is
// stored only to the slots that later operations may read (all of them,
// unless every use sits under `if`s that test the unit's index against
// literals), and a plane none of whose slots is read is not computed.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"
#include "SerialProductScans.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/Support/MathExtras.h"

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

/// Marks in \p Units the units of the cube for which the guard \p G holds.
/// False (nothing marked) when its bound is not a literal.
static bool markGuardUnits(const UnitRangeGuard &G, llvm::BitVector &Units) {
  if (!G.Bound.isLiteral() || G.UniformModulus || G.CmpTy.isLine() ||
      !G.CmpTy.isInteger())
    return false;
  // unit + Offset  Pred  Bound, solved exactly (UnitRange.h): |Offset| <
  // 2^40 and the bound has at most 64 bits.
  unsigned W = bitWidth(G.CmpTy.elementKind());
  uint64_t Bits = G.Bound.Lit.Bits; // zero-extended
  __int128 Bound = G.CmpTy.isSigned() ? __int128(llvm::SignExtend64(Bits, W))
                                      : __int128(Bits);
  __int128 K = Bound - G.Offset, N = Units.size();
  if (G.Modulus) { // (unit + Offset) % m == Bound, Offset >= 0
    __int128 M = G.Modulus;
    if (G.Pred != OpKind::Eq || Bound < 0 || Bound >= M)
      return G.Pred == OpKind::Eq;
    for (__int128 U = ((K % M) + M) % M; U < N; U += M)
      Units.set(unsigned(U));
    return true;
  }
  __int128 Lo = 0, Hi = N;
  switch (G.Pred) {
  case OpKind::Lt:
    Hi = K;
    break;
  case OpKind::Le:
    Hi = K + 1;
    break;
  case OpKind::Gt:
    Lo = K + 1;
    break;
  case OpKind::Ge:
    Lo = K;
    break;
  case OpKind::Eq:
    Lo = K;
    Hi = K + 1;
    break;
  default:
    return false;
  }
  Lo = std::max<__int128>(Lo, 0);
  Hi = std::min<__int128>(Hi, N);
  if (Lo < Hi)
    Units.set(unsigned(Lo), unsigned(Hi));
  return true;
}

/// Marks in \p Read every unit whose slot of \p R an operation of \p Blk
/// may read, \p Guard being the units \p Blk runs for (null: every unit).
/// False when that may be any unit: a use outside every guarded `if`.
static bool markReaders(const LoweringContext &Cx, const Block &Blk, ValueId R,
                        const llvm::BitVector *Guard, llvm::BitVector &Read) {
  for (const Operation &Op : Blk.Ops) {
    if (llvm::any_of(Op.Operands, [&](const Operand &O) {
          return !O.isLiteral() && O.Value == R;
        })) {
      // A unit's operation reads its own slot; the plane and cmma operations
      // (never under a divergent `if`) read those of their whole plane.
      OpClass C = Op.opClass();
      if (!Guard || C == OpClass::PlaneReduce || C == OpClass::PlaneBool ||
          C == OpClass::PlaneLane || C == OpClass::PlaneBallot ||
          C == OpClass::Cmma)
        return false;
      Read |= *Guard;
    }
    if (Op.Regions.empty())
      continue;
    // The body of `if (unit + c OP literal)` runs for the units where the
    // condition holds, whatever the lowering makes of it.
    const llvm::BitVector *Inner = Guard;
    llvm::BitVector Units;
    if (const UnitRangeGuard *G =
            Op.Kind == OpKind::If ? Cx.Seg->unitRangeGuard(Op) : nullptr) {
      Units.resize(Cx.Units);
      if (markGuardUnits(*G, Units)) {
        if (Guard)
          Units &= *Guard;
        Inner = &Units;
      }
    }
    for (const Block &Sub : Op.Regions)
      if (!markReaders(Cx, Sub, R, Inner, Read))
        return false;
  }
  return true;
}

/// Per plane of the cube, the lanes of \p Op's result that are stored: an
/// aligned block of a power of two lanes holding every lane a later
/// operation may read, or the whole plane; none when no lane is read.
static std::vector<PlaneLanes> storedLanes(const LoweringContext &Cx,
                                           const Operation &Op) {
  unsigned P = Cx.PlaneDim, Units = Cx.Units;
  std::vector<PlaneLanes> Spans((Units + P - 1) / P);
  llvm::BitVector Read(Units);
  bool Narrow = Cx.Seg && markReaders(Cx, Cx.K.Body, Op.Result, nullptr, Read);
  for (unsigned Pl = 0; Pl < Spans.size(); ++Pl) {
    unsigned Base = Pl * P, Len = std::min(P, Units - Base);
    Spans[Pl] = {0, Len};
    if (!Narrow)
      continue;
    int First = Read.find_first_in(Base, Base + Len);
    if (First < 0) {
      Spans[Pl] = {0, 0};
      continue;
    }
    unsigned Lo = unsigned(First) - Base;
    unsigned Hi = unsigned(Read.find_last_in(Base, Base + Len)) + 1 - Base;
    uint64_t N = llvm::PowerOf2Ceil(Hi - Lo);
    while (llvm::alignDown(Lo, N) + N < Hi)
      N *= 2;
    Lo = unsigned(llvm::alignDown(Lo, N));
    if (Lo + N <= Len && N < Len)
      Spans[Pl] = {Lo, unsigned(Lo + N)};
  }
  return Spans;
}

void PlaneEmitter::lowerAsVectors(llvm::ArrayRef<const Operation *> Ops) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  unsigned Full = Cx.Units / P, Tail = Cx.Units % P;
  std::vector<std::vector<PlaneLanes>> Stored;
  for (const Operation *Op : Ops)
    Stored.push_back(storedLanes(Cx, *Op));
  auto StoredIn = [&](unsigned Plane) {
    std::vector<PlaneLanes> S;
    for (const std::vector<PlaneLanes> &Of : Stored)
      S.push_back(Of[Plane]);
    return S;
  };
  auto Plane = [&](Value *Index, unsigned Len,
                   const std::vector<PlaneLanes> &S) {
    Value *Base = B.CreateMul(Index, B.getInt32(P));
    for (size_t I = 0; I < Ops.size(); ++I)
      if (!S[I].empty())
        emitVectorPlane(*Ops[I], Base, Len, S[I]);
  };
  // Each run of full planes that store the same lanes: one loop over them
  // (none for a single plane); planes that store nothing compute nothing.
  for (unsigned First = 0, End; First < Full; First = End) {
    std::vector<PlaneLanes> S = StoredIn(First);
    for (End = First + 1; End < Full && StoredIn(End) == S; ++End)
      ;
    if (llvm::all_of(S, [](const PlaneLanes &L) { return L.empty(); }))
      continue;
    if (End - First == 1) {
      Plane(B.getInt32(First), P, S);
      continue;
    }
    Pos.emitCountedLoop(
        B.getInt32(First), B.getInt32(End), [&](Value *I) { Plane(I, P, S); },
        "plane.vec");
    keepLoopOverPlanesEndingAt(B.GetInsertBlock());
  }
  if (Tail)
    Plane(B.getInt32(Full), Tail, StoredIn(Full));
}

void PlaneEmitter::storeLanes(ValueId R, Value *Base, Value *V, unsigned Len,
                              PlaneLanes S) {
  if (S.Lo == 0 && S.Hi >= Len) {
    Memory.storeSlotVector(R, Base, V, Len);
    return;
  }
  // Lanes [Lo, Hi) alone: Lo is a multiple of Hi - Lo, a power of two, so
  // the store is as aligned as storeSlotVector takes it to be.
  unsigned PerUnit =
      llvm::cast<llvm::FixedVectorType>(V->getType())->getNumElements() /
      Cx.PlaneDim;
  Value *Part = Cx.B.CreateShuffleVector(
      V, iota(S.Lo * PerUnit, (S.Hi - S.Lo) * PerUnit));
  Memory.storeSlotVector(R, Cx.B.CreateAdd(Base, Cx.B.getInt32(S.Lo)), Part,
                         S.Hi - S.Lo);
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
  case OpKind::PlaneBroadcast:
  case OpKind::PlaneShuffle:
    Src = Arg;
    break;
  default: // not a lane operation: vectorLaneOp has failed the lowering
    Src = Len;
    break;
  }
  return Src < Len ? unsigned(Src) : Lane;
}

Value *PlaneEmitter::vectorLaneOp(const Operation &Op, Value *V, Value *Base,
                                  unsigned Len) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned P = Cx.PlaneDim;
  if (Op.opClass() != OpClass::PlaneLane) {
    Cx.fail(Op.Loc, "internal error: '" + opName(Op.Kind) +
                        "' is not a plane lane operation");
    return V;
  }
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
  case OpKind::PlaneBroadcast:
  case OpKind::PlaneShuffle:
    Src = Arg;
    Valid = B.CreateICmpULT(Src, LenV);
    break;
  default: // refused above
    return V;
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
  case OpKind::PlaneShuffleDown:
    Valid = B.CreateAnd(B.CreateICmpULT(ArgV, LenV),
                        B.CreateICmpULT(B.CreateAdd(Lane, ArgV), LenV));
    break;
  default:
    Cx.fail(SourceLoc(), "internal error: '" + opName(Kind) +
                             "' is not a plane lane operation");
    return V;
  }
  return B.CreateSelect(Valid, Perm, V);
}

void PlaneEmitter::emitVectorPlane(const Operation &Op, Value *Base,
                                   unsigned Len, PlaneLanes Stored) {
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
    storeLanes(R, Base, B.CreateZExt(B.CreateBitCast(Low, BoolVec), ByteVec),
               Len, Stored);
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
    storeLanes(R, Base, B.CreateShuffleVector(W, Splat), Len, Stored);
    return;
  }
  case OpClass::PlaneLane:
    storeLanes(
        R, Base,
        vectorLaneOp(Op, laneVector(Op.Operands[0], Base, Len), Base, Len), Len,
        Stored);
    return;
  default:
    break;
  }
  // Reductions, scans, plane_all and plane_any.
  Type T = Values.operandType(Op.Operands[0]);
  Value *V = Types.fromMem(laneVector(Op.Operands[0], Base, Len), T);
  if (Act)
    V = B.CreateSelect(Act, V,
                       B.CreateVectorSplat(P, vectorNeutral(Op.Kind, T)));
  Value *Res = isScan(Op.Kind)
                   ? vectorScan(Op.Kind, T, V)
                   : B.CreateVectorSplat(P, vectorReduce(Op.Kind, T, V));
  storeLanes(R, Base, toMemVector(B, Res, T), Len, Stored);
}
