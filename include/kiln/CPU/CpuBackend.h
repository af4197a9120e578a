//===- CpuBackend.h - The CPU backend on the compilation interfaces -*- C++ -*-===//
//
// The LLVM CPU backend as an ArtifactCompiler and a CompilationTarget
// (kiln/Compile/Compiler.h), so that KernelLoader<CpuTarget> serves kernels
// from memory, from the persistent store, or by compiling them (docs/Store.md,
// "The CPU backend").
//
//   CpuCompiler::lower   verify → lower → optimise → emit the object (any
//                        thread; one LLVMContext and TargetMachine per call)
//   CpuCompiler::finalize moves the object out (source() is none)
//   CpuTarget            the "cpu" namespace of the store under the host's
//                        fingerprint, and the JIT linker (server thread)
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CPU_CPUBACKEND_H
#define KILN_CPU_CPUBACKEND_H

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/CubeMetadata.h"
#include "kiln/CPU/HostInfo.h"
#include "kiln/CPU/JITLinker.h"
#include "kiln/CPU/LoadedKernel.h"
#include "kiln/Compile/Compiler.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Kernel.h"
#include "kiln/Store/ArtifactStore.h"
#include "kiln/Store/Environment.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln {

/// What the CPU compiler compiles: a kernel (not necessarily verified yet)
/// and the file it came from, for diagnostics. Both must outlive the
/// compilation.
struct CpuSource {
  const IRKernel &K;
  llvm::StringRef FileName;
};

/// What the store keeps and the JIT links: the relocatable object, the launch
/// metadata, the hash of the kernel's IR (a stale entry for another IR under
/// the same id is never served) and the feature string the TargetMachine
/// compiled for (the store refuses an entry needing a feature the host lacks).
struct CpuArtifact {
  std::vector<uint8_t> Object;
  CubeMetadata Meta;
  uint64_t IRHash = 0;
  std::string Features;
  friend bool operator==(const CpuArtifact &, const CpuArtifact &) = default;
};

template <> struct ArtifactCodec<CpuArtifact> {
  /// "KCPU", u32 version, u64 IR hash, then three length-prefixed fields
  /// (u32 features, u32 metadata, u64 object), little-endian.
  static std::vector<uint8_t> encode(const CpuArtifact &A);
  /// Decodes encode()'s output. Every length is checked against what is
  /// left, trailing bytes are an error, and the metadata must deserialize:
  /// an error (never a crash) on anything else.
  static llvm::Expected<CpuArtifact> decode(llvm::ArrayRef<uint8_t> Bytes);
  static std::string features(const CpuArtifact &A) { return A.Features; }
  static uint64_t irHash(const CpuArtifact &A) { return A.IRHash; }
};

/// The CpuCompiler's phases as it names them in the CompilationLogger (the
/// loader adds "store-read", "lower" around the whole compilation,
/// "finalize", "load" and "store").
namespace cpu_phase {
inline constexpr const char *Verify = "verify";
inline constexpr const char *LowerIR = "lower-ir";
inline constexpr const char *Optimize = "optimize";
inline constexpr const char *Codegen = "codegen";
inline constexpr const char *Assembly = "dump-asm";
} // namespace cpu_phase

/// The CPU ArtifactCompiler. Stateless apart from its options: every member
/// may be called from many threads at once.
class CpuCompiler {
public:
  using Source = CpuSource;
  using Variant = CpuVariant;
  using Lowered = CpuArtifact;
  using Artifact = CpuArtifact;

  CpuCompiler(CodeGenOptions CodeGen = {}, DeviceLimits Limits = {})
      : CodeGen(std::move(CodeGen)), Limits(Limits) {}

