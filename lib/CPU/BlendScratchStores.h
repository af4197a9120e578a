//===- BlendScratchStores.h - Masked stores to scratch as blends -*- C++ -*-===//
//
// A vectorised unit loop stores under a divergent condition with
// `llvm.masked.store`. Without AVX-512 that is `vmaskmov`, which LLVM's own
// scheduling models price at about 47 micro-ops on AMD Zen 1 to 4 (against
// 2 to 3 on Intel cores): microcoded. Into the cube's scratch area (per-unit
// slots, shared memory) a masked store can instead be a plain load, a blend
// and a plain store: only the thread running the cube touches that area, so
// rewriting the lanes the mask leaves out with the values they hold changes
// nothing any code can see. docs/Lowering.md §13, "Masked stores".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_BLENDSCRATCHSTORES_H
#define KILN_LIB_CPU_BLENDSCRATCHSTORES_H

#include "llvm/IR/PassManager.h"

namespace llvm {
class TargetMachine;
}

namespace kiln {

/// The function attribute that gives a cube function's scratch area size in
/// bytes (decimal); the scratch pointer is the function's argument 3.
inline constexpr const char *ScratchBytesAttr = "kiln-scratch-bytes";

/// Whether masked vector stores of \p F's subtarget are expensive: no
/// AVX-512 (whose masked stores are plain `vmovups {k}`) and the scheduling
/// model gives a 256-bit `vmaskmovps` store more than 4 micro-ops.
bool maskedStoresAreMicrocoded(const llvm::TargetMachine &TM,
                               const llvm::Function &F);

/// Rewrites each `llvm.masked.store` whose address is based on the scratch
/// argument as: if the whole vector lies in the scratch area (checked at run
/// time, one compare), load, select by the mask, store; else the masked
/// store. Only where maskedStoresAreMicrocoded says so.
class BlendScratchStoresPass
    : public llvm::PassInfoMixin<BlendScratchStoresPass> {
public:
  explicit BlendScratchStoresPass(const llvm::TargetMachine &TM) : TM(TM) {}
  llvm::PreservedAnalyses run(llvm::Function &F,
                              llvm::FunctionAnalysisManager &AM);

private:
  const llvm::TargetMachine &TM;
};

} // namespace kiln

#endif // KILN_LIB_CPU_BLENDSCRATCHSTORES_H
