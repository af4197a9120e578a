//===- Dictionary.h - Per-namespace zstd dictionaries for entries -*- C++ -*-===//
//
// Most of a small compiled object is ELF structure every entry of a namespace
// shares, which zstd alone compresses poorly. A dictionary trained on the
// namespace's own payloads holds that structure once, so each entry keeps
// only what is its own (docs/Store.md, "Dictionaries").
//
// In a namespace folder:
//
//   zdict-<8 hex>.dict   a zstd dictionary; the hex is its dictionary id, the
//                        id zstd also writes in each frame compressed with it
//   zdict-current        "<8 hex>\n": the dictionary new entries use
//
// Dictionary files are never replaced: an entry names the dictionary it was
// written with, so it stays readable after the current one changes.
//
// Using it from a store (what FileStore does):
//
//   NamespaceDictionaries Dicts(Folder);
//   // write: compress with the current dictionary, if any
//   std::shared_ptr<const EntryDictionary> D = Dicts.current();
//   encodeEntry(Key, NSHash, Info, Payload, D.get());
//   // read: decoding looks up the dictionary the entry names
//   EntryExpectations Expect;
//   Expect.Dictionary = Dicts.lookup();
//   decodeEntry(File, Expect);   // MissingDictionaryError when unavailable
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_DICTIONARY_H
#define KILN_STORE_DICTIONARY_H

#include "kiln/Store/EntryFormat.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

// zstd's digested dictionaries, kept opaque here (zstd.h stays out of every
// file that includes this one).
typedef struct ZSTD_CDict_s ZSTD_CDict;
typedef struct ZSTD_DDict_s ZSTD_DDict;

namespace kiln {

/// The largest dictionary file read or installed.
inline constexpr size_t DictionaryMaxSize = size_t(1) << 20;
/// The fewest sample payloads training accepts (zstd's trainer needs five).
inline constexpr size_t DictionaryMinSamples = 5;
/// The dictionary size training aims for when none is given: the best trade
/// between the dictionary's own bytes and what it saves on the example and
/// conformance kernels (docs/Store.md, "Dictionaries").
inline constexpr size_t DictionaryDefaultSize = 16 * 1024;
/// At most this many payload bytes are handed to the trainer; a larger
/// namespace trains on a subset.
inline constexpr size_t DictionaryMaxTrainingBytes = size_t(32) << 20;

/// The file holding the id of the current dictionary.
inline constexpr const char *CurrentDictionaryFileName = "zdict-current";

/// "zdict-<8 lowercase hex>.dict".
std::string dictionaryFileName(uint32_t Id);
/// The id a dictionary file name names; nullopt for any other name.
std::optional<uint32_t> dictionaryIdFromFileName(llvm::StringRef Name);
/// Whether \p Name is one of the dictionary files (a dictionary, the current
/// marker, or a temporary of either): not an entry, never pruned as one.
bool isDictionaryFileName(llvm::StringRef Name);

/// One zstd dictionary, checked and digested once for compression (at
/// EntryCompressionLevel) and decompression. Immutable: share it through
/// std::shared_ptr<const EntryDictionary>; every member may be called from
/// several threads.
class EntryDictionary {
public:
  /// Checks \p Bytes (a zstd dictionary with its magic and a non-zero id, at
  /// most DictionaryMaxSize bytes) and digests it.
  static llvm::Expected<std::shared_ptr<const EntryDictionary>>
  fromBytes(llvm::ArrayRef<uint8_t> Bytes);

  ~EntryDictionary();
  EntryDictionary(const EntryDictionary &) = delete;
  EntryDictionary &operator=(const EntryDictionary &) = delete;

  /// The dictionary id (ZDICT_getDictID), never 0.
  uint32_t id() const { return Id; }
  llvm::ArrayRef<uint8_t> bytes() const { return Bytes; }
  /// Digested for compression on first use (some 400 KiB for a 16 KiB
  /// dictionary: only the current one is ever compressed with); null when
  /// zstd cannot allocate it.
  const ZSTD_CDict *compressionDict() const;
  const ZSTD_DDict *decompressionDict() const { return DDict; }

private:
  EntryDictionary() = default;

