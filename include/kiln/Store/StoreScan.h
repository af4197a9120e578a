//===- StoreScan.h - Walk, verify and prune a whole store -------*- C++ -*-===//
//
// What kiln-store and the amortised pruning see of a store: its namespaces
// and their entry files, found by name (only files named like entries are
// ever deleted). A namespace's dictionaries (zdict-*, kiln/Store/Dictionary.h)
// are not entries: they are never listed, counted or pruned as entries.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_STORESCAN_H
#define KILN_STORE_STORESCAN_H

#include "kiln/Store/Dictionary.h"
#include "kiln/Store/EntryFormat.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

struct EntryFile {
  std::string Path;
  std::string Name;
  uint64_t Size = 0;
  int64_t LastUseNs = 0; ///< modification time, ns since the epoch
};

struct NamespaceDir {
  std::string Backend;
  std::string Hex; ///< the folder's name: fingerprintHex(Description)
  std::string Path;
  std::string Description;        ///< fingerprint.txt, "" when missing
  std::vector<EntryFile> Entries; ///< sorted by name
  /// The folder's dictionaries, loaded when first asked for; shared by the
  /// copies of this NamespaceDir.
  std::shared_ptr<NamespaceDictionaries> Dictionaries;
  /// The namespace hash the folder name encodes.
  uint64_t namespaceHash() const;
};

/// Every namespace under \p Root (<root>/<backend>/<16 hex>/), sorted by
/// backend then hex. A missing root is an empty store.
std::vector<NamespaceDir> scanStore(llvm::StringRef Root);

/// Reads \p E of \p NS and checks it fully (header, key against the file
/// name, namespace, checksum, decompression with the namespace's dictionary
/// when it was compressed with one); an error says why it is bad ("needs
/// zstd dictionary <hex>" when that dictionary is missing or bad).
/// The host's CPU features are not checked: a store may hold entries for
/// other CPUs under their own namespaces.
llvm::Error verifyEntryFile(const NamespaceDir &NS, const EntryFile &E,
                            EntryHeader *Header = nullptr);

struct PruneResult {
  uint64_t BytesBefore = 0;
  uint64_t BytesAfter = 0;
  size_t Removed = 0;
};

/// Bytes of the entry files under \p Root.
uint64_t storeSize(llvm::StringRef Root);

/// Deletes the least recently used entries under \p Root (oldest
/// modification time first, ties by name) until at most \p Target bytes of
/// entries remain, and temporary files of failed writes (of entries and of
/// dictionaries) older than an hour. Dictionaries are kept: an entry left
/// may need one (pruneDictionaries removes those no entry names).
PruneResult pruneStore(llvm::StringRef Root, uint64_t Target);

} // namespace kiln

#endif // KILN_STORE_STORESCAN_H
