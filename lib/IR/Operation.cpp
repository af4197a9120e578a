//===- Operation.cpp - Operation names and classes from Ops.def -----------===//

#include "kiln/IR/Operation.h"
#include "kiln/IR/Kernel.h"

#include "llvm/ADT/StringSwitch.h"

using namespace kiln;

llvm::StringRef kiln::opName(OpKind Kind) {
  switch (Kind) {
#define KILN_OP(Enum, Name, Class)                                             \
  case OpKind::Enum:                                                           \
    return Name;
#include "kiln/IR/Ops.def"
  }
  return "?";
}

OpClass kiln::opClass(OpKind Kind) {
  switch (Kind) {
#define KILN_OP(Enum, Name, Class)                                             \
  case OpKind::Enum:                                                           \
    return OpClass::Class;
#include "kiln/IR/Ops.def"
  }
  return OpClass::Jump;
}

std::optional<OpKind> kiln::parseOpName(llvm::StringRef Name) {
  return llvm::StringSwitch<std::optional<OpKind>>(Name)
#define KILN_OP(Enum, Text, Class) .Case(Text, OpKind::Enum)
#include "kiln/IR/Ops.def"
      .Default(std::nullopt);
}

bool kiln::producesValue(OpClass Class) {
  switch (Class) {
  case OpClass::Store:
  case OpClass::Set:
  case OpClass::AtomicStore:
  case OpClass::Barrier:
  case OpClass::BarrierExpectTx:
  case OpClass::BarrierWait:
  case OpClass::AsyncCopy:
  case OpClass::Cmma:
  case OpClass::CmmaSet:
  case OpClass::DebugPrint:
  case OpClass::TensorCopy:
  case OpClass::TensorStoreGroup:
  case OpClass::If:
  case OpClass::Loop:
  case OpClass::Switch:
  case OpClass::Jump:
    return false;
  // VarDecl, ArrayDecl, MatrixDecl and For define a value (the object, the induction
  // variable) but are not written `%x = OP ... : T`; the parser knows.
  default:
    return true;
  }
}

bool kiln::hasIndexedFirstOperand(OpClass Class) {
  switch (Class) {
  case OpClass::Load:
  case OpClass::Store:
  case OpClass::AtomicRMW:
  case OpClass::AtomicCas:
  case OpClass::AtomicLoad:
  case OpClass::AtomicStore:
  case OpClass::Extract:
  case OpClass::Insert:
    return true;
  default:
    return false;
  }
}

const std::vector<unsigned> *kiln::bracketedOperandShape(OpClass Class) {
  // memcpy_async %bar, %src[%i], %dst[%j], %count
  static const std::vector<unsigned> AsyncCopyShape = {0, 1, 1, 0};
  if (Class == OpClass::AsyncCopy)
    return &AsyncCopyShape;
  return nullptr;
}

static unsigned __int128 exactProduct(const std::array<uint32_t, 3> &Dims) {
  return static_cast<unsigned __int128>(Dims[0]) * Dims[1] * Dims[2];
}

uint64_t IRKernel::saturatingProduct(const std::array<uint32_t, 3> &Dims) {
  unsigned __int128 P = exactProduct(Dims);
  return P > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(P);
}

std::string IRKernel::productText(const std::array<uint32_t, 3> &Dims) {
  unsigned __int128 P = exactProduct(Dims);
  std::string Digits;
  do {
    Digits.insert(Digits.begin(), char('0' + unsigned(P % 10)));
    P /= 10;
  } while (P != 0);
  return Digits;
}

const IRKernel *Module::findKernel(llvm::StringRef Name) const {
  for (const IRKernel &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

namespace {
/// Pre-order walk of \p B; stops (returning false) when \p Fn does.
bool walkPreOrder(const Block &B, unsigned &Next,
                  llvm::function_ref<bool(const Operation &, unsigned)> Fn) {
  for (const Operation &Op : B.Ops) {
    if (!Fn(Op, Next++))
      return false;
    for (const Block &R : Op.Regions)
      if (!walkPreOrder(R, Next, Fn))
        return false;
  }
  return true;
}
} // namespace

void kiln::forEachOperation(
    const IRKernel &K,
    llvm::function_ref<void(const Operation &Op, unsigned Number)> Fn) {
  unsigned Next = 0;
  walkPreOrder(K.Body, Next, [&](const Operation &Op, unsigned N) {
    Fn(Op, N);
    return true;
  });
}

const Operation *kiln::operationAt(const IRKernel &K, unsigned Number) {
  const Operation *Found = nullptr;
  unsigned Next = 0;
  walkPreOrder(K.Body, Next, [&](const Operation &Op, unsigned N) {
    if (N != Number)
      return true;
    Found = &Op;
    return false;
  });
  return Found;
}

bool kiln::splatsScalarLiterals(OpClass Class, size_t OperandIndex) {
  // The data operands of the lane-wise classes: all of them, but a
  // select's condition. Indices, lanes, shifts of other classes stay scalar.
  switch (Class) {
  case OpClass::BinaryNumeric:
  case OpClass::TernaryNumeric:
  case OpClass::TernaryFloat:
  case OpClass::BinaryInt:
  case OpClass::BinaryFloat:
  case OpClass::Compare:
  case OpClass::BinaryBool:
  case OpClass::Dot:
    return true;
  case OpClass::Select:
    return OperandIndex >= 1;
  default:
    return false;
  }
}

void kiln::splatScalarLiterals(
    Operation &Op,
    llvm::function_ref<std::optional<Type>(ValueId)> TypeOfValue) {
  if (!splatsScalarLiterals(Op.opClass(), 1))
    return;
  size_t First = splatsScalarLiterals(Op.opClass(), 0) ? 0 : 1;
  std::optional<Type> Line;
  for (size_t I = First; I < Op.Operands.size(); ++I)
    if (!Op.Operands[I].isLiteral())
      if (std::optional<Type> T = TypeOfValue(Op.Operands[I].Value))
        if (T->isLine()) {
          Line = *T;
          break;
        }
  if (!Line)
    return;
  for (size_t I = First; I < Op.Operands.size(); ++I) {
    Operand &O = Op.Operands[I];
    if (O.isLiteral() && !O.Lit.Ty.isLine() &&
        O.Lit.Ty == Line->elementType())
      O.Lit.Ty = *Line;
  }
}
