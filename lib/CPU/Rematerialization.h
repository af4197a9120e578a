//===- Rematerialization.h - Values recomputed instead of kept --*- C++ -*-===//
//
// Builtins, constants and short integer/bool chains over them, parameters
// and cube-level induction variables (index arithmetic, mostly) are cheaper
// to recompute than to keep per unit in scratch, and recomputed they stay
// visible to the vectorisers (docs/Lowering.md §5). Operations that do not
// vary between units (no unit_pos, absolute_pos or plane position among
// their inputs) cost nothing per unit where they are recomputed: LLVM
// hoists them out of the unit loop. Only the unit-varying operations of a
// chain, bool and/or/xor aside, count against MaxRematDepth; the whole
// chain against MaxUniformRematDepth, which bounds the code a
// recomputation adds.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_REMATERIALISATION_H
#define KILN_LIB_CPU_REMATERIALISATION_H

#include "SegmentLiveness.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace kiln::lowering {

/// The longest chain of unit-varying operations a value may take to
/// recompute.
constexpr unsigned MaxRematDepth = 4;
/// The longest chain of operations of any kind a value may take to
/// recompute.
constexpr unsigned MaxUniformRematDepth = 24;

/// Whether operations of \p Class compute their result from their operands
/// alone (no memory, no math library call, no per-unit or plane state).
bool isPureArithmetic(OpClass Class);
/// Whether builtin \p Kind differs between the units of a cube.
bool isUnitVaryingBuiltin(OpKind Kind);

/// What recomputing a value costs.
struct RematCost {
  unsigned Depth = 0;        ///< longest chain of any operations
  unsigned VaryingDepth = 0; ///< longest chain of unit-varying operations
  bool Uniform = true;       ///< the same for every unit of a cube
  bool fits() const {
    return VaryingDepth <= MaxRematDepth && Depth <= MaxUniformRematDepth;
  }
};
/// What recomputing \p Op's result costs (depth 0 for builtins and
/// constants), given the plans of the values defined before it; or
/// std::nullopt when it cannot be recomputed (floats, lines, memory, libm
/// calls, per-unit values that are kept).
std::optional<RematCost> rematCost(const Operation &Op, const IRKernel &K,
                                   llvm::ArrayRef<ValuePlan> Plans);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_REMATERIALISATION_H
