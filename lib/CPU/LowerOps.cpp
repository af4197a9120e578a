//===- LowerOps.cpp - Scalar and line operations, math, casts and builtins
//-===//
//
// Exact semantics of docs/LangRef.md §5: non-trapping integer division, shifts
// modulo the width, saturating float-to-int casts, IEEE math through LLVM
// intrinsics or libm, lane-wise everything on lines.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

llvm::Type *KernelLowering::scalarType(ScalarKind Kind) {
  switch (Kind) {
  case ScalarKind::Bool:
    return I1;
  case ScalarKind::I8:
  case ScalarKind::U8:
    return I8;
  case ScalarKind::I16:
  case ScalarKind::U16:
    return llvm::Type::getInt16Ty(Ctx);
  case ScalarKind::I32:
  case ScalarKind::U32:
    return I32;
  case ScalarKind::I64:
  case ScalarKind::U64:
    return I64;
  case ScalarKind::F16:
    return llvm::Type::getHalfTy(Ctx);
  case ScalarKind::BF16:
    // Its bits: LLVM's own bfloat values get flushed or miscompiled when
    // they cross blocks (LowerBF16.cpp).
    return llvm::Type::getInt16Ty(Ctx);
  case ScalarKind::F32:
    return llvm::Type::getFloatTy(Ctx);
  case ScalarKind::F64:
    return llvm::Type::getDoubleTy(Ctx);
  }
  return I32;
}

llvm::Type *KernelLowering::valueType(Type T) {
  llvm::Type *S = scalarType(T.elementKind());
  return T.isLine() ? llvm::FixedVectorType::get(S, T.lanes()) : S;
}

llvm::Type *KernelLowering::memType(Type T) {
  if (!T.isBool())
    return valueType(T);
  return T.isLine() ? llvm::FixedVectorType::get(I8, T.lanes()) : I8;
}

Value *KernelLowering::toMem(Value *V, Type T) {
  return T.isBool() ? B.CreateZExt(V, memType(T)) : V;
}

Value *KernelLowering::fromMem(Value *V, Type T) {
  return T.isBool()
             ? B.CreateICmpNE(V, llvm::Constant::getNullValue(V->getType()))
             : V;
}

llvm::Constant *KernelLowering::scalarConstant(ScalarKind Kind, uint64_t Bits) {
  llvm::Type *T = scalarType(Kind);
  unsigned W = T->getPrimitiveSizeInBits();
  if (Kind == ScalarKind::Bool)
    return llvm::ConstantInt::get(I1, Bits & 1);
  llvm::APInt Raw(W, W == 64 ? Bits : Bits & ((uint64_t(1) << W) - 1));
  if (isFloat(Kind) && T->isFloatingPointTy())
    return llvm::ConstantFP::get(Ctx, llvm::APFloat(T->getFltSemantics(), Raw));
  return llvm::ConstantInt::get(Ctx, Raw);
}

llvm::Constant *KernelLowering::literal(const Literal &L) {
  llvm::Constant *S = scalarConstant(L.Ty.elementKind(), L.Bits);
  if (!L.Ty.isLine())
    return S;
  return llvm::ConstantVector::getSplat(
      llvm::ElementCount::getFixed(L.Ty.lanes()), S);
}

static llvm::Constant *splatInt(llvm::Type *Ty, const llvm::APInt &V) {
  return llvm::ConstantInt::get(Ty, V);
}

Value *KernelLowering::emitMinMax(bool IsMax, Type T, Value *A, Value *Bv) {
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
  return B.CreateBinaryIntrinsic(ID, A, Bv);
}

Value *KernelLowering::emitBinary(OpKind Kind, Type T, Value *A, Value *Bv) {
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
    llvm::Type *Wide = llvm::IntegerType::get(Ctx, 2 * W);
    if (auto *VT = llvm::dyn_cast<llvm::FixedVectorType>(Ty))
      Wide = llvm::FixedVectorType::get(Wide, VT->getNumElements());
    Value *WA = Sg ? B.CreateSExt(A, Wide) : B.CreateZExt(A, Wide);
    Value *WB = Sg ? B.CreateSExt(Bv, Wide) : B.CreateZExt(Bv, Wide);
    Value *P = B.CreateMul(WA, WB);
    return B.CreateTrunc(B.CreateLShr(P, llvm::ConstantInt::get(Wide, W)), Ty);
  }
  default:
    return nullptr;
  }
}

