//===- ForwardVars.h - Reads of variables as the values they hold -*- C++ -*-===//
//
// A variable kept per unit across a barrier lives in scratch, and a test of
// it after the barrier is a load per unit that nothing can see through. GPU
// kernels often set a flag or an index under a condition and read it after
// the barrier:
//
//   set %done, false:bool
//   if %inRange { set %done, true:bool  ... }
//   sync_cube
//   %d = get %done : bool
//   if %d { ... }
//
// Where the value a `get` reads is known from the operations before it in
// its block (a `set` of a value or literal, or an `if` that sets the
// variable on its branches: `select %cond, THEN, ELSE`, or `%cond` itself
// for a flag set to true under it), and that value is a short integer or
// bool chain that later steps recompute rather than keep (Rematerialization.h),
// the `get` becomes that value. The test after the barrier is then the
// condition itself: a unit range the lowering narrows the unit loop to
// (docs/Lowering.md §4, §5) instead of a loop over every unit's flag.
//
// Only reads across a barrier or a plane operation are rewritten: within one
// unit loop the variable is a stack slot that LLVM's SROA already turns into
// registers. What is not understood (a loop or a `switch` that sets the
// variable, a variable used by anything but `get` and `set`) is left as it
// is.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_FORWARDVARS_H
#define KILN_LIB_CPU_FORWARDVARS_H

#include "kiln/IR/Kernel.h"

#include <optional>

namespace kiln::lowering {

/// A copy of \p K with the reads described above replaced by the values
/// they read, or none when there is no such read (then \p K is lowered as
/// it is).
std::optional<IRKernel> forwardVars(const IRKernel &K);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_FORWARDVARS_H
