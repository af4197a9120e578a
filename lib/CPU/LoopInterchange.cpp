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

std::optional<uint64_t> kiln::lowering::literalTrips(const Operation &Op) {
  for (const Operand &O : Op.Operands)
    if (!O.isLiteral())
      return std::nullopt;
  Type T = Op.ResultType;
  unsigned W = bitWidth(T.elementKind());
  auto Read = [&](const Operand &O) -> __int128 {
    uint64_t Bits = O.Lit.Bits;
    if (W < 64)
      Bits &= (uint64_t(1) << W) - 1;
    if (T.isSigned() && W < 64 && (Bits >> (W - 1)) & 1)
      return static_cast<__int128>(Bits) - (static_cast<__int128>(1) << W);
    if (T.isSigned())
      return static_cast<int64_t>(Bits);
    return Bits;
  };
  __int128 Lo = Read(Op.Operands[0]), Hi = Read(Op.Operands[1]);
  __int128 Step = Op.Operands.size() > 2 ? Read(Op.Operands[2]) : 1;
  if (Step <= 0 || Hi <= Lo)
    return 0;
  __int128 N = (Hi - Lo + Step - 1) / Step;
  return N > static_cast<__int128>(UINT64_MAX) ? UINT64_MAX
                                               : static_cast<uint64_t>(N);
}

namespace {
/// What the body of a candidate loop does, for the choice by cost.
struct BodySummary {
  bool Blocked = false;    ///< an atomic, or a loop that stays per unit
  bool Carried = false;    ///< a value carried from one iteration to the next
  bool LoopDense = true;   ///< every index moves by 0 or +-1 per iteration
  bool UnitSparse = false; ///< some index is strided or gathered across units
};
} // namespace

static void summarize(const Block &Blk, const Operation &Loop, bool TopLevel,
                      const UniformityInfo &U, const AccessPatterns &P,
                      bool KernelReturns, uint32_t UnitsX,
                      const llvm::DenseSet<ValueId> &Local, BodySummary &S) {
  for (const Operation &Op : Blk.Ops) {
    switch (Op.opClass()) {
    case OpClass::AtomicRMW:
    case OpClass::AtomicCas:
    case OpClass::AtomicLoad:
    case OpClass::AtomicStore:
      S.Blocked = true;
      return;
    case OpClass::Loop:
      S.Blocked = true; // a `loop` always runs per unit
      return;
    case OpClass::For:
      // A nested loop must run across the units too, which it can only at
      // the body's top level (the body is lowered at cube level then).
      if (!TopLevel || !runsAcrossUnits(Op, U, P, KernelReturns, UnitsX)) {
        S.Blocked = true;
        return;
      }
      break;
    case OpClass::Set:
      // A var that outlives an iteration carries a value to the next one.
      if (!Op.Operands.empty() && !Op.Operands[0].isLiteral() &&
          !Local.contains(Op.Operands[0].Value))
        S.Carried = true;
      break;
    case OpClass::Load:
    case OpClass::Store:
      if (Op.Operands.size() >= 2) {
        Stride AlongLoop = P.alongLoop(Op.Operands[1], Loop);
        if (!AlongLoop.isDense())
          S.LoopDense = false;
        if (Op.opClass() == OpClass::Store && AlongLoop.isInvariant())
          S.Carried = true; // an accumulator in memory
        if (!P.alongUnits(Op.Operands[1]).isDense())
          S.UnitSparse = true;
      }
      break;
    default:
      break;
    }
    // The body of a nested `for` that runs across the units is lowered at
    // cube level too; under an `if` or a `switch` everything is per unit.
    bool CubeLevel = TopLevel && Op.opClass() == OpClass::For;
    for (const Block &R : Op.Regions) {
      summarize(R, Loop, CubeLevel, U, P, KernelReturns, UnitsX, Local, S);
      if (S.Blocked)
        return;
    }
  }
}

static void collectVarDecls(const Block &Blk, llvm::DenseSet<ValueId> &Out) {
  for (const Operation &Op : Blk.Ops) {
    if (Op.opClass() == OpClass::VarDecl && Op.Result != NoValue)
      Out.insert(Op.Result);
    for (const Block &R : Op.Regions)
      collectVarDecls(R, Out);
  }
}

bool kiln::lowering::runsAcrossUnits(const Operation &Op,
                                     const UniformityInfo &U,
                                     const AccessPatterns &P,
                                     bool KernelReturns, uint32_t UnitsX) {
  if (!isRoundableFor(Op, KernelReturns) || UnitsX < 4)
    return false;
  for (const Operand &O : Op.Operands)
    if (!U.isUniform(O))
      return false;
  if (std::optional<uint64_t> N = literalTrips(Op); N && *N <= ShortLoopTrips)
    return false;
  if (jumpsOut(Op.Regions[0], 0))
    return false;
  // Vars declared inside the body live for one iteration.
  llvm::DenseSet<ValueId> Local;
  collectVarDecls(Op.Regions[0], Local);
  BodySummary S;
  summarize(Op.Regions[0], Op, true, U, P, KernelReturns, UnitsX, Local, S);
  if (S.Blocked)
    return false;
  return S.Carried || !S.LoopDense || !S.UnitSparse;
}
