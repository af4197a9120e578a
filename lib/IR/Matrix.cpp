//===- Matrix.cpp - Fragment types of the cooperative matrix ops ----------===//

#include "kiln/IR/Matrix.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>

using namespace kiln;

namespace {

struct Shape {
  uint32_t M, N, K;
};

/// The shapes cubecl's cmma offers for 16-bit inputs (CUDA's wmma shapes,
/// the 8x8x8 of Metal and HIP, and the m16n8k16 of CUDA's mma).
constexpr Shape HalfShapes[] = {{16, 16, 16}, {32, 8, 16}, {8, 32, 16},
                                {8, 8, 8},    {16, 8, 16}};
/// The shapes for f32 inputs (CUDA's tf32 m16n16k8 and m16n8k8).
constexpr Shape FloatShapes[] = {{16, 16, 8}, {16, 8, 8}};

/// Cube fragments: M, N and K multiples of 8 from 8 to these.
constexpr uint32_t MaxCubeMN = 128, MaxCubeK = 64;

/// Units of a plane that hold a plane fragment's elements (LangRef §5.6).
constexpr uint32_t LayoutPlaneUnits = 32;

bool isHalfInput(ScalarKind E) {
  return E == ScalarKind::F16 || E == ScalarKind::BF16;
}

bool inTable(llvm::ArrayRef<Shape> Table, const MatrixType &T) {
  return llvm::any_of(Table, [&](const Shape &S) {
    return S.M == T.M && S.N == T.N && S.K == T.K;
  });
}

} // namespace

