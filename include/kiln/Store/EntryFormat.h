//===- EntryFormat.h - The bytes of one store entry -------------*- C++ -*-===//
//
// An entry file is a header and one zstd frame (docs/Store.md has the byte
// layout). All integers are little-endian. The frame may have been
// compressed with a namespace's dictionary (kiln/Store/Dictionary.h): flag
// bit 0 says so, and the frame header names the dictionary's id.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_ENTRYFORMAT_H
#define KILN_STORE_ENTRYFORMAT_H

#include "kiln/Store/KernelCacheKey.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class EntryDictionary;

/// "KILNSTOR".
inline constexpr char EntryMagic[8] = {'K', 'I', 'L', 'N', 'S', 'T', 'O', 'R'};
inline constexpr uint32_t EntryFormatVersion = 1;
/// Bytes before the variable-length strings.
inline constexpr uint32_t EntryFixedHeaderSize = 88;
/// Limits a reader enforces before allocating anything.
inline constexpr uint32_t EntryMaxStringSize = 1u << 16;
inline constexpr uint64_t EntryMaxPayloadSize = uint64_t(1) << 32;
/// A reader refuses an entry whose payload would be more than
/// EntryMaxCompressionRatio times its compressed size, beyond
/// EntryMaxPlainSize, before allocating it.
inline constexpr uint64_t EntryMaxCompressionRatio = 1024;
inline constexpr uint64_t EntryMaxPlainSize = uint64_t(1) << 20;
/// zstd level entries are written with.
inline constexpr int EntryCompressionLevel = 3;
/// Header flag: the zstd frame was compressed with a dictionary, whose id the
/// frame header holds. Every other flag bit is an error.
inline constexpr uint32_t EntryFlagDictionary = 1u << 0;
/// Flag bit 1: the entry's "+feature" list is at the start of the frame's
/// content (a u32 length, then the text), not in the header (whose feature
/// length is then 0). Every entry with features is written so.
inline constexpr uint32_t EntryFlagFeaturesInFrame = 1u << 1;

/// What an entry says about itself besides its payload.
struct EntryInfo {
  std::string KernelId; ///< the kernel id's text (for listings)
  std::string Variant;  ///< the variant's text, "" when none
  std::string Features; ///< CPU features the code needs: "+avx2,+fma"
  uint64_t IRHash = 0;  ///< hash of the kernel's IR; 0 when unknown
};

/// A parsed header.
struct EntryHeader {
  uint32_t Version = 0;
  uint32_t HeaderSize = 0;
  KernelCacheKey Key;
  uint64_t NamespaceHash = 0;
  uint64_t UncompressedSize = 0;
  uint64_t CompressedSize = 0;
  uint64_t PayloadChecksum = 0;
  uint32_t Flags = 0;
  /// The zstd dictionary the payload needs (the id in its frame header), 0
  /// when none. Read before the payload checksum is checked: decodeEntry
  /// checks it before using it.
  uint32_t DictionaryId = 0;
  EntryInfo Info;
};

/// Encodes an entry: header plus \p Payload compressed with zstd, with
/// \p Dict when given (flag bit 0 set, the dictionary's id in the frame).
/// \p NamespaceHash is the hash of the namespace's fingerprint text. The
/// header records only the "+feature" part of Info.Features: a "-feature"
/// (the code avoids it) never restricts the host, and a CPU's full list of
/// them would make the header of a small entry larger than its payload.
llvm::Expected<std::vector<uint8_t>>
encodeEntry(const KernelCacheKey &Key, uint64_t NamespaceHash,
            const EntryInfo &Info, llvm::ArrayRef<uint8_t> Payload,
            const EntryDictionary *Dict = nullptr);

/// Parses and checks the header of \p File (whole file contents): magic,
/// version, header checksum, string sizes, flags, and that the file's size
/// is the header's plus the compressed size; with the dictionary flag, that
/// the frame names a dictionary (DictionaryId). An error says what is
/// wrong, lower case ("bad magic", "truncated entry", ...).
llvm::Expected<EntryHeader> parseEntryHeader(llvm::ArrayRef<uint8_t> File);

/// decodeEntry's error for an entry whose dictionary the lookup could not
/// supply: "needs zstd dictionary <8 hex>". Not damage: the entry is good,
/// the dictionary is elsewhere (a remote tier may have it).
class MissingDictionaryError : public llvm::ErrorInfo<MissingDictionaryError> {
public:
  static char ID;
  explicit MissingDictionaryError(uint32_t DictId) : DictId(DictId) {}
  uint32_t dictionaryId() const { return DictId; }
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  uint32_t DictId;
};

/// What a reader expects of an entry; unset fields are not checked.
struct EntryExpectations {
  std::optional<KernelCacheKey> Key;
  std::optional<uint64_t> NamespaceHash;
  /// Checked only when the entry records an IR hash (non-zero).
  std::optional<uint64_t> IRHash;
  /// Answers whether the host has every feature of a "+a,+b" list; returns
  /// the first missing one, or "" when none is missing. The backend that
  /// compiled the entry provides it (the CPU backend: HostInfo); unset, the
  /// features are not checked.
  std::function<std::string(llvm::StringRef)> MissingFeature;
  /// Supplies the dictionary of an entry compressed with one (by the id in
  /// its frame); null when it has none. Unset, or null for the id, such an
  /// entry fails with a MissingDictionaryError. NamespaceDictionaries::lookup
  /// is the usual one.
  std::function<std::shared_ptr<const EntryDictionary>(uint32_t DictId)>
      Dictionary;
};

/// Parses \p File, checks it against \p Expect, the payload checksum and the
/// decompressed size, and returns the payload. Never returns bad bytes. A
/// dictionary the lookup returns with another id than the frame's is an
/// error, as is a frame naming a dictionary without the header's flag.
/// What the zstd frame of an entry with \p Features (its "+feature" items)
/// and \p Payload holds: what a namespace's dictionary is trained on.
std::vector<uint8_t> entryFrameContent(llvm::StringRef Features,
                                       llvm::ArrayRef<uint8_t> Payload);

llvm::Expected<std::vector<uint8_t>>
decodeEntry(llvm::ArrayRef<uint8_t> File, const EntryExpectations &Expect,
            EntryHeader *Header = nullptr);

} // namespace kiln

#endif // KILN_STORE_ENTRYFORMAT_H
