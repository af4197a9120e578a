//===- AccessPattern.h - How memory indices move along an axis --*- C++ -*-===//
//
// The lowering chooses how a per-unit loop runs (docs/Lowering.md §4,
// "Loops across units") from how each memory operation's index changes
// along two axes: from one unit to the next (the unit loop the vectoriser
// sees runs over unit_pos.x) and from one iteration of the loop to the next.
// An index moves by a known constant (0: the same element, a broadcast; 1
// or -1: consecutive elements), by a uniform amount known only at run time
// (a row of unknown length: strided), or in a way that depends on data or
// on both axes at once (a gather).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_ACCESSPATTERN_H
#define KILN_LIB_CPU_ACCESSPATTERN_H

#include "kiln/IR/Kernel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>

namespace kiln {
class UniformityInfo;
}

namespace kiln::lowering {

/// How an integer value changes per step along an axis.
struct Stride {
  enum Kind : uint8_t {
    Known,    ///< by exactly By (wrapping in the value's type ignored)
    Symbolic, ///< by an amount that is the same for every step, not a literal
    Unknown,  ///< by an amount that differs from step to step
  };
  Kind K = Unknown;
  int64_t By = 0;

  static Stride known(int64_t C) { return {Known, C}; }
  static Stride symbolic() { return {Symbolic, 0}; }
  static Stride unknown() { return {Unknown, 0}; }
  bool isInvariant() const { return K == Known && By == 0; }
  /// 0, 1 or -1: a broadcast or consecutive elements.
  bool isDense() const { return K == Known && By >= -1 && By <= 1; }
};

/// The strides of a kernel's integer values along the unit axis (unit_pos.x)
/// and along a loop's induction variable, from the operations defining them.
/// Additions, subtractions, multiplications by a value invariant along the
/// axis, left shifts by a literal and integer casts are followed; anything
/// else that is not invariant is Unknown.
class AccessPatterns {
public:
  AccessPatterns(const IRKernel &K, const UniformityInfo &U);

  /// The stride of \p O from one unit to the next along the cube's
  /// dimension \p Dim (0: x, 1: y, 2: z).
  Stride alongUnits(const Operand &O, unsigned Dim = 0) const;
  /// The dimension whose unit loop should be the innermost of a segment
  /// running \p Ops (the vectoriser's loop): y or z instead of x when more
  /// of their memory indices move by one element along it than along x
  /// (a GPU mapping whose x walks the rows of a row-major matrix).
  unsigned innermostDim(llvm::ArrayRef<const Operation *> Ops) const;
  /// The stride of \p O from one iteration of the `for` \p Loop to the next:
  /// values defined outside its body are invariant.
  Stride alongLoop(const Operand &O, const Operation &Loop) const;

  /// The operation defining \p Id, or null (parameters, declarations).
  const Operation *def(ValueId Id) const { return Def.lookup(Id); }

private:
  struct Axis;
  Stride stride(const Operand &O, const Axis &A, unsigned Depth) const;
  void collect(const Block &Blk, const Operation *Loop);

  const IRKernel &K;
  const UniformityInfo &U;
  llvm::DenseMap<ValueId, const Operation *> Def;
  /// The innermost `for` whose body defines each value (absent: none).
  llvm::DenseMap<ValueId, const Operation *> DefLoop;
  llvm::DenseMap<const Operation *, const Operation *> ParentLoop;
};

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_ACCESSPATTERN_H
