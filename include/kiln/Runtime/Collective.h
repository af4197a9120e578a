//===- Collective.h - Element-wise reductions across buffers ----*- C++ -*-===//
//
// The arithmetic of an all-reduce: the buffers of a set of devices combined
// element by element, the result written back into every one of them. The
// public API (Stream-ordered, kiln/kiln.h) and kiln-run's plans order the
// work around it; this is the part both share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_COLLECTIVE_H
#define KILN_RUNTIME_COLLECTIVE_H

#include "kiln/IR/Type.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace kiln {

/// How an all-reduce combines its members' elements.
enum class AllReduceOp : uint8_t { Sum, Max, Min };

/// "sum", "max", "min".
const char *reduceOpName(AllReduceOp Op);

/// Whether an all-reduce takes elements of \p Ty: a signed or unsigned
/// integer, f16, bf16, f32 or f64, or a line of them (lane by lane).
bool isReducible(Type Ty);

/// Combines \p Count elements of \p Ty of each of \p Buffers (non-
/// overlapping, at least one; \p Ty reducible) element by element and
/// writes the result into every buffer. Sums go through the buffers in
/// order, ((b0 + b1) + b2) + ..., each addition rounded to \p Ty (integers
/// wrap); max and min of floats give NaN when any member holds one, and
/// order -0 below +0.
void allReduceInPlace(llvm::ArrayRef<void *> Buffers, uint64_t Count, Type Ty,
                      AllReduceOp Op);

} // namespace kiln

#endif // KILN_RUNTIME_COLLECTIVE_H
