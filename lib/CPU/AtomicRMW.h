//===- AtomicRMW.h - The atomicrmw of an RMW atomic -------------*- C++ -*-===//
//
// One place maps Kiln's read-modify-write atomics (OpClass::AtomicRMW) to
// LLVM's atomicrmw operations. Every atomic is listed; any other operation
// gets none, so that a new atomic without a mapping is a lowering error, not
// an exchange.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_ATOMICRMW_H
#define KILN_LIB_CPU_ATOMICRMW_H

#include "kiln/IR/Operation.h"
#include "kiln/IR/Type.h"

#include "llvm/IR/Instructions.h"

#include <optional>

namespace kiln::lowering {

/// The atomicrmw operation of read-modify-write atomic \p Kind on scalars of
/// type \p T; none when \p Kind is not one.
std::optional<llvm::AtomicRMWInst::BinOp> rmwBinOp(OpKind Kind, Type T);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_ATOMICRMW_H
