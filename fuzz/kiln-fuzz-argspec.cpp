//===- kiln-fuzz-argspec.cpp - Fuzz kiln-run's argument specs -------------===//
//
// kiln-fuzz-argspec: the text forms of tools/support/ArgSpec.h (docs/Tools.md
// §3.2, §3.3) on any text. The first line names a parameter type: one that
// parseTypeText reads, else one of a handful picked by the line's length.
// The rest is tried as
//
//   - a value of that type (parseValueText): when it reads, the value printed
//     (formatElement) reads back to the same bytes;
//   - a buffer spec (parseBufferSpec): when it reads and the buffer is at
//     most 1 MiB (never file=, which would read the machine's files), it is
//     made (createBuffer) and holds what the spec says; one too large for
//     any host is refused without being allocated;
//   - a cube count (parseCubeCount): when it reads, "X,Y,Z" reads back the
//     same;
//   - NAME=SPEC lines binding the parameters of a small kernel
//     (bindArguments), under the same size rule.
//
// A broken promise aborts with "kiln fuzz finding: ...". Seeds: the argument
// specs of docs/Tools.md (fuzz/corpus/kiln-fuzz-argspec); dictionary:
// fuzz/argspec.dict. Run it with utils/fuzz.sh kiln-fuzz-argspec SECONDS.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "support/ArgSpec.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace kiln;
using kiln::fuzz::finding;

