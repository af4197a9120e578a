//===- SignallingNaNMinMax.h - minNum of a signalling NaN -------*- C++ -*-===//
//
// docs/LangRef.md §5.3: float `min`, `max`, `clamp`, `atomic_min` and
// `atomic_max` follow minNum/maxNum, where a NaN operand (in memory or given)
// loses to a number, a signalling NaN as much as a quiet one. That is what
// LLVM's `llvm.minnum`/`llvm.maxnum` and its fmin/fmax reductions and
// atomicrmw promise, and what x86-64's expansion does. AArch64's fminnm,
// fmaxnm, fminnmv and fmaxnmv, which LLVM 19 selects for them, follow IEEE
// 754-2008 instead: a signalling NaN operand gives the default quiet NaN.
//
// On such targets (TargetArch::minMaxQuietsSignallingNaN) this pass, at the
// end of the optimisation pipeline, gives those instructions no signalling
// NaN:
//  - each operand of `llvm.minnum`/`llvm.maxnum` (scalar or vector) that
//    may be a signalling NaN is replaced, where it is a NaN, by the other
//    operand: minnum(isnan(a) ? b : a, isnan(b) ? a : b), which is the
//    other operand where one is a NaN, a NaN where both are, and
//    minnum(a, b) otherwise;
//  - the NaN lanes of an fmin/fmax reduction's operand become quiet NaNs,
//    which the instruction ignores;
//  - each `atomicrmw fmin`/`fmax` becomes the compare-and-swap loop code
//    generation would make of it (its `llvm.minnum` of the value in memory
//    then gets the rule above).
// Operands that cannot be signalling NaNs (results of arithmetic,
// constants) are left alone, so a `clamp` against literals costs one select.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_SIGNALLINGNANMINMAX_H
#define KILN_LIB_CPU_SIGNALLINGNANMINMAX_H

#include "llvm/IR/PassManager.h"

namespace llvm {
class TargetMachine;
}

namespace kiln {

/// Rewrites \p F as above when \p TM's instructions quiet a signalling NaN
/// operand of minNum. Returns whether anything changed.
bool giveMinMaxNoSignallingNaN(llvm::Function &F,
                               const llvm::TargetMachine &TM);

class SignallingNaNMinMaxPass
    : public llvm::PassInfoMixin<SignallingNaNMinMaxPass> {
public:
  explicit SignallingNaNMinMaxPass(const llvm::TargetMachine &TM) : TM(TM) {}
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
  /// Correctness, not speed: it runs at every level.
  static bool isRequired() { return true; }

private:
  const llvm::TargetMachine &TM;
};

} // namespace kiln

#endif // KILN_LIB_CPU_SIGNALLINGNANMINMAX_H
