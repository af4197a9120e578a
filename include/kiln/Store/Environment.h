//===- Environment.h - Where a store lives, and how it is configured -*- C++ -*-===//
//
// A store's *environment* (docs/Store.md) is a value, owned by whoever
// opens the store: a device, a tool, a test. It names the root folder, the
// mode and size limit (StoreConfig) and the warning sink (StoreWarnings).
// Nothing here is process-wide and mutable: two devices with two
// environments in one process never affect each other.
//
// The default environment comes from the process's variables
// (KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln;
// KILN_CACHE, KILN_CACHE_MAX_SIZE, KILN_CACHE_SYNC), read once, the first
// time defaultStoreSettings() is asked for.
//
// The library never writes to stderr by itself: a warning is counted and
// kept (StoreWarnings::count, recent) and handed to the sink its owner
// installed, if any. The tools install printWarningToStderr.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_ENVIRONMENT_H
#define KILN_STORE_ENVIRONMENT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// What KILN_CACHE asks for.
enum class StoreModeKind {
  Off,       ///< "0": nothing kept between runs
  ReadWrite, ///< "1" (the default): read and write
  ReadOnly,  ///< "read-only": serve stored kernels, never write
};

class StoreWarnings;
class RemoteTier;
struct RemoteConfig;

/// The store's mode and limits.
struct StoreConfig {
  StoreModeKind Mode = StoreModeKind::ReadWrite;
  /// Size limit of the whole store (every namespace under the root), bytes.
  uint64_t MaxSize = uint64_t(1) << 30;
  /// Pruning goes down to this fraction of MaxSize.
  double LowWatermark = 0.8;
  /// fsync an entry before renaming it into place.
  bool Sync = false;

  /// Reads KILN_CACHE (0, 1, read-only), KILN_CACHE_MAX_SIZE (bytes with an
  /// optional K/M/G suffix) and KILN_CACHE_SYNC (0/1) now. An unrecognised
  /// value gets one warning into \p Warnings (when given) and the default.
  /// Persistence is Off in a setuid process (AT_SECURE), whatever KILN_CACHE
  /// says.
  static StoreConfig fromEnvironment(StoreWarnings *Warnings = nullptr);
};

/// Parses "4096", "512K", "64M", "1G" (powers of 1024; a trailing "B" or
/// "iB" is accepted). An error names the text.
llvm::Expected<uint64_t> parseStoreSize(llvm::StringRef Text);

/// The root the variables name now (KILN_CACHE_DIR, else
/// $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln); nullopt without HOME.
std::optional<std::string> defaultStoreRoot();

/// The default environment's settings: defaultStoreRoot() and
/// StoreConfig::fromEnvironment(), read once per process (thread-safe) and
/// immutable afterwards, with the warnings reading them produced.
struct DefaultStoreSettings {
  std::optional<std::string> Root;
  StoreConfig Config;
  /// KILN_REMOTE and its companions (RemoteConfig::fromEnvironment); null
  /// without KILN_REMOTE.
  std::shared_ptr<const RemoteConfig> Remote;
  std::vector<std::string> Warnings;
};
const DefaultStoreSettings &defaultStoreSettings();

/// While one is alive on a thread, the callbacks that thread raises through
/// runOrDefer (a StoreWarnings sink, the API's debug-print handlers) wait,
/// and run in order when the outermost one ends. Declared before a lock is
/// taken, it makes them run once the lock is released, so that a callback
/// may call back into Kiln (a warning raised under the store's lock once
/// deadlocked a sink that asked the device for its state).
class DeferCallbacks {
public:
  DeferCallbacks();
  ~DeferCallbacks();
  DeferCallbacks(const DeferCallbacks &) = delete;
  DeferCallbacks &operator=(const DeferCallbacks &) = delete;

  /// Runs \p F now, or when this thread's outermost DeferCallbacks ends.
  static void runOrDefer(std::function<void()> F);
};

/// Where a store's warnings go. Each warning is counted, the last MaxRecent
/// are kept, and it is handed to the sink when one is installed (none by
/// default), through DeferCallbacks::runOrDefer. Thread-safe.
class StoreWarnings {
public:
  using Sink = std::function<void(llvm::StringRef)>;
  static constexpr size_t MaxRecent = 16;

  explicit StoreWarnings(Sink S = {}) : S(std::move(S)) {}

  void warn(const llvm::Twine &Message);
  /// Warnings since this object was made.
  uint64_t count() const;
  /// The last MaxRecent warnings, oldest first.
  std::vector<std::string> recent() const;
  /// Replaces the sink (an empty one: counted and kept only).
  void setSink(Sink NewSink);

private:
  mutable std::mutex M;
  Sink S;
  uint64_t Count = 0;
  std::deque<std::string> Recent;
};

/// Prints "kiln: warning: MESSAGE" to stderr: the sink the tools install.
void printWarningToStderr(llvm::StringRef Message);

/// One store's environment: its root, configuration and warnings. A value
/// (copies share the warnings object).
class StoreEnvironment {
public:
  /// No root: no store.
  StoreEnvironment() : Warnings(std::make_shared<StoreWarnings>()) {}
  /// \p Root with \p Config; warnings go to \p Warnings (a fresh, silent
  /// one when null).
  StoreEnvironment(std::optional<std::string> Root, StoreConfig Config,
                   std::shared_ptr<StoreWarnings> Warnings = nullptr);

  /// The default environment (defaultStoreSettings()); the warnings reading
  /// the variables produced are replayed into \p Warnings (made when null).
  /// With KILN_REMOTE set, it has a remote tier of its own (a warning, and
  /// none, when the tier cannot be made: no key file, a bad address).
  static StoreEnvironment fromDefaults(
      std::shared_ptr<StoreWarnings> Warnings = nullptr);

  /// The remote tier behind the stores opened in this environment (null:
  /// none). Shared by copies of the environment.
  const std::shared_ptr<RemoteTier> &remote() const { return Remote; }
  void setRemote(std::shared_ptr<RemoteTier> R) { Remote = std::move(R); }
  /// Makes a tier for \p Config (its warnings go to this environment's)
  /// and sets it; an error (and no tier) when it cannot be made.
  llvm::Error useRemote(const RemoteConfig &Config);

  const std::optional<std::string> &root() const { return Root; }
  const StoreConfig &config() const { return Config; }
  StoreWarnings &warnings() const { return *Warnings; }
  const std::shared_ptr<StoreWarnings> &sharedWarnings() const {
    return Warnings;
  }
  /// Whether a store may be opened: a root, and a mode other than Off.
  bool enabled() const {
    return Root && !Root->empty() && Config.Mode != StoreModeKind::Off;
  }

private:
  std::optional<std::string> Root;
  StoreConfig Config;
  std::shared_ptr<StoreWarnings> Warnings;
  std::shared_ptr<RemoteTier> Remote;
};

} // namespace kiln

#endif // KILN_STORE_ENVIRONMENT_H
