//===- UnitRange.cpp - Guards that narrow a unit loop's range -------------===//
//
// See UnitRange.h and docs/Lowering.md §4.
//
//===----------------------------------------------------------------------===//

#include "UnitRange.h"

#include "kiln/IR/Uniformity.h"

#include <optional>

using namespace kiln;
using namespace kiln::lowering;

bool kiln::lowering::isDeclaration(OpClass Class) {
  return Class == OpClass::VarDecl || Class == OpClass::ArrayDecl ||
         Class == OpClass::MatrixDecl;
}

bool kiln::lowering::isPureValueOp(OpClass Class) {
  switch (Class) {
  case OpClass::Builtin:
  case OpClass::BuiltinXYZ:
  case OpClass::Const:
  case OpClass::UnaryNumeric:
  case OpClass::BinaryNumeric:
  case OpClass::TernaryNumeric:
  case OpClass::TernaryFloat:
  case OpClass::BinaryInt:
  case OpClass::UnaryInt:
  case OpClass::BitCount:
  case OpClass::UnaryFloat:
  case OpClass::BinaryFloat:
  case OpClass::PowI:
  case OpClass::FloatPredicate:
  case OpClass::Dot:
  case OpClass::Magnitude:
  case OpClass::LineReduce:
  case OpClass::Normalize:
  case OpClass::Extract:
  case OpClass::Insert:
  case OpClass::Splat:
  case OpClass::Vector:
  case OpClass::Compare:
  case OpClass::BinaryBool:
  case OpClass::UnaryBool:
  case OpClass::Cast:
  case OpClass::Bitcast:
  case OpClass::Select:
  case OpClass::Len:
    return true;
  default:
    return false;
  }
}

namespace {

/// Offsets and literals are kept below 2^40 in magnitude, so that every sum
/// below fits an int64_t.
constexpr int64_t Limit = int64_t(1) << 40;

/// The literal \p L as a signed number when its magnitude is below Limit.
std::optional<int64_t> literalValue(const Literal &L) {
  if (!L.Ty.isInteger() || L.Ty.isLine())
    return std::nullopt;
  unsigned W = bitWidth(L.Ty.elementKind());
  int64_t V;
  if (L.Ty.isSigned() && W < 64 && (L.Bits >> (W - 1)) & 1)
    V = static_cast<int64_t>(L.Bits | (~uint64_t(0) << W));
  else if (L.Ty.isSigned() || L.Bits < uint64_t(Limit))
    V = static_cast<int64_t>(L.Bits);
  else
    return std::nullopt;
  if (V <= -Limit || V >= Limit)
    return std::nullopt;
  return V;
}

/// `bound P index` as `index P' bound`.
OpKind swappedPredicate(OpKind P) {
  switch (P) {
  case OpKind::Lt:
    return OpKind::Gt;
  case OpKind::Le:
    return OpKind::Ge;
  case OpKind::Gt:
    return OpKind::Lt;
  case OpKind::Ge:
    return OpKind::Le;
  default:
    return P; // Eq
  }
}

/// Records in \p Def the operation defining each value of \p Blk (nested
/// blocks too).
void collectDefinitions(const IRKernel &K, const Block &Blk,
                        llvm::DenseMap<ValueId, const Operation *> &Def) {
  for (const Operation &Op : Blk.Ops) {
    if (Op.Result != NoValue && Op.Result < K.Values.size() &&
        producesValue(Op.opClass()))
      Def[Op.Result] = &Op;
    for (const Block &R : Op.Regions)
      collectDefinitions(K, R, Def);
  }
}

class Matcher {
public:
  Matcher(const UnitIndexForms &Forms, const UniformityInfo &U,
          uint32_t PlaneDim)
      : Forms(Forms), U(U), PlaneDim(PlaneDim) {}