  /// Verifies \p Src.K against the device limits (a DiagnosticError with
  /// every problem, located in \p Src.FileName), lowers it for \p Id's
  /// variant, optimises and emits the object with a TargetMachine made for
  /// this call. When \p Rec is enabled (KILN_DUMP) it records the canonical
  /// IR, the LLVM IR before and after optimisation and the assembly (a
  /// second code generation, only then). Phases are timed into \p Log.
  llvm::Expected<Lowered> lower(const Source &Src,
                                const ArtifactId<CpuVariant> &Id,
                                CompilationRecording &Rec,
                                CompilationLogger &Log) const;
  /// The object is made by lower: this moves it out.
  llvm::Expected<Artifact> finalize(const ArtifactId<CpuVariant> &Id,
                                    Lowered L) const {
    return L;
  }
  /// The CPU backend never shares a finalization between kernels.
  static std::optional<llvm::StringRef> source(const Lowered &) {
    return std::nullopt;
  }

  const CodeGenOptions &codeGenOptions() const { return CodeGen; }
  const DeviceLimits &limits() const { return Limits; }

private:
  CodeGenOptions CodeGen;
  DeviceLimits Limits;
};

/// The text that names the CPU store namespace for \p CodeGen: the host's
/// triple, CPU, full feature list and LLVM version, then any option that
/// changes the code (an optimisation level other than 3, a CPU or feature
/// override, a plane size other than 32: the only device limit the code
/// depends on), so that such code never mixes with the default's.
std::string cpuStoreFingerprint(const CodeGenOptions &CodeGen,
                                const DeviceLimits &Limits = {});
/// The same text as a machine described by \p Host writes it: another
/// architecture's namespace (docs/Portability.md).
std::string cpuStoreFingerprint(const CodeGenOptions &CodeGen,
                                const DeviceLimits &Limits,
                                const HostInfo &Host);

/// The CPU CompilationTarget. Used from the server thread only (the
/// KernelLoader guarantees it), except storeOutcome which is locked.
class CpuTarget {
public:
  using Compiler = CpuCompiler;
  using Loaded = LoadedKernel;
  using Id = ArtifactId<CpuVariant>;

  /// A target over \p Linker (which must outlive it) whose store is the
  /// "cpu" namespace of cpuStoreFingerprint(Compiler's options) under
  /// \p Env (its root, configuration and warnings); no store when \p Env
  /// has none (mode Off, no root). Entries needing a CPU feature the host
  /// lacks are refused (HostInfo::missingFeature).
  CpuTarget(CpuCompiler Compiler, JITLinker &Linker,
            const StoreEnvironment &Env);
  /// A target over an explicit store (tests), with the same feature check.
  CpuTarget(CpuCompiler Compiler, JITLinker &Linker,
            ArtifactStore<CpuArtifact> Store);

  const CpuCompiler &compiler() const { return Comp; }
  /// Whether artifacts are kept between runs (a store is enabled).
  bool persists() const { return Store.persists(); }

  std::optional<CpuArtifact> stored(const Id &Key);
  /// Links \p A. An artifact whose metadata does not name a symbol of its
  /// object fails here, and the loader then discards and recompiles it.
  llvm::Expected<LoadedKernel> load(const Id &Key, const CpuArtifact &A);
  /// Keeps \p A in the store; whether it was taken. Remembered for
  /// storeOutcome.
  bool store(const Id &Key, CpuArtifact A, std::optional<llvm::StringRef>);
  void discard(const Id &Key) { Store.purgeVariant(Key); }

  /// Whether the last store() of \p Key was taken, and forgets it; nullopt
  /// when store() was not called for it since.
  std::optional<bool> takeStoreOutcome(const Id &Key);
  /// Whether the last stored() of \p Key that found it was answered by the
  /// store's remote tier, and forgets it.
  bool takeRemoteHit(const Id &Key);

  ArtifactStore<CpuArtifact> &artifactStore() { return Store; }

private:
  CpuCompiler Comp;
  JITLinker &Linker;
  ArtifactStore<CpuArtifact> Store;
  std::mutex OutcomesLock;
  std::unordered_map<Id, bool> Outcomes;
  std::unordered_set<Id> RemoteHits;
};

} // namespace kiln

#endif // KILN_CPU_CPUBACKEND_H
