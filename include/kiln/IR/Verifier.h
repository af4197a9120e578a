//===- Verifier.h - Check a kernel before it is lowered ---------*- C++ -*-===//

#ifndef KILN_IR_VERIFIER_H
#define KILN_IR_VERIFIER_H

#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Kernel.h"

#include "llvm/Support/Error.h"

namespace kiln {

/// Checks \p K against the rules of docs/LangRef.md §6 and \p Limits: operand
/// counts and types, the written result type against the implied one,
/// definitions before uses and in scope, break/continue inside a loop,
/// access modes, barriers and plane operations under divergent control flow,
/// and the device limits. Returns a DiagnosticError listing every problem in
/// source order (deterministic), each "FILE:LINE:COL: error: MESSAGE" with
/// \p FileName; a problem without a location (IR from the Builder) names the
/// kernel and the operation instead (Diagnostic::KernelName, OpIndex, OpText):
/// "FILE: error: in kernel @k, operation #7 (%3 = add %1, %2 : f32): MESSAGE".
/// A kernel that passes can be lowered without further checks.
llvm::Error verifyKernel(const IRKernel &K, const DeviceLimits &Limits,
                         llvm::StringRef FileName);

/// verifyKernel on every kernel of \p M, plus: kernel names are unique.
llvm::Error verifyModule(const Module &M, const DeviceLimits &Limits);

} // namespace kiln

#endif // KILN_IR_VERIFIER_H
