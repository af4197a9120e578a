//===- LowerValues.cpp - The LLVM value of each kernel value --------------===//
//
// A value is a literal, a cube-level value (parameters, induction variables
// of cube-level loops), a value of the current segment, the per-unit slot
// that keeps it across segments, or recomputed where it is used
// (docs/Lowering.md §5).
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::lowering;

void ValueTable::define(ValueId Id, llvm::Value *V) {
  if (!V)
    return;
  SegValues[Id] = V;
  if (Cx.Live[Id].NeedsSlot)
    Memory.storeSlot(Id, Pos.Unit, V);
}

llvm::Value *ValueTable::value(const Operand &O, llvm::Value *AtUnit) {
  if (O.isLiteral())
    return Types.literal(O.Lit);
  ValueId Id = O.Value;
  if (Id >= Cx.K.Values.size()) {
    Cx.fail(O.Loc, "operand names no value");
    return llvm::PoisonValue::get(Cx.I32);
  }
  if (!AtUnit) {
    auto It = SegValues.find(Id);
    if (It != SegValues.end())
      return It->second;
  }
  auto C = CubeValues.find(Id);
  if (C != CubeValues.end())
    return C->second;
  llvm::Value *U = AtUnit ? AtUnit : Pos.Unit;
  if (Cx.Live[Id].NeedsSlot && U)
    return Memory.loadSlot(Id, U);
  if (const Operation *Def = Cx.Live[Id].Remat) {
    // Known for the units of the current nest only.
    if (auto K = Known.find(Def);
        K != Known.end() && (!AtUnit || AtUnit == Pos.Unit))
      return Cx.B.getInt1(K->second);
    // Recompute for unit U (unit 0 at cube level when no unit is given).
    if (AtUnit && AtUnit != Pos.Unit)
      return Pos.atUnit(AtUnit, [&] { return Scalar.lowerValueOp(*Def); });
    return Scalar.lowerValueOp(*Def);
  }
  Cx.fail(O.Loc, "value '%" + Cx.K.value(Id).Name +
                     "' is used where it is not available");
  return llvm::PoisonValue::get(Types.valueType(Cx.K.value(Id).Ty));
}

llvm::Value *ValueTable::slotLane(const Operand &O, unsigned Lane) {
  if (O.isLiteral() || O.Value >= Cx.K.Values.size())
    return nullptr;
  ValueId Id = O.Value;
  if (SegValues.count(Id) || CubeValues.count(Id) || !Pos.Unit ||
      !Cx.Live[Id].NeedsSlot)
    return nullptr;
  return Memory.loadSlotLane(Id, Pos.Unit, Lane);
}
