//===- kiln/IR/Uniformity.h - Divergence analysis of a kernel ---*- C++ -*-===//
//
// The uniformity rule of docs/LangRef.md §2 as one analysis, shared by the
// verifier (a sync_cube or plane operation must not be reached under
// divergent control flow) and the CPU lowering (which per-unit `for` loops
// it may run interchanged, docs/Lowering.md §4).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_UNIFORMITY_H
#define KILN_IR_UNIFORMITY_H

#include "kiln/IR/Kernel.h"

#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace kiln {

/// Which values of a kernel are divergent (may differ between the units of
/// a cube), why, and which barriers and plane operations run under
/// divergent control flow.
///
/// Sources of divergence: unit_pos*, absolute_pos*, unit_pos_plane,
/// plane_pos, the results of atomics and of plane operations. Divergence
/// flows through operands; a load is divergent when its index is (or, for a
/// local array, when the array is); a var or local array becomes divergent
/// once it is set to a divergent value, stored at a divergent index, or set
/// under divergent control flow. Divergent control flow is the body of an
/// if/switch on a divergent condition, of a for with divergent bounds or
/// step, and of a for/loop that a break, continue or return can leave under
/// divergent control flow. The analysis iterates to a fixed point, so a var
/// set late in a loop body taints its reads earlier in the body.
///
/// The analysis accepts malformed IR (bad ids, wrong operand counts): what it
/// cannot make sense of is treated as uniform, since the verifier reports it
/// anyway. The results are deterministic.
class UniformityInfo {
public:
  explicit UniformityInfo(const IRKernel &K);

  /// Why \p Id is divergent ("unit_pos.x", "the result of atomic_add at 7:9"),
  /// or null when it is uniform (or not a valid id). Covers plain values,
  /// vars and local arrays.
  const std::string *divergenceRoot(ValueId Id) const;
  bool isDivergent(ValueId Id) const { return divergenceRoot(Id) != nullptr; }
  /// Whether operand \p O is the same for every unit of a cube: a literal,
  /// or a value that is not divergent.
  bool isUniform(const Operand &O) const {
    return O.isLiteral() || !isDivergent(O.Value);
  }

  /// For a sync_cube, plane operation, cmma operation or
  /// workgroup_uniform_load (itself a barrier, whose result is uniform)
  /// under divergent control flow, why
  /// ("the condition at 5:7 depends on unit_pos"); null otherwise. The
  /// outermost divergent construct is named. IR without locations names
  /// operations by number instead ("at operation #3", see forEachOperation).
  const std::string *controlDivergence(const Operation &Op) const;

private:
  std::vector<int> RootOf; ///< per ValueId: index in Roots, -1 when uniform
  std::vector<std::string> Roots;
  llvm::DenseMap<const Operation *, std::string> Control;
  friend class UniformityWalker;
};

} // namespace kiln

#endif // KILN_IR_UNIFORMITY_H
