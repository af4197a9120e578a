//===- Device.cpp - The CPU device: serve kernels, launch them ------------===//
//
// Kernels are served by a KernelLoader<CpuTarget>: memory, then the store,
// then the CPU compiler (docs/Design.md §1, §3). The loader's per-kernel logs
// become KernelStats.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Device.h"
#include "kiln/CPU/CpuBackend.h"
#include "kiln/CPU/JITLinker.h"
#include "kiln/Compile/KernelLoader.h"
#include "kiln/IR/Hash.h"
#include "kiln/Store/Environment.h"

#include "llvm/Support/raw_ostream.h"

#include <sys/auxv.h>
#include <unordered_map>

using namespace kiln;
using llvm::Error;
using llvm::Expected;

namespace {
std::optional<StoreModeKind> storeModeOf(DeviceStoreMode M) {
  switch (M) {
  case DeviceStoreMode::Environment:
    return std::nullopt;
  case DeviceStoreMode::Off:
    return StoreModeKind::Off;
  case DeviceStoreMode::ReadWrite:
    return StoreModeKind::ReadWrite;
  case DeviceStoreMode::ReadOnly:
    return StoreModeKind::ReadOnly;
  }
  return std::nullopt;
}

/// The device's own store environment: StoreDir (else the default root)
/// with the default configuration, the mode the options ask for, and its
/// own warnings.
StoreEnvironment storeEnvironmentOf(const DeviceOptions &O) {
  auto Warnings = std::make_shared<StoreWarnings>(O.WarningSink);
  StoreEnvironment Defaults = StoreEnvironment::fromDefaults(Warnings);
  StoreConfig Config = Defaults.config();
  // An explicit mode overrides KILN_CACHE, but in a setuid or setgid
  // process never brings back a root that the caller's environment chose
  // (KILN_CACHE_DIR, HOME): only a root the program itself names.
  std::optional<StoreModeKind> Mode = storeModeOf(O.StoreMode);
  if (Mode && !(getauxval(AT_SECURE) && O.StoreDir.empty()))
    Config.Mode = *Mode;
  std::optional<std::string> Root =
      O.StoreDir.empty() ? Defaults.root() : std::optional(O.StoreDir);
  StoreEnvironment Env(std::move(Root), Config, std::move(Warnings));
  if (!O.Remote)
    Env.setRemote(Defaults.remote());
  else if (!O.Remote->Url.empty())
    if (llvm::Error E = Env.useRemote(*O.Remote))
      Env.warnings().warn("not using the remote store " + O.Remote->Url +
                          ": " + llvm::toString(std::move(E)));
  return Env;
}

CodeGenOptions codeGenOf(const DeviceOptions &O) {
  CodeGenOptions CG;
  CG.OptLevel = O.OptLevel;
  CG.CPU = O.CPU;
  CG.Features = O.Features;
  return CG;
}

double seconds(CompilationLogger::Duration D) {
  return std::chrono::duration<double>(D).count();
}
} // namespace

/// The logs of the getKernel/getKernels call this thread is serving: the
/// loader hands each log to its sink on the calling thread, so calls from
/// several threads each see their own without a device-wide lock.
static thread_local std::vector<CompilationLogger> *CallLogs = nullptr;

struct RuntimeDevice::Impl {
  DeviceOptions Opts;
  std::unique_ptr<JITLinker> Linker;
  StoreEnvironment Env;
  CpuTarget Target;
  KernelLoader<CpuTarget> Loader;
  Executor Exec;

