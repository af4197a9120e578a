//===- ScalarFallbackLoops.h - Guarded unit loops left scalar ---*- C++ -*-===//
//
// LoopVersioning.h gives a unit loop a twin without its checks. When every
// check the twin drops is a bounds check and the entry test checks the last
// unit that runs, the original, guarded loop runs only for a cube whose
// last unit's index passes a buffer's end (the cubes at a buffer's end, and
// launches that fault). Such a loop is left scalar, as LLVM's own fallback
// loops of runtime checks are: vectorising its masked accesses costs a
// fifth of softmax_rows' compile time (docs/Lowering.md §7; the figures in
// §16, "Scalar fallback loops").
//
// Scalar, though, a loop must compute what the vectorised twin computes,
// bit for bit: a libm call, or a math intrinsic that the vectoriser maps to
// libmvec, rounds differently in its vector form, and the cubes at the edge
// would not agree with the others. Whether `exp` is such a call depends on
// the target (InlineExp.h inlines it for AVX-512), so the lowering only
// marks the candidates, and optimizeModule settles them after the target's
// own rewrites.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_SCALARFALLBACKLOOPS_H
#define KILN_LIB_CPU_SCALARFALLBACKLOOPS_H

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Module.h"

namespace kiln {

/// Marks \p L (a guarded unit loop) as one to be left scalar: a loop
/// attribute `kiln.loop.scalar_fallback` in a fresh loop ID.
void markScalarFallback(llvm::Loop &L);

/// Whether \p L calls anything whose vector form may round differently
/// from its scalar one: anything but the intrinsics with an exactly defined
/// result (IEEE operations, integer and bit operations) and markers.
bool callsInexactMath(const llvm::Loop &L);

/// For every marked loop of \p M: `llvm.loop.vectorize.enable` false in
/// place of the mark, unless it calls inexact math (the mark is then only
/// removed). Returns how many loops were left scalar.
unsigned settleScalarFallbackLoops(llvm::Module &M);

} // namespace kiln

#endif // KILN_LIB_CPU_SCALARFALLBACKLOOPS_H
