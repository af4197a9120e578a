//===- Matrix.h - Fragment types of the cooperative matrix ops --*- C++ -*-===//
//
// A fragment (cubecl's cmma::Matrix, CUDA's wmma::fragment) is a small
// matrix owned by a whole plane, or by a whole cube (cubecl's Cube scope):
// the A (M x K) or B (K x N) operand of a multiply-accumulate, or an M x N
// accumulator. Its type names its use, the multiply's shape M x N x K, its
// element type, for A and B the layout of the memory it is loaded from, and
// its scope. Text form (docs/LangRef.md §5.4, §5.5):
//
//   matrix<a, 16x16x16, f16, row>    matrix<accumulator, 16x16x16, f32>
//   matrix<accumulator, 64x64x16, f32, cube>
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_MATRIX_H
#define KILN_IR_MATRIX_H

#include "kiln/IR/Type.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace kiln {

/// What a fragment is for: cubecl's MatrixIdent.
enum class MatrixUse : uint8_t { A, B, Accumulator };

/// How a fragment's rows lie in memory: cubecl's MatrixLayout. Undefined is
/// only for accumulators, whose loads and stores name the layout.
enum class MatrixLayout : uint8_t { Undefined, Row, Col };

/// Who owns a fragment: each plane its own copy, or the cube one copy.
enum class MatrixScope : uint8_t { Plane, Cube };

/// The type of a fragment.
struct MatrixType {
  MatrixUse Use = MatrixUse::Accumulator;
  uint32_t M = 0, N = 0, K = 0;
  ScalarKind Elem = ScalarKind::F32;
  MatrixLayout Layout = MatrixLayout::Undefined;
  MatrixScope Scope = MatrixScope::Plane;

  /// Rows and columns of the fragment itself: A is M x K, B is K x N, an
  /// accumulator M x N.
  uint32_t rows() const { return Use == MatrixUse::B ? K : M; }
  uint32_t cols() const { return Use == MatrixUse::A ? K : N; }
  uint64_t elements() const { return uint64_t(rows()) * cols(); }
  bool sameShape(const MatrixType &O) const {
    return M == O.M && N == O.N && K == O.K;
  }
  bool isCube() const { return Scope == MatrixScope::Cube; }
  /// "matrix<a, 16x16x16, f16, row>"; the layout is left out when undefined,
  /// the scope when it is the plane.
  std::string str() const;
  /// "16x16x16".
  std::string shapeStr() const;

  friend bool operator==(const MatrixType &A, const MatrixType &B) {
    return A.Use == B.Use && A.sameShape(B) && A.Elem == B.Elem &&
           A.Layout == B.Layout && A.Scope == B.Scope;
  }
  friend bool operator!=(const MatrixType &A, const MatrixType &B) {
    return !(A == B);
  }
};

llvm::StringRef matrixUseName(MatrixUse Use); ///< "a", "b", "accumulator"
std::optional<MatrixUse> parseMatrixUse(llvm::StringRef Name);
/// "row", "col", "undefined".
llvm::StringRef matrixLayoutName(MatrixLayout Layout);
/// "row" or "col" (undefined is never written).
std::optional<MatrixLayout> parseMatrixLayout(llvm::StringRef Name);
/// Parses "MxNxK" (three positive decimal numbers).
bool parseMatrixShape(llvm::StringRef Text, uint32_t &M, uint32_t &N,
                      uint32_t &K);

/// Why \p T is not a fragment type Kiln supports (docs/LangRef.md §5.4:
/// the shapes and element types of cubecl's cmma; §5.5: those of cube
/// fragments), or none when it is.
std::optional<std::string> unsupportedMatrixReason(const MatrixType &T);

/// The units a fragment's elements are spread over (docs/LangRef.md §5.6):
/// a plane fragment over the 32 units of its plane, a cube fragment over
/// the \p CubeUnits units of its cube.
uint32_t matrixUnits(const MatrixType &T, uint32_t CubeUnits);
/// How many elements each unit holds: elements() / matrixUnits().
uint32_t matrixElementsPerUnit(const MatrixType &T, uint32_t CubeUnits);
/// How many neighbouring elements of one 8-row (a) or 8-column (b) block a
/// unit of a plane holds (docs/LangRef.md §5.6, §5.7): 2, or for fp8, fp6,
/// fp4, i8 and u8 fragments the values of one 32-bit register of the
/// hardware MMA, 4 at 16x8x32 and 8 at 16x8x64.
uint32_t matrixUnitRun(const MatrixType &T);
/// Whether \p T is an a or b fragment of a scaled-MMA shape (16x8x32 of
/// f8e4m3, f8e5m2, f6e2m3, f6e3m2 or f4e2m1; 16x8x64 of f4e2m1).
bool isMinifloatOperand(const MatrixType &T);
/// The numbers of scales per row of A (and column of B) that
/// cmma_mma_scaled accepts for the shape of \p T (docs/LangRef.md §5.7):
/// {1} at 16x8x32, {2, 4} at 16x8x64, none otherwise.
llvm::ArrayRef<uint32_t> scaledMmaScaleCounts(const MatrixType &T);
/// Row and column of the fragment element that unit \p Unit holds as its
/// element \p Nth (both in range), per the layout of docs/LangRef.md §5.6.
std::pair<uint32_t, uint32_t> matrixElementPosition(const MatrixType &T,
                                                    uint32_t CubeUnits,
                                                    uint32_t Unit,
                                                    uint32_t Nth);

} // namespace kiln

#endif // KILN_IR_MATRIX_H
