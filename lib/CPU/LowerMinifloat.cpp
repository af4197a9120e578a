//===- LowerMinifloat.cpp - Casts to and from the minifloat storage types -===//
//
// Minifloat values are their codes in an i8 (docs/LangRef.md §3.3), so every
// operation on them but `cast` moves bytes. A cast decodes to f32, which
// holds every minifloat value exactly, and encodes from f32 or f64 with
// integer operations and one float addition, all of them element-wise, so
// that lines vectorise on any x86 (or other) CPU without a library call:
//
// - normal results: the source's bits are rebiased and shifted right with
//   round-to-nearest-even on the integer (a carry moves into the exponent);
// - subnormal results: adding 2^(emin - M + mantissa bits of the source)
//   makes the FPU round at exactly the minifloat's subnormal step, and the
//   difference of the bits is the code;
// - saturation is an unsigned min with the largest finite code, which also
//   catches infinities; NaN is selected last.
//
// ue8m0 rounds up to a power of two, from the f64 exponent field.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "kiln/IR/Minifloat.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Intrinsics.h"

#include <cmath>

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

Value *ScalarEmitter::minifloatToF32(Value *Code, ScalarKind Kind) {
  llvm::IRBuilder<> &B = Cx.B;
  const MinifloatFormat &F = minifloatFormat(Kind);
  llvm::Type *I32T = Code->getType()->getWithNewType(Cx.I32);
  llvm::Type *F32T = Code->getType()->getWithNewType(B.getFloatTy());
  auto C = [&](uint32_t X) { return llvm::ConstantInt::get(I32T, X); };
  Value *Bits = B.CreateAnd(B.CreateZExt(Code, I32T), C((1u << F.Bits) - 1));
  Value *QuietNaN = C(0x7FC00000);
  if (!F.Signed) { // ue8m0: 2^(c - 127); c = 0 is the f32 subnormal 2^-127
    Value *Pow = B.CreateSelect(B.CreateICmpEQ(Bits, C(0)), C(0x00400000),
                                B.CreateShl(Bits, C(23)));
    Pow = B.CreateSelect(B.CreateICmpEQ(Bits, C(F.NaNCode)), QuietNaN, Pow);
    return B.CreateBitCast(Pow, F32T);
  }
  unsigned M = F.MantissaBits;
  Value *Sign = B.CreateShl(B.CreateLShr(Bits, C(F.Bits - 1)), C(31));
  Value *Mag = B.CreateAnd(Bits, C((1u << (F.Bits - 1)) - 1));
  Value *Exponent = B.CreateLShr(Mag, C(M));
  // Normal: the fraction moves to the top of f32's and the exponent rebiases.
  Value *Normal = B.CreateAdd(B.CreateShl(Mag, C(23 - M)),
                              C(uint32_t(127 - F.Bias) << 23));
  // Subnormal: fraction * 2^(emin - M), exact in f32.
  Value *Fraction = B.CreateAnd(Mag, C((1u << M) - 1));
  Value *Sub = B.CreateFMul(
      B.CreateUIToFP(Fraction, F32T),
      llvm::ConstantFP::get(F32T, std::ldexp(1.0, 1 - F.Bias - int(M))));
  Value *Out = B.CreateSelect(B.CreateICmpEQ(Exponent, C(0)),
                              B.CreateBitCast(Sub, I32T), Normal);
  if (F.HasInfinity) { // e5m2: top exponent is inf (fraction 0) or NaN
    Value *Top = B.CreateICmpEQ(Exponent, C((1u << F.ExponentBits) - 1));
    Value *Special = B.CreateSelect(B.CreateICmpEQ(Fraction, C(0)),
                                    C(0x7F800000), QuietNaN);
    Out = B.CreateSelect(Top, Special, Out);
  } else if (F.HasNaN) { // e4m3: S.1111.111 only
    Out = B.CreateSelect(B.CreateICmpEQ(Mag, C(F.NaNCode)), QuietNaN, Out);
  }
  return B.CreateBitCast(B.CreateOr(Out, Sign), F32T);
}

