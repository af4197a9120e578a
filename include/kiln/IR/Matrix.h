//===- Matrix.h - Fragment types of the cooperative matrix ops --*- C++ -*-===//
//
// A fragment (cubecl's cmma::Matrix, CUDA's wmma::fragment) is a small
// matrix owned by a whole plane: the A (M x K) or B (K x N) operand of a
// multiply-accumulate, or an M x N accumulator. Its type names its use, the
// multiply's shape M x N x K, its element type and, for A and B, the layout
// of the memory it is loaded from. Text form (docs/LangRef.md §5.4):
//
//   matrix<a, 16x16x16, f16, row>    matrix<accumulator, 16x16x16, f32>
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_MATRIX_H
#define KILN_IR_MATRIX_H

#include "kiln/IR/Type.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// What a fragment is for: cubecl's MatrixIdent.
enum class MatrixUse : uint8_t { A, B, Accumulator };

/// How a fragment's rows lie in memory: cubecl's MatrixLayout. Undefined is
/// only for accumulators, whose loads and stores name the layout.
enum class MatrixLayout : uint8_t { Undefined, Row, Col };

/// The type of a fragment.
struct MatrixType {
  MatrixUse Use = MatrixUse::Accumulator;
  uint32_t M = 0, N = 0, K = 0;
  ScalarKind Elem = ScalarKind::F32;
  MatrixLayout Layout = MatrixLayout::Undefined;

  /// Rows and columns of the fragment itself: A is M x K, B is K x N, an
  /// accumulator M x N.
  uint32_t rows() const { return Use == MatrixUse::B ? K : M; }
  uint32_t cols() const { return Use == MatrixUse::A ? K : N; }
  uint64_t elements() const { return uint64_t(rows()) * cols(); }
  bool sameShape(const MatrixType &O) const {
    return M == O.M && N == O.N && K == O.K;
  }
  /// "matrix<a, 16x16x16, f16, row>"; the layout is left out when undefined.
  std::string str() const;
  /// "16x16x16".
  std::string shapeStr() const;

  friend bool operator==(const MatrixType &A, const MatrixType &B) {
    return A.Use == B.Use && A.sameShape(B) && A.Elem == B.Elem &&
           A.Layout == B.Layout;
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
/// the shapes and element types of cubecl's cmma), or none when it is.
std::optional<std::string> unsupportedMatrixReason(const MatrixType &T);

} // namespace kiln

#endif // KILN_IR_MATRIX_H
