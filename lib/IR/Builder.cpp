//===- Builder.cpp - Build kernels in C++ without text --------------------===//

#include "kiln/IR/Builder.h"
#include "kiln/IR/Minifloat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <bit>

using namespace kiln;

Literal lit::make(ScalarKind Kind, uint64_t Bits) {
  unsigned Width = bitWidth(Kind);
  if (Width < 64)
    Bits &= (uint64_t(1) << Width) - 1;
  return Literal{Type::scalar(Kind), Bits};
}
Literal lit::boolean(bool V) { return make(ScalarKind::Bool, V); }
Literal lit::i32(int32_t V) { return make(ScalarKind::I32, uint32_t(V)); }
Literal lit::i64(int64_t V) { return make(ScalarKind::I64, uint64_t(V)); }
Literal lit::u32(uint32_t V) { return make(ScalarKind::U32, V); }
Literal lit::u64(uint64_t V) { return make(ScalarKind::U64, V); }
Literal lit::f32(float V) {
  return make(ScalarKind::F32, std::bit_cast<uint32_t>(V));
}
Literal lit::f64(double V) {
  return make(ScalarKind::F64, std::bit_cast<uint64_t>(V));
}
Literal lit::minifloat(ScalarKind Kind, double V) {
  return make(Kind, encodeMinifloat(V, Kind));
}

/// An open control-flow construct: the operation being built and the region
/// new operations go to (none for a switch before its first case).
struct KernelBuilder::Frame {
  Operation Op;
  std::optional<size_t> Region;
};

KernelBuilder::KernelBuilder(std::string Name) { K.Name = std::move(Name); }
KernelBuilder::~KernelBuilder() = default;
KernelBuilder::KernelBuilder(KernelBuilder &&) noexcept = default;
KernelBuilder &KernelBuilder::operator=(KernelBuilder &&) noexcept = default;

bool KernelBuilder::fail(const llvm::Twine &Message) {
  if (!Error)
    Error = Message.str();
  return true;
}

bool KernelBuilder::checkArgs(llvm::ArrayRef<Arg> Args) {
  if (Error)
    return true;
  if (Finished)
    return fail("kernel builder used after finish()");
  for (const Arg &A : Args)
    if (!A.O.isLiteral() && A.O.Value >= K.Values.size())
      return fail("operand %" + llvm::Twine(A.O.Value) +
                  " names no value of kernel '" + K.Name + "'");
  return false;
}

KernelBuilder &KernelBuilder::named(std::string Name) {
  PendingName = std::move(Name);
  return *this;
}

