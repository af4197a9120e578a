//===- Minifloat.h - The minifloat storage formats --------------*- C++ -*-===//
//
// The encodings of f8e4m3, f8e5m2, f6e2m3, f6e3m2, f4e2m1 (also the halves of
// f4e2m1x2) and ue8m0, and host-side conversions with exactly the rounding
// that `cast` has in a kernel (docs/LangRef.md §3.3 and §5.3.1). The parser,
// the printer and the tools use them; the lowering does the same in LLVM IR.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_MINIFLOAT_H
#define KILN_IR_MINIFLOAT_H

#include "kiln/IR/Type.h"

#include <cstdint>

namespace kiln {

/// One minifloat format: a sign bit (unless unsigned), ExponentBits of
/// exponent biased by Bias and MantissaBits of fraction. Exponent 0 holds the
/// subnormals (none in ue8m0, which has no fraction).
struct MinifloatFormat {
  unsigned Bits;         ///< encoding width: 4, 6 or 8 (the low bits of a byte)
  unsigned ExponentBits; ///< 2 to 8
  unsigned MantissaBits; ///< 0 to 3
  int Bias;
  bool Signed;      ///< all but ue8m0
  bool HasInfinity; ///< only f8e5m2 (0x7C)
  bool HasNaN;      ///< f8e4m3, f8e5m2 and ue8m0
  uint8_t MaxCode;  ///< the largest finite value (positive)
  uint8_t NaNCode;  ///< the NaN conversions give (positive), if HasNaN
};

/// The format of \p Kind, a minifloat kind; for f4e2m1x2 that of each half.
const MinifloatFormat &minifloatFormat(ScalarKind Kind);

/// The value of \p Code (its low Bits) as a double, exactly; a NaN code
/// gives a quiet NaN with the code's sign.
double decodeMinifloat(uint64_t Code, ScalarKind Kind);

/// \p Value converted as `cast` converts an f64 (docs/LangRef.md §5.3.1):
/// round to nearest even, saturating to the largest finite value (infinities
/// included); NaN to the format's NaN with its sign, or to +max where there
/// is none; ue8m0 rounds up to a power of two, and everything <= 0 is 0x00.
/// For f4e2m1x2 it converts one half.
uint8_t encodeMinifloat(double Value, ScalarKind Kind);

} // namespace kiln

#endif // KILN_IR_MINIFLOAT_H