  Impl(DeviceOptions O, std::unique_ptr<JITLinker> L)
      : Opts(std::move(O)), Linker(std::move(L)),
        Env(storeEnvironmentOf(Opts)),
        Target(CpuCompiler(codeGenOf(Opts), Opts.Limits), *Linker, Env),
        Loader(Target, LoaderOptions{
                           [this](const CompilationLogger &Log) {
                             if (CallLogs)
                               CallLogs->push_back(Log);
                             if (Opts.KernelLogSink) {
                               std::string Line;
                               llvm::raw_string_ostream OS(Line);
                               Log.print(OS);
                               Line = llvm::StringRef(Line).rtrim('\n').str();
                               // In order with the warnings, which wait
                               // for the loader's locks to be released.
                               DeferCallbacks::runOrDefer(
                                   [Sink = Opts.KernelLogSink,
                                    Line = std::move(Line)] { Sink(Line); });
                             }
                           },
                           [this](llvm::StringRef W) {
                             Env.warnings().warn(W);
                           },
                           Opts.DumpDir}),
        Exec(Opts.Threads, Opts.KeepWarmMicroseconds,
             Opts.MinWorkPerThreadMicroseconds) {}

  KernelStats statsOf(const CpuTarget::Id &Key,
                      const std::vector<CompilationLogger> &Logs);
  /// Whether the store holds an entry for \p Key with its IR hash: one a
  /// refused write found there already (another process kept it first).
  bool storeHolds(const CpuTarget::Id &Key) {
    FileStore *F = Target.artifactStore().kernels();
    if (!F)
      return false;
    std::optional<EntryInfo> Info = F->info(
        KernelCacheKey::fromArtifactId(Key, Target.artifactStore().buildId()));
    return Info && Info->IRHash == Key.Kernel.irHash().value_or(0);
  }
  std::vector<Expected<LoadedKernel>>
  serve(llvm::ArrayRef<KernelRequest> Requests, const KernelBatchOptions &BO,
        std::vector<KernelStats> *Stats);
};

/// The stats of \p Key from the logs of the call being served.
KernelStats
RuntimeDevice::Impl::statsOf(const CpuTarget::Id &Key,
                             const std::vector<CompilationLogger> &Logs) {
  KernelStats S;
  S.HasStore = Target.persists();
  std::string Name = Key.str();
  const CompilationLogger *Log = nullptr;
  for (const CompilationLogger &L : Logs)
    if (L.kernel() == Name)
      Log = &L;
  if (!Log)
    return S;
  switch (Log->served()) {
  case ServedKind::MemoryHit:
    S.Origin = KernelProvenance::Memory;
    break;
  case ServedKind::StoreHit:
    S.Origin = KernelProvenance::Store;
    break;
  case ServedKind::SourceHit:
  case ServedKind::Compiled:
    S.Origin = KernelProvenance::Compiled;
    break;
  case ServedKind::Failed:
    S.Origin = KernelProvenance::Failed;
    break;
  }
  S.Memoized = S.Origin == KernelProvenance::Memory;
  S.StoreHit = S.Origin == KernelProvenance::Store;
  S.Compiled = S.Origin == KernelProvenance::Compiled;
  for (const auto &[Phase, D] : Log->phases()) {
    double T = seconds(D);
    if (Phase == "store-read")
      S.LookupSeconds += T;
    else if (Phase == cpu_phase::Verify)
      S.VerifySeconds += T;
    else if (Phase == cpu_phase::LowerIR)
      S.LowerSeconds += T;
    else if (Phase == cpu_phase::Optimize)
      S.OptimizeSeconds += T;
    else if (Phase == cpu_phase::Codegen)
      S.CodegenSeconds += T;
    else if (Phase == "load")
      S.LinkSeconds += T;
    else if (Phase == "store")
      S.StoreSeconds += T;
  }
  return S;
}

