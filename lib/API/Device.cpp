//===- Device.cpp - Devices and kernel handles of the public API ----------===//
//
// A kernel handle keeps its IR, id and IR hash, so that asking for another
// variant (a launch whose buffers are unaligned or overlap) never prints or
// hashes the kernel again, and its linked variants, so that a launch finds
// its code without any lookup.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "kiln/IR/Hash.h"
#include "kiln/IR/Parser.h"
#include "kiln/Store/Environment.h"

#include <chrono>
#include <cstring>
#include <new>
#include <optional>
#include <thread>

using namespace kiln;
using namespace kiln::api;
using namespace kiln::api::detail;

//===-- Kernel handles ----------------------------------------------------===//

static const std::string EmptyString;

const std::string &api::Kernel::name() const {
  return S ? S->IR.Name : EmptyString;
}
const std::string &api::Kernel::id() const { return S ? S->Id : EmptyString; }
Dim3 api::Kernel::cubeDim() const { return S ? S->CubeDim : Dim3{}; }
uint32_t api::Kernel::planeDim() const { return S ? S->PlaneDim : 0; }
std::span<const ParameterInfo> api::Kernel::parameters() const {
  if (!S)
    return {};
  return S->Params;
}
api::KernelOrigin api::Kernel::origin() const {
  return S ? S->Origin : api::KernelOrigin::Compiled;
}
bool api::Kernel::boundsChecked() const { return S && S->BoundsChecked; }

CpuVariant KernelState::variantOf(unsigned Index, bool BoundsChecked) {
  CpuVariant V;
  V.BoundsChecked = BoundsChecked;
  V.BufferAlignment = (Index & 1) ? 1 : 64;
  V.MayAlias = (Index & 2) != 0;
  return V;
}

KernelRequest KernelState::request(unsigned Index) const {
  KernelRequest R;
  R.K = &IR;
  R.Variant = variantOf(Index, BoundsChecked);
  R.FileName = FileName;
  R.Id = Id;
  R.IRHash = IRHash;
  return R;
}

Result<LoadedKernel> KernelState::variant(unsigned Index) {
  if (Ready[Index].load(std::memory_order_acquire))
    return Variants[Index];
  std::shared_ptr<DeviceState> D = Device.lock();
  if (!D)
    return closedDevice();
  // Life before VariantsLock, the order Device::unloadKernel takes them in.
  // The other order can deadlock: an unload holding Life waits for the
  // VariantsLock this thread holds, the device's destructor waits for Life
  // exclusively, and a shared_mutex that lets no new reader past a waiting
  // writer keeps this thread from Life.
  DeferCallbacks Defer; // warnings reach the sink after both locks
  std::shared_lock<std::shared_mutex> Alive(D->Life);
  std::lock_guard<std::mutex> L(VariantsLock);
  if (Ready[Index].load(std::memory_order_relaxed))
    return Variants[Index];
  if (D->Closed)
    return closedDevice();
  KernelRequest R = request(Index);
  std::vector<KernelStats> Stats;
  std::vector<llvm::Expected<LoadedKernel>> Got =
      D->Dev->getKernels(llvm::ArrayRef<KernelRequest>(R), {}, &Stats);
  if (!Got.front())
    return statusOf(Got.front().takeError(), ErrorCode::Internal);
  D->LaunchLinks.fetch_add(1, std::memory_order_relaxed);
  if (Stats.front().Compiled)
    D->LaunchCompiles.fetch_add(1, std::memory_order_relaxed);
  Variants[Index] = std::move(*Got.front());
  Ready[Index].store(true, std::memory_order_release);
  return Variants[Index];
}

//===-- Devices -----------------------------------------------------------===//

