//===- JITLinker.cpp - Link compiled kernel objects into the process ------===//

#include "kiln/CPU/JITLinker.h"
#include "PerfMap.h"
#include "kiln/CPU/DebugPrint.h"
#include "kiln/CPU/HostInfo.h"

#include "TargetArch.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"
#include "llvm/ExecutionEngine/Orc/ObjectFileInterface.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/Orc/TaskDispatch.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <atomic>
#include <mutex>

using namespace kiln;
using namespace llvm;
using namespace llvm::orc;

namespace kiln::detail {

/// One JITDylib of the pool and the symbols its loaded objects define.
struct Dylib {
  JITDylib *JD;
  DenseSet<SymbolStringPtr> Defined;
};

struct LinkerState {
  std::unique_ptr<ExecutionSession> ES;
  std::unique_ptr<ObjectLinkingLayer> Layer;
  std::vector<Dylib> Pool;
  size_t Loaded = 0;
  char GlobalPrefix = '\0';
  /// Guards Pool and Loaded: releases may come from any thread.
  std::mutex Lock;
  /// What the session's error reporter said during the current load.
  std::mutex ReportLock;
  std::string Reported;

  /// Errors of unloading a kernel (removing its tracker): there is no
  /// caller to hand them to, and the library writes nothing to stderr, so
  /// they are counted (releaseFailures()).
  std::atomic<uint64_t> ReleaseFailures{0};

  ~LinkerState() {
    // Ending the session frees every JITDylib; an error here has no one to
    // go to, and the process is giving the memory back anyway.
    if (ES)
      consumeError(ES->endSession());
    Layer.reset();
    ES.reset();
  }

  std::string takeReported() {
    std::lock_guard<std::mutex> G(ReportLock);
    return std::exchange(Reported, std::string());
  }

  Expected<size_t> addDylib() {
    std::string Name = "kiln.kernels." + std::to_string(Pool.size());
    auto JD = ES->createJITDylib(Name);
    if (!JD)
      return JD.takeError();
    auto Gen =
        DynamicLibrarySearchGenerator::GetForCurrentProcess(GlobalPrefix);
    if (!Gen)
      return Gen.takeError();
    JD->addGenerator(std::move(*Gen));
    // The runtime functions kernels call (debug_print): this process's
    // copies, found by name at link time like libm's.
    std::string PrintName = debugPrintSymbol();
    if (GlobalPrefix)
      PrintName.insert(PrintName.begin(), GlobalPrefix);
    SymbolMap Runtime;
    Runtime[ES->intern(PrintName)] = {
        ExecutorAddr::fromPtr(&kiln_debug_print),
        JITSymbolFlags::Exported | JITSymbolFlags::Callable};
    if (Error E = JD->define(absoluteSymbols(std::move(Runtime))))
      return E;
    Pool.push_back({&*JD, {}});
    return Pool.size() - 1;
  }
};

/// The owner of one loaded object: its removal is the LoadedKernel's
/// "last copy goes" event. State is declared first so that it is destroyed
/// last: the session outlives the tracker.
struct KernelCode {
  std::shared_ptr<LinkerState> State;
  ResourceTrackerSP Tracker;
  size_t DylibIndex;
  std::vector<SymbolStringPtr> Symbols;

  ~KernelCode() {
    std::lock_guard<std::mutex> G(State->Lock);
    if (Error E = Tracker->remove()) {
      consumeError(std::move(E));
      State->ReleaseFailures.fetch_add(1, std::memory_order_relaxed);
    }
    for (const SymbolStringPtr &S : Symbols)
      State->Pool[DylibIndex].Defined.erase(S);
    --State->Loaded;
  }
};

} // namespace kiln::detail

using kiln::detail::KernelCode;
using kiln::detail::LinkerState;

static Error makeError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

JITLinker::JITLinker(std::shared_ptr<LinkerState> State)
    : State(std::move(State)) {}

JITLinker::~JITLinker() = default;

