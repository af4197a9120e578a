//===- Kernels.h - Kernel texts shared by the public API's tests -*- C++ -*-===//

#ifndef KILN_UNITTESTS_API_KERNELS_H
#define KILN_UNITTESTS_API_KERNELS_H

#include "Support/Kernels.h"
#include "kiln/IR/Builder.h"
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace kiln::api::test {

using kiln::test::AffineText;
using kiln::test::VaddText;

/// A device with no persistent store, so tests do not depend on one.
inline Device memoryDevice(unsigned Threads = 0) {
  DeviceConfig C;
  C.Store = StoreMode::Off;
  C.Threads = Threads;
  Result<Device> D = Device::create(C);
  if (!D.ok())
    std::abort();
  return std::move(D).value();
}

/// The kernel \p B built; an empty kernel and a test failure that says why
/// when it does not build.
inline kiln::IRKernel finishOrFail(kiln::KernelBuilder &B) {
  llvm::Expected<kiln::IRKernel> K = B.finish();
  if (!K) {
    ADD_FAILURE() << llvm::toString(K.takeError());
    return kiln::IRKernel();
  }
  return std::move(*K);
}

inline ElementType f32() { return ElementType::scalar(ScalarType::F32); }
inline ElementType u32() { return ElementType::scalar(ScalarType::U32); }

} // namespace kiln::api::test

#endif // KILN_UNITTESTS_API_KERNELS_H
