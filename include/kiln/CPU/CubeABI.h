//===- CubeABI.h - The calling convention of a compiled cube function -*- C++ -*-===//
//
// The one contract between the lowering (lib/CPU/Lowering*) and the launcher
// (lib/Runtime). Every compiled kernel exports one function, named by
// cubeFunctionName(), of type CubeFunction:
//
//   void entry(const LaunchArgs *Args, uint32_t CubeBegin, uint32_t CubeEnd,
//              void *Scratch);
//
// It runs cubes [CubeBegin, CubeEnd) of the launch, in linear order: the
// linear cube index c maps to cube_pos = (c % X, (c / X) % Y, c / (X * Y))
// for cube_count (X, Y, Z). All units of one cube run on the calling thread.
//
// Scratch is the per-worker arena, at least CubeMetadata::ScratchBytes large
// and 64-byte aligned; its contents are unspecified on entry and the function
// may use all of it (shared memory, values kept across barriers, per-unit
// arrays and vars).
//
// Privatised atomics (docs/Lowering.md, "Privatised atomics"): number the
// parameters whose ParamMetadata::Private is not None k = 0, 1, ... in
// parameter order. When bit k of LaunchArgs::Reserved is set, the function
// does the atomics on that buffer as plain read-modify-writes on a private
// copy instead: the caller writes the copy's address (8 bytes) at byte
// privateCopyTableOffset(ScratchBytes) + 8 * k of the scratch area before the
// call, so the area must then be that much larger. A copy has the buffer's
// length (bounds checks use KernelArg::Count), is aligned to its element,
// belongs to no other call running at the same time, and is filled with the
// merge's identity before its first call and merged into the buffer after
// its last by the caller (lib/Runtime/Launch.cpp). With Reserved zero, as
// before, every atomic is a real one and nothing beyond ScratchBytes is read.
//
// Stopping a launch (docs/Lowering.md, "Cancellation"): LaunchArgs::Stop
// points at a u32 the caller may set to non-zero from another thread while
// the function runs (an atomic store). The function reads it (a relaxed
// atomic load) at the back edge of every loop that may run long and after
// every cube, and returns as soon as it sees it set, wherever its units are:
// the cubes of [CubeBegin, CubeEnd) it has not finished are left partly or
// wholly undone. A null Stop is a launch that cannot be stopped.
//
// Tensor metadata (docs/LangRef.md §16, §17): LaunchArgs::Tensors points at
// one TensorInfo per kernel parameter, in parameter order (entries of value
// parameters are unused), valid for the whole call. The launcher fills it
// for kernels whose metadata reads tensor information
// (ParamMetadata::ReadsTensorInfo); a null Tensors means every buffer has
// the default binding: rank 1, shape [Count], strides [1], no box. An
// im2col tensor map (§17.7) has no box: its Box entries hold the im2col
// parameters instead, at the Im2col*Slot indices below.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CPU_CUBEABI_H
#define KILN_CPU_CUBEABI_H

#include "kiln/IR/Tensor.h"

#include <cstdint>