Value *ScalarEmitter::floatToMinifloat(Value *V, ScalarKind Kind) {
  llvm::IRBuilder<> &B = Cx.B;
  const MinifloatFormat &F = minifloatFormat(Kind);
  llvm::Type *I8T = V->getType()->getWithNewType(Cx.I8);
  if (!F.Signed) // ue8m0 works on f64's exponent field
    return floatToUE8M0(V);
  bool Double = V->getType()->getScalarType()->isDoubleTy();
  unsigned W = Double ? 64 : 32, SrcM = Double ? 52 : 23;
  int SrcBias = Double ? 1023 : 127;
  llvm::Type *IT = V->getType()->getWithNewType(Double ? Cx.I64 : Cx.I32);
  auto C = [&](uint64_t X) { return llvm::ConstantInt::get(IT, X); };
  unsigned M = F.MantissaBits, Shift = SrcM - M;
  int MinExponent = 1 - F.Bias;

  Value *Bits = B.CreateBitCast(V, IT);
  Value *Sign = B.CreateLShr(Bits, C(W - 1));
  Value *Abs = B.CreateAnd(Bits, C((uint64_t(1) << (W - 1)) - 1));
  uint64_t InfBits = ((uint64_t(1) << (W - 1 - SrcM)) - 1) << SrcM;
  Value *IsNaN = B.CreateICmpUGT(Abs, C(InfBits));

  // Normal results: rebias, then shift right rounding to nearest even.
  Value *Rebiased = B.CreateSub(Abs, C(uint64_t(SrcBias - F.Bias) << SrcM));
  Value *Odd = B.CreateAnd(B.CreateLShr(Rebiased, C(Shift)), C(1));
  Value *Normal = B.CreateLShr(
      B.CreateAdd(Rebiased,
                  B.CreateAdd(C((uint64_t(1) << (Shift - 1)) - 1), Odd)),
      C(Shift));
  // Subnormal results: |v| + 2^(emin - M + SrcM) rounds at the minifloat's
  // subnormal step (the sum's ulp); the bits above the constant's count it.
  llvm::Type *FT = V->getType();
  Value *Magic =
      llvm::ConstantFP::get(FT, std::ldexp(1.0, MinExponent - int(M) + SrcM));
  Value *Sum = B.CreateFAdd(B.CreateBitCast(Abs, FT), Magic);
  Value *Sub = B.CreateSub(B.CreateBitCast(Sum, IT), B.CreateBitCast(Magic, IT));
  uint64_t MinNormalBits = uint64_t(MinExponent + SrcBias) << SrcM;
  Value *Code = B.CreateSelect(B.CreateICmpULT(Abs, C(MinNormalBits)), Sub,
                               Normal);
  // Saturate (infinities included), then the sign, then NaN.
  Code = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Code, C(F.MaxCode));
  Value *SignBit = B.CreateShl(Sign, C(F.Bits - 1));
  Code = B.CreateOr(Code, SignBit);
  Value *NaNCode = F.HasNaN ? B.CreateOr(C(F.NaNCode), SignBit)
                            : C(F.MaxCode); // no NaN: +max
  Code = B.CreateSelect(IsNaN, NaNCode, Code);
  return B.CreateTrunc(Code, I8T);
}

Value *ScalarEmitter::floatToUE8M0(Value *V) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *F64T = V->getType()->getWithNewType(B.getDoubleTy());
  if (!V->getType()->getScalarType()->isDoubleTy())
    V = B.CreateFPExt(V, F64T); // exact
  llvm::Type *I64T = V->getType()->getWithNewType(Cx.I64);
  auto C = [&](uint64_t X) { return llvm::ConstantInt::get(I64T, X); };
  Value *Bits = B.CreateBitCast(V, I64T);
  Value *Field = B.CreateAnd(B.CreateLShr(Bits, C(52)), C(0x7FF));
  Value *Inexact =
      B.CreateZExt(B.CreateICmpNE(B.CreateAnd(Bits, C((uint64_t(1) << 52) - 1)),
                                  C(0)),
                   I64T);
  // Round up: 2^e for a power of two, 2^(e+1) otherwise; rebias 1023 -> 127.
  Value *Code = B.CreateAdd(B.CreateSub(Field, C(1023 - 127)), Inexact);
  Code = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, Code, C(0));
  Code = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, Code, C(0xFE));
  Value *Negative = B.CreateICmpSLT(Bits, C(0)); // and -0: 2^-127 is closest
  Code = B.CreateSelect(Negative, C(0), Code);
  Code = B.CreateSelect(B.CreateFCmpUNO(V, V), C(0xFF), Code);
  return B.CreateTrunc(Code, V->getType()->getWithNewType(Cx.I8));
}

