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

/// The shapes of fp8/fp6/fp4 operands (CUDA's mma m16n8k32 of kind f8f6f4,
/// one code per byte, and m16n8k64 of kind mxf4, packed fp4); i8 and u8
/// operands take m16n8k32 too.
constexpr Shape MinifloatShape{16, 8, 32}, PackedFp4Shape{16, 8, 64};

/// Cube fragments: M, N and K multiples of 8 from 8 to these.
constexpr uint32_t MaxCubeMN = 128, MaxCubeK = 64;

/// Units of a plane that hold a plane fragment's elements (LangRef §5.6).
constexpr uint32_t LayoutPlaneUnits = 32;

bool isHalfInput(ScalarKind E) {
  return E == ScalarKind::F16 || E == ScalarKind::BF16;
}

bool isByteInteger(ScalarKind E) {
  return E == ScalarKind::I8 || E == ScalarKind::U8;
}

bool isShape(const Shape &S, const MatrixType &T) {
  return S.M == T.M && S.N == T.N && S.K == T.K;
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
    if (isShape(MinifloatShape, T) || isShape(PackedFp4Shape, T)) {
      // f32 for fp8/fp6/fp4 inputs, i32 for i8/u8 inputs (16x8x32 only).
      if (T.Elem != ScalarKind::F32 &&
          !(T.Elem == ScalarKind::I32 && isShape(MinifloatShape, T)))
        return Because("accumulators of 16x8x32 hold f32 or i32, those of "
                       "16x8x64 f32");
      return std::nullopt;
    }
    if (T.Elem != ScalarKind::F16 && T.Elem != ScalarKind::BF16 &&
        T.Elem != ScalarKind::F32)
      return Because("accumulators hold f16, bf16 or f32");
    if (!inTable(HalfShapes, T) && !inTable(FloatShapes, T))
      return Because("the shape " + llvm::Twine(T.shapeStr()) +
                     " is not supported; use 16x16x16, 32x8x16, 8x32x16, "
                     "8x8x8, 16x8x16, 16x16x8, 16x8x8, 16x8x32 or 16x8x64");
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
  if (isMinifloat(T.Elem) && T.Elem != ScalarKind::UE8M0 &&
      T.Elem != ScalarKind::F4E2M1X2) {
    if (isShape(MinifloatShape, T) ||
        (T.Elem == ScalarKind::F4E2M1 && isShape(PackedFp4Shape, T)))
      return std::nullopt;
    return Because(T.Elem == ScalarKind::F4E2M1
                       ? "f4e2m1 fragments have the shapes 16x8x32 or 16x8x64"
                       : "fp8 and fp6 fragments have the shape 16x8x32");
  }
  if (isByteInteger(T.Elem)) {
    if (isShape(MinifloatShape, T))
      return std::nullopt;
    return Because("i8 and u8 fragments have the shape 16x8x32");
  }
  return Because("a and b fragments hold f16, bf16, f32, i8, u8, or f8e4m3, "
                 "f8e5m2, f6e2m3, f6e3m2 or f4e2m1");
}

bool kiln::isMinifloatOperand(const MatrixType &T) {
  return T.Use != MatrixUse::Accumulator && !T.isCube() &&
         isMinifloat(T.Elem) && T.Elem != ScalarKind::UE8M0 &&
         T.Elem != ScalarKind::F4E2M1X2 &&
         (isShape(MinifloatShape, T) ||
          (T.Elem == ScalarKind::F4E2M1 && isShape(PackedFp4Shape, T)));
}

uint32_t kiln::matrixUnitRun(const MatrixType &T) {
  if (T.Use != MatrixUse::Accumulator && !T.isCube() &&
      isByteInteger(T.Elem) && isShape(MinifloatShape, T))
    return 4; // i8/u8: CUDA's m16n8k32 .s8/.u8 registers, as fp8's
  if (!isMinifloatOperand(T))
    return 2;
  return isShape(PackedFp4Shape, T) ? 8 : 4;
}

llvm::ArrayRef<uint32_t> kiln::scaledMmaScaleCounts(const MatrixType &T) {
  static constexpr uint32_t One[] = {1}, TwoOrFour[] = {2, 4};
  if (isShape(MinifloatShape, T))
    return One;
  if (isShape(PackedFp4Shape, T))
    return TwoOrFour;
  return {};
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
  // Blocks of 8 rows x 4E columns (b: 4E rows x 8 columns), numbered down
  // the columns of blocks; each unit holds E neighbours of each block
  // (CUDA's mma registers: E = 2 for m16n8k16, 4 or 8 for fp8/fp6/fp4).
  uint32_t Run = matrixUnitRun(T);
  bool IsB = T.Use == MatrixUse::B;
  uint32_t BlockH = IsB ? 4 * Run : 8, BlockW = IsB ? 8 : 4 * Run;
  uint32_t Block = Nth / Run, J = Nth % Run, BlockRows = T.rows() / BlockH;
  uint32_t R0 = BlockH * (Block % BlockRows), C0 = BlockW * (Block / BlockRows);
  uint32_t Group = Unit / 4, InGroup = Unit % 4;
  if (IsB)
    return {R0 + Run * InGroup + J, C0 + Group};
  return {R0 + Group, C0 + Run * InGroup + J};
}
