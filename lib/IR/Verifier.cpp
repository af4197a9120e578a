//===- Verifier.cpp - Check kernels against docs/LangRef.md and the device ===//
//
// One walk over the body in source order checks definitions and scopes,
// operand shapes and types, access modes, jumps, device limits and (through
// UniformityInfo) barriers and plane operations under divergent control flow.
// Every problem is reported; an operation whose operands are already wrong
// gets no further type diagnostics, so that one mistake gives one message.
// A diagnostic without a location (IR from the Builder) names the kernel and
// the operation being verified instead.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Verifier.h"
#include "kiln/IR/DebugFormat.h"
#include "kiln/IR/Literal.h"
#include "kiln/IR/Minifloat.h"

#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Tensor.h"
#include "kiln/IR/Uniformity.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <cstdint>
#include <optional>
#include <set>

using namespace kiln;

namespace {

/// "a buffer", "a var", ...
llvm::StringRef kindPhrase(ValueKind Kind) {
  switch (Kind) {
  case ValueKind::Plain:
    return "a value";
  case ValueKind::Buffer:
    return "a buffer";
  case ValueKind::Shared:
    return "a shared array";
  case ValueKind::Local:
    return "a local array";
  case ValueKind::Var:
    return "a var";
  case ValueKind::Fragment:
    return "a fragment";
  }
  return "?";
}

std::string quoted(Type Ty) { return "'" + Ty.str() + "'"; }

/// Whether \p Bits has no bit set above the width of \p Kind.
bool fitsWidth(uint64_t Bits, ScalarKind Kind) {
  // A minifloat's code is the low 4, 6 or 8 bits of its byte.
  unsigned Width = isMinifloat(Kind) && Kind != ScalarKind::F4E2M1X2
                       ? minifloatFormat(Kind).Bits
                       : bitWidth(Kind);
  return Width >= 64 || (Bits >> Width) == 0;
}

/// The signed value of the integer literal \p Bits of \p Kind.
int64_t signedValue(uint64_t Bits, ScalarKind Kind) {
  unsigned Width = bitWidth(Kind);
  if (Width >= 64)
    return static_cast<int64_t>(Bits);
  return llvm::SignExtend64(Bits, Width);
}

/// "a buffer", "a barrier object", ...: kindPhrase, barriers told apart.
llvm::StringRef valuePhrase(const ValueInfo &V) {
  if (V.IsTensorMap)
    return "a tensor map";
  return V.IsBarrier ? "a barrier object" : kindPhrase(V.Kind);
}

/// What a memory operand may name.
struct MemoryKinds {
  bool Buffer = false, Shared = false, Local = false, Var = false;
  /// Barrier objects (kind Shared or Local) instead of arrays.
  bool Barriers = false;
  /// Tensor map parameters too (only the tensor operations take them).
  bool TensorMaps = false;
  bool allows(const ValueInfo &V) const {
    ValueKind Kind = V.Kind;
    if (V.IsBarrier != Barriers)
      return false;
    if (V.IsTensorMap && !TensorMaps)
      return false;
    return (Kind == ValueKind::Buffer && Buffer) ||
           (Kind == ValueKind::Shared && Shared) ||
           (Kind == ValueKind::Local && Local) ||
           (Kind == ValueKind::Var && Var);
  }
  std::string phrase() const {
    if (Barriers)
      return "a barrier object";
    if (TensorMaps)
      return "a buffer or tensor map parameter";
    std::vector<std::string> Parts;
    if (Buffer)
      Parts.push_back("a buffer");
    if (Shared)
      Parts.push_back("a shared array");
    if (Local)
      Parts.push_back("a local array");
    if (Var)
      Parts.push_back("a var");
    std::string S;
    for (size_t I = 0; I < Parts.size(); ++I) {
      if (I)
        S += I + 1 == Parts.size() ? " or " : ", ";
      S += Parts[I];
    }
    return S;
  }
};

constexpr MemoryKinds AnyArray{true, true, true, false};
constexpr MemoryKinds AtomicMemory{true, true, false, false};
constexpr MemoryKinds VarOnly{false, false, false, true};
constexpr MemoryKinds SharedOnly{false, true, false, false};
constexpr MemoryKinds BarrierObject{false, true, true, false, true};
constexpr MemoryKinds CmmaMemory{true, true, false, false};
constexpr MemoryKinds TensorParam{true, false, false, false, false, true};

class KernelVerifier {
public:
  KernelVerifier(const IRKernel &K, const DeviceLimits &Limits,
                 llvm::StringRef FileName)
      : K(K), Limits(Limits), FileName(FileName), Uniformity(K),
        State(K.Values.size(), DefState::Undefined) {}

  std::vector<Diagnostic> run();

private:
  enum class DefState : uint8_t { Undefined, InScope, OutOfScope };

  const IRKernel &K;
  const DeviceLimits &Limits;
  llvm::StringRef FileName;
  UniformityInfo Uniformity;
  std::vector<Diagnostic> Diags;
  std::vector<DefState> State;
  std::vector<ValueId> ScopeStack; ///< values defined in the open blocks
  unsigned LoopDepth = 0;
  uint64_t SharedBytes = 0, LocalBytes = 0;
  bool SharedReported = false, LocalReported = false;
  /// The operation being verified; null for the header and parameters.
  const Operation *CurrentOp = nullptr;
  /// Operation numbers, computed on the first diagnostic that needs one.
  llvm::DenseMap<const Operation *, unsigned> OpNumbers;

  void error(SourceLoc Loc, const llvm::Twine &Message) {
    Diagnostic D;
    D.File = FileName.str();
    D.Loc = Loc;
    D.Message = Message.str();
    if (!Loc.isValid()) {
      D.KernelName = K.Name;
      if (CurrentOp) {
        D.OpIndex = opNumber(*CurrentOp);
        D.OpText = printOperationSummary(K, *CurrentOp);
      }
    }
    Diags.push_back(std::move(D));
  }

  unsigned opNumber(const Operation &Op) {
    if (OpNumbers.empty())
      forEachOperation(
          K, [&](const Operation &O, unsigned N) { OpNumbers[&O] = N; });
    return OpNumbers.lookup(&Op);
  }

  static SourceLoc locOf(const Operation &Op, size_t I) {
    if (I < Op.Operands.size() && Op.Operands[I].Loc.isValid())
      return Op.Operands[I].Loc;
    return Op.Loc;
  }

  std::string name(ValueId Id) const {
    if (Id < K.Values.size() && !K.Values[Id].Name.empty())
      return "%" + K.Values[Id].Name;
    return "%<" + std::to_string(Id) + ">";
  }

  static std::string op(const Operation &Op) { return opName(Op.Kind).str(); }

  // Kernel-level checks.
  void verifyHeader();
  /// cluster_dim: every size at least 1, at most MaxClusterCubes cubes.
  void verifyClusterDim();
  void verifyParams();
  bool verifyType(SourceLoc Loc, Type Ty, const llvm::Twine &What);

  // Definitions and scopes.
  void define(ValueId Id, SourceLoc Loc);
  void enterScope(size_t &Mark) { Mark = ScopeStack.size(); }
  void leaveScope(size_t Mark) {
    for (size_t I = Mark; I < ScopeStack.size(); ++I)
      State[ScopeStack[I]] = DefState::OutOfScope;
    ScopeStack.resize(Mark);
  }
  const ValueInfo *resolve(const Operation &Op, size_t I);

  // Operands.
  std::optional<Type> plainOperand(const Operation &Op, size_t I);
  const ValueInfo *memoryOperand(const Operation &Op, size_t I,
                                 MemoryKinds Kinds);
  bool expectType(const Operation &Op, size_t I, std::optional<Type> Found,
                  Type Expected, const llvm::Twine &Role);
  bool verifyIndex(const Operation &Op, size_t I);
  bool checkOperandCount(const Operation &Op, size_t Min, size_t Max);

  // Operations.
  void verifyBlock(const Block &B);
  void verifyOp(const Operation &Op);
  void verifyRegions(const Operation &Op, size_t Expected);
  std::optional<Type> impliedType(const Operation &Op);
  std::optional<Type> verifyElementwise(const Operation &Op, size_t Arity);
  std::optional<Type> verifyMemoryOp(const Operation &Op);
  std::optional<Type> verifyLineOp(const Operation &Op);
  std::optional<Type> verifyConversion(const Operation &Op);
  void rejectMinifloat(const Operation &Op, Type T);
  std::optional<Type> verifyPackedPairCast(const Operation &Op, Type From,
                                           Type To);
  std::optional<Type> verifyPlaneOp(const Operation &Op);
  void verifyDecl(const Operation &Op);
  void verifyControl(const Operation &Op);
  void verifyResult(const Operation &Op, std::optional<Type> Implied);
  void verifyAccess(const Operation &Op, const ValueInfo &Mem, bool Reads,
                    bool Writes);
  void verifyConvergence(const Operation &Op);
  void verifyUniformLoad(const Operation &Op);
  /// debug_print (docs/LangRef.md §14): the format, and each operand
  /// against its conversion.
  void verifyDebugPrint(const Operation &Op);

  // Size (docs/LangRef.md §7.1, "kernel size"): each limit reported once,
  // at the operation that crosses it.
  void verifySize(const Block &B, uint32_t LoopDepth);
  uint64_t Operations = 0, SyncPoints = 0;
  bool OperationsReported = false, SyncPointsReported = false,
       DepthReported = false;

  // Barrier objects and asynchronous copies (docs/LangRef.md §13).
  void verifyBarrierDecl(const Operation &Op);
  std::optional<Type> verifyBarrierOp(const Operation &Op);
  void verifyAsyncCopy(const Operation &Op);
  std::optional<Type> verifyTensorMeta(const Operation &Op);
  void verifyTensorCopy(const Operation &Op);
  void verifyTensorStoreGroup(const Operation &Op);
  /// The coordinate count of the first tensor map copy on each map, and
  /// where it stands: a map has one rank.
  llvm::DenseMap<ValueId, std::pair<size_t, SourceLoc>> MapRanks;
  /// Operand \p I is a u32 value or literal (\p Role names it).
  bool expectU32(const Operation &Op, size_t I, const llvm::Twine &Role);
  /// The barrier operand \p I, or null after a diagnostic; with
  /// \p NeedsCube, a barrier_unit is refused (transaction counts).
  const ValueInfo *barrierOperand(const Operation &Op, size_t I,
                                  bool NeedsCube);
  /// Counts \p Bytes of a declaration against the device's limits.
  void countMemory(const Operation &Op, bool IsShared, uint64_t Bytes);

