//===- kiln-fuzz-lower.cpp - Fuzz the lowering and code generation --------===//
//
// kiln-fuzz-lower: structure-aware. The input bytes drive a generator that
// builds a kernel through KernelBuilder (include/kiln/IR/Builder.h) meant to
// be valid by construction: buffers and scalars of every type, arithmetic,
// math, bit and line operations, casts, loads and stores at any index,
// atomics, vars, shared and local arrays, if/for/loop/switch with
// break/continue/return, sync_cube, sync_plane and plane operations, placed
// so that the uniformity rules of docs/LangRef.md §6.7 hold. Then:
//
//   - the kernel must verify; one that does not is the generator's mistake,
//     not Kiln's: it is skipped and counted (KILN_FUZZ_VERBOSE=1 prints the
//     diagnostics, =2 every kernel too);
//   - its printed form parses, verifies and prints identically (§8);
//   - CpuCompiler::lower (verify, lower, optimise at -O1, mostly, and emit
//     the object) must succeed: "a kernel that passes can be lowered
//     without further checks" (§6); the only error allowed is a scratch
//     area beyond 4 GiB, which the generator never asks for;
//   - the artifact encodes and decodes to itself (ArtifactCodec).
//
// Variants (bounds checks, alignment, aliasing) and the device's plane size
// come from the input too. The kernel is never run. A crash, a sanitizer
// report, an LLVM fatal error or a broken promise ("kiln fuzz finding: ...")
// is a finding. The counts are printed when the process exits. Run it with
// utils/fuzz.sh kiln-fuzz-lower SECONDS.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "kiln/CPU/CpuBackend.h"
#include "kiln/Compile/Logger.h"
#include "kiln/Compile/Recording.h"
#include "kiln/IR/Builder.h"
#include "kiln/IR/Hash.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace kiln;
using kiln::fuzz::finding;

namespace {

struct Counts {
  uint64_t Generated = 0, BuilderRefused = 0, Rejected = 0, Compiled = 0;
};
Counts Stats;
/// KILN_FUZZ_VERBOSE: 1 prints why a kernel was refused, 2 every kernel.
int Verbose = 0;

void printCounts() {
  std::fprintf(stderr,
               "kiln-fuzz-lower: %llu kernels generated, %llu refused by the "
               "builder, %llu rejected by the verifier, %llu compiled\n",
               (unsigned long long)Stats.Generated,
               (unsigned long long)Stats.BuilderRefused,
               (unsigned long long)Stats.Rejected,
               (unsigned long long)Stats.Compiled);
}

constexpr ScalarKind AllKinds[] = {
    ScalarKind::Bool, ScalarKind::I8,  ScalarKind::I16,  ScalarKind::I32,
    ScalarKind::I64,  ScalarKind::U8,  ScalarKind::U16,  ScalarKind::U32,
    ScalarKind::U64,  ScalarKind::F16, ScalarKind::BF16, ScalarKind::F32,
    ScalarKind::F64};
constexpr unsigned LineWidths[] = {1, 2, 3, 4, 8, 16};

/// Which element kinds an operand may have.
enum class Elem { Any, Numeric, Float, Integer, Bool, NotBool };

bool accepts(Elem E, ScalarKind K) {
  switch (E) {
  case Elem::Any:
    return true;
  case Elem::Numeric:
  case Elem::NotBool:
    return K != ScalarKind::Bool;
  case Elem::Float:
    return isFloat(K);
  case Elem::Integer:
    return isInteger(K);
  case Elem::Bool:
    return K == ScalarKind::Bool;
  }
  return false;
}

/// Builds one kernel from the input bytes. Every choice is a read of the
/// input; when the input runs out every read gives 0, which ends the
/// kernel quickly.
class Generator {
public:
  Generator(FuzzedDataProvider &In) : In(In), B("fuzz") {}

  /// The kernel (not yet verified) and the limits it was made for.
  llvm::Expected<IRKernel> run(DeviceLimits &LimitsOut);

private:
  struct Val {
    ValueId Id;
    Type Ty;
    bool Div; ///< divergent (a superset of what the verifier finds)
  };
  struct Mem {
    ValueId Id;
    ValueKind Kind;
    Type Ty;
    AccessKind Access;
    uint64_t Count;
    /// Vars and local arrays: decided at the declaration. A uniform one is
    /// only ever written uniform values at uniform indices under uniform
    /// control flow, so that reading it stays uniform.
    bool Div;
  };
  struct Frame {
    bool IsLoop;
    /// The body runs under divergent control flow: a divergent condition,
    /// divergent bounds, or a loop that may be left under divergent control.
    bool Divergent;
    bool AllowDivergentExit;
    size_t ValMark, MemMark;
  };

  FuzzedDataProvider &In;
  KernelBuilder B;
  DeviceLimits Limits;
  std::vector<Val> Vals;
  std::vector<Mem> Mems;
  std::vector<Frame> Frames;
  uint64_t SharedBytes = 0, LocalBytes = 0;
  unsigned OpsLeft = 0;

  // Input.
  bool chance(unsigned Percent) {
    return In.ConsumeIntegralInRange<unsigned>(0, 99) < Percent;
  }
  template <typename T> T pick(std::initializer_list<T> L) {
    return *(L.begin() + In.ConsumeIntegralInRange<size_t>(0, L.size() - 1));
  }
  template <typename T> const T &pickFrom(const std::vector<T> &V) {
    return V[In.ConsumeIntegralInRange<size_t>(0, V.size() - 1)];
  }

