//===- AffineKernel.h - The kernel the launch benches launch ------*- C++ -*-===//
//
// y = a * y + b over N elements in 64-unit cubes: small enough that a
// launch's cost is the runtime's, not the kernel's. kiln-launch-bench and
// kiln-burst-bench time the same kernel, so their figures compare.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BENCH_LAUNCH_AFFINEKERNEL_H
#define KILN_BENCH_LAUNCH_AFFINEKERNEL_H

#include <cstdint>

namespace kiln::bench {

constexpr uint32_t AffineCubes = 64, AffineUnits = 64,
                   AffineN = AffineCubes * AffineUnits;

constexpr const char *AffineText = R"(
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

} // namespace kiln::bench

#endif // KILN_BENCH_LAUNCH_AFFINEKERNEL_H