/// The remote tier \p Config asks for: nullopt for the environment's, an
/// empty Url for none. Settings that cannot work are an InvalidArgument.
static Result<std::optional<RemoteConfig>>
remoteConfigOf(const DeviceConfig &Config) {
  using Out = std::optional<RemoteConfig>;
  if (Config.RemoteStore == "off")
    return Out(RemoteConfig());
  if (Config.RemoteStore.empty() && Config.RemoteKeyFile.empty() &&
      !Config.RemoteReadOnly && !Config.RemoteTimeoutMilliseconds)
    return Out();
  if (!remoteTierBuilt())
    return Status(ErrorCode::InvalidArgument,
                  std::string("remote tier settings: ") +
                      noRemoteTierMessage());
  RemoteConfig R = RemoteConfig::fromEnvironment().value_or(RemoteConfig());
  if (!Config.RemoteStore.empty())
    R.Url = Config.RemoteStore;
  if (!Config.RemoteKeyFile.empty())
    R.KeyFile = Config.RemoteKeyFile;
  if (Config.RemoteReadOnly)
    R.Mode = RemoteModeKind::ReadOnly;
  if (Config.RemoteTimeoutMilliseconds) {
    if (Config.RemoteTimeoutMilliseconds > 60000)
      return Status(ErrorCode::InvalidArgument,
                    "RemoteTimeoutMilliseconds " +
                        std::to_string(Config.RemoteTimeoutMilliseconds) +
                        " is out of range 1..60000");
    R.ConnectTimeout = R.RequestTimeout =
        std::chrono::milliseconds(Config.RemoteTimeoutMilliseconds);
  }
  if (R.Url.empty())
    return Status(ErrorCode::InvalidArgument,
                  "remote tier settings without an address (RemoteStore, "
                  "KILN_REMOTE)");
  if (llvm::Expected<RemoteAddress> A = RemoteAddress::parse(R.Url); !A)
    return Status(ErrorCode::InvalidArgument, llvm::toString(A.takeError()));
  if (llvm::Expected<FleetKey> K = FleetKey::load(R.KeyFile); !K)
    return Status(ErrorCode::InvalidArgument, llvm::toString(K.takeError()));
  return Out(std::move(R));
}

static_assert(api::MaxTensorRank == kiln::MaxTensorRank &&
                  api::MaxTensorMapRank == kiln::MaxTensorMapRank &&
                  api::MaxIm2colChannels == kiln::MaxIm2colChannels &&
                  api::MaxIm2colPixels == kiln::MaxIm2colPixels &&
                  api::MinIm2colCorner == kiln::MinIm2colCorner &&
                  api::MaxIm2colCorner == kiln::MaxIm2colCorner &&
                  api::MaxTensorMapBoxDim == kiln::MaxTensorMapBoxDim,
              "the public tensor limits are the runtime's");
static_assert(api::MaxThreads == Executor::MaxThreads,
              "the public limit is the executor's");

