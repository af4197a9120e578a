//===- JamUnitLoops.h - Several units per iteration, interleaved -*- C++ -*-===//
//
// A vectorised unit loop whose body is one long floating-point dependence
// chain (matmul_tiled's 16 fused multiply-adds into one accumulator per row
// of units) runs at the chain's latency, not at the FMA units' throughput:
// the out-of-order core holds the chains of only a few iterations, and each
// waits on its own previous FMA. Running R consecutive units (iterations)
// as one iteration, with their instructions interleaved one by one, puts R
// independent chains side by side in program order, so the scheduler and
// the core always have R FMAs ready. Every unit still computes its chain in
// its own order: the results are bit for bit the same.
//
// The interleaving reorders memory accesses of different units, which the
// unit loop's `llvm.loop.parallel_accesses` allows for the accesses in its
// access group; the others (a unit's own slots, whose accesses optimisation
// merged and stripped of the group) are checked: distinct scopes, or
// address recurrences of the loop whose accesses for R consecutive units do
// not overlap. docs/Lowering.md §11, "Jammed unit loops".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_JAMUNITLOOPS_H
#define KILN_LIB_CPU_JAMUNITLOOPS_H

#include "llvm/IR/PassManager.h"

namespace kiln {

/// The most units one iteration of a jammed unit loop runs.
inline constexpr unsigned MaxJamFactor = 8;

/// Jams each innermost unit loop that is one block, runs a constant number
/// of iterations, holds a floating-point chain of at least 8 dependent
/// operations (FMAs that the target runs as instructions, not libm calls)
/// and passes the memory check above, by the largest factor of
/// 8, 4 or 2 that divides the iterations (at least twice over) and whose
/// jammed body fits the vector registers and 1024 instructions. Where no
/// factor fits but the loop's invariant loads would spill, they only move
/// into the body. Meant to run after vectorisation and unrolling.
class JamUnitLoopsPass : public llvm::PassInfoMixin<JamUnitLoopsPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

} // namespace kiln

#endif // KILN_LIB_CPU_JAMUNITLOOPS_H
