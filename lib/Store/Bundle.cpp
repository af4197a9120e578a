//===- Bundle.cpp - A store's namespaces in one file ---------------------===//

#include "kiln/Store/Bundle.h"
#include "kiln/Store/Dictionary.h"
#include "kiln/Store/Environment.h"
#include "kiln/Store/FileStore.h"
#include "kiln/Store/StoreScan.h"
#include "WriteAll.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::support::endian;

namespace kiln {

static constexpr char BundleMagic[8] = {'K', 'I', 'L', 'N', 'B', 'N', 'D', 'L'};
/// Version 1 has no dictionaries; version 2 carries, per namespace, the
/// dictionaries its entries need. A bundle without any is written as
/// version 1, which older readers take too.
static constexpr uint32_t BundleVersionPlain = 1;
static constexpr uint32_t BundleVersionDictionaries = 2;

namespace {
void put32(std::string &S, uint32_t V) {
  char B[4];
  write32le(B, V);
  S.append(B, 4);
}
void put64(std::string &S, uint64_t V) {
  char B[8];
  write64le(B, V);
  S.append(B, 8);
}
void putStr(std::string &S, StringRef T) {
  put32(S, uint32_t(T.size()));
  S.append(T.data(), T.size());
}

/// A bounds-checked reader over the bundle's bytes.
struct Reader {
  StringRef Data;
  size_t Pos = 0;
  bool Bad = false;
  bool need(uint64_t N) {
    if (Bad || N > Data.size() - Pos)
      Bad = true;
    return !Bad;
  }
  uint32_t u32() {
    if (!need(4))
      return 0;
    uint32_t V = read32le(Data.data() + Pos);
    Pos += 4;
    return V;
  }
  uint64_t u64() {
    if (!need(8))
      return 0;
    uint64_t V = read64le(Data.data() + Pos);
    Pos += 8;
    return V;
  }
  StringRef bytes(uint64_t N) {
    if (!need(N))
      return StringRef();
    StringRef S = Data.substr(Pos, N);
    Pos += N;
    return S;
  }
  StringRef str() { return bytes(u32()); }
};

bool isPlain(StringRef S) {
  if (S.empty() || S == "." || S == ".." || S.size() > 64)
    return false;
  return llvm::all_of(
      S, [](char C) { return isAlnum(C) || C == '-' || C == '_' || C == '.'; });
}

/// A bundle file mapped read-only: its bytes are never copied, so that a
/// file of any size within BundleMaxFileSize is checked and imported in
/// the memory its entries take, and one that cannot be mapped (an address
/// space limit) is an error, never an allocation that aborts.
struct MappedBundle {
  sys::fs::mapped_file_region Region;
  StringRef bytes() const {
    return StringRef(Region.const_data(), Region.size());
  }
};

/// The file \p Path (the user's path: a link to a bundle is followed),
/// checked to be a regular file within BundleMaxFileSize before it is
/// opened and again once it is (neither a FIFO nor a device such as
/// /dev/zero is ever read), its magic read and checked before the rest is
/// mapped. \p Invalid makes the error of a file that is not a bundle.
Expected<MappedBundle>
mapBundleFile(const std::string &Path,
              function_ref<Error(const Twine &)> Invalid) {
  auto Refuse = [&](const Twine &Why) {
    return createStringError(std::make_error_code(std::errc::invalid_argument),
                             "cannot read '" + Path + "': " + Why);
  };
  auto SysError = [&](int E, const char *What) {
    return createStringError(std::error_code(E, std::generic_category()),
                             "cannot %s '%s': %s", What, Path.c_str(),
                             std::strerror(E));
  };
  auto Check = [&](const struct stat &St) -> std::optional<std::string> {
    if (!S_ISREG(St.st_mode))
      return std::string("not a regular file");
    if (uint64_t(St.st_size) > BundleMaxFileSize)
      return "larger than " + std::to_string(BundleMaxFileSize) +
             " bytes (it has " + std::to_string(uint64_t(St.st_size)) + ")";
    return std::nullopt;
  };
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return SysError(errno, "read");
  if (std::optional<std::string> Why = Check(St))
    return Refuse(*Why);
  int FD = ::open(Path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return SysError(errno, "read");
  auto Close = make_scope_exit([&] { ::close(FD); });
  if (::fstat(FD, &St) != 0)
    return SysError(errno, "read");
  if (std::optional<std::string> Why = Check(St)) // replaced meanwhile
    return Refuse(*Why);
  // The magic first: a file that is not a bundle is refused from its
  // first bytes, whatever its size.
  char Magic[sizeof(BundleMagic)];
  ssize_t N;
  do
    N = ::pread(FD, Magic, sizeof(Magic), 0);
  while (N < 0 && errno == EINTR);
  if (N < 0)
    return SysError(errno, "read");
  if (St.st_size < 24 || N != ssize_t(sizeof(Magic)) ||
      std::memcmp(Magic, BundleMagic, sizeof(Magic)) != 0)
    return Invalid("bad magic");
  std::error_code EC;
  MappedBundle B{sys::fs::mapped_file_region(
      sys::fs::convertFDToNativeFile(FD), sys::fs::mapped_file_region::readonly,
      size_t(St.st_size), 0, EC)};
  if (EC)
    return createStringError(EC, "cannot map '%s' (%llu bytes): %s",
                             Path.c_str(), (unsigned long long)St.st_size,
                             EC.message().c_str());
  return B;
}

/// Makes the folder \p Path (0700) if it is missing and checks that it is a
/// folder of this user, not a link: "" when it may be written into, else
/// why not. \p MakePrivate: chmod 0700 (through the folder opened, never
/// through a link). An error when it cannot be made.
Expected<std::string> ownFolder(const std::string &Path, bool MakePrivate) {
  if (::mkdir(Path.c_str(), 0700) != 0 && errno != EEXIST)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot create '%s': %s", Path.c_str(),
                             std::strerror(errno));
  int FD = ::open(Path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (FD < 0) {
    int E = errno;
    struct stat L;
    if (::lstat(Path.c_str(), &L) == 0 && S_ISLNK(L.st_mode))
      return std::string("it is a symbolic link");
    return std::string(E == ENOTDIR ? "it is not a folder" : std::strerror(E));
  }
  struct stat St;
  std::string Why;
  if (::fstat(FD, &St) != 0)
    Why = std::string("cannot inspect it: ") + std::strerror(errno);
  else if (St.st_uid != ::geteuid())
    Why = "it is owned by another user";
  else if (MakePrivate && ::fchmod(FD, 0700) != 0)
    Why = std::string("cannot make it private: ") + std::strerror(errno);
  ::close(FD);
  return Why;
}

/// Writes \p Bytes to \p Path through a temporary file; false (errno) on
/// failure; an existing \p Path is left alone (returns true, \p Existed set).
bool writeNew(const std::string &Path, StringRef Bytes, bool &Existed) {
  static std::atomic<uint64_t> Counter{0};
  Existed = false;
  std::string Tmp = Path + ".tmp-" + std::to_string(::getpid()) + "-" +
                    std::to_string(Counter.fetch_add(1));
  int FD = ::open(Tmp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (FD < 0)
    return false;
  if (!writeAllFd(FD, Bytes.data(), Bytes.size())) {
    int E = errno;
    ::close(FD);
    ::unlink(Tmp.c_str());
    errno = E;
    return false;
  }
  ::close(FD);
  int R = ::link(Tmp.c_str(), Path.c_str());
  int E = errno;
  ::unlink(Tmp.c_str());
  if (R != 0 && E == EEXIST) {
    Existed = true;
    return true;
  }
  errno = E;
  return R == 0;
}
} // namespace

Expected<BundleSummary> exportBundle(StringRef Root, StringRef BundlePath,
                                     StringRef Filter) {
  BundleSummary Sum;
  std::vector<UnlistedFolder> Unlisted;
  std::vector<NamespaceDir> All = scanStore(Root, &Unlisted);
  // A bundle missing entries nobody could list is no bundle of the store.
  if (!Unlisted.empty())
    return createStringError(
        std::errc::permission_denied, "cannot list '%s': %s; nothing exported",
        Unlisted.front().Path.c_str(), Unlisted.front().Why.c_str());
  std::vector<const NamespaceDir *> Chosen;
  for (const NamespaceDir &NS : All)
    if (StringRef(NS.Backend + "/" + NS.Hex).starts_with(Filter))
      Chosen.push_back(&NS);
  if (Chosen.empty())
    return createStringError(
        std::errc::no_such_file_or_directory,
        Filter.empty() ? "no namespace in the store at '%s'"
                       : "no namespace matching '%s' in the store",
        Filter.empty() ? Root.str().c_str() : Filter.str().c_str());

  // Each namespace's entries, and the dictionaries they need: those travel
  // with them, so the entries are shipped as they are stored.
  struct Part {
    const NamespaceDir *NS;
    std::string Entries;
    uint32_t Count = 0;
    std::vector<std::shared_ptr<const EntryDictionary>> Dicts;
  };
  std::vector<Part> Parts;
  bool AnyDictionary = false;
  for (const NamespaceDir *NS : Chosen) {
    Part P{NS, {}, 0, {}};
    std::set<uint32_t> Needed;
    for (const EntryFile &E : NS->Entries) {
      EntryHeader H;
      if (Error Err = verifyEntryFile(*NS, E, &H)) {
        consumeError(std::move(Err));
        ++Sum.Skipped;
        continue;
      }
      Expected<std::vector<uint8_t>> Buf =
          readStoreFile(E.Path, EntryMaxFileSize, NS->Owner);
      if (!Buf) {
        consumeError(Buf.takeError());
        ++Sum.Skipped;
        continue;
      }
      // The file read again may not be the one verified (a concurrent
      // retraining): ship it only if it names the same dictionary.
      Expected<EntryHeader> Again = parseEntryHeader(*Buf);
      if (!Again || Again->DictionaryId != H.DictionaryId) {
        if (!Again)
          consumeError(Again.takeError());
        ++Sum.Skipped;
        continue;
      }
      if (H.DictionaryId)
        Needed.insert(H.DictionaryId);
      putStr(P.Entries, E.Name);
      put64(P.Entries, Buf->size());
      P.Entries.append(reinterpret_cast<const char *>(Buf->data()),
                       Buf->size());
      ++P.Count;
    }
    for (uint32_t Id : Needed) {
      // verifyEntryFile loaded it through NS->Dictionaries: cached.
      Expected<std::shared_ptr<const EntryDictionary>> D =
          NS->Dictionaries->load(Id);
      if (!D)
        return D.takeError();
      P.Dicts.push_back(*D);
    }
    AnyDictionary |= !P.Dicts.empty();
    Parts.push_back(std::move(P));
  }

  std::string Out(BundleMagic, 8);
  put32(Out, AnyDictionary ? BundleVersionDictionaries : BundleVersionPlain);
  put32(Out, uint32_t(Parts.size()));
  for (const Part &P : Parts) {
    putStr(Out, P.NS->Backend);
    putStr(Out, P.NS->Hex);
    putStr(Out, P.NS->Description);
    if (AnyDictionary) {
      put32(Out, uint32_t(P.Dicts.size()));
      for (const auto &D : P.Dicts) {
        put32(Out, D->id());
        putStr(Out, StringRef(reinterpret_cast<const char *>(D->bytes().data()),
                              D->bytes().size()));
      }
      Sum.Dictionaries += P.Dicts.size();
    }
    put32(Out, P.Count);
    Out += P.Entries;
    Sum.Entries += P.Count;
    ++Sum.Namespaces;
  }
  put64(Out, xxh3_64bits(Out));
  if (Out.size() > BundleMaxFileSize)
    return createStringError(std::make_error_code(std::errc::file_too_large),
                             "the bundle would have %zu bytes, more than the "
                             "%llu a bundle may have",
                             Out.size(),
                             (unsigned long long)BundleMaxFileSize);
  std::error_code EC;
  raw_fd_ostream OS(BundlePath, EC, sys::fs::OF_None);
  if (EC)
    return createStringError(EC, "cannot write '%s': %s",
                             BundlePath.str().c_str(), EC.message().c_str());
  OS << Out;
  OS.close();
  if (std::error_code WriteError = OS.error()) {
    // Taken, so that the stream's destructor does not report it again as
    // an LLVM fatal error ("IO failure on output stream").
    OS.clear_error();
    return createStringError(WriteError, "cannot write '%s': %s",
                             BundlePath.str().c_str(),
                             WriteError.message().c_str());
  }
  return Sum;
}

Expected<BundleSummary> importBundle(StringRef Root, StringRef BundlePath,
                                     StoreWarnings *Warnings) {
  auto Invalid = [&](const Twine &Why) -> Error {
    return createStringError(
        std::make_error_code(std::errc::illegal_byte_sequence),
        "'" + BundlePath + "' is not a valid bundle: " + Why);
  };
  Expected<MappedBundle> Mapped = mapBundleFile(BundlePath.str(), Invalid);
  if (!Mapped)
    return Mapped.takeError();
  StringRef Data = Mapped->bytes();
  if (read64le(Data.data() + Data.size() - 8) != xxh3_64bits(Data.drop_back(8)))
    return Invalid("checksum mismatch");
  Reader R{Data.drop_back(8), 8};
  uint32_t Version = R.u32();
  if (Version != BundleVersionPlain && Version != BundleVersionDictionaries)
    return Invalid("unsupported version " + Twine(Version));

  // Parse everything first: a bad bundle writes nothing.
  struct Item {
    std::string Backend, Hex, Description;
    /// Why the namespace is refused whole; "" when it is not.
    std::string Refused;
    std::vector<std::pair<uint32_t, StringRef>> Dicts;
    std::vector<std::pair<std::string, StringRef>> Entries;
  };
  std::vector<Item> Items;
  uint32_t NSCount = R.u32();
  for (uint32_t I = 0; I != NSCount && !R.Bad; ++I) {
    Item It;
    It.Backend = R.str().str();
    It.Hex = R.str().str();
    It.Description = R.str().str();
    if (R.Bad)
      break;
    if (!isPlain(It.Backend) || It.Hex.size() != 16 ||
        !llvm::all_of(It.Hex, [](char C) {
          return isDigit(C) || (C >= 'a' && C <= 'f');
        }))
      return Invalid("bad namespace name '" + It.Backend + "/" + It.Hex + "'");
    // The folder's name is the hash of the fingerprint text: a text that
    // does not hash to it would describe another CPU than the entries'.
    if (!It.Description.empty() && fingerprintHex(It.Description) != It.Hex)
      It.Refused = "its fingerprint text hashes to " +
                   fingerprintHex(It.Description) + ", not " + It.Hex;
    if (Version == BundleVersionDictionaries) {
      uint32_t ND = R.u32();
      for (uint32_t J = 0; J != ND && !R.Bad; ++J) {
        uint32_t Id = R.u32();
        StringRef Bytes = R.str();
        It.Dicts.push_back({Id, Bytes});
      }
    }
    uint32_t N = R.u32();
    for (uint32_t J = 0; J != N && !R.Bad; ++J) {
      std::string Name = R.str().str();
      StringRef Bytes = R.bytes(R.u64());
      if (!R.Bad && !keyFromEntryFileName(Name))
        return Invalid("bad entry name '" + Name + "'");
      It.Entries.push_back({Name, Bytes});
    }
    Items.push_back(std::move(It));
  }
  if (R.Bad || R.Pos != R.Data.size())
    return Invalid("truncated or malformed contents");

  BundleSummary Sum;
  auto Warn = [&](const Twine &Message) {
    if (Warnings)
      Warnings->warn(Message);
  };
  for (const Item &It : Items) {
    std::string Where = It.Backend + "/" + It.Hex + "/";
    auto Refuse = [&](const Twine &Why) {
      Warn("bundle namespace " + It.Backend + "/" + It.Hex + " refused: " +
           Why + "; none of its " + Twine(It.Entries.size()) +
           " entries imported");
      ++Sum.Refused;
      Sum.RefusedEntries += It.Entries.size();
    };
    if (!It.Refused.empty()) {
      Refuse(It.Refused);
      continue;
    }
    // The root is the user's (its parents may be links); below it nothing
    // is followed through a link or written into another user's folder.
    std::string BackendDir = Root.str() + "/" + It.Backend;
    std::string Dir = BackendDir + "/" + It.Hex;
    std::error_code EC =
        sys::fs::create_directories(Root, true, sys::fs::perms::owner_all);
    if (EC)
      return createStringError(EC, "cannot create '%s': %s",
                               Root.str().c_str(), EC.message().c_str());
    Expected<std::string> BackendWhy = ownFolder(BackendDir, false);
    if (!BackendWhy)
      return BackendWhy.takeError();
    if (!BackendWhy->empty()) {
      Refuse(BackendDir + ": " + *BackendWhy);
      continue;
    }
    // Existing namespace folders are made 0700 too, as ours are.
    Expected<std::string> DirWhy = ownFolder(Dir, true);
    if (!DirWhy)
      return DirWhy.takeError();
    if (!DirWhy->empty()) {
      Refuse(Dir + ": " + *DirWhy);
      continue;
    }
    if (!It.Description.empty()) {
      bool Existed;
      writeNew(Dir + "/" + FingerprintFileName, It.Description + "\n", Existed);
    }
    NamespaceDir NS;
    NS.Backend = It.Backend;
    NS.Hex = It.Hex;
    NS.Path = Dir;
    uint64_t NSHash = NS.namespaceHash();
    // The bundle's dictionaries, checked; a bad one is left out, and so
    // are the entries that need it.
    std::map<uint32_t, std::shared_ptr<const EntryDictionary>> Carried;
    for (const auto &[Id, Bytes] : It.Dicts) {
      Expected<std::shared_ptr<const EntryDictionary>> D =
          EntryDictionary::fromBytes(ArrayRef<uint8_t>(
              reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size()));
      if (!D) {
        Warn("bundle dictionary " + Where + dictionaryFileName(Id) +
             " left out: " + toString(D.takeError()));
        continue;
      }
      if ((*D)->id() != Id) {
        Warn("bundle dictionary " + Where + dictionaryFileName(Id) +
             " left out: it holds dictionary " + dictionaryFileName((*D)->id()));
        continue;
      }
      Carried[Id] = *D;
    }
    NamespaceDictionaries Local(Dir);
    std::set<uint32_t> Installed;
    for (const auto &[Name, Bytes] : It.Entries) {
      std::string Path = Dir + "/" + Name;
      struct stat St;
      if (::lstat(Path.c_str(), &St) == 0) {
        ++Sum.Skipped; // kept as it is (a reader removes it if it is bad)
        continue;
      }
      EntryExpectations Expect;
      Expect.Key = keyFromEntryFileName(Name);
      Expect.NamespaceHash = NSHash;
      Expect.Dictionary =
          [&](uint32_t Id) -> std::shared_ptr<const EntryDictionary> {
        auto C = Carried.find(Id);
        return C != Carried.end() ? C->second : Local.byId(Id);
      };
      EntryHeader H;
      Expected<std::vector<uint8_t>> P = decodeEntry(
          ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Bytes.data()),
                            Bytes.size()),
          Expect, &H);
      if (!P) {
        Warn("bundle entry " + Where + Name +
             " left out: " + toString(P.takeError()));
        ++Sum.Skipped;
        continue;
      }
      // Its dictionary is in place before the entry is: an entry in the
      // store is always readable. One of the same id already there must
      // be the same one.
      if (H.DictionaryId && Carried.count(H.DictionaryId) &&
          !Installed.count(H.DictionaryId)) {
        Expected<std::shared_ptr<const EntryDictionary>> D = Local.install(
            Carried[H.DictionaryId]->bytes(), /*MakeCurrent=*/false);
        if (!D) {
          Warn("bundle entry " + Where + Name +
               " left out: " + toString(D.takeError()));
          ++Sum.Skipped;
          continue;
        }
        Installed.insert(H.DictionaryId);
        ++Sum.Dictionaries;
      }
      bool Existed;
      if (!writeNew(Path, Bytes, Existed))
        return createStringError(
            std::error_code(errno, std::generic_category()),
            "cannot write '%s': %s", Path.c_str(), std::strerror(errno));
      if (Existed)
        ++Sum.Skipped;
      else
        ++Sum.Entries;
    }
    ++Sum.Namespaces;
  }
  return Sum;
}

} // namespace kiln
