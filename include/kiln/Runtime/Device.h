//===- Device.h - The CPU device: compile, load and launch kernels -*- C++ -*-===//
//
// The facade a GPU runtime uses: a RuntimeDevice turns kernels into
// LoadedKernels through a KernelLoader over the CPU backend
// (kiln/CPU/CpuBackend.h): from its in-memory map, from the persistent store,
// or by compiling them (alone, or as one parallel batch), and launches them on
// its executor. No LLVM type appears here; errors are llvm::Error values.
//
// Thread safety: every member may be called from several threads at once.
// getKernel() and getKernels() serve memory hits without waiting for another
// thread's compilation; a kernel another call is compiling is waited for
// (the loader's per-id in-flight compile), not compiled twice.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DEVICE_H
#define KILN_RUNTIME_DEVICE_H

#include "kiln/CPU/CubeMetadata.h"
#include "kiln/CPU/LoadedKernel.h"
#include "kiln/Compile/Logger.h"
#include "kiln/Compile/Recording.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Kernel.h"
#include "kiln/Runtime/Launch.h"
#include "kiln/Store/RemoteTier.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class StoreWarnings;

/// Which persistent store a device uses.
enum class DeviceStoreMode {
  Environment, ///< KILN_CACHE decides (the default)
  Off,         ///< none: kernels are kept in memory only
  ReadWrite,   ///< read and write, whatever KILN_CACHE says
  ReadOnly,    ///< serve stored kernels, never write
};

struct DeviceOptions {
  DeviceLimits Limits;
  unsigned OptLevel = 3;  ///< 0..3
  /// Launch concurrency; 0 = all cores, more than the cores is capped to
  /// them; above Executor::MaxThreads, create() fails.
  unsigned Threads = 0;
  std::string CPU;        ///< empty = the host CPU (CodeGenOptions)
  std::string Features;   ///< `-mattr`-style overrides; empty = host
  /// The store root; empty = the default environment's (KILN_CACHE_DIR, else
  /// $XDG_CACHE_HOME/kiln, else ~/.cache/kiln, read once per process). The
  /// device owns its store: nothing another device or thread does changes
  /// it.
  std::string StoreDir;
  DeviceStoreMode StoreMode = DeviceStoreMode::Environment;
  /// The remote tier behind the store (docs/Store.md, "The remote tier").
  /// nullopt: the environment's (KILN_REMOTE, KILN_REMOTE_KEY, ...); a
  /// config with an empty Url: none. A tier that cannot be made (no key
  /// file, a bad address) is one warning, and the device runs without it.
  std::optional<RemoteConfig> Remote;
  /// Receives each store warning (a bad entry removed, a store that cannot
  /// be written) besides the device's count (storeWarnings()). Empty: the
  /// warning is only counted; the library never prints. The tools pass
  /// printWarningToStderr (kiln/Store/Environment.h).
  std::function<void(llvm::StringRef)> WarningSink;
  /// Receives one line per kernel served ("kiln: KERNEL: compiled (lower
  /// 1.20 ms, ...)"), in request order. Empty: none. The tools print them
  /// when KILN_LOG=1.
  std::function<void(llvm::StringRef)> KernelLogSink;
  /// Where each compilation's IR, LLVM IR and assembly are written (a
  /// folder per kernel); the default is KILN_DUMP, read once per process;
  /// "": not recorded.
  std::string DumpDir = CompilationRecording::defaultDumpDir();
  /// Compile threads of getKernels(); 0 = all cores, more than the cores is
  /// capped to them; above Executor::MaxThreads, create() fails.
  unsigned BatchThreads = 0;
  /// How long the launch threads stay awake after a launch (Executor).
  unsigned KeepWarmMicroseconds = Executor::DefaultKeepWarmMicroseconds;
  /// The least work a launch gives each thread (Executor); 0: every launch
  /// uses every thread.
  unsigned MinWorkPerThreadMicroseconds = Executor::DefaultMinWorkPerThread;
};

/// Where getKernel() found its kernel.
enum class KernelProvenance {
  Memory,   ///< the device's in-memory map
  Store,    ///< loaded from the persistent store: nothing compiled
  Compiled, ///< compiled (and linked) by this call
  Failed,   ///< an error; no kernel
};

/// How getKernel() got its kernel, and what each phase cost (seconds; zero
/// for a phase that did not run).
struct KernelStats {
  KernelProvenance Origin = KernelProvenance::Failed;
  bool Memoized = false; ///< Origin == Memory
  bool StoreHit = false; ///< Origin == Store
  /// A store hit answered by the remote tier (then written locally).
  bool RemoteHit = false;
  bool Compiled = false; ///< Origin == Compiled
  /// For a compiled kernel: whether the store took it (false without one).
  bool Stored = false;
  /// For a compiled kernel: whether the store holds it after this call:
  /// Stored, or refused because another writer (another process compiling
  /// the same kernel) kept it first. False when the store refused it
  /// otherwise (read-only, a full disk, a size limit) or there is none.
  bool InStore = false;
  /// Whether the device has a persistent store at all.
  bool HasStore = false;
  double LookupSeconds = 0;  ///< reading and decompressing the store entry
  double VerifySeconds = 0, LowerSeconds = 0, OptimizeSeconds = 0,
         CodegenSeconds = 0;
  double LinkSeconds = 0;  ///< JIT linking (a store hit or a compilation)
  double StoreSeconds = 0; ///< compressing and writing the entry
};

