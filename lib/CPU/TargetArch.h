//===- TargetArch.h - What differs between instruction sets -----*- C++ -*-===//
//
// The one place where the CPU backend knows which instruction set it
// generates code for. Everything that is not the same on x86-64 and AArch64
// goes through a TargetArch: probing the host's features, checking and
// completing a CPU and feature request before LLVM sees it (what LLVM would
// abort on), the vector math library and the shared library that holds it,
// whether f32 `exp` is inlined, which operations are microcoded (the
// lowering's cost decisions), how its minNum instructions treat a
// signalling NaN, the code generation passes left out, the
// attributes every kernel function carries (SVE's vector length), and the
// name of the architecture in the store's namespaces. Vector widths per
// type come from LLVM's TargetTransformInfo of the TargetMachine, which the
// feature string (and on AArch64 the SVE length) decides. The lowering and the
// passes ask the TargetArch of their TargetMachine; none of them tests an
// architecture itself.
//
// Implementations: TargetX86.cpp (x86-64) and TargetAArch64.cpp (AArch64);
// TargetArch.cpp finds them by triple.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_TARGETARCH_H
#define KILN_LIB_CPU_TARGETARCH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

#include <string>
#include <vector>

namespace llvm {
class Function;
class MCSubtargetInfo;
class Module;
class Target;
class TargetLibraryInfoImpl;
class TargetMachine;
} // namespace llvm

namespace kiln {

/// A CPU and feature string on its way to LLVM (CodeGen.cpp's
/// resolveTarget fills it from CodeGenOptions, then the TargetArch checks
/// and completes it).
struct TargetRequest {
  const llvm::Target *T = nullptr;
  std::string Triple;
  std::string CPU;
  std::string Features;
  /// The features the user named (CodeGenOptions::Features), as given.
  std::string AskedFeatures;
  /// Whether the user named the CPU.
  bool AskedCPU = false;
};

class TargetArch {
public:
  virtual ~TargetArch();

  /// The architecture as the store and the docs name it: "x86-64",
  /// "aarch64".
  virtual llvm::StringRef name() const = 0;
  virtual bool matches(const llvm::Triple &TT) const = 0;

  /// Registers LLVM's target, its MC layer, assembly printer and parser
  /// (cross-compilation needs the target of another architecture).
  virtual void initializeLLVMTarget() const = 0;

  /// The host's instruction-set features with LLVM's names, each with its
  /// sign ("+avx2", "-avx512f"), in any order; only called on a host of
  /// this architecture.
  virtual std::vector<std::string> probeHostFeatures() const = 0;
  /// What else code for this host depends on, beyond CPU and features
  /// ("sve-vector-bits=256"): part of the store's fingerprint; "" for
  /// nothing.
  virtual std::string probeHostDetails() const = 0;

  /// Checks \p R (whose CPU and feature names LLVM knows) and completes its
  /// feature string: an error (std::errc::invalid_argument) for what LLVM
  /// would abort on or silently mis-compile.
  virtual llvm::Error completeRequest(TargetRequest &R) const = 0;

  /// Adds the vector math library the target's code may call (glibc's
  /// libmvec on x86-64 with AVX2) to \p TLII.
  virtual void addVectorLibrary(llvm::TargetLibraryInfoImpl &TLII,
                                const llvm::TargetMachine &TM) const = 0;
  /// The shared library the JIT loads so that those calls resolve ("" for
  /// none).
  virtual llvm::StringRef vectorLibraryFile() const = 0;

  /// Whether f32 `exp` is computed inline rather than called (InlineExp.h).
  virtual bool inlinesExpF32(const llvm::TargetMachine &TM) const = 0;

  /// Whether a masked vector store costs so many micro-ops on \p F's
  /// subtarget that a blend into scratch memory is cheaper
  /// (BlendScratchStores.h).
  virtual bool maskedStoresAreMicrocoded(const llvm::TargetMachine &TM,
                                         const llvm::Function &F) const = 0;

  /// Whether the instructions LLVM selects for `llvm.minnum`/`llvm.maxnum`
  /// and the fmin/fmax reductions give a quiet NaN for a signalling NaN
  /// operand (IEEE 754-2008's minNum, AArch64's fminnm) where LLVM's and
  /// LangRef's minNum give the other operand (SignallingNaNMinMax.h).
  virtual bool minMaxQuietsSignallingNaN() const = 0;

  /// Code generation passes (by their legacy pass name) left out of every
  /// function (CodeGen.cpp's CodeGenerationGate).
  virtual bool leavesOutPass(llvm::StringRef PassName) const = 0;

  /// Attributes every defined function of \p M gets before optimisation
  /// (AArch64: the SVE vector length, so that fixed-length vectors use
  /// SVE registers).
  virtual void annotateModule(llvm::Module &M,
                              const llvm::TargetMachine &TM) const = 0;
};

/// The implementations (TargetX86.cpp, TargetAArch64.cpp); only those of
/// the instruction sets in KILN_TARGETS are built.
const TargetArch &x86TargetArch();
const TargetArch &aarch64TargetArch();

/// The TargetArch of \p TT, or null when Kiln does not generate code for
/// that architecture.
const TargetArch *targetArchFor(const llvm::Triple &TT);

/// The TargetArch of \p TM's triple (a TargetMachine Kiln made has one).
const TargetArch &targetArchOf(const llvm::TargetMachine &TM);

/// Registers \p Arch's LLVM target once per process (thread-safe).
void initializeTargetOf(const TargetArch &Arch);

/// "x86-64 (x86_64-*) and aarch64 (aarch64-*)": the architectures this
/// build generates code for (KILN_TARGETS), for error messages.
std::string supportedArchitectures();

/// The KILN_TARGETS name ("AArch64") of \p TT's architecture when Kiln
/// knows it but this build left it out; "" otherwise.
std::string targetLeftOutOfBuild(const llvm::Triple &TT);

/// An error with std::errc::invalid_argument (a bad option).
llvm::Error targetOptionError(const llvm::Twine &Msg);

/// "a, b, c": at most \p Max names, then "and N more" (features in errors).
std::string joinNames(llvm::ArrayRef<std::string> Names, size_t Max = 8);

} // namespace kiln

#endif // KILN_LIB_CPU_TARGETARCH_H
