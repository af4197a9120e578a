//===- Literal.cpp - Text of scalar literals -------------------------------===//

#include "kiln/IR/Literal.h"
#include "kiln/IR/Minifloat.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace kiln;
using llvm::APFloat;

static llvm::Error literalError(const llvm::Twine &Message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Message);
}

static bool isDigit(char C) { return C >= '0' && C <= '9'; }

/// Reads `[+-]?(digits|0x hexdigits)` into a sign and a magnitude; false when
/// the text is not an integer or the magnitude does not fit in 64 bits
/// (\p Overflow tells which).
static bool readInteger(llvm::StringRef Text, bool &Negative, uint64_t &Mag,
                        bool &Overflow) {
  Negative = false;
  Overflow = false;
  Mag = 0;
  if (Text.consume_front("-"))
    Negative = true;
  else
    Text.consume_front("+");
  unsigned Radix = 10;
  if (Text.size() > 2 && Text[0] == '0' && (Text[1] == 'x' || Text[1] == 'X')) {
    Radix = 16;
    Text = Text.drop_front(2);
  }
  if (Text.empty())
    return false;
  for (char C : Text) {
    int D = Radix == 16 ? static_cast<int>(llvm::hexDigitValue(C))
                       : (isDigit(C) ? C - '0' : -1);
    if (D < 0)
      return false;
    if (Mag > (~uint64_t(0) - uint64_t(D)) / Radix) {
      Overflow = true;
      return false;
    }
    Mag = Mag * Radix + uint64_t(D);
  }
  return true;
}

static uint64_t widthMask(unsigned Bits) {
  return Bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << Bits) - 1;
}

static const llvm::fltSemantics &semanticsOf(ScalarKind Kind) {
  switch (Kind) {
  case ScalarKind::F16:
    return APFloat::IEEEhalf();
  case ScalarKind::BF16:
    return APFloat::BFloat();
  case ScalarKind::F32:
    return APFloat::IEEEsingle();
  default:
    return APFloat::IEEEdouble();
  }
}

/// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`
static bool isDecimalFloat(llvm::StringRef T) {
  size_t I = 0, N = T.size();
  if (I < N && (T[I] == '+' || T[I] == '-'))
    ++I;
  size_t Digits = 0;
  while (I < N && isDigit(T[I]))
    ++I, ++Digits;
  if (I < N && T[I] == '.') {
    ++I;
    while (I < N && isDigit(T[I]))
      ++I, ++Digits;
  }
  if (Digits == 0)
    return false;
  if (I < N && (T[I] == 'e' || T[I] == 'E')) {
    ++I;
    if (I < N && (T[I] == '+' || T[I] == '-'))
      ++I;
    size_t ExpDigits = 0;
    while (I < N && isDigit(T[I]))
      ++I, ++ExpDigits;
    if (ExpDigits == 0)
      return false;
  }
  return I == N;
}

static llvm::Expected<uint64_t> parseFloat(llvm::StringRef Text,
                                           ScalarKind Kind) {
  const llvm::fltSemantics &Sem = semanticsOf(Kind);
  unsigned Bits = bitWidth(Kind);
  llvm::StringRef Name = scalarName(Kind);
  llvm::StringRef Body = Text;
  bool Negative = Body.consume_front("-");
  if (!Negative)
    Body.consume_front("+");
  if (Body == "inf" || Body == "nan") {
    APFloat F = Body == "inf" ? APFloat::getInf(Sem, Negative)
                              : APFloat::getQNaN(Sem, Negative);
    return F.bitcastToAPInt().getZExtValue();
  }
  if (Body.size() > 2 && Body[0] == '0' && (Body[1] == 'x' || Body[1] == 'X')) {
    if (Negative || Text[0] == '+')
      return literalError("a hex float literal is a bit pattern and takes no "
                          "sign: '" + Text + "'");
    bool Neg, Overflow;
    uint64_t Mag;
    if (!readInteger(Body, Neg, Mag, Overflow) && !Overflow)
      return literalError("invalid hex literal '" + Text + "'");
    if (Overflow || (Mag & ~widthMask(Bits)))
      return literalError("hex literal '" + Text + "' does not fit in " +
                          llvm::Twine(Bits) + " bits of '" + Name + "'");
    return Mag;
  }
  if (!isDecimalFloat(Text))
    return literalError("invalid " + Name + " literal '" + Text + "'");
  APFloat F(Sem);
  auto Status = F.convertFromString(Text, APFloat::rmNearestTiesToEven);
  if (!Status) {
    llvm::consumeError(Status.takeError());
    return literalError("invalid " + Name + " literal '" + Text + "'");
  }
  return F.bitcastToAPInt().getZExtValue();
}

