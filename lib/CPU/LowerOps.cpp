//===- LowerOps.cpp - Scalar and line operations --------------------------===//
//
// Exact semantics of docs/LangRef.md §5: non-trapping integer division, shifts
// modulo the width, lane-wise everything on lines. Casts are in
// LowerCast.cpp, math in LowerMath.cpp, builtins in LowerUnitLoops.cpp.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

static llvm::Constant *splatInt(llvm::Type *Ty, const llvm::APInt &V) {
  return llvm::ConstantInt::get(Ty, V);
}

Value *ScalarEmitter::emitMinMax(bool IsMax, Type T, Value *A, Value *Bv) {
  if (T.elementKind() == ScalarKind::BF16)
    return f32ToBF16(emitMinMax(IsMax, T.withElement(ScalarKind::F32),
                                bf16ToF32(A), bf16ToF32(Bv)));
  llvm::Intrinsic::ID ID;
  if (T.isFloat())
    ID = IsMax ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum;
  else if (T.isSigned())
    ID = IsMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin;
  else
    ID = IsMax ? llvm::Intrinsic::umax : llvm::Intrinsic::umin;
  return Cx.B.CreateBinaryIntrinsic(ID, A, Bv);
}

Value *ScalarEmitter::emitBinary(OpKind Kind, Type T, Value *A, Value *Bv) {
  llvm::IRBuilder<> &B = Cx.B;
  if (T.elementKind() == ScalarKind::BF16) // in f32, rounded once
    return f32ToBF16(emitBinary(Kind, T.withElement(ScalarKind::F32),
                                bf16ToF32(A), bf16ToF32(Bv)));
  bool Fl = T.isFloat(), Sg = T.isSigned();
  llvm::Type *Ty = A->getType();
  unsigned W = Ty->getScalarSizeInBits();
  switch (Kind) {
  case OpKind::Add:
    return Fl ? B.CreateFAdd(A, Bv) : B.CreateAdd(A, Bv);
  case OpKind::Sub:
    return Fl ? B.CreateFSub(A, Bv) : B.CreateSub(A, Bv);
  case OpKind::Mul:
    return Fl ? B.CreateFMul(A, Bv) : B.CreateMul(A, Bv);
  case OpKind::Div:
  case OpKind::Rem: {
    if (Fl)
      return Kind == OpKind::Div ? B.CreateFDiv(A, Bv) : B.CreateFRem(A, Bv);
    // Never trap: x / 0 = 0, x rem 0 = 0, INT_MIN / -1 = INT_MIN,
    // INT_MIN rem -1 = 0. The divisor is replaced by 1 in the bad cases.
    Value *Zero = llvm::Constant::getNullValue(Ty);
    Value *IsZero = B.CreateICmpEQ(Bv, Zero);
    Value *Bad = IsZero;
    if (Sg) {
      Value *Ovf = B.CreateAnd(
          B.CreateICmpEQ(A, splatInt(Ty, llvm::APInt::getSignedMinValue(W))),
          B.CreateICmpEQ(Bv, llvm::Constant::getAllOnesValue(Ty)));
      Bad = B.CreateOr(Bad, Ovf);
    }
    Value *Safe = B.CreateSelect(Bad, llvm::ConstantInt::get(Ty, 1), Bv);
    if (Kind == OpKind::Rem)
      return Sg ? B.CreateSRem(A, Safe) : B.CreateURem(A, Safe);
    Value *Q = Sg ? B.CreateSDiv(A, Safe) : B.CreateUDiv(A, Safe);
    return B.CreateSelect(IsZero, Zero, Q);
  }
  case OpKind::Min:
    return emitMinMax(false, T, A, Bv);
  case OpKind::Max:
    return emitMinMax(true, T, A, Bv);
  case OpKind::And:
  case OpKind::BitAnd:
    return B.CreateAnd(A, Bv);
  case OpKind::Or:
  case OpKind::BitOr:
    return B.CreateOr(A, Bv);
  case OpKind::Xor:
  case OpKind::BitXor:
    return B.CreateXor(A, Bv);
  case OpKind::Shl:
  case OpKind::Shr: {
    // The amount is taken modulo the width (widths are powers of two).
    Value *Amt = B.CreateAnd(Bv, llvm::ConstantInt::get(Ty, W - 1));
    if (Kind == OpKind::Shl)
      return B.CreateShl(A, Amt);
    return Sg ? B.CreateAShr(A, Amt) : B.CreateLShr(A, Amt);
  }
  case OpKind::MulHi: {
    llvm::Type *Wide = llvm::IntegerType::get(Cx.Ctx, 2 * W);
    if (auto *VT = llvm::dyn_cast<llvm::FixedVectorType>(Ty))
      Wide = llvm::FixedVectorType::get(Wide, VT->getNumElements());
    Value *WA = Sg ? B.CreateSExt(A, Wide) : B.CreateZExt(A, Wide);
    Value *WB = Sg ? B.CreateSExt(Bv, Wide) : B.CreateZExt(Bv, Wide);
    Value *P = B.CreateMul(WA, WB);
    return B.CreateTrunc(B.CreateLShr(P, llvm::ConstantInt::get(Wide, W)), Ty);
  }
  case OpKind::AddSat:
    return B.CreateBinaryIntrinsic(
        Sg ? llvm::Intrinsic::sadd_sat : llvm::Intrinsic::uadd_sat, A, Bv);
  case OpKind::SubSat:
    return B.CreateBinaryIntrinsic(
        Sg ? llvm::Intrinsic::ssub_sat : llvm::Intrinsic::usub_sat, A, Bv);
  default:
    return nullptr;
  }
}

