//===- UnitRange.h - Guards that narrow a unit loop's range -----*- C++ -*-===//
//
// An `if` whose condition compares the unit's linear index (unit_pos, or
// unit_pos.x in a one-dimensional cube, possibly cast or shifted by a
// literal without wrapping) with a cube-uniform bound, `lt/le/gt/ge/eq` in
// either operand order, holds for one contiguous range of units; one that
// tests `(unit + c) % m == r` (`unit_pos_plane`, `rem` or `band` by a literal)
// holds for every m-th unit from the first. More generally
// (findUnitBoxConditions), a conjunction of comparisons of unit indices
// along any dimension of any cube (unit or absolute positions plus literal
// and uniform offsets) with uniform bounds holds in one box of units. A
// segment ending in such an `if` runs its unit loops over those units
// instead of testing (and, vectorised, masking) every unit
// (LowerUnitBox.cpp; docs/Lowering.md §4, "Narrowed unit loops").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_UNITRANGE_H
#define KILN_LIB_CPU_UNITRANGE_H

#include "kiln/IR/Kernel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln {
class UniformityInfo;
}

namespace kiln::lowering {

/// The condition of an `if` as `unit + Offset  Pred  Bound`, exactly: for
/// every unit u of the cube, u + Offset is the compared index (no wrap in
/// its type), compared signed or unsigned as Type says. With a Modulus m,
/// the compared index is `(u + Offset) % m` instead (Offset >= 0, so the
/// remainder is the same signed or unsigned) and Pred is Eq. With
/// UniformModulus, m is the cube-uniform value ModulusValue of type CmpTy
/// (a `rem` by it, whatever its value: 0, negative, past the units).
struct UnitRangeGuard {
  OpKind Pred = OpKind::Lt; ///< Lt, Le, Gt, Ge or Eq, the index on the left
  Operand Bound;            ///< cube-uniform
  Type CmpTy;               ///< the (integer, scalar) type compared
  int64_t Offset = 0;       ///< |Offset| < 2^40
  uint32_t Modulus = 0;     ///< 0, or m in [2, 2^31) for the modular form
  bool UniformModulus = false;
  Operand ModulusValue;     ///< with UniformModulus: m, cube-uniform

  bool modular() const { return Modulus != 0 || UniformModulus; }
};

/// One term of a unit index's offset: a cube-uniform value, added or
/// subtracted (its mathematical value, as its type's signedness reads it).
struct UniformTerm {
  Operand Value;
  Type Ty;
  bool Negated = false;
};

/// A type the index passes through on its way to the comparison, with the
/// part of the offset it holds there (the literal so far and the first
/// Terms terms): the index is exact only if every such value fits.
struct IndexStep {
  Type Ty;
  int64_t Literal = 0;
  unsigned Terms = 0;
};

/// A unit's position along one dimension plus an offset, exactly:
/// `pos + Literal + terms`, where pos is unit_pos along Dim (the linear
/// unit_pos in a one-dimensional cube) or, with Absolute, the absolute
/// position along Dim (cube_pos.d * cube_dim.d + unit_pos.d; the linear
/// absolute_pos of a one-dimensional cube, cube_dim.x * the cube's linear
/// index + unit_pos.x). No position reaches 2^32 (launch limits).
struct UnitIndex {
  unsigned Dim = 0;
  bool Absolute = false;
  bool AbsoluteLinear = false;
  int64_t Literal = 0;
  llvm::SmallVector<UniformTerm, 2> Terms;
  /// Empty when the index is exact for every unit of every launch; else
  /// the steps to check at run time, per cube.
  llvm::SmallVector<IndexStep, 3> Checks;
};

/// One comparison of a range condition: `index Pred Bound`, compared in
/// CmpTy (Lt, Le, Gt, Ge or Eq, the index on the left).
struct UnitIndexBound {
  UnitIndex Index;
  OpKind Pred = OpKind::Lt;
  Operand Bound; ///< cube-uniform
  Type CmpTy;
};

/// The condition of an `if` without else as a conjunction (`and`) of
/// comparisons of unit indices with cube-uniform bounds: the units that
/// pass lie in one box of the cube (one range per dimension). Complete:
/// the condition is exactly that conjunction; otherwise it has other
/// conjuncts too, still to be tested per unit inside the box.
struct UnitBoxCondition {
  llvm::SmallVector<UnitIndexBound, 4> Bounds;
  bool Complete = true;
};

/// The values of a kernel that are `unit + c` exactly: the unit's linear
/// index (unit_pos, or unit_pos.x) through casts and add/sub of literals,
/// with no wrap or truncation in any type on the way, for every unit of the
/// cube. Only one-dimensional cubes (cube_dim y and z 1, at most 2^31
/// units) have such values; the guards above and the unit-stride lower
/// bounds of interchanged loops (LoopInterchange.h) are matched with it.
class UnitIndexForms {
public:
  explicit UnitIndexForms(const IRKernel &K);

  /// Whether the cube is one-dimensional (otherwise nothing matches).
  bool applies() const { return Applies; }
  const IRKernel &kernel() const { return K; }
  int64_t units() const { return Units; }
  /// The operation defining \p Id, or null.
  const Operation *def(ValueId Id) const { return Def.lookup(Id); }
  /// The offset c with \p O = unit + c for every unit, exactly (|c| < 2^40).
  std::optional<int64_t> unitOffset(const Operand &O, unsigned Depth = 0) const;
  /// Whether every value of [Lo, Hi] is a value of the integer type \p T.
  static bool fits(Type T, int64_t Lo, int64_t Hi);

private:
  void collectDefs(const Block &Blk);

  const IRKernel &K;
  bool Applies = false;
  int64_t Units = 1;
  llvm::DenseMap<ValueId, const Operation *> Def;
};

/// Every `if` of the kernel of \p Forms without an else branch whose
/// condition has that form. \p PlaneDim is the plane size the kernel runs
/// with (unit_pos_plane is unit % PlaneDim).
llvm::DenseMap<const Operation *, UnitRangeGuard>
findUnitRangeGuards(const UnitIndexForms &Forms, const UniformityInfo &U,
                    uint32_t PlaneDim);

/// Every `if` without else (in a cube of any shape) whose condition has
/// at least one conjunct of the UnitBoxCondition form.
llvm::DenseMap<const Operation *, UnitBoxCondition>
findUnitBoxConditions(const IRKernel &K, const UniformityInfo &U);

/// The box of the bool value \p Cond as UnitBoxCondition reads an `if`'s
/// condition (its conjuncts of that form), or none.
std::optional<UnitBoxCondition>
findUnitBoxOf(const IRKernel &K, const UniformityInfo &U, ValueId Cond);

/// Whether \p Class computes its result from its operands alone (no memory,
/// no control flow, no side effect): what may be skipped for a unit outside
/// the range.
bool isPureValueOp(OpClass Class);
/// Whether \p Class declares a var, an array or a matrix: storage laid out
/// ahead by the analysis, nothing emitted where it stands.
bool isDeclaration(OpClass Class);

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_UNITRANGE_H
