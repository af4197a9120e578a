//===- LoopInterchange.h - Per-unit `for` loops run as rounds ---*- C++ -*-===//
//
// A per-unit `for` whose lower bound differs between units while its upper
// bound and step are uniform runs interchanged: rounds of iterations at cube
// level, one unit loop per round (docs/Lowering.md §4, §13 fixes 4 and 5).
// The decision is here; the emission is ControlEmitter::lowerInterchangedFor.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_LOOPINTERCHANGE_H
#define KILN_LIB_CPU_LOOPINTERCHANGE_H

#include "UnitRange.h"

#include "kiln/IR/Kernel.h"

#include <optional>

namespace kiln {
class UniformityInfo;
}

namespace kiln::lowering {

/// Whether the per-unit `for` \p Op (not a split, in a block lowered at cube
/// level) may run interchanged: an integer `for` of at most 64 bits whose
/// lower bound is divergent and whose upper bound and step are uniform, in a
/// kernel without `return` (\p KernelReturns false), with no break/continue
/// leaving its body.
bool isInterchangeable(const Operation &Op, const UniformityInfo &Uniformity,
                       bool KernelReturns);

/// For an interchangeable `for` \p Op of the kernel of \p Forms: the literal c
/// when its lower bound is `unit + c` for every unit, exactly in the loop's
/// type (unit_pos, or unit_pos.x, through casts and add/sub of literals), in a
/// one-dimensional cube. Then the units of a round that are in range are a
/// prefix [0, n) of the cube, and the round runs its unit loop over that
/// prefix only, with no per-unit range test and no min/max of the lower
/// bounds (docs/Lowering.md §4, "Unit-stride lower bounds").
std::optional<int64_t> unitStrideLowerBound(const Operation &Op,
                                            const UnitIndexForms &Forms);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_LOOPINTERCHANGE_H