  // Types.
  ScalarKind kindOf(Elem E) {
    std::vector<ScalarKind> Ok;
    for (ScalarKind K : AllKinds)
      if (accepts(E, K))
        Ok.push_back(K);
    return pickFrom(Ok);
  }
  Type typeOf(Elem E, unsigned LinePercent = 25) {
    ScalarKind K = kindOf(E);
    if (!chance(LinePercent))
      return Type::scalar(K);
    return Type::line(K, LineWidths[In.ConsumeIntegralInRange<size_t>(0, 5)]);
  }
  uint64_t bitsOf(ScalarKind K);

  // Control state.
  bool divergentControl() const {
    return llvm::any_of(Frames, [](const Frame &F) { return F.Divergent; });
  }
  bool inLoop() const {
    return llvm::any_of(Frames, [](const Frame &F) { return F.IsLoop; });
  }
  bool mayBreak() const;
  bool mayReturn() const;
  void open(bool IsLoop, bool Divergent, bool AllowDivergentExit) {
    Frames.push_back({IsLoop, Divergent || AllowDivergentExit,
                      AllowDivergentExit, Vals.size(), Mems.size()});
  }
  void leaveScope() {
    Vals.resize(Frames.back().ValMark);
    Mems.resize(Frames.back().MemMark);
  }
  void close() {
    leaveScope();
    Frames.pop_back();
    B.end();
  }

  // Values.
  void add(ValueId Id, Type Ty, bool Div) {
    if (Id != NoValue)
      Vals.push_back({Id, Ty, Div});
  }
  /// An operand of type \p Ty: a value in scope, a literal (scalars, where
  /// \p Literal allows), or a new constant, splat or vector. \p Uniform asks
  /// for a uniform one. Sets \p Div.
  Arg operand(Type Ty, bool &Div, bool Literal = true, bool Uniform = false);
  Arg uniformOperand(Type Ty, bool Literal = true) {
    bool Div;
    return operand(Ty, Div, Literal, /*Uniform=*/true);
  }
  /// An integer index operand of any width; uniform when asked.
  Arg index(bool &Div, bool Uniform, uint64_t Count);

