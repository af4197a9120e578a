//===- Type.h - Value and memory types of the Kiln kernel IR ----*- C++ -*-===//
//
// Values are scalars or lines (`vec<N x T>`). Memory (buffers, shared arrays,
// per-unit arrays and vars) is not a value: it is named by a ValueInfo whose
// kind says which storage it is. See docs/LangRef.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_TYPE_H
#define KILN_IR_TYPE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// The scalar element kinds, in the order the printer lists them.
enum class ScalarKind : uint8_t {
  Bool,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  F16,
  BF16,
  F32,
  F64,
  // Minifloat storage types (docs/LangRef.md §3.3). They come after the
  // others so that the numbering the API and the metadata use stays put.
  F8E4M3,   ///< OCP FP8 E4M3 ("FN": no infinities, NaN is S.1111.111)
  F8E5M2,   ///< OCP FP8 E5M2 (IEEE-like: infinities and NaNs)
  F6E2M3,   ///< OCP MX FP6 E2M3 (finite only)
  F6E3M2,   ///< OCP MX FP6 E3M2 (finite only)
  F4E2M1,   ///< OCP MX FP4 E2M1 (finite only)
  F4E2M1X2, ///< two F4E2M1 in one byte, element 0 in the low nibble
  UE8M0,    ///< OCP MX scale: 2^(e-127), 0xFF is NaN
};

/// The last ScalarKind, for range checks of stored kinds.
constexpr ScalarKind LastScalarKind = ScalarKind::UE8M0;

/// Bits in one scalar of \p Kind (bool counts as 1).
unsigned bitWidth(ScalarKind Kind);
/// Bytes one scalar of \p Kind occupies in memory (bool: 1).
unsigned byteSize(ScalarKind Kind);
bool isFloat(ScalarKind Kind);
bool isInteger(ScalarKind Kind); ///< signed or unsigned, not bool
bool isSigned(ScalarKind Kind);  ///< signed integers only
/// The minifloat storage types: one byte each in values and memory, no
/// arithmetic (docs/LangRef.md §3.3). Neither isFloat nor isInteger.
bool isMinifloat(ScalarKind Kind);
/// The IR spelling: "f32", "u8", "bool", ...
llvm::StringRef scalarName(ScalarKind Kind);
/// The kind spelled \p Name, or none.
std::optional<ScalarKind> parseScalarName(llvm::StringRef Name);

/// A value type: a scalar, or a line `vec<N x T>` with N in {1,2,3,4,8,16}.
/// `vec<1 x T>` is a line of one lane and is distinct from `T`.
class Type {
public:
  constexpr Type() = default;
  static constexpr Type scalar(ScalarKind Kind) { return Type(Kind, 0); }
  static constexpr Type line(ScalarKind Kind, unsigned Lanes) {
    return Type(Kind, static_cast<uint8_t>(Lanes));
  }
  /// Whether \p Lanes is a line width the IR allows.
  static bool isValidLineWidth(uint64_t Lanes);

  ScalarKind elementKind() const { return Elem; }
  Type elementType() const { return scalar(Elem); }
  bool isLine() const { return Lanes != 0; }
  /// Lanes of a line, 1 for a scalar.
  unsigned lanes() const { return Lanes ? Lanes : 1; }
  /// The same shape (scalar or line of as many lanes) with another element.
  Type withElement(ScalarKind Kind) const { return Type(Kind, Lanes); }

  bool isFloat() const { return kiln::isFloat(Elem); }
  bool isInteger() const { return kiln::isInteger(Elem); }
  bool isSigned() const { return kiln::isSigned(Elem); }
  bool isBool() const { return Elem == ScalarKind::Bool; }
  bool isMinifloat() const { return kiln::isMinifloat(Elem); }
  /// Whether the element is f4e2m1x2, two values to a lane.
  bool isPackedPair() const { return Elem == ScalarKind::F4E2M1X2; }
  /// Bytes a value of this type occupies in memory: lanes are packed, so a
  /// buffer of `vec<3 x f32>` has a stride of 12 bytes.
  unsigned storeSize() const { return lanes() * byteSize(Elem); }

  /// "f32", "vec<4 x f32>".
  std::string str() const;

  friend bool operator==(Type A, Type B) {
    return A.Elem == B.Elem && A.Lanes == B.Lanes;
  }
  friend bool operator!=(Type A, Type B) { return !(A == B); }

private:
  constexpr Type(ScalarKind TheElem, uint8_t TheLanes)
      : Elem(TheElem), Lanes(TheLanes) {}
  ScalarKind Elem = ScalarKind::Bool;
  uint8_t Lanes = 0;
};

/// How a kernel may use a buffer parameter.
enum class AccessKind : uint8_t { Read, Write, ReadWrite };
llvm::StringRef accessName(AccessKind Access); ///< "read", "write", "read_write"
std::optional<AccessKind> parseAccessName(llvm::StringRef Name);

} // namespace kiln

#endif // KILN_IR_TYPE_H