Value *ScalarEmitter::unpackPairs(Value *V) {
  llvm::IRBuilder<> &B = Cx.B;
  if (!V->getType()->isVectorTy())
    V = B.CreateInsertElement(
        llvm::PoisonValue::get(llvm::FixedVectorType::get(Cx.I8, 1)), V,
        uint64_t(0));
  unsigned N = llvm::cast<llvm::FixedVectorType>(V->getType())->getNumElements();
  Value *Lo = B.CreateAnd(V, llvm::ConstantInt::get(V->getType(), 0x0F));
  Value *Hi = B.CreateLShr(V, llvm::ConstantInt::get(V->getType(), 4));
  llvm::SmallVector<int, 32> Mask;
  for (unsigned I = 0; I < N; ++I) {
    Mask.push_back(int(I));     // element 2i: the low nibble
    Mask.push_back(int(N + I)); // element 2i + 1: the high nibble
  }
  return B.CreateShuffleVector(Lo, Hi, Mask);
}

Value *ScalarEmitter::packPairs(Value *Codes, bool Scalar) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned N =
      llvm::cast<llvm::FixedVectorType>(Codes->getType())->getNumElements() / 2;
  llvm::SmallVector<int, 16> Even, Odd;
  for (unsigned I = 0; I < N; ++I) {
    Even.push_back(int(2 * I));
    Odd.push_back(int(2 * I + 1));
  }
  Value *Lo = B.CreateShuffleVector(Codes, Even);
  Value *Hi = B.CreateShuffleVector(Codes, Odd);
  Value *Packed =
      B.CreateOr(Lo, B.CreateShl(Hi, llvm::ConstantInt::get(Hi->getType(), 4)));
  return Scalar ? B.CreateExtractElement(Packed, uint64_t(0)) : Packed;
}

Value *ScalarEmitter::emitMinifloatCast(Value *V, Type From, Type To) {
  if (From.isMinifloat()) {
    // Decode to f32 (exact), then cast or encode from there.
    ScalarKind Kind = From.elementKind();
    Type Wide = From.withElement(ScalarKind::F32);
    if (From.isPackedPair()) {
      V = unpackPairs(V);
      Kind = ScalarKind::F4E2M1;
      Wide = Type::line(ScalarKind::F32, 2 * From.lanes());
    }
    Value *F32 = minifloatToF32(V, Kind);
    return To.isMinifloat() ? encodeMinifloat(F32, Wide, To)
                            : emitCast(F32, Wide, To);
  }
  return encodeMinifloat(V, From, To);
}

Value *ScalarEmitter::encodeMinifloat(Value *V, Type From, Type To) {
  llvm::IRBuilder<> &B = Cx.B;
  // To f32 or f64, exactly or (64-bit integers) with a sticky bit so that
  // the one rounding below rounds the exact value.
  llvm::Type *F32T = V->getType()->getWithNewType(B.getFloatTy());
  llvm::Type *F64T = V->getType()->getWithNewType(B.getDoubleTy());
  switch (From.elementKind()) {
  case ScalarKind::Bool:
    V = B.CreateUIToFP(V, F32T);
    break;
  case ScalarKind::F16:
    V = B.CreateFPExt(V, F32T);
    break;
  case ScalarKind::BF16:
    V = bf16ToF32(V);
    break;
  case ScalarKind::F32:
  case ScalarKind::F64:
    break;
  default: // integers
    if (V->getType()->getScalarSizeInBits() <= 32)
      V = From.isSigned() ? B.CreateSIToFP(V, F64T) : B.CreateUIToFP(V, F64T);
    else
      V = intToF64Sticky(V, From);
    break;
  }
  if (!To.isPackedPair())
    return floatToMinifloat(V, To.elementKind());
  return packPairs(floatToMinifloat(V, ScalarKind::F4E2M1), !To.isLine());
}
