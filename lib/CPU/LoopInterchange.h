//===- LoopInterchange.h - Per-unit `for` loops run as rounds ---*- C++ -*-===//
//
// A per-unit `for` whose lower bound differs between units while its upper
// bound and step are uniform runs interchanged: rounds of iterations at cube
// level, one unit loop per round (docs/Lowering.md §4, §13 fixes 4 and 5).
// So does one whose upper bound alone differs, `unit + c` or plane_pos, when
// every unit runs its body alike in a round ("Per-unit upper bounds").
// The decision is here; the emission is ControlEmitter::lowerInterchangedFor.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_LOOPINTERCHANGE_H
#define KILN_LIB_CPU_LOOPINTERCHANGE_H

#include "AccessPattern.h"
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

/// Whether the per-unit `for` \p Op (not a split, in a block lowered at cube
/// level) may run as rounds by its upper bound: an integer `for` of at most
/// 64 bits whose lower bound and step are uniform and whose upper bound is
/// divergent (scan_plane's `for %p = 0 to %plane`), in a kernel without
/// `return`, with no break/continue leaving its body, and whose body every
/// unit runs alike in a round: only pure operations, loads at an index
/// computed from the loop variable and uniform values alone, var reads and
/// writes, and `if`s holding the same. Round k then reads the same elements
/// for every unit in range, so the round's unit loop vectorises across units
/// with those elements broadcast, where the per-unit loop (a trip count
/// that differs between units) runs unit by unit (docs/Lowering.md §4,
/// "Per-unit upper bounds"). The body rule is a choice of speed only: with
/// no barrier in the loop any interleaving of the units is a legal
/// schedule.
bool isUpperBoundInterchangeable(const Operation &Op,
                                 const UniformityInfo &Uniformity,
                                 bool KernelReturns);

/// The upper bound of a `for` as floor(unit / Divisor) + Offset for every
/// unit of a one-dimensional cube: `unit + c` (Divisor 1) or plane_pos
/// (Divisor the plane size, Offset 0). It never decreases from one unit to
/// the next, so the units with k below it are a suffix of the cube.
struct UpperBoundSuffix {
  uint32_t Divisor = 1;
  int64_t Offset = 0;
};

/// For a `for` \p Op that isUpperBoundInterchangeable, in a kernel of
/// \p Forms run with planes of \p PlaneDim units: its upper bound as an
/// UpperBoundSuffix when it has that form and the loop's type has at most 32
/// bits; none otherwise (the loop then stays per unit).
std::optional<UpperBoundSuffix> upperBoundSuffix(const Operation &Op,
                                                 const UnitIndexForms &Forms,
                                                 uint32_t PlaneDim);

/// For an interchangeable `for` \p Op of the kernel of \p Forms: the literal c
/// when its lower bound is `unit + c` for every unit, exactly in the loop's
/// type (unit_pos, or unit_pos.x, through casts and add/sub of literals), in a
/// one-dimensional cube. Then the units of a round that are in range are a
/// prefix [0, n) of the cube, and the round runs its unit loop over that
/// prefix only, with no per-unit range test and no min/max of the lower
/// bounds (docs/Lowering.md §4, "Unit-stride lower bounds").
std::optional<int64_t> unitStrideLowerBound(const Operation &Op,
                                            const UnitIndexForms &Forms);

/// Whether the per-unit `for` \p Op (not a split, in a block lowered at
/// cube level, in a cube whose x dimension has \p UnitsX units) runs across
/// the units: at cube level, its body one unit loop per iteration, so that
/// the units of the cube are the vector's lanes inside the loop (outer-loop
/// vectorisation; docs/Lowering.md §4, "Loops across units"). It must be an
/// integer `for` of at most 64 bits with uniform bounds and step, in a kernel
/// without `return`, with no break/continue leaving its body and no atomic
/// in it, more than ShortLoopTrips iterations or bounds that are not all
/// literals, and every loop of its body (at its top level, not under an
/// `if`) running across the units as well. Then the choice is by cost, from
/// \p Patterns: it runs across the units unless it can vectorise along its
/// own iterations and not across the units, that is unless nothing carries
/// from one iteration to the next (no var set in the body that lives
/// outside it, no store at an index the same in every iteration), every
/// index in the body moves by 0 or 1 element per iteration, and some index
/// is strided or gathered from one unit to the next.
bool runsAcrossUnits(const Operation &Op, const UniformityInfo &Uniformity,
                     const AccessPatterns &Patterns, bool KernelReturns,
                     uint32_t UnitsX);

/// The trip count of the `for` \p Op when its bounds and step are all
/// literals (none when one is not); a step that is not positive runs no
/// iteration. Saturated at UINT64_MAX.
std::optional<uint64_t> literalTrips(const Operation &Op);

/// A loop with literal bounds and at most this many iterations stays per
/// unit: LLVM unrolls it fully inside the unit loop, which then vectorises
/// across the units with the iterations as straight-line code.
constexpr uint64_t ShortLoopTrips = 64;

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_LOOPINTERCHANGE_H
