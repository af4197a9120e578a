//===- Segmentation.cpp - Where barrier fission cuts a kernel -------------===//
//
// See Segmentation.h and docs/Lowering.md §4.
//
//===----------------------------------------------------------------------===//

#include "Segmentation.h"

#include "AccessPattern.h"
#include "CubeGuard.h"
#include "LoopInterchange.h"

#include "kiln/IR/Uniformity.h"

using namespace kiln;
using namespace kiln::lowering;

static bool isConstruct(OpClass Class) {
  return Class == OpClass::If || Class == OpClass::For ||
         Class == OpClass::Loop || Class == OpClass::Switch;
}

static bool hasReturn(const Block &Blk) {
  for (const Operation &Op : Blk.Ops) {
    if (Op.Kind == OpKind::Return)
      return true;
    for (const Block &R : Op.Regions)
      if (hasReturn(R))
        return true;
  }
  return false;
}

Segmentation::Segmentation(const IRKernel &K, const UniformityInfo &U,
                           uint32_t PlaneDim)
    : Kern(K) {
  for (const Operation &Op : K.Body.Ops)
    AnySplit |= computeSplit(Op);
  Returns = hasReturn(K.Body);
  Flags = AnySplit && Returns;
  UnitIndexForms Forms(K);
  RangeGuards = findUnitRangeGuards(Forms, U, PlaneDim);
  Boxes = findUnitBoxConditions(K, U);
  // A cube whose units would all skip their work still runs its segments'
  // cube-level code: one where the guards' box is empty is skipped whole
  // (CubeGuard.h; without splits, only to skip the rest of a row of the
  // cube walk, Lowering.cpp). Every guard holds for a unit with an effect,
  // so the box is that of all of them together. Kernels with clusters
  // have no guard (CubeGuard.h).
  {
    for (ValueId G : findCubeGuards(K))
      if (std::optional<UnitBoxCondition> Box = findUnitBoxOf(K, U, G)) {
        if (!CubeGuard)
          CubeGuard.emplace();
        // A unit position against a literal is the same range in every
        // cube: it never empties one.
        for (UnitIndexBound &Bd : Box->Bounds)
          if (CubeGuard->Bounds.size() < 8 &&
              (!Bd.Bound.isLiteral() || Bd.Index.Absolute ||
               !Bd.Index.Terms.empty()))
            CubeGuard->Bounds.push_back(std::move(Bd));
        CubeGuard->Complete = false;
      }
    if (CubeGuard && CubeGuard->Bounds.empty())
      CubeGuard.reset();
  }
  Patterns = std::make_unique<AccessPatterns>(K, U);
  findInterchanged(K.Body, U, *Patterns, Forms, PlaneDim, false);
}

bool Segmentation::computeSplit(const Operation &Op) {
  // Every nested operation is visited, so that isSplit is a lookup.
  bool Inner = false;
  for (const Block &R : Op.Regions)
    for (const Operation &I : R.Ops)
      Inner |= computeSplit(I);
  if (!isConstruct(Op.opClass()))
    return isSplit(Op);
  SplitConstruct[&Op] = Inner;
  return Inner;
}

bool kiln::lowering::isBarrierOrPlaneOp(OpClass Class) {
  switch (Class) {
  case OpClass::Barrier:
  case OpClass::PlaneReduce:
  case OpClass::PlaneBool:
  case OpClass::PlaneLane:
  case OpClass::PlaneElect:
  case OpClass::PlaneBallot:
  case OpClass::Cmma:
    return true;
  default:
    return false;
  }
}

bool Segmentation::isSplit(const Operation &Op) const {
  if (isBarrierOrPlaneOp(Op.opClass()))
    return true;
  switch (Op.opClass()) {
  case OpClass::BarrierDecl:
    return Op.Kind == OpKind::BarrierCube;
  case OpClass::BarrierWait:
    return isCubeBarrierWait(Op);
  case OpClass::If:
  case OpClass::For:
  case OpClass::Loop:
  case OpClass::Switch:
    return SplitConstruct.lookup(&Op);
  default:
    return false;
  }
}

bool Segmentation::holdsLoopAcross(const Block &Blk, const UniformityInfo &U,
                                   const AccessPatterns &Patterns) const {
  for (const Operation &Op : Blk.Ops)
    if (runsAcrossUnits(Op, U, Patterns, Returns, Kern.CubeDim[0]))
      return true;
  return false;
}

void Segmentation::findInterchanged(const Block &CubeBlock,
                                    const UniformityInfo &U,
                                    const AccessPatterns &Patterns,
                                    const UnitIndexForms &Forms,
                                    uint32_t PlaneDim, bool InRange) {
  for (const Operation &Op : CubeBlock.Ops) {
    if (!isSplit(Op)) {
      if (runsAcrossUnits(Op, U, Patterns, Returns, Kern.CubeDim[0])) {
        AcrossUnits.insert(&Op);
        findInterchanged(Op.Regions[0], U, Patterns, Forms, PlaneDim, InRange);
        continue;
      }
      if (Op.opClass() == OpClass::If && !Op.HasElse && !Returns &&
          Op.Regions.size() == 1 && !Op.Operands.empty() &&
          holdsLoopAcross(Op.Regions[0], U, Patterns)) {
        GuardedIfs.insert(&Op);
        findInterchanged(Op.Regions[0], U, Patterns, Forms, PlaneDim, true);
        continue;
      }
      if (InRange)
        continue; // rounds over the whole cube do not fit a range
      if (isInterchangeable(Op, U, Returns)) {
        Interchanged[&Op] = kiln::lowering::unitStrideLowerBound(Op, Forms);
      } else if (isUpperBoundInterchangeable(Op, U, Returns)) {
        if (std::optional<UpperBoundSuffix> F =
                upperBoundSuffix(Op, Forms, PlaneDim)) {
          Interchanged[&Op] = std::nullopt;
          UpperBoundRounds[&Op] = *F;
        }
      }
      continue;
    }
    // The bodies of split constructs are lowered at cube level too.
    for (const Block &R : Op.Regions)
      findInterchanged(R, U, Patterns, Forms, PlaneDim, InRange);
  }
}

bool Segmentation::isCubeBarrierWait(const Operation &Op) const {
  if (Op.Operands.empty() || Op.Operands[0].isLiteral() ||
      Op.Operands[0].Value >= Kern.Values.size())
    return false;
  return Kern.value(Op.Operands[0].Value).Kind == ValueKind::Shared;
}
