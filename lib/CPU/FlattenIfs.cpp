//===- FlattenIfs.cpp - Unit-level ifs lowered without branches -----------===//
//
// A divergent `if` inside a unit loop whose bodies only compute, read
// memory and set variables is lowered as straight code: both bodies run for
// every unit, a `set` takes effect where the unit's path takes it, and each
// `load` reads an element that exists whatever the unit's index is
// (docs/Lowering.md §11, "Branch-free ifs").
//
// Why: the vectoriser turns a load under a divergent condition into a
// masked load, and one at an index that is not affine along the unit loop
// into a masked gather. Where the target has no legal masked gather (AVX2
// without fast gathers: every AMD core, and LLVM 19 models none of them as
// fast), it scalarises such a load with a branch per lane, which its cost
// model rejects, and the whole unit loop stays scalar: a neighbour's values
// read under `if %nb >= 0`, a boundary case read from a table. Without the
// branch the gather is unconditional, which every x86 target can vectorise
// (emulated where it is slow), and the cost model weighs it against the
// arithmetic that comes with it.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

namespace {
/// The most operations (nested bodies included) a flattened `if` may hold:
/// every unit runs all of them.
constexpr unsigned MaxFlattenedOps = 512;

/// What the bodies of a candidate `if` hold.
struct FlattenScan {
  unsigned Ops = 0;
  bool Gathered = false; ///< a load whose index is not affine along units
  bool Refused = false;
};
} // namespace

/// Walks \p Blk for flattensIf: refuses anything with an effect other than
/// a variable's `set`, control flow other than `if`, and contiguous loads
/// (the vectoriser masks those itself, and a flattened one would become a
/// gather).
static void scanFlattenable(const Block &Blk, const LoweringContext &Cx,
                            const AccessPatterns &P, unsigned InnerDim,
                            FlattenScan &S) {
  for (const Operation &Op : Blk.Ops) {
    if (S.Refused)
      return;
    if (++S.Ops > MaxFlattenedOps) {
      S.Refused = true;
      return;
    }
    if (isPureValueOp(Op.opClass()))
      continue; // nothing traps (docs/LangRef.md §5.3): runs for any unit
    switch (Op.opClass()) {
    case OpClass::VarDecl:
    case OpClass::Get:
    case OpClass::Set:
      break;
    case OpClass::Load: {
      if (Op.Operands.size() < 2 || Op.Operands[0].isLiteral()) {
        S.Refused = true;
        return;
      }
      const ValueInfo &VI = Cx.K.value(Op.Operands[0].Value);
      if ((VI.Kind != ValueKind::Buffer && VI.Kind != ValueKind::Shared) ||
          VI.Ty.storeSize() > 256) {
        S.Refused = true;
        return;
      }
      Stride St = P.alongUnits(Op.Operands[1], InnerDim);
      if (St.isInvariant())
        break;
      if (St.isDense()) {
        S.Refused = true;
        return;
      }
      S.Gathered = true;
      break;
    }
    case OpClass::If:
      for (const Block &R : Op.Regions)
        scanFlattenable(R, Cx, P, InnerDim, S);
      break;
    default:
      S.Refused = true;
      return;
    }
  }
}

bool ControlEmitter::flattensIf(const Operation &If) {
  if (!Pos.Unit || If.Operands.empty() || If.Regions.empty() ||
      If.Operands[0].isLiteral() ||
      !Cx.Uniformity->isDivergent(If.Operands[0].Value))
    return false;
  auto [It, New] = Flattens.try_emplace(&If, false);
  if (!New)
    return It->second;
  FlattenScan S;
  for (const Block &R : If.Regions)
    scanFlattenable(R, Cx, Cx.Seg->patterns(), Pos.InnerDim, S);
  It->second = !S.Refused && S.Gathered;
  return It->second;
}

void ControlEmitter::lowerFlattenedIf(const Operation &If) {
  llvm::IRBuilder<> &B = Cx.B;
  Pos.FlattenedIf = true;
  Value *Outer = Memory.Predicate;
  Value *C = Values.value(If.Operands[0]);
  Memory.Predicate = Outer ? B.CreateAnd(Outer, C) : C;
  lowerBlock(If.Regions[0], Level::Unit);
  if (If.HasElse && If.Regions.size() > 1) {
    Value *NotC = B.CreateNot(C);
    Memory.Predicate = Outer ? B.CreateAnd(Outer, NotC) : NotC;
    lowerBlock(If.Regions[1], Level::Unit);
  }
  Memory.Predicate = Outer;
}
