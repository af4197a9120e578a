//===- Device.cpp - The CPU device: compile, load and launch kernels ------===//

#include "kiln/Runtime/Device.h"
#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/JITLinker.h"
#include "kiln/CPU/Lowering.h"
#include "kiln/IR/Hash.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <map>
#include <mutex>
#include <unordered_map>

using namespace kiln;
using llvm::Error;
using llvm::Expected;

namespace {
class Timer {
public:
  double lap() {
    auto Now = std::chrono::steady_clock::now();
    double S = std::chrono::duration<double>(Now - Last).count();
    Last = Now;
    return S;
  }

private:
  std::chrono::steady_clock::time_point Last = std::chrono::steady_clock::now();
};
} // namespace

struct Device::Impl {
  DeviceOptions Opts;
  std::unique_ptr<JITLinker> Linker;
  Executor Exec;
  /// Loaded kernels by "kernel id/variant".
  std::map<std::string, LoadedKernel> Kernels;
  /// The buffer alignment each loaded kernel's variant assumes, by its
  /// metadata (shared by every copy of a LoadedKernel).
  std::unordered_map<const CubeMetadata *, uint32_t> Alignments;
  std::mutex AlignmentsLock;

  Impl(DeviceOptions O, std::unique_ptr<JITLinker> L)
      : Opts(std::move(O)), Linker(std::move(L)), Exec(Opts.Threads) {}

  Expected<LoadedKernel> compileAndLoad(const Kernel &K,
                                        const CpuVariant &Variant,
                                        KernelStats &Stats);
};

/// Compiles \p K from scratch and links it. This is the one path from IR to
/// code: a kernel loader with a store plugs in here.
Expected<LoadedKernel> Device::Impl::compileAndLoad(const Kernel &K,
                                                    const CpuVariant &Variant,
                                                    KernelStats &Stats) {
  Timer T;
  llvm::LLVMContext Ctx;
  auto Lowered = lowerKernel(K, Variant, Opts.Limits, Ctx);
  if (!Lowered)
    return Lowered.takeError();
  Stats.LowerSeconds = T.lap();

  CodeGenOptions CG;
  CG.OptLevel = Opts.OptLevel;
  CG.CPU = Opts.CPU;
  CG.Features = Opts.Features;
  auto TM = createTargetMachine(CG);
  if (!TM)
    return TM.takeError();
  if (Error E = optimizeModule(*Lowered->Module, **TM, Opts.OptLevel))
    return E;
  Stats.OptimizeSeconds = T.lap();
  auto Object = emitObject(*Lowered->Module, **TM);
  if (!Object)
    return Object.takeError();
  Stats.CodegenSeconds = T.lap();
  Stats.Compiled = true;

  auto Loaded = Linker->load(*Object, Lowered->Metadata);
  if (!Loaded)
    return Loaded.takeError();
  Stats.LinkSeconds = T.lap();
  return Loaded;
}

Device::Device(std::unique_ptr<Impl> P) : P(std::move(P)) {}
Device::~Device() = default;

Expected<std::unique_ptr<Device>> Device::create(DeviceOptions Opts) {
  if (Opts.OptLevel > 3)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "optimisation level %u is out of range 0..3",
                                   Opts.OptLevel);
  auto Linker = JITLinker::create();
  if (!Linker)
    return Linker.takeError();
  return std::unique_ptr<Device>(
      new Device(std::make_unique<Impl>(std::move(Opts), std::move(*Linker))));
}

const DeviceOptions &Device::options() const { return P->Opts; }

Executor &Device::executor() { return P->Exec; }

Expected<LoadedKernel> Device::getKernel(const Kernel &K,
                                         const CpuVariant &Variant,
                                         KernelStats *Stats) {
  KernelStats Local;
  KernelStats &S = Stats ? *Stats : Local;
  S = KernelStats();
  std::string Key = kernelIdFromIR(K) + "/" + Variant.str();
  if (auto It = P->Kernels.find(Key); It != P->Kernels.end()) {
    S.Memoised = true;
    return It->second;
  }
  auto Loaded = P->compileAndLoad(K, Variant, S);
  if (!Loaded)
    return Loaded.takeError();
  {
    std::lock_guard<std::mutex> G(P->AlignmentsLock);
    P->Alignments[Loaded->metadataPtr().get()] = Variant.BufferAlignment;
  }
  P->Kernels.emplace(Key, *Loaded);
  return Loaded;
}

Error Device::launch(const LoadedKernel &Kernel,
                     std::array<uint32_t, 3> CubeCount,
                     llvm::ArrayRef<ArgBinding> Args) {
  uint32_t Alignment = 1;
  if (Kernel.valid()) {
    std::lock_guard<std::mutex> G(P->AlignmentsLock);
    if (auto It = P->Alignments.find(Kernel.metadataPtr().get());
        It != P->Alignments.end())
      Alignment = It->second;
  }
  return P->Exec.launch(Kernel, CubeCount, Args, Alignment);
}
