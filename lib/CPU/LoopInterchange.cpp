//===- LoopInterchange.cpp - Which per-unit `for` loops run as rounds -----===//
//
// See LoopInterchange.h and docs/Lowering.md §4.
//
//===----------------------------------------------------------------------===//

#include "LoopInterchange.h"

#include "kiln/IR/Uniformity.h"

#include "llvm/ADT/DenseMap.h"

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

namespace {

/// The operation defining each value of a kernel, nested ones included.
void collectDefs(const Block &Blk,
                 llvm::DenseMap<ValueId, const Operation *> &Def) {
  for (const Operation &Op : Blk.Ops) {
    if (Op.Result != NoValue && producesValue(Op.opClass()))
      Def[Op.Result] = &Op;
    for (const Block &R : Op.Regions)
      collectDefs(R, Def);
  }
}

/// The literal \p L as a signed number, when it is an integer of magnitude
/// below 2^40.
std::optional<int64_t> smallLiteral(const Literal &L) {
  constexpr int64_t Limit = int64_t(1) << 40;
  if (!L.Ty.isInteger() || L.Ty.isLine())
    return std::nullopt;
  unsigned W = bitWidth(L.Ty.elementKind());
  int64_t V = static_cast<int64_t>(L.Bits);
  if (L.Ty.isSigned() && W < 64 && ((L.Bits >> (W - 1)) & 1))
    V = static_cast<int64_t>(L.Bits | (~uint64_t(0) << W));
  else if (!L.Ty.isSigned() && L.Bits >= uint64_t(Limit))
    return std::nullopt;
  if (V <= -Limit || V >= Limit)
    return std::nullopt;
  return V;
}

/// Whether every value of [Lo, Hi] is representable in \p T.
bool fitsIn(Type T, int64_t Lo, int64_t Hi) {
  unsigned W = bitWidth(T.elementKind());
  if (T.isSigned())
    return W >= 64 ||
           (Lo >= -(int64_t(1) << (W - 1)) && Hi < (int64_t(1) << (W - 1)));
  return Lo >= 0 && (W >= 64 || Hi < (int64_t(1) << W));
}

/// The offset c with \p O = unit + c exactly for every unit of the cube.
/// The same shapes as UnitRange.cpp's guards.
std::optional<int64_t>
unitOffset(const Operand &O,
           const llvm::DenseMap<ValueId, const Operation *> &Def, int64_t Units,
           unsigned Depth = 0) {
  if (O.isLiteral() || Depth > 8)
    return std::nullopt;
  const Operation *D = Def.lookup(O.Value);
  if (!D || D->ResultType.isLine() || !D->ResultType.isInteger())
    return std::nullopt;
  std::optional<int64_t> C;
  if (D->Kind == OpKind::UnitPos && D->Component <= 1) {
    C = 0;
  } else if (D->Kind == OpKind::Cast && D->Operands.size() == 1) {
    C = unitOffset(D->Operands[0], Def, Units, Depth + 1);
  } else if ((D->Kind == OpKind::Add || D->Kind == OpKind::Sub) &&
             D->Operands.size() == 2) {
    bool Sub = D->Kind == OpKind::Sub;
    // unit + lit, lit + unit, unit - lit (not lit - unit).
    for (unsigned I = 0; I < (Sub ? 1u : 2u) && !C; ++I) {
      const Operand &X = D->Operands[I], &L = D->Operands[1 - I];
      if (!L.isLiteral())
        continue;
      std::optional<int64_t> Lit = smallLiteral(L.Lit);
      std::optional<int64_t> Base = unitOffset(X, Def, Units, Depth + 1);
      if (Lit && Base)
        C = Sub ? *Base - *Lit : *Base + *Lit;
    }
  }
  if (C && !fitsIn(D->ResultType, *C, *C + Units - 1))
    return std::nullopt;
  return C;
}

} // namespace

std::optional<int64_t> kiln::lowering::unitStrideLowerBound(const Operation &Op,
                                                            const Kernel &K) {
  uint64_t Units = K.unitsPerCube();
  if (K.CubeDim[1] != 1 || K.CubeDim[2] != 1 || Units == 0 ||
      Units > (uint64_t(1) << 31) || Op.Operands.empty())
    return std::nullopt;
  llvm::DenseMap<ValueId, const Operation *> Def;
  collectDefs(K.Body, Def);
  std::optional<int64_t> C =
      unitOffset(Op.Operands[0], Def, static_cast<int64_t>(Units));
  // The lower bound's own type is the loop's (the verifier's rule).
  if (C && !fitsIn(Op.ResultType, *C, *C + int64_t(Units) - 1))
    return std::nullopt;
  return C;
}
