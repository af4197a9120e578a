//===- LowerMath.cpp - Float math: LLVM intrinsics and libm calls ---------===//
//
// The math operations of docs/LangRef.md §5 (sqrt, exp, log, trigonometry,
// pow, fma, ...) on scalars and lines; f16 and bf16 are computed in f32 or
// f64 and rounded once (docs/Lowering.md §9).
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

Value *ScalarEmitter::emitLibm(llvm::StringRef Name, Type T,
                               llvm::ArrayRef<Value *> Args) {
  llvm::IRBuilder<> &B = Cx.B;
  bool IsF32 = T.elementKind() == ScalarKind::F32;
  llvm::Type *S = Types.scalarType(T.elementKind());
  std::string Sym = Name.str() + (IsF32 ? "f" : "");
  std::vector<llvm::Type *> Params(Args.size(), S);
  auto Callee =
      Cx.M->getOrInsertFunction(Sym, llvm::FunctionType::get(S, Params, false));
  if (auto *Fn = llvm::dyn_cast<llvm::Function>(Callee.getCallee())) {
    Fn->setDoesNotThrow();
    Fn->setWillReturn();
    Fn->setDoesNotAccessMemory(); // errno is never read
  }
  if (!T.isLine())
    return B.CreateCall(Callee, Args);
  Value *R = llvm::PoisonValue::get(Types.valueType(T));
  for (unsigned L = 0; L < T.lanes(); ++L) {
    std::vector<Value *> LaneArgs;
    for (Value *A : Args)
      LaneArgs.push_back(B.CreateExtractElement(A, L));
    R = B.CreateInsertElement(R, B.CreateCall(Callee, LaneArgs), L);
  }
  return R;
}

Value *ScalarEmitter::emitMath(OpKind Kind, Type T,
                               llvm::ArrayRef<Value *> Args) {
  llvm::IRBuilder<> &B = Cx.B;
  ScalarKind E = T.elementKind();
  if (E == ScalarKind::BF16) {
    // In f32 (fma in f64) and rounded once, by hand (LowerBF16.cpp).
    bool Fma = Kind == OpKind::Fma;
    Type Wide = T.withElement(Fma ? ScalarKind::F64 : ScalarKind::F32);
    std::vector<Value *> WArgs;
    for (Value *A : Args) {
      Value *F = bf16ToF32(A);
      WArgs.push_back(Fma ? B.CreateFPExt(F, Types.valueType(Wide)) : F);
    }
    if (Fma)
      return f64ToBF16(narrowFmaInF64(WArgs[0], WArgs[1], WArgs[2]));
    return f32ToBF16(emitMath(Kind, Wide, WArgs));
  }
  if (E == ScalarKind::F16 && Kind == OpKind::Fma) {
    Type Wide = T.withElement(ScalarKind::F64);
    Value *W[3];
    for (int I = 0; I < 3; ++I)
      W[I] = B.CreateFPExt(Args[I], Types.valueType(Wide));
    return B.CreateFPTrunc(narrowFmaInF64(W[0], W[1], W[2]),
                           Types.valueType(T));
  }
  if (E == ScalarKind::F16) {
    // Half-precision math is computed in f32 and rounded once to the type.
    Type Wide = T.withElement(ScalarKind::F32);
    std::vector<Value *> WArgs;
    for (Value *A : Args)
      WArgs.push_back(B.CreateFPExt(A, Types.valueType(Wide)));
    return B.CreateFPTrunc(emitMath(Kind, Wide, WArgs), Types.valueType(T));
  }
  llvm::Type *Ty = Types.valueType(T);
  auto Un = [&](llvm::Intrinsic::ID ID) {
    return B.CreateUnaryIntrinsic(ID, Args[0]);
  };
  switch (Kind) {
  case OpKind::Sqrt:
    return Un(llvm::Intrinsic::sqrt);
  case OpKind::Rsqrt:
    return B.CreateFDiv(llvm::ConstantFP::get(Ty, 1.0),
                        Un(llvm::Intrinsic::sqrt));
  case OpKind::Recip:
    return B.CreateFDiv(llvm::ConstantFP::get(Ty, 1.0), Args[0]);
  case OpKind::Exp:
    return Un(llvm::Intrinsic::exp);
  case OpKind::Exp2:
    return Un(llvm::Intrinsic::exp2);
  case OpKind::Log:
    return Un(llvm::Intrinsic::log);
  case OpKind::Log2:
    return Un(llvm::Intrinsic::log2);
  case OpKind::Sin:
    return Un(llvm::Intrinsic::sin);
  case OpKind::Cos:
    return Un(llvm::Intrinsic::cos);
  case OpKind::Floor:
    return Un(llvm::Intrinsic::floor);
  case OpKind::Ceil:
    return Un(llvm::Intrinsic::ceil);
  case OpKind::Trunc:
    return Un(llvm::Intrinsic::trunc);
  case OpKind::Round: // IEEE roundToIntegralTiesToEven
    return Un(llvm::Intrinsic::roundeven);
  case OpKind::Pow:
    return B.CreateBinaryIntrinsic(llvm::Intrinsic::pow, Args[0], Args[1]);
  case OpKind::Fma:
    return B.CreateIntrinsic(llvm::Intrinsic::fma, {Ty},
                             {Args[0], Args[1], Args[2]});
  case OpKind::Log1p:
    return emitLibm("log1p", T, Args);
  case OpKind::Expm1:
    return emitLibm("expm1", T, Args);
  case OpKind::Tan:
    return emitLibm("tan", T, Args);
  case OpKind::Tanh:
    return emitLibm("tanh", T, Args);
  case OpKind::Sinh:
    return emitLibm("sinh", T, Args);
  case OpKind::Cosh:
    return emitLibm("cosh", T, Args);
  case OpKind::Asin:
    return emitLibm("asin", T, Args);
  case OpKind::Acos:
    return emitLibm("acos", T, Args);
  case OpKind::Atan:
    return emitLibm("atan", T, Args);
  case OpKind::Asinh:
    return emitLibm("asinh", T, Args);
  case OpKind::Acosh:
    return emitLibm("acosh", T, Args);
  case OpKind::Atanh:
    return emitLibm("atanh", T, Args);
  case OpKind::Atan2:
    return emitLibm("atan2", T, Args);
  case OpKind::Erf:
    return emitLibm("erf", T, Args);
  case OpKind::Hypot:
    return emitLibm("hypot", T, Args);
  case OpKind::Rhypot: // 1 / hypot(x, y), hypot without undue overflow
    return B.CreateFDiv(llvm::ConstantFP::get(Ty, 1.0),
                        emitLibm("hypot", T, Args));
  default:
    return nullptr;
  }
}