Result<api::Device> api::Device::create(const DeviceConfig &Config) {
  DeferCallbacks Defer; // the store's first warnings, once it is made
  if (Config.OptLevel > 3)
    return Status(ErrorCode::InvalidArgument,
                  "optimisation level " + std::to_string(Config.OptLevel) +
                      " is out of range 0..3");
  if (Config.Threads > MaxThreads)
    return Status(ErrorCode::InvalidArgument,
                  "Threads " + std::to_string(Config.Threads) +
                      " is above the limit of " + std::to_string(MaxThreads) +
                      " (0: all cores)");
  if (Config.BatchThreads > MaxThreads)
    return Status(ErrorCode::InvalidArgument,
                  "BatchThreads " + std::to_string(Config.BatchThreads) +
                      " is above the limit of " + std::to_string(MaxThreads) +
                      " (0: all cores)");
  DeviceOptions O;
  O.OptLevel = Config.OptLevel;
  O.Threads = Config.Threads;
  O.BatchThreads = Config.BatchThreads;
  O.CPU = Config.CPU;
  O.Features = Config.Features;
  O.StoreDir = Config.StoreDir;
  O.KeepWarmMicroseconds = Config.KeepWarmMicroseconds;
  O.MinWorkPerThreadMicroseconds = Config.MinWorkPerThreadMicroseconds;
  auto S = std::make_shared<DeviceState>();
  if (Config.WarningSink)
    O.WarningSink =
        [Sink = Config.WarningSink,
         Source = CallbackSource{S.get(), nullptr}](llvm::StringRef Message) {
          runAsCallback(Source, [&] {
            Sink(std::string_view(Message.data(), Message.size()));
          });
        };
  switch (Config.Store) {
  case StoreMode::Environment:
    O.StoreMode = DeviceStoreMode::Environment;
    break;
  case StoreMode::Off:
    O.StoreMode = DeviceStoreMode::Off;
    break;
  case StoreMode::ReadWrite:
    O.StoreMode = DeviceStoreMode::ReadWrite;
    break;
  case StoreMode::ReadOnly:
    O.StoreMode = DeviceStoreMode::ReadOnly;
    break;
  }
  Result<std::optional<RemoteConfig>> Remote = remoteConfigOf(Config);
  if (!Remote.ok())
    return Remote.status();
  O.Remote = std::move(*Remote);
  if (Config.MaxSharedBytes)
    O.Limits.MaxSharedBytes = Config.MaxSharedBytes;
  if (Config.MaxUnitsPerCube)
    O.Limits.MaxUnitsPerCube = Config.MaxUnitsPerCube;
  try {
    // The options the device refuses are the caller's mistake, not Kiln's.
    if (llvm::Error E = kiln::RuntimeDevice::validateOptions(O))
      return statusOf(std::move(E), ErrorCode::InvalidArgument);
    llvm::Expected<std::unique_ptr<kiln::RuntimeDevice>> D =
        kiln::RuntimeDevice::create(std::move(O));
    if (!D)
      return statusOf(D.takeError(), ErrorCode::Internal);
    if (Config.Store == StoreMode::ReadWrite && !Config.StoreDir.empty() &&
        !(*D)->storeUsable())
      return Status(ErrorCode::StoreFailure,
                    "cannot use the store at '" + Config.StoreDir +
                        "': it could not be opened or created as a folder "
                        "this user owns and only this user can write (or "
                        "the process is setuid)");
    S->Config = Config;
    S->Dev = std::move(*D);
    api::Device Result;
    Result.S = std::move(S);
    return Result;
  } catch (const std::bad_alloc &) {
    return Status(ErrorCode::OutOfMemory, "cannot allocate a device");
  }
}

api::Device::Device(Device &&Other) noexcept = default;

api::Device &api::Device::operator=(Device &&Other) noexcept {
  if (this != &Other) {
    Device Old(std::move(*this)); // closed (drained) at the end of this scope
    S = std::move(Other.S);
  }
  return *this;
}

/// Closes \p S: drains its streams, waits for their tasks, drops the
/// device.
static void closeDevice(const std::shared_ptr<DeviceState> &S) {
  DeferCallbacks Defer; // the store's last warnings, once it is closed
  {
    std::unique_lock<std::shared_mutex> L(S->Life);
    S->Closed = true;
  }
  // Drain: everything already queued runs; nothing new is accepted.
  (void)synchronizeStreams(*S);
  {
    std::unique_lock<std::mutex> L(S->TasksLock);
    S->TasksDone.wait(L, [&] { return S->LiveTasks == 0; });
  }
  {
    std::lock_guard<std::mutex> L(S->KernelsLock);
    S->ById[0].clear();
    S->ById[1].clear();
  }
  std::unique_lock<std::shared_mutex> L(S->Life);
  S->Dev.reset();
}

api::Device::~Device() {
  if (!S)
    return;
  // From one of its own callbacks the drain would wait for the callback
  // (its stream, its publisher thread): it closes on a thread of its own,
  // once the callback has returned.
  if (inCallback()) {
    std::thread([S = std::move(S)] { closeDevice(S); }).detach();
    return;
  }
  closeDevice(S);
}

bool api::Device::inCallback() const {
  const CallbackSource *C = currentCallback();
  return S && C && C->Device == S.get();
}

