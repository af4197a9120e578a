//===- DebugFormat.cpp - The format strings of debug_print ----------------===//

#include "kiln/IR/DebugFormat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#include <cstdio>
#include <cstring>

using namespace kiln;

static std::optional<DebugConversionKind> kindOf(char C) {
  switch (C) {
  case 'd':
  case 'i':
    return DebugConversionKind::Signed;
  case 'u':
  case 'x':
  case 'X':
  case 'o':
    return DebugConversionKind::Unsigned;
  case 'c':
    return DebugConversionKind::Char;
  case 'f':
  case 'F':
  case 'e':
  case 'E':
  case 'g':
  case 'G':
  case 'a':
  case 'A':
    return DebugConversionKind::Float;
  default:
    return std::nullopt;
  }
}

static bool isFlag(char C) {
  return C == '-' || C == '+' || C == ' ' || C == '#' || C == '0';
}

std::optional<DebugFormatError>
kiln::parseDebugFormat(llvm::StringRef Format,
                       std::vector<DebugConversion> &Out) {
  Out.clear();
  auto Error = [](size_t At, const llvm::Twine &Msg) {
    return DebugFormatError{Msg.str(), At};
  };
  size_t I = 0, N = Format.size();
  while (I < N) {
    if (Format[I] == '\0')
      return Error(I, "the format holds a NUL byte");
    if (Format[I] != '%') {
      ++I;
      continue;
    }
    size_t Begin = I++;
    if (I < N && Format[I] == '%') {
      ++I;
      continue;
    }
    DebugConversion Conv;
    Conv.Begin = Begin;
    bool Alternate = false, ZeroPad = false, HasPrecision = false;
    while (I < N && isFlag(Format[I])) {
      Alternate |= Format[I] == '#';
      ZeroPad |= Format[I] == '0';
      ++I;
    }
    auto Number = [&](const char *What) -> std::optional<DebugFormatError> {
      if (I < N && Format[I] == '*')
        return Error(I, llvm::Twine("a '*' ") + What +
                            " is not supported: write the number");
      unsigned Value = 0;
      while (I < N && llvm::isDigit(Format[I])) {
        Value = Value * 10 + unsigned(Format[I] - '0');
        if (Value > MaxDebugFieldWidth)
          return Error(I, llvm::Twine("a ") + What + " above " +
                              llvm::Twine(MaxDebugFieldWidth));
        ++I;
      }
      return std::nullopt;
    };
    if (auto E = Number("field width"))
      return E;
    if (I < N && Format[I] == '.') {
      HasPrecision = true;
      ++I;
      if (auto E = Number("precision"))
        return E;
    }
    Conv.Spec = Format.slice(Begin, I).str();
    // Length modifiers are accepted and ignored: the operand's type says
    // how wide it is.
    if (I < N && (Format[I] == 'h' || Format[I] == 'l')) {
      char L = Format[I++];
      if (I < N && Format[I] == L)
        ++I;
    } else if (I < N && (Format[I] == 'j' || Format[I] == 'z' ||
                         Format[I] == 't' || Format[I] == 'L')) {
      ++I;
    }
    if (I >= N)
      return Error(Begin, "the format ends inside the conversion '" +
                              Format.substr(Begin) + "'");
    char C = Format[I];
    std::string Written = Format.slice(Begin, I + 1).str();
    if (C == 's')
      return Error(Begin, "'" + Written +
                              "' is not supported: debug_print prints scalar "
                              "values, and the IR has no strings");
    if (C == '%')
      return Error(Begin, "'" + Written +
                              "': write '%%' without flags, width or precision");
    std::optional<DebugConversionKind> Kind = kindOf(C);
    if (!Kind) {
      std::string Shown = llvm::isPrint(C)
                              ? std::string(1, C)
                              : "\\x" + llvm::utohexstr(uint8_t(C), true, 2);
      return Error(Begin, "unknown conversion character '" + Shown +
                              "': use d i u x X o c f F e E g G a A, or %% "
                              "for a '%'");
    }
    // What C leaves undefined is refused rather than left to the host's
    // printf.
    if (Alternate && (*Kind == DebugConversionKind::Signed ||
                      *Kind == DebugConversionKind::Char || C == 'u'))
      return Error(Begin, "the '#' flag does not apply to '%" +
                              llvm::Twine(C) + "' in '" + Written + "'");
    if (*Kind == DebugConversionKind::Char && (ZeroPad || HasPrecision))
      return Error(Begin, "'%c' takes no '0' flag and no precision, in '" +
                              Written + "'");
    Conv.Conversion = C;
    Conv.Kind = *Kind;
    Conv.End = ++I;
    Out.push_back(std::move(Conv));
  }
  return std::nullopt;
}

