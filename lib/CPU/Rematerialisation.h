//===- Rematerialisation.h - Values recomputed instead of kept --*- C++ -*-===//
//
// Builtins, constants and short integer/bool chains over them, parameters
// and cube-level induction variables (index arithmetic, mostly) are cheaper
// to recompute than to keep per unit in scratch, and recomputed they stay
// visible to the vectorisers (docs/Lowering.md §5).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_REMATERIALISATION_H
#define KILN_LIB_CPU_REMATERIALISATION_H

#include "SegmentLiveness.h"

#include "llvm/ADT/ArrayRef.h"

namespace kiln::lowering {

/// The longest chain of operations a value may take to recompute.
constexpr unsigned MaxRematDepth = 4;
/// rematDepth of an operation whose result must be kept, not recomputed.
constexpr unsigned NotRematerialisable = ~0u;

/// How many operations recomputing \p Op's result takes (0 for builtins and
/// constants), given the plans of the values defined before it; or
/// NotRematerialisable (floats, lines, memory, libm calls, per-unit values
/// that are kept).
unsigned rematDepth(const Operation &Op, const Kernel &K,
                    llvm::ArrayRef<ValuePlan> Plans);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_REMATERIALISATION_H
