//===- CpuTarget.cpp - The CPU CompilationTarget: store and JIT linker ----===//

#include "kiln/CPU/CpuBackend.h"
#include "kiln/CPU/HostInfo.h"

using namespace kiln;
using namespace llvm;

/// Installs the host feature check on \p Store's entries: the store is
/// generic, the CPU backend knows what its code needs.
static ArtifactStore<CpuArtifact> withHostCheck(ArtifactStore<CpuArtifact> S) {
  if (FileStore *F = S.kernels())
    F->setMissingFeature([](StringRef Required) {
      return hostInfo().missingFeature(Required.str());
    });
  return S;
}

CpuTarget::CpuTarget(CpuCompiler Compiler, JITLinker &Linker,
                     const StoreEnvironment &Env)
    : Comp(std::move(Compiler)), Linker(Linker),
      Store(withHostCheck(ArtifactStore<CpuArtifact>(
          FileStore::open("cpu",
                          cpuStoreFingerprint(Comp.codeGenOptions(),
                                              Comp.limits()),
                          Env),
          nullptr,
          // Shared by every executable of this build (kiln-compile warms
          // the store kiln-run and embedders load), unlike buildIdHash.
          sourceBuildIdHash()))) {}

CpuTarget::CpuTarget(CpuCompiler Compiler, JITLinker &Linker,
                     ArtifactStore<CpuArtifact> Store)
    : Comp(std::move(Compiler)), Linker(Linker),
      Store(withHostCheck(std::move(Store))) {}

std::optional<CpuArtifact> CpuTarget::stored(const Id &Key) {
  std::optional<CpuArtifact> A = Store.takeVariant(Key);
  if (A && FileStore::lastReadCameFromRemote()) {
    std::lock_guard<std::mutex> L(OutcomesLock);
    RemoteHits.insert(Key);
  }
  return A;
}

bool CpuTarget::takeRemoteHit(const Id &Key) {
  std::lock_guard<std::mutex> L(OutcomesLock);
  return RemoteHits.erase(Key) != 0;
}

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