/// Makes a handle for \p K served as \p Loaded, and keeps it under its id.
static api::Kernel makeHandle(const std::shared_ptr<DeviceState> &D,
                              const kiln::IRKernel &K, std::string Id,
                              uint64_t Hash, std::string FileName,
                              bool BoundsChecked, LoadedKernel Loaded,
                              api::KernelOrigin Origin) {
  auto S = std::make_shared<KernelState>();
  S->Device = D;
  S->IR = K;
  S->FileName = std::move(FileName);
  S->Id = std::move(Id);
  S->IRHash = Hash;
  S->BoundsChecked = BoundsChecked;
  const CubeMetadata &M = Loaded.metadata();
  S->CubeDim = Dim3{M.CubeDim[0], M.CubeDim[1], M.CubeDim[2]};
  S->PlaneDim = M.PlaneDim;
  for (const ParamMetadata &P : M.Params)
    S->Params.push_back(ParameterInfo{P.Name, P.IsBuffer, apiType(P.Ty),
                                      apiAccess(P.Access), P.IsTensorMap,
                                      P.IsIm2col});
  S->Origin = Origin;
  unsigned Default = variantIndex(/*Aligned64=*/true, /*MayAlias=*/false);
  S->Variants[Default] = std::move(Loaded);
  S->Ready[Default].store(true, std::memory_order_release);
  {
    std::lock_guard<std::mutex> L(D->KernelsLock);
    D->ById[BoundsChecked ? 1 : 0].insert_or_assign(S->Id, S);
  }
  return KernelState::make(std::move(S));
}

static api::KernelOrigin originOf(const KernelStats &St) {
  switch (St.Origin) {
  case kiln::KernelProvenance::Memory:
    return api::KernelOrigin::Memory;
  case kiln::KernelProvenance::Store:
    return api::KernelOrigin::Store;
  default:
    return api::KernelOrigin::Compiled;
  }
}

/// Serves \p Kernels (with their ids) as one batch.
static std::vector<Result<api::Kernel>>
loadBatch(const std::shared_ptr<DeviceState> &D,
          const std::vector<const kiln::IRKernel *> &Kernels,
          const std::vector<std::string> &Ids, const KernelOptions &Options,
          const std::string &FileName) {
  DeferCallbacks Defer; // warnings reach the sink after the locks
  // Each kernel ends as a handle or an error; the results are made at the
  // end, in order.
  std::vector<api::Kernel> Handles(Kernels.size());
  std::vector<Status> Errors(Kernels.size());
  std::vector<KernelRequest> Requests;
  std::vector<size_t> Pending;
  for (size_t I = 0; I != Kernels.size(); ++I) {
    // A kernel this device holds under the runtime's id (no hashing), or
    // the same text loaded again: the handle it got the first time.
    std::optional<uint64_t> Hash;
    if (Ids[I].empty())
      Hash = hashKernel(*Kernels[I]);
    std::string Id = Hash ? kernelIdFromIR(*Kernels[I], *Hash) : Ids[I];
    {
      std::lock_guard<std::mutex> L(D->KernelsLock);
      auto &Map = D->ById[Options.BoundsChecked ? 1 : 0];
      if (auto It = Map.find(Id); It != Map.end()) {
        Handles[I] = KernelState::make(It->second);
        continue;
      }
    }
    KernelRequest R;
    R.K = Kernels[I];
    R.Variant = KernelState::variantOf(variantIndex(true, false),
                                       Options.BoundsChecked);
    R.FileName = FileName;
    R.IRHash = Hash ? *Hash : hashKernel(*Kernels[I]);
    R.Id = std::move(Id);
    Requests.push_back(std::move(R));
    Pending.push_back(I);
  }
  if (!Requests.empty()) {
    std::shared_lock<std::shared_mutex> Alive(D->Life);
    if (D->Closed) {
      for (size_t I : Pending)
        Errors[I] = closedDevice();
    } else {
      std::vector<KernelStats> Stats;
      std::vector<llvm::Expected<LoadedKernel>> Got =
          D->Dev->getKernels(Requests, {}, &Stats);
      for (size_t J = 0; J != Requests.size(); ++J) {
        if (!Got[J])
          Errors[Pending[J]] =
              statusOf(Got[J].takeError(), ErrorCode::Internal);
        else
          Handles[Pending[J]] = makeHandle(
              D, *Requests[J].K, Requests[J].Id, *Requests[J].IRHash,
              FileName, Options.BoundsChecked, std::move(*Got[J]),
              originOf(Stats[J]));
      }
    }
  }
  std::vector<Result<api::Kernel>> Out;
  Out.reserve(Kernels.size());
  for (size_t I = 0; I != Kernels.size(); ++I) {
    if (Errors[I].ok())
      Out.emplace_back(std::move(Handles[I]));
    else
      Out.emplace_back(std::move(Errors[I]));
  }
  return Out;
}

