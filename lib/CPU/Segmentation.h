//===- Segmentation.h - Where barrier fission cuts a kernel -----*- C++ -*-===//
//
// The first analysis of the lowering (docs/Lowering.md §4). A *split*
// operation is a sync_cube, a plane operation, or a control construct that
// contains one; it runs at cube level, and the blocks it sits in are cut at
// it. A per-unit `for` chosen for interchange (LoopInterchange.h) is cut out
// too: it runs as rounds of unit loops. Each maximal run of other operations
// of a block lowered at cube level is one segment: one unit loop nest.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_SEGMENTATION_H
#define KILN_LIB_CPU_SEGMENTATION_H

#include "LoopInterchange.h"
#include "UnitRange.h"

#include "kiln/IR/Kernel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace kiln {
class UniformityInfo;
}

namespace kiln::lowering {

/// The cuts of one kernel: which operations are splits, which per-unit
/// `for` loops run interchanged, and whether units need "returned" flags.
class Segmentation {
public:
  /// \p PlaneDim: the plane size the kernel runs with.
  Segmentation(const Kernel &K, const UniformityInfo &Uniformity,
               uint32_t PlaneDim);

  /// A barrier, a plane operation, the declaration of or a wait on a cube's
  /// barrier object, or a construct containing one.
  bool isSplit(const Operation &Op) const;
  /// A per-unit `for` in a block lowered at cube level, run as rounds.
  bool isInterchanged(const Operation &Op) const {
    return Interchanged.contains(&Op);
  }
  /// For an interchanged `for` whose lower bound is `unit + c`, c
  /// (unitStrideLowerBound, LoopInterchange.h); none otherwise.
  std::optional<int64_t> unitStrideLowerBound(const Operation &Op) const {
    auto It = Interchanged.find(&Op);
    return It == Interchanged.end() ? std::nullopt : It->second;
  }
  /// An interchanged `for` whose upper bound is the per-unit one, with a
  /// uniform lower bound and step (isUpperBoundInterchangeable,
  /// LoopInterchange.h): the bound's form; null for the others, which have
  /// a per-unit lower bound.
  const UpperBoundSuffix *roundsByUpperBound(const Operation &Op) const {
    auto It = UpperBoundRounds.find(&Op);
    return It == UpperBoundRounds.end() ? nullptr : &It->second;
  }
  /// Whether a block lowered at cube level is cut at \p Op.
  bool isCut(const Operation &Op) const {
    return isSplit(Op) || isInterchanged(Op);
  }
  /// The kernel has a `return` anywhere.
  bool kernelReturns() const { return Returns; }
  /// Units keep a "returned" flag in scratch: the kernel has a `return` and
  /// more than one unit loop (a split at its top level).
  bool needsReturnFlags() const { return Flags; }
  /// The `if` \p Op tests `unit + c OP uniform` (UnitRange.h), or null.
  const UnitRangeGuard *unitRangeGuard(const Operation &Op) const {
    auto It = RangeGuards.find(&Op);
    return It == RangeGuards.end() ? nullptr : &It->second;
  }

private:
  bool computeSplit(const Operation &Op);
  /// barrier_wait / barrier_arrive_and_wait on a barrier_cube.
  bool isCubeBarrierWait(const Operation &Op) const;

  const Kernel &Kern;
  void findInterchanged(const Block &CubeBlock, const UniformityInfo &U,
                        const UnitIndexForms &Forms, uint32_t PlaneDim);

  /// Control constructs only; other operations are decided by their class.
  llvm::DenseMap<const Operation *, bool> SplitConstruct;
  llvm::DenseMap<const Operation *, std::optional<int64_t>> Interchanged;
  llvm::DenseMap<const Operation *, UpperBoundSuffix> UpperBoundRounds;
  llvm::DenseMap<const Operation *, UnitRangeGuard> RangeGuards;
  bool Returns = false;
  bool Flags = false;
};

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_SEGMENTATION_H
