//===- LoopInterchange.cpp - Which per-unit `for` loops run as rounds -----===//
//
// See LoopInterchange.h and docs/Lowering.md §4.
//
//===----------------------------------------------------------------------===//

#include "LoopInterchange.h"

#include "UnitRange.h"

#include "kiln/IR/Uniformity.h"

#include "llvm/ADT/DenseSet.h"

using namespace kiln;
using namespace kiln::lowering;

/// Whether \p Blk, the body of a loop \p Depth loops inside the candidate
/// `for`, holds a jump that leaves the candidate (a break or continue of it
/// or of an outer loop); `return` is excluded kernel-wide by the caller.
static bool jumpsOut(const Block &Blk, unsigned Depth) {
  for (const Operation &Op : Blk.Ops) {
    if ((Op.Kind == OpKind::Break || Op.Kind == OpKind::Continue) && Depth == 0)
      return true;
    bool IsLoop = Op.opClass() == OpClass::For || Op.opClass() == OpClass::Loop;
    for (const Block &R : Op.Regions)
      if (jumpsOut(R, IsLoop ? Depth + 1 : Depth))
        return true;
  }
  return false;
}

/// Whether \p Op is a `for` that rounds may run at all: an integer loop of
/// at most 64 bits with a body, in a kernel without `return`.
static bool isRoundableFor(const Operation &Op, bool KernelReturns) {
  Type T = Op.ResultType;
  return Op.opClass() == OpClass::For && !KernelReturns &&
         Op.Operands.size() >= 2 && !Op.Regions.empty() && T.isInteger() &&
         !T.isLine() && bitWidth(T.elementKind()) <= 64;
}

bool kiln::lowering::isInterchangeable(const Operation &Op,
                                       const UniformityInfo &U,
                                       bool KernelReturns) {
  if (!isRoundableFor(Op, KernelReturns))
    return false;
  // A uniform lower bound gives every unit the same trip (matmul's k loop):
  // running it per unit keeps its state in registers, which measured far
  // faster than rounds with the state in scratch (docs/Lowering.md §4).
  if (U.isUniform(Op.Operands[0]) || !U.isUniform(Op.Operands[1]) ||
      (Op.Operands.size() > 2 && !U.isUniform(Op.Operands[2])))
    return false;
  return !jumpsOut(Op.Regions[0], 0);
}

/// Whether every operation of \p Blk (at any depth) is one that a round by
/// the upper bound runs alike for every unit (isUpperBoundInterchangeable);
/// \p RoundUniform holds the values that are the same for every unit in a
/// round: the loop variable, then the results computed from it and from
/// uniform values.
static bool runsAlike(const Block &Blk, const UniformityInfo &U,
                      llvm::DenseSet<ValueId> &RoundUniform) {
  auto Alike = [&](const Operand &O) {
    return U.isUniform(O) || RoundUniform.contains(O.Value);
  };
  for (const Operation &Op : Blk.Ops) {
    OpClass C = Op.opClass();
    if (C == OpClass::If) {
      for (const Block &R : Op.Regions)
        if (!runsAlike(R, U, RoundUniform))
          return false;
      continue;
    }
    if (C == OpClass::Get || C == OpClass::Set)
      continue;
    if (C == OpClass::Load) {
      if (Op.Operands.size() < 2 || !Alike(Op.Operands[1]))
        return false;
      // Nothing in the body stores, so the element is the same for every
      // unit of the round, unless the memory is the unit's own (a local
      // array written with divergent values).
      if (Alike(Op.Operands[0]))
        RoundUniform.insert(Op.Result);
      continue;
    }
    // Builtins differ between units; constants are uniform anyway.
    if (!isPureValueOp(C) || C == OpClass::Builtin || C == OpClass::BuiltinXYZ)
      return false;
    if (llvm::all_of(Op.Operands, Alike))
      RoundUniform.insert(Op.Result);
  }
  return true;
}

bool kiln::lowering::isUpperBoundInterchangeable(const Operation &Op,
                                                 const UniformityInfo &U,
                                                 bool KernelReturns) {
  if (!isRoundableFor(Op, KernelReturns))
    return false;
  if (!U.isUniform(Op.Operands[0]) || U.isUniform(Op.Operands[1]) ||
      (Op.Operands.size() > 2 && !U.isUniform(Op.Operands[2])))
    return false;
  if (jumpsOut(Op.Regions[0], 0))
    return false;
  llvm::DenseSet<ValueId> RoundUniform;
  RoundUniform.insert(Op.Result);
  return runsAlike(Op.Regions[0], U, RoundUniform);
}

std::optional<UpperBoundSuffix> kiln::lowering::upperBoundSuffix(
    const Operation &Op, const UnitIndexForms &Forms, uint32_t PlaneDim) {
  if (!Forms.applies() || Op.Operands.size() < 2 ||
      bitWidth(Op.ResultType.elementKind()) > 32 || PlaneDim == 0)
    return std::nullopt;
  const Operand &Hi = Op.Operands[1];
  if (std::optional<int64_t> C = Forms.unitOffset(Hi)) {
    // The bound's own type is the loop's (the verifier's rule).
    if (!UnitIndexForms::fits(Op.ResultType, *C, *C + Forms.units() - 1))
      return std::nullopt;
    return UpperBoundSuffix{1, *C};
  }
  if (Hi.isLiteral())
    return std::nullopt;
  const Operation *D = Forms.def(Hi.Value);
  if (D && D->Kind == OpKind::PlanePos)
    return UpperBoundSuffix{PlaneDim, 0};
  return std::nullopt;
}

std::optional<int64_t>
kiln::lowering::unitStrideLowerBound(const Operation &Op,
                                     const UnitIndexForms &Forms) {
  if (Op.Operands.empty())
    return std::nullopt;
  std::optional<int64_t> C = Forms.unitOffset(Op.Operands[0]);
  // The lower bound's own type is the loop's (the verifier's rule).
  if (C && !UnitIndexForms::fits(Op.ResultType, *C, *C + Forms.units() - 1))
    return std::nullopt;
  return C;
}
