//===- ExpandBlockCopies.h - Fixed-size copies and fills as loops -*- C++ -*-===//
//
// LoopIdiomRecognize turns a unit loop that copies a block into the scratch
// area (a per-unit slot into shared memory, 1 KiB twice in
// softmax_rows) or fills one into `llvm.memcpy`/`llvm.memset`, which code
// generation makes a call of the C library for every cube. The call is
// slower than a vector loop, and the stores a library copy makes may not
// forward to the vector loads that read the block just after. Forbidding
// the idiom (`no-builtin-memcpy`) instead leaves the loop to the vectoriser
// and the unroller, which make it 16 or 32 straight-line load/store pairs
// inside the block that follows: that block's machine scheduling then costs
// a fifth more of softmax_rows' compile with AVX2 code.
//
// So the idiom stays allowed and, after optimisation, each copy or fill of a
// constant size that code generation would not expand inline itself becomes
// a loop of full-width vector moves (not unrolled: no unroller runs after
// it) and a tail of fewer bytes than a vector. docs/Lowering.md §2; the
// figures in §16, "Row versioning, library copies and 1-D loops".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_EXPANDBLOCKCOPIES_H
#define KILN_LIB_CPU_EXPANDBLOCKCOPIES_H

#include "llvm/IR/PassManager.h"

namespace kiln {

/// Rewrites every non-volatile `llvm.memcpy` and `llvm.memset` in a function
/// whose length is a constant of more than ExpandedCopyMinVectors vectors
/// of the target's widest vector register. `llvm.memmove`, copies of a
/// length known only at run time and volatile ones stay as they are.
class ExpandBlockCopiesPass
    : public llvm::PassInfoMixin<ExpandBlockCopiesPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

/// Shorter copies and fills are left to code generation, which expands
/// those of up to 8 (x86: MaxStoresPerMemcpy) widest stores inline.
inline constexpr uint64_t ExpandedCopyMinVectors = 8;

} // namespace kiln

#endif // KILN_LIB_CPU_EXPANDBLOCKCOPIES_H
