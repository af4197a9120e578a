//===- Lowering.h - Kiln IR to LLVM IR ---------------------------*- C++ -*-===//

#ifndef KILN_CPU_LOWERING_H
#define KILN_CPU_LOWERING_H

#include "kiln/CPU/CubeMetadata.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Kernel.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <memory>

namespace kiln {

class StepDumps;

/// The result of lowering one kernel: an LLVM module defining the cube
/// function (CubeABI.h) and the metadata a launch needs.
struct LoweredModule {
  std::unique_ptr<llvm::Module> Module;
  CubeMetadata Metadata;
};

/// Lowers a *verified* kernel \p K for \p Variant into a fresh module in
/// \p Ctx (one context per thread: this function is thread-safe for distinct
/// contexts). The module has no target triple/data layout set; codegen sets
/// them. Returns an error only for what the verifier cannot know (for
/// example a scratch area too large to address). The steps are those of
/// the lower stage of cpuPipeline() (Pipeline.h), in its order; \p Dumps,
/// when given, is told the IR after each.
llvm::Expected<LoweredModule> lowerKernel(const IRKernel &K,
                                          const CpuVariant &Variant,
                                          const DeviceLimits &Limits,
                                          llvm::LLVMContext &Ctx,
                                          const StepDumps *Dumps = nullptr);

} // namespace kiln

#endif // KILN_CPU_LOWERING_H