  // Cooperative matrix operations (docs/LangRef.md §5.4).
  void verifyFragmentDecl(const Operation &Op);
  void verifyCmma(const Operation &Op);
  const ValueInfo *fragmentOperand(const Operation &Op, size_t I,
                                   std::optional<MatrixUse> Use);
  bool verifyCmmaMemory(const Operation &Op, size_t MemIndex,
                        const ValueInfo *Fragment, bool Writes);
  // A unit's own fragment elements and the ldmatrix-style load (§5.6).
  std::optional<Type> verifyCmmaElem(const Operation &Op);
  void verifyCmmaSet(const Operation &Op);
  void verifyLdmatrix(const Operation &Op);
  // The scaled multiply of fp8/fp6/fp4 fragments (§5.7).
  void verifyScaledMma(const Operation &Op);
  /// D, A, B and C of cmma_mma and cmma_mma_scaled: their uses, one shape,
  /// one scope; null when one is wrong (already reported).
  bool verifyMmaFragments(const Operation &Op, const ValueInfo *(&Frags)[4]);
  /// The per-unit layout of a plane fragment assumes planes of 32 units.
  bool verifyElementLayout(const Operation &Op, const ValueInfo &F);
  /// cmma_mma and cmma_cast: every fragment of one scope.
  bool verifySameScope(const Operation &Op,
                       llvm::ArrayRef<const ValueInfo *> Frags);
};

//===----------------------------------------------------------------------===//
// Kernel header and parameters
//===----------------------------------------------------------------------===//

bool KernelVerifier::verifyType(SourceLoc Loc, Type Ty,
                                const llvm::Twine &What) {
  if (Ty.isLine() && !Type::isValidLineWidth(Ty.lanes())) {
    error(Loc, What + " has a line of " + llvm::Twine(Ty.lanes()) +
                   " lanes; lines have 1, 2, 3, 4, 8 or 16");
    return false;
  }
  if (Ty.elementKind() > LastScalarKind) {
    error(Loc, What + " has an invalid element kind");
    return false;
  }
  if (!Limits.supports(Ty.elementKind())) {
    error(Loc, What + " has element type '" + scalarName(Ty.elementKind()) +
                   "', which the device does not support");
    return false;
  }
  return true;
}

void KernelVerifier::verifyHeader() {
  if (K.Name.empty())
    error(K.Loc, "kernel has no name");
  if (K.CubeDimRank < 1 || K.CubeDimRank > 3)
    error(K.Loc, "cube_dim has " + llvm::Twine(unsigned(K.CubeDimRank)) +
                     " dimensions; it takes 1 to 3");
  static const char *const Axis[] = {"x", "y", "z"};
  bool Positive = true;
  for (unsigned D = 0; D < 3; ++D) {
    if (K.CubeDim[D] == 0) {
      error(K.Loc, llvm::Twine("cube_dim.") + Axis[D] +
                       " is 0; every dimension must be at least 1");
      Positive = false;
    } else if (K.CubeDim[D] > Limits.MaxCubeDim[D]) {
      error(K.Loc, llvm::Twine("cube_dim.") + Axis[D] + " = " +
                       llvm::Twine(K.CubeDim[D]) +
                       " exceeds the device limit of " +
                       llvm::Twine(Limits.MaxCubeDim[D]));
    }
  }
  if (Positive && K.unitsPerCube() > Limits.MaxUnitsPerCube)
    error(K.Loc, "cube_dim(" + llvm::Twine(K.CubeDim[0]) + ", " +
                     llvm::Twine(K.CubeDim[1]) + ", " +
                     llvm::Twine(K.CubeDim[2]) + ") has " +
                     IRKernel::productText(K.CubeDim) +
                     " units per cube; the device allows at most " +
                     llvm::Twine(Limits.MaxUnitsPerCube));
  verifyClusterDim();
  if (K.PlaneDim && *K.PlaneDim != Limits.PlaneDim)
    error(K.Loc, "plane_dim(" + llvm::Twine(*K.PlaneDim) +
                     ") requested but the device runs planes of " +
                     llvm::Twine(Limits.PlaneDim) + " units");
}

void KernelVerifier::verifyClusterDim() {
  if (K.ClusterDimRank > 3)
    error(K.Loc, "cluster_dim has " +
                     llvm::Twine(unsigned(K.ClusterDimRank)) +
                     " dimensions; it takes 1 to 3");
  static const char *const Axis[] = {"x", "y", "z"};
  for (unsigned D = 0; D < 3; ++D)
    if (K.ClusterDim[D] == 0) {
      error(K.Loc, llvm::Twine("cluster_dim.") + Axis[D] +
                       " is 0; every dimension must be at least 1");
      return;
    }
  if (K.cubesPerCluster() > MaxClusterCubes)
    error(K.Loc, "cluster_dim(" + llvm::Twine(K.ClusterDim[0]) + ", " +
                     llvm::Twine(K.ClusterDim[1]) + ", " +
                     llvm::Twine(K.ClusterDim[2]) + ") has " +
                     IRKernel::productText(K.ClusterDim) +
                     " cubes per cluster; at most " +
                     llvm::Twine(MaxClusterCubes) + " are allowed");
}

void KernelVerifier::verifyParams() {
  std::set<ValueId> Seen;
  for (ValueId Id : K.Params) {
    if (Id >= K.Values.size()) {
      error(K.Loc, "parameter names no value (id " + llvm::Twine(Id) + ")");
      continue;
    }
    const ValueInfo &V = K.Values[Id];
    SourceLoc Loc = V.Loc.isValid() ? V.Loc : K.Loc;
    if (!Seen.insert(Id).second) {
      error(Loc, "parameter " + name(Id) + " is listed twice");
      continue;
    }
    if (V.Kind != ValueKind::Plain && V.Kind != ValueKind::Buffer)
      error(Loc, "parameter " + name(Id) + " is " + kindPhrase(V.Kind) +
                     "; parameters are buffers or values");
    verifyType(Loc, V.Ty, "parameter " + name(Id));
    define(Id, Loc);
  }
}

//===----------------------------------------------------------------------===//
// Definitions and uses
//===----------------------------------------------------------------------===//

void KernelVerifier::define(ValueId Id, SourceLoc Loc) {
  if (Id >= K.Values.size()) {
    error(Loc, "definition names no value (id " + llvm::Twine(Id) + ")");
    return;
  }
  if (State[Id] != DefState::Undefined) {
    error(Loc, "value " + name(Id) + " is defined twice");
    return;
  }
  State[Id] = DefState::InScope;
  ScopeStack.push_back(Id);
}

const ValueInfo *KernelVerifier::resolve(const Operation &Op, size_t I) {
  const Operand &O = Op.Operands[I];
  if (O.isLiteral())
    return nullptr;
  SourceLoc Loc = locOf(Op, I);
  if (O.Value >= K.Values.size()) {
    error(Loc, "operand " + llvm::Twine(I + 1) + " of " + op(Op) +
                   " names no value (id " + llvm::Twine(O.Value) + ")");
    return nullptr;
  }
  switch (State[O.Value]) {
  case DefState::Undefined:
    error(Loc, "use of " + name(O.Value) + " before its definition");
    return nullptr;
  case DefState::OutOfScope:
    error(Loc,
          "use of " + name(O.Value) + " outside the block that defines it");
    return nullptr;
  case DefState::InScope:
    break;
  }
  return &K.Values[O.Value];
}

std::optional<Type> KernelVerifier::plainOperand(const Operation &Op,
                                                 size_t I) {
  const Operand &O = Op.Operands[I];
  SourceLoc Loc = locOf(Op, I);
  if (O.isLiteral()) {
    Type Ty = O.Lit.Ty;
    // A line literal is a scalar one splatted by the parser or the builder
    // (splatScalarLiterals), only where lanes of a line are expected.
    if (Ty.isLine() && !splatsScalarLiterals(Op.opClass(), I)) {
      error(Loc, "literal operand " + llvm::Twine(I + 1) + " of " + op(Op) +
                     " has line type " + quoted(Ty) + "; literals are scalars");
      return std::nullopt;
    }
    if (!verifyType(Loc, Ty,
                    "literal operand " + llvm::Twine(I + 1) + " of " + op(Op)))
      return std::nullopt;
    if (!fitsWidth(O.Lit.Bits, Ty.elementKind()) ||
        (Ty.isBool() && O.Lit.Bits > 1)) {
      error(Loc, "literal operand " + llvm::Twine(I + 1) + " of " + op(Op) +
                     " does not fit in " + quoted(Ty));
      return std::nullopt;
    }
    return Ty;
  }
  const ValueInfo *V = resolve(Op, I);
  if (!V)
    return std::nullopt;
  if (V->Kind != ValueKind::Plain) {
    error(Loc, "operand " + llvm::Twine(I + 1) + " of " + op(Op) +
                   " must be a value, but " + name(O.Value) + " is " +
                   valuePhrase(*V));
    return std::nullopt;
  }
  return V->Ty;
}

const ValueInfo *KernelVerifier::memoryOperand(const Operation &Op, size_t I,
                                               MemoryKinds Kinds) {
  const Operand &O = Op.Operands[I];
  SourceLoc Loc = locOf(Op, I);
  if (O.isLiteral()) {
    error(Loc, op(Op) + " needs " + Kinds.phrase() + " as operand " +
                   llvm::Twine(I + 1) + ", found a literal");
    return nullptr;
  }
  const ValueInfo *V = resolve(Op, I);
  if (!V)
    return nullptr;
  if (!Kinds.allows(*V)) {
    error(Loc, op(Op) + " needs " + Kinds.phrase() + " as operand " +
                   llvm::Twine(I + 1) + ", but " + name(O.Value) + " is " +
                   valuePhrase(*V));
    return nullptr;
  }
  return V;
}

bool KernelVerifier::expectType(const Operation &Op, size_t I,
                                std::optional<Type> Found, Type Expected,
                                const llvm::Twine &Role) {
  if (!Found)
    return false;
  if (*Found == Expected)
    return true;
  error(locOf(Op, I), Role + " of " + op(Op) + " has type " + quoted(*Found) +
                          ", expected " + quoted(Expected));
  return false;
}

bool KernelVerifier::verifyIndex(const Operation &Op, size_t I) {
  std::optional<Type> Ty = plainOperand(Op, I);
  if (!Ty)
    return false;
  if (Ty->isLine() || !Ty->isInteger()) {
    error(locOf(Op, I), "the index of " + op(Op) +
                            " must be a scalar integer, found " + quoted(*Ty));
    return false;
  }
  return true;
}

bool KernelVerifier::checkOperandCount(const Operation &Op, size_t Min,
                                       size_t Max) {
  size_t N = Op.Operands.size();
  if (N >= Min && N <= Max)
    return true;
  std::string Want = Min == Max
                         ? std::to_string(Min)
                         : std::to_string(Min) + " or " + std::to_string(Max);
  error(Op.Loc, op(Op) + " takes " + Want + " operand" + (Max == 1 ? "" : "s") +
                    ", found " + std::to_string(N));
  // Still check what the operands name, so that uses are reported.
  for (size_t I = 0; I < N; ++I)
    resolve(Op, I);
  return false;
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

void KernelVerifier::verifyBlock(const Block &B) {
  size_t Mark;
  enterScope(Mark);
  // The enclosing operation is current again after its blocks, for the
  // diagnostics it still reports.
  const Operation *Enclosing = CurrentOp;
  for (const Operation &Op : B.Ops) {
    CurrentOp = &Op;
    verifyOp(Op);
  }
  CurrentOp = Enclosing;
  leaveScope(Mark);
}

void KernelVerifier::verifyRegions(const Operation &Op, size_t Expected) {
  if (Op.Regions.size() != Expected)
    error(Op.Loc, op(Op) + " has " + llvm::Twine(Op.Regions.size()) +
                      (Op.Regions.size() == 1 ? " region" : " regions") +
                      ", expected " + llvm::Twine(Expected));
}

/// Checks the operands of an element-wise operation of \p Arity operands of
/// one type and returns that type, or none after a diagnostic.
std::optional<Type> KernelVerifier::verifyElementwise(const Operation &Op,
                                                      size_t Arity) {
  if (!checkOperandCount(Op, Arity, Arity))
    return std::nullopt;
  std::optional<Type> First;
  bool Ok = true;
  for (size_t I = 0; I < Arity; ++I) {
    std::optional<Type> Ty = plainOperand(Op, I);
    if (!Ty) {
      Ok = false;
      continue;
    }
    if (!First) {
      First = Ty;
      continue;
    }
    if (*Ty != *First) {
      error(locOf(Op, I), "operand " + llvm::Twine(I + 1) + " of " + op(Op) +
                              " has type " + quoted(*Ty) +
                              ", but operand 1 has type " + quoted(*First));
      Ok = false;
    }
  }
  if (!Ok || !First)
    return std::nullopt;
  Type T = *First;
  if (T.isMinifloat() && Op.opClass() != OpClass::Vector) {
    rejectMinifloat(Op, T);
    return std::nullopt;
  }
  auto Reject = [&](const char *Need) -> std::optional<Type> {
    error(locOf(Op, 0),
          op(Op) + " needs " + Need + " operands, found " + quoted(T));
    return std::nullopt;
  };
  switch (Op.opClass()) {
  case OpClass::UnaryNumeric:
  case OpClass::BinaryNumeric:
  case OpClass::TernaryNumeric:
  case OpClass::PlaneReduce:
    if (T.isBool())
      return Reject("integer or float");
    return T;
  case OpClass::TernaryFloat:
  case OpClass::UnaryFloat:
  case OpClass::BinaryFloat:
    if (!T.isFloat())
      return Reject("float");
    return T;
  case OpClass::FloatPredicate:
    if (!T.isFloat())
      return Reject("float");
    return T.withElement(ScalarKind::Bool);
  case OpClass::BinaryInt:
  case OpClass::UnaryInt:
  case OpClass::BitCount:
    if (!T.isInteger())
      return Reject("integer");
    return T;
  case OpClass::BinaryBool:
  case OpClass::UnaryBool:
  case OpClass::PlaneBool:
    if (!T.isBool())
      return Reject("bool");
    return T;
  case OpClass::Compare:
    if (T.isBool() && Op.Kind != OpKind::Eq && Op.Kind != OpKind::Ne)
      return Reject("integer or float");
    return T.withElement(ScalarKind::Bool);
  default:
    return T;
  }
}

std::optional<Type> KernelVerifier::verifyLineOp(const Operation &Op) {
  switch (Op.opClass()) {
  case OpClass::Dot:
  case OpClass::Magnitude:
  case OpClass::LineReduce:
  case OpClass::Normalize: {
    std::optional<Type> T =
        verifyElementwise(Op, Op.opClass() == OpClass::Dot ? 2 : 1);
    if (!T)
      return std::nullopt;
    bool IntOk = Op.opClass() == OpClass::Dot ||
                 Op.opClass() == OpClass::LineReduce;
    if (!T->isLine() || !(T->isFloat() || (IntOk && T->isInteger()))) {
      error(locOf(Op, 0), op(Op) + " needs " +
                              (IntOk ? "integer or float" : "float") +
                              " line operands, found " + quoted(*T));
      return std::nullopt;
    }
    return Op.opClass() == OpClass::Normalize ? *T : T->elementType();
  }
  case OpClass::Extract:
  case OpClass::Insert: {
    bool IsInsert = Op.opClass() == OpClass::Insert;
    if (!checkOperandCount(Op, IsInsert ? 3 : 2, IsInsert ? 3 : 2))
      return std::nullopt;
    std::optional<Type> V = plainOperand(Op, 0);
    bool Ok = V.has_value();
    if (V && !V->isLine()) {
      error(locOf(Op, 0),
            op(Op) + " needs a line as operand 1, found " + quoted(*V));
      Ok = false;
    }
    // The index is a literal (of any integer type: `2`, `2:u32`, `2:i32`)
    // or a u32 value.
    const Operand &Idx = Op.Operands[1];
    std::optional<Type> IdxTy = plainOperand(Op, 1);
    bool IntegerLiteral =
        Idx.isLiteral() && IdxTy && IdxTy->isInteger() && !IdxTy->isLine();
    if (!IdxTy) {
      Ok = false;
    } else if (!IntegerLiteral && *IdxTy != Type::scalar(ScalarKind::U32)) {
      error(locOf(Op, 1), "the lane index of " + op(Op) +
                              " must be 'u32', found " + quoted(*IdxTy));
      Ok = false;
    } else if (IntegerLiteral && V && V->isLine()) {
      ScalarKind IK = IdxTy->elementKind();
      bool Negative = IdxTy->isSigned() && signedValue(Idx.Lit.Bits, IK) < 0;
      if (Negative || Idx.Lit.Bits >= V->lanes()) {
        error(locOf(Op, 1), "lane index " + printLiteral(Idx.Lit.Bits, IK) +
                                " of " + op(Op) + " is out of range for " +
                                quoted(*V));
        Ok = false;
      }
    }
    if (IsInsert) {
      std::optional<Type> E = plainOperand(Op, 2);
      if (V && V->isLine())
        Ok &= expectType(Op, 2, E, V->elementType(), "the element");
      else
        Ok &= E.has_value();
    }
    if (!Ok)
      return std::nullopt;
    return IsInsert ? *V : V->elementType();
  }
  case OpClass::Splat: {
    if (!checkOperandCount(Op, 1, 1))
      return std::nullopt;
    std::optional<Type> S = plainOperand(Op, 0);
    if (!S)
      return std::nullopt;
    if (S->isLine()) {
      error(locOf(Op, 0), "splat needs a scalar operand, found " + quoted(*S));
      return std::nullopt;
    }
    if (!Op.ResultType.isLine()) {
      error(Op.Loc, "splat gives a line, but its result type is written " +
                        quoted(Op.ResultType));
      return std::nullopt;
    }
    return Type::line(S->elementKind(), Op.ResultType.lanes());
  }
  case OpClass::Vector: {
    size_t N = Op.Operands.size();
    if (!Type::isValidLineWidth(N)) {
      error(Op.Loc, "vector takes 1, 2, 3, 4, 8 or 16 operands, found " +
                        llvm::Twine(N));
      for (size_t I = 0; I < N; ++I)
        resolve(Op, I);
      return std::nullopt;
    }
    std::optional<Type> T = verifyElementwise(Op, N);
    if (!T)
      return std::nullopt;
    if (T->isLine()) {
      error(locOf(Op, 0), "vector needs scalar operands, found " + quoted(*T));
      return std::nullopt;
    }
    return Type::line(T->elementKind(), N);
  }
  default:
    return std::nullopt;
  }
}

void KernelVerifier::rejectMinifloat(const Operation &Op, Type T) {
  error(locOf(Op, 0), op(Op) + " does not take " + quoted(T) +
                          ": minifloat types are storage types; cast to "
                          "'f32' to compute, bitcast to compare bits");
}

/// A cast between f4e2m1x2 and another type: each lane holds two values, so
/// the other side has twice the lanes (a scalar pair is `vec<2 x T>`).
std::optional<Type> KernelVerifier::verifyPackedPairCast(const Operation &Op,
                                                         Type From, Type To) {
  Type Packed = From.isPackedPair() ? From : To;
  Type Other = From.isPackedPair() ? To : From;
  if (!Other.isLine() || Other.lanes() != 2 * Packed.lanes()) {
    error(Op.Loc, "cast from " + quoted(From) + " to " + quoted(To) +
                      ": each lane of 'f4e2m1x2' holds two values, so the "
                      "other side must be a line of " +
                      llvm::Twine(2 * Packed.lanes()) + " lanes");
    return std::nullopt;
  }
  return To;
}

std::optional<Type> KernelVerifier::verifyConversion(const Operation &Op) {
  if (Op.opClass() == OpClass::Select) {
    if (!checkOperandCount(Op, 3, 3))
      return std::nullopt;
    std::optional<Type> C = plainOperand(Op, 0);
    std::optional<Type> A = plainOperand(Op, 1);
    std::optional<Type> B = plainOperand(Op, 2);
    bool Ok = C && A && B;
    if (A && B && *A != *B) {
      error(locOf(Op, 2), "operand 3 of select has type " + quoted(*B) +
                              ", but operand 2 has type " + quoted(*A));
      Ok = false;
    }
    if (C) {
      bool CondOk =
          C->isBool() &&
          (!C->isLine() || (A && A->isLine() && A->lanes() == C->lanes()));
      if (!CondOk) {
        error(locOf(Op, 0),
              "the condition of select must be 'bool'" +
                  llvm::Twine(A && A->isLine() ? " or " + quoted(A->withElement(
                                                              ScalarKind::Bool))
                                               : std::string()) +
                  ", found " + quoted(*C));
        Ok = false;
      }
    }
    if (!Ok)
      return std::nullopt;
    return *A;
  }
  if (!checkOperandCount(Op, 1, 1))
    return std::nullopt;
  std::optional<Type> T = plainOperand(Op, 0);
  if (!T)
    return std::nullopt;
  Type R = Op.ResultType;
  if (Op.opClass() == OpClass::Cast) {
    if (T->isPackedPair() != R.isPackedPair())
      return verifyPackedPairCast(Op, *T, R);
    if (T->isLine() != R.isLine() || T->lanes() != R.lanes()) {
      error(Op.Loc, "cast from " + quoted(*T) + " to " + quoted(R) +
                        " changes the number of lanes");
      return std::nullopt;
    }
    return R;
  }
  // Bitcast.
  if (T->isBool() || R.isBool()) {
    error(Op.Loc, "bitcast from " + quoted(*T) + " to " + quoted(R) +
                      ": bool has no bit layout");
    return std::nullopt;
  }
  uint64_t From = uint64_t(T->lanes()) * bitWidth(T->elementKind());
  uint64_t To = uint64_t(R.lanes()) * bitWidth(R.elementKind());
  if (From != To) {
    error(Op.Loc, "bitcast from " + quoted(*T) + " (" + llvm::Twine(From) +
                      " bits) to " + quoted(R) + " (" + llvm::Twine(To) +
                      " bits) changes the size");
    return std::nullopt;
  }
  return R;
}

void KernelVerifier::verifyAccess(const Operation &Op, const ValueInfo &Mem,
                                  bool Reads, bool Writes) {
  if (Mem.Kind != ValueKind::Buffer)
    return;
  SourceLoc Loc = locOf(Op, 0);
  if (Writes && Mem.Access == AccessKind::Read)
    error(Loc,
          op(Op) + " writes to %" + Mem.Name + ", a buffer declared 'read'");
  else if (Reads && Mem.Access == AccessKind::Write)
    error(Loc,
          op(Op) + " reads from %" + Mem.Name + ", a buffer declared 'write'");
}

std::optional<Type> KernelVerifier::verifyMemoryOp(const Operation &Op) {
  OpClass Class = Op.opClass();
  switch (Class) {
  case OpClass::Len: {
    if (!checkOperandCount(Op, 1, 1))
      return std::nullopt;
    if (!memoryOperand(Op, 0, AnyArray))
      return std::nullopt;
    return Type::scalar(ScalarKind::U32);
  }
  case OpClass::Get: {
    if (!checkOperandCount(Op, 1, 1))
      return std::nullopt;
    const ValueInfo *V = memoryOperand(Op, 0, VarOnly);
    return V ? std::optional<Type>(V->Ty) : std::nullopt;
  }
  case OpClass::Set: {
    if (!checkOperandCount(Op, 2, 2))
      return std::nullopt;
    const ValueInfo *V = memoryOperand(Op, 0, VarOnly);
    std::optional<Type> X = plainOperand(Op, 1);
    if (V)
      expectType(Op, 1, X, V->Ty, "the value");
    return std::nullopt;
  }
  default:
    break;
  }

  // Indexed: load, store and the atomics.
  size_t Arity = 2;
  bool Reads = true, Writes = false, Atomic = false;
  switch (Class) {
  case OpClass::Load:
    break;
  case OpClass::Store:
    Arity = 3, Reads = false, Writes = true;
    break;
  case OpClass::AtomicRMW:
    Arity = 3, Writes = true, Atomic = true;
    break;
  case OpClass::AtomicCas:
    Arity = 4, Writes = true, Atomic = true;
    break;
  case OpClass::AtomicLoad:
    Atomic = true;
    break;
  case OpClass::AtomicStore:
    Arity = 3, Reads = false, Writes = true, Atomic = true;
    break;
  default:
    return std::nullopt;
  }
  if (!checkOperandCount(Op, Arity, Arity))
    return std::nullopt;
  const ValueInfo *Mem = memoryOperand(
      Op, 0,
      Op.Kind == OpKind::WorkgroupUniformLoad ? SharedOnly
      : Atomic                                ? AtomicMemory
                                              : AnyArray);
  bool Ok = Mem != nullptr;
  if (Mem)
    verifyAccess(Op, *Mem, Reads, Writes);
  Ok &= verifyIndex(Op, 1);
  bool MemTypeOk = Mem != nullptr;
  if (Mem && Atomic) {
    ScalarKind E = Mem->Ty.elementKind();
    // Floats: every atomic but the bitwise ones (and, or, xor).
    bool Bitwise = Op.Kind == OpKind::AtomicAnd ||
                   Op.Kind == OpKind::AtomicOr || Op.Kind == OpKind::AtomicXor;
    bool Float = E == ScalarKind::F32 || E == ScalarKind::F64;
    // Lines of these types too, one atomic per lane (§12.3), but for
    // atomic_cas.
    bool TypeOk = E == ScalarKind::I32 || E == ScalarKind::U32 ||
                  E == ScalarKind::I64 || E == ScalarKind::U64 ||
                  (Float && !Bitwise);
    if (TypeOk && Mem->Ty.isLine() && Class == OpClass::AtomicCas) {
      error(locOf(Op, 0), op(Op) + " on %" + Mem->Name + " of " +
                              quoted(Mem->Ty) +
                              "; atomic_cas works on scalars, not lines");
      Ok = MemTypeOk = false;
    } else if (!TypeOk) {
      error(locOf(Op, 0),
            op(Op) + " on %" + Mem->Name + " of " + quoted(Mem->Ty) +
                "; atomics work on 'i32', 'u32', 'i64' and 'u64'" +
                (Bitwise ? "" : ", and 'f32' and 'f64'"));
      Ok = MemTypeOk = false;
    }
  }
  static const char *const Roles[] = {"", "", "the value", "the new value"};
  for (size_t I = 2; I < Arity; ++I) {
    std::optional<Type> X = plainOperand(Op, I);
    const char *Role =
        Class == OpClass::AtomicCas && I == 2 ? "the expected value" : Roles[I];
    // Against a memory type already refused, the values are not checked:
    // one mistake, one message.
    if (MemTypeOk)
      Ok &= expectType(Op, I, X, Mem->Ty, Role);
    else
      Ok &= X.has_value();
  }
  if (!Ok || !producesValue(Class))
    return std::nullopt;
  return Mem->Ty;
}

std::optional<Type> KernelVerifier::verifyPlaneOp(const Operation &Op) {
  switch (Op.opClass()) {
  case OpClass::PlaneReduce:
  case OpClass::PlaneBool:
    return verifyElementwise(Op, 1);
  case OpClass::PlaneElect:
    if (!checkOperandCount(Op, 0, 0))
      return std::nullopt;
    return Type::scalar(ScalarKind::Bool);
  case OpClass::PlaneBallot: {
    if (!checkOperandCount(Op, 1, 1))
      return std::nullopt;
    std::optional<Type> T = plainOperand(Op, 0);
    if (!expectType(Op, 0, T, Type::scalar(ScalarKind::Bool), "operand 1"))
      return std::nullopt;
    return Type::line(ScalarKind::U32, 4);
  }
  case OpClass::PlaneLane: {
    if (!checkOperandCount(Op, 2, 2))
      return std::nullopt;
    std::optional<Type> T = plainOperand(Op, 0);
    std::optional<Type> L = plainOperand(Op, 1);
    const char *Role = Op.Kind == OpKind::PlaneShuffleXor ? "the mask"
                       : (Op.Kind == OpKind::PlaneShuffleUp ||
                          Op.Kind == OpKind::PlaneShuffleDown)
                           ? "the delta"
                           : "the lane";
    bool Ok = expectType(Op, 1, L, Type::scalar(ScalarKind::U32), Role);
    if (T && T->isMinifloat()) {
      rejectMinifloat(Op, *T);
      return std::nullopt;
    }
    if (!T || !Ok)
      return std::nullopt;
    return *T;
  }
  default:
    return std::nullopt;
  }
}

/// The type the operands imply for a value-producing operation, or none
/// (after a diagnostic, or when the operation produces no value).
std::optional<Type> KernelVerifier::impliedType(const Operation &Op) {
  switch (Op.opClass()) {
  case OpClass::Builtin:
  case OpClass::BuiltinXYZ:
    if (!checkOperandCount(Op, 0, 0))
      return std::nullopt;
    if (Op.Component > (Op.opClass() == OpClass::BuiltinXYZ ? 3 : 0)) {
      error(Op.Loc, op(Op) + " has no component " +
                        llvm::Twine(unsigned(Op.Component)));
      return std::nullopt;
    }
    return Type::scalar(ScalarKind::U32);
  case OpClass::Const: {
    if (!checkOperandCount(Op, 0, 0))
      return std::nullopt;
    Type T = Op.ResultType;
    if (Op.ConstBits.size() != T.lanes()) {
      error(Op.Loc, "const has " + llvm::Twine(Op.ConstBits.size()) + " value" +
                        (Op.ConstBits.size() == 1 ? "" : "s") + " but " +
                        quoted(T) + " has " + llvm::Twine(T.lanes()) + " lane" +
                        (T.lanes() == 1 ? "" : "s"));
      return std::nullopt;
    }
    for (size_t I = 0; I < Op.ConstBits.size(); ++I) {
      uint64_t Bits = Op.ConstBits[I];
      if (!fitsWidth(Bits, T.elementKind()) || (T.isBool() && Bits > 1)) {
        error(Op.Loc, "const value " + llvm::Twine(I + 1) +
                          " does not fit in " + quoted(T.elementType()));
        return std::nullopt;
      }
    }
    return T;
  }
  case OpClass::UnaryNumeric:
  case OpClass::UnaryFloat:
  case OpClass::UnaryInt:
  case OpClass::UnaryBool:
  case OpClass::FloatPredicate:
    return verifyElementwise(Op, 1);
  case OpClass::BinaryNumeric:
  case OpClass::BinaryFloat:
  case OpClass::BinaryInt:
  case OpClass::BinaryBool:
  case OpClass::Compare:
    return verifyElementwise(Op, 2);
  case OpClass::TernaryNumeric:
  case OpClass::TernaryFloat:
    return verifyElementwise(Op, 3);
  case OpClass::PowI: {
    // A float (scalar or line) to an i32 power of the same shape.
    if (!checkOperandCount(Op, 2, 2))
      return std::nullopt;
    std::optional<Type> X = plainOperand(Op, 0);
    std::optional<Type> N = plainOperand(Op, 1);
    if (!X || !N)
      return std::nullopt;
    if (!X->isFloat()) {
      error(locOf(Op, 0), op(Op) + " needs a float base, found " + quoted(*X));
      return std::nullopt;
    }
    if (!expectType(Op, 1, N, X->withElement(ScalarKind::I32), "the exponent"))
      return std::nullopt;
    return *X;
  }
  case OpClass::BitCount: {
    std::optional<Type> T = verifyElementwise(Op, 1);
    // popcount, clz and ctz may also give their count as u32 lanes.
    if (T && Op.ResultType == T->withElement(ScalarKind::U32))
      return Op.ResultType;
    if (T && Op.ResultType != *T) {
      error(Op.Loc, "result type " + quoted(Op.ResultType) +
                        " does not match the implied type " + quoted(*T) +
                        " (or " + quoted(T->withElement(ScalarKind::U32)) +
                        ") of " + op(Op));
      return std::nullopt;
    }
    return T;
  }
  case OpClass::Dot:
  case OpClass::Magnitude:
  case OpClass::LineReduce:
  case OpClass::Normalize:
  case OpClass::Extract:
  case OpClass::Insert:
  case OpClass::Splat:
  case OpClass::Vector:
    return verifyLineOp(Op);
  case OpClass::Cast:
  case OpClass::Bitcast:
  case OpClass::Select:
    return verifyConversion(Op);
  case OpClass::TensorMeta:
    return verifyTensorMeta(Op);
  case OpClass::CmmaElem:
    return verifyCmmaElem(Op);
  case OpClass::Load:
  case OpClass::Store:
  case OpClass::Len:
  case OpClass::Get:
  case OpClass::Set:
  case OpClass::AtomicRMW:
  case OpClass::AtomicCas:
  case OpClass::AtomicLoad:
  case OpClass::AtomicStore:
    return verifyMemoryOp(Op);
  case OpClass::PlaneReduce:
  case OpClass::PlaneBool:
  case OpClass::PlaneLane:
  case OpClass::PlaneElect:
  case OpClass::PlaneBallot:
    return verifyPlaneOp(Op);
  case OpClass::Barrier:
    checkOperandCount(Op, 0, 0);
    return std::nullopt;
  case OpClass::BarrierArrive:
  case OpClass::BarrierExpectTx:
  case OpClass::BarrierWait:
    return verifyBarrierOp(Op);
  default:
    return std::nullopt;
  }
}

void KernelVerifier::verifyResult(const Operation &Op,
                                  std::optional<Type> Implied) {
  if (Op.Result == NoValue) {
    error(Op.Loc, op(Op) + " has no result value");
    return;
  }
  if (Op.Result >= K.Values.size()) {
    error(Op.Loc, "result of " + op(Op) + " names no value (id " +
                      llvm::Twine(Op.Result) + ")");
    return;
  }
  const ValueInfo &V = K.Values[Op.Result];
  bool TypeOk = verifyType(Op.Loc, Op.ResultType,
                           "result " + name(Op.Result) + " of " + op(Op));
  if (V.Kind != ValueKind::Plain)
    error(Op.Loc, "result " + name(Op.Result) + " of " + op(Op) + " is " +
                      kindPhrase(V.Kind) + ", expected a value");
  else if (V.Ty != Op.ResultType)
    error(Op.Loc, "result " + name(Op.Result) + " of " + op(Op) +
                      " is recorded as " + quoted(V.Ty) + " but written " +
                      quoted(Op.ResultType));
  else if (TypeOk && Implied && *Implied != Op.ResultType)
    error(Op.Loc, "result type " + quoted(Op.ResultType) +
                      " does not match the implied type " + quoted(*Implied) +
                      " of " + op(Op));
  define(Op.Result, Op.Loc);
}

void KernelVerifier::verifyDecl(const Operation &Op) {
  checkOperandCount(Op, 0, 0);
  if (!Op.Regions.empty())
    verifyRegions(Op, 0);
  if (Op.Result >= K.Values.size()) {
    error(Op.Loc, op(Op) + " declares no valid object");
    return;
  }
  const ValueInfo &V = K.Values[Op.Result];
  ValueKind Want = Op.opClass() == OpClass::VarDecl ? ValueKind::Var
                   : Op.Kind == OpKind::Shared      ? ValueKind::Shared
                                                    : ValueKind::Local;
  if (V.Kind != Want || V.IsBarrier)
    error(Op.Loc, op(Op) + " declares " + name(Op.Result) + " as " +
                      valuePhrase(V) + ", expected " + kindPhrase(Want));
  if (V.Ty != Op.ResultType)
    error(Op.Loc, op(Op) + " declares " + name(Op.Result) + " of " +
                      quoted(Op.ResultType) + " but it is recorded as " +
                      quoted(V.Ty));
  bool TypeOk =
      verifyType(Op.Loc, Op.ResultType, op(Op) + " " + name(Op.Result));
  uint64_t Count = 1;
  if (Op.opClass() == OpClass::ArrayDecl) {
    Count = Op.ArraySize;
    if (Count == 0)
      error(Op.Loc, op(Op) + " " + name(Op.Result) +
                        " has 0 elements; arrays need at least one");
    else if (V.Count != Count)
      error(Op.Loc, op(Op) + " " + name(Op.Result) + " declares " +
                        llvm::Twine(Count) + " elements but is recorded with " +
                        llvm::Twine(V.Count));
  }
  define(Op.Result, Op.Loc);
  if (!TypeOk)
    return;
  uint64_t Bytes =
      llvm::SaturatingMultiply(Count, uint64_t(Op.ResultType.storeSize()));
  countMemory(Op, Want == ValueKind::Shared, Bytes);
}

//===----------------------------------------------------------------------===//
// Barrier objects and asynchronous copies (docs/LangRef.md §13)
//===----------------------------------------------------------------------===//

void KernelVerifier::countMemory(const Operation &Op, bool IsShared,
                                 uint64_t Bytes) {
  if (IsShared) {
    SharedBytes = llvm::SaturatingAdd(SharedBytes, Bytes);
    if (SharedBytes > Limits.MaxSharedBytes && !SharedReported) {
      SharedReported = true;
      error(Op.Loc, "shared memory reaches " + llvm::Twine(SharedBytes) +
                        " bytes with " + name(Op.Result) +
                        "; the device allows at most " +
                        llvm::Twine(Limits.MaxSharedBytes) + " bytes per cube");
    }
    return;
  }
  LocalBytes = llvm::SaturatingAdd(LocalBytes, Bytes);
  if (LocalBytes > Limits.MaxLocalBytesPerUnit && !LocalReported) {
    LocalReported = true;
    error(Op.Loc, "per-unit memory (vars and local arrays) reaches " +
                      llvm::Twine(LocalBytes) + " bytes with " +
                      name(Op.Result) + "; the device allows at most " +
                      llvm::Twine(Limits.MaxLocalBytesPerUnit) +
                      " bytes per unit");
  }
}

bool KernelVerifier::expectU32(const Operation &Op, size_t I,
                               const llvm::Twine &Role) {
  return expectType(Op, I, plainOperand(Op, I), Type::scalar(ScalarKind::U32),
                    Role);
}

void KernelVerifier::verifyBarrierDecl(const Operation &Op) {
  bool Cube = Op.Kind == OpKind::BarrierCube;
  if (!Op.Regions.empty())
    verifyRegions(Op, 0);
  if (checkOperandCount(Op, Cube ? 1 : 0, Cube ? 1 : 0) && Cube &&
      expectU32(Op, 0, "the arrival count")) {
    const Operand &Count = Op.Operands[0];
    if (Count.isLiteral() && Count.Lit.Bits == 0)
      error(locOf(Op, 0), "barrier_cube needs an arrival count of at least 1");
    else if (!Uniformity.isUniform(Count))
      error(locOf(Op, 0), "the arrival count of barrier_cube must be uniform, "
                          "but it depends on " +
                              *Uniformity.divergenceRoot(Count.Value));
  }
  if (Op.Result >= K.Values.size()) {
    error(Op.Loc, op(Op) + " declares no valid object");
    return;
  }
  const ValueInfo &V = K.Values[Op.Result];
  ValueKind Want = Cube ? ValueKind::Shared : ValueKind::Local;
  if (!V.IsBarrier || V.Kind != Want || V.Ty != Type::scalar(ScalarKind::U32) ||
      V.Count != BarrierStateWords)
    error(Op.Loc, op(Op) + " declares " + name(Op.Result) +
                      ", which is not recorded as a barrier object " +
                      (Cube ? "in shared memory" : "of the unit"));
  define(Op.Result, Op.Loc);
  // A cube's barrier lives in its shared memory, a unit's in its own.
  countMemory(Op, Cube, BarrierStateWords * 4);
  if (Cube)
    verifyConvergence(Op);
}

const ValueInfo *KernelVerifier::barrierOperand(const Operation &Op, size_t I,
                                                bool NeedsCube) {
  const ValueInfo *Bar = memoryOperand(Op, I, BarrierObject);
  if (Bar && NeedsCube && Bar->Kind != ValueKind::Shared) {
    error(locOf(Op, I), op(Op) + " counts transaction bytes, which only a "
                                 "barrier_cube (in shared memory) has; " +
                            name(Op.Operands[I].Value) +
                            " is a barrier_unit");
    return nullptr;
  }
  return Bar;
}

std::optional<Type> KernelVerifier::verifyBarrierOp(const Operation &Op) {
  switch (Op.Kind) {
  case OpKind::BarrierArrive:
    if (!checkOperandCount(Op, 1, 1) || !barrierOperand(Op, 0, false))
      return std::nullopt;
    return Type::scalar(ScalarKind::U32);
  case OpKind::BarrierArriveTx: {
    if (!checkOperandCount(Op, 3, 3))
      return std::nullopt;
    bool Ok = barrierOperand(Op, 0, true) != nullptr;
    Ok &= expectU32(Op, 1, "the arrival count");
    Ok &= expectU32(Op, 2, "the transaction byte count");
    if (Ok && Op.Operands[1].isLiteral() && Op.Operands[1].Lit.Bits == 0) {
      error(locOf(Op, 1), "barrier_arrive_tx needs an arrival count of at "
                          "least 1 (use barrier_expect_tx to add bytes "
                          "without arriving)");
      Ok = false;
    }
    return Ok ? std::optional<Type>(Type::scalar(ScalarKind::U32))
              : std::nullopt;
  }
  case OpKind::BarrierExpectTx:
    if (checkOperandCount(Op, 2, 2)) {
      barrierOperand(Op, 0, true);
      expectU32(Op, 1, "the transaction byte count");
    }
    return std::nullopt;
  case OpKind::BarrierWait:
  case OpKind::BarrierArriveAndWait: {
    bool Wait = Op.Kind == OpKind::BarrierWait;
    if (!checkOperandCount(Op, Wait ? 2 : 1, Wait ? 2 : 1))
      return std::nullopt;
    const ValueInfo *Bar = barrierOperand(Op, 0, false);
    if (Wait)
      expectU32(Op, 1, "the token");
    // Every unit of the cube waits on a cube's barrier together.
    if (Bar && Bar->Kind == ValueKind::Shared)
      verifyConvergence(Op);
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

//===----------------------------------------------------------------------===//
// Tensor metadata and tensor maps (docs/LangRef.md §16, §17)
//===----------------------------------------------------------------------===//

std::optional<Type> KernelVerifier::verifyTensorMeta(const Operation &Op) {
  bool TakesDim = Op.Kind == OpKind::Shape || Op.Kind == OpKind::Stride;
  size_t Count = TakesDim ? 2 : 1;
  if (!checkOperandCount(Op, Count, Count))
    return std::nullopt;
  bool Ok = memoryOperand(Op, 0, TensorParam) != nullptr;
  if (TakesDim)
    Ok &= expectU32(Op, 1, "the dimension");
  if (!Ok)
    return std::nullopt;
  return Type::scalar(ScalarKind::U32);
}

void KernelVerifier::verifyTensorCopy(const Operation &Op) {
  // tma_load %bar, %smem, %offset, %map, %c...;
  // tma_store %smem, %offset, %map, %c...;
  // tma_load_im2col %bar, %smem, %offset, %map, %c... offsets %o...
  bool IsIm2col = Op.Kind == OpKind::TmaLoadIm2col;
  bool IsLoad = Op.Kind == OpKind::TmaLoad || IsIm2col;
  size_t SmemI = IsLoad ? 1 : 0, MapI = SmemI + 2;
  if (IsIm2col) {
    // rank coordinates and rank - 2 offsets, rank 3 to 5.
    static_assert(MinIm2colRank == 3 && MaxTensorMapRank == 5,
                  "the message below lists the operand counts");
    size_t N = Op.Operands.size();
    size_t Min = MapI + 1 + 2 * MinIm2colRank - 2;
    size_t Max = MapI + 1 + 2 * MaxTensorMapRank - 2;
    if (N < Min || N > Max || N % 2) {
      error(Op.Loc, op(Op) + " takes 8, 10 or 12 operands (rank 3 to 5: " +
                        "rank coordinates and rank - 2 offsets), found " +
                        llvm::Twine(N));
      return;
    }
  } else if (!checkOperandCount(Op, MapI + 2, MapI + 1 + MaxTensorMapRank)) {
    return;
  }
  if (IsLoad)
    barrierOperand(Op, 0, /*NeedsCube=*/true);
  const ValueInfo *Smem = memoryOperand(Op, SmemI, SharedOnly);
  verifyIndex(Op, SmemI + 1);
  const ValueInfo *Map = memoryOperand(Op, MapI, TensorParam);
  if (Map && !Map->IsTensorMap) {
    error(locOf(Op, MapI),
          op(Op) + " needs a tensor map as operand " + llvm::Twine(MapI + 1) +
              ", but " + name(Op.Operands[MapI].Value) +
              " is a buffer (declare it 'tensor_map<" + Map->Ty.str() + ", " +
              accessName(Map->Access) + (IsIm2col ? ", im2col>')" : ">')"));
    Map = nullptr;
  }
  size_t Rank = Op.Operands.size() - MapI - 1;
  if (IsIm2col)
    Rank = (Op.Operands.size() - MapI + 1) / 2;
  for (size_t I = MapI + 1; I <= MapI + Rank; ++I)
    expectType(Op, I, plainOperand(Op, I), Type::scalar(ScalarKind::I32),
               "coordinate " + llvm::Twine(I - MapI));
  for (size_t I = MapI + Rank + 1; I < Op.Operands.size(); ++I)
    expectType(Op, I, plainOperand(Op, I), Type::scalar(ScalarKind::U16),
               "im2col offset " + llvm::Twine(I - MapI - Rank));
  if (!Map)
    return;
  if (Map->IsIm2col != IsIm2col) {
    std::string Decl = "'tensor_map<" + Map->Ty.str() + ", " +
                       accessName(Map->Access).str() +
                       (IsIm2col ? ", im2col>'" : ">'");
    std::string Why =
        IsIm2col ? " needs an im2col tensor map as operand " +
                       std::to_string(MapI + 1) + ", but %" + Map->Name +
                       " is a tiled one (declare it " + Decl + ")"
                 : " copies %" + Map->Name +
                       ", an im2col tensor map, which only " +
                       "tma_load_im2col copies (declare it " + Decl +
                       " for tiled copies)";
    error(locOf(Op, MapI), op(Op) + Why);
    return;
  }
  if (IsLoad && Map->Access == AccessKind::Write)
    error(locOf(Op, MapI), op(Op) + " reads from %" + Map->Name +
                               ", a tensor map declared 'write'");
  if (!IsLoad && Map->Access == AccessKind::Read)
    error(locOf(Op, MapI), op(Op) + " writes to %" + Map->Name +
                               ", a tensor map declared 'read'");
  auto [It, New] =
      MapRanks.try_emplace(Op.Operands[MapI].Value, Rank, Op.Loc);
  if (!New && It->second.first != Rank)
    error(locOf(Op, MapI),
          op(Op) + " gives " + llvm::Twine(Rank) + " coordinate(s) for %" +
              Map->Name + ", but the copy at " +
              llvm::Twine(It->second.second.Line) + ":" +
              llvm::Twine(It->second.second.Col) + " gives " +
              llvm::Twine(It->second.first) +
              "; every copy of a tensor map uses its rank");
  if (Smem && Smem->Ty != Map->Ty)
    error(locOf(Op, SmemI), op(Op) + " copies between %" + Map->Name +
                                " of " + quoted(Map->Ty) + " and %" +
                                Smem->Name + " of " + quoted(Smem->Ty) +
                                "; both must have one element type");
}

void KernelVerifier::verifyTensorStoreGroup(const Operation &Op) {
  if (Op.Kind == OpKind::TmaCommit) {
    checkOperandCount(Op, 0, 0);
    return;
  }
  if (checkOperandCount(Op, 1, 1))
    expectU32(Op, 0, "the group count");
}

void KernelVerifier::verifyAsyncCopy(const Operation &Op) {
  // %bar, %src, %srcOffset, %dst, %dstOffset, %count
  if (!checkOperandCount(Op, 6, 6))
    return;
  barrierOperand(Op, 0, Op.Kind == OpKind::MemcpyAsyncTx);
  const ValueInfo *Src = memoryOperand(Op, 1, AnyArray);
  bool Ok = verifyIndex(Op, 2);
  const ValueInfo *Dst = memoryOperand(Op, 3, AnyArray);
  Ok &= verifyIndex(Op, 4);
  Ok &= expectU32(Op, 5, "the element count");
  if (Src && Src->Kind == ValueKind::Buffer && Src->Access == AccessKind::Write)
    error(locOf(Op, 1), op(Op) + " reads from %" + Src->Name +
                            ", a buffer declared 'write'");
  if (Dst && Dst->Kind == ValueKind::Buffer && Dst->Access == AccessKind::Read)
    error(locOf(Op, 3), op(Op) + " writes to %" + Dst->Name +
                            ", a buffer declared 'read'");
  if (!Src || !Dst)
    return;
  if (Src->Ty != Dst->Ty) {
    error(locOf(Op, 3), op(Op) + " copies from %" + Src->Name + " of " +
                            quoted(Src->Ty) + " to %" + Dst->Name + " of " +
                            quoted(Dst->Ty) +
                            "; both must have one element type");
    return;
  }
  if (!Ok || !Op.Operands[5].isLiteral())
    return;
  // Literal offsets and count into arrays of known size: the copy must fit.
  uint64_t Count = Op.Operands[5].Lit.Bits;
  for (size_t I : {size_t(1), size_t(3)}) {
    const ValueInfo &Mem = I == 1 ? *Src : *Dst;
    const Operand &Off = Op.Operands[I + 1];
    if (Mem.Kind == ValueKind::Buffer || !Off.isLiteral())
      continue;
    ScalarKind OffKind = Off.Lit.Ty.elementKind();
    int64_t Start = isSigned(OffKind) ? signedValue(Off.Lit.Bits, OffKind)
                                      : static_cast<int64_t>(Off.Lit.Bits);
    if (Start < 0 || (!isSigned(OffKind) && Off.Lit.Bits > INT64_MAX) ||
        uint64_t(Start) > Mem.Count || Count > Mem.Count - uint64_t(Start))
      error(locOf(Op, I + 1),
            op(Op) + " copies " + llvm::Twine(Count) + " elements at offset " +
                llvm::Twine(Start) + " of %" + Mem.Name + ", which has " +
                llvm::Twine(Mem.Count));
  }
}

void KernelVerifier::verifyControl(const Operation &Op) {
  switch (Op.opClass()) {
  case OpClass::If: {
    if (checkOperandCount(Op, 1, 1))
      expectType(Op, 0, plainOperand(Op, 0), Type::scalar(ScalarKind::Bool),
                 "the condition");
    verifyRegions(Op, Op.HasElse ? 2 : 1);
    for (const Block &B : Op.Regions)
      verifyBlock(B);
    return;
  }
  case OpClass::Switch: {
    if (checkOperandCount(Op, 1, 1)) {
      std::optional<Type> T = plainOperand(Op, 0);
      if (T && (T->isLine() || !T->isInteger())) {
        error(locOf(Op, 0), "the selector of switch must be a scalar "
                            "integer, found " +
                                quoted(*T));
      } else if (T) {
        // A label outside the selector's range is legal and never matches
        // (the grammar allows any INT); it must not be truncated onto
        // another value.
        std::set<CaseLabel> Seen;
        for (CaseLabel V : Op.CaseValues)
          if (!Seen.insert(V).second)
            error(Op.Loc, "case " + V.str() + " appears twice");
      }
    }
    if (!switchLabelsWellFormed(Op))
      error(Op.Loc, "switch case label counts do not match its " +
                        llvm::Twine(Op.CaseValues.size()) +
                        " labels (every case needs at least one)");
    else
      verifyRegions(Op, switchCaseCount(Op) + (Op.HasDefault ? 1 : 0));
    for (const Block &B : Op.Regions)
      verifyBlock(B);
    return;
  }
  case OpClass::For: {
    if (checkOperandCount(Op, 2, 3)) {
      static const char *const Roles[] = {"the lower bound", "the upper bound",
                                          "the step"};
      std::optional<Type> T;
      for (size_t I = 0; I < Op.Operands.size(); ++I) {
        std::optional<Type> X = plainOperand(Op, I);
        if (!X)
          continue;
        if (X->isLine() || !X->isInteger()) {
          error(locOf(Op, I), llvm::Twine(Roles[I]) +
                                  " of for must be a scalar integer, found " +
                                  quoted(*X));
          continue;
        }
        if (!T)
          T = X;
        else
          expectType(Op, I, X, *T, Roles[I]);
      }
      if (T && *T != Op.ResultType)
        error(Op.Loc, "the induction variable of for is written " +
                          quoted(Op.ResultType) + " but the bounds are " +
                          quoted(*T));
      if (Op.Operands.size() == 3 && Op.Operands[2].isLiteral()) {
        const Literal &L = Op.Operands[2].Lit;
        if (!L.Ty.isLine() && L.Ty.isInteger() &&
            fitsWidth(L.Bits, L.Ty.elementKind())) {
          bool Positive = L.Ty.isSigned()
                              ? signedValue(L.Bits, L.Ty.elementKind()) > 0
                              : L.Bits != 0;
          if (!Positive)
            error(locOf(Op, 2),
                  "the step of for must be positive, found " +
                      llvm::Twine(signedValue(L.Bits, L.Ty.elementKind())));
        }
      }
    }
    verifyRegions(Op, 1);
    // The induction variable lives in the body.
    size_t Mark;
    enterScope(Mark);
    if (Op.Result >= K.Values.size()) {
      error(Op.Loc, "for has no valid induction variable");
    } else {
      const ValueInfo &V = K.Values[Op.Result];
      if (V.Kind != ValueKind::Plain || V.Ty != Op.ResultType)
        error(Op.Loc, "the induction variable " + name(Op.Result) +
                          " is recorded as " + kindPhrase(V.Kind) + " of " +
                          quoted(V.Ty) + ", expected a value of " +
                          quoted(Op.ResultType));
      define(Op.Result, Op.Loc);
    }
    ++LoopDepth;
    for (const Block &B : Op.Regions)
      verifyBlock(B);
    --LoopDepth;
    leaveScope(Mark);
    return;
  }
  case OpClass::Loop:
    checkOperandCount(Op, 0, 0);
    verifyRegions(Op, 1);
    ++LoopDepth;
    for (const Block &B : Op.Regions)
      verifyBlock(B);
    --LoopDepth;
    return;
  case OpClass::Jump:
    checkOperandCount(Op, 0, 0);
    if (!Op.Regions.empty())
      verifyRegions(Op, 0);
    if (Op.Kind != OpKind::Return && LoopDepth == 0)
      error(Op.Loc, op(Op) + " outside a for or loop");
    return;
  default:
    return;
  }
}

/// workgroup_uniform_load (docs/LangRef.md §12.2) is a barrier, so it
/// follows the placement rule of sync_cube, and every unit must load the
/// same element: its index must be uniform.
void KernelVerifier::verifyUniformLoad(const Operation &Op) {
  verifyConvergence(Op);
  if (Op.Operands.size() < 2 || Op.Operands[1].isLiteral())
    return;
  if (const std::string *Why = Uniformity.divergenceRoot(Op.Operands[1].Value))
    error(locOf(Op, 1), "the index of " + op(Op) +
                            " must be uniform, but it depends on " + *Why);
}

void KernelVerifier::verifyDebugPrint(const Operation &Op) {
  std::vector<DebugConversion> Convs;
  if (std::optional<DebugFormatError> E = parseDebugFormat(Op.Text, Convs)) {
    error(Op.Loc, "debug_print format, at byte " + llvm::Twine(E->Offset) +
                      ": " + E->Message);
    return;
  }
  if (Op.Operands.size() > MaxDebugPrintOperands) {
    error(locOf(Op, MaxDebugPrintOperands),
          "debug_print takes at most " + llvm::Twine(MaxDebugPrintOperands) +
              " operands, found " + llvm::Twine(Op.Operands.size()));
    return;
  }
  if (Convs.size() != Op.Operands.size()) {
    error(Op.Loc, "debug_print format has " + llvm::Twine(Convs.size()) +
                      " conversion" + (Convs.size() == 1 ? "" : "s") +
                      " but " + llvm::Twine(Op.Operands.size()) + " operand" +
                      (Op.Operands.size() == 1 ? " is" : "s are") + " given");
    return;
  }
  for (size_t I = 0; I < Convs.size(); ++I) {
    std::optional<Type> T = plainOperand(Op, I);
    if (!T)
      continue;
    const DebugConversion &C = Convs[I];
    if (debugConversionTakes(C.Kind, *T))
      continue;
    llvm::StringRef Written =
        llvm::StringRef(Op.Text).slice(C.Begin, C.End);
    std::string Hint;
    if (T->isLine())
      Hint = "lines are not printed whole: extract their lanes";
    else if (T->isMinifloat())
      Hint = "a minifloat is a storage type: cast it to f32 first";
    else if (C.Kind == DebugConversionKind::Float)
      Hint = "'" + Written.str() + "' takes f16, bf16, f32 or f64";
    else
      Hint = "'" + Written.str() + "' takes an integer or bool";
    error(locOf(Op, I), "operand " + llvm::Twine(I + 1) +
                            " of debug_print has type " + quoted(*T) +
                            ", which conversion " + llvm::Twine(I + 1) +
                            " '" + Written + "' does not take: " + Hint);
  }
}

void KernelVerifier::verifyConvergence(const Operation &Op) {
  if (const std::string *Why = Uniformity.controlDivergence(Op))
    error(Op.Loc, op(Op) + " under divergent control flow: " + *Why);
}

void KernelVerifier::verifyOp(const Operation &Op) {
  OpClass Class = Op.opClass();
  switch (Class) {
  case OpClass::If:
  case OpClass::For:
  case OpClass::Loop:
  case OpClass::Switch:
  case OpClass::Jump:
    verifyControl(Op);
    return;
  case OpClass::VarDecl:
  case OpClass::ArrayDecl:
    verifyDecl(Op);
    return;
  case OpClass::BarrierDecl:
    verifyBarrierDecl(Op);
    return;
  case OpClass::AsyncCopy:
    if (!Op.Regions.empty())
      verifyRegions(Op, 0);
    verifyAsyncCopy(Op);
    return;
  case OpClass::TensorCopy:
    if (!Op.Regions.empty())
      verifyRegions(Op, 0);
    verifyTensorCopy(Op);
    return;
  case OpClass::TensorStoreGroup:
    if (!Op.Regions.empty())
      verifyRegions(Op, 0);
    verifyTensorStoreGroup(Op);
    return;
  case OpClass::MatrixDecl:
    verifyFragmentDecl(Op);
    return;
  case OpClass::Cmma:
    if (!Op.Regions.empty())
      verifyRegions(Op, 0);
    verifyCmma(Op);
    verifyConvergence(Op);
    return;
  case OpClass::CmmaSet:
    if (!Op.Regions.empty())
      verifyRegions(Op, 0);
    verifyCmmaSet(Op);
    return;
  case OpClass::DebugPrint:
    if (!Op.Regions.empty())
      verifyRegions(Op, 0);
    verifyDebugPrint(Op);
    return;
  default:
    break;
  }
  if (!Op.Regions.empty())
    verifyRegions(Op, 0);
  std::optional<Type> Implied = impliedType(Op);
  switch (Class) {
  case OpClass::Barrier:
  case OpClass::PlaneReduce:
  case OpClass::PlaneBool:
  case OpClass::PlaneLane:
  case OpClass::PlaneElect:
  case OpClass::PlaneBallot:
    verifyConvergence(Op);
    break;
  case OpClass::Load:
    if (Op.Kind == OpKind::WorkgroupUniformLoad)
      verifyUniformLoad(Op);
    break;
  default:
    break;
  }
  if (producesValue(Class))
    verifyResult(Op, Implied);
}

/// Kernel size is bounded because LLVM's compile time is not linear in it:
/// cases of one switch (SimplifyCFG merging their blocks), loops nested in
/// loops (the loop passes), cube-level steps (each a unit loop of its own)
/// and operations in all cost more than their number (docs/LangRef.md §7.1
/// gives the times that chose the limits).
void KernelVerifier::verifySize(const Block &B, uint32_t LoopDepth) {
  for (const Operation &Op : B.Ops) {
    if (++Operations > Limits.MaxOperations && !OperationsReported) {
      OperationsReported = true;
      error(Op.Loc, "the kernel has more than " +
                        llvm::Twine(Limits.MaxOperations) +
                        " operations, the device's limit");
    }
    switch (Op.opClass()) {
    case OpClass::Barrier:
    case OpClass::PlaneReduce:
    case OpClass::PlaneBool:
    case OpClass::PlaneLane:
    case OpClass::PlaneElect:
    case OpClass::PlaneBallot:
    case OpClass::Cmma:
      if (++SyncPoints > Limits.MaxSyncPoints && !SyncPointsReported) {
        SyncPointsReported = true;
        error(Op.Loc, op(Op) + " is the kernel's barrier or plane operation "
                               "number " +
                          llvm::Twine(SyncPoints) + "; the device allows " +
                          llvm::Twine(Limits.MaxSyncPoints));
      }
      break;
    case OpClass::Switch: {
      // Labels, not case blocks: `case 1, 2, 3` is three entries of the
      // switch LLVM compiles.
      size_t Labels = Op.CaseValues.size();
      if (Labels > Limits.MaxSwitchCases)
        error(Op.Loc, op(Op) + " has " + llvm::Twine(Labels) +
                          " case labels; the device allows at most " +
                          llvm::Twine(Limits.MaxSwitchCases) +
                          " in one switch");
      break;
    }
    default:
      break;
    }
    bool IsLoop =
        Op.opClass() == OpClass::For || Op.opClass() == OpClass::Loop;
    if (IsLoop && LoopDepth + 1 > Limits.MaxLoopDepth && !DepthReported) {
      DepthReported = true;
      error(Op.Loc, op(Op) + " is nested " + llvm::Twine(LoopDepth + 1) +
                        " loops deep; the device allows " +
                        llvm::Twine(Limits.MaxLoopDepth));
    }
    for (const Block &Region : Op.Regions)
      verifySize(Region, LoopDepth + (IsLoop ? 1 : 0));
  }
}

//===----------------------------------------------------------------------===//
// Cooperative matrix operations
//===----------------------------------------------------------------------===//

void KernelVerifier::verifyFragmentDecl(const Operation &Op) {
  checkOperandCount(Op, 0, 0);
  if (!Op.Regions.empty())
    verifyRegions(Op, 0);
  if (Op.Result >= K.Values.size()) {
    error(Op.Loc, "fragment declares no valid object");
    return;
  }
  const ValueInfo &V = K.Values[Op.Result];
  if (V.Kind != ValueKind::Fragment)
    error(Op.Loc, "fragment declares " + name(Op.Result) + " as " +
                      kindPhrase(V.Kind) + ", expected a fragment");
  else if (V.Matrix != Op.Matrix ||
           V.Ty != Type::scalar(Op.Matrix.Elem) ||
           Op.ResultType != V.Ty)
    error(Op.Loc, "fragment declares " + name(Op.Result) + " of '" +
                      Op.Matrix.str() + "' but it is recorded as '" +
                      V.Matrix.str() + "' of " + quoted(V.Ty));
  if (verifyType(Op.Loc, Type::scalar(Op.Matrix.Elem),
                 "fragment " + name(Op.Result)))
    if (std::optional<std::string> Why = unsupportedMatrixReason(Op.Matrix))
      error(Op.Loc, "fragment " + name(Op.Result) + " of " + *Why);
  define(Op.Result, Op.Loc);
}

const ValueInfo *
KernelVerifier::fragmentOperand(const Operation &Op, size_t I,
                                std::optional<MatrixUse> Use) {
  const Operand &O = Op.Operands[I];
  SourceLoc Loc = locOf(Op, I);
  std::string Want = !Use                          ? "a fragment"
                     : *Use == MatrixUse::A          ? "an a fragment"
                     : *Use == MatrixUse::B          ? "a b fragment"
                                                     : "an accumulator fragment";
  if (O.isLiteral()) {
    error(Loc, op(Op) + " needs " + Want + " as operand " +
                   llvm::Twine(I + 1) + ", found a literal");
    return nullptr;
  }
  const ValueInfo *V = resolve(Op, I);
  if (!V)
    return nullptr;
  if (V->Kind != ValueKind::Fragment) {
    error(Loc, op(Op) + " needs " + Want + " as operand " +
                   llvm::Twine(I + 1) + ", but " + name(O.Value) + " is " +
                   kindPhrase(V->Kind));
    return nullptr;
  }
  if (Use && V->Matrix.Use != *Use) {
    error(Loc, op(Op) + " needs " + Want + " as operand " +
                   llvm::Twine(I + 1) + ", but " + name(O.Value) + " is '" +
                   V->Matrix.str() + "'");
    return nullptr;
  }
  return V;
}

/// The memory operand (at \p MemIndex, its index after it) and the stride
/// of cmma_load/cmma_store, and the layout the operation uses.
bool KernelVerifier::verifyCmmaMemory(const Operation &Op, size_t MemIndex,
                                      const ValueInfo *Fragment,
                                      bool Writes) {
  const ValueInfo *Mem = memoryOperand(Op, MemIndex, CmmaMemory);
  bool Ok = Mem != nullptr;
  if (Mem)
    verifyAccess(Op, *Mem, !Writes, Writes);
  Ok &= verifyIndex(Op, MemIndex + 1);
  Ok &= expectType(Op, 3, plainOperand(Op, 3), Type::scalar(ScalarKind::U32),
                   "the stride");
  if (!Fragment)
    return false;
  const MatrixType &T = Fragment->Matrix;
  // f4e2m1 fragments also load from packed f4e2m1x2 memory (§5.7).
  bool PackedFp4 = T.Elem == ScalarKind::F4E2M1 && !Writes;
  if (Mem && Mem->Ty.elementKind() != T.Elem &&
      !(PackedFp4 && Mem->Ty.elementKind() == ScalarKind::F4E2M1X2)) {
    error(locOf(Op, MemIndex),
          op(Op) + " " + (Writes ? "writes" : "reads") + " %" + Mem->Name +
              " of " + quoted(Mem->Ty) + (Writes ? " from" : " into") +
              " a fragment of '" + scalarName(T.Elem) +
              "'; the memory must hold '" + scalarName(T.Elem) +
              (PackedFp4 ? "' or 'f4e2m1x2' or lines of them"
                         : "' or lines of it"));
    Ok = false;
  }
  if (T.Use != MatrixUse::Accumulator) {
    if (Op.Layout != MatrixLayout::Undefined) {
      error(Op.Loc, op(Op) + " names a layout, but the layout of an a or b "
                             "fragment is part of its type");
      Ok = false;
    }
  } else if (Op.Layout == MatrixLayout::Undefined &&
             T.Layout == MatrixLayout::Undefined) {
    error(Op.Loc, op(Op) + " of an accumulator of undefined layout needs a "
                           "layout: write ', row' or ', col' after the "
                           "stride");
    Ok = false;
  }
  return Ok;
}

void KernelVerifier::verifyCmma(const Operation &Op) {
  const MatrixUse Acc = MatrixUse::Accumulator;
  auto ScalarOf = [](const ValueInfo *F) {
    return Type::scalar(F->Matrix.Elem);
  };
  switch (Op.Kind) {
  case OpKind::CmmaFill: {
    if (!checkOperandCount(Op, 2, 2))
      return;
    const ValueInfo *F = fragmentOperand(Op, 0, std::nullopt);
    std::optional<Type> X = plainOperand(Op, 1);
    if (F)
      expectType(Op, 1, X, ScalarOf(F), "the value");
    return;
  }
  case OpKind::CmmaLoad: {
    if (!checkOperandCount(Op, 4, 4))
      return;
    const ValueInfo *F = fragmentOperand(Op, 0, std::nullopt);
    verifyCmmaMemory(Op, 1, F, /*Writes=*/false);
    return;
  }
  case OpKind::CmmaStore: {
    if (!checkOperandCount(Op, 4, 4))
      return;
    const ValueInfo *F = fragmentOperand(Op, 2, Acc);
    verifyCmmaMemory(Op, 0, F, /*Writes=*/true);
    return;
  }
  case OpKind::CmmaMma: {
    if (!checkOperandCount(Op, 4, 4))
      return;
    const ValueInfo *Frags[4];
    if (!verifyMmaFragments(Op, Frags))
      return;
    const ValueInfo *FA = Frags[1], *FB = Frags[2];
    auto IsByteInt = [](const ValueInfo *F) {
      return F->Matrix.Elem == ScalarKind::I8 ||
             F->Matrix.Elem == ScalarKind::U8;
    };
    // fp8/fp6/fp4 operands may mix formats, as CUDA's kind::f8f6f4 does,
    // and i8 with u8, as its s8/u8 multiplies do.
    bool Mixable =
        (isMinifloatOperand(FA->Matrix) && isMinifloatOperand(FB->Matrix)) ||
        (IsByteInt(FA) && IsByteInt(FB));
    if (FA->Matrix.Elem != FB->Matrix.Elem && !Mixable)
      error(locOf(Op, 2), "cmma_mma needs a and b fragments of one element "
                          "type, found '" +
                              scalarName(FA->Matrix.Elem) + "' and '" +
                              scalarName(FB->Matrix.Elem) + "'");
    for (size_t I : {size_t(0), size_t(3)}) {
      if (I == 3 && Op.Operands[3].Value == Op.Operands[0].Value)
        continue;
      ScalarKind E = Frags[I]->Matrix.Elem;
      if (IsByteInt(FA) && E != ScalarKind::I32)
        error(locOf(Op, I), "cmma_mma of i8 and u8 fragments accumulates in "
                            "i32, but " +
                                name(Op.Operands[I].Value) + " holds '" +
                                scalarName(E) + "'");
      else if (!IsByteInt(FA) && E != ScalarKind::F16 && E != ScalarKind::F32)
        error(locOf(Op, I), "cmma_mma accumulates in f16 or f32, but " +
                                name(Op.Operands[I].Value) + " holds '" +
                                scalarName(E) + "'");
    }
    return;
  }
  case OpKind::CmmaMmaScaled:
    verifyScaledMma(Op);
    return;
  case OpKind::CmmaCast: {
    if (!checkOperandCount(Op, 2, 2))
      return;
    const ValueInfo *Dst = fragmentOperand(Op, 0, Acc);
    const ValueInfo *Src = fragmentOperand(Op, 1, Acc);
    if (Dst && Src && !Dst->Matrix.sameShape(Src->Matrix))
      error(locOf(Op, 1), "cmma_cast needs fragments of one shape, found " +
                              Src->Matrix.shapeStr() + " and " +
                              Dst->Matrix.shapeStr());
    else if (Dst && Src && verifySameScope(Op, {Dst, Src}))
      for (size_t I : {size_t(0), size_t(1)}) {
        const ValueInfo *F = I ? Src : Dst;
        if (F->Matrix.Elem == ScalarKind::I32) {
          error(locOf(Op, I), "cmma_cast converts f16, bf16 and f32 "
                              "accumulators, but " +
                                  name(Op.Operands[I].Value) + " holds 'i32'");
          return;
        }
      }
    return;
  }
  case OpKind::CmmaLdmatrix:
    verifyLdmatrix(Op);
    return;
  default:
    error(Op.Loc, op(Op) + " is not a cmma operation");
    return;
  }
}

bool KernelVerifier::verifyMmaFragments(const Operation &Op,
                                        const ValueInfo *(&Frags)[4]) {
  const MatrixUse Uses[] = {MatrixUse::Accumulator, MatrixUse::A, MatrixUse::B,
                            MatrixUse::Accumulator};
  bool Ok = true;
  for (size_t I = 0; I < 4; ++I) {
    Frags[I] = fragmentOperand(Op, I, Uses[I]);
    Ok &= Frags[I] != nullptr;
  }
  if (!Ok)
    return false;
  const ValueInfo *D = Frags[0];
  for (size_t I = 1; I < 4; ++I)
    if (!Frags[I]->Matrix.sameShape(D->Matrix)) {
      error(locOf(Op, I), op(Op) + " needs fragments of one shape, but " +
                              name(Op.Operands[I].Value) + " is " +
                              Frags[I]->Matrix.shapeStr() + " and " +
                              name(Op.Operands[0].Value) + " " +
                              D->Matrix.shapeStr());
      return false;
    }
  return verifySameScope(Op, Frags);
}

void KernelVerifier::verifyScaledMma(const Operation &Op) {
  // cmma_mma_scaled %d, %a, %b, %c, %scales_a, %scales_b
  if (!checkOperandCount(Op, 6, 6))
    return;
  std::optional<Type> Scales[] = {plainOperand(Op, 4), plainOperand(Op, 5)};
  const ValueInfo *Frags[4];
  if (!verifyMmaFragments(Op, Frags))
    return;
  for (size_t I : {size_t(1), size_t(2)})
    if (!isMinifloatOperand(Frags[I]->Matrix)) {
      error(locOf(Op, I),
            op(Op) + " multiplies fp8, fp6 or fp4 fragments (16x8x32 of "
                     "f8e4m3, f8e5m2, f6e2m3, f6e3m2 or f4e2m1, 16x8x64 of "
                     "f4e2m1), but " +
                name(Op.Operands[I].Value) + " is '" +
                Frags[I]->Matrix.str() + "'");
      return;
    }
  for (size_t I : {size_t(0), size_t(3)})
    if (Frags[I]->Matrix.Elem != ScalarKind::F32) {
      error(locOf(Op, I), op(Op) + " accumulates in f32, but " +
                              name(Op.Operands[I].Value) + " holds '" +
                              scalarName(Frags[I]->Matrix.Elem) + "'");
      return;
    }
  const MatrixType &D = Frags[0]->Matrix;
  llvm::ArrayRef<uint32_t> Counts = scaledMmaScaleCounts(D);
  std::string Allowed;
  for (uint32_t S : Counts) {
    if (!Allowed.empty())
      Allowed += " or ";
    Allowed += S == 1 ? "'ue8m0'" : "'vec<" + std::to_string(S) + " x ue8m0>'";
    Allowed += " (blocks of " + std::to_string(D.K / S) + ")";
  }
  bool Ok = true;
  for (size_t I = 0; I < 2; ++I) {
    if (!Scales[I]) {
      Ok = false;
      continue;
    }
    if (Scales[I]->elementKind() != ScalarKind::UE8M0 ||
        !llvm::is_contained(Counts, Scales[I]->lanes())) {
      error(locOf(Op, 4 + I),
            llvm::Twine("the scales of ") + (I ? "b" : "a") + " of " + op(Op) +
                " have type " + quoted(*Scales[I]) + "; a " + D.shapeStr() +
                " multiply takes " + Allowed);
      Ok = false;
    }
  }
  if (Ok && Scales[0]->lanes() != Scales[1]->lanes()) {
    error(locOf(Op, 5), op(Op) + " needs one block size for a and b, but "
                                 "it has " +
                            llvm::Twine(Scales[0]->lanes()) +
                            " scales per row of a and " +
                            llvm::Twine(Scales[1]->lanes()) +
                            " per column of b");
    Ok = false;
  }
  if (Ok)
    verifyElementLayout(Op, *Frags[0]);
}

bool KernelVerifier::verifySameScope(const Operation &Op,
                                     llvm::ArrayRef<const ValueInfo *> Frags) {
  for (size_t I = 1; I < Frags.size(); ++I)
    if (Frags[I]->Matrix.Scope != Frags[0]->Matrix.Scope) {
      auto ScopeOf = [](const ValueInfo *F) {
        return F->Matrix.isCube() ? "the cube" : "the plane";
      };
      error(locOf(Op, I), op(Op) + " needs fragments of one scope, but " +
                              name(Op.Operands[I].Value) + " belongs to " +
                              ScopeOf(Frags[I]) + " and " +
                              name(Op.Operands[0].Value) + " to " +
                              ScopeOf(Frags[0]));
      return false;
    }
  return true;
}

bool KernelVerifier::verifyElementLayout(const Operation &Op,
                                         const ValueInfo &F) {
  if (F.Matrix.isCube() || Limits.PlaneDim == 32)
    return true;
  error(Op.Loc, op(Op) + " uses the per-unit layout of a plane fragment, "
                         "which is defined for planes of 32 units; the "
                         "device's planes have " +
                    llvm::Twine(Limits.PlaneDim));
  return false;
}

std::optional<Type> KernelVerifier::verifyCmmaElem(const Operation &Op) {
  // cmma_count %f; cmma_row/cmma_col %f, %unit, %n; cmma_get %f, %n.
  size_t Want = Op.Kind == OpKind::CmmaCount ? 1
                : Op.Kind == OpKind::CmmaGet ? 2
                                             : 3;
  if (!checkOperandCount(Op, Want, Want))
    return std::nullopt;
  const ValueInfo *F = fragmentOperand(Op, 0, std::nullopt);
  bool Ok = F != nullptr;
  if (Op.Kind == OpKind::CmmaRow || Op.Kind == OpKind::CmmaCol) {
    Ok &= expectU32(Op, 1, "the unit");
    Ok &= expectU32(Op, 2, "the element number");
  } else if (Op.Kind == OpKind::CmmaGet) {
    Ok &= expectU32(Op, 1, "the element number");
  }
  if (!Ok || !verifyElementLayout(Op, *F))
    return std::nullopt;
  if (Op.Kind == OpKind::CmmaGet)
    return Type::scalar(F->Matrix.Elem);
  return Type::scalar(ScalarKind::U32);
}

void KernelVerifier::verifyCmmaSet(const Operation &Op) {
  if (!checkOperandCount(Op, 3, 3))
    return;
  const ValueInfo *F = fragmentOperand(Op, 0, std::nullopt);
  bool Ok = expectU32(Op, 1, "the element number");
  std::optional<Type> X = plainOperand(Op, 2);
  if (!F)
    return;
  Ok &= expectType(Op, 2, X, Type::scalar(F->Matrix.Elem), "the value");
  if (Ok)
    verifyElementLayout(Op, *F);
}

void KernelVerifier::verifyLdmatrix(const Operation &Op) {
  if (!checkOperandCount(Op, 3, 3))
    return;
  const ValueInfo *F = fragmentOperand(Op, 0, std::nullopt);
  const ValueInfo *Mem = memoryOperand(Op, 1, CmmaMemory);
  if (Mem)
    verifyAccess(Op, *Mem, /*Reads=*/true, /*Writes=*/false);
  bool Ok = verifyIndex(Op, 2) && Mem;
  if (!F)
    return;
  const MatrixType &T = F->Matrix;
  // ldmatrix moves 8 x 8 blocks of 16-bit elements, 1, 2 or 4 of them: a
  // row of 8 elements (16 bytes) from each unit.
  uint64_t Blocks = T.elements() / 64;
  if (T.isCube()) {
    error(locOf(Op, 0), op(Op) + " loads plane fragments, but " +
                            name(Op.Operands[0].Value) + " is '" + T.str() +
                            "'");
    return;
  }
  if (T.Elem != ScalarKind::F16 && T.Elem != ScalarKind::BF16) {
    error(locOf(Op, 0), op(Op) + " loads 16-bit elements (f16, bf16), but " +
                            name(Op.Operands[0].Value) + " is '" + T.str() +
                            "'");
    return;
  }
  if (Blocks != 1 && Blocks != 2 && Blocks != 4) {
    error(locOf(Op, 0), op(Op) + " loads 1, 2 or 4 blocks of 8 x 8, but " +
                            name(Op.Operands[0].Value) + " ('" + T.str() +
                            "') has " + llvm::Twine(Blocks));
    return;
  }
  if (Ok && Mem->Ty.elementKind() != T.Elem) {
    error(locOf(Op, 1), op(Op) + " reads %" + Mem->Name + " of " +
                            quoted(Mem->Ty) + " into a fragment of '" +
                            scalarName(T.Elem) + "'; the memory must hold '" +
                            scalarName(T.Elem) + "' or lines of it");
    return;
  }
  if (Ok)
    verifyElementLayout(Op, *F);
}

std::vector<Diagnostic> KernelVerifier::run() {
  verifyHeader();
  verifyParams();
  verifyBlock(K.Body);
  verifySize(K.Body, 0);
  return std::move(Diags);
}

} // namespace

llvm::Error kiln::verifyKernel(const IRKernel &K, const DeviceLimits &Limits,
                               llvm::StringRef FileName) {
  std::vector<Diagnostic> Diags = KernelVerifier(K, Limits, FileName).run();
  if (Diags.empty())
    return llvm::Error::success();
  return llvm::make_error<DiagnosticError>(std::move(Diags));
}

llvm::Error kiln::verifyModule(const Module &M, const DeviceLimits &Limits) {
  std::vector<Diagnostic> Diags;
  llvm::StringMap<size_t> Names; ///< the first kernel of each name
  for (size_t I = 0; I < M.Kernels.size(); ++I) {
    const IRKernel &K = M.Kernels[I];
    auto [It, Inserted] = Names.try_emplace(K.Name, I);
    if (!Inserted && !K.Name.empty()) {
      Diagnostic D;
      D.File = M.FileName;
      D.Loc = K.Loc;
      // Without a location the first definition is named by its position.
      SourceLoc FirstLoc = M.Kernels[It->second].Loc;
      if (FirstLoc.isValid())
        D.Message = "kernel @" + K.Name + " is already defined at " +
                    formatLoc(FirstLoc);
      else
        D.Message = "kernels #" + std::to_string(It->second) + " and #" +
                    std::to_string(I) + " of the module are both named @" +
                    K.Name;
      Diags.push_back(std::move(D));
    }
    std::vector<Diagnostic> KernelDiags =
        KernelVerifier(K, Limits, M.FileName).run();
    Diags.insert(Diags.end(), std::make_move_iterator(KernelDiags.begin()),
                 std::make_move_iterator(KernelDiags.end()));
  }
  if (Diags.empty())
    return llvm::Error::success();
  return llvm::make_error<DiagnosticError>(std::move(Diags));
}