  /// (m, c) with \p O = (unit + c) % m for every unit, exactly, c >= 0:
  /// unit_pos_plane, or `rem`/`band` by a literal of an index unit + c;
  /// or (0, c) and \p Uniform set to m for a `rem` by a cube-uniform
  /// value m.
  std::optional<std::pair<uint32_t, int64_t>> modularIndex(const Operand &O,
                                                           Operand &Uniform) {
    if (O.isLiteral())
      return std::nullopt;
    const Operation *D = Forms.def(O.Value);
    if (!D || D->ResultType.isLine() || !D->ResultType.isInteger())
      return std::nullopt;
    auto Modulus = [](int64_t M) -> std::optional<uint32_t> {
      if (M < 2 || M >= (int64_t(1) << 31))
        return std::nullopt;
      return static_cast<uint32_t>(M);
    };
    if (D->Kind == OpKind::UnitPosPlane) {
      if (auto M = Modulus(PlaneDim))
        return std::make_pair(*M, int64_t(0));
      return std::nullopt;
    }
    if ((D->Kind != OpKind::Rem && D->Kind != OpKind::BitAnd) ||
        D->Operands.size() != 2)
      return std::nullopt;
    for (unsigned I = 0; I < 2; ++I) {
      const Operand &X = D->Operands[I], &L = D->Operands[1 - I];
      if (D->Kind == OpKind::Rem && I == 1)
        continue; // lit % unit is no index
      if (!L.isLiteral()) {
        // (unit + c) % m with m the same for every unit: its units are
        // found at run time (LowerControl.cpp, unitRangeOf).
        std::optional<int64_t> C = Forms.unitOffset(X);
        if (D->Kind == OpKind::Rem && U.isUniform(L) && C && *C >= 0) {
          Uniform = L;
          return std::make_pair(uint32_t(0), *C);
        }
        continue;
      }
      std::optional<int64_t> Lit = literalValue(L.Lit);
      std::optional<int64_t> C = Forms.unitOffset(X);
      // c >= 0: every unit + c is non-negative, so a signed `rem` and a
      // mask agree with the mathematical remainder.
      if (!Lit || !C || *C < 0)
        continue;
      std::optional<uint32_t> M;
      if (D->Kind == OpKind::Rem)
        M = Modulus(*Lit);
      else if (*Lit > 0 && ((*Lit + 1) & *Lit) == 0) // a mask 2^k - 1
        M = Modulus(*Lit + 1);
      if (M)
        return std::make_pair(*M, *C);
    }
    return std::nullopt;
  }

  std::optional<UnitRangeGuard> match(const Operation &If) {
    if (If.Operands.empty() || If.Operands[0].isLiteral() ||
        (If.HasElse && If.Regions.size() > 1 && !If.Regions[1].Ops.empty()))
      return std::nullopt;
    const Operation *Cmp = Forms.def(If.Operands[0].Value);
    if (!Cmp || Cmp->opClass() != OpClass::Compare || Cmp->Operands.size() != 2)
      return std::nullopt;
    OpKind P = Cmp->Kind;
    if (P != OpKind::Lt && P != OpKind::Le && P != OpKind::Gt &&
        P != OpKind::Ge && P != OpKind::Eq)
      return std::nullopt;
    for (unsigned I = 0; I < 2; ++I) {
      const Operand &X = Cmp->Operands[I], &Bound = Cmp->Operands[1 - I];
      if (!U.isUniform(Bound))
        continue;
      std::optional<int64_t> C = Forms.unitOffset(X);
      if (!C)
        continue;
      UnitRangeGuard G;
      G.Pred = I == 1 ? swappedPredicate(P) : P; // Bound OP unit
      G.Bound = Bound;
      G.CmpTy = Forms.def(X.Value)->ResultType;
      G.Offset = *C;
      return G;
    }
    if (P != OpKind::Eq)
      return std::nullopt;
    for (unsigned I = 0; I < 2; ++I) {
      const Operand &X = Cmp->Operands[I], &Bound = Cmp->Operands[1 - I];
      if (!U.isUniform(Bound))
        continue;
      Operand UniformM;
      auto MC = modularIndex(X, UniformM);
      if (!MC)
        continue;
      UnitRangeGuard G;
      G.Pred = OpKind::Eq;
      G.Bound = Bound;
      G.CmpTy = Forms.def(X.Value)->ResultType;
      G.Offset = MC->second;
      G.Modulus = MC->first;
      if (G.Modulus == 0) {
        G.UniformModulus = true;
        G.ModulusValue = UniformM;
      }
      return G;
    }
    return std::nullopt;
  }

