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
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace kiln {

namespace {
/// The names in folder \p Path, sorted; empty when it cannot be read.
std::vector<std::string> listFolder(const std::string &Path) {
  std::vector<std::string> Names;
  DIR *D = ::opendir(Path.c_str());
  if (!D)
    return Names;
  while (dirent *E = ::readdir(D)) {
    StringRef N(E->d_name);
    if (N != "." && N != "..")
      Names.push_back(N.str());
  }
  ::closedir(D);
  std::sort(Names.begin(), Names.end());
  return Names;
}

bool isFolder(const std::string &Path) {
  struct stat St;
  return ::lstat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

bool isHex16(StringRef S) {
  return S.size() == 16 && llvm::all_of(S, [](char C) {
           return isDigit(C) || (C >= 'a' && C <= 'f');
         });
}

std::string readText(const std::string &Path) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0)
    return std::string();
  std::string S;
  char Buf[1024];
  ssize_t N;
  while (S.size() < 65536 && (N = ::read(FD, Buf, sizeof(Buf))) > 0)
    S.append(Buf, size_t(N));
  ::close(FD);
  return StringRef(S).rtrim("\n").str();
}
} // namespace

uint64_t NamespaceDir::namespaceHash() const {
  uint64_t H = 0;
  (void)StringRef(Hex).getAsInteger(16, H);
  return H;
}

std::vector<NamespaceDir> scanStore(StringRef RootRef) {
  std::string Root = RootRef.str();
  std::vector<NamespaceDir> Out;
  for (const std::string &Backend : listFolder(Root)) {
    std::string BDir = Root + "/" + Backend;
    if (!isFolder(BDir))
      continue;
    for (const std::string &Hex : listFolder(BDir)) {
      std::string NDir = BDir + "/" + Hex;
      if (!isHex16(Hex) || !isFolder(NDir))
        continue;
      NamespaceDir NS;
      NS.Backend = Backend;
      NS.Hex = Hex;
      NS.Path = NDir;
      NS.Description = readText(NDir + "/" + FingerprintFileName);
      NS.Dictionaries = std::make_shared<NamespaceDictionaries>(NDir);
      for (const std::string &Name : listFolder(NDir)) {
        if (!keyFromEntryFileName(Name))
          continue;
        EntryFile E;
        E.Name = Name;
        E.Path = NDir + "/" + Name;
        struct stat St;
        if (::lstat(E.Path.c_str(), &St) != 0 || !S_ISREG(St.st_mode))
          continue;
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
  int FD = ::open(E.Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot read it: %s", std::strerror(errno));
  std::vector<uint8_t> File;
  uint8_t Buf[65536];
  ssize_t N;
  while ((N = ::read(FD, Buf, sizeof(Buf))) > 0)
    File.insert(File.end(), Buf, Buf + N);
  int Err = errno;
  ::close(FD);
  if (N < 0)
    return createStringError(std::error_code(Err, std::generic_category()),
                             "cannot read it: %s", std::strerror(Err));
  EntryExpectations Expect;
  Expect.Key = keyFromEntryFileName(E.Name);
  Expect.NamespaceHash = NS.namespaceHash();
  std::shared_ptr<NamespaceDictionaries> Dicts =
      NS.Dictionaries ? NS.Dictionaries
                      : std::make_shared<NamespaceDictionaries>(NS.Path);
  Expect.Dictionary = Dicts->lookup();
  Expected<std::vector<uint8_t>> P = decodeEntry(File, Expect, Header);
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
  for (NamespaceDir &NS : scanStore(Root)) {
    for (EntryFile &E : NS.Entries) {
      R.BytesBefore += E.Size;
      All.push_back(std::move(E));
    }
    // Temporary files a crashed writer left behind (of an entry, or of a
    // dictionary being installed).
    for (const std::string &Name : listFolder(NS.Path)) {
      StringRef N(Name);
      if (!(N.starts_with("kiln-") || N.starts_with("zdict-")) ||
          !N.contains(".tmp-"))
        continue;
      std::string P = NS.Path + "/" + Name;
      struct stat St;
      if (::lstat(P.c_str(), &St) == 0 && S_ISREG(St.st_mode) &&
          Now - St.st_mtime > 3600)
        ::unlink(P.c_str());
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
    if (::unlink(E.Path.c_str()) == 0 || errno == ENOENT) {
      R.BytesAfter -= E.Size;
      ++R.Removed;
    }
  }
  return R;
}

} // namespace kiln
