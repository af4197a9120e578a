//===- DeviceLimits.h - What a device accepts -------------------*- C++ -*-===//

#ifndef KILN_IR_DEVICELIMITS_H
#define KILN_IR_DEVICELIMITS_H

#include "kiln/IR/Type.h"

#include <cstdint>

namespace kiln {

/// The limits the verifier checks a kernel against (docs/LangRef.md §7).
struct DeviceLimits {
  /// Most units in one cube (product of cube_dim).
  uint32_t MaxUnitsPerCube = 1024;
  /// Most units along each of x, y, z.
  uint32_t MaxCubeDim[3] = {1024, 1024, 64};
  /// Most bytes of shared memory one cube may declare.
  uint64_t MaxSharedBytes = 64 * 1024;
  /// Most bytes of per-unit arrays and vars one unit may declare.
  uint64_t MaxLocalBytesPerUnit = 64 * 1024;
  /// The plane size the device runs kernels with (docs/LangRef.md §7.2); a
  /// kernel requesting another size with plane_dim(N) is rejected.
  uint32_t PlaneDim = 32;
  /// Kernel size (docs/LangRef.md §7.1): LLVM's compile time grows faster
  /// than these, so they bound it (seconds, not minutes, at the limits).
  /// Operations in the kernel, nested ones included.
  uint64_t MaxOperations = 32768;
  /// Case labels of one switch (`case 1, 2` has two; the default none).
  uint32_t MaxSwitchCases = 4096;
  /// Loops (for, loop) nested in one another.
  uint32_t MaxLoopDepth = 64;
  /// Barriers, plane operations and cmma operations: each is a step of the
  /// whole cube.
  uint32_t MaxSyncPoints = 1024;
  /// Whether each element type is supported, indexed by ScalarKind.
  bool SupportsType[unsigned(LastScalarKind) + 1] = {
      true, true, true, true, true, true, true, true, true, true,
      true, true, true, true, true, true, true, true, true, true};

  bool supports(ScalarKind Kind) const {
    return SupportsType[static_cast<unsigned>(Kind)];
  }
};

} // namespace kiln

#endif // KILN_IR_DEVICELIMITS_H
