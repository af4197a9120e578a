//===- StoreScan.cpp - Walk, verify and prune a whole store --------------===//

#include "kiln/Store/StoreScan.h"
#include "kiln/Store/FileStore.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace kiln {

namespace {
/// The names in folder \p Path, sorted; empty when it cannot be read, and
/// then, unless it is simply missing, the folder and why in \p Unlisted.
std::vector<std::string> listFolder(const std::string &Path,
                                    std::vector<UnlistedFolder> *Unlisted) {
  std::vector<std::string> Names;
  DIR *D = ::opendir(Path.c_str());
  if (!D) {
    int Err = errno;
    if (Err != ENOENT && Unlisted)
      Unlisted->push_back({Path, std::strerror(Err)});
    return Names;
  }
  for (;;) {
    errno = 0;
    dirent *E = ::readdir(D);
    if (!E) {
      // A listing cut short is no listing: its entries are unknown.
      if (int Err = errno) {
        Names.clear();
        if (Unlisted)
          Unlisted->push_back({Path, std::strerror(Err)});
      }
      break;
    }
    StringRef N(E->d_name);
    if (N != "." && N != "..")
      Names.push_back(N.str());
  }
  ::closedir(D);
  std::sort(Names.begin(), Names.end());
  return Names;
}

bool isFolder(const std::string &Path, struct stat *Out = nullptr) {
  struct stat St;
  bool Is = ::lstat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
  if (Is && Out)
    *Out = St;
  return Is;
}

bool isHex16(StringRef S) {
  return S.size() == 16 && llvm::all_of(S, [](char C) {
           return isDigit(C) || (C >= 'a' && C <= 'f');
         });
}

/// The one line of \p Path, a fingerprint.txt of a folder owned by
/// \p Owner (possibly empty); none when it is not a file that can be
/// trusted to say it.
std::optional<std::string> readFingerprintText(const std::string &Path,
                                               uid_t Owner) {
  Expected<std::vector<uint8_t>> B =
      readStoreFile(Path, FingerprintMaxFileSize, Owner);
  if (!B) {
    consumeError(B.takeError());
    return std::nullopt;
  }
  return StringRef(reinterpret_cast<const char *>(B->data()), B->size())
      .rtrim("\n")
      .str();
}
} // namespace

uint64_t NamespaceDir::namespaceHash() const {
  uint64_t H = 0;
  (void)StringRef(Hex).getAsInteger(16, H);
  return H;
}

std::vector<NamespaceDir> scanStore(StringRef RootRef,
                                    std::vector<UnlistedFolder> *Unlisted) {
  std::string Root = RootRef.str();
  std::vector<NamespaceDir> Out;
  for (const std::string &Backend : listFolder(Root, Unlisted)) {
    std::string BDir = Root + "/" + Backend;
    if (!isFolder(BDir))
      continue;
    for (const std::string &Hex : listFolder(BDir, Unlisted)) {
      std::string NDir = BDir + "/" + Hex;
      struct stat DirSt;
      if (!isHex16(Hex) || !isFolder(NDir, &DirSt))
        continue;
      NamespaceDir NS;
      NS.Backend = Backend;
      NS.Hex = Hex;
      NS.Path = NDir;
      NS.Owner = DirSt.st_uid;
      // The folder is named after the text's hash; a text that does not
      // hash to it (an empty one included) would describe another CPU, and
      // make exported bundles of this namespace refused on import.
      if (std::optional<std::string> Text =
              readFingerprintText(NDir + "/" + FingerprintFileName, NS.Owner)) {
        if (fingerprintHex(*Text) == Hex)
          NS.Description = std::move(*Text);
        else
          NS.DescriptionFault =
              Text->empty() ? "it is empty"
                            : "its text hashes to " + fingerprintHex(*Text) +
                                  ", not to the folder's name " + Hex;
      }
      NS.Dictionaries = std::make_shared<NamespaceDictionaries>(NDir);
      std::vector<UnlistedFolder> NotListed;
      std::vector<std::string> Names = listFolder(NDir, &NotListed);
      if (!NotListed.empty()) { // its entries are unknown: not an empty one
        if (Unlisted)
          Unlisted->push_back(std::move(NotListed.front()));
        continue;
      }
      for (const std::string &Name : Names) {
        if (!keyFromEntryFileName(Name))
          continue;
        EntryFile E;
        E.Name = Name;
        E.Path = NDir + "/" + Name;
        struct stat St;
        if (::lstat(E.Path.c_str(), &St) != 0)
          continue; // gone meanwhile
        E.Fault = classifyStoreFile(St, EntryMaxFileSize, NS.Owner, E.Why);
        if (S_ISREG(St.st_mode))
          E.Size = uint64_t(St.st_size);
        E.LastUseNs =
            int64_t(St.st_mtim.tv_sec) * 1000000000 + St.st_mtim.tv_nsec;
        NS.Entries.push_back(std::move(E));
      }
      Out.push_back(std::move(NS));
    }
  }
  return Out;
}