/// One kernel of getKernels(): the *parsed* kernel (verified by the
/// compilation), its variant, the file named in its diagnostics, and the
/// runtime's own id for it (empty: kernelIdFromIR).
struct KernelRequest {
  const IRKernel *K = nullptr;
  CpuVariant Variant{};
  std::string FileName;
  std::string Id;
  /// hashKernel(*K) when the caller has it already (a kernel handle asking
  /// for another variant): the kernel is then not printed and hashed again.
  std::optional<uint64_t> IRHash;
};

/// How getKernels() compiles.
struct KernelBatchOptions {
  /// Compile threads; 0 = DeviceOptions::BatchThreads.
  unsigned Threads = 0;
  /// Called with (done, total distinct kernels) as kernels are served: see
  /// kiln::BatchOptions. May be called from worker threads, never at once.
  std::function<void(size_t Done, size_t Total)> Progress;
};

/// The CPU device of the runtime layer. The public kiln::api::Device
/// (kiln/kiln.h) owns one and adds streams, events and buffer handles.
class RuntimeDevice {
public:
  /// Fails for options validateOptions refuses or a host without a JIT.
  static llvm::Expected<std::unique_ptr<RuntimeDevice>>
  create(DeviceOptions Opts = {});

  /// The checks create() makes of \p Opts before anything else, each error
  /// carrying std::errc::invalid_argument: an OptLevel above 3, Threads or
  /// BatchThreads above Executor::MaxThreads, and a CPU or Features that
  /// LLVM does not know, that are not x86-64, or that turn on an
  /// instruction-set feature the host lacks (checkRunsOnHost in
  /// kiln/CPU/CodeGen.h: the device runs what it compiles here).
  static llvm::Error validateOptions(const DeviceOptions &Opts);
  ~RuntimeDevice();

  const DeviceOptions &options() const;

  /// The compiled and linked form of kernel \p K for \p Variant. The first
  /// call for a (kernelIdFromIR(K), Variant) pair loads it from the store,
  /// or verifies and compiles it (lower, optimise, emit an object), links it
  /// and keeps it in the store; later calls return the same LoadedKernel
  /// until it is unloaded (unloadKernel). A kernel that does not
  /// verify is a DiagnosticError. \p Stats, when given, says what happened.
  llvm::Expected<LoadedKernel> getKernel(const IRKernel &K,
                                         const CpuVariant &Variant = {},
                                         KernelStats *Stats = nullptr);

  /// The same, with the runtime's own id \p KernelId for \p K (docs/LangRef.md
  /// §9.1: the id must change whenever the kernel does; the IR hash still
  /// guards the store against a reused id). An empty id is an error.
  llvm::Expected<LoadedKernel> getKernel(const IRKernel &K,
                                         llvm::StringRef KernelId,
                                         const CpuVariant &Variant,
                                         KernelStats *Stats = nullptr);

  /// Serves every request as one batch: memory and store hits first, then
  /// every miss compiled in parallel, loaded and stored in request order.
  /// Results (and \p Stats, when given) are in request order; a duplicate
  /// (same id and variant) is compiled once. A kernel that fails fails alone.
  std::vector<llvm::Expected<LoadedKernel>>
  getKernels(llvm::ArrayRef<KernelRequest> Requests,
             const KernelBatchOptions &Opts = {},
             std::vector<KernelStats> *Stats = nullptr);

  /// Forgets the loaded kernel (\p K under \p KernelId, empty: derived from
  /// the IR, with IR hash \p IRHash, for \p Variant): the next getKernel
  /// serves it from the store or compiles it. Copies of its LoadedKernel
  /// keep its code alive. Whether it was loaded.
  bool unloadKernel(const IRKernel &K, llvm::StringRef KernelId,
                    uint64_t IRHash, const CpuVariant &Variant);
  /// Kernels (id and variant pairs) held in memory.
  size_t loadedCount() const;
  /// What the device's loader did so far: kernels served from memory, from
  /// the store, compiled.
  LoaderStatistics loaderStatistics() const;

  /// Whether a persistent store is enabled (the store the options name, or
  /// the environment's when they name none).
  bool hasStore() const;
  /// The store folder of this device's namespace ("" without a store).
  std::string storeFolder();
  /// Whether the store can be used now (its folder made and trusted).
  bool storeUsable();
  /// The warnings of this device's store and loader: their count and the
  /// last few (what WarningSink was handed).
  const StoreWarnings &storeWarnings() const;
  /// storeWarnings().count() and .recent(), for callers above this layer.
  uint64_t warningCount() const;
  std::vector<std::string> recentWarnings() const;

  /// Runs every cube of a launch of \p Kernel (validated first: see
  /// validateLaunch, with the alignment the kernel's variant assumes) and
  /// returns when all are done. \p Stop, when given, ends it early
  /// (Executor::launch; its watchdog() sets deadlines).
  llvm::Error launch(const LoadedKernel &Kernel,
                     std::array<uint32_t, 3> CubeCount,
                     llvm::ArrayRef<ArgBinding> Args,
                     LaunchStop *Stop = nullptr);

  /// The launch executor (its concurrency, scratch statistics).
  Executor &executor();

private:
  struct Impl;
  explicit RuntimeDevice(std::unique_ptr<Impl> P);
  std::unique_ptr<Impl> P;
};

} // namespace kiln

#endif // KILN_RUNTIME_DEVICE_H