  // Emission.
  void header();
  void block(unsigned Depth);
  void statement(unsigned Depth);
  void valueOp();
  void memoryOp();
  void atomicOp();
  void planeOp();
  void declare();
  void control(unsigned Depth);
  void jump();
  void sinks();
};

uint64_t Generator::bitsOf(ScalarKind K) {
  if (K == ScalarKind::Bool)
    return In.ConsumeBool();
  uint64_t Raw;
  switch (In.ConsumeIntegralInRange<unsigned>(0, 5)) {
  case 0:
    Raw = 0;
    break;
  case 1:
    Raw = 1;
    break;
  case 2:
    Raw = ~uint64_t(0); // -1, NaN, all ones
    break;
  case 3:
    // Float specials: 1.0, -0.0, inf, a NaN with a payload, a subnormal.
    switch (K) {
    case ScalarKind::F16:
      Raw = pick<uint64_t>({0x3c00, 0x8000, 0x7c00, 0x7e01, 0x0001});
      break;
    case ScalarKind::BF16:
      Raw = pick<uint64_t>({0x3f80, 0x8000, 0x7f80, 0x7fc1, 0x0001});
      break;
    case ScalarKind::F32:
      Raw = pick<uint64_t>(
          {0x3f800000, 0x80000000, 0x7f800000, 0x7fc00001, 0x00000001});
      break;
    case ScalarKind::F64:
      Raw = pick<uint64_t>({0x3ff0000000000000, 0x8000000000000000,
                            0x7ff0000000000000, 0x7ff8000000000001, 1});
      break;
    default:
      // The most negative value of a signed type, the largest of another.
      Raw = uint64_t(1) << (bitWidth(K) - 1);
      break;
    }
    break;
  default:
    Raw = In.ConsumeIntegral<uint64_t>();
    break;
  }
  return lit::make(K, Raw).Bits;
}

bool Generator::mayBreak() const {
  // break/continue leave the innermost loop: under divergent control flow
  // (a divergent construct inside that loop) only a loop opened as allowed
  // to be left so may be left.
  for (size_t I = Frames.size(); I-- > 0;) {
    if (!Frames[I].IsLoop)
      continue;
    bool Under = false;
    for (size_t J = I + 1; J < Frames.size(); ++J)
      Under |= Frames[J].Divergent;
    return !Under || Frames[I].AllowDivergentExit;
  }
  return false;
}

bool Generator::mayReturn() const {
  // A return leaves every enclosing loop.
  for (size_t I = 0; I < Frames.size(); ++I) {
    if (!Frames[I].IsLoop || Frames[I].AllowDivergentExit)
      continue;
    for (size_t J = I + 1; J < Frames.size(); ++J)
      if (Frames[J].Divergent)
        return false;
  }
  return true;
}

Arg Generator::operand(Type Ty, bool &Div, bool Literal, bool Uniform) {
  Div = false;
  std::vector<const Val *> Found;
  for (const Val &V : Vals)
    if (V.Ty == Ty && (!Uniform || !V.Div))
      Found.push_back(&V);
  unsigned Choice = In.ConsumeIntegralInRange<unsigned>(0, 9);
  if (!Found.empty() && Choice < 6) {
    const Val *V = pickFrom(Found);
    Div = V->Div;
    return V->Id;
  }
  if (!Ty.isLine() && Literal && Choice < 9)
    return lit::make(Ty.elementKind(), bitsOf(Ty.elementKind()));
  ScalarKind K = Ty.elementKind();
  if (Ty.isLine() && OpsLeft > 0 && chance(30)) {
    // A splat or a vector of scalar operands.
    --OpsLeft;
    Type Elt = Type::scalar(K);
    if (chance(50)) {
      bool D;
      Arg X = operand(Elt, D, /*Literal=*/true, Uniform);
      ValueId Id = B.splat(X, Ty.lanes());
      add(Id, Ty, D);
      Div = D;
      return Id;
    }
    std::vector<Arg> Parts;
    for (unsigned L = 0; L < Ty.lanes(); ++L) {
      bool D;
      Parts.push_back(operand(Elt, D, /*Literal=*/true, Uniform));
      Div |= D;
    }
    ValueId Id = B.op(OpKind::Vector, Parts);
    add(Id, Ty, Div);
    return Id;
  }
  std::vector<uint64_t> Bits;
  for (unsigned L = 0; L < Ty.lanes(); ++L)
    Bits.push_back(bitsOf(K));
  ValueId Id = B.constant(Ty, Bits);
  add(Id, Ty, false);
  return Id;
}

Arg Generator::index(bool &Div, bool Uniform, uint64_t Count) {
  Div = false;
  switch (In.ConsumeIntegralInRange<unsigned>(0, 4)) {
  case 0: // in range, a literal
    return lit::u32(In.ConsumeIntegralInRange<uint32_t>(
        0, uint32_t(std::min<uint64_t>(Count ? Count - 1 : 0, 1u << 20))));
  case 1: // the unit's own element
    if (!Uniform) {
      ValueId Id = B.builtin(pick<OpKind>(
          {OpKind::UnitPos, OpKind::AbsolutePos, OpKind::UnitPosPlane}));
      add(Id, Type::scalar(ScalarKind::U32), true);
      Div = true;
      return Id;
    }
    [[fallthrough]];
  default: {
    Type Ty = Type::scalar(kindOf(Elem::Integer));
    return operand(Ty, Div, /*Literal=*/true, Uniform);
  }
  }
}

void Generator::header() {
  // The device's plane size, and whether the kernel asks for it.
  Limits.PlaneDim = pick<uint32_t>({32, 32, 32, 1, 4, 8, 16, 64, 5});
  if (chance(20))
    B.setPlaneDim(Limits.PlaneDim);
  // cube_dim within the default limits (at most 1024 units, z at most 64).
  unsigned Rank = In.ConsumeIntegralInRange<unsigned>(1, 3);
  uint32_t D[3] = {1, 1, 1};
  uint64_t Units = 1;
  for (unsigned I = 0; I < Rank; ++I) {
    uint32_t Want = pick<uint32_t>({1, 2, 3, 4, 8, 16, 32, 33, 64, 256});
    uint32_t Max =
        uint32_t(std::min<uint64_t>(I == 2 ? 64 : 1024, 1024 / Units));
    D[I] = std::max<uint32_t>(1, std::min(Want, Max));
    Units *= D[I];
  }
  if (Rank == 1)
    B.setCubeDim({D[0]});
  else if (Rank == 2)
    B.setCubeDim({D[0], D[1]});
  else
    B.setCubeDim({D[0], D[1], D[2]});

  unsigned Buffers = In.ConsumeIntegralInRange<unsigned>(1, 4);
  for (unsigned I = 0; I < Buffers; ++I) {
    // Atomic element types half of the time, so that atomics have a place.
    Type Ty = chance(50)
                  ? Type::scalar(pick<ScalarKind>(
                        {ScalarKind::I32, ScalarKind::U32, ScalarKind::I64,
                         ScalarKind::U64, ScalarKind::F32, ScalarKind::F64}))
                  : typeOf(Elem::Any);
    AccessKind Access = pick<AccessKind>(
        {AccessKind::Read, AccessKind::Write, AccessKind::ReadWrite});
    ValueId Id = B.addBuffer("b" + std::to_string(I), Ty, Access);
    Mems.push_back({Id, ValueKind::Buffer, Ty, Access, 0, false});
  }
  unsigned Scalars = In.ConsumeIntegralInRange<unsigned>(0, 3);
  for (unsigned I = 0; I < Scalars; ++I) {
    Type Ty = typeOf(Elem::Any, 15);
    ValueId Id = B.addScalar("s" + std::to_string(I), Ty);
    add(Id, Ty, false);
  }
}

void Generator::valueOp() {
  bool Div = false;
  switch (In.ConsumeIntegralInRange<unsigned>(0, 15)) {
  case 0: { // builtins
    OpKind K =
        pick<OpKind>({OpKind::UnitPos, OpKind::CubePos, OpKind::CubeDim,
                      OpKind::CubeCount, OpKind::AbsolutePos, OpKind::PlaneDim,
                      OpKind::UnitPosPlane, OpKind::PlanePos});
    uint8_t C = opClass(K) == OpClass::BuiltinXYZ
                    ? In.ConsumeIntegralInRange<uint8_t>(0, 3)
                    : 0;
    bool D = K == OpKind::UnitPos || K == OpKind::AbsolutePos ||
             K == OpKind::UnitPosPlane || K == OpKind::PlanePos;
    add(B.builtin(K, C), Type::scalar(ScalarKind::U32), D);
    return;
  }
  case 1: { // a constant
    Type Ty = typeOf(Elem::Any, 40);
    std::vector<uint64_t> Bits;
    for (unsigned L = 0; L < Ty.lanes(); ++L)
      Bits.push_back(bitsOf(Ty.elementKind()));
    add(B.constant(Ty, Bits), Ty, false);
    return;
  }
  case 2:
  case 3:
  case 4: { // element-wise arithmetic, math, bits, logic
    struct Form {
      OpKind K;
      unsigned Arity;
      Elem E;
    };
    static const Form Forms[] = {
        {OpKind::Add, 2, Elem::Numeric},
        {OpKind::Sub, 2, Elem::Numeric},
        {OpKind::Mul, 2, Elem::Numeric},
        {OpKind::Div, 2, Elem::Numeric},
        {OpKind::Rem, 2, Elem::Numeric},
        {OpKind::Neg, 1, Elem::Numeric},
        {OpKind::Abs, 1, Elem::Numeric},
        {OpKind::Min, 2, Elem::Numeric},
        {OpKind::Max, 2, Elem::Numeric},
        {OpKind::Clamp, 3, Elem::Numeric},
        {OpKind::Fma, 3, Elem::Float},
        {OpKind::MulHi, 2, Elem::Integer},
        {OpKind::AddSat, 2, Elem::Integer},
        {OpKind::SubSat, 2, Elem::Integer},
        {OpKind::Sqrt, 1, Elem::Float},
        {OpKind::Rsqrt, 1, Elem::Float},
        {OpKind::Recip, 1, Elem::Float},
        {OpKind::Exp, 1, Elem::Float},
        {OpKind::Exp2, 1, Elem::Float},
        {OpKind::Log, 1, Elem::Float},
        {OpKind::Log2, 1, Elem::Float},
        {OpKind::Log1p, 1, Elem::Float},
        {OpKind::Expm1, 1, Elem::Float},
        {OpKind::Pow, 2, Elem::Float},
        {OpKind::Sin, 1, Elem::Float},
        {OpKind::Cos, 1, Elem::Float},
        {OpKind::Tan, 1, Elem::Float},
        {OpKind::Tanh, 1, Elem::Float},
        {OpKind::Sinh, 1, Elem::Float},
        {OpKind::Cosh, 1, Elem::Float},
        {OpKind::Asin, 1, Elem::Float},
        {OpKind::Acos, 1, Elem::Float},
        {OpKind::Atan, 1, Elem::Float},
        {OpKind::Asinh, 1, Elem::Float},
        {OpKind::Acosh, 1, Elem::Float},
        {OpKind::Atanh, 1, Elem::Float},
        {OpKind::Atan2, 2, Elem::Float},
        {OpKind::Erf, 1, Elem::Float},
        {OpKind::Floor, 1, Elem::Float},
        {OpKind::Ceil, 1, Elem::Float},
        {OpKind::Round, 1, Elem::Float},
        {OpKind::Trunc, 1, Elem::Float},
        {OpKind::Hypot, 2, Elem::Float},
        {OpKind::Rhypot, 2, Elem::Float},
        {OpKind::IsNan, 1, Elem::Float},
        {OpKind::IsInf, 1, Elem::Float},
        {OpKind::Eq, 2, Elem::Any},
        {OpKind::Ne, 2, Elem::Any},
        {OpKind::Lt, 2, Elem::Numeric},
        {OpKind::Le, 2, Elem::Numeric},
        {OpKind::Gt, 2, Elem::Numeric},
        {OpKind::Ge, 2, Elem::Numeric},
        {OpKind::And, 2, Elem::Bool},
        {OpKind::Or, 2, Elem::Bool},
        {OpKind::Xor, 2, Elem::Bool},
        {OpKind::Not, 1, Elem::Bool},
        {OpKind::BitAnd, 2, Elem::Integer},
        {OpKind::BitOr, 2, Elem::Integer},
        {OpKind::BitXor, 2, Elem::Integer},
        {OpKind::BitNot, 1, Elem::Integer},
        {OpKind::Shl, 2, Elem::Integer},
        {OpKind::Shr, 2, Elem::Integer},
        {OpKind::ReverseBits, 1, Elem::Integer},
    };
    const Form &F =
        Forms[In.ConsumeIntegralInRange<size_t>(0, std::size(Forms) - 1)];
    Type Ty = typeOf(F.E);
    // Lane-wise operations take a scalar literal where a line is expected
    // (splatted) as long as another data operand is a line value.
    bool SplatOk = splatsScalarLiterals(opClass(F.K), 0);
    std::vector<Arg> Ops;
    bool HaveLineValue = false;
    for (unsigned I = 0; I < F.Arity; ++I) {
      bool D;
      if (Ty.isLine() && SplatOk && HaveLineValue && chance(25)) {
        Ops.push_back(lit::make(Ty.elementKind(), bitsOf(Ty.elementKind())));
        continue;
      }
      Ops.push_back(operand(Ty, D));
      Div |= D;
      HaveLineValue |= !Ops.back().O.isLiteral() && Ty.isLine();
    }
    ValueId Id = B.op(F.K, Ops);
    Type R = opClass(F.K) == OpClass::Compare ||
                     opClass(F.K) == OpClass::FloatPredicate
                 ? Ty.withElement(ScalarKind::Bool)
                 : Ty;
    add(Id, R, Div);
    return;
  }
  case 5: { // bit counts, as the type or as u32 lanes
    Type Ty = typeOf(Elem::Integer);
    OpKind K = pick<OpKind>(
        {OpKind::Popcount, OpKind::Clz, OpKind::Ctz, OpKind::FindFirstSet});
    Type R = chance(50) ? Ty : Ty.withElement(ScalarKind::U32);
    Arg X = operand(Ty, Div);
    add(B.op(K, {X}, R), R, Div);
    return;
  }
  case 6: { // line reductions
    OpKind K = pick<OpKind>(
        {OpKind::Dot, OpKind::Magnitude, OpKind::LineSum, OpKind::Normalize});
    bool IntOk = K == OpKind::Dot || K == OpKind::LineSum;
    Type Ty = typeOf(IntOk ? Elem::Numeric : Elem::Float, 100);
    std::vector<Arg> Ops;
    for (unsigned I = 0; I < (K == OpKind::Dot ? 2u : 1u); ++I) {
      bool D;
      Ops.push_back(operand(Ty, D, /*Literal=*/false));
      Div |= D;
    }
    add(B.op(K, Ops), K == OpKind::Normalize ? Ty : Ty.elementType(), Div);
    return;
  }
  case 7: { // extract, insert
    Type Ty = typeOf(Elem::Any, 100);
    bool D;
    Arg Line = operand(Ty, Div, /*Literal=*/false);
    Arg Idx = chance(50) ? Arg(lit::u32(In.ConsumeIntegralInRange<uint32_t>(
                               0, Ty.lanes() - 1)))
                         : operand(Type::scalar(ScalarKind::U32), D, false);
    if (!Idx.O.isLiteral())
      Div |= D;
    if (chance(50)) {
      add(B.extract(Line, Idx), Ty.elementType(), Div);
      return;
    }
    Arg E = operand(Ty.elementType(), D);
    add(B.insert(Line, Idx, E), Ty, Div || D);
    return;
  }
  case 8: { // splat, vector
    Type Ty = typeOf(Elem::Any, 100);
    Arg X = operand(Ty.elementType(), Div);
    if (chance(50)) {
      add(B.splat(X, Ty.lanes()), Ty, Div);
      return;
    }
    std::vector<Arg> Parts = {X};
    for (unsigned L = 1; L < Ty.lanes(); ++L) {
      bool D;
      Parts.push_back(operand(Ty.elementType(), D));
      Div |= D;
    }
    add(B.op(OpKind::Vector, Parts), Ty, Div);
    return;
  }
  case 9: { // cast
    Type From = typeOf(Elem::Any);
    Type To = From.withElement(kindOf(Elem::Any));
    Arg X = operand(From, Div);
    add(B.cast(X, To), To, Div);
    return;
  }
  case 10: { // bitcast between types of one total width
    Type From = typeOf(Elem::NotBool);
    unsigned Bits = From.lanes() * bitWidth(From.elementKind());
    std::vector<Type> Same;
    for (ScalarKind K : AllKinds) {
      if (K == ScalarKind::Bool)
        continue;
      if (bitWidth(K) == Bits)
        Same.push_back(Type::scalar(K));
      for (unsigned W : LineWidths)
        if (W * bitWidth(K) == Bits)
          Same.push_back(Type::line(K, W));
    }
    Type To = pickFrom(Same);
    Arg X = operand(From, Div, /*Literal=*/false);
    add(B.bitcast(X, To), To, Div);
    return;
  }
  case 11: { // select
    Type Ty = typeOf(Elem::Any);
    bool D1, D2;
    Type CondTy = Ty.isLine() && chance(60) ? Ty.withElement(ScalarKind::Bool)
                                            : Type::scalar(ScalarKind::Bool);
    Arg C = operand(CondTy, Div);
    Arg X = operand(Ty, D1), Y = operand(Ty, D2);
    add(B.select(C, X, Y), Ty, Div || D1 || D2);
    return;
  }
  default:
    memoryOp();
    return;
  }
}

void Generator::memoryOp() {
  if (Mems.empty())
    return;
  const Mem M = pickFrom(Mems);
  bool UniformCF = !divergentControl();
  switch (M.Kind) {
  case ValueKind::Var: {
    if (chance(50)) {
      add(B.get(M.Id), M.Ty, M.Div);
      return;
    }
    bool Div;
    if (!M.Div && !UniformCF)
      return; // a uniform var is only set under uniform control flow
    Arg X = operand(M.Ty, Div, /*Literal=*/true, /*Uniform=*/!M.Div);
    B.set(M.Id, X);
    return;
  }
  case ValueKind::Buffer:
  case ValueKind::Shared:
  case ValueKind::Local: {
    bool Readable =
        M.Kind != ValueKind::Buffer || M.Access != AccessKind::Write;
    bool Writable = M.Kind != ValueKind::Buffer || M.Access != AccessKind::Read;
    unsigned What = In.ConsumeIntegralInRange<unsigned>(0, 3);
    if (What == 0) {
      add(B.len(M.Id), Type::scalar(ScalarKind::U32), false);
      return;
    }
    bool Store = What == 1 ? Writable : !Readable;
    if (Store && !Writable)
      return;
    // A uniform local array is written uniform values at uniform indices
    // under uniform control flow only.
    bool KeepUniform = M.Kind == ValueKind::Local && !M.Div;
    if (Store && KeepUniform && !UniformCF)
      return;
    bool DivIdx;
    Arg Idx = index(DivIdx, KeepUniform && Store, M.Count);
    if (Store) {
      bool D;
      Arg X = operand(M.Ty, D, /*Literal=*/true, KeepUniform);
      B.store(M.Id, Idx, X);
      return;
    }
    add(B.load(M.Id, Idx), M.Ty,
        DivIdx || (M.Kind == ValueKind::Local && M.Div));
    return;
  }
  default:
    return;
  }
}

void Generator::atomicOp() {
  std::vector<Mem> Ok;
  for (const Mem &M : Mems) {
    if (M.Kind != ValueKind::Buffer && M.Kind != ValueKind::Shared)
      continue;
    if (M.Ty.isLine())
      continue;
    ScalarKind K = M.Ty.elementKind();
    if (K == ScalarKind::I32 || K == ScalarKind::U32 || K == ScalarKind::I64 ||
        K == ScalarKind::U64 || K == ScalarKind::F32 || K == ScalarKind::F64)
      Ok.push_back(M);
  }
  if (Ok.empty())
    return;
  const Mem M = pickFrom(Ok);
  bool Float = isFloat(M.Ty.elementKind());
  AccessKind A = M.Kind == ValueKind::Buffer ? M.Access : AccessKind::ReadWrite;
  bool D;
  Arg Idx = index(D, /*Uniform=*/false, 64);
  switch (In.ConsumeIntegralInRange<unsigned>(0, 3)) {
  case 0: { // read-modify-write
    if (A != AccessKind::ReadWrite)
      return;
    OpKind K = Float
                   ? pick<OpKind>({OpKind::AtomicAdd, OpKind::AtomicSub,
                                   OpKind::AtomicMin, OpKind::AtomicMax,
                                   OpKind::AtomicExchange})
                   : pick<OpKind>({OpKind::AtomicAdd, OpKind::AtomicSub,
                                   OpKind::AtomicMin, OpKind::AtomicMax,
                                   OpKind::AtomicAnd, OpKind::AtomicOr,
                                   OpKind::AtomicXor, OpKind::AtomicExchange});
    Arg X = operand(M.Ty, D);
    ValueId Old = B.atomic(K, M.Id, Idx, X);
    // The old value unused half of the time: what privatisation looks for.
    if (chance(50))
      add(Old, M.Ty, true);
    return;
  }
  case 1: {
    if (A != AccessKind::ReadWrite)
      return;
    Arg E = operand(M.Ty, D), N = operand(M.Ty, D);
    add(B.atomicCas(M.Id, Idx, E, N), M.Ty, true);
    return;
  }
  case 2:
    if (A == AccessKind::Write)
      return;
    add(B.atomicLoad(M.Id, Idx), M.Ty, true);
    return;
  default: {
    if (A == AccessKind::Read)
      return;
    Arg X = operand(M.Ty, D);
    B.atomicStore(M.Id, Idx, X);
    return;
  }
  }
}

void Generator::planeOp() {
  // Barriers and plane operations: only under uniform control flow.
  if (divergentControl())
    return;
  bool D;
  switch (In.ConsumeIntegralInRange<unsigned>(0, 6)) {
  case 0:
    B.syncCube();
    return;
  case 1:
    B.syncPlane();
    return;
  case 2: {
    OpKind K = pick<OpKind>(
        {OpKind::PlaneSum, OpKind::PlaneProd, OpKind::PlaneMin,
         OpKind::PlaneMax, OpKind::PlaneInclusiveSum, OpKind::PlaneExclusiveSum,
         OpKind::PlaneInclusiveProd, OpKind::PlaneExclusiveProd});
    Type Ty = typeOf(Elem::Numeric, 15);
    Arg X = operand(Ty, D);
    add(B.op(K, {X}), Ty, true);
    return;
  }
  case 3: {
    Type Ty = typeOf(Elem::Bool, 15);
    Arg X = operand(Ty, D);
    add(B.op(pick<OpKind>({OpKind::PlaneAll, OpKind::PlaneAny}), {X}), Ty,
        true);
    return;
  }
  case 4: {
    OpKind K = pick<OpKind>({OpKind::PlaneBroadcast, OpKind::PlaneShuffle,
                             OpKind::PlaneShuffleXor, OpKind::PlaneShuffleUp,
                             OpKind::PlaneShuffleDown});
    Type Ty = typeOf(Elem::Any, 15);
    Arg X = operand(Ty, D);
    Arg L = operand(Type::scalar(ScalarKind::U32), D);
    add(B.op(K, {X, L}), Ty, true);
    return;
  }
  case 5:
    add(B.op(OpKind::PlaneElect, {}), Type::scalar(ScalarKind::Bool), true);
    return;
  default: {
    Arg X = operand(Type::scalar(ScalarKind::Bool), D);
    add(B.op(OpKind::PlaneBallot, {X}), Type::line(ScalarKind::U32, 4), true);
    return;
  }
  }
}

void Generator::declare() {
  switch (In.ConsumeIntegralInRange<unsigned>(0, 2)) {
  case 0: { // var
    Type Ty = typeOf(Elem::Any);
    if (LocalBytes + Ty.storeSize() > Limits.MaxLocalBytesPerUnit)
      return;
    LocalBytes += Ty.storeSize();
    bool Div = chance(50);
    ValueId Id = B.var(Ty);
    Mems.push_back({Id, ValueKind::Var, Ty, AccessKind::ReadWrite, 0, Div});
    return;
  }
  case 1: { // shared array
    Type Ty = typeOf(Elem::Any, 15);
    uint64_t Count = pick<uint64_t>({1, 2, 7, 32, 64, 256, 1024});
    uint64_t Bytes = Count * Ty.storeSize();
    if (SharedBytes + Bytes > Limits.MaxSharedBytes)
      return;
    SharedBytes += Bytes;
    ValueId Id = B.shared(Ty, Count);
    Mems.push_back(
        {Id, ValueKind::Shared, Ty, AccessKind::ReadWrite, Count, false});
    return;
  }
  default: { // local array
    Type Ty = typeOf(Elem::Any, 15);
    uint64_t Count = pick<uint64_t>({1, 2, 3, 8, 16, 64});
    uint64_t Bytes = Count * Ty.storeSize();
    if (LocalBytes + Bytes > Limits.MaxLocalBytesPerUnit)
      return;
    LocalBytes += Bytes;
    bool Div = chance(50);
    ValueId Id = B.localArray(Ty, Count);
    Mems.push_back(
        {Id, ValueKind::Local, Ty, AccessKind::ReadWrite, Count, Div});
    return;
  }
  }
}

void Generator::control(unsigned Depth) {
  bool Div = false;
  switch (In.ConsumeIntegralInRange<unsigned>(0, 3)) {
  case 0: { // if, else
    Arg C = operand(Type::scalar(ScalarKind::Bool), Div);
    B.beginIf(C);
    open(false, Div, false);
    block(Depth + 1);
    if (chance(40)) {
      leaveScope(); // the then-block's values are not seen in the else-block
      B.beginElse();
      block(Depth + 1);
    }
    close();
    return;
  }
  case 1: { // for
    Type Ty = Type::scalar(kindOf(Elem::Integer));
    bool D1, D2, D3 = false;
    Arg Lo = operand(Ty, D1), Hi = operand(Ty, D2);
    std::optional<Arg> Step;
    if (chance(50)) {
      if (chance(70)) {
        // A literal step must be positive.
        uint64_t S =
            std::max<uint64_t>(1, In.ConsumeIntegralInRange<uint64_t>(0, 9));
        Step = Arg(lit::make(Ty.elementKind(), S));
      } else {
        Step = operand(Ty, D3, /*Literal=*/false);
      }
    }
    Div = D1 || D2 || D3;
    ValueId K = B.beginFor(Lo, Hi, Step);
    bool AllowExit = chance(30);
    open(true, Div, AllowExit);
    add(K, Ty, Div);
    block(Depth + 1);
    close();
    return;
  }
  case 2: { // loop: left by a break, most of the time
    B.beginLoop();
    open(true, false, chance(30));
    block(Depth + 1);
    if (chance(80) && mayBreak())
      B.breakLoop();
    close();
    return;
  }
  default: { // switch
    Type Ty = Type::scalar(kindOf(Elem::Integer));
    Arg S = operand(Ty, Div);
    B.beginSwitch(S);
    open(false, Div, false);
    std::vector<int64_t> Seen;
    unsigned Cases = In.ConsumeIntegralInRange<unsigned>(0, 4);
    for (unsigned I = 0; I < Cases; ++I) {
      // Labels in and out of the selector's range.
      int64_t V = chance(70) ? In.ConsumeIntegralInRange<int64_t>(-2, 8)
                             : In.ConsumeIntegral<int64_t>();
      if (llvm::is_contained(Seen, V))
        continue;
      Seen.push_back(V);
      leaveScope();
      B.addCase(V);
      block(Depth + 1);
    }
    if (Seen.empty() || chance(50)) {
      leaveScope();
      B.addDefault();
      block(Depth + 1);
    }
    close();
    return;
  }
  }
}

void Generator::jump() {
  unsigned What = In.ConsumeIntegralInRange<unsigned>(0, 2);
  if (What < 2 && inLoop() && mayBreak()) {
    if (What == 0)
      B.breakLoop();
    else
      B.continueLoop();
    return;
  }
  if (mayReturn())
    B.returnUnit();
}

void Generator::statement(unsigned Depth) {
  --OpsLeft;
  unsigned What = In.ConsumeIntegralInRange<unsigned>(0, 19);
  if (What < 9)
    valueOp();
  else if (What < 12)
    memoryOp();
  else if (What < 13)
    atomicOp();
  else if (What < 15)
    planeOp();
  else if (What < 16)
    declare();
  else if (What < 19 && Depth < 5)
    control(Depth);
  else if (chance(30))
    jump();
}

void Generator::block(unsigned Depth) {
  while (OpsLeft > 0 && In.remaining_bytes() > 0 && !chance(Depth ? 15 : 3))
    statement(Depth);
}

/// Stores values of the body into the writable buffers, so that the
/// optimiser keeps the code that computes them.
void Generator::sinks() {
  for (const Mem &M : Mems) {
    if (M.Kind != ValueKind::Buffer || M.Access == AccessKind::Read)
      continue;
    std::vector<ValueId> Same;
    for (const Val &V : Vals)
      if (V.Ty == M.Ty)
        Same.push_back(V.Id);
    for (size_t I = 0; I < Same.size() && I < 4; ++I) {
      ValueId Pos = B.builtin(OpKind::AbsolutePos);
      ValueId Idx = B.op(OpKind::Add, {Pos, lit::u32(uint32_t(I) * 1024)});
      B.store(M.Id, Idx, Same[Same.size() - 1 - I]);
    }
  }
}

llvm::Expected<IRKernel> Generator::run(DeviceLimits &LimitsOut) {
  OpsLeft = In.ConsumeIntegralInRange<unsigned>(1, 150);
  header();
  block(0);
  sinks();
  LimitsOut = Limits;
  return B.finish();
}

bool isAllowedLoweringError(llvm::StringRef Message) {
  return Message.contains("needs a scratch area larger than 4 GiB");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fuzz::abortOnLLVMFatalErrors();
  if (const char *V = std::getenv("KILN_FUZZ_VERBOSE"))
    Verbose = std::atoi(V);
  std::atexit(printCounts);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  FuzzedDataProvider In(Data, Size);
  // The variant and the optimisation level first, from the front.
  CpuVariant Variant;
  Variant.BoundsChecked = In.ConsumeBool();
  Variant.BufferAlignment = 1u << In.ConsumeIntegralInRange<unsigned>(0, 7);
  Variant.MayAlias = In.ConsumeBool();
  unsigned OptLevel = In.PickValueInArray({1u, 1u, 1u, 1u, 0u, 2u});

  ++Stats.Generated;
  Generator Gen(In);
  DeviceLimits Limits;
  llvm::Expected<IRKernel> Built = Gen.run(Limits);
  if (!Built) {
    ++Stats.BuilderRefused;
    std::string Message = llvm::toString(Built.takeError());
    if (Verbose)
      std::fprintf(stderr, "builder: %s\n", Message.c_str());
    return -1; // not added to the corpus
  }
  const IRKernel &K = *Built;
  if (llvm::Error E = verifyKernel(K, Limits, "<fuzz>")) {
    ++Stats.Rejected;
    std::string Message = llvm::toString(std::move(E));
    if (Verbose)
      std::fprintf(stderr, "verifier: %s\n%s\n", Message.c_str(),
                   printKernel(K).c_str());
    return -1;
  }

  // The printed form reads back to the same kernel.
  std::string Text = printKernel(K);
  if (Verbose >= 2)
    std::fprintf(stderr, "%s\n", Text.c_str());
  llvm::Expected<Module> Parsed = parseModule(Text, "fuzz.kiln");
  if (!Parsed)
    finding("a built kernel's printed form does not parse: " +
            llvm::toString(Parsed.takeError()) + "\n" + Text);
  if (Parsed->Kernels.size() != 1 || printKernel(Parsed->Kernels[0]) != Text)
    finding("a built kernel does not print identically once parsed\n" + Text);
  if (hashKernel(Parsed->Kernels[0]) != hashKernel(K))
    finding("a built kernel's id changes once printed and parsed\n" + Text);
  if (llvm::Error E = verifyKernel(Parsed->Kernels[0], Limits, "fuzz.kiln"))
    finding("a built kernel verifies but its printed form does not: " +
            llvm::toString(std::move(E)) + "\n" + Text);

  CodeGenOptions CodeGen;
  CodeGen.OptLevel = OptLevel;
  CpuCompiler Compiler(CodeGen, Limits);
  CompilationRecording Rec;
  CompilationLogger Log;
  ArtifactId<CpuVariant> Id{KernelId(kernelIdFromIR(K), hashKernel(K)),
                            Variant};
  llvm::Expected<CpuArtifact> A = Compiler.lower({K, "<fuzz>"}, Id, Rec, Log);
  if (!A) {
    std::string Message = llvm::toString(A.takeError());
    if (isAllowedLoweringError(Message))
      return 0;
    finding("a kernel that verifies does not compile (" + Variant.str() +
            ", -O" + llvm::Twine(OptLevel) + ", plane size " +
            llvm::Twine(Limits.PlaneDim) + "): " + Message + "\n" + Text);
  }
  ++Stats.Compiled;
  if (A->Object.empty())
    finding("an empty object for a kernel that compiled\n" + Text);
  if (A->Meta.KernelName != K.Name)
    finding("the metadata names kernel '" + A->Meta.KernelName + "'\n" + Text);
  std::vector<uint8_t> Encoded = ArtifactCodec<CpuArtifact>::encode(*A);
  llvm::Expected<CpuArtifact> Decoded =
      ArtifactCodec<CpuArtifact>::decode(Encoded);
  if (!Decoded)
    finding("an artifact does not decode: " +
            llvm::toString(Decoded.takeError()) + "\n" + Text);
  if (!(*Decoded == *A))
    finding("an artifact decodes to another one\n" + Text);
  return 0;
}
