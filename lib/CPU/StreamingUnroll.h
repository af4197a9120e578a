//===- StreamingUnroll.h - 8 vectors an iteration of a stream -*- C++ -*-===//
//
// After vectorisation LLVM unrolls a short unit loop fully: saxpy's 256
// units become 16 vectors of 512 bits (32 of AVX2) in a row, with no loop
// left. For a loop that only streams buffers (loads and stores of global
// memory and a little arithmetic) that is slower than a loop of 8 vectors
// an iteration, with both 512-bit and AVX2 code, and GCC's own saxpy loop
// is likewise slower unrolled 16 times than 8 (docs/Lowering.md §16,
// "Streaming unit loops, and saxpy's reference"). A loop that uses scratch
// (shared memory, registers kept per unit) keeps the full unrolling: that
// is what drops reduce_sum's all-false masked iterations.
//
// The pass runs before the vectoriser and only changes the loop's
// `llvm.loop.vectorize.followup_vectorized` attributes, which the vectorised
// loop takes: they gain `llvm.loop.unroll.count` 8. With 8 or fewer vector
// iterations that is still a full unrolling. docs/Lowering.md §11,
// "Streaming unit loops".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_STREAMINGUNROLL_H
#define KILN_LIB_CPU_STREAMINGUNROLL_H

#include "llvm/IR/PassManager.h"

namespace kiln {

/// The most vector iterations one iteration of a vectorised streaming unit
/// loop runs.
inline constexpr unsigned StreamingUnrollCount = 8;

/// Caps the unrolling of every innermost unit loop (one whose ID carries a
/// followup for its vectorised version) that streams: at most 32
/// instructions, at least one store, no calls other than intrinsics that do
/// not touch memory, no atomics or fences, and every load and store through
/// a pointer derived from a buffer's data pointer (itself loaded from the
/// launch's arguments), never from the scratch argument or an alloca.
class StreamingUnrollPass : public llvm::PassInfoMixin<StreamingUnrollPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);
};

} // namespace kiln

#endif // KILN_LIB_CPU_STREAMINGUNROLL_H
