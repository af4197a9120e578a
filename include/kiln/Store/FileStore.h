//===- FileStore.h - One namespace of the store, on disk --------*- C++ -*-===//
//
// A FileStore is the folder <root>/<backend>/<fingerprint hex>/ holding one
// file per entry, "kiln-<key hex>.entry" (docs/Store.md). It reads lazily (a
// file is opened when its key is asked for), checks every read, writes
// through a temporary file linked into place (the first writer wins), and
// prunes the whole store to its size limit, amortised over writes.
//
// Failures never reach the caller as crashes, hangs or bad bytes: a bad entry
// is a miss (one warning naming the file, the file deleted); a folder others
// may write is never read from (one warning); an unwritable or full store
// stops writing after one refusal that the caller logs. Every file of a
// namespace is read with readStoreFile (never through a link, never
// blocking, its size checked before it is read).
//
// Thread-safe: every member function may be called from several threads.
// Several processes may share a store (see docs/Store.md, "Concurrency").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_FILESTORE_H
#define KILN_STORE_FILESTORE_H

#include "kiln/Store/Dictionary.h"
#include "kiln/Store/EntryFormat.h"
#include "kiln/Store/Environment.h"
#include "kiln/Store/RemoteTier.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

struct stat;

namespace kiln {

/// Counters of one namespace, kept in its "stats" file.
struct StoreCounters {
  uint64_t Hits = 0;
  uint64_t Misses = 0;
  uint64_t Writes = 0;
  uint64_t Refusals = 0;
  uint64_t CorruptPurged = 0;
  uint64_t BytesUncompressed = 0; ///< payload bytes written, before zstd
  uint64_t BytesCompressed = 0;   ///< the same, after zstd
  /// The remote tier (RemoteTier), as this namespace saw it: local misses
  /// it answered with a valid entry, had nothing for, could not answer
  /// (an error, or skipped while backing off), answered with an entry
  /// that was refused; entries queued for publication, and dropped.
  uint64_t RemoteHits = 0;
  uint64_t RemoteMisses = 0;
  uint64_t RemoteErrors = 0;
  uint64_t RemoteRejected = 0;
  uint64_t RemoteQueued = 0;
  uint64_t RemoteDropped = 0;

