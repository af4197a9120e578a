//===- CpuTarget.cpp - The CPU CompilationTarget: store and JIT linker ----===//

#include "kiln/CPU/CpuBackend.h"

#include <sys/auxv.h>

using namespace kiln;
using namespace llvm;

/// The "cpu" namespace for \p Fingerprint as \p Opts asks, or null.
static std::unique_ptr<FileStore> openCpuStore(const CpuStoreOptions &Opts,
                                               StringRef Fingerprint) {
  StoreConfig Config = StoreConfig::fromEnvironment();
  // An explicit mode overrides KILN_CACHE, but in a setuid or setgid
  // process never brings back a root that the caller's environment chose
  // (KILN_CACHE_DIR, HOME): only a root the program itself names.
  if (Opts.Mode && !(getauxval(AT_SECURE) && Opts.Root.empty()))
    Config.Mode = *Opts.Mode;
  if (Opts.Root.empty())
    return FileStore::open("cpu", Fingerprint, Config);
  return FileStore::openAt(Opts.Root, "cpu", Fingerprint, Config);
}

CpuTarget::CpuTarget(CpuCompiler Compiler, JITLinker &Linker,
                     const CpuStoreOptions &StoreOpts)
    : Comp(std::move(Compiler)), Linker(Linker),
      Store(openCpuStore(StoreOpts,
                         cpuStoreFingerprint(Comp.codeGenOptions(), Comp.limits())),
            nullptr,
            // Shared by every executable of this build (kiln-compile warms
            // the store kiln-run and embedders load), unlike buildIdHash.
            sourceBuildIdHash()) {}

Expected<LoadedKernel> CpuTarget::load(const Id &Key, const CpuArtifact &A) {
  ArrayRef<char> Object(reinterpret_cast<const char *>(A.Object.data()),
                        A.Object.size());
  Expected<LoadedKernel> L = Linker.load(Object, A.Meta);
  if (L)
    L->setBufferAlignment(Key.Var.BufferAlignment);
  return L;
}

bool CpuTarget::store(const Id &Key, CpuArtifact A,
                      std::optional<StringRef>) {
  bool Taken = Store.storeVariant(Key, A);
  std::lock_guard<std::mutex> L(OutcomesLock);
  Outcomes.insert_or_assign(Key, Taken);
  return Taken;
}

std::optional<bool> CpuTarget::takeStoreOutcome(const Id &Key) {
  std::lock_guard<std::mutex> L(OutcomesLock);
  auto It = Outcomes.find(Key);
  if (It == Outcomes.end())
    return std::nullopt;
  bool Taken = It->second;
  Outcomes.erase(It);
  return Taken;
}