bool kiln::debugConversionTakes(DebugConversionKind Kind, Type Ty) {
  if (Ty.isLine())
    return false;
  if (Kind == DebugConversionKind::Float)
    return Ty.isFloat() && !Ty.isMinifloat();
  return Ty.isInteger() || Ty.isBool();
}

std::string kiln::formatDebugPrint(llvm::StringRef Format,
                                   llvm::ArrayRef<uint64_t> Args) {
  std::vector<DebugConversion> Convs;
  if (parseDebugFormat(Format, Convs))
    return Format.str(); // never from the compiled code: it was verified
  std::string Out;
  size_t At = 0, Next = 0;
  auto Text = [&](size_t End) {
    // The text between conversions, with %% as %.
    for (size_t I = At; I < End; ++I) {
      Out += Format[I];
      if (Format[I] == '%' && I + 1 < End && Format[I + 1] == '%')
        ++I;
    }
  };
  char Buf[2 * MaxDebugFieldWidth + 64];
  for (const DebugConversion &C : Convs) {
    Text(C.Begin);
    uint64_t Word = Next < Args.size() ? Args[Next] : 0;
    ++Next;
    std::string Spec = C.Spec;
    int Len = 0;
    switch (C.Kind) {
    case DebugConversionKind::Signed:
      Spec += "ll";
      Spec += C.Conversion;
      Len = std::snprintf(Buf, sizeof(Buf), Spec.c_str(),
                          static_cast<long long>(Word));
      break;
    case DebugConversionKind::Unsigned:
      Spec += "ll";
      Spec += C.Conversion;
      Len = std::snprintf(Buf, sizeof(Buf), Spec.c_str(),
                          static_cast<unsigned long long>(Word));
      break;
    case DebugConversionKind::Char:
      Spec += 'c';
      Len = std::snprintf(Buf, sizeof(Buf), Spec.c_str(),
                          static_cast<int>(Word & 0xff));
      break;
    case DebugConversionKind::Float: {
      double D;
      std::memcpy(&D, &Word, sizeof(D));
      Spec += C.Conversion;
      // %f of a large double with a wide precision is long: ask for the
      // size first.
      Len = std::snprintf(nullptr, 0, Spec.c_str(), D);
      if (Len >= 0 && size_t(Len) >= sizeof(Buf)) {
        std::string Big(size_t(Len) + 1, '\0');
        std::snprintf(Big.data(), Big.size(), Spec.c_str(), D);
        Big.resize(size_t(Len));
        Out += Big;
        At = C.End;
        continue;
      }
      Len = std::snprintf(Buf, sizeof(Buf), Spec.c_str(), D);
      break;
    }
    }
    if (Len > 0)
      Out.append(Buf, std::min(size_t(Len), sizeof(Buf) - 1));
    At = C.End;
  }
  Text(Format.size());
  return Out;
}

std::string kiln::quoteDebugFormat(llvm::StringRef Format) {
  std::string S = "\"";
  for (char C : Format) {
    switch (C) {
    case '\n':
      S += "\\n";
      break;
    case '\t':
      S += "\\t";
      break;
    case '\r':
      S += "\\r";
      break;
    case '"':
      S += "\\\"";
      break;
    case '\\':
      S += "\\\\";
      break;
    default:
      if (C >= 0x20 && C < 0x7f)
        S += C;
      else
        S += "\\x" + llvm::utohexstr(uint8_t(C), /*LowerCase=*/true, 2);
    }
  }
  return S + "\"";
}