  StoreCounters &operator+=(const StoreCounters &O);
  bool empty() const;
};

/// The largest entry file read or written: an entry this large is no
/// compiled kernel (and could not travel through the remote tier either).
inline constexpr uint64_t EntryMaxFileSize = uint64_t(64) << 20;
/// The largest "stats" and "fingerprint.txt" files read.
inline constexpr uint64_t StatsMaxFileSize = 64 * 1024;
inline constexpr uint64_t FingerprintMaxFileSize = 64 * 1024;

/// Why a file of a namespace folder was not read (readStoreFile) or cannot
/// be an entry (scanStore).
enum class StoreFileFault {
  None,       ///< a regular file within the limits
  Missing,    ///< no such file: not a fault of the store
  Link,       ///< a symbolic link: never followed
  Folder,     ///< a folder
  Special,    ///< a FIFO, socket or device: never opened, so never blocks
  OtherOwner, ///< a regular file of another user than the expected one
  TooLarge,   ///< larger than the limit: never read
  Unreadable, ///< it cannot be inspected, opened or read, or it changed
};

/// readStoreFile's error: the fault and why, in words ("it is a symbolic
/// link"), without the path.
class StoreFileError : public llvm::ErrorInfo<StoreFileError> {
public:
  static char ID;
  StoreFileError(StoreFileFault Fault, std::string Why)
      : Fault(Fault), Why(std::move(Why)) {}
  StoreFileFault fault() const { return Fault; }
  const std::string &why() const { return Why; }
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  StoreFileFault Fault;
  std::string Why;
};

/// What \p St (an lstat or fstat) makes of a store file: None when it is a
/// regular file of at most \p MaxSize bytes owned by \p Owner (any owner
/// when nullopt); otherwise the fault, with \p Why set.
StoreFileFault classifyStoreFile(const struct stat &St, uint64_t MaxSize,
                                 std::optional<uid_t> Owner, std::string &Why);

/// Reads the whole file \p Path of a namespace folder without trusting it:
/// it is lstat'ed first (a link, folder, FIFO, socket or device is refused
/// without being opened), opened with O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC,
/// fstat'ed again, and read only when it is a regular file of at most
/// \p MaxSize bytes owned by \p Owner (nullopt: any owner). A
/// StoreFileError otherwise.
llvm::Expected<std::vector<uint8_t>>
readStoreFile(llvm::StringRef Path, uint64_t MaxSize,
              std::optional<uid_t> Owner);

/// Reads the counters file \p Path; zeros when it does not exist or cannot
/// be parsed, and zeros with one warning into \p Warnings (when given) when
/// it is not a regular file, is a link, or is larger than StatsMaxFileSize
/// (never read then).
StoreCounters readStoreCounters(llvm::StringRef Path,
                                StoreWarnings *Warnings = nullptr);
/// Adds \p Delta to the counters file \p Path under an exclusive flock. The
/// file is never followed through a link: a link, a FIFO, socket or device,
/// or a file of another user in its place is removed and a fresh file made;
/// a file larger than StatsMaxFileSize is not read and counting starts from
/// zero. Either is one warning into \p Warnings (when given).
llvm::Error addStoreCounters(llvm::StringRef Path, const StoreCounters &Delta,
                             StoreWarnings *Warnings = nullptr);

/// A write the store did not take. Quiet ones (the entry exists already,
/// read-only mode, writes stopped after an earlier failure) need no log;
/// the others are worth one warning.
class StoreRefusal : public llvm::ErrorInfo<StoreRefusal> {
public:
  static char ID;
  StoreRefusal(std::string Reason, bool Quiet)
      : Reason(std::move(Reason)), Quiet(Quiet) {}
  const std::string &reason() const { return Reason; }
  bool quiet() const { return Quiet; }
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string Reason;
  bool Quiet;
};

/// The hash naming the namespace of \p Fingerprint, and its 16 hex digits.
uint64_t fingerprintHash(llvm::StringRef Fingerprint);
std::string fingerprintHex(llvm::StringRef Fingerprint);

/// "kiln-<32 hex>.entry".
std::string entryFileName(const KernelCacheKey &Key);
/// The key an entry file name names, or nullopt for any other name.
std::optional<KernelCacheKey> keyFromEntryFileName(llvm::StringRef Name);

/// The file in a namespace folder holding the fingerprint's text.
inline constexpr const char *FingerprintFileName = "fingerprint.txt";
/// The file in a namespace folder holding its counters.
inline constexpr const char *StatsFileName = "stats";

class FileStore {
public:
  /// The namespace of \p Backend (a plain name: letters, digits, '-', '_',
  /// '.') and \p Fingerprint under \p Env's root, with its configuration
  /// and warnings. Null when \p Env is not enabled (no root, or mode Off) or
  /// \p Backend is not a plain name. The folders are made (0700) on first
  /// use, not here.
  static std::unique_ptr<FileStore> open(llvm::StringRef Backend,
                                         llvm::StringRef Fingerprint,
                                         const StoreEnvironment &Env);
  /// Same under the root \p Root with \p Config (tools and tests); warnings
  /// go to \p Warnings (a fresh, silent one when null).
  static std::unique_ptr<FileStore>
  openAt(llvm::StringRef Root, llvm::StringRef Backend,
         llvm::StringRef Fingerprint, const StoreConfig &Config,
         std::shared_ptr<StoreWarnings> Warnings = nullptr);
  /// Flushes the counters.
  ~FileStore();
  FileStore(const FileStore &) = delete;
  FileStore &operator=(const FileStore &) = delete;

  /// The payload kept under \p Key, or nullopt: no entry, the folder is not
  /// trusted, or the entry is bad (warned about, deleted, counted). With
  /// \p IRHash, an entry recording another IR hash is stale: deleted, miss.
  /// A hit touches the file's modification time (least recently used
  /// pruning) unless the store is read-only.
  ///
  /// With a remote tier, a local miss asks it (without holding the store's
  /// lock); an entry it returns passes the same checks as a local one and
  /// is then written to the local store (read-write mode).
  std::optional<std::vector<uint8_t>> read(const KernelCacheKey &Key,
                                           std::optional<uint64_t> IRHash = {});
  /// Whether the last read() on this thread was answered by the remote
  /// tier.
  static bool lastReadCameFromRemote();

  /// The EntryInfo of the entry under \p Key without decompressing it.
  std::optional<EntryInfo> info(const KernelCacheKey &Key);

  /// Keeps \p Payload under \p Key. A StoreRefusal when not taken. A new
  /// entry is also queued for the remote tier (read-write mode).
  llvm::Error write(const KernelCacheKey &Key, llvm::ArrayRef<uint8_t> Payload,
                    const EntryInfo &Info);

  /// Deletes the entry under \p Key; whether one was deleted.
  bool purge(const KernelCacheKey &Key);

  /// Deletes the entry under \p Key because the caller found its payload bad
  /// (an artifact that does not decode): one warning with \p Reason.
  void purgeCorrupt(const KernelCacheKey &Key, llvm::StringRef Reason);

  /// The namespace folder ("" when no root).
  std::string folder();
  /// Whether the namespace folder can be used now (made in read-write mode,
  /// and trusted: ours, a folder, written by no one else).
  bool usable();
  llvm::StringRef backend() const { return Backend; }
  llvm::StringRef fingerprint() const { return Fingerprint; }
  uint64_t namespaceHash() const { return NamespaceHash; }
  const StoreConfig &config() const { return Config; }