Error verifyEntryFile(const NamespaceDir &NS, const EntryFile &E,
                      EntryHeader *Header) {
  if (E.Fault != StoreFileFault::None)
    return make_error<StoreFileError>(E.Fault, E.Why);
  Expected<std::vector<uint8_t>> File =
      readStoreFile(E.Path, EntryMaxFileSize, NS.Owner);
  if (!File)
    return File.takeError();
  EntryExpectations Expect;
  Expect.Key = keyFromEntryFileName(E.Name);
  Expect.NamespaceHash = NS.namespaceHash();
  std::shared_ptr<NamespaceDictionaries> Dicts =
      NS.Dictionaries ? NS.Dictionaries
                      : std::make_shared<NamespaceDictionaries>(NS.Path);
  Expect.Dictionary = Dicts->lookup();
  Expected<std::vector<uint8_t>> P = decodeEntry(*File, Expect, Header);
  if (!P)
    return P.takeError();
  return Error::success();
}

uint64_t storeSize(StringRef Root) {
  uint64_t Total = 0;
  for (const NamespaceDir &NS : scanStore(Root))
    for (const EntryFile &E : NS.Entries)
      Total += E.Size;
  return Total;
}

PruneResult pruneStore(StringRef Root, uint64_t Target) {
  PruneResult R;
  std::vector<EntryFile> All;
  time_t Now = ::time(nullptr);
  // unlink removes a link itself, never what it points to.
  auto Remove = [&](const std::string &Path) {
    if (::unlink(Path.c_str()) == 0 || errno == ENOENT)
      return true;
    R.Failures.push_back(Path + ": " + std::strerror(errno));
    return false;
  };
  for (NamespaceDir &NS : scanStore(Root, &R.Unlisted)) {
    for (EntryFile &E : NS.Entries) {
      switch (E.Fault) {
      case StoreFileFault::Link:
      case StoreFileFault::Special:
      case StoreFileFault::TooLarge:
        // Nothing can read it: removed whatever its age.
        if (Remove(E.Path))
          ++R.RemovedBad;
        continue;
      case StoreFileFault::Folder:
        continue; // not a file of ours to remove
      default:
        R.BytesBefore += E.Size;
        All.push_back(std::move(E));
      }
    }
    // Temporary files a crashed writer left behind (of an entry, or of a
    // dictionary being installed), or links in their place.
    for (const std::string &Name : listFolder(NS.Path, nullptr)) {
      StringRef N(Name);
      if (!(N.starts_with("kiln-") || N.starts_with("zdict-")) ||
          !N.contains(".tmp-"))
        continue;
      std::string P = NS.Path + "/" + Name;
      struct stat St;
      if (::lstat(P.c_str(), &St) == 0 && !S_ISDIR(St.st_mode) &&
          Now - St.st_mtime > 3600)
        Remove(P);
    }
  }
  std::sort(All.begin(), All.end(), [](const EntryFile &A, const EntryFile &B) {
    return A.LastUseNs != B.LastUseNs ? A.LastUseNs < B.LastUseNs
                                      : A.Name < B.Name;
  });
  R.BytesAfter = R.BytesBefore;
  for (const EntryFile &E : All) {
    if (R.BytesAfter <= Target)
      break;
    if (Remove(E.Path)) {
      R.BytesAfter -= E.Size;
      ++R.Removed;
    }
  }
  return R;
}

} // namespace kiln
