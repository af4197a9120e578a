//===- RemoteTier.h - A shared store tier on Redis --------------*- C++ -*-===//
//
// The remote tier sits behind the local store (FileStore): a local miss asks
// it, a remote hit is written to the local store, and what a process
// compiles is published to it off the caller's path. A fleet of machines
// with the same CPU features (the same namespace) then compiles each kernel
// once (docs/Store.md, "The remote tier").
//
// Remote entries are code the process will run, so every value carries an
// HMAC-SHA256 tag made with a fleet key the embedder supplies (a key file;
// there is no default key). A value without a valid tag, for another key
// name or namespace, or failing the local entry checks is ignored and
// counted, never loaded.
//
// Failure is only slowness, and bounded: every request has a timeout, and
// after repeated failures the tier is skipped for a back-off period, so a
// dead server costs nothing per kernel. Thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_REMOTETIER_H
#define KILN_STORE_REMOTETIER_H

#include "kiln/Store/KernelCacheKey.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

class StoreWarnings;

/// Where the server is: "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]" (port
/// 6379, database 0 by default) or "unix://PATH[?db=DB]" ("unix:PATH" too).
struct RemoteAddress {
  std::string Host;       ///< empty for a Unix socket
  unsigned Port = 6379;
  std::string SocketPath; ///< empty for TCP
  unsigned Database = 0;
  std::string User, Password;

  static llvm::Expected<RemoteAddress> parse(llvm::StringRef Url);
  /// The address without the password, for messages.
  std::string str() const;
};

/// Whether a process publishes what it compiles.
enum class RemoteModeKind {
  ReadWrite, ///< consume and publish (the default)
  ReadOnly,  ///< consume only: for workers the fleet does not trust
};

/// How a remote tier is reached and how long it may take.
struct RemoteConfig {
  /// The server's address (RemoteAddress::parse); empty: no remote tier.
  std::string Url;
  /// The fleet key: a file of at least 32 bytes that only its owner may
  /// read. Required: without it the tier is off.
  std::string KeyFile;
  RemoteModeKind Mode = RemoteModeKind::ReadWrite;
  std::chrono::milliseconds ConnectTimeout{20};
  std::chrono::milliseconds RequestTimeout{20};
  /// Consecutive failures after which the tier is skipped...
  unsigned FailuresBeforeBackoff = 3;
  /// ...for this long.
  std::chrono::milliseconds Backoff{10000};
  /// The publication queue's bounds: a value that does not fit is dropped.
  size_t QueueEntries = 256;
  size_t QueueBytes = size_t(32) << 20;
  /// Values larger than this are neither published nor accepted.
  size_t MaxValueBytes = size_t(64) << 20;
  /// Every key starts with this and ':'.
  std::string Prefix = "kiln";

  /// The process's variables: KILN_REMOTE (the address), KILN_REMOTE_KEY
  /// (the key file), KILN_REMOTE_MODE ("read-write" or "read-only") and
  /// KILN_REMOTE_TIMEOUT_MS (connect and request timeout). nullopt when
  /// KILN_REMOTE is unset, empty or "0". A bad value is one warning into
  /// \p Warnings and its default.
  static std::optional<RemoteConfig>
  fromEnvironment(StoreWarnings *Warnings = nullptr);
};

/// A fleet key, loaded from its file.
/// Whether this build of Kiln has the remote tier (the KILN_REMOTE build
/// option, on by default). Without it RemoteTier::create, FleetKey::fromBytes
/// and openRemoteValue fail with noRemoteTierMessage(), and nothing links
/// hiredis or libcrypto.
bool remoteTierBuilt();
/// "this build of Kiln has no remote tier (configured with -DKILN_REMOTE=OFF)"
inline const char *noRemoteTierMessage() {
  return "this build of Kiln has no remote tier (configured with "
         "-DKILN_REMOTE=OFF)";
}

class FleetKey {
public:
  /// Reads \p Path: a regular file (not followed through a symlink, never
  /// blocking on a FIFO), owned by this user, that neither group nor others
  /// may read or write, of 32 to 4096 bytes once surrounding whitespace is
  /// trimmed. The error says which rule failed.
  static llvm::Expected<FleetKey> load(llvm::StringRef Path);
  /// A key from bytes (tests); at least 32.
  static llvm::Expected<FleetKey> fromBytes(llvm::ArrayRef<uint8_t> Bytes);
  /// A public name of the key (not secret): the first 8 bytes of a hash of
  /// it, so that a value made with another key is told apart from a
  /// tampered one.
  uint64_t id() const { return Id; }
  llvm::ArrayRef<uint8_t> bytes() const { return Bytes; }

private:
  std::vector<uint8_t> Bytes;
  uint64_t Id = 0;
};

/// A value as stored remotely: "KILNRMT1", version, the key's id, the
/// payload's size, HMAC-SHA256 over the key name and the payload, the
/// payload (docs/Store.md has the byte layout).
std::vector<uint8_t> sealRemoteValue(const FleetKey &Key, llvm::StringRef Name,
                                     llvm::ArrayRef<uint8_t> Payload);
