//===- ExpandUniformLoads.h - workgroup_uniform_load as barriers -*- C++ -*-===//
//
// `%v = workgroup_uniform_load %s[%i] : T` (docs/LangRef.md §12.2) is lowered
// as the three operations it stands for:
//
//   sync_cube
//   %v = load %s[%i] : T
//   sync_cube
//
// The first barrier makes every earlier write of the cube visible to the
// load; the second keeps every unit's later writes from reaching the
// element before the last unit has read it. The verifier has checked that
// the operation is in uniform control flow and its index uniform, so the
// barriers are legal where it stood and every unit loads the same element.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_EXPANDUNIFORMLOADS_H
#define KILN_LIB_CPU_EXPANDUNIFORMLOADS_H

#include "kiln/IR/Kernel.h"

#include <optional>

namespace kiln::lowering {

/// A copy of \p K with every workgroup_uniform_load expanded as above, or
/// none when \p K has none (then \p K is lowered as it is).
std::optional<IRKernel> expandUniformLoads(const IRKernel &K);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_EXPANDUNIFORMLOADS_H