  /// The counters of this process not yet flushed to the stats file.
  StoreCounters pendingCounters() const;
  /// Adds the pending counters to the stats file.
  void flushCounters();

  /// Where this store's warnings go.
  StoreWarnings &warnings() const { return *Warnings; }

  /// Installs the check of the CPU features an entry needs (see
  /// EntryExpectations::MissingFeature): the backend that compiled the
  /// entries knows what its host has; the generic store does not, and
  /// checks nothing until one is installed.
  void setMissingFeature(std::function<std::string(llvm::StringRef)> F);

  /// Puts \p Tier behind this namespace (null: none). open() installs the
  /// environment's.
  void setRemote(std::shared_ptr<RemoteTier> Tier);
  RemoteTier *remote() const { return Remote.get(); }
  /// The remote key of \p Key's entry.
  std::string remoteName(const KernelCacheKey &Key) const;

private:
  FileStore(std::string Root, llvm::StringRef Backend,
            llvm::StringRef Fingerprint, const StoreConfig &Config,
            std::shared_ptr<StoreWarnings> Warnings);

  /// Resolves and checks the folder once (again while it does not exist
  /// yet in read-only mode); false when it cannot be used, with one warning
  /// unless it is merely not made yet. Called with Lock held.
  bool ready();
  /// The folder was found gone (kiln-store clear): resolves it again, which
  /// makes it again and checks its trust again. Called with Lock held.
  bool resolveAgain();
  void warnUnusable(const llvm::Twine &Why);
  void writeFingerprintFile();
  /// A bad entry: removed (one warning), or left in place when it cannot be
  /// removed (one warning per file and process).
  void warnBadEntry(const std::string &Path, llvm::StringRef Why);
  void warnLeftInPlace(const std::string &Path, const llvm::Twine &Why);
  /// What a read of the entry \p Path that readStoreFile refused with \p E
  /// does: nothing (missing), warn and remove, or warn once and leave it.
  void entryUnreadable(const std::string &Path, llvm::Error E);
  void bump(uint64_t StoreCounters::*Field, uint64_t By = 1);
  void maybePrune(uint64_t BytesWritten);
  enum class Install { Done, Exists, FolderGone, Failed };
  /// Links the encoded entry \p Bytes into place as \p Final, through a
  /// temporary file; \p Why says what failed. Called with Lock held and the
  /// folder ready.
  Install installEntryFile(const std::string &Final,
                           llvm::ArrayRef<uint8_t> Bytes, std::string &Why);
  /// The refusal an install result is (success for Done); a failure stops
  /// writes.
  llvm::Error installRefusal(Install R, const std::string &Why);
  /// The payload of the remote tier's entry for \p Key, checked, kept
  /// locally when possible. Called with \p L (Lock) held; releases it
  /// while the tier is asked.
  std::optional<std::vector<uint8_t>>
  readRemote(std::unique_lock<std::mutex> &L, const KernelCacheKey &Key,
             const EntryExpectations &Expect, bool LocalUsable);
  /// The expectations of a read of \p Key; its dictionary lookup asks the
  /// namespace's files, then the dictionaries fetched from the remote tier.
  EntryExpectations expectationsFor(const KernelCacheKey &Key,
                                    std::optional<uint64_t> IRHash);
  /// Fetches dictionary \p Id from the remote tier (Lock released while
  /// asking), keeps it in memory and, when possible, in the namespace
  /// folder. Whether it is now available.
  bool fetchRemoteDictionary(std::unique_lock<std::mutex> &L, uint32_t Id,
                             bool LocalUsable);

  std::string Root;
  std::string Backend;
  std::string Fingerprint;
  uint64_t NamespaceHash;
  StoreConfig Config;
  std::shared_ptr<StoreWarnings> Warnings;
  std::function<std::string(llvm::StringRef)> MissingFeature;
  std::shared_ptr<RemoteTier> Remote;
  /// The namespace's zstd dictionaries (made with the folder).
  std::unique_ptr<NamespaceDictionaries> Dicts;
  /// Dictionaries fetched from the remote tier (also installed in the
  /// folder when it can be written).
  std::map<uint32_t, std::shared_ptr<const EntryDictionary>> RemoteDicts;
  /// Dictionaries this store has queued for the remote tier.
  std::set<uint32_t> PublishedDicts;

  mutable std::mutex Lock;
  bool Resolved = false;
  std::string Folder;
  bool Usable = false;
  bool WritesStopped = false;
  /// Entries warned about and left in place (folders, other users' files,
  /// files that cannot be removed): warned about once.
  std::set<std::string> LeftInPlace;
  StoreCounters Pending;
  unsigned PendingEvents = 0;
  bool Scanned = false;
  uint64_t RunningTotal = 0;
  unsigned WritesSinceScan = 0;
};

} // namespace kiln

#endif // KILN_STORE_FILESTORE_H
