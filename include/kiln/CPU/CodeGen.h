//===- CodeGen.h - LLVM IR to host object code ------------------*- C++ -*-===//
//
// The code generation half of the CPU backend: a TargetMachine for the host
// (or for an explicit CPU and feature list), the new pass manager pipeline and
// the emission of object code or assembly into memory.
//
// Thread safety: every function may be called from many threads at once, as
// long as each thread uses its own LLVMContext, Module and TargetMachine. A
// TargetMachine must never be shared by two concurrent compilations
// (docs/Design.md §10.4): create one per task with createTargetMachine().
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CPU_CODEGEN_H
#define KILN_CPU_CODEGEN_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln {

struct CodeGenOptions {
  /// 0..3, as -O0..-O3; anything above 3 is an error.
  unsigned OptLevel = 3;
  /// The CPU to compile for; empty means the host CPU.
  std::string CPU;
  /// `-mattr`-style features ("+avx2,-avx512f"); empty means the host's
  /// features when CPU is empty too, and the CPU's own defaults otherwise.
  /// When CPU is empty and Features is not, the host CPU is used with these
  /// features applied on top of the host's.
  std::string Features;
};

/// A TargetMachine for the host triple configured by \p Opts (initialises the
/// native target on first use). One per thread or task.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CodeGenOptions &Opts = {});

/// Sets \p M's triple and data layout from \p TM (optimizeModule, emitObject
/// and emitAssembly call it themselves).
void prepareModule(llvm::Module &M, llvm::TargetMachine &TM);

/// Runs the new pass manager's default<O\p OptLevel> pipeline on \p M with
/// \p TM's target information, a TargetLibraryInfo that knows glibc's
/// libmvec when the target has AVX2, and loop plus SLP vectorisation on at
/// O2 and above. Fails if \p M does not verify (before or after) or
/// \p OptLevel > 3.
llvm::Error optimizeModule(llvm::Module &M, llvm::TargetMachine &TM,
                           unsigned OptLevel);

/// Emits \p M as a relocatable object for \p TM, in memory.
llvm::Expected<llvm::SmallVector<char, 0>> emitObject(llvm::Module &M,
                                                      llvm::TargetMachine &TM);

/// Emits \p M as assembly text for \p TM.
llvm::Expected<std::string> emitAssembly(llvm::Module &M,
                                         llvm::TargetMachine &TM);

} // namespace kiln

#endif // KILN_CPU_CODEGEN_H
