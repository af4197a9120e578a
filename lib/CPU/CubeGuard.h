//===- CubeGuard.h - A condition without which a cube does nothing -*- C++ -*-===//
//
// GPU hosts often launch more cubes than hold work: a grid over a whole
// image of which one strip is computed, a grid rounded up to the cube
// size. Each such cube still runs its segments, loops and barriers, only
// for its guarded unit loops to find nothing to do. A cube guard is a bool
// value computed once per unit at the top of the kernel (outside every
// construct) that holds for a unit whenever that unit does anything seen
// outside its cube: every store, atomic, copy or print to a buffer lies
// under `if`s one of whose conditions has the guard as a conjunct (an `and`
// operand, at any depth), or under an `if` on a bool variable that the
// kernel sets to `true` only under such `if`s (a "computed" flag; any
// other value it is set to is `false`, and a variable read before it is
// set may read false: docs/LangRef.md, "Uninitialised memory").
//
// When the guard's unit range (UnitRange.h) is empty for a cube, no unit of
// it can have an effect, and the cube is skipped whole (docs/Lowering.md
// §4, "Cubes with nothing to do"). Kernels with clusters (cubes that wait
// for each other) or with `loop` (which need not end) have no guard.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_CUBEGUARD_H
#define KILN_LIB_CPU_CUBEGUARD_H

#include "kiln/IR/Kernel.h"

#include "llvm/ADT/SmallVector.h"

namespace kiln::lowering {

/// The kernel's cube guards, in the order they are defined: every value
/// defined at the top level that guards every effect as above. Empty when
/// there is none, or when the kernel has no effect at all.
llvm::SmallVector<ValueId, 4> findCubeGuards(const IRKernel &K);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_CUBEGUARD_H
