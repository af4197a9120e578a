//===- ScratchLayout.h - The per-worker scratch arena -----------*- C++ -*-===//
//
// The third analysis of the lowering (docs/Lowering.md §5): where return
// flags, shared arrays, per-unit slots, vars and local arrays live in the
// 64-byte aligned scratch area a worker passes to the cube function.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_SCRATCHLAYOUT_H
#define KILN_LIB_CPU_SCRATCHLAYOUT_H

#include "SegmentLiveness.h"

#include "llvm/Support/Error.h"

namespace kiln::lowering {

/// Where a memory object (var, local array, shared array) lives.
enum class StorageKind : uint8_t {
  Alloca,      ///< a var used in one segment only: a stack slot
  ScratchUnit, ///< one copy per unit in scratch: [units][count]
  ScratchCube, ///< one copy per cube in scratch (shared arrays, fragments)
};

struct Placement {
  StorageKind Storage = StorageKind::Alloca;
  uint64_t Offset = 0; ///< of the slot or storage, when in scratch
};

struct ScratchLayout {
  std::vector<Placement> Of; ///< per ValueId
  bool HasFlags = false;     ///< per-unit "returned" flags, u8[units]
  uint64_t FlagsOffset = 0;
  uint64_t Bytes = 0; ///< a multiple of 64

  bool inScratch(ValueId Id) const {
    return Of[Id].Storage != StorageKind::Alloca;
  }
};

/// Lays out the scratch area of \p K for \p Units units per cube in planes
/// of \p PlaneDim units, every region aligned to 64 bytes; an error when it
/// exceeds 4 GiB. A cmma fragment is one f32 matrix per plane (per cube for
/// a cube fragment), row-major (ScratchCube).
llvm::Expected<ScratchLayout> layoutScratch(const IRKernel &K, uint32_t Units,
                                            uint32_t PlaneDim, bool ReturnFlags,
                                            const Liveness &Live);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_SCRATCHLAYOUT_H