/// The payload of \p Value stored under \p Name, or an error saying why it
/// must not be used ("made with another fleet key", "bad tag", ...).
llvm::Expected<std::vector<uint8_t>>
openRemoteValue(const FleetKey &Key, llvm::StringRef Name,
                llvm::ArrayRef<uint8_t> Value);

/// The remote key of an entry: PREFIX:BACKEND:NAMESPACE-HEX:KEY-HEX, the
/// local store's key (kernel id with its variant, build id) under the
/// namespace of the CPU fingerprint.
std::string remoteEntryName(llvm::StringRef Prefix, llvm::StringRef Backend,
                            uint64_t NamespaceHash, const KernelCacheKey &Key);
/// The remote key of a namespace's zstd dictionary \p DictId.
std::string remoteDictionaryName(llvm::StringRef Prefix,
                                 llvm::StringRef Backend,
                                 uint64_t NamespaceHash, uint32_t DictId);

/// What the tier did, since it was made.
struct RemoteCounters {
  uint64_t Hits = 0;          ///< values found and accepted
  uint64_t Misses = 0;        ///< no value under the key
  uint64_t Errors = 0;        ///< requests that failed (timeout, I/O, reply)
  uint64_t Rejected = 0;      ///< values found and refused (tag, checks)
  uint64_t Skipped = 0;       ///< requests not made: backing off
  uint64_t Published = 0;     ///< values written
  uint64_t PublishErrors = 0; ///< writes the server refused or that failed
  uint64_t Dropped = 0;       ///< publications dropped: queue full, backing
                              ///< off, or left at shutdown
  RemoteCounters &operator+=(const RemoteCounters &O);
};

/// How a fetch ended.
enum class RemoteFetchStatus { Hit, Miss, Error, Skipped, Rejected };

struct RemoteFetch {
  RemoteFetchStatus Status = RemoteFetchStatus::Miss;
  std::vector<uint8_t> Bytes; ///< the payload, for a Hit
};

class RemoteTier {
public:
  /// A tier for \p Config. An error when the configuration cannot work (a
  /// bad address, no key file or a key file that fails FleetKey's rules):
  /// the caller runs without a tier and says why. The server is not
  /// contacted here: an unreachable one is only slowness, later.
  static llvm::Expected<std::shared_ptr<RemoteTier>>
  create(const RemoteConfig &Config,
         std::shared_ptr<StoreWarnings> Warnings = nullptr);
  /// Publishes what is queued for at most a second, then drops the rest.
  ~RemoteTier();
  RemoteTier(const RemoteTier &) = delete;
  RemoteTier &operator=(const RemoteTier &) = delete;

  /// The payload stored under \p Name, its tag checked. Never throws, never
  /// blocks longer than the timeouts.
  RemoteFetch fetch(llvm::StringRef Name);
  /// Queues \p Payload for publication under \p Name (sealed on the
  /// publisher thread). Returns at once; false when dropped (read-only
  /// mode, queue full, backing off).
  bool publish(std::string Name, std::vector<uint8_t> Payload);
  /// Publishes \p Payload under \p Name now, on this thread (tools).
  /// Whether it was written (false: the key existed already).
  llvm::Expected<bool> publishNow(llvm::StringRef Name,
                                  llvm::ArrayRef<uint8_t> Payload);
  /// Counts a fetched value that the caller's own checks refused.
  void countRejected(llvm::StringRef Name, llvm::StringRef Why);
  /// Waits until the publication queue is empty, for at most \p Max;
  /// whether it is.
  bool drain(std::chrono::milliseconds Max);

  /// The keys under the prefix with their sizes (tools: `remote stats`).
  struct KeySummary {
    std::string Name;
    uint64_t Bytes = 0;
  };
  /// What one listing may take: a server whose SCAN cursor never comes back
  /// to 0, or that names keys without end, gets an error at the first
  /// bound reached, never a listing that runs or grows forever.
  struct ListLimits {
    uint64_t MaxSteps = uint64_t(1) << 16;      ///< SCAN requests
    uint64_t MaxKeys = uint64_t(1) << 20;       ///< distinct keys
    uint64_t MaxNameBytes = uint64_t(64) << 20; ///< their names, in all
    std::chrono::milliseconds MaxTime{120000};  ///< the whole listing
  };
  /// Each key once (SCAN may name a key more than once).
  llvm::Expected<std::vector<KeySummary>> listKeys(const ListLimits &Limits);
  llvm::Expected<std::vector<KeySummary>> listKeys() {
    return listKeys(ListLimits());
  }
  /// The server's INFO text for \p Section (tools).
  llvm::Expected<std::string> serverInfo(llvm::StringRef Section);

  RemoteCounters counters() const;
  const RemoteConfig &config() const;
  bool readOnly() const;
  /// The address, without a password.
  std::string where() const;
  /// Whether requests are being skipped now (after repeated failures).
  bool backingOff() const;

  class Impl;

private:
  explicit RemoteTier(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> I;
};

} // namespace kiln

#endif // KILN_STORE_REMOTETIER_H
