//===- AtomicPrivatization.h - Buffers whose atomics can be private -*- C++ -*-===//
//
// Finds the buffer parameters whose atomics a launch may accumulate in a
// per-worker private copy, merged into the buffer once per worker at the end
// of the launch (docs/Lowering.md, "Privatised atomics"). A buffer qualifies
// when
//   - it is a buffer of scalars: i32, u32, i64, u64, or f32 with atomic_add;
//   - every use of it is a read-modify-write atomic of one kind (add and sub
//     count as one: both merge by addition; atomic_exchange never
//     qualifies), whose old value (the result) is used nowhere, or `len`;
//     no load, store, atomic_load/store/cas;
//   - the variant does not let buffers overlap (MayAlias): another
//     parameter's loads could otherwise observe the buffer mid-launch.
// Then nothing in the launch can observe the buffer between its atomics:
// only the final value, which the merge reproduces (exactly for integers:
// add/sub modulo 2^n, min/max/and/or/xor are associative and commutative;
// for f32 the sum is taken in another order). At most MaxPrivatized buffers
// per kernel (one bit each of LaunchArgs::Reserved).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_ATOMICPRIVATISATION_H
#define KILN_LIB_CPU_ATOMICPRIVATISATION_H

#include "kiln/CPU/CubeMetadata.h"
#include "kiln/IR/Kernel.h"

#include <vector>

namespace kiln::lowering {

inline constexpr unsigned MaxPrivatized = 32;

/// One entry per kernel parameter (K.Params order): how its atomics merge,
/// or PrivateAtomic::None.
std::vector<PrivateAtomic> findPrivatizableBuffers(const IRKernel &K,
                                                   const CpuVariant &Variant);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_ATOMICPRIVATISATION_H