Value *ScalarEmitter::emitUnary(OpKind Kind, Type T, Value *A) {
  llvm::IRBuilder<> &B = Cx.B;
  if (T.elementKind() == ScalarKind::BF16)
    return f32ToBF16(
        emitUnary(Kind, T.withElement(ScalarKind::F32), bf16ToF32(A)));
  switch (Kind) {
  case OpKind::Neg:
    return T.isFloat()
               ? B.CreateFNeg(A)
               : B.CreateSub(llvm::Constant::getNullValue(A->getType()), A);
  case OpKind::Abs:
    if (T.isFloat())
      return B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, A);
    if (T.isSigned()) // abs(INT_MIN) = INT_MIN, wrapping like the type
      return B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, A, B.getFalse());
    return A;
  case OpKind::BitNot:
    return B.CreateNot(A);
  case OpKind::ReverseBits:
    return B.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, A);
  case OpKind::Not:
    return B.CreateNot(A);
  default:
    return nullptr;
  }
}

Value *ScalarEmitter::emitCompare(OpKind Kind, Type T, Value *A, Value *Bv) {
  llvm::IRBuilder<> &B = Cx.B;
  if (T.elementKind() == ScalarKind::BF16)
    return emitCompare(Kind, T.withElement(ScalarKind::F32), bf16ToF32(A),
                       bf16ToF32(Bv));
  using P = llvm::CmpInst::Predicate;
  if (T.isFloat()) {
    // Ordered, except ne: ne(NaN, x) is true.
    P Pr = Kind == OpKind::Eq   ? P::FCMP_OEQ
           : Kind == OpKind::Ne ? P::FCMP_UNE
           : Kind == OpKind::Lt ? P::FCMP_OLT
           : Kind == OpKind::Le ? P::FCMP_OLE
           : Kind == OpKind::Gt ? P::FCMP_OGT
                                : P::FCMP_OGE;
    return B.CreateFCmp(Pr, A, Bv);
  }
  bool Sg = T.isSigned();
  P Pr = Kind == OpKind::Eq   ? P::ICMP_EQ
         : Kind == OpKind::Ne ? P::ICMP_NE
         : Kind == OpKind::Lt ? (Sg ? P::ICMP_SLT : P::ICMP_ULT)
         : Kind == OpKind::Le ? (Sg ? P::ICMP_SLE : P::ICMP_ULE)
         : Kind == OpKind::Gt ? (Sg ? P::ICMP_SGT : P::ICMP_UGT)
                              : (Sg ? P::ICMP_SGE : P::ICMP_UGE);
  return B.CreateICmp(Pr, A, Bv);
}

Value *ScalarEmitter::emitDot(Type T, Value *A, Value *Bv) {
  llvm::IRBuilder<> &B = Cx.B;
  // Each product and sum rounded in the element type, like mul then add.
  Value *P = emitBinary(OpKind::Mul, T, A, Bv);
  if (!T.isLine())
    return P;
  // Lanes summed in order 0..N-1 (deterministic, no reassociation).
  Value *Sum = B.CreateExtractElement(P, uint64_t(0));
  for (unsigned L = 1; L < T.lanes(); ++L)
    Sum = emitBinary(OpKind::Add, T.elementType(), Sum,
                     B.CreateExtractElement(P, L));
  return Sum;
}

