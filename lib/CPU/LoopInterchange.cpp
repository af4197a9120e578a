//===- LoopInterchange.cpp - Which per-unit `for` loops run as rounds -----===//
//
// See LoopInterchange.h and docs/Lowering.md §4.
//
//===----------------------------------------------------------------------===//

#include "LoopInterchange.h"

#include "kiln/IR/Uniformity.h"

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

bool kiln::lowering::isInterchangeable(const Operation &Op,
                                       const UniformityInfo &U,
                                       bool KernelReturns) {
  Type T = Op.ResultType;
  if (Op.opClass() != OpClass::For || KernelReturns || Op.Operands.size() < 2 ||
      Op.Regions.empty() || !T.isInteger() || T.isLine() ||
      bitWidth(T.elementKind()) > 64)
    return false;
  // A uniform lower bound gives every unit the same trip (matmul's k loop):
  // running it per unit keeps its state in registers, which measured far
  // faster than rounds with the state in scratch (docs/Lowering.md §4).
  if (U.isUniform(Op.Operands[0]) || !U.isUniform(Op.Operands[1]) ||
      (Op.Operands.size() > 2 && !U.isUniform(Op.Operands[2])))
    return false;
  return !jumpsOut(Op.Regions[0], 0);
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