static Status nullDevice(const char *Fn) {
  return Status(ErrorCode::InvalidArgument,
                std::string(Fn) + ": the device is null (moved from)");
}

Result<api::Kernel> api::Device::loadKernel(std::string_view Text,
                                            std::string_view Name,
                                            const KernelOptions &Options) {
  if (!S)
    return nullDevice("loadKernel");
  std::string FileName = Options.FileName.empty() ? "<input>" : Options.FileName;
  // Known id: served without parsing.
  if (!Options.Id.empty()) {
    std::lock_guard<std::mutex> L(S->KernelsLock);
    auto &Map = S->ById[Options.BoundsChecked ? 1 : 0];
    if (auto It = Map.find(Options.Id); It != Map.end())
      return KernelState::make(It->second);
  }
  llvm::Expected<Module> M =
      parseModule(llvm::StringRef(Text.data(), Text.size()), FileName);
  if (!M)
    return statusOf(M.takeError(), ErrorCode::InvalidKernel);
  const kiln::IRKernel *K = nullptr;
  if (Name.empty()) {
    if (M->Kernels.size() != 1)
      return Status(ErrorCode::InvalidArgument,
                    FileName + ": holds " + std::to_string(M->Kernels.size()) +
                        " kernels; name the one to load");
    K = &M->Kernels.front();
  } else {
    std::string_view Bare = Name.front() == '@' ? Name.substr(1) : Name;
    K = M->findKernel(llvm::StringRef(Bare.data(), Bare.size()));
    if (!K)
      return Status(ErrorCode::NotFound, FileName + ": no kernel named @" +
                                             std::string(Bare));
  }
  return std::move(loadBatch(S, {K}, {Options.Id}, Options, FileName).front());
}

Result<api::Kernel> api::Device::loadKernel(const kiln::IRKernel &K,
                                            const KernelOptions &Options) {
  if (!S)
    return nullDevice("loadKernel");
  std::string FileName =
      Options.FileName.empty() ? "<builder>" : Options.FileName;
  return std::move(loadBatch(S, {&K}, {Options.Id}, Options, FileName).front());
}

std::vector<Result<api::Kernel>>
api::Device::loadKernels(std::string_view Text, const KernelOptions &Options) {
  if (!S)
    return {nullDevice("loadKernels")};
  std::string FileName = Options.FileName.empty() ? "<input>" : Options.FileName;
  llvm::Expected<Module> M =
      parseModule(llvm::StringRef(Text.data(), Text.size()), FileName);
  if (!M)
    return {statusOf(M.takeError(), ErrorCode::InvalidKernel)};
  std::vector<const kiln::IRKernel *> Kernels;
  std::vector<std::string> Ids;
  for (const kiln::IRKernel &K : M->Kernels) {
    Kernels.push_back(&K);
    Ids.push_back(Options.Id.empty() ? std::string() : Options.Id + "." + K.Name);
  }
  return loadBatch(S, Kernels, Ids, Options, FileName);
}

Result<api::Kernel> api::Device::findKernel(std::string_view Id,
                                            bool BoundsChecked) {
  if (!S)
    return nullDevice("findKernel");
  std::lock_guard<std::mutex> L(S->KernelsLock);
  auto &Map = S->ById[BoundsChecked ? 1 : 0];
  if (auto It = Map.find(std::string(Id)); It != Map.end())
    return KernelState::make(It->second);
  return Status(ErrorCode::NotFound, "no kernel loaded under the id '" +
                                         std::string(Id) + "'");
}

