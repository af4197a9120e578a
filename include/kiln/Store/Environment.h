//===- Environment.h - Where the store lives, and how it is configured -*- C++
//-*-===//
//
// The store's root is the *environment* (ARCHITECTURE.md §5): KILN_CACHE_DIR,
// else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln. setStoreRoot switches it
// at run time and bumps a generation counter; stores reopen under the new
// root and kernel loaders drop what they loaded from the old one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_ENVIRONMENT_H
#define KILN_STORE_ENVIRONMENT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace kiln {

/// What KILN_CACHE asks for.
enum class StoreModeKind {
  Off,       ///< "0": nothing kept between runs
  ReadWrite, ///< "1" (the default): read and write
  ReadOnly,  ///< "read-only": serve stored kernels, never write
};

/// The store's configuration, from the environment or set by a tool.
struct StoreConfig {
  StoreModeKind Mode = StoreModeKind::ReadWrite;
  /// Size limit of the whole store (every namespace under the root), bytes.
  uint64_t MaxSize = uint64_t(1) << 30;
  /// Pruning goes down to this fraction of MaxSize.
  double LowWatermark = 0.8;
  /// fsync an entry before renaming it into place.
  bool Sync = false;

  /// Reads KILN_CACHE (0, 1, read-only), KILN_CACHE_MAX_SIZE (bytes with an
  /// optional K/M/G suffix) and KILN_CACHE_SYNC (0/1). An unrecognised value
  /// gets one warning and the default. Persistence is Off in a setuid
  /// process (AT_SECURE), whatever KILN_CACHE says.
  static StoreConfig fromEnvironment();
};

/// Parses "4096", "512K", "64M", "1G" (powers of 1024; a trailing "B" or
/// "iB" is accepted). An error names the text.
llvm::Expected<uint64_t> parseStoreSize(llvm::StringRef Text);

/// The current root: the one setStoreRoot gave, else the default above;
/// nullopt when none can be found (no HOME) or persistence is switched off
/// with setStoreRoot(nullopt, true).
std::optional<std::string> storeRoot();

/// The root the environment variables name, ignoring setStoreRoot.
std::optional<std::string> defaultStoreRoot();

/// Switches the root (nullopt: back to the default) and bumps the
/// generation. Thread-safe.
void setStoreRoot(std::optional<std::string> Root);

/// Counts setStoreRoot calls: a loaded kernel belongs to one generation.
uint64_t storeGeneration();

/// Prints "kiln: warning: MESSAGE" to stderr, or hands MESSAGE to the handler
/// set below. Thread-safe.
void storeWarning(const llvm::Twine &Message);

/// Replaces where storeWarning goes (tests count warnings); an empty
/// function restores stderr. Returns the previous handler.
std::function<void(llvm::StringRef)>
setStoreWarningHandler(std::function<void(llvm::StringRef)> Handler);

} // namespace kiln

#endif // KILN_STORE_ENVIRONMENT_H