namespace kiln {

/// One kernel argument as the compiled code sees it, in parameter order.
/// - a buffer: Data is its base address (aligned as the variant says), Count
///   its length in elements (lines count as one element);
/// - a scalar or line passed by value: Data points at its bytes (packed, as
///   in memory), Count is 1.
struct KernelArg {
  void *Data;
  uint64_t Count;
};
static_assert(sizeof(KernelArg) == 16, "the lowering hard-codes this layout");

/// Why a launch faulted (KernelFault::Code): misuse of a barrier object the
/// verifier cannot see (docs/LangRef.md §13.5). Values never change.
enum KernelFaultCode : uint32_t {
  NoKernelFault = 0,
  /// A wait whose phase can never complete: every unit that could arrive
  /// had reached the wait (on a GPU the units would hang there).
  BarrierWaitNeverCompletes = 1,
  /// An arrival at a barrier whose phase expected fewer arrivals.
  BarrierTooManyArrivals = 2,
  /// barrier_cube with an arrival count of 0 (it counts as 1).
  BarrierZeroArrivalCount = 3,
};

/// The first fault of a launch, written by the compiled code; the launcher
/// zeroes it before the launch and reports it as an error after (every
/// cube still runs to its end: a faulting wait does not block).
struct KernelFault {
  uint32_t Code;      ///< a KernelFaultCode; set once (compare-and-swap)
  uint32_t Pending;   ///< arrivals the barrier's phase still expected
  int32_t PendingTx;  ///< transaction bytes it still expected
  uint32_t Phase;     ///< the barrier's completed phases at the fault
  /// The operation, in the kernel's own code (valid while it is loaded):
  /// "barrier_wait %bar at 12:3 (operation #7)".
  const char *Site;
};
static_assert(sizeof(KernelFault) == 24, "the lowering hard-codes this layout");

/// The shape and strides (in elements, a line one element) a buffer or
/// tensor map parameter is bound with, and a tensor map's box. Every value
/// was checked to fit u32 at launch, Len included.
struct TensorInfo {
  uint32_t Rank;                    ///< 1..MaxTensorRank
  uint32_t Len;                     ///< the product of Shape[0..Rank)
  uint32_t Shape[MaxTensorRank];    ///< outermost first; unused entries 1
  uint32_t Strides[MaxTensorRank];  ///< unused entries 0
  uint32_t Box[MaxTensorRank];      ///< tensor maps: the box, Rank entries; else 0
};
// Rank at 0, Len at 4, Shape at 8, Strides at 40, Box at 72: 104 bytes.
static_assert(sizeof(TensorInfo) == 104, "the lowering hard-codes this layout");

/// TensorInfo::Box of an im2col tensor map: pixels_per_column,
/// channels_per_pixel, then the pixel box's lower corner and its upper
/// corner, one i32 (stored as its u32 bits) per spatial dimension each,
/// outermost first; entries past the spatial dimensions are 0.
constexpr unsigned Im2colPixelsSlot = 0;
constexpr unsigned Im2colChannelsSlot = 1;
constexpr unsigned Im2colLowerSlot = 2;
constexpr unsigned Im2colUpperSlot = Im2colLowerSlot + MaxIm2colSpatialDims;
static_assert(Im2colUpperSlot + MaxIm2colSpatialDims <= MaxTensorRank,
              "the im2col parameters fit in the box entries");

/// What one launch hands every call of the cube function.
struct LaunchArgs {
  const KernelArg *Args;  ///< one per kernel parameter
  uint32_t CubeCount[3];  ///< cube_count (X, Y, Z), each >= 1
  /// Bit k: the k-th privatisable buffer is privatised for this launch
  /// (above); zero: none is.
  uint32_t Reserved;
  /// Non-zero once the launch is to stop (above); null: never.
  const uint32_t *Stop = nullptr;
  /// Where the code records a fault, or null: then faults go unreported
  /// (the code never writes through a null pointer).
  KernelFault *Fault = nullptr;
  /// One TensorInfo per parameter (above), or null: default bindings.
  const TensorInfo *Tensors = nullptr;
};
// Args at 0, CubeCount at 8, 12, 16, Reserved at 20, Stop at 24, Fault at
// 32, Tensors at 40: 48 bytes.
static_assert(sizeof(LaunchArgs) == 48, "the lowering hard-codes this layout");

using CubeFunction = void (*)(const LaunchArgs *Args, uint32_t CubeBegin,
                              uint32_t CubeEnd, void *Scratch);

/// Where the table of private copies' addresses starts in the scratch area
/// of a function that needs \p ScratchBytes (8-byte aligned, after them).
inline constexpr uint64_t privateCopyTableOffset(uint64_t ScratchBytes) {
  return (ScratchBytes + 7) & ~uint64_t(7);
}

/// The symbol every kernel object defines: "kiln_cube_" + kernel name.
inline const char *cubeFunctionPrefix() { return "kiln_cube_"; }

} // namespace kiln

#endif // KILN_CPU_CUBEABI_H