Status api::Device::unloadKernel(api::Kernel &K) {
  if (!S)
    return nullDevice("unloadKernel");
  const std::shared_ptr<KernelState> &KS = KernelState::of(K);
  if (!KS)
    return Status(ErrorCode::InvalidArgument,
                  "unloadKernel: the kernel handle is null");
  if (KS->Device.lock() != S)
    return Status(ErrorCode::InvalidArgument,
                  "unloadKernel: kernel '" + KS->IR.Name +
                      "' belongs to another device");
  {
    std::lock_guard<std::mutex> L(S->KernelsLock);
    auto &Map = S->ById[KS->BoundsChecked ? 1 : 0];
    if (auto It = Map.find(KS->Id); It != Map.end() && It->second == KS)
      Map.erase(It);
  }
  {
    std::shared_lock<std::shared_mutex> Alive(S->Life);
    if (S->Dev) {
      std::lock_guard<std::mutex> L(KS->VariantsLock);
      for (unsigned I = 0; I != VariantCount; ++I)
        if (KS->Ready[I].load(std::memory_order_acquire))
          S->Dev->unloadKernel(KS->IR, KS->Id, KS->IRHash,
                               KernelState::variantOf(I, KS->BoundsChecked));
    }
  }
  K = api::Kernel();
  return Status();
}

size_t api::Device::loadedKernelCount() const {
  if (!S)
    return 0;
  std::lock_guard<std::mutex> L(S->KernelsLock);
  return S->ById[0].size() + S->ById[1].size();
}

unsigned api::Device::concurrency() const {
  if (!S)
    return 0;
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  return S->Dev ? S->Dev->executor().concurrency() : 0;
}

uint64_t api::Device::warningCount() const {
  if (!S)
    return 0;
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  return S->Dev ? S->Dev->warningCount() : 0;
}

std::vector<std::string> api::Device::recentWarnings() const {
  if (!S)
    return {};
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  return S->Dev ? S->Dev->recentWarnings() : std::vector<std::string>();
}

bool api::Device::hasStore() const {
  if (!S)
    return false;
  DeferCallbacks Defer; // a folder found untrusted warns under its lock
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  return S->Dev && S->Dev->storeUsable();
}

void api::Device::setDebugPrintHandler(
    std::function<void(std::string_view Text)> Handler) {
  if (!S)
    return;
  DebugPrintHandler Wrapped;
  if (Handler)
    // A callback of the launch that printed, run once the launch has let
    // go of every lock (Device::launch holds the device's).
    Wrapped = [H = std::make_shared<std::function<void(std::string_view)>>(
                   std::move(Handler))](std::string_view Text) {
      const CallbackSource *L = currentLaunch();
      CallbackSource Source = L ? *L : CallbackSource();
      DeferCallbacks::runOrDefer([H, Source, T = std::string(Text)] {
        runAsCallback(Source, [&] { (*H)(T); });
      });
    };
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  if (S->Dev)
    S->Dev->executor().setDebugPrintHandler(std::move(Wrapped));
}

void api::Device::setDebugPrintLimit(uint64_t Bytes) {
  if (!S)
    return;
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  if (S->Dev)
    S->Dev->executor().setDebugPrintLimit(Bytes);
}

Status api::Device::launch(const api::Kernel &K, Dim3 CubeCount,
                           std::span<const Arg> Args) {
  if (!S)
    return nullDevice("launch");
  if (K.valid() && KernelState::of(K)->Device.lock() != S)
    return Status(ErrorCode::InvalidArgument,
                  "launch: kernel '" + K.name() + "' belongs to another device");
  PreparedLaunch L;
  if (Status E = prepareLaunch(L, K, CubeCount, Args); !E.ok())
    return E;
  DeferCallbacks Defer; // debug text reaches its handler after Life
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  if (S->Closed)
    return closedDevice();
  return runLaunch(*S, L);
}

