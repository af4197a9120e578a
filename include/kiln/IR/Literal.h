//===- Literal.h - Text of scalar literals ----------------------*- C++ -*-===//
//
// The one place that converts literal text to bit patterns and back, shared
// by the parser, the printer and tools that read scalars from the command
// line (kiln-run's scalar SPEC).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_LITERAL_H
#define KILN_IR_LITERAL_H

#include "kiln/IR/CaseLabel.h"
#include "kiln/IR/Type.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace kiln {

/// Longest literal text accepted, in characters.
constexpr size_t MaxLiteralLength = 1024;

/// The bit pattern of \p Text read as a scalar of \p Kind, zero-extended to
/// 64 bits (see Literal in Operation.h). Accepted text:
/// - bool: `true`, `false`;
/// - integers: decimal with an optional sign, or `0x` hex (optionally
///   signed) giving the value, never a bit pattern; out of range is an error;
/// - floats: decimal (`1`, `1.5`, `-0.0`, `2.5e-3`), correctly rounded to
///   nearest-even (so `1e60` gives `inf` in f32), `inf`, `-inf`, `nan`,
///   `-nan` (the canonical quiet NaN, resp. with the sign set), or `0x` hex
///   giving the raw bit pattern, which must fit the width.
/// Errors are plain messages (lower case, no location); callers add one.
llvm::Expected<uint64_t> parseLiteral(llvm::StringRef Text, ScalarKind Kind);

/// The canonical text of \p Bits as a \p Kind, which parseLiteral reads back
/// to the same bits: integers in decimal, bools `true`/`false`, floats as the
/// shortest decimal that rounds back (always with a '.' or an exponent),
/// `inf`, `-inf`, `nan` for the canonical quiet NaN and a `0x` bit pattern of
/// width/4 hex digits for every other NaN. Bits above the width are ignored.
std::string printLiteral(uint64_t Bits, ScalarKind Kind);

/// The shortest `%.Ng` text (N from 1 to 17) of the finite float \p Bits as a
/// \p Kind that parseLiteral reads back to the same bits, as printf writes
/// it: "10", "0.1", "1e+10", "0.33333334". "" for an infinity or a NaN.
/// printLiteral and kiln-run's output both start from it.
std::string shortestFloatText(uint64_t Bits, ScalarKind Kind);

/// A switch case label: an integer from -2^63 to 2^64 - 1, decimal or `0x`
/// hex.
llvm::Expected<CaseLabel> parseCaseValue(llvm::StringRef Text);

} // namespace kiln

#endif // KILN_IR_LITERAL_H
