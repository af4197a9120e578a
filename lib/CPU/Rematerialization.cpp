//===- Rematerialization.cpp - Values recomputed instead of kept ----------===//
//
// See Rematerialization.h and docs/Lowering.md §5.
//
//===----------------------------------------------------------------------===//

#include "Rematerialization.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::lowering;

bool kiln::lowering::isPureArithmetic(OpClass Class) {
  switch (Class) {
  case OpClass::UnaryNumeric:
  case OpClass::BinaryNumeric:
  case OpClass::TernaryNumeric:
  case OpClass::BinaryInt:
  case OpClass::UnaryInt:
  case OpClass::Compare:
  case OpClass::BinaryBool:
  case OpClass::UnaryBool:
  case OpClass::Cast:
  case OpClass::Select:
    return true;
  default:
    return false;
  }
}

bool kiln::lowering::isUnitVaryingBuiltin(OpKind Kind) {
  switch (Kind) {
  case OpKind::UnitPos:
  case OpKind::AbsolutePos:
  case OpKind::UnitPosPlane:
  case OpKind::PlanePos:
    return true;
  default:
    return false;
  }
}

std::optional<RematCost>
kiln::lowering::rematCost(const Operation &Op, const IRKernel &K,
                          llvm::ArrayRef<ValuePlan> Plans) {
  OpClass Class = Op.opClass();
  if (Class == OpClass::Builtin || Class == OpClass::BuiltinXYZ) {
    RematCost C;
    C.Uniform = !isUnitVaryingBuiltin(Op.Kind);
    return C;
  }
  if (Class == OpClass::Const)
    return RematCost();
  if (!isPureArithmetic(Class))
    return std::nullopt;
  if (Op.ResultType.isFloat() || Op.ResultType.isLine())
    return std::nullopt;
  RematCost C;
  for (const Operand &O : Op.Operands) {
    if (O.isLiteral())
      continue;
    if (O.Value >= K.Values.size() || O.Value >= Plans.size() ||
        K.value(O.Value).isMemory())
      return std::nullopt;
    const ValuePlan &P = Plans[O.Value];
    if (P.Remat) {
      C.Depth = std::max<unsigned>(C.Depth, P.RematDepth);
      C.VaryingDepth = std::max<unsigned>(C.VaryingDepth, P.RematVaryingDepth);
      C.Uniform &= P.RematUniform;
      continue;
    }
    // Parameters and cube-level induction variables are available anywhere
    // their uses are; plane results and other per-unit values are not.
    if (P.DefSeg == CubeSegment && !P.NeedsSlot && !P.Def)
      continue;
    return std::nullopt;
  }
  C.Depth += 1;
  // Combining conditions costs one instruction a unit, whatever its depth,
  // and a conjunction of unit ranges costs nothing where it is a box (§4).
  if (!C.Uniform && Class != OpClass::BinaryBool)
    C.VaryingDepth += 1;
  return C;
}
