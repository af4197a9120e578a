//===- InlineExp.cpp - f32 exp as inline arithmetic -----------------------===//
//
// The algorithm and its constants are those of Arm's optimized-routines
// vector expf (MIT OR Apache-2.0 WITH LLVM-exception): see InlineExp.h.
//
//===----------------------------------------------------------------------===//

#include "InlineExp.h"
#include "TargetArch.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

using namespace llvm;

bool kiln::shouldInlineExp(const TargetMachine &TM) {
  return targetArchOf(TM).inlinesExpF32(TM);
}

/// exp(X) for X of type float or <N x float>, inserted at \p B.
static Value *emitExpF32(IRBuilder<> &B, Value *X) {
  Type *F = X->getType();
  Type *I = F->getWithNewType(B.getInt32Ty());
  auto C = [&](float V) { return ConstantFP::get(F, V); };
  auto CI = [&](uint32_t V) { return ConstantInt::get(I, V); };
  auto Fma = [&](Value *A, Value *M, Value *Add) {
    return B.CreateIntrinsic(Intrinsic::fma, {F}, {A, M, Add});
  };

  // Below -104 the result rounds to +0, above 89 to +inf: clamping there
  // keeps n in [-150, 128]. The compares are false for NaN, which goes
  // through (each select is one maxps/minps on x86).
  X = B.CreateSelect(B.CreateFCmpOGT(C(-104.0f), X), C(-104.0f), X);
  X = B.CreateSelect(B.CreateFCmpOLT(C(89.0f), X), C(89.0f), X);

  // x = n ln2 + r, |r| <= ln2/2: adding 1.5 * 2^23 rounds x / ln2 to the
  // integer n, which is then the low bits of Z's mantissa.
  Value *Shift = C(0x1.8p23f);
  Value *Z = Fma(X, C(0x1.715476p+0f), Shift);
  Value *N = B.CreateFSub(Z, Shift);
  Value *R = Fma(N, C(-0x1.62e4p-1f), X);
  R = Fma(N, C(-0x1.7f7d1cp-20f), R);

  // e^r - 1 by Horner's rule (maximum error 1.45 ulp of the result, + 0.5
  // for its rounding); Horner needs fewer registers than Estrin, and 16 of
  // them (AVX2) are few for a loop that is interleaved.
  Value *P = Fma(C(0x1.0e4020p-7f), R, C(0x1.573e2ep-5f));
  P = Fma(P, R, C(0x1.555e66p-3f));
  P = Fma(P, R, C(0x1.fffdb6p-2f));
  P = Fma(P, R, C(0x1.ffffecp-1f));
  Value *Poly = B.CreateFMul(P, R);

  // 2^n = S * T with S = 2^(n + 32), T = 2^-32 for n < 0 and S = 2^(n - 1),
  // T = 2 otherwise, so that S is a normal float for every n of the clamped
  // range. Multiplying by T is exact unless the result is subnormal, where
  // it rounds to the subnormal's ulp (after the FMA's rounding to 24 bits:
  // within 1 ulp of that). n < 0 is tested on its
  // sign bit (n is never -0), which x86 blends on without a compare.
  Value *Negative =
      B.CreateICmpSLT(B.CreateBitCast(N, I), ConstantInt::get(I, 0));
  Value *E = B.CreateShl(B.CreateBitCast(Z, I), 23);
  Value *SBias = B.CreateSelect(Negative, CI((127 + 32) << 23), CI(126 << 23));
  Value *S = B.CreateBitCast(B.CreateAdd(E, SBias), F);
  // T's exponent field is 254 - S's bias: 2^-32 or 2.
  Value *T = B.CreateBitCast(B.CreateSub(CI(254u << 23), SBias), F);
  return B.CreateFMul(Fma(Poly, S, S), T, "exp");
}

bool kiln::inlineExpF32(Module &M) {
  SmallVector<CallInst *, 8> Calls;
  for (Function &Fn : M)
    if (Fn.getIntrinsicID() == Intrinsic::exp)
      for (User *U : Fn.users())
        if (auto *Call = dyn_cast<CallInst>(U))
          if (Call->getCalledFunction() == &Fn &&
              Call->getType()->getScalarType()->isFloatTy())
            Calls.push_back(Call);
  for (CallInst *Call : Calls) {
    IRBuilder<> B(Call);
    Value *Exp = emitExpF32(B, Call->getArgOperand(0));
    Call->replaceAllUsesWith(Exp);
    Call->eraseFromParent();
  }
  return !Calls.empty();
}