ValueId KernelBuilder::define(ValueInfo Info) {
  std::string Name = std::move(PendingName);
  PendingName.clear();
  auto Taken = [&](const std::string &N) { return Names.contains(N); };
  if (Name.empty()) {
    do
      Name = std::to_string(NextNumber++);
    while (Taken(Name));
  } else if (Taken(Name)) {
    fail("redefinition of '%" + Name + "'");
  } else {
    for (char C : Name)
      if (!((C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
            (C >= '0' && C <= '9') || C == '_' || C == '.')) {
        fail("invalid value name '" + Name +
             "': use letters, digits, '_' and '.'");
        break;
      }
  }
  Names.insert(Name);
  Info.Name = std::move(Name);
  return K.addValue(std::move(Info));
}

void KernelBuilder::setCubeDim(std::initializer_list<uint32_t> Dims) {
  if (checkArgs({}))
    return;
  if (Dims.size() < 1 || Dims.size() > 3) {
    fail("cube_dim takes 1 to 3 sizes, found " + llvm::Twine(Dims.size()));
    return;
  }
  K.CubeDim = {1, 1, 1};
  size_t I = 0;
  for (uint32_t D : Dims)
    K.CubeDim[I++] = D;
  K.CubeDimRank = static_cast<uint8_t>(Dims.size());
}

void KernelBuilder::setPlaneDim(uint32_t N) { K.PlaneDim = N; }

void KernelBuilder::setClusterDim(std::initializer_list<uint32_t> Dims) {
  if (checkArgs({}))
    return;
  if (Dims.size() < 1 || Dims.size() > 3) {
    fail("cluster_dim takes 1 to 3 sizes, found " + llvm::Twine(Dims.size()));
    return;
  }
  K.ClusterDim = {1, 1, 1};
  size_t I = 0;
  for (uint32_t D : Dims)
    K.ClusterDim[I++] = D;
  K.ClusterDimRank = static_cast<uint8_t>(Dims.size());
}

ValueId KernelBuilder::addBuffer(std::string Name, Type Elem,
                                 AccessKind Access) {
  if (checkArgs({}))
    return NoValue;
  if (!K.Body.Ops.empty() || !Open.empty())
    fail("parameters must be added before the body");
  ValueInfo Info;
  Info.Kind = ValueKind::Buffer;
  Info.Ty = Elem;
  Info.Access = Access;
  named(std::move(Name));
  ValueId Id = define(std::move(Info));
  K.Params.push_back(Id);
  return Id;
}

ValueId KernelBuilder::addTensorMap(std::string Name, Type Elem,
                                    AccessKind Access, bool Im2col) {
  ValueId Id = addBuffer(std::move(Name), Elem, Access);
  if (Id != NoValue) {
    K.value(Id).IsTensorMap = true;
    K.value(Id).IsIm2col = Im2col;
  }
  return Id;
}

ValueId KernelBuilder::addScalar(std::string Name, Type Ty) {
  if (checkArgs({}))
    return NoValue;
  if (!K.Body.Ops.empty() || !Open.empty())
    fail("parameters must be added before the body");
  ValueInfo Info;
  Info.Ty = Ty;
  named(std::move(Name));
  ValueId Id = define(std::move(Info));
  K.Params.push_back(Id);
  return Id;
}

Block &KernelBuilder::currentBlock() {
  if (Open.empty())
    return K.Body;
  Frame &F = *Open.back();
  return F.Op.Regions[*F.Region];
}

void KernelBuilder::append(Operation Op) {
  if (!Open.empty() && !Open.back()->Region) {
    fail("add a case or default to the switch before its operations");
    return;
  }
  currentBlock().Ops.push_back(std::move(Op));
}

std::optional<Type>
KernelBuilder::impliedType(OpKind Kind,
                           llvm::ArrayRef<Operand> Operands) const {
  auto TypeOf = [&](size_t I) -> std::optional<Type> {
    if (I >= Operands.size())
      return std::nullopt;
    const Operand &O = Operands[I];
    if (O.isLiteral())
      return O.Lit.Ty;
    if (O.Value >= K.Values.size())
      return std::nullopt;
    return K.Values[O.Value].Ty;
  };
  const Type U32 = Type::scalar(ScalarKind::U32);
  auto BoolLike = [&](std::optional<Type> T) -> std::optional<Type> {
    if (!T)
      return std::nullopt;
    return T->withElement(ScalarKind::Bool);
  };
  switch (opClass(Kind)) {
  case OpClass::Builtin:
  case OpClass::BuiltinXYZ:
  case OpClass::Len:
  case OpClass::TensorMeta:
  case OpClass::BarrierArrive:
    return U32;
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
  case OpClass::Normalize:
  case OpClass::BinaryBool:
  case OpClass::UnaryBool:
  case OpClass::Insert:
  case OpClass::PlaneReduce:
  case OpClass::PlaneBool:
  case OpClass::PlaneLane:
  // Memory and vars: the element type they hold.
  case OpClass::Load:
  case OpClass::Get:
  case OpClass::AtomicRMW:
  case OpClass::AtomicCas:
  case OpClass::AtomicLoad:
    return TypeOf(0);
  case OpClass::Select:
    return TypeOf(1);
  case OpClass::FloatPredicate:
  case OpClass::Compare:
    return BoolLike(TypeOf(0));
  case OpClass::Dot:
  case OpClass::Magnitude:
  case OpClass::LineReduce:
  case OpClass::Extract:
    if (auto T = TypeOf(0))
      return T->elementType();
    return std::nullopt;
  case OpClass::Vector:
    if (auto T = TypeOf(0); T && Type::isValidLineWidth(Operands.size()))
      return Type::line(T->elementKind(), unsigned(Operands.size()));
    return std::nullopt;
  case OpClass::PlaneElect:
    return Type::scalar(ScalarKind::Bool);
  case OpClass::CmmaElem: // cmma_get: the fragment's element type
    return Kind == OpKind::CmmaGet ? TypeOf(0) : U32;
  case OpClass::PlaneBallot:
    return Type::line(ScalarKind::U32, 4);
  default:
    return std::nullopt;
  }
}

ValueId KernelBuilder::op(OpKind Kind, llvm::ArrayRef<Arg> Operands,
                          std::optional<Type> ResultType) {
  if (checkArgs(Operands))
    return NoValue;
  OpClass Class = opClass(Kind);
  switch (Class) {
  case OpClass::Const:
  case OpClass::VarDecl:
  case OpClass::ArrayDecl:
  case OpClass::BarrierDecl:
  case OpClass::MatrixDecl:
  case OpClass::For:
    fail("build '" + opName(Kind) + "' with its own builder method");
    return NoValue;
  default:
    if (!producesValue(Class)) {
      fail("'" + opName(Kind) + "' produces no value: use its builder method");
      return NoValue;
    }
  }
  Operation Op;
  Op.Kind = Kind;
  for (const Arg &A : Operands)
    Op.Operands.push_back(A.O);
  splatScalarLiterals(Op, [&](ValueId Id) -> std::optional<Type> {
    if (Id < K.Values.size())
      return K.Values[Id].Ty;
    return std::nullopt;
  });
  std::optional<Type> Ty =
      ResultType ? ResultType : impliedType(Kind, Op.Operands);
  if (!Ty) {
    fail("'" + opName(Kind) + "' needs an explicit result type");
    return NoValue;
  }
  Op.ResultType = *Ty;
  ValueInfo Info;
  Info.Ty = *Ty;
  Op.Result = define(std::move(Info));
  ValueId Id = Op.Result;
  append(std::move(Op));
  return Id;
}

ValueId KernelBuilder::builtin(OpKind Kind, uint8_t Component) {
  if (checkArgs({}))
    return NoValue;
  OpClass Class = opClass(Kind);
  if (Class != OpClass::Builtin && Class != OpClass::BuiltinXYZ) {
    fail("'" + opName(Kind) + "' is not a builtin");
    return NoValue;
  }
  if (Component > 3 || (Component && Class != OpClass::BuiltinXYZ)) {
    fail("builtin '" + opName(Kind) + "' has no component " +
         llvm::Twine(unsigned(Component)));
    return NoValue;
  }
  Operation Op;
  Op.Kind = Kind;
  Op.Component = Component;
  Op.ResultType = Type::scalar(ScalarKind::U32);
  ValueInfo Info;
  Info.Ty = Op.ResultType;
  Op.Result = define(std::move(Info));
  ValueId Id = Op.Result;
  append(std::move(Op));
  return Id;
}

ValueId KernelBuilder::constant(Type Ty, llvm::ArrayRef<uint64_t> Bits) {
  if (checkArgs({}))
    return NoValue;
  if (Bits.size() != Ty.lanes()) {
    fail("a constant of type '" + Ty.str() + "' needs " +
         llvm::Twine(Ty.lanes()) + " lanes, found " +
         llvm::Twine(Bits.size()));
    return NoValue;
  }
  Operation Op;
  Op.Kind = OpKind::Const;
  Op.ResultType = Ty;
  for (uint64_t B : Bits)
    Op.ConstBits.push_back(lit::make(Ty.elementKind(), B).Bits);
  ValueInfo Info;
  Info.Ty = Ty;
  Op.Result = define(std::move(Info));
  ValueId Id = Op.Result;
  append(std::move(Op));
  return Id;
}

ValueId KernelBuilder::splat(Arg X, unsigned Lanes) {
  if (checkArgs({X}))
    return NoValue;
  std::optional<Type> T = impliedType(OpKind::Neg, {X.O}); // operand's type
  if (!T || !Type::isValidLineWidth(Lanes)) {
    fail("splat needs a value and a line width of 1, 2, 3, 4, 8 or 16");
    return NoValue;
  }
  return op(OpKind::Splat, {X}, Type::line(T->elementKind(), Lanes));
}

void KernelBuilder::store(Arg Mem, Arg Index, Arg Value) {
  if (checkArgs({Mem, Index, Value}))
    return;
  Operation Op;
  Op.Kind = OpKind::Store;
  Op.Operands = {Mem.O, Index.O, Value.O};
  append(std::move(Op));
}

void KernelBuilder::atomicStore(Arg Mem, Arg Index, Arg Value) {
  if (checkArgs({Mem, Index, Value}))
    return;
  Operation Op;
  Op.Kind = OpKind::AtomicStore;
  Op.Operands = {Mem.O, Index.O, Value.O};
  append(std::move(Op));
}

void KernelBuilder::set(Arg Var, Arg Value) {
  if (checkArgs({Var, Value}))
    return;
  Operation Op;
  Op.Kind = OpKind::Set;
  Op.Operands = {Var.O, Value.O};
  append(std::move(Op));
}

ValueId KernelBuilder::declareMemory(OpKind Kind, ValueKind Memory,
                                     Type Elem, uint64_t Count) {
  if (checkArgs({}))
    return NoValue;
  Operation Op;
  Op.Kind = Kind;
  Op.ResultType = Elem;
  Op.ArraySize = Count;
  ValueInfo Info;
  Info.Kind = Memory;
  Info.Ty = Elem;
  Info.Count = Count;
  Op.Result = define(std::move(Info));
  ValueId Id = Op.Result;
  append(std::move(Op));
  return Id;
}

ValueId KernelBuilder::var(Type Ty) {
  return declareMemory(OpKind::Var, ValueKind::Var, Ty, 0);
}

ValueId KernelBuilder::shared(Type Elem, uint64_t Count) {
  return declareMemory(OpKind::Shared, ValueKind::Shared, Elem, Count);
}

ValueId KernelBuilder::localArray(Type Elem, uint64_t Count) {
  return declareMemory(OpKind::LocalArray, ValueKind::Local, Elem, Count);
}

ValueId KernelBuilder::barrierUnit() {
  ValueId Id = declareMemory(OpKind::BarrierUnit, ValueKind::Local,
                             Type::scalar(ScalarKind::U32), BarrierStateWords);
  if (Id != NoValue && Id < K.Values.size())
    K.value(Id).IsBarrier = true;
  return Id;
}

ValueId KernelBuilder::barrierCube(Arg ArrivalCount) {
  if (checkArgs({ArrivalCount}))
    return NoValue;
  ValueId Id = declareMemory(OpKind::BarrierCube, ValueKind::Shared,
                             Type::scalar(ScalarKind::U32), BarrierStateWords);
  if (Id == NoValue || Error) // a refused append left no operation to fill
    return NoValue;
  K.value(Id).IsBarrier = true;
  currentBlock().Ops.back().Operands = {ArrivalCount.O};
  return Id;
}

void KernelBuilder::barrierExpectTx(Arg Barrier, Arg Bytes) {
  if (checkArgs({Barrier, Bytes}))
    return;
  Operation Op;
  Op.Kind = OpKind::BarrierExpectTx;
  Op.Operands = {Barrier.O, Bytes.O};
  append(std::move(Op));
}

void KernelBuilder::debugPrint(std::string Format,
                               llvm::ArrayRef<Arg> Operands) {
  if (checkArgs(Operands))
    return;
  Operation Op;
  Op.Kind = OpKind::DebugPrint;
  Op.Text = std::move(Format);
  for (const Arg &A : Operands)
    Op.Operands.push_back(A.O);
  append(std::move(Op));
}

void KernelBuilder::barrierWait(Arg Barrier, Arg Token) {
  if (checkArgs({Barrier, Token}))
    return;
  Operation Op;
  Op.Kind = OpKind::BarrierWait;
  Op.Operands = {Barrier.O, Token.O};
  append(std::move(Op));
}

void KernelBuilder::barrierArriveAndWait(Arg Barrier) {
  if (checkArgs({Barrier}))
    return;
  Operation Op;
  Op.Kind = OpKind::BarrierArriveAndWait;
  Op.Operands = {Barrier.O};
  append(std::move(Op));
}

void KernelBuilder::memcpyAsync(OpKind Kind, Arg Barrier, Arg Src,
                                Arg SrcOffset, Arg Dst, Arg DstOffset,
                                Arg Count) {
  if (checkArgs({Barrier, Src, SrcOffset, Dst, DstOffset, Count}))
    return;
  if (opClass(Kind) != OpClass::AsyncCopy) {
    fail("memcpyAsync builds memcpy_async or memcpy_async_tx, not '" +
         opName(Kind) + "'");
    return;
  }
  Operation Op;
  Op.Kind = Kind;
  Op.Operands = {Barrier.O, Src.O, SrcOffset.O, Dst.O, DstOffset.O, Count.O};
  append(std::move(Op));
}

void KernelBuilder::tmaLoad(Arg Barrier, Arg Shared, Arg Offset, Arg Map,
                            llvm::ArrayRef<Arg> Coords) {
  std::vector<Arg> All = {Barrier, Shared, Offset, Map};
  All.insert(All.end(), Coords.begin(), Coords.end());
  if (checkArgs(All))
    return;
  Operation Op;
  Op.Kind = OpKind::TmaLoad;
  for (const Arg &A : All)
    Op.Operands.push_back(A.O);
  append(std::move(Op));
}

void KernelBuilder::tmaStore(Arg Shared, Arg Offset, Arg Map,
                             llvm::ArrayRef<Arg> Coords) {
  std::vector<Arg> All = {Shared, Offset, Map};
  All.insert(All.end(), Coords.begin(), Coords.end());
  if (checkArgs(All))
    return;
  Operation Op;
  Op.Kind = OpKind::TmaStore;
  for (const Arg &A : All)
    Op.Operands.push_back(A.O);
  append(std::move(Op));
}

void KernelBuilder::tmaLoadIm2col(Arg Barrier, Arg Shared, Arg Offset, Arg Map,
                                  llvm::ArrayRef<Arg> Coords,
                                  llvm::ArrayRef<Arg> Offsets) {
  std::vector<Arg> All = {Barrier, Shared, Offset, Map};
  All.insert(All.end(), Coords.begin(), Coords.end());
  All.insert(All.end(), Offsets.begin(), Offsets.end());
  if (checkArgs(All))
    return;
  // The operands hold the split only through their count (2 * rank + 2).
  if (Offsets.size() + 2 != Coords.size()) {
    fail("tma_load_im2col takes one offset per spatial dimension, two "
         "fewer than its " + llvm::Twine(Coords.size()) +
         " coordinate(s); got " +
         llvm::Twine(Offsets.size()));
    return;
  }
  Operation Op;
  Op.Kind = OpKind::TmaLoadIm2col;
  for (const Arg &A : All)
    Op.Operands.push_back(A.O);
  append(std::move(Op));
}

void KernelBuilder::tmaCommit() {
  if (checkArgs({}))
    return;
  Operation Op;
  Op.Kind = OpKind::TmaCommit;
  append(std::move(Op));
}

void KernelBuilder::tmaWait(OpKind Kind, Arg Groups) {
  if (checkArgs({Groups}))
    return;
  if (Kind != OpKind::TmaWaitRead && Kind != OpKind::TmaWait) {
    fail("tmaWait builds tma_wait_read or tma_wait, not '" + opName(Kind) +
         "'");
    return;
  }
  Operation Op;
  Op.Kind = Kind;
  Op.Operands = {Groups.O};
  append(std::move(Op));
}

ValueId KernelBuilder::fragment(const MatrixType &T) {
  if (checkArgs({}))
    return NoValue;
  Operation Op;
  Op.Kind = OpKind::Fragment;
  Op.ResultType = Type::scalar(T.Elem);
  Op.Matrix = T;
  ValueInfo Info;
  Info.Kind = ValueKind::Fragment;
  Info.Ty = Op.ResultType;
  Info.Matrix = T;
  Op.Result = define(std::move(Info));
  ValueId Id = Op.Result;
  append(std::move(Op));
  return Id;
}

void KernelBuilder::cmma(OpKind Kind, llvm::ArrayRef<Arg> Operands,
                         MatrixLayout Layout) {
  if (checkArgs(Operands))
    return;
  Operation Op;
  Op.Kind = Kind;
  Op.Layout = Layout;
  for (const Arg &A : Operands)
    Op.Operands.push_back(A.O);
  append(std::move(Op));
}

void KernelBuilder::cmmaFill(Arg Fragment, Arg Value) {
  cmma(OpKind::CmmaFill, {Fragment, Value});
}

void KernelBuilder::cmmaLoad(Arg Fragment, Arg Mem, Arg Index, Arg Stride,
                             MatrixLayout Layout) {
  cmma(OpKind::CmmaLoad, {Fragment, Mem, Index, Stride}, Layout);
}

void KernelBuilder::cmmaStore(Arg Mem, Arg Index, Arg Fragment, Arg Stride,
                              MatrixLayout Layout) {
  cmma(OpKind::CmmaStore, {Mem, Index, Fragment, Stride}, Layout);
}

void KernelBuilder::cmmaMma(Arg D, Arg A, Arg B, Arg C) {
  cmma(OpKind::CmmaMma, {D, A, B, C});
}

void KernelBuilder::cmmaMmaScaled(Arg D, Arg A, Arg B, Arg C, Arg ScalesA,
                                  Arg ScalesB) {
  cmma(OpKind::CmmaMmaScaled, {D, A, B, C, ScalesA, ScalesB});
}

void KernelBuilder::cmmaCast(Arg Destination, Arg Source) {
  cmma(OpKind::CmmaCast, {Destination, Source});
}

void KernelBuilder::cmmaLdmatrix(Arg Fragment, Arg Mem, Arg Index,
                                 bool Transpose) {
  if (checkArgs({Fragment, Mem, Index}))
    return;
  Operation Op;
  Op.Kind = OpKind::CmmaLdmatrix;
  Op.Transpose = Transpose;
  Op.Operands = {Fragment.O, Mem.O, Index.O};
  append(std::move(Op));
}

void KernelBuilder::cmmaSet(Arg Fragment, Arg Nth, Arg Value) {
  cmma(OpKind::CmmaSet, {Fragment, Nth, Value});
}

void KernelBuilder::syncCube() {
  if (checkArgs({}))
    return;
  Operation Op;
  Op.Kind = OpKind::SyncCube;
  append(std::move(Op));
}

void KernelBuilder::syncPlane() {
  if (checkArgs({}))
    return;
  Operation Op;
  Op.Kind = OpKind::SyncPlane;
  append(std::move(Op));
}

void KernelBuilder::jump(OpKind Kind) {
  if (checkArgs({}))
    return;
  Operation Op;
  Op.Kind = Kind;
  append(std::move(Op));
}

void KernelBuilder::beginIf(Arg Cond) {
  if (checkArgs({Cond}))
    return;
  auto F = std::make_unique<Frame>();
  F->Op.Kind = OpKind::If;
  F->Op.Operands = {Cond.O};
  F->Op.Regions.emplace_back();
  F->Region = 0;
  Open.push_back(std::move(F));
}

void KernelBuilder::beginElse() {
  if (checkArgs({}))
    return;
  if (Open.empty() || Open.back()->Op.Kind != OpKind::If ||
      Open.back()->Op.HasElse) {
    fail("beginElse() without an open if");
    return;
  }
  Frame &F = *Open.back();
  F.Op.HasElse = true;
  F.Op.Regions.emplace_back();
  F.Region = 1;
}

ValueId KernelBuilder::beginFor(Arg Lo, Arg Hi, std::optional<Arg> Step) {
  if (checkArgs({Lo, Hi}) || (Step && checkArgs({*Step})))
    return NoValue;
  auto F = std::make_unique<Frame>();
  F->Op.Kind = OpKind::For;
  F->Op.Operands = {Lo.O, Hi.O};
  if (Step)
    F->Op.Operands.push_back(Step->O);
  F->Op.ResultType = *impliedType(OpKind::Neg, {Lo.O});
  ValueInfo Info;
  Info.Ty = F->Op.ResultType;
  F->Op.Result = define(std::move(Info));
  F->Op.Regions.emplace_back();
  F->Region = 0;
  ValueId Id = F->Op.Result;
  Open.push_back(std::move(F));
  return Id;
}

void KernelBuilder::beginLoop() {
  if (checkArgs({}))
    return;
  auto F = std::make_unique<Frame>();
  F->Op.Kind = OpKind::Loop;
  F->Op.Regions.emplace_back();
  F->Region = 0;
  Open.push_back(std::move(F));
}

void KernelBuilder::beginSwitch(Arg Selector) {
  if (checkArgs({Selector}))
    return;
  auto F = std::make_unique<Frame>();
  F->Op.Kind = OpKind::Switch;
  F->Op.Operands = {Selector.O};
  Open.push_back(std::move(F));
}

void KernelBuilder::addCase(int64_t Value) { addCase(CaseLabel(Value)); }

void KernelBuilder::addCase(CaseLabel Value) {
  addCaseLabels(llvm::ArrayRef(Value));
}

void KernelBuilder::addCase(llvm::ArrayRef<int64_t> Labels) {
  std::vector<CaseLabel> AsLabels(Labels.begin(), Labels.end());
  addCaseLabels(AsLabels);
}

void KernelBuilder::addCaseLabels(llvm::ArrayRef<CaseLabel> Labels) {
  if (checkArgs({}))
    return;
  if (Open.empty() || Open.back()->Op.Kind != OpKind::Switch) {
    fail("addCase() without an open switch");
    return;
  }
  Operation &Op = Open.back()->Op;
  if (Op.HasDefault) {
    fail("addCase() after the default of a switch");
    return;
  }
  if (Labels.empty()) {
    fail("addCase() needs at least one label");
    return;
  }
  for (size_t I = 0; I < Labels.size(); ++I)
    if (llvm::is_contained(Op.CaseValues, Labels[I]) ||
        llvm::is_contained(Labels.take_front(I), Labels[I])) {
      fail("duplicate case value " + Labels[I].str());
      return;
    }
  addSwitchCase(Op, Labels);
  Open.back()->Region = Op.Regions.size() - 1;
}

void KernelBuilder::addDefault() {
  if (checkArgs({}))
    return;
  if (Open.empty() || Open.back()->Op.Kind != OpKind::Switch ||
      Open.back()->Op.HasDefault) {
    fail("addDefault() without an open switch lacking a default");
    return;
  }
  Operation &Op = Open.back()->Op;
  Op.HasDefault = true;
  Op.Regions.emplace_back();
  Open.back()->Region = Op.Regions.size() - 1;
}

void KernelBuilder::end() {
  if (checkArgs({}))
    return;
  if (Open.empty()) {
    fail("end() without an open if, for, loop or switch");
    return;
  }
  std::unique_ptr<Frame> F = std::move(Open.back());
  Open.pop_back();
  currentBlock().Ops.push_back(std::move(F->Op));
}

llvm::Expected<IRKernel> KernelBuilder::finish() {
  if (!Error && Finished)
    fail("finish() called twice");
  if (!Error && !Open.empty())
    fail(llvm::Twine(Open.size()) +
         " control-flow construct(s) still open at finish()");
  Finished = true;
  if (Error)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kernel '" + K.Name + "': " + *Error);
  return std::move(K);
}
