//===- LowerTypes.cpp - Kiln types and literals as LLVM types and constants
//===//
//
// Scalars map to LLVM scalars, lines to fixed vectors; bool is i1 in values
// and i8 in memory; bf16 is its i16 bits (LowerBF16.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

llvm::Type *TypeLowering::scalarType(ScalarKind Kind) {
  switch (Kind) {
  case ScalarKind::Bool:
    return Cx.I1;
  case ScalarKind::I8:
  case ScalarKind::U8:
    return Cx.I8;
  case ScalarKind::I16:
  case ScalarKind::U16:
    return llvm::Type::getInt16Ty(Cx.Ctx);
  case ScalarKind::I32:
  case ScalarKind::U32:
    return Cx.I32;
  case ScalarKind::I64:
  case ScalarKind::U64:
    return Cx.I64;
  case ScalarKind::F16:
    return llvm::Type::getHalfTy(Cx.Ctx);
  case ScalarKind::BF16:
    // Its bits: LLVM's own bfloat values get flushed or miscompiled when
    // they cross blocks (LowerBF16.cpp).
    return llvm::Type::getInt16Ty(Cx.Ctx);
  case ScalarKind::F32:
    return llvm::Type::getFloatTy(Cx.Ctx);
  case ScalarKind::F64:
    return llvm::Type::getDoubleTy(Cx.Ctx);
  case ScalarKind::F8E4M3:
  case ScalarKind::F8E5M2:
  case ScalarKind::F6E2M3:
  case ScalarKind::F6E3M2:
  case ScalarKind::F4E2M1:
  case ScalarKind::F4E2M1X2:
  case ScalarKind::UE8M0:
    return Cx.I8; // the code (LowerMinifloat.cpp)
  }
  return Cx.I32;
}

llvm::Type *TypeLowering::valueType(Type T) {
  llvm::Type *S = scalarType(T.elementKind());
  return T.isLine() ? llvm::FixedVectorType::get(S, T.lanes()) : S;
}

llvm::Type *TypeLowering::memType(Type T) {
  if (!T.isBool())
    return valueType(T);
  return T.isLine() ? llvm::FixedVectorType::get(Cx.I8, T.lanes()) : Cx.I8;
}

Value *TypeLowering::toMem(Value *V, Type T) {
  return T.isBool() ? Cx.B.CreateZExt(V, memType(T)) : V;
}

Value *TypeLowering::fromMem(Value *V, Type T) {
  return T.isBool()
             ? Cx.B.CreateICmpNE(V, llvm::Constant::getNullValue(V->getType()))
             : V;
}

llvm::Constant *TypeLowering::scalarConstant(ScalarKind Kind, uint64_t Bits) {
  llvm::Type *T = scalarType(Kind);
  unsigned W = T->getPrimitiveSizeInBits();
  if (Kind == ScalarKind::Bool)
    return llvm::ConstantInt::get(Cx.I1, Bits & 1);
  llvm::APInt Raw(W, W == 64 ? Bits : Bits & ((uint64_t(1) << W) - 1));
  if (isFloat(Kind) && T->isFloatingPointTy())
    return llvm::ConstantFP::get(Cx.Ctx,
                                 llvm::APFloat(T->getFltSemantics(), Raw));
  return llvm::ConstantInt::get(Cx.Ctx, Raw);
}

llvm::Constant *TypeLowering::literal(const Literal &L) {
  llvm::Constant *S = scalarConstant(L.Ty.elementKind(), L.Bits);
  if (!L.Ty.isLine())
    return S;
  return llvm::ConstantVector::getSplat(
      llvm::ElementCount::getFixed(L.Ty.lanes()), S);
}
