//===- UnitLoopSwitches.h - Switches in unit loops as branches -*- C++ -*-===//
//
// LLVM 19's loop vectoriser refuses a loop that holds a `switch`. Unit
// loops get switches from two places: the kernel's own `switch` on a
// per-unit value, and SimplifyCFG, which folds an if/else chain comparing
// one value with constants (`if (nb >= 0) ... else if (nb == -1) ... else
// if (nb == -2) ...`) into one. Either way the unit loop stays scalar,
// while the same code as branches is if-converted and vectorised across
// the units like any other divergent `if`.
//
// So, right before the vectoriser, every switch of a function whose
// innermost loop is a unit loop (the loop carries
// `llvm.loop.parallel_accesses`, docs/Lowering.md §4) and that has at most
// MaxUnitLoopSwitchCases cases is rewritten as a tree of compares and
// branches (LLVM's LowerSwitch; then every switch of the function is, the
// others at cube level included, which costs a compare or two where a jump
// table is not used anyway at that size). Switches of loops that are not
// unit loops, or with more cases, are left alone. docs/Lowering.md §11,
// "Switches in unit loops".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_UNITLOOPSWITCHES_H
#define KILN_LIB_CPU_UNITLOOPSWITCHES_H

#include "llvm/IR/PassManager.h"

namespace kiln {

/// The most cases a switch in a unit loop may have to become branches:
/// past it the vectorised body tests every case for every vector anyway.
inline constexpr unsigned MaxUnitLoopSwitchCases = 16;

class UnitLoopSwitchesPass : public llvm::PassInfoMixin<UnitLoopSwitchesPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

} // namespace kiln

#endif // KILN_LIB_CPU_UNITLOOPSWITCHES_H