namespace {

/// The most bytes a buffer the target makes may have.
constexpr uint64_t MaxBufferBytes = uint64_t(1) << 20;

const Type Handful[] = {
    Type::scalar(ScalarKind::F32),  Type::scalar(ScalarKind::I32),
    Type::scalar(ScalarKind::U8),   Type::scalar(ScalarKind::Bool),
    Type::scalar(ScalarKind::F16),  Type::scalar(ScalarKind::BF16),
    Type::scalar(ScalarKind::F64),  Type::scalar(ScalarKind::U64),
    Type::scalar(ScalarKind::I64),  Type::line(ScalarKind::F32, 4),
    Type::line(ScalarKind::I16, 3), Type::line(ScalarKind::BF16, 2),
    Type::line(ScalarKind::U8, 16), Type::line(ScalarKind::Bool, 8),
};

/// The text of one element as a value spec: formatElement separates the
/// lanes of a line with spaces, a value spec with commas.
std::string asValueSpec(const void *Element, Type Ty) {
  std::string S = formatElement(Element, Ty);
  if (Ty.isLine())
    std::replace(S.begin(), S.end(), ' ', ',');
  return S;
}

void checkElementReadsBack(const uint8_t *Element, Type Ty,
                           const llvm::Twine &Where) {
  std::string Text = asValueSpec(Element, Ty);
  llvm::Expected<std::vector<uint8_t>> Back = parseValueText(Text, Ty);
  if (!Back)
    finding(Where + ": the element printed as '" + Text + "' (" + Ty.str() +
            ") does not read back: " + llvm::toString(Back.takeError()));
  std::vector<uint8_t> Want(Element, Element + Ty.storeSize());
  if (Ty.isBool())
    for (uint8_t &B : Want)
      B = B != 0;
  if (*Back != Want)
    finding(Where + ": the element printed as '" + Text + "' (" + Ty.str() +
            ") reads back to other bytes");
}

/// The bytes of \p Count elements of \p Ty, or none past 2^64.
std::optional<uint64_t> bufferBytes(uint64_t Count, Type Ty) {
  uint64_t Elem = Ty.storeSize();
  if (Count != 0 && Elem > UINT64_MAX / Count)
    return std::nullopt;
  return Count * Elem;
}

void fuzzValue(llvm::StringRef Text, Type Ty) {
  llvm::Expected<std::vector<uint8_t>> V = parseValueText(Text, Ty);
  if (!V) {
    llvm::consumeError(V.takeError());
    return;
  }
  if (V->size() != Ty.storeSize())
    finding("parseValueText gave " + llvm::Twine(V->size()) + " bytes for " +
            Ty.str());
  checkElementReadsBack(V->data(), Ty, "value '" + Text + "'");
}

void fuzzBuffer(llvm::StringRef Text) {
  bool LooksLikeOne = isBufferSpecText(Text);
  llvm::Expected<BufferSpec> S = parseBufferSpec(Text);
  if (!S) {
    llvm::consumeError(S.takeError());
    return;
  }
  if (!LooksLikeOne)
    finding("parseBufferSpec reads '" + Text +
            "', which isBufferSpecText does not take for a buffer");
  if (S->Init == BufferSpec::InitKind::File)
    return;
  std::optional<uint64_t> Bytes = bufferBytes(S->Count, S->ElementType);
  bool Hopeless = !Bytes || *Bytes > (uint64_t(1) << 62);
  if (!Hopeless && *Bytes > MaxBufferBytes)
    return;
  llvm::Expected<HostBuffer> B = createBuffer(*S);
  if (Hopeless) {
    if (B)
      finding("a buffer of " + llvm::Twine(S->Count) + " elements of " +
              S->ElementType.str() + " was made");
    llvm::consumeError(B.takeError());
    return;
  }
  if (!B)
    finding("the buffer '" + Text +
            "' is not made: " + llvm::toString(B.takeError()));
  Type Ty = S->ElementType;
  if (B->count() != S->Count || B->elementType() != Ty)
    finding("the buffer '" + Text + "' has the wrong shape");
  const uint8_t *P = B->as<uint8_t>();
  unsigned Size = Ty.storeSize();
  std::vector<uint8_t> Fill;
  if (S->Init == BufferSpec::InitKind::Fill) {
    llvm::Expected<std::vector<uint8_t>> V = parseValueText(S->Operand, Ty);
    if (!V)
      finding("the fill value of '" + Text +
              "' no longer reads: " + llvm::toString(V.takeError()));
    Fill = std::move(*V);
  }
  // At most a few thousand elements are looked at.
  for (uint64_t I = 0; I < S->Count && I < 4096; ++I) {
    const uint8_t *E = P + I * Size;
    switch (S->Init) {
    case BufferSpec::InitKind::Zeros:
      for (unsigned J = 0; J < Size; ++J)
        if (E[J])
          finding("the buffer '" + Text + "' is not all zeros");
      break;
    case BufferSpec::InitKind::Fill:
      if (std::memcmp(E, Fill.data(), Size) != 0)
        finding("element " + llvm::Twine(I) + " of the buffer '" + Text +
                "' is not the fill value");
      break;
    case BufferSpec::InitKind::Iota:
      checkElementReadsBack(E, Ty, "iota buffer '" + Text + "'");
      break;
    case BufferSpec::InitKind::File:
      break;
    }
  }
}

void fuzzCubeCount(llvm::StringRef Text) {
  llvm::Expected<std::array<uint32_t, 3>> C = parseCubeCount(Text);
  if (!C) {
    llvm::consumeError(C.takeError());
    return;
  }
  std::string Again = std::to_string((*C)[0]) + "," + std::to_string((*C)[1]) +
                      "," + std::to_string((*C)[2]);
  llvm::Expected<std::array<uint32_t, 3>> D = parseCubeCount(Again);
  if (!D)
    finding("the cube count '" + Again + "' (from '" + Text +
            "') does not read: " + llvm::toString(D.takeError()));
  if (*D != *C)
    finding("the cube count '" + Again + "' reads as another");
}

void fuzzBind(llvm::StringRef Lines, Type Ty) {
  std::vector<ParamMetadata> Params(4);
  Params[0].Name = "a";
  Params[0].IsBuffer = true;
  Params[0].Ty = Ty;
  Params[1].Name = "n";
  Params[1].Ty = Type::scalar(ScalarKind::U32);
  Params[2].Name = "x";
  Params[2].Ty = Ty;
  Params[3].Name = "b";
  Params[3].IsBuffer = true;
  Params[3].Ty = Type::scalar(ScalarKind::F32);
  Params[3].Access = AccessKind::Write;

  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Lines.split(Parts, '\n', -1, /*KeepEmpty=*/false);
  std::vector<std::string> Specs;
  for (llvm::StringRef P : Parts) {
    // Never a file, never a large buffer (the size rule of fuzzBuffer).
    if (P.contains("file="))
      return;
    llvm::StringRef Spec = P.split('=').second;
    if (isBufferSpecText(Spec)) {
      llvm::Expected<BufferSpec> S = parseBufferSpec(Spec);
      if (S) {
        std::optional<uint64_t> Bytes = bufferBytes(S->Count, S->ElementType);
        if (!Bytes || *Bytes > MaxBufferBytes)
          return;
      } else {
        llvm::consumeError(S.takeError());
      }
    }
    Specs.push_back(P.str());
  }
  llvm::Expected<LaunchInputs> In = bindArguments(Params, Specs);
  if (!In) {
    std::string Why = llvm::toString(In.takeError());
    if (Why.empty())
      finding("bindArguments failed without a message");
    return;
  }
  if (In->Bindings.size() != Params.size() ||
      In->Buffers.size() != Params.size())
    finding("bindArguments bound " + llvm::Twine(In->Bindings.size()) + " of " +
            llvm::Twine(Params.size()) + " parameters");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fuzz::abortOnLLVMFatalErrors();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef All(reinterpret_cast<const char *>(Data), Size);
  auto [TypeLine, Rest] = All.split('\n');
  Type Ty = Handful[TypeLine.size() % std::size(Handful)];
  llvm::Expected<Type> Named = parseTypeText(TypeLine);
  if (Named) {
    Ty = *Named;
    llvm::Expected<Type> Again = parseTypeText(Ty.str());
    if (!Again || *Again != Ty)
      finding("the type '" + Ty.str() + "' (from '" + TypeLine +
              "') does not read back");
  } else {
    llvm::consumeError(Named.takeError());
  }
  fuzzValue(Rest, Ty);
  fuzzBuffer(Rest);
  fuzzCubeCount(Rest);
  llvm::Expected<std::pair<std::string, std::string>> NV =
      splitNameValue(Rest, "arg");
  if (!NV)
    llvm::consumeError(NV.takeError());
  fuzzBind(Rest, Ty);
  return 0;
}
