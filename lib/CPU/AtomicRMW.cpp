//===- AtomicRMW.cpp - The atomicrmw of a read-modify-write atomic --------===//

#include "AtomicRMW.h"

using namespace kiln;

std::optional<llvm::AtomicRMWInst::BinOp> kiln::lowering::rmwBinOp(OpKind Kind,
                                                                   Type T) {
  using BO = llvm::AtomicRMWInst::BinOp;
  switch (Kind) {
  case OpKind::AtomicAdd:
    return T.isFloat() ? BO::FAdd : BO::Add;
  case OpKind::AtomicSub:
    return T.isFloat() ? BO::FSub : BO::Sub;
  case OpKind::AtomicMin:
    return T.isFloat() ? BO::FMin : T.isSigned() ? BO::Min : BO::UMin;
  case OpKind::AtomicMax:
    return T.isFloat() ? BO::FMax : T.isSigned() ? BO::Max : BO::UMax;
  case OpKind::AtomicAnd:
    return BO::And;
  case OpKind::AtomicOr:
    return BO::Or;
  case OpKind::AtomicXor:
    return BO::Xor;
  case OpKind::AtomicExchange:
    return BO::Xchg;
  default: // not a read-modify-write atomic: no mapping, never a guess
    return std::nullopt;
  }
}
