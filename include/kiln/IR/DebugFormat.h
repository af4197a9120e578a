//===- DebugFormat.h - The format strings of debug_print --------*- C++ -*-===//
//
// debug_print's format (docs/LangRef.md §14) is a printf format restricted
// to what a kernel's scalar values can fill: the verifier checks it against
// the operand types with parseDebugFormat, the lowering decides how each
// operand travels (DebugConversionKind), and the runtime formats the text
// with formatDebugPrint. One parser for all three, so they cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_DEBUGFORMAT_H
#define KILN_IR_DEBUGFORMAT_H

#include "kiln/IR/Type.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// How a conversion reads its operand.
enum class DebugConversionKind : uint8_t {
  Signed,   ///< %d %i: an integer or bool, as a signed number of its type
  Unsigned, ///< %u %x %X %o: an integer or bool, as an unsigned number
  Char,     ///< %c: an integer or bool; its low 8 bits are the byte printed
  Float,    ///< %f %F %e %E %g %G %a %A: a float, promoted to double
};

/// One conversion of a format (`%%` is text, not a conversion).
struct DebugConversion {
  size_t Begin = 0, End = 0; ///< its bytes in the format
  char Conversion = 'd';     ///< the conversion character
  DebugConversionKind Kind = DebugConversionKind::Signed;
  /// "%" and the flags, width and precision as written, without a length
  /// modifier: the runtime appends its own.
  std::string Spec;
};

/// The widest field width and precision a conversion may ask for.
constexpr unsigned MaxDebugFieldWidth = 512;
/// The most operands one debug_print takes.
constexpr unsigned MaxDebugPrintOperands = 32;

/// A problem of a format: what, and the byte of the format it is at.
struct DebugFormatError {
  std::string Message;
  size_t Offset = 0;
};

/// Parses \p Format into its conversions, in order. The whole grammar and
/// what each conversion accepts is docs/LangRef.md §14.
std::optional<DebugFormatError>
parseDebugFormat(llvm::StringRef Format, std::vector<DebugConversion> &Out);

/// Whether a conversion of \p Kind takes an operand of type \p Ty (a
/// scalar: integers and bool for the integer kinds, f16, bf16, f32 and f64
/// for Float).
bool debugConversionTakes(DebugConversionKind Kind, Type Ty);

/// The text of one debug_print of a valid \p Format: \p Args holds one
/// 64-bit word per conversion, as the compiled code passes it (integers
/// sign- or zero-extended by their kind from their type's width, floats as
/// the bits of a double). Missing words read as 0; extra ones are ignored.
std::string formatDebugPrint(llvm::StringRef Format,
                             llvm::ArrayRef<uint64_t> Args);

/// \p Format as a string literal of the text form: in double quotes, with
/// \n \t \r \" \\ and \xHH escapes for every byte that is not printable
/// ASCII (docs/LangRef.md §14).
std::string quoteDebugFormat(llvm::StringRef Format);

} // namespace kiln

#endif // KILN_IR_DEBUGFORMAT_H
