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

class StepDumps;

struct CodeGenOptions {
  /// 0..3, as -O0..-O3; anything above 3 is an error.
  unsigned OptLevel = 3;
  /// The target triple ("aarch64-linux-gnu"); empty means the host's. Kiln
  /// generates code for x86-64 and AArch64 (docs/Portability.md). For
  /// another architecture than the host's, an empty CPU means its generic
  /// CPU and the host's features are not used.
  std::string Triple;
  /// The CPU to compile for; empty means the host CPU.
  std::string CPU;
  /// `-mattr`-style features ("+avx2,-avx512f"); empty means the host's
  /// features when CPU is empty too, and the CPU's own defaults otherwise.
  /// When CPU is empty and Features is not, the host CPU is used with these
  /// features applied on top of the host's.
  std::string Features;
};

/// Checks \p Opts without compiling anything: OptLevel 0..3, a triple of an
/// architecture Kiln generates code for, a CPU LLVM knows for that triple,
/// features written `+NAME` or `-NAME` with names LLVM knows for it, and, on
/// x86-64, a target that is still x86-64 (a CPU such as
/// i386 or pentium4, or `-64bit`, `-sse2`, `-64bit-mode`, is refused: LLVM
/// would abort on them). AVX-512 asked for without a word on evex512 comes
/// with 512-bit vectors (`+evex512` is added, as clang does); `-evex512`
/// with AVX-512 needs `+avx512vl`; on AArch64, a target with NEON
/// (`-neon` is refused). createTargetMachine checks the same. The
/// errors carry std::errc::invalid_argument.
llvm::Error checkTargetOptions(const CodeGenOptions &Opts);

/// Whether this build generates code for \p Triple's architecture: the
/// host's always, the other one where the build's KILN_TARGETS has it
/// (docs/Portability.md). checkTargetOptions says why not.
bool generatesCodeFor(llvm::StringRef Triple);

/// checkTargetOptions, then whether code compiled with \p Opts can run on
/// this machine: another architecture's triple is an error, and so is an
/// instruction-set feature the options turn on (directly,
/// by implication or through CPU) that the host lacks is an error naming it
/// ("the host lacks +avx512f: code compiled for it could not run here").
/// What runs here (a Device) checks this before compiling anything; a
/// cross-compilation (`kiln-compile --emit=asm --mcpu=...`) does not.
llvm::Error checkRunsOnHost(const CodeGenOptions &Opts);

/// A TargetMachine for the triple (by default the host's) configured by
/// \p Opts (initialises that LLVM target on first use), after the checks
/// of checkTargetOptions. One per thread or task. This is the target stage
/// of the pipeline (Pipeline.h); \p Dumps, when given, is told the target
/// chosen.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CodeGenOptions &Opts = {},
                    const StepDumps *Dumps = nullptr);

/// Sets \p M's triple and data layout from \p TM, and the attributes the
/// target gives every function (AArch64 with SVE: its vector length);
/// optimizeModule, emitObject and emitAssembly call it themselves.
void prepareModule(llvm::Module &M, llvm::TargetMachine &TM);

/// Runs the new pass manager's default<O\p OptLevel> pipeline on \p M with
/// \p TM's target information, a TargetLibraryInfo that knows the target's
/// vector math library (glibc's libmvec on x86-64 with AVX2), and loop plus SLP vectorisation on at
/// O2 and above. Fails if \p M does not verify (before or after) or
/// \p OptLevel > 3. The steps, Kiln's passes among LLVM's included, are
/// those of the optimize stage of cpuPipeline() (Pipeline.h), in its order;
/// \p Dumps, when given, is told the IR after each.
llvm::Error optimizeModule(llvm::Module &M, llvm::TargetMachine &TM,
                           unsigned OptLevel,
                           const StepDumps *Dumps = nullptr);

/// optimizeModule, emitObject and emitAssembly turn the error diagnostics
/// LLVM reports through \p M's context into their Error (LLVMContext's
/// default handler would print them and exit the process), and drop its
/// warnings and remarks: the library never prints.

/// emitObject and emitAssembly leave loop strength reduction out of every
/// function, and post-RA list scheduling out of each function of more IR
/// instructions than this: that scheduler's cost grows with the square of a
/// region's memory operations, its benefit on out-of-order x86 cores is a
/// few percent either way (docs/Lowering.md §16, "Post-RA scheduling in
/// large functions").
inline constexpr unsigned PostRASchedulingLimit = 512;

/// Emits \p M as a relocatable object for \p TM, in memory: the codegen
/// stage of cpuPipeline() (Pipeline.h). \p Dumps, when given, is told what
/// the gate leaves out and the assembly (from a copy of \p M).
llvm::Expected<llvm::SmallVector<char, 0>>
emitObject(llvm::Module &M, llvm::TargetMachine &TM,
           const StepDumps *Dumps = nullptr);

/// Emits \p M as assembly text for \p TM, as emitObject.
llvm::Expected<std::string> emitAssembly(llvm::Module &M,
                                         llvm::TargetMachine &TM,
                                         const StepDumps *Dumps = nullptr);

} // namespace kiln

#endif // KILN_CPU_CODEGEN_H
