//===- CaseLabel.h - The label of a switch case -----------------*- C++ -*-===//
//
// `case INT`: a label is an integer from -2^63 to 2^64 - 1, so that an i64
// selector and a u64 selector can both name every value they take. Neither
// int64_t nor uint64_t holds that range, so a label keeps its 64 bits and
// whether it is negative.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_CASELABEL_H
#define KILN_IR_CASELABEL_H

#include <cstdint>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kiln {

class CaseLabel {
public:
  /// A label from a signed value: `case -3`, `case 7`.
  constexpr CaseLabel(int64_t Value)
      : Bits(static_cast<uint64_t>(Value)), Negative(Value < 0) {}
  /// A label from an unsigned value, 2^63 and up included.
  static constexpr CaseLabel fromUnsigned(uint64_t Value) {
    CaseLabel Label;
    Label.Bits = Value;
    return Label;
  }

  bool isNegative() const { return Negative; }
  /// The label modulo 2^64 (its two's-complement bits when negative).
  uint64_t bits() const { return Bits; }
  /// Whether the label is a value of a \p Width-bit integer type (signed or
  /// not); a label that is not never matches a selector of that type.
  bool fits(unsigned Width, bool Signed) const;
  /// The label in decimal, as the printer writes it.
  std::string str() const;

  friend bool operator==(CaseLabel A, CaseLabel B) {
    return A.Bits == B.Bits && A.Negative == B.Negative;
  }
  friend bool operator!=(CaseLabel A, CaseLabel B) { return !(A == B); }
  /// Numeric order: negative labels first.
  friend bool operator<(CaseLabel A, CaseLabel B) {
    if (A.Negative != B.Negative)
      return A.Negative;
    return A.Bits < B.Bits;
  }

private:
  // No two-argument constructor: `addCase({5, 4})` must mean two labels.
  constexpr CaseLabel() : Bits(0), Negative(false) {}

  uint64_t Bits;
  bool Negative;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &OS, CaseLabel Label);

} // namespace kiln

#endif // KILN_IR_CASELABEL_H