Value *ScalarEmitter::lowerValueOp(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  Type T = Op.ResultType;
  auto Opd = [&](unsigned I) { return Values.operand(Op, I); };
  auto OpTy = [&](unsigned I) { return Values.operandType(Op.Operands[I]); };
  auto Need = [&](size_t N) {
    if (Op.Operands.size() >= N)
      return true;
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' has too few operands");
    return false;
  };
  switch (Op.opClass()) {
  case OpClass::Builtin:
  case OpClass::BuiltinXYZ:
    return Pos.emitBuiltin(Op);
  case OpClass::Const: {
    if (Op.ConstBits.empty()) {
      Cx.fail(Op.Loc, "constant without a value");
      return nullptr;
    }
    if (!T.isLine())
      return Types.scalarConstant(T.elementKind(), Op.ConstBits[0]);
    std::vector<llvm::Constant *> Lanes;
    for (unsigned L = 0; L < T.lanes(); ++L)
      Lanes.push_back(Types.scalarConstant(
          T.elementKind(),
          Op.ConstBits[Op.ConstBits.size() == 1
                           ? 0
                           : std::min<size_t>(L, Op.ConstBits.size() - 1)]));
    return llvm::ConstantVector::get(Lanes);
  }
  case OpClass::UnaryNumeric:
  case OpClass::UnaryInt:
  case OpClass::UnaryBool:
    if (!Need(1))
      return nullptr;
    return emitUnary(Op.Kind, T, Opd(0));
  case OpClass::BinaryNumeric:
  case OpClass::BinaryInt:
  case OpClass::BinaryBool:
    if (!Need(2))
      return nullptr;
    return emitBinary(Op.Kind, T, Opd(0), Opd(1));
  case OpClass::TernaryNumeric: // clamp(x, lo, hi) = min(max(x, lo), hi)
    if (!Need(3))
      return nullptr;
    return emitMinMax(false, T, emitMinMax(true, T, Opd(0), Opd(1)), Opd(2));
  case OpClass::TernaryFloat:
    if (!Need(3))
      return nullptr;
    return emitMath(Op.Kind, T, {Opd(0), Opd(1), Opd(2)});
  case OpClass::BitCount: {
    if (!Need(1))
      return nullptr;
    Value *A = Opd(0);
    Value *R;
    if (Op.Kind == OpKind::Popcount) {
      R = B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, A);
    } else if (Op.Kind == OpKind::FindFirstSet) {
      // 1 + the index of the lowest set bit, 0 for 0 (fits every width).
      Value *Tz =
          B.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, A, B.getFalse());
      Value *Zero = llvm::Constant::getNullValue(A->getType());
      R = B.CreateSelect(
          B.CreateICmpEQ(A, Zero), Zero,
          B.CreateAdd(Tz, llvm::ConstantInt::get(A->getType(), 1)));
    } else { // clz/ctz of 0 give the bit width
      R = B.CreateBinaryIntrinsic(Op.Kind == OpKind::Clz
                                      ? llvm::Intrinsic::ctlz
                                      : llvm::Intrinsic::cttz,
                                  A, B.getFalse());
    }
    return B.CreateZExtOrTrunc(R, Types.valueType(T));
  }
  case OpClass::UnaryFloat:
    if (!Need(1))
      return nullptr;
    return emitMath(Op.Kind, T, {Opd(0)});
  case OpClass::BinaryFloat:
    if (!Need(2))
      return nullptr;
    return emitMath(Op.Kind, T, {Opd(0), Opd(1)});
  case OpClass::PowI: {
    // pow(x, n converted to the float type): bf16 (an integer in memory)
    // through f32, as its other math.
    if (!Need(2))
      return nullptr;
    if (T.elementKind() == ScalarKind::BF16) {
      Type F = T.withElement(ScalarKind::F32);
      Value *N = B.CreateSIToFP(Opd(1), Types.valueType(F));
      return f32ToBF16(emitMath(OpKind::Pow, F, {bf16ToF32(Opd(0)), N}));
    }
    Value *N = B.CreateSIToFP(Opd(1), Types.valueType(T));
    return emitMath(OpKind::Pow, T, {Opd(0), N});
  }
  case OpClass::FloatPredicate: {
    if (!Need(1))
      return nullptr;
    Value *A = Opd(0);
    if (OpTy(0).elementKind() == ScalarKind::BF16)
      A = bf16ToF32(A);
    if (Op.Kind == OpKind::IsNan)
      return B.CreateFCmpUNO(A, A);
    Value *Abs = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, A);
    return B.CreateFCmpOEQ(Abs, llvm::ConstantFP::getInfinity(A->getType()));
  }
  case OpClass::Dot:
    if (!Need(2))
      return nullptr;
    return emitDot(OpTy(0), Opd(0), Opd(1));
  case OpClass::LineReduce: {
    if (!Need(1))
      return nullptr;
    // Lanes summed in order 0..N-1, each sum rounded in the element type
    // (as emitDot sums its products).
    Type LT = OpTy(0);
    Value *A = Opd(0);
    Value *Sum = B.CreateExtractElement(A, uint64_t(0));
    for (unsigned L = 1; L < LT.lanes(); ++L)
      Sum = emitBinary(OpKind::Add, LT.elementType(), Sum,
                       B.CreateExtractElement(A, L));
    return Sum;
  }
  case OpClass::Magnitude: {
    if (!Need(1))
      return nullptr;
    Value *A = Opd(0);
    return emitMath(OpKind::Sqrt, T, {emitDot(OpTy(0), A, A)});
  }
  case OpClass::Normalize: {
    if (!Need(1))
      return nullptr;
    Type LT = OpTy(0);
    Value *A = Opd(0);
    Value *Mag = emitMath(OpKind::Sqrt, LT.elementType(), {emitDot(LT, A, A)});
    if (LT.isLine())
      Mag = B.CreateVectorSplat(LT.lanes(), Mag);
    return emitBinary(OpKind::Div, LT, A, Mag);
  }
  case OpClass::Extract:
  case OpClass::Insert: {
    bool Ins = Op.opClass() == OpClass::Insert;
    if (!Need(Ins ? 3 : 2))
      return nullptr;
    Type LT = OpTy(0);
    const Operand &Idx = Op.Operands[1];
    if (!Ins && LT.isLine() && Idx.isLiteral() && Idx.Lit.Bits < LT.lanes())
      if (Value *Lane = Values.slotLane(Op.Operands[0], Idx.Lit.Bits))
        return Lane;
    Value *V = Opd(0);
    unsigned N = LT.lanes();
    if (!LT.isLine()) // a scalar is a line of one lane for indexing
      return Ins ? Opd(2) : V;
    if (Idx.isLiteral()) {
      uint64_t I = Idx.Lit.Bits;
      if (I >= N) // out of range: extract gives 0, insert changes nothing
        return Ins ? V : llvm::Constant::getNullValue(Types.valueType(T));
      return Ins ? B.CreateInsertElement(V, Opd(2), I)
                 : B.CreateExtractElement(V, I);
    }
    Value *I = B.CreateZExtOrTrunc(Opd(1), Cx.I32);
    Value *InRange = B.CreateICmpULT(I, B.getInt32(N));
    Value *Safe = B.CreateSelect(InRange, I, B.getInt32(0));
    if (Ins)
      return B.CreateSelect(InRange, B.CreateInsertElement(V, Opd(2), Safe), V);
    return B.CreateSelect(InRange, B.CreateExtractElement(V, Safe),
                          llvm::Constant::getNullValue(Types.valueType(T)));
  }
  case OpClass::Splat:
    if (!Need(1))
      return nullptr;
    if (!T.isLine())
      return Opd(0);
    return B.CreateVectorSplat(T.lanes(), Opd(0));
  case OpClass::Vector: {
    if (!T.isLine())
      return Need(1) ? Opd(0) : nullptr;
    if (!Need(T.lanes()))
      return nullptr;
    Value *R = llvm::PoisonValue::get(Types.valueType(T));
    for (unsigned L = 0; L < T.lanes(); ++L)
      R = B.CreateInsertElement(R, Opd(L), L);
    return R;
  }
  case OpClass::Compare:
    if (!Need(2))
      return nullptr;
    return emitCompare(Op.Kind, OpTy(0), Opd(0), Opd(1));
  case OpClass::Cast:
    if (!Need(1))
      return nullptr;
    return emitCast(Opd(0), OpTy(0), T);
  case OpClass::Bitcast: {
    if (!Need(1))
      return nullptr;
    Value *V = Opd(0);
    if (V->getType() == Types.valueType(T))
      return V;
    return B.CreateBitCast(V, Types.valueType(T));
  }
  case OpClass::Select:
    if (!Need(3))
      return nullptr;
    return B.CreateSelect(Opd(0), Opd(1), Opd(2));
  default:
    Cx.fail(Op.Loc,
            "operation '" + opName(Op.Kind) + "' cannot be lowered here");
    return nullptr;
  }
}
