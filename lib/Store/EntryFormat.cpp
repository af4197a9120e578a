//===- EntryFormat.cpp - The bytes of one store entry --------------------===//

#include "kiln/Store/EntryFormat.h"
#include "kiln/Store/Dictionary.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstring>
#include <zstd.h>

using namespace llvm;
using namespace llvm::support::endian;

namespace kiln {

// Fixed header offsets (docs/Store.md).
namespace off {
enum : size_t {
  Magic = 0,
  Version = 8,
  HeaderSize = 12,
  KeyId = 16,
  KeyBuild = 24,
  Namespace = 32,
  IRHash = 40,
  Uncompressed = 48,
  Compressed = 56,
  Checksum = 64,
  KernelLen = 72,
  VariantLen = 76,
  FeaturesLen = 80,
  Flags = 84,
};
} // namespace off

static Error bad(const Twine &Why) {
  return createStringError(
      std::make_error_code(std::errc::illegal_byte_sequence), Why);
}

char MissingDictionaryError::ID = 0;

void MissingDictionaryError::log(raw_ostream &OS) const {
  OS << "needs zstd dictionary " << utohexstr(DictId, /*LowerCase=*/true, 8);
}

std::error_code MissingDictionaryError::convertToErrorCode() const {
  return std::make_error_code(std::errc::no_such_file_or_directory);
}

namespace {
/// One compression and one decompression context per thread, reused: the
/// dictionary paths would otherwise make one per entry.
struct ZstdContexts {
  ZSTD_CCtx *C = ZSTD_createCCtx();
  ZSTD_DCtx *D = ZSTD_createDCtx();
  ~ZstdContexts() {
    ZSTD_freeCCtx(C);
    ZSTD_freeDCtx(D);
  }
};
ZstdContexts &contexts() {
  thread_local ZstdContexts Ctx;
  return Ctx;
}

/// The "+feature" items of \p Features, in their order.
std::string requiredFeatures(StringRef Features) {
  SmallVector<StringRef, 64> Parts;
  Features.split(Parts, ',', -1, /*KeepEmpty=*/false);
  std::string Out;
  for (StringRef F : Parts) {
    if (!F.trim().starts_with("+"))
      continue;
    if (!Out.empty())
      Out += ',';
    Out += F.trim();
  }
  return Out;
}
} // namespace

std::vector<uint8_t> entryFrameContent(StringRef Features,
                                       ArrayRef<uint8_t> Payload) {
  std::string Required = requiredFeatures(Features);
  if (Required.empty())
    return std::vector<uint8_t>(Payload.begin(), Payload.end());
  std::vector<uint8_t> Out(4 + Required.size() + Payload.size());
  write32le(Out.data(), uint32_t(Required.size()));
  std::memcpy(Out.data() + 4, Required.data(), Required.size());
  if (!Payload.empty())
    std::memcpy(Out.data() + 4 + Required.size(), Payload.data(),
                Payload.size());
  return Out;
}

Expected<std::vector<uint8_t>> encodeEntry(const KernelCacheKey &Key,
                                           uint64_t NamespaceHash,
                                           const EntryInfo &InfoIn,
                                           ArrayRef<uint8_t> Payload,
                                           const EntryDictionary *Dict) {
  EntryInfo Info = InfoIn;
  Info.Features = requiredFeatures(InfoIn.Features);
  for (const std::string *S : {&Info.KernelId, &Info.Variant, &Info.Features})
    if (S->size() > EntryMaxStringSize)
      return bad("entry text of " + Twine(S->size()) + " bytes is too long");
  if (Payload.size() > EntryMaxPayloadSize)
    return bad("payload of " + Twine(Payload.size()) + " bytes is too large");
  // The feature list goes into the frame, where a dictionary (or the
  // payload's own copy of it) compresses it to a few bytes, rather than
  // into the header, where it was most of a small entry.
  uint32_t Flags = Dict ? EntryFlagDictionary : 0;
  std::vector<uint8_t> Content;
  if (!Info.Features.empty()) {
    Content = entryFrameContent(Info.Features, Payload);
    Payload = Content;
    Info.Features.clear();
    Flags |= EntryFlagFeaturesInFrame;
  }
  size_t Bound = ZSTD_compressBound(Payload.size());
  std::vector<uint8_t> Z(Bound);
  size_t ZSize;
  if (Dict) {
    ZstdContexts &Ctx = contexts();
    const ZSTD_CDict *CDict = Dict->compressionDict();
    if (!Ctx.C || !CDict)
      return bad("zstd compression failed: out of memory");
    // Content size and dictionary id written (the defaults), and the
    // content's checksum: the payload checksum covers the compressed bytes
    // only, and a wrong dictionary carrying the right id would otherwise
    // decompress to bad bytes unnoticed. Four bytes.
    ZSize = ZSTD_CCtx_reset(Ctx.C, ZSTD_reset_session_and_parameters);
    if (!ZSTD_isError(ZSize))
      ZSize = ZSTD_CCtx_setParameter(Ctx.C, ZSTD_c_checksumFlag, 1);
    if (!ZSTD_isError(ZSize))
      ZSize = ZSTD_CCtx_refCDict(Ctx.C, CDict);
    if (!ZSTD_isError(ZSize))
      ZSize = ZSTD_compress2(Ctx.C, Z.data(), Bound, Payload.data(),
                             Payload.size());
    (void)ZSTD_CCtx_refCDict(Ctx.C, nullptr); // holds no dictionary after
  } else {
    ZSize = ZSTD_compress(Z.data(), Bound, Payload.data(), Payload.size(),
                          EntryCompressionLevel);
  }
  if (ZSTD_isError(ZSize))
    return bad(Twine("zstd compression failed: ") + ZSTD_getErrorName(ZSize));
  Z.resize(ZSize);
  // What no reader would take back (decodeEntry's ratio check).
  if (Payload.size() > std::max<uint64_t>(EntryMaxPlainSize,
                                          ZSize * EntryMaxCompressionRatio))
    return bad("a payload of " + Twine(Payload.size()) +
               " bytes compresses to " + Twine(ZSize) +
               ": more than readers accept (" +
               Twine(EntryMaxCompressionRatio) + "x beyond " +
               Twine(EntryMaxPlainSize) + " bytes)");
  // A reader finds the dictionary by the id in the frame: make sure it is
  // there.
  if (Dict && ZSTD_getDictID_fromFrame(Z.data(), Z.size()) != Dict->id())
    return bad("zstd frame does not name dictionary " +
               utohexstr(Dict->id(), /*LowerCase=*/true, 8));

  size_t Strings =
      Info.KernelId.size() + Info.Variant.size() + Info.Features.size();
  size_t HeaderSize = EntryFixedHeaderSize + Strings + 8;
  std::vector<uint8_t> Out(HeaderSize + ZSize, 0);
  uint8_t *P = Out.data();
  std::memcpy(P + off::Magic, EntryMagic, 8);
  write32le(P + off::Version, EntryFormatVersion);
  write32le(P + off::HeaderSize, uint32_t(HeaderSize));
  write64le(P + off::KeyId, Key.Id);
  write64le(P + off::KeyBuild, Key.BuildId);
  write64le(P + off::Namespace, NamespaceHash);
  write64le(P + off::IRHash, Info.IRHash);
  write64le(P + off::Uncompressed, Payload.size());
  write64le(P + off::Compressed, ZSize);
  write64le(P + off::Checksum, xxh3_64bits(ArrayRef<uint8_t>(Z)));
  write32le(P + off::KernelLen, uint32_t(Info.KernelId.size()));
  write32le(P + off::VariantLen, uint32_t(Info.Variant.size()));
  write32le(P + off::FeaturesLen, uint32_t(Info.Features.size()));
  write32le(P + off::Flags, Flags);
  size_t Pos = EntryFixedHeaderSize;
  for (const std::string *S : {&Info.KernelId, &Info.Variant, &Info.Features}) {
    std::memcpy(P + Pos, S->data(), S->size());
    Pos += S->size();
  }
  write64le(P + Pos, xxh3_64bits(ArrayRef<uint8_t>(P, Pos)));
  std::memcpy(P + HeaderSize, Z.data(), ZSize);
  return Out;
}

Expected<EntryHeader> parseEntryHeader(ArrayRef<uint8_t> File) {
  const uint8_t *P = File.data();
  if (File.size() < 12)
    return bad("truncated entry (" + Twine(File.size()) + " bytes)");
  if (std::memcmp(P, EntryMagic, 8) != 0)
    return bad("bad magic (not a kiln store entry)");
  EntryHeader H;
  H.Version = read32le(P + off::Version);
  if (H.Version != EntryFormatVersion)
    return bad("unsupported format version " + Twine(H.Version) +
               " (expected " + Twine(EntryFormatVersion) + ")");
  if (File.size() < EntryFixedHeaderSize)
    return bad("truncated entry (" + Twine(File.size()) + " bytes)");
  H.HeaderSize = read32le(P + off::HeaderSize);
  uint32_t KLen = read32le(P + off::KernelLen);
  uint32_t VLen = read32le(P + off::VariantLen);
  uint32_t FLen = read32le(P + off::FeaturesLen);
  if (KLen > EntryMaxStringSize || VLen > EntryMaxStringSize ||
      FLen > EntryMaxStringSize ||
      uint64_t(EntryFixedHeaderSize) + KLen + VLen + FLen + 8 != H.HeaderSize)
    return bad("bad header size");
  if (File.size() < H.HeaderSize)
    return bad("truncated entry (" + Twine(File.size()) + " bytes)");
  size_t StringsEnd = H.HeaderSize - 8;
  if (read64le(P + StringsEnd) != xxh3_64bits(File.take_front(StringsEnd)))
    return bad("header checksum mismatch");
  H.Flags = read32le(P + off::Flags);
  if (H.Flags & ~(EntryFlagDictionary | EntryFlagFeaturesInFrame))
    return bad("unknown header flags");
  if ((H.Flags & EntryFlagFeaturesInFrame) &&
      read32le(P + off::FeaturesLen) != 0)
    return bad("feature list both in the header and in the frame");
  H.Key = {read64le(P + off::KeyId), read64le(P + off::KeyBuild)};
  H.NamespaceHash = read64le(P + off::Namespace);
  H.Info.IRHash = read64le(P + off::IRHash);
  H.UncompressedSize = read64le(P + off::Uncompressed);
  H.CompressedSize = read64le(P + off::Compressed);
  H.PayloadChecksum = read64le(P + off::Checksum);
  const char *S = reinterpret_cast<const char *>(P + EntryFixedHeaderSize);
  H.Info.KernelId.assign(S, KLen);
  H.Info.Variant.assign(S + KLen, VLen);
  H.Info.Features.assign(S + KLen + VLen, FLen);
  if (H.UncompressedSize > EntryMaxPayloadSize)
    return bad("bad payload size");
  if (File.size() - H.HeaderSize != H.CompressedSize)
    return bad(File.size() - H.HeaderSize < H.CompressedSize
                   ? "truncated entry (" + Twine(File.size()) + " bytes)"
                   : Twine("trailing bytes after the payload"));
  if (H.Flags & EntryFlagDictionary) {
    H.DictionaryId = ZSTD_getDictID_fromFrame(P + H.HeaderSize,
                                              H.CompressedSize);
    if (H.DictionaryId == 0)
      return bad("dictionary flag set but the zstd frame names no dictionary");
  }
  return H;
}

Expected<std::vector<uint8_t>> decodeEntry(ArrayRef<uint8_t> File,
                                           const EntryExpectations &Expect,
                                           EntryHeader *HeaderOut) {
  Expected<EntryHeader> H = parseEntryHeader(File);
  if (!H)
    return H.takeError();
  if (Expect.Key && H->Key != *Expect.Key)
    return bad("key mismatch: the entry holds " + H->Key.hex());
  if (Expect.NamespaceHash && H->NamespaceHash != *Expect.NamespaceHash)
    return bad("entry of another namespace (fingerprint " +
               utohexstr(H->NamespaceHash, true, 16) + ")");
  if (Expect.IRHash && H->Info.IRHash && H->Info.IRHash != *Expect.IRHash)
    return bad("stale entry: kept for another IR of the kernel");
  if (Expect.MissingFeature && !H->Info.Features.empty()) {
    std::string Missing = Expect.MissingFeature(H->Info.Features);
    if (!Missing.empty())
      return bad("needs CPU feature " + Missing + " the host lacks");
  }
  ArrayRef<uint8_t> Z = File.drop_front(H->HeaderSize);
  if (xxh3_64bits(Z) != H->PayloadChecksum)
    return bad("payload checksum mismatch");
  unsigned long long Content = ZSTD_getFrameContentSize(Z.data(), Z.size());
  if (Content != H->UncompressedSize)
    return bad("payload size mismatch");
  // The size is allocated before decompressing: a crafted small entry must
  // not make a reader allocate gigabytes. zstd gets nowhere near this ratio
  // on object code (2-10x, a dictionary entry some 20x).
  if (H->UncompressedSize > std::max<uint64_t>(EntryMaxPlainSize,
                                               H->CompressedSize *
                                                   EntryMaxCompressionRatio))
    return bad("a payload of " + Twine(H->UncompressedSize) +
               " bytes cannot come from " + Twine(H->CompressedSize) +
               " compressed bytes");
  std::shared_ptr<const EntryDictionary> Dict;
  if (H->DictionaryId) {
    if (Expect.Dictionary)
      Dict = Expect.Dictionary(H->DictionaryId);
    if (!Dict)
      return make_error<MissingDictionaryError>(H->DictionaryId);
    if (Dict->id() != H->DictionaryId)
      return bad("zstd dictionary " + utohexstr(Dict->id(), true, 8) +
                 " given for an entry that needs zstd dictionary " +
                 utohexstr(H->DictionaryId, true, 8));
  } else if (ZSTD_getDictID_fromFrame(Z.data(), Z.size()) != 0) {
    return bad("the zstd frame needs a dictionary the header does not flag");
  }
  std::vector<uint8_t> Out(H->UncompressedSize);
  size_t N;
  if (Dict) {
    ZstdContexts &Ctx = contexts();
    if (!Ctx.D)
      return bad("zstd decompression failed: out of memory");
    N = ZSTD_decompress_usingDDict(Ctx.D, Out.data(), Out.size(), Z.data(),
                                   Z.size(), Dict->decompressionDict());
  } else {
    N = ZSTD_decompress(Out.data(), Out.size(), Z.data(), Z.size());
  }
  if (ZSTD_isError(N))
    return bad(Twine("zstd decompression failed: ") + ZSTD_getErrorName(N));
  if (N != H->UncompressedSize)
    return bad("payload size mismatch");
  if (H->Flags & EntryFlagFeaturesInFrame) {
    // u32 length, the "+a,+b" list, then the payload.
    uint32_t Len = Out.size() >= 4 ? read32le(Out.data()) : 0;
    if (Out.size() < 4 || Len == 0 || Len > EntryMaxStringSize ||
        Len > Out.size() - 4)
      return bad("bad feature list in the frame");
    H->Info.Features.assign(reinterpret_cast<const char *>(Out.data() + 4),
                            Len);
    if (Expect.MissingFeature) {
      std::string Missing = Expect.MissingFeature(H->Info.Features);
      if (!Missing.empty())
        return bad("needs CPU feature " + Missing + " the host lacks");
    }
    Out.erase(Out.begin(), Out.begin() + 4 + Len);
  }
  if (HeaderOut)
    *HeaderOut = std::move(*H);
  return Out;
}

} // namespace kiln
