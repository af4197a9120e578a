//===- UnitLoopWidth.h - The vector width of simple unit loops -*- C++ -*-===//
//
// LLVM's loop vectoriser gives a loop whose vector factor is 16 lanes or
// more (f32 and i32 with 512-bit code) a second, narrower vector loop for
// the remainder of a run-time trip count: the epilogue. Its code was 12 %
// of softmax_rows' 512-bit compile, and it runs only for the units past
// the last full main-loop iteration of a round (at most 16 x the
// interleave count - 1). LLVM 19 has no switch for it but a process-wide
// option; a loop whose width is given by `llvm.loop.vectorize.width` gets
// none.
//
// So the pass gives that width to the unit loops where it is the width the
// vectoriser's cost model picks in any case: parallel loops of at most 64
// instructions, with a run-time trip count, whose every load and store is
// of a scalar integer or float, unconditional, and consecutive in the
// induction variable or invariant, whose arithmetic is no wider than the
// data in its results and operands (index arithmetic aside), with no
// division by a value, and whose calls are cheap lane-wise intrinsics
// (fabs, fma, min/max, sqrt, rounding; not the math LLVM maps to libmvec).
// Their width is the vector register's over the widest type accessed
// (LLVM's own upper bound for the factor, which such a loop reaches), and
// it is only given when it is 16 lanes or more: narrower loops get no
// epilogue anyway. Everything else the vectoriser decides as before (the
// unroll and interleave counts, the runtime checks). docs/Lowering.md §11,
// "Unit loops without a vector epilogue".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_UNITLOOPWIDTH_H
#define KILN_LIB_CPU_UNITLOOPWIDTH_H

#include "llvm/IR/PassManager.h"

namespace kiln {

/// The smallest vector factor for which LLVM 19 vectorises an epilogue
/// (its `EpilogueVectorizationMinVF`).
inline constexpr unsigned EpilogueMinLanes = 16;

class UnitLoopWidthPass : public llvm::PassInfoMixin<UnitLoopWidthPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

} // namespace kiln

#endif // KILN_LIB_CPU_UNITLOOPWIDTH_H
