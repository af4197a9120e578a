//===- Bundle.h - A store's namespaces in one file --------------*- C++ -*-===//
//
// A bundle ships a warm store to machines with the same CPU fingerprint:
// "KILNBNDL", a version, then per namespace its backend, folder name,
// fingerprint text and entry files, and an xxh3 of everything before it
// (docs/Store.md). Importing keeps each entry under its own namespace, so a
// bundle made for another CPU is never served to this one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_BUNDLE_H
#define KILN_STORE_BUNDLE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>

namespace kiln {

class StoreWarnings;

struct BundleSummary {
  size_t Namespaces = 0;
  size_t Entries = 0;
  size_t Skipped = 0; ///< bad entries left out (export) or refused (import)
};

/// Writes the namespaces of \p Root whose "backend/hex" starts with
/// \p Filter (all when empty) to \p BundlePath. Bad entries are left out.
llvm::Expected<BundleSummary> exportBundle(llvm::StringRef Root,
                                           llvm::StringRef BundlePath,
                                           llvm::StringRef Filter = "");

/// Adds the entries of \p BundlePath to \p Root, each checked first; an
/// entry already present is kept as it is. An error for a file that is not
/// a valid bundle (nothing is written then). Each bad entry left out is
/// one warning into \p Warnings, when given.
llvm::Expected<BundleSummary> importBundle(llvm::StringRef Root,
                                           llvm::StringRef BundlePath,
                                           StoreWarnings *Warnings = nullptr);

} // namespace kiln

#endif // KILN_STORE_BUNDLE_H