Expected<std::unique_ptr<JITLinker>> JITLinker::create() {
  initializeNativeTarget();
  // Vectorised math calls (_ZGVdN8v_expf) resolve from the target's vector
  // library, libmvec on x86-64 (docs/Design.md §10.7); a host without it
  // simply gets no vector math.
  if (const TargetArch *Arch = targetArchFor(Triple(sys::getProcessTriple())))
    if (!Arch->vectorLibraryFile().empty()) {
      std::string Ignored;
      sys::DynamicLibrary::LoadLibraryPermanently(
          Arch->vectorLibraryFile().str().c_str(), &Ignored);
    }

  auto State = std::make_shared<LinkerState>();
  // In-place dispatch: linking runs on the thread that asks for a symbol,
  // never on an ORC thread pool (docs/Design.md §10.8).
  auto EPC = SelfExecutorProcessControl::Create(
      nullptr, std::make_unique<InPlaceTaskDispatcher>());
  if (!EPC)
    return EPC.takeError();
  State->ES = std::make_unique<ExecutionSession>(std::move(*EPC));
  LinkerState *Raw = State.get();
  // Without a reporter, lookups only say "Failed to materialize symbols"
  // (docs/Design.md §10.10): keep what was reported for the load's error.
  State->ES->setErrorReporter([Raw](Error E) {
    std::string Msg = toString(std::move(E));
    std::lock_guard<std::mutex> G(Raw->ReportLock);
    if (!Raw->Reported.empty())
      Raw->Reported += "; ";
    Raw->Reported += Msg;
  });
  State->Layer = std::make_unique<ObjectLinkingLayer>(*State->ES);
  if (perfMapRequested())
    State->Layer->addPlugin(createPerfMapPlugin());
  State->GlobalPrefix =
      Triple(sys::getProcessTriple()).isOSBinFormatMachO() ? '_' : '\0';
  if (auto Idx = State->addDylib(); !Idx)
    return Idx.takeError();
  return std::unique_ptr<JITLinker>(new JITLinker(std::move(State)));
}

Expected<LoadedKernel> JITLinker::load(ArrayRef<char> Object,
                                       const CubeMetadata &Metadata) {
  LinkerState &S = *State;
  if (Metadata.Symbol.empty())
    return makeError("kernel metadata names no cube function symbol");
  auto Buffer = MemoryBuffer::getMemBufferCopy(
      StringRef(Object.data(), Object.size()), Metadata.KernelName);
  auto Interface = getObjectFileInterface(*S.ES, Buffer->getMemBufferRef());
  if (!Interface)
    return makeError("cannot link the object of kernel '" +
                     Metadata.KernelName +
                     "': " + toString(Interface.takeError()));
  std::string Mangled = Metadata.Symbol;
  if (S.GlobalPrefix)
    Mangled.insert(Mangled.begin(), S.GlobalPrefix);
  SymbolStringPtr Entry = S.ES->intern(Mangled);
  if (!Interface->SymbolFlags.count(Entry))
    return makeError("the object of kernel '" + Metadata.KernelName +
                     "' does not define its cube function '" + Metadata.Symbol +
                     "'");
  std::vector<SymbolStringPtr> Symbols;
  for (const auto &KV : Interface->SymbolFlags)
    Symbols.push_back(KV.first);

  std::unique_lock<std::mutex> G(S.Lock);
  // The first JITDylib where nothing of this object is defined yet.
  size_t Index = S.Pool.size();
  for (size_t I = 0; I < S.Pool.size(); ++I) {
    bool Clash = false;
    for (const SymbolStringPtr &Sym : Symbols)
      Clash |= S.Pool[I].Defined.contains(Sym);
    if (!Clash) {
      Index = I;
      break;
    }
  }
  if (Index == S.Pool.size()) {
    auto NewIndex = S.addDylib();
    if (!NewIndex)
      return NewIndex.takeError();
    Index = *NewIndex;
  }
  JITDylib &JD = *S.Pool[Index].JD;
  ResourceTrackerSP Tracker = JD.createResourceTracker();
  S.takeReported();
  if (Error E = S.Layer->add(Tracker, std::move(Buffer), std::move(*Interface)))
    return makeError("cannot link the object of kernel '" +
                     Metadata.KernelName + "': " + toString(std::move(E)));
  for (const SymbolStringPtr &Sym : Symbols)
    S.Pool[Index].Defined.insert(Sym);
  ++S.Loaded;
  // From here on the tracker is owned: a failed lookup releases it.
  auto Code = std::make_shared<KernelCode>();
  Code->State = State;
  Code->Tracker = Tracker;
  Code->DylibIndex = Index;
  Code->Symbols = std::move(Symbols);
  G.unlock();

  auto Sym = S.ES->lookup({&JD}, Entry);
  if (!Sym) {
    std::string Why = toString(Sym.takeError());
    std::string Reported = S.takeReported();
    if (!Reported.empty())
      Why += ": " + Reported;
    return makeError("cannot link kernel '" + Metadata.KernelName +
                     "': " + Why);
  }
  auto Fn = Sym->getAddress().toPtr<CubeFunction>();
  return LoadedKernel(Fn, std::make_shared<const CubeMetadata>(Metadata),
                      std::shared_ptr<void>(std::move(Code)));
}

size_t JITLinker::loadedCount() const {
  std::lock_guard<std::mutex> G(State->Lock);
  return State->Loaded;
}

uint64_t JITLinker::releaseFailures() const {
  return State->ReleaseFailures.load(std::memory_order_relaxed);
}

size_t JITLinker::dylibCount() const {
  std::lock_guard<std::mutex> G(State->Lock);
  return State->Pool.size();
}