  std::vector<uint8_t> Bytes;
  uint32_t Id = 0;
  mutable std::once_flag CDictOnce;
  mutable ZSTD_CDict *CDict = nullptr;
  ZSTD_DDict *DDict = nullptr;
};

/// Training found fewer usable samples than DictionaryMinSamples.
class TooFewSamplesError : public llvm::ErrorInfo<TooFewSamplesError> {
public:
  static char ID;
  explicit TooFewSamplesError(size_t Samples) : Samples(Samples) {}
  size_t samples() const { return Samples; }
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  size_t Samples;
};

/// Trains a dictionary of at most \p TargetSize bytes (0:
/// DictionaryDefaultSize) from \p Samples, the uncompressed payloads of a
/// namespace's entries. A TooFewSamplesError for fewer than
/// DictionaryMinSamples samples; another error when zstd's trainer fails
/// (too little data to learn from). The result passes
/// EntryDictionary::fromBytes.
llvm::Expected<std::vector<uint8_t>>
trainEntryDictionary(llvm::ArrayRef<llvm::ArrayRef<uint8_t>> Samples,
                     size_t TargetSize = 0);

/// The dictionaries of one namespace folder. Thread-safe. Loaded files are
/// cached (a dictionary file never changes); zdict-current is looked at with
/// one stat per current() and re-read when it was replaced.
///
/// Every file is opened with O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC and must be a
/// regular file owned by the effective user, within its size limit (checked
/// before reading); a dictionary's id must be the one its name gives.
class NamespaceDictionaries {
public:
  explicit NamespaceDictionaries(std::string Folder);

  const std::string &folder() const { return Folder; }

  /// The dictionary new entries are compressed with; null when there is
  /// none or it cannot be loaded.
  std::shared_ptr<const EntryDictionary> current();
  /// The same, with the reason when there is one but it cannot be loaded
  /// (null without error when the namespace has no current dictionary).
  llvm::Expected<std::shared_ptr<const EntryDictionary>> loadCurrent();

  /// The dictionary \p Id, loaded from its file once; null when it is
  /// missing or bad.
  std::shared_ptr<const EntryDictionary> byId(uint32_t Id);
  /// The same, with the reason it cannot be loaded.
  llvm::Expected<std::shared_ptr<const EntryDictionary>> load(uint32_t Id);

  /// byId as an EntryExpectations::Dictionary lookup. The function keeps
  /// this object alive through a shared_ptr only if the caller holds one;
  /// it must not outlive this object.
  std::function<std::shared_ptr<const EntryDictionary>(uint32_t)> lookup();

  /// Writes \p Bytes as zdict-<id>.dict (checked first, mode 0600, through a
  /// temporary file linked into place and synced, so that no entry is ever
  /// written with a dictionary that a crash could lose), then, with
  /// \p MakeCurrent, replaces zdict-current the same way. A file of that id
  /// holding other bytes is an error; one holding the same bytes is kept.
  llvm::Expected<std::shared_ptr<const EntryDictionary>>
  install(llvm::ArrayRef<uint8_t> Bytes, bool MakeCurrent);

private:
  std::string Folder;
  std::mutex Lock;
  std::map<uint32_t, std::shared_ptr<const EntryDictionary>> Loaded;
  /// What zdict-current was when last read: its identity and what it named.
  struct FileStamp {
    dev_t Dev = 0;
    ino_t Ino = 0;
    off_t Size = 0;
    timespec MTime{};
    bool operator==(const FileStamp &O) const;
  };
  std::optional<FileStamp> CurrentStamp;
  uint32_t CurrentId = 0;

  llvm::Expected<std::shared_ptr<const EntryDictionary>> loadLocked(uint32_t Id);
};

/// What retrainNamespace did.
struct RetrainSummary {
  size_t Entries = 0;      ///< entries recompressed with the new dictionary
  size_t LeftAlone = 0;    ///< entries that did not decode, left as they are
  size_t Changed = 0;      ///< entries replaced or removed meanwhile, skipped
  uint64_t BytesBefore = 0; ///< on-disk bytes of the recompressed entries
  uint64_t BytesAfter = 0;  ///< the same after recompression
  uint32_t DictionaryId = 0;
  size_t DictionarySize = 0;
};

/// Trains a dictionary on the entries of the namespace folder \p Folder
/// (whose fingerprint hashes to \p NamespaceHash), installs it as the
/// current one, and recompresses every entry that decodes with it: each is
/// written to a temporary file that is renamed over the entry, keeping its
/// modification time (its last use), so a reader sees the old entry or the
/// new one, never a partial file. Entries that do not decode are left alone
/// and counted. A TooFewSamplesError when fewer than DictionaryMinSamples
/// entries decode; nothing is changed then.
llvm::Expected<RetrainSummary>
retrainNamespace(llvm::StringRef Folder, uint64_t NamespaceHash,
                 size_t DictionarySize = 0);

/// Deletes the dictionary files of \p Folder that no entry names and that
/// are not current, unless zdict-current changed less than
/// \p GraceSeconds ago (a writer of another process may still compress with
/// the one it replaced). Returns how many were deleted. An entry (or a
/// temporary) that cannot be read or whose header does not parse may need
/// any of them: then nothing is deleted and the error names it.
llvm::Expected<size_t> pruneDictionaries(llvm::StringRef Folder,
                                         unsigned GraceSeconds = 3600);

} // namespace kiln

#endif // KILN_STORE_DICTIONARY_H
