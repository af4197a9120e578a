//===- AccessPattern.cpp - How memory indices move along an axis ----------===//
//
// See AccessPattern.h.
//
//===----------------------------------------------------------------------===//

#include "AccessPattern.h"

#include "UnitRange.h"

#include "kiln/IR/Uniformity.h"

using namespace kiln;
using namespace kiln::lowering;

/// The axis a stride is taken along: the units (Loop null) or a loop.
struct AccessPatterns::Axis {
  const Operation *Loop = nullptr;
  unsigned Dim = 0; ///< the cube dimension, when Loop is null
  mutable llvm::DenseMap<ValueId, Stride> Memo;
};

AccessPatterns::AccessPatterns(const IRKernel &K, const UniformityInfo &U)
    : K(K), U(U) {
  collect(K.Body, nullptr);
}

void AccessPatterns::collect(const Block &Blk, const Operation *Loop) {
  for (const Operation &Op : Blk.Ops) {
    if (Op.Result != NoValue) {
      Def[Op.Result] = &Op;
      if (Loop)
        DefLoop[Op.Result] = Loop;
    }
    bool IsFor = Op.opClass() == OpClass::For;
    if (IsFor && Loop)
      ParentLoop[&Op] = Loop;
    for (const Block &R : Op.Regions)
      collect(R, IsFor ? &Op : Loop);
    // A `for`'s induction variable is defined by the loop, outside its body.
    if (IsFor && Op.Result != NoValue) {
      if (Loop)
        DefLoop[Op.Result] = Loop;
      else
        DefLoop.erase(Op.Result);
    }
  }
}

static Stride add(Stride A, Stride B, bool Subtract) {
  if (A.K == Stride::Unknown || B.K == Stride::Unknown)
    return Stride::unknown();
  if (A.K == Stride::Known && B.K == Stride::Known)
    return Stride::known(Subtract ? A.By - B.By : A.By + B.By);
  if (A.isInvariant())
    return B;
  if (B.isInvariant())
    return A;
  return Stride::symbolic();
}

/// \p S scaled by the literal \p C.
static Stride scale(Stride S, int64_t C) {
  if (C == 0 || S.isInvariant())
    return Stride::known(0);
  if (S.K == Stride::Known) {
    __int128 P = static_cast<__int128>(S.By) * C;
    if (P > INT64_MAX || P < INT64_MIN)
      return Stride::symbolic();
    return Stride::known(static_cast<int64_t>(P));
  }
  return S;
}

/// The value of an integer literal operand or `const` scalar, if it is one.
static std::optional<int64_t> literalValue(const Operand &O,
                                           const Operation *D) {
  if (O.isLiteral())
    return static_cast<int64_t>(O.Lit.Bits);
  if (D && D->opClass() == OpClass::Const && D->ConstBits.size() == 1 &&
      D->ResultType.isInteger() && !D->ResultType.isLine())
    return static_cast<int64_t>(D->ConstBits[0]);
  return std::nullopt;
}