Status detail::runLaunch(DeviceState &D, const PreparedLaunch &P,
                         LaunchStop *Stop, const StreamState *From) {
  Executor &Exec = D.Dev->executor();
  LaunchScope Launching({&D, From});
  llvm::Error E = llvm::Error::success();
  {
    std::optional<Watchdog::Scope> Deadline;
    if (Stop && P.TimeoutMilliseconds)
      Deadline.emplace(Exec.watchdog(), *Stop,
                       std::chrono::milliseconds(P.TimeoutMilliseconds));
    if (P.IndirectCount) {
      // Read now, after the work before it; the executor checks the count
      // (the bindings again too: one check, for a launch that is not hot).
      std::array<uint32_t, 3> Count;
      std::memcpy(Count.data(), P.IndirectCount, sizeof(Count));
      E = Exec.launch(P.Code, Count, P.Bindings, P.Code.bufferAlignment(),
                      /*Validated=*/false, Stop);
    } else {
      E = Exec.launch(P.Code, P.CubeCount, P.Bindings,
                      P.Code.bufferAlignment(), /*Validated=*/true, Stop);
    }
  }
  // A deadline stops this launch only (the stream's failure skips the
  // rest): cleared here, also when it passed just as the launch ended.
  bool TimedOut = Stop && Stop->clear(LaunchStop::Reason::TimedOut);
  if (!E || !Stop || !(TimedOut || Stop->stopped()))
    return statusOf(std::move(E), ErrorCode::InvalidLaunch);
  llvm::consumeError(std::move(E));
  std::string Kernel = "launch of kernel '" + P.Code.metadata().KernelName +
                       "' ";
  const char *Unspecified =
      "; the buffers it may write hold unspecified contents";
  if (TimedOut)
    return Status(ErrorCode::Cancelled,
                  Kernel + "was stopped at the stream's launch timeout of " +
                      std::to_string(P.TimeoutMilliseconds) + " ms" +
                      Unspecified);
  return Status(ErrorCode::Cancelled,
                Kernel + "was stopped: the stream was cancelled" +
                    Unspecified);
}

Status detail::prepareIndirect(PreparedLaunch &P, const BufferView &V,
                               const char *Fn) {
  const std::shared_ptr<BufferState> &B = BufferState::of(V.buffer());
  auto Bad = [&](const std::string &Why) {
    return Status(ErrorCode::InvalidArgument,
                  std::string(Fn) + ": the cube count view " + Why);
  };
  if (!B)
    return Bad("has a null buffer");
  if (V.type() != ElementType::scalar(ScalarType::U32) || V.count() < 3)
    return Bad("must hold at least 3 u32 (x, y, z), not " +
               std::to_string(V.count()) + " " + V.type().str());
  if (V.byteOffset() > B->Size || 12 > B->Size - V.byteOffset())
    return Bad("does not fit in its buffer of " + std::to_string(B->Size) +
               " bytes");
  if (reinterpret_cast<uintptr_t>(V.data()) % 4)
    return Bad("is not 4-byte aligned");
  P.IndirectCount = static_cast<const uint32_t *>(V.data());
  P.Keep.push_back(B);
  return Status();
}

Status api::Device::launchIndirect(const api::Kernel &K,
                                   const BufferView &CubeCounts,
                                   std::span<const Arg> Args) {
  if (!S)
    return nullDevice("launchIndirect");
  if (K.valid() && KernelState::of(K)->Device.lock() != S)
    return Status(ErrorCode::InvalidArgument,
                  "launchIndirect: kernel '" + K.name() +
                      "' belongs to another device");
  PreparedLaunch L;
  if (Status E = prepareLaunch(L, K, {1, 1, 1}, Args); !E.ok())
    return E;
  if (Status E = prepareIndirect(L, CubeCounts, "launchIndirect"); !E.ok())
    return E;
  DeferCallbacks Defer; // debug text reaches its handler after Life
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  if (S->Closed)
    return closedDevice();
  return runLaunch(*S, L);
}

//===-- Launch preparation ------------------------------------------------===//

