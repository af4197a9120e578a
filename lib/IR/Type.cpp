//===- Type.cpp - Value and memory types ----------------------------------===//

#include "kiln/IR/Type.h"

#include "llvm/ADT/StringSwitch.h"

using namespace kiln;

unsigned kiln::bitWidth(ScalarKind Kind) {
  switch (Kind) {
  case ScalarKind::Bool:
    return 1;
  case ScalarKind::I8:
  case ScalarKind::U8:
  case ScalarKind::F8E4M3:
  case ScalarKind::F8E5M2:
  case ScalarKind::F6E2M3:
  case ScalarKind::F6E3M2:
  case ScalarKind::F4E2M1:
  case ScalarKind::F4E2M1X2:
  case ScalarKind::UE8M0:
    // Minifloats take a byte each, in values and in memory (LangRef §3.3).
    return 8;
  case ScalarKind::I16:
  case ScalarKind::U16:
  case ScalarKind::F16:
  case ScalarKind::BF16:
    return 16;
  case ScalarKind::I32:
  case ScalarKind::U32:
  case ScalarKind::F32:
    return 32;
  case ScalarKind::I64:
  case ScalarKind::U64:
  case ScalarKind::F64:
    return 64;
  }
  return 0;
}

unsigned kiln::byteSize(ScalarKind Kind) {
  return Kind == ScalarKind::Bool ? 1 : bitWidth(Kind) / 8;
}

bool kiln::isFloat(ScalarKind Kind) {
  return Kind == ScalarKind::F16 || Kind == ScalarKind::BF16 ||
         Kind == ScalarKind::F32 || Kind == ScalarKind::F64;
}

bool kiln::isMinifloat(ScalarKind Kind) {
  return Kind >= ScalarKind::F8E4M3 && Kind <= LastScalarKind;
}

bool kiln::isInteger(ScalarKind Kind) {
  return Kind != ScalarKind::Bool && !isFloat(Kind) && !isMinifloat(Kind);
}

bool kiln::isSigned(ScalarKind Kind) {
  return Kind == ScalarKind::I8 || Kind == ScalarKind::I16 ||
         Kind == ScalarKind::I32 || Kind == ScalarKind::I64;
}

llvm::StringRef kiln::scalarName(ScalarKind Kind) {
  switch (Kind) {
  case ScalarKind::Bool:
    return "bool";
  case ScalarKind::I8:
    return "i8";
  case ScalarKind::I16:
    return "i16";
  case ScalarKind::I32:
    return "i32";
  case ScalarKind::I64:
    return "i64";
  case ScalarKind::U8:
    return "u8";
  case ScalarKind::U16:
    return "u16";
  case ScalarKind::U32:
    return "u32";
  case ScalarKind::U64:
    return "u64";
  case ScalarKind::F16:
    return "f16";
  case ScalarKind::BF16:
    return "bf16";
  case ScalarKind::F32:
    return "f32";
  case ScalarKind::F64:
    return "f64";
  case ScalarKind::F8E4M3:
    return "f8e4m3";
  case ScalarKind::F8E5M2:
    return "f8e5m2";
  case ScalarKind::F6E2M3:
    return "f6e2m3";
  case ScalarKind::F6E3M2:
    return "f6e3m2";
  case ScalarKind::F4E2M1:
    return "f4e2m1";
  case ScalarKind::F4E2M1X2:
    return "f4e2m1x2";
  case ScalarKind::UE8M0:
    return "ue8m0";
  }
  return "?";
}

std::optional<ScalarKind> kiln::parseScalarName(llvm::StringRef Name) {
  return llvm::StringSwitch<std::optional<ScalarKind>>(Name)
      .Case("bool", ScalarKind::Bool)
      .Case("i8", ScalarKind::I8)
      .Case("i16", ScalarKind::I16)
      .Case("i32", ScalarKind::I32)
      .Case("i64", ScalarKind::I64)
      .Case("u8", ScalarKind::U8)
      .Case("u16", ScalarKind::U16)
      .Case("u32", ScalarKind::U32)
      .Case("u64", ScalarKind::U64)
      .Case("f16", ScalarKind::F16)
      .Case("bf16", ScalarKind::BF16)
      .Case("f32", ScalarKind::F32)
      .Case("f64", ScalarKind::F64)
      .Case("f8e4m3", ScalarKind::F8E4M3)
      .Case("f8e5m2", ScalarKind::F8E5M2)
      .Case("f6e2m3", ScalarKind::F6E2M3)
      .Case("f6e3m2", ScalarKind::F6E3M2)
      .Case("f4e2m1", ScalarKind::F4E2M1)
      .Case("f4e2m1x2", ScalarKind::F4E2M1X2)
      .Case("ue8m0", ScalarKind::UE8M0)
      .Default(std::nullopt);
}

bool Type::isValidLineWidth(uint64_t Lanes) {
  return Lanes == 1 || Lanes == 2 || Lanes == 3 || Lanes == 4 || Lanes == 8 ||
         Lanes == 16;
}

std::string Type::str() const {
  if (!isLine())
    return scalarName(Elem).str();
  return "vec<" + std::to_string(Lanes) + " x " + scalarName(Elem).str() + ">";
}

llvm::StringRef kiln::accessName(AccessKind Access) {
  switch (Access) {
  case AccessKind::Read:
    return "read";
  case AccessKind::Write:
    return "write";
  case AccessKind::ReadWrite:
    return "read_write";
  }
  return "?";
}

std::optional<AccessKind> kiln::parseAccessName(llvm::StringRef Name) {
  return llvm::StringSwitch<std::optional<AccessKind>>(Name)
      .Case("read", AccessKind::Read)
      .Case("write", AccessKind::Write)
      .Case("read_write", AccessKind::ReadWrite)
      .Default(std::nullopt);
}
