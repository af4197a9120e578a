//===- Bundle.h - A store's namespaces in one file --------------*- C++ -*-===//
//
// A bundle ships a warm store to machines with the same CPU fingerprint:
// "KILNBNDL", a version, then per namespace its backend, folder name,
// fingerprint text, the zstd dictionaries its entries need (version 2) and
// entry files, and an xxh3 of everything before it (docs/Store.md).
// Importing keeps each entry under its own namespace, so a bundle made for
// another CPU is never served to this one, and installs the dictionaries
// the imported entries need (never as the namespace's current one).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_BUNDLE_H
#define KILN_STORE_BUNDLE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace kiln {

class StoreWarnings;

/// The largest bundle written or read: it is read whole, and checked before.
inline constexpr uint64_t BundleMaxFileSize = uint64_t(4) << 30;

struct BundleSummary {
  size_t Namespaces = 0;
  size_t Entries = 0;
  /// Bad entries left out (export); entries already present or bad (import).
  size_t Skipped = 0;
  /// Dictionaries carried (export) or installed (import).
  size_t Dictionaries = 0;
  /// Namespaces refused whole (import): a fingerprint text that does not
  /// hash to the namespace's name, or a namespace folder that is not a
  /// folder of this user (a link, another user's).
  size_t Refused = 0;
  /// The entries of the refused namespaces (import; not in Skipped).
  size_t RefusedEntries = 0;
};

/// Writes the namespaces of \p Root whose "backend/hex" starts with
/// \p Filter (all when empty) to \p BundlePath. Bad entries are left out
/// (an entry whose dictionary is missing is bad). Written as version 1 when
/// no entry needs a dictionary, else as version 2.
llvm::Expected<BundleSummary> exportBundle(llvm::StringRef Root,
                                           llvm::StringRef BundlePath,
                                           llvm::StringRef Filter = "");

/// Adds the entries of \p BundlePath (version 1 or 2) to \p Root, each
/// checked first (decoded with the bundle's dictionaries, else the store's);
/// an entry already present is kept as it is, and the dictionary an entry
/// needs is installed before it. An error for a file that is not a valid
/// bundle, not a regular file, or larger than BundleMaxFileSize (checked
/// before it is read; nothing is written then). Each bad entry or
/// dictionary left out, and each namespace refused (BundleSummary::Refused),
/// is one warning into \p Warnings, when given.
llvm::Expected<BundleSummary> importBundle(llvm::StringRef Root,
                                           llvm::StringRef BundlePath,
                                           StoreWarnings *Warnings = nullptr);

} // namespace kiln

#endif // KILN_STORE_BUNDLE_H