std::vector<Expected<LoadedKernel>>
RuntimeDevice::Impl::serve(llvm::ArrayRef<KernelRequest> Requests,
                           const KernelBatchOptions &BO,
                           std::vector<KernelStats> *Stats) {
  // The loader and the store warn under their locks: the sink runs after.
  DeferCallbacks Defer;
  std::vector<CpuSource> Sources;
  Sources.reserve(Requests.size());
  std::vector<KernelLoader<CpuTarget>::Request> LR;
  LR.reserve(Requests.size());
  std::vector<std::optional<std::string>> Invalid(Requests.size());
  for (size_t I = 0; I != Requests.size(); ++I) {
    const KernelRequest &R = Requests[I];
    if (!R.K) {
      Invalid[I] = "kernel request " + std::to_string(I) + " has no kernel";
      continue;
    }
    Sources.push_back(CpuSource{*R.K, R.FileName});
    uint64_t Hash = R.IRHash ? *R.IRHash : hashKernel(*R.K);
    std::string Id = R.Id.empty() ? kernelIdFromIR(*R.K, Hash) : R.Id;
    LR.push_back({CpuTarget::Id{KernelId(std::move(Id), Hash), R.Variant},
                  &Sources.back()});
  }

  std::vector<CompilationLogger> Logs;
  std::vector<CompilationLogger> *OuterLogs = CallLogs;
  CallLogs = &Logs;
  BatchOptions Batch;
  Batch.Threads = BO.Threads ? BO.Threads : Opts.BatchThreads;
  Batch.Progress = BO.Progress;
  std::vector<Expected<LoadedKernel>> Loaded = Loader.getBatch(LR, Batch);
  CallLogs = OuterLogs;

  std::vector<Expected<LoadedKernel>> Results;
  Results.reserve(Requests.size());
  if (Stats)
    Stats->assign(Requests.size(), KernelStats());
  // Take each distinct id's store outcome once; duplicates share it.
  struct Kept {
    bool Stored = false, InStore = false;
  };
  std::unordered_map<CpuTarget::Id, Kept> StoredOf;
  size_t J = 0;
  for (size_t I = 0; I != Requests.size(); ++I) {
    if (Invalid[I]) {
      Results.emplace_back(llvm::createStringError(
          std::make_error_code(std::errc::invalid_argument), *Invalid[I]));
      continue;
    }
    const CpuTarget::Id &Key = LR[J].Key;
    Expected<LoadedKernel> &L = Loaded[J++];
    if (Stats) {
      KernelStats S = statsOf(Key, Logs);
      // Served by another thread's call that was loading it: no log here.
      if (S.Origin == KernelProvenance::Failed && L) {
        S.Origin = KernelProvenance::Memory;
        S.Memoized = true;
      }
      S.RemoteHit = S.StoreHit && Target.takeRemoteHit(Key);
      auto [It, New] = StoredOf.try_emplace(Key);
      if (New) {
        It->second.Stored = Target.takeStoreOutcome(Key).value_or(false);
        It->second.InStore =
            It->second.Stored || (S.Compiled && storeHolds(Key));
      }
      S.Stored = It->second.Stored;
      S.InStore = It->second.InStore;
      (*Stats)[I] = S;
    }
    Results.push_back(std::move(L));
  }
  if (!Stats)
    for (const auto &R : LR) {
      Target.takeStoreOutcome(R.Key);
      Target.takeRemoteHit(R.Key);
    }
  return Results;
}

RuntimeDevice::RuntimeDevice(std::unique_ptr<Impl> P) : P(std::move(P)) {}
RuntimeDevice::~RuntimeDevice() = default;

Error RuntimeDevice::validateOptions(const DeviceOptions &Opts) {
  auto Invalid = [](const llvm::Twine &Msg) {
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument), Msg);
  };
  if (Opts.OptLevel > 3)
    return Invalid("optimisation level " + llvm::Twine(Opts.OptLevel) +
                   " is out of range 0..3");
  if (Opts.Threads > Executor::MaxThreads)
    return Invalid("launch threads " + llvm::Twine(Opts.Threads) +
                   " is above the limit of " +
                   llvm::Twine(Executor::MaxThreads) + " (0: all cores)");
  if (Opts.BatchThreads > Executor::MaxThreads)
    return Invalid("compile threads " + llvm::Twine(Opts.BatchThreads) +
                   " is above the limit of " +
                   llvm::Twine(Executor::MaxThreads) + " (0: all cores)");
  // Before any compilation: code this device compiles runs here.
  return checkRunsOnHost(codeGenOf(Opts));
}