  void findAll(const Block &Blk,
               llvm::DenseMap<const Operation *, UnitRangeGuard> &Out) {
    for (const Operation &Op : Blk.Ops) {
      if (Op.opClass() == OpClass::If)
        if (auto G = match(Op))
          Out[&Op] = *G;
      for (const Block &R : Op.Regions)
        findAll(R, Out);
    }
  }

private:
  const UnitIndexForms &Forms;
  const UniformityInfo &U;
  uint32_t PlaneDim;
};

} // namespace

UnitIndexForms::UnitIndexForms(const IRKernel &K) : K(K) {
  uint64_t N = K.unitsPerCube();
  Applies = K.CubeDim[1] == 1 && K.CubeDim[2] == 1 && N != 0 &&
            N <= (uint64_t(1) << 31);
  if (!Applies)
    return;
  Units = static_cast<int64_t>(N);
  collectDefs(K.Body);
}

void UnitIndexForms::collectDefs(const Block &Blk) {
  collectDefinitions(K, Blk, Def);
}

bool UnitIndexForms::fits(Type T, int64_t Lo, int64_t Hi) {
  unsigned W = bitWidth(T.elementKind());
  if (T.isSigned()) {
    if (W >= 64)
      return true; // |Lo|, |Hi| < 2^41
    return Lo >= -(int64_t(1) << (W - 1)) && Hi < (int64_t(1) << (W - 1));
  }
  if (Lo < 0)
    return false;
  return W >= 64 || Hi < (int64_t(1) << W);
}

std::optional<int64_t> UnitIndexForms::unitOffset(const Operand &O,
                                                  unsigned Depth) const {
  if (!Applies || O.isLiteral() || Depth > 8)
    return std::nullopt;
  const Operation *D = Def.lookup(O.Value);
  if (!D || D->ResultType.isLine() || !D->ResultType.isInteger())
    return std::nullopt;
  std::optional<int64_t> C;
  switch (D->Kind) {
  case OpKind::UnitPos:
    // The linear index, or .x: the same in a one-dimensional cube.
    if (D->Component <= 1)
      C = 0;
    break;
  case OpKind::Cast:
    if (D->Operands.size() == 1)
      C = unitOffset(D->Operands[0], Depth + 1);
    break;
  case OpKind::Add:
  case OpKind::Sub: {
    if (D->Operands.size() != 2)
      break;
    bool Sub = D->Kind == OpKind::Sub;
    for (unsigned I = 0; I < 2 && !C; ++I) {
      const Operand &X = D->Operands[I], &L = D->Operands[1 - I];
      if (Sub && I == 1) // lit - unit is not unit + c
        break;
      if (!L.isLiteral())
        continue;
      std::optional<int64_t> Lit = literalValue(L.Lit);
      std::optional<int64_t> Base = unitOffset(X, Depth + 1);
      if (!Lit || !Base)
        continue;
      int64_t Sum = Sub ? *Base - *Lit : *Base + *Lit;
      if (Sum > -Limit && Sum < Limit)
        C = Sum;
    }
    break;
  }
  default:
    break;
  }
  // unit + c must be exact in its type for every unit: no wrap, no
  // truncation.
  if (C && !fits(D->ResultType, *C, *C + Units - 1))
    return std::nullopt;
  return C;
}