Status detail::prepareLaunch(PreparedLaunch &P, const api::Kernel &K,
                             Dim3 CubeCount, std::span<const Arg> Args) {
  const std::shared_ptr<KernelState> &KS = KernelState::of(K);
  if (!KS)
    return Status(ErrorCode::InvalidArgument,
                  "launch of a null kernel handle");
  const std::string &Name = KS->IR.Name;
  auto Bad = [&](size_t I, const std::string &Why) {
    std::string Param =
        I < KS->Params.size() ? " (%" + KS->Params[I].Name + ")" : "";
    return Status(ErrorCode::InvalidLaunch, "launch of kernel '" + Name +
                                                "': argument " +
                                                std::to_string(I) + Param +
                                                ": " + Why);
  };

  P.CubeCount = {CubeCount.X, CubeCount.Y, CubeCount.Z};
  bool Aligned64 = true, MayAlias = false;
  struct Range {
    uintptr_t Begin, End;
    size_t Arg;
  };
  llvm::SmallVector<Range, 8> Ranges;
  for (size_t I = 0; I != Args.size(); ++I) {
    const Arg &A = Args[I];
    if (!isValidType(A.type()))
      return Bad(I, "its element type is not one the IR has");
    if (!A.isBuffer())
      continue;
    const BufferView &V = A.view();
    const std::shared_ptr<BufferState> &B = BufferState::of(V.buffer());
    if (!B)
      return Bad(I, "the view's buffer is null");
    unsigned Size = V.type().sizeInBytes();
    uint64_t Bytes = V.count() * Size;
    if ((Size && V.count() > UINT64_MAX / Size) || V.byteOffset() > B->Size ||
        Bytes > B->Size - V.byteOffset())
      return Bad(I, "a view of " + std::to_string(V.count()) + " elements of " +
                        V.type().str() + " at byte offset " +
                        std::to_string(V.byteOffset()) +
                        " does not fit in its buffer of " +
                        std::to_string(B->Size) + " bytes");
    uintptr_t Address = reinterpret_cast<uintptr_t>(V.data());
    if (Address % V.type().alignment())
      return Bad(I, "the view's address (byte offset " +
                        std::to_string(V.byteOffset()) +
                        ") is not a multiple of " + V.type().str() +
                        "'s alignment, " +
                        std::to_string(V.type().alignment()) + " bytes");
    if (Address % 64)
      Aligned64 = false;
    if (Bytes)
      Ranges.push_back({Address, Address + Bytes, I});
    P.Keep.push_back(B);
  }
  // Overlapping views where the kernel may write one of them need the code
  // compiled without the assumption that buffers never alias.
  for (size_t I = 0; I < Ranges.size() && !MayAlias; ++I)
    for (size_t J = I + 1; J < Ranges.size(); ++J) {
      if (Ranges[I].Begin >= Ranges[J].End || Ranges[J].Begin >= Ranges[I].End)
        continue;
      auto Writes = [&](size_t Arg) {
        return Arg < KS->Params.size() &&
               KS->Params[Arg].BufferAccess != Access::Read;
      };
      if (Writes(Ranges[I].Arg) || Writes(Ranges[J].Arg)) {
        MayAlias = true;
        break;
      }
    }

  Result<LoadedKernel> Code = KS->variant(variantIndex(Aligned64, MayAlias));
  if (!Code.ok())
    return Code.status();
  P.Code = std::move(*Code);

  P.Bindings.reserve(Args.size());
  for (const Arg &A : Args) {
    if (A.isBuffer()) {
      ArgBinding Binding =
          ArgBinding::buffer(A.view().data(), irType(A.view().type()),
                             A.view().count(), irAccess(A.access()));
      if (A.hasShape())
        Binding = Binding.withShape(
            llvm::ArrayRef<uint64_t>(A.shape().data(), A.shape().size()),
            llvm::ArrayRef<uint64_t>(A.strides().data(), A.strides().size()));
      if (A.hasBox())
        Binding = Binding.withBox(
            llvm::ArrayRef<uint64_t>(A.box().data(), A.box().size()));
      if (A.hasIm2col())
        Binding =
            Binding.withIm2col(llvm::ArrayRef<int64_t>(A.im2colLower().data(),
                                                       A.im2colLower().size()),
                               llvm::ArrayRef<int64_t>(A.im2colUpper().data(),
                                                       A.im2colUpper().size()),
                               A.channelsPerPixel(), A.pixelsPerColumn());
      P.Bindings.push_back(Binding);
    } else
      P.Bindings.push_back(ArgBinding::value(irType(A.type()), A.valueBytes(),
                                             A.valueSize()));
  }
  if (llvm::Error E = validateLaunch(P.Code.metadata(), P.CubeCount,
                                     P.Bindings, P.Code.bufferAlignment()))
    return statusOf(std::move(E), ErrorCode::InvalidLaunch);
  return Status();
}