Value *KernelLowering::emitUnary(OpKind Kind, Type T, Value *A) {
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

Value *KernelLowering::emitCompare(OpKind Kind, Type T, Value *A, Value *Bv) {
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

Value *KernelLowering::emitCast(Value *V, Type From, Type To) {
  if (From == To)
    return V;
  llvm::Type *DT = valueType(To);
  // bf16 by hand: widening is exact, narrowing rounds once (LowerBF16.cpp).
  if (From.elementKind() == ScalarKind::BF16)
    return emitCast(bf16ToF32(V), From.withElement(ScalarKind::F32), To);
  if (To.elementKind() == ScalarKind::BF16) {
    if (From.isBool())
      return f32ToBF16(
          B.CreateUIToFP(V, valueType(To.withElement(ScalarKind::F32))));
    if (From.isInteger())
      return intToBF16(V, From);
    switch (From.elementKind()) {
    case ScalarKind::F64:
      return f64ToBF16(V);
    case ScalarKind::F16: // exact in f32
      return f32ToBF16(
          B.CreateFPExt(V, valueType(To.withElement(ScalarKind::F32))));
    default:
      return f32ToBF16(V);
    }
  }
  if (From.isBool()) {
    if (To.isBool())
      return V;
    return To.isFloat() ? B.CreateUIToFP(V, DT) : B.CreateZExt(V, DT);
  }
  if (To.isBool()) {
    Value *Zero = llvm::Constant::getNullValue(V->getType());
    // Non-zero is true; NaN is non-zero.
    return From.isFloat() ? B.CreateFCmpUNE(V, Zero) : B.CreateICmpNE(V, Zero);
  }
  if (From.isInteger() && To.isInteger())
    return B.CreateIntCast(V, DT, From.isSigned());
  if (From.isInteger())
    return From.isSigned() ? B.CreateSIToFP(V, DT) : B.CreateUIToFP(V, DT);
  ScalarKind FK = From.elementKind(), TK = To.elementKind();
  if (To.isInteger()) {
    // Saturating, NaN to 0 (llvm.fpto[su]i.sat); half types widen exactly
    // first.
    if (FK == ScalarKind::F16)
      V = B.CreateFPExt(V, valueType(From.withElement(ScalarKind::F32)));
    auto ID = To.isSigned() ? llvm::Intrinsic::fptosi_sat
                            : llvm::Intrinsic::fptoui_sat;
    return B.CreateIntrinsic(ID, {DT, V->getType()}, {V});
  }
  // Float to float (bf16 was handled above).
  if (bitWidth(FK) < bitWidth(TK))
    return B.CreateFPExt(V, DT);
  return B.CreateFPTrunc(V, DT);
}

Value *KernelLowering::emitDot(Type T, Value *A, Value *Bv) {
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

Value *KernelLowering::emitBuiltin(const Operation &Op) {
  auto C32 = [&](uint64_t V) { return B.getInt32(static_cast<uint32_t>(V)); };
  uint32_t D[3] = {K.CubeDim[0], K.CubeDim[1], K.CubeDim[2]};
  Value *U = Unit ? Unit : B.getInt32(0);
  auto UnitComp = [&](unsigned C) -> Value * {
    if (UnitXYZ[C]) // inside a unit loop: its induction variables
      return UnitXYZ[C];
    if (C == 0)
      return B.CreateURem(U, C32(D[0]));
    if (C == 1)
      return B.CreateURem(B.CreateUDiv(U, C32(D[0])), C32(D[1]));
    return B.CreateUDiv(U, C32(uint64_t(D[0]) * D[1]));
  };
  unsigned Comp = Op.Component;
  switch (Op.Kind) {
  case OpKind::UnitPos:
    return Comp == 0 ? U : UnitComp(Comp - 1);
  case OpKind::CubePos:
    return Comp == 0 ? CubeLinear : CubePos[Comp - 1];
  case OpKind::CubeDim:
    return Comp == 0 ? C32(uint64_t(D[0]) * D[1] * D[2]) : C32(D[Comp - 1]);
  case OpKind::CubeCount:
    if (Comp != 0)
      return CubeCount[Comp - 1];
    return B.CreateMul(B.CreateMul(CubeCount[0], CubeCount[1]), CubeCount[2]);
  case OpKind::AbsolutePos: {
    auto Abs = [&](unsigned C) {
      return B.CreateAdd(B.CreateMul(CubePos[C], C32(D[C])), UnitComp(C));
    };
    if (Comp != 0)
      return Abs(Comp - 1);
    Value *RowX = B.CreateMul(CubeCount[0], C32(D[0]));
    Value *RowY = B.CreateMul(CubeCount[1], C32(D[1]));
    Value *Lin = B.CreateAdd(Abs(0), B.CreateMul(Abs(1), RowX));
    return B.CreateAdd(Lin, B.CreateMul(Abs(2), B.CreateMul(RowX, RowY)));
  }
  case OpKind::PlaneDim:
    return C32(PlaneDim);
  case OpKind::UnitPosPlane:
    return B.CreateURem(U, C32(PlaneDim));
  case OpKind::PlanePos:
    return B.CreateUDiv(U, C32(PlaneDim));
  default:
    return nullptr;
  }
}

Value *KernelLowering::lowerValueOp(const Operation &Op) {
  Type T = Op.ResultType;
  auto Opd = [&](unsigned I) { return operand(Op, I); };
  auto OpTy = [&](unsigned I) { return operandType(Op.Operands[I]); };
  auto Need = [&](size_t N) {
    if (Op.Operands.size() >= N)
      return true;
    fail(Op.Loc, "'" + opName(Op.Kind) + "' has too few operands");
    return false;
  };
  switch (Op.opClass()) {
  case OpClass::Builtin:
  case OpClass::BuiltinXYZ:
    return emitBuiltin(Op);
  case OpClass::Const: {
    if (Op.ConstBits.empty()) {
      fail(Op.Loc, "constant without a value");
      return nullptr;
    }
    if (!T.isLine())
      return scalarConstant(T.elementKind(), Op.ConstBits[0]);
    std::vector<llvm::Constant *> Lanes;
    for (unsigned L = 0; L < T.lanes(); ++L)
      Lanes.push_back(scalarConstant(
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
    if (Op.Kind == OpKind::Popcount)
      R = B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, A);
    else // clz/ctz of 0 give the bit width
      R = B.CreateBinaryIntrinsic(Op.Kind == OpKind::Clz
                                      ? llvm::Intrinsic::ctlz
                                      : llvm::Intrinsic::cttz,
                                  A, B.getFalse());
    return B.CreateZExtOrTrunc(R, valueType(T));
  }
  case OpClass::UnaryFloat:
    if (!Need(1))
      return nullptr;
    return emitMath(Op.Kind, T, {Opd(0)});
  case OpClass::BinaryFloat:
    if (!Need(2))
      return nullptr;
    return emitMath(Op.Kind, T, {Opd(0), Opd(1)});
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
    Value *V = Opd(0);
    unsigned N = LT.lanes();
    if (!LT.isLine()) // a scalar is a line of one lane for indexing
      return Ins ? Opd(2) : V;
    const Operand &Idx = Op.Operands[1];
    if (Idx.isLiteral()) {
      uint64_t I = Idx.Lit.Bits;
      if (I >= N) // out of range: extract gives 0, insert changes nothing
        return Ins ? V : llvm::Constant::getNullValue(valueType(T));
      return Ins ? B.CreateInsertElement(V, Opd(2), I)
                 : B.CreateExtractElement(V, I);
    }
    Value *I = B.CreateZExtOrTrunc(Opd(1), I32);
    Value *InRange = B.CreateICmpULT(I, B.getInt32(N));
    Value *Safe = B.CreateSelect(InRange, I, B.getInt32(0));
    if (Ins)
      return B.CreateSelect(InRange, B.CreateInsertElement(V, Opd(2), Safe), V);
    return B.CreateSelect(InRange, B.CreateExtractElement(V, Safe),
                          llvm::Constant::getNullValue(valueType(T)));
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
    Value *R = llvm::PoisonValue::get(valueType(T));
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
    if (V->getType() == valueType(T))
      return V;
    return B.CreateBitCast(V, valueType(T));
  }
  case OpClass::Select:
    if (!Need(3))
      return nullptr;
    return B.CreateSelect(Opd(0), Opd(1), Opd(2));
  default:
    fail(Op.Loc, "operation '" + opName(Op.Kind) + "' cannot be lowered here");
    return nullptr;
  }
}
