//===- ArgSpec.cpp - Launch arguments written as text ---------------------===//

#include "support/ArgSpec.h"
#include "kiln/IR/Literal.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

using namespace kiln;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

static Error specError(const Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

Expected<Type> kiln::parseTypeText(StringRef Text) {
  StringRef T = Text.trim();
  if (T.consume_front("vec")) {
    T = T.ltrim();
    if (!T.consume_front("<") || !T.consume_back(">"))
      return specError("bad type '" + Text + "': expected vec<N x T>");
    auto [LanesText, ElemText] = T.split('x');
    uint64_t Lanes;
    if (LanesText.trim().getAsInteger(10, Lanes) ||
        !Type::isValidLineWidth(Lanes))
      return specError("bad type '" + Text +
                       "': a line has 1, 2, 3, 4, 8 or 16 lanes");
    auto Kind = parseScalarName(ElemText.trim());
    if (!Kind)
      return specError("bad type '" + Text + "': unknown element type '" +
                       ElemText.trim() + "'");
    return Type::line(*Kind, static_cast<unsigned>(Lanes));
  }
  auto Kind = parseScalarName(T);
  if (!Kind)
    return specError("unknown type '" + Text + "'");
  return Type::scalar(*Kind);
}

bool kiln::isBufferSpecText(StringRef Spec) {
  return Spec.contains('[') && Spec.contains(']') &&
         Spec.find('[') < Spec.find(']') && !Spec.trim().starts_with("[");
}

Expected<std::vector<uint8_t>> kiln::parseValueText(StringRef Text, Type Ty) {
  StringRef T = Text.trim();
  llvm::SmallVector<StringRef, 16> Parts;
  if (Ty.isLine()) {
    if (T.consume_front("[") && !T.consume_back("]"))
      return specError("bad " + Ty.str() + " value '" + Text +
                       "': missing ']'");
    T.split(Parts, ',');
    if (Parts.size() != 1 && Parts.size() != Ty.lanes())
      return specError("bad " + Ty.str() + " value '" + Text +
                       "': " + Twine(Parts.size()) +
                       " lanes given, expected 1 or " + Twine(Ty.lanes()));
  } else {
    Parts.push_back(T);
  }
  unsigned Size = byteSize(Ty.elementKind());
  std::vector<uint8_t> Bytes(Ty.storeSize());
  for (unsigned L = 0; L < Ty.lanes(); ++L) {
    StringRef Part = Parts[Parts.size() == 1 ? 0 : L].trim();
    auto Bits = parseLiteral(Part, Ty.elementKind());
    if (!Bits) {
      if (Parts.size() == 1)
        return Bits.takeError(); // the message quotes the text already
      return specError("lane " + Twine(L) + ": " + toString(Bits.takeError()));
    }
    for (unsigned B = 0; B < Size; ++B)
      Bytes[L * Size + B] = static_cast<uint8_t>(*Bits >> (8 * B));
  }
  return Bytes;
}

Expected<BufferSpec> kiln::parseBufferSpec(StringRef Spec) {
  size_t Open = Spec.find('[');
  size_t Close = Spec.find(']');
  if (Open == StringRef::npos || Close == StringRef::npos || Close < Open)
    return specError("bad buffer '" + Spec +
                     "': expected TYPE[COUNT]:zeros|fill=VALUE|iota|file=PATH");
  BufferSpec S;
  auto Ty = parseTypeText(Spec.take_front(Open));
  if (!Ty)
    return Ty.takeError();
  S.ElementType = *Ty;
  StringRef CountText = Spec.slice(Open + 1, Close).trim();
  if (CountText.empty() || !llvm::all_of(CountText, llvm::isDigit) ||
      CountText.getAsInteger(10, S.Count))
    return specError("bad buffer '" + Spec + "': element count '" + CountText +
                     "' is not a number below 2^64");
  StringRef Rest = Spec.drop_front(Close + 1);
  if (!Rest.consume_front(":"))
    return specError("bad buffer '" + Spec + "': expected ':' after ']'");
  if (Rest == "zeros") {
    S.Init = BufferSpec::InitKind::Zeros;
  } else if (Rest == "iota") {
    S.Init = BufferSpec::InitKind::Iota;
  } else if (Rest.consume_front("fill=")) {
    S.Init = BufferSpec::InitKind::Fill;
    if (auto V = parseValueText(Rest, S.ElementType); !V)
      return specError("bad buffer '" + Spec + "': " + toString(V.takeError()));
    S.Operand = Rest.str();
  } else if (Rest.consume_front("file=")) {
    S.Init = BufferSpec::InitKind::File;
    if (Rest.empty())
      return specError("bad buffer '" + Spec + "': empty file name");
    S.Operand = Rest.str();
  } else {
    return specError("bad buffer '" + Spec + "': unknown contents '" + Rest +
                     "' (expected zeros, fill=VALUE, iota or file=PATH)");
  }
  return S;
}

/// Stores the number \p N converted to \p Kind at \p Out.
static void storeConverted(uint64_t N, ScalarKind Kind, uint8_t *Out) {
  uint64_t Bits;
  switch (Kind) {
  case ScalarKind::Bool:
    Bits = N != 0;
    break;
  case ScalarKind::F32: {
    float F = static_cast<float>(N);
    uint32_t U;
    std::memcpy(&U, &F, 4);
    Bits = U;
    break;
  }
  case ScalarKind::F64: {
    double D = static_cast<double>(N);
    std::memcpy(&Bits, &D, 8);
    break;
  }
  case ScalarKind::F16:
  case ScalarKind::BF16: {
    llvm::APFloat F(Kind == ScalarKind::F16 ? llvm::APFloat::IEEEhalf()
                                            : llvm::APFloat::BFloat());
    F.convertFromAPInt(llvm::APInt(64, N), /*IsSigned=*/false,
                       llvm::APFloat::rmNearestTiesToEven);
    Bits = F.bitcastToAPInt().getZExtValue();
    break;
  }
  default:
    Bits = N; // integers wrap: the low bytes are stored
    break;
  }
  for (unsigned B = 0; B < byteSize(Kind); ++B)
    Out[B] = static_cast<uint8_t>(Bits >> (8 * B));
}

Expected<Buffer> kiln::createBuffer(const BufferSpec &Spec) {
  Type Ty = Spec.ElementType;
  uint64_t Elem = Ty.storeSize();
  std::unique_ptr<llvm::MemoryBuffer> File;
  if (Spec.Init == BufferSpec::InitKind::File) {
    // Checked before allocating, so a wrong COUNT costs nothing.
    auto F = llvm::MemoryBuffer::getFile(Spec.Operand, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
    if (!F)
      return specError("cannot read '" + Spec.Operand +
                       "': " + F.getError().message());
    File = std::move(*F);
    uint64_t Want = Spec.Count * Elem;
    if (Spec.Count > UINT64_MAX / Elem || File->getBufferSize() != Want)
      return specError("file '" + Spec.Operand + "' has " +
                       Twine(File->getBufferSize()) + " bytes, expected " +
                       Twine(Spec.Count) + " elements of " + Ty.str() + " (" +
                       Twine(Spec.Count * Elem) + " bytes)");
  }
  auto B = Buffer::create(Ty, Spec.Count);
  if (!B)
    return B.takeError();
  uint8_t *Out = B->as<uint8_t>();
  switch (Spec.Init) {
  case BufferSpec::InitKind::Zeros:
    break;
  case BufferSpec::InitKind::File:
    std::memcpy(Out, File->getBufferStart(), File->getBufferSize());
    break;
  case BufferSpec::InitKind::Fill: {
    auto V = parseValueText(Spec.Operand, Ty);
    if (!V)
      return V.takeError();
    for (uint64_t I = 0; I < Spec.Count; ++I)
      std::memcpy(Out + I * Elem, V->data(), Elem);
    break;
  }
  case BufferSpec::InitKind::Iota: {
    unsigned Lanes = Ty.lanes();
    unsigned Size = byteSize(Ty.elementKind());
    for (uint64_t I = 0; I < Spec.Count * Lanes; ++I)
      storeConverted(I, Ty.elementKind(), Out + I * Size);
    break;
  }
  }
  return B;
}

/// The shortest text of a float that reads back to the same bits ("10",
/// "0.1", "0.33333334"); infinities and NaNs as printLiteral.
static std::string formatFloat(uint64_t Bits, ScalarKind Kind) {
  std::string S = shortestFloatText(Bits, Kind);
  if (S.empty())
    return printLiteral(Bits, Kind);
  // %g switches to an exponent as soon as the digits run out ("1e+01"):
  // write moderate magnitudes in fixed notation with as many digits.
  size_t E = S.find('e');
  if (E == std::string::npos)
    return S;
  int Exp = std::atoi(S.c_str() + E + 1);
  if (Exp < -5 || Exp >= 17)
    return S;
  int Digits = 0;
  for (size_t I = 0; I != E; ++I)
    Digits += S[I] >= '0' && S[I] <= '9';
  double V = std::strtod(S.c_str(), nullptr);
  char Fixed[400];
  std::snprintf(Fixed, sizeof(Fixed), "%.*f", std::max(0, Digits - 1 - Exp), V);
  llvm::Expected<uint64_t> Back = parseLiteral(Fixed, Kind);
  if (Back && *Back == Bits)
    return Fixed;
  if (!Back)
    llvm::consumeError(Back.takeError());
  return S;
}

std::string kiln::formatElement(const void *Element, Type Ty) {
  const uint8_t *P = static_cast<const uint8_t *>(Element);
  unsigned Size = byteSize(Ty.elementKind());
  std::string S;
  for (unsigned L = 0; L < Ty.lanes(); ++L) {
    uint64_t Bits = 0;
    for (unsigned B = 0; B < Size; ++B)
      Bits |= uint64_t(P[L * Size + B]) << (8 * B);
    if (L)
      S += ' ';
    // A bool byte other than 0 or 1 is still shown as what it means.
    if (Ty.elementKind() == ScalarKind::Bool)
      Bits = Bits != 0;
    S += isFloat(Ty.elementKind()) ? formatFloat(Bits, Ty.elementKind())
                                   : printLiteral(Bits, Ty.elementKind());
  }
  return S;
}

Expected<std::array<uint32_t, 3>> kiln::parseCubeCount(StringRef Text) {
  llvm::SmallVector<StringRef, 4> Parts;
  Text.split(Parts, ',');
  if (Parts.size() > 3)
    return specError("bad cube count '" + Text +
                     "': expected X[,Y[,Z]], at most three numbers");
  std::array<uint32_t, 3> Count = {1, 1, 1};
  for (size_t I = 0; I < Parts.size(); ++I) {
    StringRef P = Parts[I].trim();
    uint64_t V;
    if (P.empty() || !llvm::all_of(P, llvm::isDigit) || P.getAsInteger(10, V) ||
        V > UINT32_MAX)
      return specError("bad cube count '" + Text + "': '" + P +
                       "' is not a number in 0..4294967295");
    Count[I] = static_cast<uint32_t>(V);
  }
  return Count;
}

std::vector<ParamMetadata> kiln::paramsOf(const Kernel &K) {
  std::vector<ParamMetadata> Params;
  for (ValueId Id : K.Params) {
    const ValueInfo &V = K.value(Id);
    ParamMetadata P;
    P.Name = V.Name;
    P.IsBuffer = V.Kind == ValueKind::Buffer;
    P.Ty = V.Ty;
    P.Access = V.Access;
    Params.push_back(std::move(P));
  }
  return Params;
}

Expected<std::pair<std::string, std::string>>
kiln::splitNameValue(StringRef Text, StringRef Option) {
  auto [Name, Rest] = Text.split('=');
  Name = Name.trim();
  Name.consume_front("%");
  if (Name.empty() || Rest.data() == nullptr || !Text.contains('='))
    return specError("--" + Option + " '" + Text +
                     "': expected NAME=" + (Option == "arg" ? "SPEC" : "PATH"));
  return std::make_pair(Name.str(), Rest.str());
}

Expected<LaunchInputs>
kiln::bindArguments(llvm::ArrayRef<ParamMetadata> Params,
                    llvm::ArrayRef<std::string> NameSpecs) {
  std::vector<std::optional<std::string>> Specs(Params.size());
  for (const std::string &Text : NameSpecs) {
    auto NV = splitNameValue(Text, "arg");
    if (!NV)
      return NV.takeError();
    auto It = llvm::find_if(
        Params, [&](const ParamMetadata &P) { return P.Name == NV->first; });
    if (It == Params.end()) {
      std::string Known;
      for (const ParamMetadata &P : Params)
        Known += (Known.empty() ? "%" : ", %") + P.Name;
      return specError(
          "--arg " + NV->first + ": the kernel has no parameter %" + NV->first +
          " (parameters: " + (Known.empty() ? "none" : Known) + ")");
    }
    size_t I = It - Params.begin();
    if (Specs[I])
      return specError("--arg " + NV->first + ": parameter %" + NV->first +
                       " is given more than once");
    Specs[I] = NV->second;
  }
  LaunchInputs In;
  In.Buffers.resize(Params.size());
  for (size_t I = 0; I < Params.size(); ++I) {
    const ParamMetadata &P = Params[I];
    if (!Specs[I])
      return specError("missing --arg for parameter %" + P.Name + " (" +
                       (P.IsBuffer ? "a buffer of " + P.Ty.str()
                                   : "a value of type " + P.Ty.str()) +
                       ")");
    StringRef Spec = *Specs[I];
    auto Bad = [&](const Twine &Why) {
      return specError("--arg " + P.Name + ": " + Why);
    };
    if (P.IsBuffer) {
      if (!isBufferSpecText(Spec))
        return Bad("%" + P.Name + " is a buffer of " + P.Ty.str() +
                   ": expected " + P.Ty.str() +
                   "[COUNT]:zeros|fill=VALUE|iota|file=PATH, got '" + Spec +
                   "'");
      auto BS = parseBufferSpec(Spec);
      if (!BS)
        return Bad(toString(BS.takeError()));
      if (BS->ElementType != P.Ty)
        return Bad("%" + P.Name + " is a buffer of " + P.Ty.str() +
                   ", the buffer given holds " + BS->ElementType.str());
      auto B = createBuffer(*BS);
      if (!B)
        return Bad(toString(B.takeError()));
      In.Buffers[I] = std::move(*B);
      In.Bindings.push_back(ArgBinding::buffer(In.Buffers[I]));
    } else {
      if (isBufferSpecText(Spec))
        return Bad("%" + P.Name + " is a value of type " + P.Ty.str() +
                   ", not a buffer");
      auto V = parseValueText(Spec, P.Ty);
      if (!V)
        return Bad(toString(V.takeError()));
      In.Bindings.push_back(ArgBinding::value(P.Ty, V->data(), V->size()));
    }
  }
  return In;
}
