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
  case OpClass::If:
  case OpClass::Loop:
  case OpClass::Switch:
  case OpClass::Jump:
    return false;
  // VarDecl, ArrayDecl and For define a value (the object, the induction
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

const Kernel *Module::findKernel(llvm::StringRef Name) const {
  for (const Kernel &K : Kernels)
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
    const Kernel &K,
    llvm::function_ref<void(const Operation &Op, unsigned Number)> Fn) {
  unsigned Next = 0;
  walkPreOrder(K.Body, Next, [&](const Operation &Op, unsigned N) {
    Fn(Op, N);
    return true;
  });
}

const Operation *kiln::operationAt(const Kernel &K, unsigned Number) {
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
