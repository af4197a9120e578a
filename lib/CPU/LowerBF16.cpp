//===- LowerBF16.cpp - bfloat16 conversions done with integer operations
//---===//
//
// bf16 values are i16 bit patterns in the lowered IR, never LLVM `bfloat`:
// LLVM 19 on x86 keeps a bfloat that crosses blocks as an f32 and converts it
// back with VCVTNEPS2BF16 (which flushes subnormals to zero) or a call of
// __truncsfbf2, and lowers f64 -> bf16 to __truncdfbf2, which the host
// process does not provide. So bf16 is widened to f32 exactly (a shift) and
// rounded back to nearest-even by hand. Every bf16 operation is computed in
// f32 (fma in f64) and rounded once; for +, -, *, /, sqrt this double
// rounding is innocuous since 24 >= 2 * 8 + 2.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

Value *ScalarEmitter::bf16ToF32(Value *V) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *I16T = V->getType()->getWithNewType(B.getInt16Ty());
  llvm::Type *I32T = V->getType()->getWithNewType(Cx.I32);
  Value *Bits = B.CreateZExt(B.CreateBitCast(V, I16T), I32T);
  Bits = B.CreateShl(Bits, llvm::ConstantInt::get(I32T, 16));
  return B.CreateBitCast(Bits, V->getType()->getWithNewType(B.getFloatTy()));
}

Value *ScalarEmitter::f32ToBF16(Value *V) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *I32T = V->getType()->getWithNewType(Cx.I32);
  auto C = [&](uint32_t X) { return llvm::ConstantInt::get(I32T, X); };
  Value *Bits = B.CreateBitCast(V, I32T);
  Value *Hi = B.CreateLShr(Bits, C(16));
  // Round to nearest, ties to even: add 0x7fff plus the lowest kept bit.
  Value *Rounded = B.CreateLShr(
      B.CreateAdd(Bits, B.CreateAdd(C(0x7FFF), B.CreateAnd(Hi, C(1)))), C(16));
  // A NaN stays a NaN (quieted) whatever its payload.
  Value *IsNaN = B.CreateFCmpUNO(V, V);
  Value *R = B.CreateSelect(IsNaN, B.CreateOr(Hi, C(0x40)), Rounded);
  return B.CreateTrunc(R, V->getType()->getWithNewType(B.getInt16Ty()));
}

Value *ScalarEmitter::f64ToBF16(Value *V) {
  llvm::IRBuilder<> &B = Cx.B;
  // f64 -> f32 rounds once; a second rounding to bf16 can only go wrong when
  // the f32 lands exactly on a bf16 tie while being inexact: then nudge it
  // one f32 ulp towards the exact value so that the tie is broken right.
  llvm::Type *F32T = V->getType()->getWithNewType(B.getFloatTy());
  llvm::Type *I32T = V->getType()->getWithNewType(Cx.I32);
  auto C = [&](uint32_t X) { return llvm::ConstantInt::get(I32T, X); };
  Value *T = B.CreateFPTrunc(V, F32T);
  Value *Back = B.CreateFPExt(T, V->getType());
  Value *Inexact = B.CreateFCmpONE(Back, V);
  Value *Bits = B.CreateBitCast(T, I32T);
  Value *Tie = B.CreateICmpEQ(B.CreateAnd(Bits, C(0xFFFF)), C(0x8000));
  Value *AbsV = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, V);
  Value *AbsBack = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, Back);
  Value *Up = B.CreateFCmpOGT(AbsV, AbsBack); // the exact value is further out
  Value *Nudged =
      B.CreateSelect(Up, B.CreateAdd(Bits, C(1)), B.CreateSub(Bits, C(1)));
  Bits = B.CreateSelect(B.CreateAnd(Inexact, Tie), Nudged, Bits);
  return f32ToBF16(B.CreateBitCast(Bits, F32T));
}

Value *ScalarEmitter::intToBF16(Value *V, Type From) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *F64T = V->getType()->getWithNewType(B.getDoubleTy());
  unsigned W = V->getType()->getScalarSizeInBits();
  if (W <= 32) // exact in f64
    return f64ToBF16(From.isSigned() ? B.CreateSIToFP(V, F64T)
                                     : B.CreateUIToFP(V, F64T));
  return f64ToBF16(intToF64Sticky(V, From));
}

Value *ScalarEmitter::intToF64Sticky(Value *V, Type From) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *F64T = V->getType()->getWithNewType(B.getDoubleTy());
  // Keep the top 32 significant bits and a sticky bit for the rest (exact in
  // f64), so that only the final rounding rounds.
  llvm::Type *I64T = V->getType();
  auto C = [&](uint64_t X) { return llvm::ConstantInt::get(I64T, X); };
  Value *Neg = From.isSigned() ? B.CreateICmpSLT(V, C(0)) : nullptr;
  Value *Mag = Neg ? B.CreateSelect(Neg, B.CreateNeg(V), V) : V;
  Value *Lz = B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, Mag, B.getFalse());
  Value *Len = B.CreateSub(C(64), Lz);
  Value *Shift = B.CreateSelect(B.CreateICmpUGT(Len, C(32)),
                                B.CreateSub(Len, C(32)), C(0));
  Value *Lost = B.CreateAnd(Mag, B.CreateSub(B.CreateShl(C(1), Shift), C(1)));
  Value *M = B.CreateOr(B.CreateLShr(Mag, Shift),
                        B.CreateZExt(B.CreateICmpNE(Lost, C(0)), I64T));
  Value *D = B.CreateUIToFP(M, F64T);
  Value *Scale =
      B.CreateBitCast(B.CreateShl(B.CreateAdd(Shift, C(1023)), C(52)), F64T);
  D = B.CreateFMul(D, Scale); // exact: a power of two
  if (Neg)
    D = B.CreateSelect(Neg, B.CreateFNeg(D), D);
  return D;
}

Value *ScalarEmitter::narrowFmaInF64(Value *A, Value *Bv, Value *C) {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *I64T = A->getType()->getWithNewType(Cx.I64);
  Value *P = B.CreateFMul(A, Bv); // exact: 2 x 11 significant bits at most
  Value *S = B.CreateFAdd(P, C);
  // TwoSum: S + E == P + C exactly.
  Value *BB = B.CreateFSub(S, P);
  Value *E =
      B.CreateFAdd(B.CreateFSub(P, B.CreateFSub(S, BB)), B.CreateFSub(C, BB));
  Value *Zero = llvm::ConstantFP::get(A->getType(), 0.0);
  Value *Inexact = B.CreateFCmpONE(E, Zero);
  // One f64 ulp towards the exact value: the magnitude grows when S and E
  // have the same sign.
  Value *Bits = B.CreateBitCast(S, I64T);
  Value *Grow =
      B.CreateICmpEQ(B.CreateFCmpOGT(S, Zero), B.CreateFCmpOGT(E, Zero));
  Value *One = llvm::ConstantInt::get(I64T, 1);
  Value *Nudged =
      B.CreateSelect(Grow, B.CreateAdd(Bits, One), B.CreateSub(Bits, One));
  // Infinities and NaNs are left alone (E is then NaN, so not "inexact").
  Value *Finite =
      B.CreateFCmpONE(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, S),
                      llvm::ConstantFP::getInfinity(A->getType()));
  Bits = B.CreateSelect(B.CreateAnd(Inexact, Finite), Nudged, Bits);
  return B.CreateBitCast(Bits, A->getType());
}
