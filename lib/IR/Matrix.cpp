//===- Matrix.cpp - Fragment types of the cooperative matrix ops ----------===//

#include "kiln/IR/Matrix.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

using namespace kiln;

namespace {

struct Shape {
  uint32_t M, N, K;
};

/// The shapes cubecl's cmma offers for 16-bit inputs (CUDA's wmma shapes,
/// plus the 8x8x8 of Metal and HIP).
constexpr Shape HalfShapes[] = {{16, 16, 16}, {32, 8, 16}, {8, 32, 16}, {8, 8, 8}};
/// The shape for f32 inputs (CUDA's tf32 m16n16k8).
constexpr Shape FloatShapes[] = {{16, 16, 8}};

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
  if (T.Use == MatrixUse::Accumulator) {
    if (T.Elem != ScalarKind::F16 && T.Elem != ScalarKind::BF16 &&
        T.Elem != ScalarKind::F32)
      return Because("accumulators hold f16, bf16 or f32");
    if (!inTable(HalfShapes, T) && !inTable(FloatShapes, T))
      return Because("the shape " + llvm::Twine(T.shapeStr()) +
                     " is not supported; use 16x16x16, 32x8x16, 8x32x16, "
                     "8x8x8 or 16x16x8");
    return std::nullopt;
  }
  if (T.Layout == MatrixLayout::Undefined)
    return Because("a and b fragments need a layout, row or col");
  if (isHalfInput(T.Elem)) {
    if (!inTable(HalfShapes, T))
      return Because("f16 and bf16 fragments have the shapes 16x16x16, "
                     "32x8x16, 8x32x16 or 8x8x8");
    return std::nullopt;
  }
  if (T.Elem == ScalarKind::F32) {
    if (!inTable(FloatShapes, T))
      return Because("f32 fragments have the shape 16x16x8");
    return std::nullopt;
  }
  return Because("a and b fragments hold f16, bf16 or f32");
}
