//===- Prepare.cpp - Kernel variants made ready ahead of launches ---------===//
//
// Kernel::prepare and Device::prepareKernels serve the variants a launch may
// pick (unaligned views, overlapping bindings) before any launch asks, as
// one getKernels batch: compiled in parallel, through the store. A launch
// then finds its variant Ready and never compiles; Device::counters shows
// it (LaunchLinks stays put).
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "kiln/Store/Environment.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::api;
using namespace kiln::api::detail;

/// The variant indices \p O names, besides the one every load links.
static llvm::SmallVector<unsigned, 3> variantsOf(const PrepareOptions &O) {
  llvm::SmallVector<unsigned, 3> V;
  if (O.Unaligned)
    V.push_back(variantIndex(/*Aligned64=*/false, /*MayAlias=*/false));
  if (O.MayAlias)
    V.push_back(variantIndex(/*Aligned64=*/true, /*MayAlias=*/true));
  if (O.Unaligned && O.MayAlias)
    V.push_back(variantIndex(/*Aligned64=*/false, /*MayAlias=*/true));
  return V;
}

static const char *variantName(unsigned Index) {
  switch (Index) {
  case 1:
    return "unaligned views";
  case 2:
    return "overlapping bindings";
  default:
    return "unaligned, overlapping bindings";
  }
}

/// Serves the variants \p O names of \p Kernels (handles of \p D) that are
/// not linked yet, as one batch.
static Status prepareVariants(DeviceState &D,
                              std::vector<KernelState *> Kernels,
                              const PrepareOptions &O) {
  llvm::SmallVector<unsigned, 3> Want = variantsOf(O);
  if (Want.empty() || Kernels.empty())
    return Status();
  // Life before the VariantsLocks, as KernelState::variant takes them; the
  // kernels' locks in address order, so that two batches naming the same
  // kernels in another order cannot deadlock.
  DeferCallbacks Defer; // warnings reach the sink after the locks
  std::shared_lock<std::shared_mutex> Alive(D.Life);
  if (D.Closed)
    return closedDevice();
  llvm::sort(Kernels);
  Kernels.erase(std::unique(Kernels.begin(), Kernels.end()), Kernels.end());
  std::vector<std::unique_lock<std::mutex>> Locks;
  Locks.reserve(Kernels.size());
  std::vector<KernelRequest> Requests;
  std::vector<std::pair<KernelState *, unsigned>> Slots;
  for (KernelState *K : Kernels) {
    Locks.emplace_back(K->VariantsLock);
    for (unsigned I : Want)
      if (!K->Ready[I].load(std::memory_order_relaxed)) {
        Requests.push_back(K->request(I));
        Slots.push_back({K, I});
      }
  }
  if (Requests.empty())
    return Status();
  std::vector<llvm::Expected<LoadedKernel>> Got =
      D.Dev->getKernels(Requests);
  Status First;
  for (size_t J = 0; J != Got.size(); ++J) {
    auto [K, I] = Slots[J];
    if (!Got[J]) {
      Status E = statusOf(Got[J].takeError(), ErrorCode::Internal);
      if (First.ok())
        First = Status(E.code(), "prepare of kernel '" + K->IR.Name +
                                     "' (the variant for " + variantName(I) +
                                     "): " + E.message());
      continue;
    }
    K->Variants[I] = std::move(*Got[J]);
    K->Ready[I].store(true, std::memory_order_release);
  }
  return First;
}

Status api::Kernel::prepare(const PrepareOptions &Options) const {
  if (!S)
    return Status(ErrorCode::InvalidArgument,
                  "Kernel::prepare: the kernel handle is null");
  std::shared_ptr<DeviceState> D = S->Device.lock();
  if (!D)
    return closedDevice();
  return prepareVariants(*D, {S.get()}, Options);
}

Status api::Device::prepareKernels(std::span<const api::Kernel> Kernels,
                                   const PrepareOptions &Options) {
  if (!S)
    return Status(ErrorCode::InvalidArgument,
                  "prepareKernels: the device is null (moved from)");
  std::vector<KernelState *> States;
  States.reserve(Kernels.size());
  for (size_t I = 0; I != Kernels.size(); ++I) {
    const std::shared_ptr<KernelState> &K = KernelState::of(Kernels[I]);
    if (!K)
      return Status(ErrorCode::InvalidArgument,
                    "prepareKernels: kernel " + std::to_string(I) +
                        " is a null handle");
    if (K->Device.lock() != S)
      return Status(ErrorCode::InvalidArgument,
                    "prepareKernels: kernel " + std::to_string(I) + " ('" +
                        K->IR.Name + "') belongs to another device");
    States.push_back(K.get());
  }
  return prepareVariants(*S, std::move(States), Options);
}

DeviceCounters api::Device::counters() const {
  DeviceCounters C;
  if (!S)
    return C;
  C.LaunchLinks = S->LaunchLinks.load(std::memory_order_relaxed);
  C.LaunchCompiles = S->LaunchCompiles.load(std::memory_order_relaxed);
  std::shared_lock<std::shared_mutex> Alive(S->Life);
  if (S->Dev) {
    LoaderStatistics L = S->Dev->loaderStatistics();
    C.Compiled = L.Compiled;
    C.StoreLoads = L.StoreHits;
  }
  return C;
}
