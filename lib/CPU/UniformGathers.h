//===- UniformGathers.h - Masked gathers from one address -------*- C++ -*-===//
//
// A load at an index that is the same for every unit, under a condition
// that differs between units (`if (gid < n) { ... x[j] ... }`, a guarded
// loop across the units, docs/Lowering.md §4), is vectorised by LLVM as a
// masked gather whose addresses are all the same: it may not load when no
// lane is active, and it knows no cheaper form. A gather of 16 lanes is 16
// loads (Zen 4 and 5: one a cycle at best; without AVX-512 it is emulated).
// This pass, at the end of the optimisation pipeline, rewrites each
// `llvm.masked.gather` whose pointer vector is a splat as one scalar load,
// made only when some lane of the mask is set, broadcast to the lanes the
// mask selects (the others keep the pass-through value, as the gather's
// do). Likewise each `llvm.masked.scatter` to a splat address becomes one
// scalar store of the last active lane's value (the lanes store in order),
// made only when some lane is set. docs/Lowering.md §11, "Gathers from one
// address".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_UNIFORMGATHERS_H
#define KILN_LIB_CPU_UNIFORMGATHERS_H

#include "llvm/IR/PassManager.h"

namespace kiln {

class UniformGathersPass : public llvm::PassInfoMixin<UniformGathersPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

} // namespace kiln

#endif // KILN_LIB_CPU_UNIFORMGATHERS_H
