//===- Rematerialisation.cpp - Values recomputed instead of kept ----------===//
//
// See Rematerialisation.h and docs/Lowering.md §5.
//
//===----------------------------------------------------------------------===//

#include "Rematerialisation.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::lowering;

/// Whether operations of \p Class compute their result from their operands
/// alone (no memory, no math library call, no per-unit or plane state).
static bool isPureArithmetic(OpClass Class) {
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

unsigned kiln::lowering::rematDepth(const Operation &Op, const Kernel &K,
                                    llvm::ArrayRef<ValuePlan> Plans) {
  OpClass Class = Op.opClass();
  if (Class == OpClass::Builtin || Class == OpClass::BuiltinXYZ ||
      Class == OpClass::Const)
    return 0;
  if (!isPureArithmetic(Class))
    return NotRematerialisable;
  if (Op.ResultType.isFloat() || Op.ResultType.isLine())
    return NotRematerialisable;
  unsigned Depth = 1;
  for (const Operand &O : Op.Operands) {
    if (O.isLiteral())
      continue;
    if (O.Value >= K.Values.size() || O.Value >= Plans.size() ||
        K.value(O.Value).isMemory())
      return NotRematerialisable;
    const ValuePlan &P = Plans[O.Value];
    if (P.Remat) {
      Depth = std::max(Depth, P.RematDepth + 1u);
      continue;
    }
    // Parameters and cube-level induction variables are available anywhere
    // their uses are; plane results and other per-unit values are not.
    if (P.DefSeg == CubeSegment && !P.NeedsSlot && !P.Def)
      continue;
    return NotRematerialisable;
  }
  return Depth;
}