llvm::DenseMap<const Operation *, UnitRangeGuard>
kiln::lowering::findUnitRangeGuards(const UnitIndexForms &Forms,
                                    const UniformityInfo &U,
                                    uint32_t PlaneDim) {
  llvm::DenseMap<const Operation *, UnitRangeGuard> Out;
  if (!Forms.applies())
    return Out;
  Matcher M(Forms, U, PlaneDim);
  M.findAll(Forms.kernel().Body, Out);
  return Out;
}

namespace {

/// Matches unit indices and box conditions in a cube of any shape.
class BoxMatcher {
public:
  BoxMatcher(const IRKernel &K, const UniformityInfo &U) : K(K), U(U) {
    collectDefinitions(K, K.Body, Def);
    OneDim = K.CubeDim[1] == 1 && K.CubeDim[2] == 1;
  }

  /// \p O as pos + offset along one dimension, exactly, or none.
  std::optional<UnitIndex> index(const Operand &O, unsigned Depth = 0) const {
    if (O.isLiteral() || Depth > 8)
      return std::nullopt;
    const Operation *D = Def.lookup(O.Value);
    if (!D || D->ResultType.isLine() || !D->ResultType.isInteger())
      return std::nullopt;
    std::optional<UnitIndex> X;
    switch (D->Kind) {
    case OpKind::UnitPos:
    case OpKind::AbsolutePos: {
      bool Abs = D->Kind == OpKind::AbsolutePos;
      unsigned C = D->Component;
      if (C == 0 && !OneDim)
        return std::nullopt; // a linear index spans dimensions
      unsigned Dim = C == 0 ? 0 : C - 1;
      // A dimension of one unit has no loop of its own to narrow.
      if (Dim > 2 || (K.CubeDim[Dim] <= 1 && !OneDim))
        return std::nullopt;
      X = UnitIndex();
      X->Dim = Dim;
      X->Absolute = Abs;
      X->AbsoluteLinear = Abs && C == 0;
      return step(*X, D->ResultType);
    }
    case OpKind::Cast:
      if (D->Operands.size() != 1)
        return std::nullopt;
      X = index(D->Operands[0], Depth + 1);
      break;
    case OpKind::Add:
    case OpKind::Sub: {
      if (D->Operands.size() != 2)
        return std::nullopt;
      bool Sub = D->Kind == OpKind::Sub;
      for (unsigned I = 0; I < 2 && !X; ++I) {
        const Operand &Base = D->Operands[I], &Other = D->Operands[1 - I];
        if (Sub && I == 1) // v - index is no index
          break;
        std::optional<UnitIndex> B = index(Base, Depth + 1);
        if (!B)
          continue;
        if (Other.isLiteral()) {
          std::optional<int64_t> L = literalValue(Other.Lit);
          if (!L)
            continue;
          int64_t Sum = Sub ? B->Literal - *L : B->Literal + *L;
          if (Sum <= -Limit || Sum >= Limit)
            continue;
          B->Literal = Sum;
        } else if (U.isUniform(Other) && B->Terms.size() < 4) {
          B->Terms.push_back({Other, D->ResultType, Sub});
        } else {
          continue;
        }
        X = std::move(B);
      }
      break;
    }
    default:
      return std::nullopt;
    }
    if (!X)
      return std::nullopt;
    return step(*X, D->ResultType);
  }

  std::optional<UnitBoxCondition> match(const Operation &If) const {
    if (If.Operands.empty() || If.Operands[0].isLiteral() ||
        (If.HasElse && If.Regions.size() > 1 && !If.Regions[1].Ops.empty()))
      return std::nullopt;
    return matchCondition(If.Operands[0]);
  }

