//===- Device.h - The CPU device: compile, load and launch kernels -*- C++ -*-===//
//
// The facade a GPU runtime uses: a Device turns kernels into LoadedKernels
// (memoised by kernel id and variant) and launches them on its executor.
// No LLVM type appears here; errors are llvm::Error values.
//
// Thread safety: getKernel() is for one thread at a time (the server thread:
// it compiles and links); launch() may be called from any thread.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DEVICE_H
#define KILN_RUNTIME_DEVICE_H

#include "kiln/CPU/CubeMetadata.h"
#include "kiln/CPU/LoadedKernel.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Kernel.h"
#include "kiln/Runtime/Launch.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <memory>
#include <string>

namespace kiln {

struct DeviceOptions {
  DeviceLimits Limits;
  unsigned OptLevel = 3;  ///< 0..3
  unsigned Threads = 0;   ///< launch concurrency; 0 = all cores
  std::string CPU;        ///< empty = the host CPU (CodeGenOptions)
  std::string Features;   ///< `-mattr`-style overrides; empty = host
};

/// How getKernel() got its kernel, and what each phase cost (seconds; zero
/// for a phase that did not run).
struct KernelStats {
  bool Memoised = false; ///< found in the device's in-memory map
  bool Compiled = false; ///< lowered and compiled in this call
  double LowerSeconds = 0, OptimizeSeconds = 0, CodegenSeconds = 0,
         LinkSeconds = 0;
};

class Device {
public:
  /// Fails for an OptLevel above 3 or a host without a JIT.
  static llvm::Expected<std::unique_ptr<Device>> create(DeviceOptions Opts = {});
  ~Device();

  const DeviceOptions &options() const;

  /// The compiled and linked form of the *verified* kernel \p K for
  /// \p Variant. The first call for a (kernelIdFromIR(K), Variant) pair
  /// compiles (lower, optimise, emit an object) and links; later calls
  /// return the same LoadedKernel. \p Stats, when given, says what happened.
  llvm::Expected<LoadedKernel> getKernel(const Kernel &K,
                                         const CpuVariant &Variant = {},
                                         KernelStats *Stats = nullptr);

  /// Runs every cube of a launch of \p Kernel (validated first: see
  /// validateLaunch) and returns when all are done.
  llvm::Error launch(const LoadedKernel &Kernel,
                     std::array<uint32_t, 3> CubeCount,
                     llvm::ArrayRef<ArgBinding> Args);

  /// The launch executor (its concurrency, scratch statistics).
  Executor &executor();

private:
  struct Impl;
  explicit Device(std::unique_ptr<Impl> P);
  std::unique_ptr<Impl> P;
};

} // namespace kiln

#endif // KILN_RUNTIME_DEVICE_H