/// A minifloat literal (docs/LangRef.md §4.5): a decimal is converted as
/// `cast` converts its exact value; `nan`/`inf` where the format has them;
/// `0x` hex is the code. f4e2m1x2 takes only hex (it holds two values).
static llvm::Expected<uint64_t> parseMinifloat(llvm::StringRef Text,
                                               ScalarKind Kind) {
  const MinifloatFormat &F = minifloatFormat(Kind);
  unsigned Bits = Kind == ScalarKind::F4E2M1X2 ? 8 : F.Bits;
  llvm::StringRef Name = scalarName(Kind);
  llvm::StringRef Body = Text;
  bool Negative = Body.consume_front("-");
  bool Signed = Negative || Body.consume_front("+");
  if (Body.size() > 2 && Body[0] == '0' && (Body[1] == 'x' || Body[1] == 'X')) {
    if (Signed)
      return literalError("a hex " + Name +
                          " literal is a bit pattern and takes no sign: '" +
                          Text + "'");
    bool Neg, Overflow;
    uint64_t Mag;
    if (!readInteger(Body, Neg, Mag, Overflow) && !Overflow)
      return literalError("invalid hex literal '" + Text + "'");
    if (Overflow || (Mag & ~widthMask(Bits)))
      return literalError("hex literal '" + Text + "' does not fit in " +
                          llvm::Twine(Bits) + " bits of '" + Name + "'");
    return Mag;
  }
  if (Kind == ScalarKind::F4E2M1X2)
    return literalError("a f4e2m1x2 literal is the byte in hex (two f4e2m1 "
                        "codes, element 0 in the low nibble), found '" +
                        Text + "'");
  uint64_t SignBit = F.Signed && Negative ? uint64_t(1) << (F.Bits - 1) : 0;
  if (Body == "nan") {
    if (!F.HasNaN)
      return literalError("'" + Name + "' has no NaN");
    if (Negative && !F.Signed)
      return literalError("'" + Name + "' is unsigned: '" + Text + "'");
    return F.NaNCode | SignBit;
  }
  if (Body == "inf") {
    if (!F.HasInfinity)
      return literalError("'" + Name + "' has no infinity");
    return 0x7C | SignBit;
  }
  if (!isDecimalFloat(Text))
    return literalError("invalid " + Name + " literal '" + Text + "'");
  // Read toward zero and set the lowest bit when inexact: a sticky bit far
  // below any minifloat's rounding position, so that rounding the double
  // rounds the exact decimal.
  APFloat D(APFloat::IEEEdouble());
  auto Status = D.convertFromString(Text, APFloat::rmTowardZero);
  if (!Status) {
    llvm::consumeError(Status.takeError());
    return literalError("invalid " + Name + " literal '" + Text + "'");
  }
  uint64_t DBits = D.bitcastToAPInt().getZExtValue();
  if (*Status & APFloat::opInexact)
    DBits |= 1;
  double Value;
  std::memcpy(&Value, &DBits, sizeof(Value));
  return encodeMinifloat(Value, Kind);
}

llvm::Expected<uint64_t> kiln::parseLiteral(llvm::StringRef Text,
                                            ScalarKind Kind) {
  llvm::StringRef Name = scalarName(Kind);
  if (Text.empty())
    return literalError("empty " + Name + " literal");
  if (Text.size() > MaxLiteralLength)
    return literalError("literal longer than " +
                        llvm::Twine(MaxLiteralLength) + " characters");
  if (Kind == ScalarKind::Bool) {
    if (Text == "true")
      return 1;
    if (Text == "false")
      return 0;
    return literalError("invalid bool literal '" + Text +
                        "': expected true or false");
  }
  if (isFloat(Kind))
    return parseFloat(Text, Kind);
  if (isMinifloat(Kind))
    return parseMinifloat(Text, Kind);

  unsigned Bits = bitWidth(Kind);
  bool Negative, Overflow;
  uint64_t Mag;
  if (!readInteger(Text, Negative, Mag, Overflow)) {
    if (Overflow)
      return literalError("integer literal '" + Text + "' out of range for '" +
                          Name + "'");
    return literalError("invalid " + Name + " literal '" + Text + "'");
  }
  bool InRange;
  if (isSigned(Kind)) {
    uint64_t Limit = uint64_t(1) << (Bits - 1); // |INT_MIN|
    InRange = Negative ? Mag <= Limit : Mag < Limit;
  } else {
    InRange = Negative ? Mag == 0 : Mag <= widthMask(Bits);
  }
  if (!InRange)
    return literalError("integer literal '" + Text + "' out of range for '" +
                        Name + "'");
  uint64_t Value = Negative ? uint64_t(0) - Mag : Mag;
  return Value & widthMask(Bits);
}

llvm::Expected<CaseLabel> kiln::parseCaseValue(llvm::StringRef Text) {
  if (Text.size() > MaxLiteralLength)
    return literalError("case value longer than " +
                        llvm::Twine(MaxLiteralLength) + " characters");
  // Any value of i64 or u64: -2^63 up to 2^64 - 1.
  bool Negative, Overflow;
  uint64_t Mag;
  bool Valid = readInteger(Text, Negative, Mag, Overflow) &&
               (!Negative || Mag <= (uint64_t(1) << 63));
  if (!Valid)
    return literalError("invalid case value '" + Text +
                        "': expected an integer from -2^63 to 2^64-1");
  if (Negative)
    return CaseLabel(static_cast<int64_t>(uint64_t(0) - Mag));
  return CaseLabel::fromUnsigned(Mag);
}

