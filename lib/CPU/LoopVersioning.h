//===- LoopVersioning.h - Unit loops without checks when safe ---*- C++ -*-===//
//
// The last transform of the lowering, on the emitted LLVM function
// (docs/Lowering.md §7, "Unit loops without checks").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_LOOPVERSIONING_H
#define KILN_LIB_CPU_LOOPVERSIONING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instruction.h"

namespace kiln::lowering {

/// A bounds check of a buffer, shared or local access with an index of at
/// most 32 bits: in bounds iff Index32, read as unsigned, is below Count
/// (below min(Count, 2^31) for a signed index).
struct BoundsGuard {
  llvm::Instruction *Check; ///< the i1 the access's branch tests
  llvm::Value *Index32;     ///< the i32 index compared
  llvm::Value *Count;       ///< i64 element count, defined in the entry
  bool Signed;
};

/// Gives each innermost unit loop of \p F (headers \p InnerUnitHeaders, in
/// emission order; unit loops carry llvm.loop.parallel_accesses) with
/// provable conditions (the bounds checks \p Guards, and `I < Bound` with I
/// affine in the unit and Bound fixed for the launch) a twin without them,
/// entered when a check before the loop shows them true for every unit; the
/// original loop runs otherwise.
void versionUnitLoops(llvm::Function &F, llvm::ArrayRef<BoundsGuard> Guards,
                      llvm::ArrayRef<llvm::BasicBlock *> InnerUnitHeaders);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_LOOPVERSIONING_H
