//===- LowerCast.cpp - Casts between Kiln types ---------------------------===//
//
// docs/LangRef.md §5: integer casts wrap or extend by the source's
// signedness, float-to-int casts saturate (NaN gives 0), anything non-zero
// is true, bf16 is widened exactly and rounded once by hand (LowerBF16.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

Value *ScalarEmitter::emitCast(Value *V, Type From, Type To) {
  llvm::IRBuilder<> &B = Cx.B;
  if (From == To)
    return V;
  // Minifloats by hand, through f32 (LowerMinifloat.cpp).
  if (From.isMinifloat() || To.isMinifloat())
    return emitMinifloatCast(V, From, To);
  llvm::Type *DT = Types.valueType(To);
  // bf16 by hand: widening is exact, narrowing rounds once (LowerBF16.cpp).
  if (From.elementKind() == ScalarKind::BF16)
    return emitCast(bf16ToF32(V), From.withElement(ScalarKind::F32), To);
  if (To.elementKind() == ScalarKind::BF16) {
    if (From.isBool())
      return f32ToBF16(
          B.CreateUIToFP(V, Types.valueType(To.withElement(ScalarKind::F32))));
    if (From.isInteger())
      return intToBF16(V, From);
    switch (From.elementKind()) {
    case ScalarKind::F64:
      return f64ToBF16(V);
    case ScalarKind::F16: // exact in f32
      return f32ToBF16(
          B.CreateFPExt(V, Types.valueType(To.withElement(ScalarKind::F32))));
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
      V = B.CreateFPExt(V, Types.valueType(From.withElement(ScalarKind::F32)));
    auto ID = To.isSigned() ? llvm::Intrinsic::fptosi_sat
                            : llvm::Intrinsic::fptoui_sat;
    return B.CreateIntrinsic(ID, {DT, V->getType()}, {V});
  }
  // Float to float (bf16 was handled above).
  if (bitWidth(FK) < bitWidth(TK))
    return B.CreateFPExt(V, DT);
  return B.CreateFPTrunc(V, DT);
}
