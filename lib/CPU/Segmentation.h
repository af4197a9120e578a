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

#include <memory>
#include <optional>

namespace kiln {
class UniformityInfo;
}

namespace kiln::lowering {

/// A barrier, a plane operation or a plane-collective matrix operation:
/// always a split, whatever surrounds it (Segmentation::isSplit adds the
/// constructs holding one and the waits on a cube's barrier object).
bool isBarrierOrPlaneOp(OpClass Class);

/// The cuts of one kernel: which operations are splits, which per-unit
/// `for` loops run interchanged, and whether units need "returned" flags.
class Segmentation {
public:
  /// \p PlaneDim: the plane size the kernel runs with.
  Segmentation(const IRKernel &K, const UniformityInfo &Uniformity,
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
  /// A per-unit `for` with uniform bounds that runs across the units
  /// (runsAcrossUnits, LoopInterchange.h): lowered at cube level, as a
  /// split `for` is, its body one unit loop per iteration.
  bool runsAcross(const Operation &Op) const {
    return AcrossUnits.contains(&Op);
  }
  /// An `if` without `else` whose body holds, at its top level, a `for`
  /// that runs across the units: lowered at cube level, every unit loop of
  /// its body running only for the units whose condition holds (narrowed to
  /// them when the condition is a unit range, unitRangeGuard).
  bool isGuardedIf(const Operation &Op) const {
    return GuardedIfs.contains(&Op);
  }
  /// Whether a block lowered at cube level is cut at \p Op.
  bool isCut(const Operation &Op) const {
    return isSplit(Op) || isInterchanged(Op) || runsAcross(Op) ||
           isGuardedIf(Op);
  }
  /// How the kernel's memory indices move along the units and along loops.
  const AccessPatterns &patterns() const { return *Patterns; }
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

  /// The box of the kernel's cube guard (CubeGuard.h): no unit outside it
  /// has an effect seen outside the cube. Null when the kernel has no
  /// guard, or none of the box form.
  const UnitBoxCondition *cubeGuardBox() const {
    return CubeGuard ? &*CubeGuard : nullptr;
  }
  /// Whether some construct of the kernel is split at a barrier or plane
  /// operation (the kernel runs more than one segment).
  bool anySplit() const { return AnySplit; }

  /// The `if` \p Op tests conjuncts of the box form (UnitRange.h), or
  /// null.
  const UnitBoxCondition *unitBox(const Operation &Op) const {
    auto It = Boxes.find(&Op);
    return It == Boxes.end() ? nullptr : &It->second;
  }

private:
  bool computeSplit(const Operation &Op);
  /// barrier_wait / barrier_arrive_and_wait on a barrier_cube.
  bool isCubeBarrierWait(const Operation &Op) const;

  const IRKernel &Kern;
  /// \p InRange: the block runs for some units only (the body of a guarded
  /// `if`), where rounds that assume the whole cube may not run.
  void findInterchanged(const Block &CubeBlock, const UniformityInfo &U,
                        const AccessPatterns &Patterns,
                        const UnitIndexForms &Forms, uint32_t PlaneDim,
                        bool InRange);
  /// Whether the top level of \p Blk has a `for` that runs across the units.
  bool holdsLoopAcross(const Block &Blk, const UniformityInfo &U,
                       const AccessPatterns &Patterns) const;

  /// Control constructs only; other operations are decided by their class.
  llvm::DenseMap<const Operation *, bool> SplitConstruct;
  llvm::DenseMap<const Operation *, std::optional<int64_t>> Interchanged;
  llvm::DenseMap<const Operation *, UpperBoundSuffix> UpperBoundRounds;
  llvm::DenseMap<const Operation *, UnitRangeGuard> RangeGuards;
  llvm::DenseMap<const Operation *, UnitBoxCondition> Boxes;
  std::optional<UnitBoxCondition> CubeGuard;
  std::unique_ptr<AccessPatterns> Patterns;
  llvm::DenseSet<const Operation *> AcrossUnits;
  llvm::DenseSet<const Operation *> GuardedIfs;
  bool Returns = false;
  bool Flags = false;
  bool AnySplit = false;
};

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_SEGMENTATION_H