Stride AccessPatterns::stride(const Operand &O, const Axis &A,
                              unsigned Depth) const {
  if (O.isLiteral())
    return Stride::known(0);
  ValueId Id = O.Value;
  if (!A.Loop && U.isUniform(O))
    return Stride::known(0);
  if (A.Loop) {
    if (Id == A.Loop->Result)
      return Stride::known(1);
    // Defined outside the loop's body: the same in every iteration.
    const Operation *L = DefLoop.lookup(Id);
    while (L && L != A.Loop)
      L = ParentLoop.lookup(L);
    if (!L)
      return Stride::known(0);
  }
  auto It = A.Memo.find(Id);
  if (It != A.Memo.end())
    return It->second;
  if (Depth > 64)
    return Stride::unknown();
  A.Memo[Id] = Stride::unknown(); // a cycle (malformed IR) stays unknown

  Stride R = Stride::unknown();
  const Operation *D = def(Id);
  if (!D) {
    // A parameter or a value without a definition: uniform, or unknown.
    R = U.isUniform(O) ? Stride::known(0) : Stride::unknown();
  } else if (D->opClass() == OpClass::Builtin ||
             D->opClass() == OpClass::BuiltinXYZ) {
    R = Stride::known(0);
    if (!A.Loop) {
      switch (D->Kind) {
      case OpKind::UnitPos:
      case OpKind::AbsolutePos:
        if (D->Component == 0) {
          // The linear index: x + y*dx + z*dx*dy in the cube; in the grid
          // the rows are as long as the grid's, known only at run time.
          if (A.Dim == 0)
            R = Stride::known(1);
          else if (D->Kind == OpKind::AbsolutePos)
            R = Stride::symbolic();
          else
            R = Stride::known(A.Dim == 1
                                  ? int64_t(K.CubeDim[0])
                                  : int64_t(K.CubeDim[0]) * K.CubeDim[1]);
        } else {
          R = Stride::known(D->Component == A.Dim + 1 ? 1 : 0);
        }
        break;
      case OpKind::UnitPosPlane:
        R = A.Dim == 0 ? Stride::known(1) : Stride::unknown();
        break;
      default:
        R = U.isUniform(O) ? Stride::known(0) : Stride::unknown();
        break;
      }
    }
  } else {
    auto Sub = [&](size_t I) {
      return I < D->Operands.size() ? stride(D->Operands[I], A, Depth + 1)
                                    : Stride::unknown();
    };
    auto Lit = [&](size_t I) -> std::optional<int64_t> {
      if (I >= D->Operands.size())
        return std::nullopt;
      const Operand &X = D->Operands[I];
      return literalValue(X, X.isLiteral() ? nullptr : def(X.Value));
    };
    bool IntScalar = D->ResultType.isInteger() && !D->ResultType.isLine();
    switch (D->Kind) {
    case OpKind::Add:
    case OpKind::Sub:
      if (IntScalar)
        R = add(Sub(0), Sub(1), D->Kind == OpKind::Sub);
      break;
    case OpKind::Mul: {
      if (!IntScalar)
        break;
      Stride S0 = Sub(0), S1 = Sub(1);
      if (S0.isInvariant() && S1.isInvariant())
        R = Stride::known(0);
      else if (S0.isInvariant())
        R = Lit(0) ? scale(S1, *Lit(0))
                   : (S1.K == Stride::Unknown ? S1 : Stride::symbolic());
      else if (S1.isInvariant())
        R = Lit(1) ? scale(S0, *Lit(1))
                   : (S0.K == Stride::Unknown ? S0 : Stride::symbolic());
      break;
    }
    case OpKind::Shl: {
      std::optional<int64_t> C = Lit(1);
      if (IntScalar && C && *C >= 0 && *C < 32)
        R = scale(Sub(0), int64_t(1) << *C);
      break;
    }
    case OpKind::Cast:
      if (IntScalar && !D->Operands.empty()) {
        const Operand &X = D->Operands[0];
        Type From = X.isLiteral() ? D->ResultType : K.value(X.Value).Ty;
        if (From.isInteger() && !From.isLine())
          R = Sub(0);
      }
      break;
    default:
      break;
    }
    if (R.K == Stride::Unknown && isPureValueOp(D->opClass()) &&
        D->Regions.empty()) {
      // Anything computed from invariant operands alone is invariant.
      bool AllInvariant = true;
      for (size_t I = 0; I < D->Operands.size() && AllInvariant; ++I)
        AllInvariant = Sub(I).isInvariant();
      if (AllInvariant)
        R = Stride::known(0);
    }
  }
  A.Memo[Id] = R;
  return R;
}

Stride AccessPatterns::alongUnits(const Operand &O, unsigned Dim) const {
  Axis A;
  A.Dim = Dim;
  return stride(O, A, 0);
}

namespace {
/// How many memory indices move by one element along each dimension.
struct DimScore {
  unsigned Consecutive[3] = {0, 0, 0};
};
} // namespace

static void scoreAccesses(const Block &Blk, const AccessPatterns &P,
                          unsigned Dims, DimScore &S);

static void scoreOp(const Operation &Op, const AccessPatterns &P, unsigned Dims,
                    DimScore &S) {
  switch (Op.opClass()) {
  case OpClass::Load:
  case OpClass::Store:
  case OpClass::AtomicRMW:
  case OpClass::AtomicCas:
  case OpClass::AtomicLoad:
  case OpClass::AtomicStore:
    if (Op.Operands.size() >= 2)
      for (unsigned D = 0; D < Dims; ++D) {
        Stride St = P.alongUnits(Op.Operands[1], D);
        if (St.K == Stride::Known && (St.By == 1 || St.By == -1))
          ++S.Consecutive[D];
      }
    break;
  default:
    break;
  }
  for (const Block &R : Op.Regions)
    scoreAccesses(R, P, Dims, S);
}

static void scoreAccesses(const Block &Blk, const AccessPatterns &P,
                          unsigned Dims, DimScore &S) {
  for (const Operation &Op : Blk.Ops)
    scoreOp(Op, P, Dims, S);
}

unsigned
AccessPatterns::innermostDim(llvm::ArrayRef<const Operation *> Ops) const {
  unsigned Dims = K.CubeDim[2] > 1 ? 3 : K.CubeDim[1] > 1 ? 2 : 1;
  if (Dims == 1)
    return 0;
  DimScore S;
  for (const Operation *Op : Ops)
    scoreOp(*Op, *this, Dims, S);
  unsigned Best = 0;
  for (unsigned D = 1; D < Dims; ++D)
    if (K.CubeDim[D] > 1 && S.Consecutive[D] > S.Consecutive[Best])
      Best = D;
  return Best;
}

Stride AccessPatterns::alongLoop(const Operand &O,
                                 const Operation &Loop) const {
  Axis A;
  A.Loop = &Loop;
  return stride(O, A, 0);
}
