//===- EntryFormat.h - The bytes of one store entry -------------*- C++ -*-===//
//
// An entry file is a header and one zstd frame (docs/Store.md has the byte
// layout). All integers are little-endian.
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
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// "KILNSTOR".
inline constexpr char EntryMagic[8] = {'K', 'I', 'L', 'N', 'S', 'T', 'O', 'R'};
inline constexpr uint32_t EntryFormatVersion = 1;
/// Bytes before the variable-length strings.
inline constexpr uint32_t EntryFixedHeaderSize = 88;
/// Limits a reader enforces before allocating anything.
inline constexpr uint32_t EntryMaxStringSize = 1u << 16;
inline constexpr uint64_t EntryMaxPayloadSize = uint64_t(1) << 32;
/// zstd level entries are written with.
inline constexpr int EntryCompressionLevel = 3;

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
  EntryInfo Info;
};

/// Encodes an entry: header plus \p Payload compressed with zstd.
/// \p NamespaceHash is the hash of the namespace's fingerprint text.
llvm::Expected<std::vector<uint8_t>>
encodeEntry(const KernelCacheKey &Key, uint64_t NamespaceHash,
            const EntryInfo &Info, llvm::ArrayRef<uint8_t> Payload);

/// Parses and checks the header of \p File (whole file contents): magic,
/// version, header checksum, string sizes, and that the file's size is the
/// header's plus the compressed size. An error says what is wrong, lower
/// case ("bad magic", "truncated entry", ...).
llvm::Expected<EntryHeader> parseEntryHeader(llvm::ArrayRef<uint8_t> File);

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
};

/// Parses \p File, checks it against \p Expect, the payload checksum and the
/// decompressed size, and returns the payload. Never returns bad bytes.
llvm::Expected<std::vector<uint8_t>>
decodeEntry(llvm::ArrayRef<uint8_t> File, const EntryExpectations &Expect,
            EntryHeader *Header = nullptr);

} // namespace kiln

#endif // KILN_STORE_ENTRYFORMAT_H
