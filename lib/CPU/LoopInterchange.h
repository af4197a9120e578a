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

#include "kiln/IR/Kernel.h"

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

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_LOOPINTERCHANGE_H
