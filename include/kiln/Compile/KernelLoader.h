//===- KernelLoader.h - Serve kernels: memory, store, or compile -*- C++
//-*-===//
//
// The server-side orchestrator (docs/Design.md §1, §3). For each kernel:
//   in-memory map → Target.stored → compile (lower, storedForSource when the
//   lowered kernel has a source, finalize) → Target.load → Target.store.
// The batch entry point compiles every miss in parallel (lower and finalize on
// TBB workers), then loads and stores them one by one on the calling thread,
// in request order.
//
// Thread safety: get and getBatch may be called from several threads at once.
// The map and every call into the target happen under one mutex, so the
// target only ever sees one thread at a time (its "server thread"); the
// compilations happen outside it. A kernel another call is already compiling
// is not compiled again: the second caller waits for the first one's result
// (a per-id in-flight future).
//
// Kernels of one batch that lower to the same source (ArtifactCompiler's
// optional `source`) are each finalized: none of them is stored before the
// batch's loads. A later batch reuses the artifact through storedForSource.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_KERNELLOADER_H
#define KILN_COMPILE_KERNELLOADER_H

#include "kiln/Compile/Compiler.h"
#include "kiln/Compile/SharedError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <variant>
#include <vector>

namespace kiln {

/// How getBatch compiles.
struct BatchOptions {
  /// Compile threads; 0 means all cores (TBB's default concurrency), and
  /// more than that is capped to it.
  unsigned Threads = 0;
  /// Called with (done, total) where total is the number of distinct kernels
  /// in the batch: once after memory and store hits are served (done = the
  /// hits), then once per kernel compiled or failed, and the last call has
  /// done == total. Calls never overlap (they are serialised by a mutex) but
  /// may come from worker threads.
  std::function<void(size_t Done, size_t Total)> Progress;
};

/// How a loader reports. The loader itself never prints: what it has to say
/// goes to these sinks, when set.
struct LoaderOptions {
  /// Receives each kernel's log on the server thread, in request order.
  std::function<void(const CompilationLogger &)> LogSink;
  /// Receives each warning (a stored artifact that did not load, a dump
  /// that could not be written), on the server thread.
  std::function<void(llvm::StringRef)> WarningSink;
  /// Where each compilation's texts (IR, LLVM IR, assembly) are written, in
  /// a folder per kernel; "" (the default): not recorded at all.
  std::string DumpDir;
};

template <CompilationTarget T> class KernelLoader {
public:
  using Compiler = CompilerOf<T>;
  using Source = SourceOf<T>;
  using Variant = VariantOf<T>;
  using Lowered = typename Compiler::Lowered;
  using Artifact = ArtifactOf<T>;
  using Loaded = typename T::Loaded;
  using Id = IdOf<T>;

  /// One kernel of a batch. \p Src must outlive the getBatch call.
  struct Request {
    Id Key;
    const Source *Src = nullptr;
  };

  /// A loader over \p Target, which must outlive it.
  explicit KernelLoader(T &Target, LoaderOptions Options = {})
      : Target(Target), Options(std::move(Options)) {}

  /// The loaded kernel for \p Key, compiling \p Src if needed. A failure
  /// carries the compiler's diagnostic (a DiagnosticError stays one).
  llvm::Expected<Loaded> get(const Id &Key, const Source &Src) {
    Request R{Key, &Src};
    return std::move(getBatch(llvm::ArrayRef<Request>(R))[0]);
  }

  /// The loaded kernels for \p Requests, in request order. Duplicate ids are
  /// compiled once and share the result (a failure is reported to each). A
  /// kernel that fails to compile fails alone. Results and logs do not
  /// depend on the thread count.
  std::vector<llvm::Expected<Loaded>> getBatch(llvm::ArrayRef<Request> Requests,
                                               const BatchOptions &Opts = {});

  /// What the loader did so far.
  LoaderStatistics statistics() const {
    std::lock_guard<std::mutex> Lock(M);
    return Stats;
  }
  /// How many kernels are loaded in memory.
  size_t loadedCount() const {
    std::lock_guard<std::mutex> Lock(M);
    return LoadedMap.size();
  }
  /// Drops the loaded kernel \p Key (it stays alive while callers hold
  /// copies); whether it was loaded.
  bool erase(const Id &Key) {
    std::lock_guard<std::mutex> Lock(M);
    return LoadedMap.erase(Key) != 0;
  }
  /// Drops every loaded kernel (they stay alive while callers hold copies).
  void clear() {
    std::lock_guard<std::mutex> Lock(M);
    LoadedMap.clear();
  }

private:
  using Outcome = std::variant<Loaded, SharedError>;

  /// One distinct kernel of a batch.
  struct Slot {
    Id Key;
    const Source *Src = nullptr;
    std::optional<Outcome> Result;
    std::optional<std::shared_future<Outcome>>
        Wait;                                     ///< compiled by another call
    std::optional<std::promise<Outcome>> Promise; ///< ours to fulfil
    CompilationLogger Log;
    bool Logged = false;
  };

  /// What a compile task hands back: no state shared between tasks.
  struct Compiled {
    std::optional<Lowered> Low; ///< lowered, waiting for the source stage
    std::optional<std::string> SrcText; ///< its source, when it has one
    std::optional<Artifact> Art;
    std::optional<SharedError> Error;
    std::string DumpWarning;
  };

  void warn(const llvm::Twine &Message) {
    if (Options.WarningSink)
      Options.WarningSink(Message.str());
  }

  void finish(Slot &S, Outcome O) {
    if (S.Promise) {
      S.Promise->set_value(O);
      InFlight.erase(S.Key);
      S.Promise.reset();
    }
    S.Result = std::move(O);
  }

  /// Loads a freshly made artifact and keeps it; the slot's outcome.
  void loadAndStore(Slot &S, Artifact Art, std::optional<llvm::StringRef> Src,
                    ServedKind Served) {
    llvm::Expected<Loaded> L = [&] {
      auto P = S.Log.time("load");
      return Target.load(S.Key, Art);
    }();
    if (!L) {
      S.Log.setServed(ServedKind::Failed);
      finish(S, SharedError(L.takeError()));
      return;
    }
    {
      auto P = S.Log.time("store");
      Target.store(S.Key, std::move(Art), Src);
    }
    S.Log.setServed(Served);
    LoadedMap.insert_or_assign(S.Key, *L);
    finish(S, std::move(*L));
  }

  void runTasks(unsigned Threads, size_t Count,
                const std::function<void(size_t)> &Task) {
    if (Count == 0)
      return;
    // TBB never runs more workers than cores unless a global_control says
    // so (a process-wide choice left to the embedder): cap rather than warn.
    unsigned Cores = static_cast<unsigned>(tbb::info::default_concurrency());
    if (Threads == 0 || Threads > Cores)
      Threads = Cores;
    if (Threads <= 1 || Count == 1) {
      for (size_t I = 0; I != Count; ++I)
        Task(I);
      return;
    }
    tbb::task_arena Arena(static_cast<int>(Threads));
    Arena.execute([&] {
      tbb::task_group G;
      for (size_t I = 0; I != Count; ++I)
        G.run([&Task, I] { Task(I); });
      G.wait();
    });
  }

  void emitLog(Slot &S) {
    if (S.Logged)
      return;
    S.Logged = true;
    Stats.add(S.Log);
    if (Options.LogSink)
      Options.LogSink(S.Log);
  }

  T &Target;
  LoaderOptions Options;
  mutable std::mutex M;
  std::unordered_map<Id, Loaded> LoadedMap;
  std::unordered_map<Id, std::shared_future<Outcome>> InFlight;
  LoaderStatistics Stats;
};

template <CompilationTarget T>
std::vector<llvm::Expected<typename T::Loaded>>
KernelLoader<T>::getBatch(llvm::ArrayRef<Request> Requests,
                          const BatchOptions &Opts) {
  std::vector<Slot> Slots;
  std::vector<size_t> SlotOf(Requests.size());
  std::vector<size_t> Misses; // slot indices, in request order
  size_t Done = 0;
  {
    std::lock_guard<std::mutex> Lock(M);
    std::unordered_map<Id, size_t> Seen;
    for (size_t I = 0; I != Requests.size(); ++I) {
      const Request &R = Requests[I];
      auto [It, New] = Seen.try_emplace(R.Key, Slots.size());
      SlotOf[I] = It->second;
      if (!New)
        continue;
      Slot &S = Slots.emplace_back();
      S.Key = R.Key;
      S.Src = R.Src;
      S.Log = CompilationLogger(R.Key.str());
    }
    for (size_t SI = 0; SI != Slots.size(); ++SI) {
      Slot &S = Slots[SI];
      if (auto L = LoadedMap.find(S.Key); L != LoadedMap.end()) {
        S.Log.setServed(ServedKind::MemoryHit);
        S.Result = L->second;
        ++Done;
        continue;
      }
      if (auto F = InFlight.find(S.Key); F != InFlight.end()) {
        S.Wait = F->second;
        continue;
      }
      S.Promise.emplace();
      InFlight.emplace(S.Key, S.Promise->get_future().share());
      std::optional<Artifact> Stored = [&] {
        auto P = S.Log.time("store-read");
        return Target.stored(S.Key);
      }();
      if (Stored) {
        llvm::Expected<Loaded> L = [&] {
          auto P = S.Log.time("load");
          return Target.load(S.Key, *Stored);
        }();
        if (L) {
          S.Log.setServed(ServedKind::StoreHit);
          LoadedMap.insert_or_assign(S.Key, *L);
          finish(S, std::move(*L));
          ++Done;
          continue;
        }
        // A stored artifact the device refuses is stale: drop it, compile.
        warn("stored artifact for " + S.Key.str() + " did not load (" +
                     llvm::toString(L.takeError()) + "); compiling it again");
        discardStored(Target, S.Key);
      }
      if (!S.Src) {
        S.Log.setServed(ServedKind::Failed);
        finish(S, SharedError(llvm::createStringError(
                      std::make_error_code(std::errc::invalid_argument),
                      "no source given for kernel " + S.Key.str())));
        ++Done;
        continue;
      }
      Misses.push_back(SI);
    }
  }

  const size_t Total = Slots.size();
  std::mutex ProgressM;
  auto progress = [&](bool Step) {
    if (!Opts.Progress)
      return;
    std::lock_guard<std::mutex> Lock(ProgressM);
    if (Step)
      ++Done;
    Opts.Progress(Done, Total);
  };
  if (Total)
    progress(false);

  // Compile every miss: lower, and finalize right away unless the lowered
  // kernel names a source the store may already hold an artifact for.
  const Compiler &C = Target.compiler();
  std::vector<Compiled> Out(Misses.size());
  runTasks(Opts.Threads, Misses.size(), [&](size_t I) {
    Slot &S = Slots[Misses[I]];
    Compiled &R = Out[I];
    CompilationRecording Rec(!Options.DumpDir.empty());
    llvm::Expected<Lowered> L = [&] {
      auto P = S.Log.time("lower");
      return C.lower(*S.Src, S.Key, Rec, S.Log);
    }();
    if (llvm::Error E = Rec.dumpIfRequested(Options.DumpDir, S.Key.Kernel.str()))
      R.DumpWarning = llvm::toString(std::move(E));
    if (!L) {
      R.Error.emplace(L.takeError());
      progress(true);
      return;
    }
    if (std::optional<llvm::StringRef> Src = loweredSource<Compiler>(*L)) {
      R.SrcText = Src->str();
      R.Low.emplace(std::move(*L));
      return;
    }
    llvm::Expected<Artifact> A = [&] {
      auto P = S.Log.time("finalize");
      return C.finalize(S.Key, std::move(*L));
    }();
    if (A)
      R.Art.emplace(std::move(*A));
    else
      R.Error.emplace(A.takeError());
    progress(true);
  });

  // Kernels with a source: reuse an artifact kept for it, else finalize.
  std::vector<size_t> ToFinalize;
  std::vector<bool> FromSource(Misses.size(), false);
  {
    std::lock_guard<std::mutex> Lock(M);
    for (size_t I = 0; I != Misses.size(); ++I) {
      if (!Out[I].Low)
        continue;
      if (std::optional<Artifact> A =
              storedForSourceOf(Target, *Out[I].SrcText)) {
        Out[I].Art.emplace(std::move(*A));
        Out[I].Low.reset();
        FromSource[I] = true;
        progress(true);
      } else {
        ToFinalize.push_back(I);
      }
    }
  }
  runTasks(Opts.Threads, ToFinalize.size(), [&](size_t J) {
    size_t I = ToFinalize[J];
    Slot &S = Slots[Misses[I]];
    Compiled &R = Out[I];
    llvm::Expected<Artifact> A = [&] {
      auto P = S.Log.time("finalize");
      return C.finalize(S.Key, std::move(*R.Low));
    }();
    R.Low.reset();
    if (A)
      R.Art.emplace(std::move(*A));
    else
      R.Error.emplace(A.takeError());
    progress(true);
  });

  // Load and store on this thread, in request order.
  {
    std::lock_guard<std::mutex> Lock(M);
    for (size_t I = 0; I != Misses.size(); ++I) {
      Slot &S = Slots[Misses[I]];
      Compiled &R = Out[I];
      if (!R.DumpWarning.empty())
        warn("cannot dump the compilation of " + S.Key.str() + ": " +
                     R.DumpWarning);
      if (R.Error) {
        S.Log.setServed(ServedKind::Failed);
        finish(S, std::move(*R.Error));
        continue;
      }
      std::optional<llvm::StringRef> Src;
      if (R.SrcText)
        Src = *R.SrcText;
      loadAndStore(S, std::move(*R.Art), Src,
                   FromSource[I] ? ServedKind::SourceHit
                                 : ServedKind::Compiled);
    }
    for (Slot &S : Slots)
      if (!S.Wait)
        emitLog(S);
  }

  // Kernels another call was compiling: wait for its result.
  for (Slot &S : Slots)
    if (S.Wait) {
      S.Result = S.Wait->get();
      progress(true);
    }

  std::vector<llvm::Expected<Loaded>> Results;
  Results.reserve(Requests.size());
  for (size_t I = 0; I != Requests.size(); ++I) {
    const Outcome &O = *Slots[SlotOf[I]].Result;
    if (const Loaded *L = std::get_if<Loaded>(&O))
      Results.emplace_back(*L);
    else
      Results.emplace_back(std::get<SharedError>(O).make());
  }
  return Results;
}

} // namespace kiln

#endif // KILN_COMPILE_KERNELLOADER_H
