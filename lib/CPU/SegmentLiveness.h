//===- SegmentLiveness.h - Which values live across segments ----*- C++ -*-===//
//
// The second analysis of the lowering (docs/Lowering.md §5). It walks the
// kernel with exactly the cuts of Segmentation and records, for each value,
// the segment that defines it and whether it is used elsewhere: a plain
// value used in another segment or at cube level is kept in a per-unit
// scratch slot unless it is rematerialised (Rematerialization.h); a var
// used in more than one segment is kept per unit in scratch.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_SEGMENTLIVENESS_H
#define KILN_LIB_CPU_SEGMENTLIVENESS_H

#include "kiln/IR/Kernel.h"

#include <vector>

namespace kiln::lowering {

class Segmentation;

/// Segment number of cube-level code (hoisted constructs, plane operations).
constexpr int CubeSegment = -1;

/// What the lowering knows about one value of the kernel.
struct ValuePlan {
  int DefSeg = CubeSegment; ///< defining segment, CubeSegment at cube level
  bool NeedsSlot = false;   ///< plain value kept per unit in scratch
  bool MultiSegment = false; ///< memory object used in more than one segment
  uint8_t RematDepth = 0;   ///< operations recomputing it (with Remat)
  uint8_t RematVaryingDepth = 0; ///< of them, those that vary by unit
  bool RematUniform = false; ///< with Remat: the same for every unit
  const Operation *Def = nullptr; ///< defining operation inside a segment
  /// Recomputed where it is used outside its segment (a builtin, a constant
  /// or a short integer chain over them); null when not.
  const Operation *Remat = nullptr;
};

/// The plan of every value, indexed by ValueId, and the number of segments.
struct Liveness {
  std::vector<ValuePlan> Values;
  unsigned Segments = 0;

  const ValuePlan &operator[](ValueId Id) const { return Values[Id]; }
};

Liveness analyzeLiveness(const IRKernel &K, const Segmentation &Seg);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_SEGMENTLIVENESS_H