Expected<std::unique_ptr<RuntimeDevice>>
RuntimeDevice::create(DeviceOptions Opts) {
  if (Error E = validateOptions(Opts))
    return E;
  auto Linker = JITLinker::create();
  if (!Linker)
    return Linker.takeError();
  return std::unique_ptr<RuntimeDevice>(new RuntimeDevice(
      std::make_unique<Impl>(std::move(Opts), std::move(*Linker))));
}

const DeviceOptions &RuntimeDevice::options() const { return P->Opts; }

Executor &RuntimeDevice::executor() { return P->Exec; }

bool RuntimeDevice::hasStore() const { return P->Target.persists(); }

std::string RuntimeDevice::storeFolder() {
  FileStore *F = P->Target.artifactStore().kernels();
  return F ? F->folder() : std::string();
}

const StoreWarnings &RuntimeDevice::storeWarnings() const {
  return P->Env.warnings();
}

bool RuntimeDevice::storeUsable() {
  FileStore *F = P->Target.artifactStore().kernels();
  return F && F->usable();
}

Expected<LoadedKernel> RuntimeDevice::getKernel(const IRKernel &K,
                                                const CpuVariant &Variant,
                                                KernelStats *Stats) {
  KernelRequest R;
  R.K = &K;
  R.Variant = Variant;
  std::vector<KernelStats> S;
  auto Results = P->serve(R, {}, Stats ? &S : nullptr);
  if (Stats)
    *Stats = S.front();
  return std::move(Results.front());
}

Expected<LoadedKernel> RuntimeDevice::getKernel(const IRKernel &K,
                                                llvm::StringRef KernelId,
                                                const CpuVariant &Variant,
                                                KernelStats *Stats) {
  if (KernelId.empty())
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        "empty kernel id for @" + K.Name);
  KernelRequest R;
  R.K = &K;
  R.Variant = Variant;
  R.Id = KernelId.str();
  std::vector<KernelStats> S;
  auto Results = P->serve(R, {}, Stats ? &S : nullptr);
  if (Stats)
    *Stats = S.front();
  return std::move(Results.front());
}

std::vector<Expected<LoadedKernel>>
RuntimeDevice::getKernels(llvm::ArrayRef<KernelRequest> Requests,
                          const KernelBatchOptions &Opts,
                          std::vector<KernelStats> *Stats) {
  return P->serve(Requests, Opts, Stats);
}

Error RuntimeDevice::launch(const LoadedKernel &Kernel,
                            std::array<uint32_t, 3> CubeCount,
                            llvm::ArrayRef<ArgBinding> Args, LaunchStop *Stop) {
  return P->Exec.launch(Kernel, CubeCount, Args, /*RequiredAlignment=*/0,
                        /*Validated=*/false, Stop);
}

bool RuntimeDevice::unloadKernel(const IRKernel &K, llvm::StringRef KernelId,
                                 uint64_t IRHash, const CpuVariant &Variant) {
  std::string Id =
      KernelId.empty() ? kernelIdFromIR(K, IRHash) : KernelId.str();
  return P->Loader.erase(
      CpuTarget::Id{kiln::KernelId(std::move(Id), IRHash), Variant});
}

size_t RuntimeDevice::loadedCount() const { return P->Loader.loadedCount(); }

LoaderStatistics RuntimeDevice::loaderStatistics() const {
  return P->Loader.statistics();
}

uint64_t RuntimeDevice::warningCount() const { return storeWarnings().count(); }

std::vector<std::string> RuntimeDevice::recentWarnings() const {
  return storeWarnings().recent();
}