std::string MatrixType::shapeStr() const {
  return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

std::string MatrixType::str() const {
  std::string S = "matrix<" + matrixUseName(Use).str() + ", " + shapeStr() +
                  ", " + scalarName(Elem).str();
  if (Layout != MatrixLayout::Undefined)
    S += ", " + matrixLayoutName(Layout).str();
  if (Scope == MatrixScope::Cube)
    S += ", cube";
  return S + ">";
}

llvm::StringRef kiln::matrixUseName(MatrixUse Use) {
  switch (Use) {
  case MatrixUse::A:
    return "a";
  case MatrixUse::B:
    return "b";
  case MatrixUse::Accumulator:
    return "accumulator";
  }
  return "?";
}

std::optional<MatrixUse> kiln::parseMatrixUse(llvm::StringRef Name) {
  if (Name == "a")
    return MatrixUse::A;
  if (Name == "b")
    return MatrixUse::B;
  if (Name == "accumulator")
    return MatrixUse::Accumulator;
  return std::nullopt;
}

llvm::StringRef kiln::matrixLayoutName(MatrixLayout Layout) {
  switch (Layout) {
  case MatrixLayout::Undefined:
    return "undefined";
  case MatrixLayout::Row:
    return "row";
  case MatrixLayout::Col:
    return "col";
  }
  return "?";
}

std::optional<MatrixLayout> kiln::parseMatrixLayout(llvm::StringRef Name) {
  if (Name == "row")
    return MatrixLayout::Row;
  if (Name == "col")
    return MatrixLayout::Col;
  return std::nullopt;
}

bool kiln::parseMatrixShape(llvm::StringRef Text, uint32_t &M, uint32_t &N,
                            uint32_t &K) {
  llvm::SmallVector<llvm::StringRef, 4> Parts;
  Text.split(Parts, 'x');
  if (Parts.size() != 3)
    return false;
  uint32_t *Out[] = {&M, &N, &K};
  for (size_t I = 0; I < 3; ++I) {
    // Decimal digits only, at most 4 of them: shapes are small.
    if (Parts[I].empty() || Parts[I].size() > 4 ||
        !llvm::all_of(Parts[I], [](char C) { return C >= '0' && C <= '9'; }))
      return false;
    unsigned V = 0;
    Parts[I].getAsInteger(10, V);
    if (V == 0)
      return false;
    *Out[I] = V;
  }
  return true;
}

std::optional<std::string> kiln::unsupportedMatrixReason(const MatrixType &T) {
  // Twine, not std::string's operator+: GCC 12 at -O3 warns about the latter
  // (a false -Wrestrict).
  std::string Type = T.str();
  auto Because = [&](const llvm::Twine &Why) {
    return ("'" + llvm::Twine(Type) + "': " + Why).str();
  };
  bool HalfOrFloat = isHalfInput(T.Elem) || T.Elem == ScalarKind::F32;
  if (T.Use != MatrixUse::Accumulator && T.Layout == MatrixLayout::Undefined)
    return Because("a and b fragments need a layout, row or col");
  if (T.isCube()) {
    // Any multiple of 8 up to the limits: the CPU has no fixed unit shape.
    auto Fits = [](uint32_t V, uint32_t Max) { return V % 8 == 0 && V <= Max; };
    if (!Fits(T.M, MaxCubeMN) || !Fits(T.N, MaxCubeMN) || !Fits(T.K, MaxCubeK))
      return Because("cube fragments have M and N multiples of 8 up to " +
                     llvm::Twine(MaxCubeMN) + " and K a multiple of 8 up to " +
                     llvm::Twine(MaxCubeK));
    if (!HalfOrFloat)
      return Because("cube fragments hold f16, bf16 or f32");
    return std::nullopt;
  }
  if (T.Use == MatrixUse::Accumulator) {
    if (T.Elem != ScalarKind::F16 && T.Elem != ScalarKind::BF16 &&
        T.Elem != ScalarKind::F32)
      return Because("accumulators hold f16, bf16 or f32");
    if (!inTable(HalfShapes, T) && !inTable(FloatShapes, T))
      return Because("the shape " + llvm::Twine(T.shapeStr()) +
                     " is not supported; use 16x16x16, 32x8x16, 8x32x16, "
                     "8x8x8, 16x8x16, 16x16x8 or 16x8x8");
    return std::nullopt;
  }
  if (isHalfInput(T.Elem)) {
    if (!inTable(HalfShapes, T))
      return Because("f16 and bf16 fragments have the shapes 16x16x16, "
                     "32x8x16, 8x32x16, 8x8x8 or 16x8x16");
    return std::nullopt;
  }
  if (T.Elem == ScalarKind::F32) {
    if (!inTable(FloatShapes, T))
      return Because("f32 fragments have the shapes 16x16x8 or 16x8x8");
    return std::nullopt;
  }
  return Because("a and b fragments hold f16, bf16 or f32");
}

uint32_t kiln::matrixUnits(const MatrixType &T, uint32_t CubeUnits) {
  return T.isCube() ? std::max(CubeUnits, 1u) : LayoutPlaneUnits;
}

uint32_t kiln::matrixElementsPerUnit(const MatrixType &T, uint32_t CubeUnits) {
  uint64_t Units = matrixUnits(T, CubeUnits);
  return static_cast<uint32_t>((T.elements() + Units - 1) / Units);
}

std::pair<uint32_t, uint32_t> kiln::matrixElementPosition(const MatrixType &T,
                                                          uint32_t CubeUnits,
                                                          uint32_t Unit,
                                                          uint32_t Nth) {
  if (T.isCube()) {
    // Element n of unit u is the row-major element n * units + u.
    uint64_t E = uint64_t(Nth) * matrixUnits(T, CubeUnits) + Unit;
    return {static_cast<uint32_t>(E / T.cols()),
            static_cast<uint32_t>(E % T.cols())};
  }
  // 8 x 8 blocks, numbered down the columns of blocks; each unit holds two
  // neighbours of each block (CUDA's m16n8k16 registers).
  uint32_t Block = Nth / 2, J = Nth % 2, BlockRows = T.rows() / 8;
  uint32_t R0 = 8 * (Block % BlockRows), C0 = 8 * (Block / BlockRows);
  uint32_t Group = Unit / 4, InGroup = Unit % 4;
  if (T.Use == MatrixUse::B)
    return {R0 + 2 * InGroup + J, C0 + Group};
  return {R0 + Group, C0 + 2 * InGroup + J};
}
