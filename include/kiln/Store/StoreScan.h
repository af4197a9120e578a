//===- StoreScan.h - Walk, verify and prune a whole store -------*- C++ -*-===//
//
// What kiln-store and the amortised pruning see of a store: its namespaces
// and their entry files, found by name (only files named like entries are
// ever deleted). A namespace's dictionaries (zdict-*, kiln/Store/Dictionary.h)
// are not entries: they are never listed, counted or pruned as entries.
// Nothing is followed through a link: a link, FIFO, socket, device or folder
// named like an entry is listed with its fault, never opened.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_STORESCAN_H
#define KILN_STORE_STORESCAN_H

#include "kiln/Store/Dictionary.h"
#include "kiln/Store/EntryFormat.h"
#include "kiln/Store/FileStore.h"

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
  uint64_t Size = 0;     ///< 0 unless a regular file
  int64_t LastUseNs = 0; ///< modification time, ns since the epoch
  /// Why it cannot be an entry, from its lstat (classifyStoreFile with
  /// EntryMaxFileSize and the namespace folder's owner): a link, folder,
  /// FIFO, socket or device, another user's file, a file too large. None
  /// for a regular file that may be one (its contents not yet checked).
  StoreFileFault Fault = StoreFileFault::None;
  std::string Why; ///< the fault in words, "" with None
};

struct NamespaceDir {
  std::string Backend;
  std::string Hex; ///< the folder's name: fingerprintHex(Description)
  std::string Path;
  /// fingerprint.txt, "" when missing, not a regular file of the folder's
  /// owner within FingerprintMaxFileSize, or not the text the folder is
  /// named after.
  std::string Description;
  /// Why a fingerprint.txt that could be read was not taken as the
  /// Description: its text does not hash to the folder's name (a damaged
  /// or hand-edited file). "" otherwise.
  std::string DescriptionFault;
  uid_t Owner = 0; ///< the folder's owner: its files' expected owner
  std::vector<EntryFile> Entries; ///< sorted by name
  /// The folder's dictionaries, loaded when first asked for; shared by the
  /// copies of this NamespaceDir.
  std::shared_ptr<NamespaceDictionaries> Dictionaries;
  /// The namespace hash the folder name encodes.
  uint64_t namespaceHash() const;
};

/// A folder of the store that exists but could not be listed.
struct UnlistedFolder {
  std::string Path;
  std::string Why; ///< strerror of opendir ("Permission denied")
};

/// Every namespace under \p Root (<root>/<backend>/<16 hex>/), sorted by
/// backend then hex. A missing root is an empty store. Folders that exist
/// but cannot be listed (the root, a backend's or a namespace's) are
/// skipped, and named in \p Unlisted when given: a namespace whose folder
/// cannot be listed is not in the result, since its entries are unknown.
std::vector<NamespaceDir>
scanStore(llvm::StringRef Root,
          std::vector<UnlistedFolder> *Unlisted = nullptr);

/// Reads \p E of \p NS and checks it fully (header, key against the file
/// name, namespace, checksum, decompression with the namespace's dictionary
/// when it was compressed with one); an error says why it is bad ("needs
/// zstd dictionary <hex>" when that dictionary is missing or bad, E.Why for
/// a file with a fault, which is never opened).
/// The host's CPU features are not checked: a store may hold entries for
/// other CPUs under their own namespaces.
llvm::Error verifyEntryFile(const NamespaceDir &NS, const EntryFile &E,
                            EntryHeader *Header = nullptr);

struct PruneResult {
  uint64_t BytesBefore = 0;
  uint64_t BytesAfter = 0;
  size_t Removed = 0;
  /// Links, FIFOs, sockets, devices and too large files named like entries,
  /// removed whatever their age (not counted in Removed).
  size_t RemovedBad = 0;
  /// "PATH: why" for each file it meant to remove and could not.
  std::vector<std::string> Failures;
  /// Folders it could not list: their entries were neither counted nor
  /// pruned.
  std::vector<UnlistedFolder> Unlisted;
};

/// Bytes of the regular entry files under \p Root.
uint64_t storeSize(llvm::StringRef Root);

/// Deletes the files named like entries that cannot be entries (links, never
/// followed, FIFOs, sockets, devices, files over EntryMaxFileSize), then the
/// least recently used entries under \p Root (oldest modification time
/// first, ties by name) until at most \p Target bytes of entries remain,
/// and temporary files of failed writes (of entries and of dictionaries)
/// older than an hour. Dictionaries are kept: an entry left may need one
/// (pruneDictionaries removes those no entry names). A folder named like an
/// entry is left alone.
PruneResult pruneStore(llvm::StringRef Root, uint64_t Target);

} // namespace kiln

#endif // KILN_STORE_STORESCAN_H