  std::optional<UnitBoxCondition> matchCondition(const Operand &Cond) const {
    UnitBoxCondition C;
    conjuncts(Cond, C, 0);
    if (C.Bounds.empty())
      return std::nullopt;
    return C;
  }

private:
  /// Records that the index, now of type \p T, must fit it; none when it
  /// cannot for some unit of any launch.
  std::optional<UnitIndex> step(UnitIndex X, Type T) const {
    unsigned W = bitWidth(T.elementKind());
    // Every position is in [0, 2^32) (unit positions in [0, cube_dim)).
    int64_t Span = X.Absolute ? (int64_t(1) << 32) - 1
                              : int64_t(K.CubeDim[X.Dim]) - 1;
    if (X.Terms.empty()) {
      if (UnitIndexForms::fits(T, X.Literal, X.Literal + Span))
        return X;
      // The literal offset alone may leave the type: only a check per cube
      // can tell, for absolute positions; unit positions never fit.
      if (!X.Absolute || W < 32)
        return std::nullopt;
    }
    X.Checks.push_back({T, X.Literal, unsigned(X.Terms.size())});
    return X;
  }

  void conjuncts(const Operand &Cond, UnitBoxCondition &C,
                 unsigned Depth) const {
    const Operation *D =
        Cond.isLiteral() ? nullptr : Def.lookup(Cond.Value);
    if (!D || Depth > 6 || D->ResultType.isLine()) {
      C.Complete = false;
      return;
    }
    if (D->Kind == OpKind::And && D->Operands.size() == 2) {
      conjuncts(D->Operands[0], C, Depth + 1);
      conjuncts(D->Operands[1], C, Depth + 1);
      return;
    }
    if (D->opClass() == OpClass::Compare && D->Operands.size() == 2 &&
        C.Bounds.size() < 8) {
      OpKind P = D->Kind;
      if (P == OpKind::Lt || P == OpKind::Le || P == OpKind::Gt ||
          P == OpKind::Ge || P == OpKind::Eq) {
        for (unsigned I = 0; I < 2; ++I) {
          const Operand &X = D->Operands[I], &Bound = D->Operands[1 - I];
          if (!U.isUniform(Bound))
            continue;
          std::optional<UnitIndex> Ix = index(X);
          if (!Ix)
            continue;
          UnitIndexBound B;
          B.Index = std::move(*Ix);
          B.Pred = I == 1 ? swappedPredicate(P) : P; // bound OP index
          B.Bound = Bound;
          B.CmpTy = Def.lookup(X.Value)->ResultType;
          C.Bounds.push_back(std::move(B));
          return;
        }
      }
    }
    C.Complete = false;
  }

  const IRKernel &K;
  const UniformityInfo &U;
  bool OneDim = true;
  llvm::DenseMap<ValueId, const Operation *> Def;
};

void findBoxes(const BoxMatcher &M, const Block &Blk,
               llvm::DenseMap<const Operation *, UnitBoxCondition> &Out) {
  for (const Operation &Op : Blk.Ops) {
    if (Op.opClass() == OpClass::If)
      if (auto C = M.match(Op))
        Out[&Op] = std::move(*C);
    for (const Block &R : Op.Regions)
      findBoxes(M, R, Out);
  }
}

} // namespace

llvm::DenseMap<const Operation *, UnitBoxCondition>
kiln::lowering::findUnitBoxConditions(const IRKernel &K,
                                      const UniformityInfo &U) {
  llvm::DenseMap<const Operation *, UnitBoxCondition> Out;
  uint64_t N = K.unitsPerCube();
  if (N == 0 || N > (uint64_t(1) << 31))
    return Out;
  BoxMatcher M(K, U);
  findBoxes(M, K.Body, Out);
  return Out;
}

std::optional<UnitBoxCondition>
kiln::lowering::findUnitBoxOf(const IRKernel &K, const UniformityInfo &U,
                              ValueId Cond) {
  uint64_t N = K.unitsPerCube();
  if (N == 0 || N > (uint64_t(1) << 31))
    return std::nullopt;
  return BoxMatcher(K, U).matchCondition(Operand::value(Cond));
}
