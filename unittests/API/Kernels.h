//===- Kernels.h - Kernel texts shared by the public API's tests -*- C++ -*-===//

#ifndef KILN_UNITTESTS_API_KERNELS_H
#define KILN_UNITTESTS_API_KERNELS_H

#include "kiln/kiln.h"

#include <cstdlib>
#include <string>

namespace kiln::api::test {

inline constexpr const char *VaddText = R"(
kernel @vadd cube_dim(64) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                           %c: buffer<f32, write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = add %x, %y : f32
    store %c[%i], %s
  }
}
)";

/// y[i] = a * y[i] + b: one read_write buffer, for chains of launches.
inline constexpr const char *AffineText = R"(
kernel @affine cube_dim(64) (%y: buffer<f32, read_write>, %a: f32, %b: f32,
                             %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %v = load %y[%i] : f32
    %r = fma %a, %v, %b : f32
    store %y[%i], %r
  }
}
)";

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

inline ElementType f32() { return ElementType::scalar(ScalarType::F32); }

} // namespace kiln::api::test

#endif // KILN_UNITTESTS_API_KERNELS_H