/// shortestFloatText for a minifloat: the shortest decimal that is the
/// value's nearest double and reads back as the same code. ue8m0 rounds up,
/// so a decimal printed a little above a power of two would read back as the
/// next one: the digits cut toward zero are tried too.
static std::string shortestMinifloatText(uint64_t Bits, ScalarKind Kind) {
  const MinifloatFormat &F = minifloatFormat(Kind);
  Bits &= widthMask(F.Bits);
  double Value = decodeMinifloat(Bits, Kind);
  if (!std::isfinite(Value))
    return std::string();
  auto ReadsBack = [&](const char *Text) {
    if (std::strtod(Text, nullptr) != Value)
      return false;
    llvm::Expected<uint64_t> Back = parseMinifloat(Text, Kind);
    if (!Back) {
      llvm::consumeError(Back.takeError());
      return false;
    }
    return *Back == Bits;
  };
  char Exact[64];
  std::snprintf(Exact, sizeof(Exact), "%.40e", Value); // "-d.ddd...e-39"
  llvm::StringRef ExactText(Exact);
  size_t E = ExactText.find('e');
  char Buffer[128];
  for (int Precision = 1; Precision <= 40; ++Precision) {
    std::snprintf(Buffer, sizeof(Buffer), "%.*g", Precision, Value);
    if (ReadsBack(Buffer))
      return Buffer;
    // The first Precision digits of the exact value, cut toward zero.
    size_t Keep = (Value < 0 ? 1 : 0) + 1 + (Precision > 1 ? Precision : 0);
    std::string Cut = (ExactText.take_front(Keep) + ExactText.substr(E)).str();
    if (ReadsBack(Cut.c_str()))
      return Cut;
  }
  return Buffer;
}

std::string kiln::shortestFloatText(uint64_t Bits, ScalarKind Kind) {
  if (isMinifloat(Kind))
    return shortestMinifloatText(Bits, Kind);
  unsigned Width = bitWidth(Kind);
  Bits &= widthMask(Width);
  APFloat F(semanticsOf(Kind), llvm::APInt(Width, Bits));
  if (!F.isFinite())
    return std::string();
  bool LosesInfo = false;
  APFloat D = F;
  // Exact: every float kind fits in a double.
  D.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &LosesInfo);
  double Value = D.convertToDouble();
  char Buffer[400];
  for (int Precision = 1; Precision <= 17; ++Precision) {
    std::snprintf(Buffer, sizeof(Buffer), "%.*g", Precision, Value);
    llvm::Expected<uint64_t> Back = parseFloat(Buffer, Kind);
    if (Back && *Back == Bits)
      break;
    if (!Back)
      llvm::consumeError(Back.takeError());
  }
  return Buffer;
}

/// printLiteral for a minifloat: the canonical text of §4.5.
static std::string printMinifloat(uint64_t Bits, ScalarKind Kind) {
  const MinifloatFormat &F = minifloatFormat(Kind);
  unsigned Width = Kind == ScalarKind::F4E2M1X2 ? 8 : F.Bits;
  Bits &= widthMask(Width);
  std::string S;
  llvm::raw_string_ostream OS(S);
  double Value = decodeMinifloat(Bits, Kind);
  if (Kind == ScalarKind::F4E2M1X2 || (std::isnan(Value) && Bits != F.NaNCode)) {
    OS << llvm::format_hex(Bits, 2 + (Width + 3) / 4);
    return S;
  }
  if (std::isnan(Value))
    return "nan";
  if (std::isinf(Value))
    return Value < 0 ? "-inf" : "inf";
  S = shortestMinifloatText(Bits, Kind);
  if (S.find_first_of(".e") == std::string::npos)
    S += ".0";
  return S;
}

std::string kiln::printLiteral(uint64_t Bits, ScalarKind Kind) {
  unsigned Width = bitWidth(Kind);
  Bits &= widthMask(Width);
  if (Kind == ScalarKind::Bool)
    return Bits ? "true" : "false";
  if (isInteger(Kind)) {
    if (isSigned(Kind) && Width < 64 && (Bits >> (Width - 1)) & 1)
      Bits |= ~widthMask(Width); // sign-extend
    return isSigned(Kind) ? std::to_string(static_cast<int64_t>(Bits))
                          : std::to_string(Bits);
  }
  if (isMinifloat(Kind))
    return printMinifloat(Bits, Kind);
  const llvm::fltSemantics &Sem = semanticsOf(Kind);
  APFloat F(Sem, llvm::APInt(Width, Bits));
  if (F.isInfinity())
    return F.isNegative() ? "-inf" : "inf";
  if (F.isNaN()) {
    if (APFloat::getQNaN(Sem).bitcastToAPInt().getZExtValue() == Bits)
      return "nan";
    std::string S;
    llvm::raw_string_ostream OS(S);
    OS << llvm::format_hex(Bits, 2 + Width / 4);
    return S;
  }
  std::string S = shortestFloatText(Bits, Kind);
  if (S.find_first_of(".e") == std::string::npos)
    S += ".0";
  return S;
}
