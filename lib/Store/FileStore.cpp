//===- FileStore.cpp - One namespace of the store, on disk ---------------===//

#include "kiln/Store/FileStore.h"
#include "WriteAll.h"
#include "kiln/Store/StoreScan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace kiln {

char StoreRefusal::ID = 0;

void StoreRefusal::log(raw_ostream &OS) const { OS << Reason; }

std::error_code StoreRefusal::convertToErrorCode() const {
  return std::make_error_code(std::errc::operation_not_permitted);
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

uint64_t fingerprintHash(StringRef Fingerprint) {
  return xxh3_64bits(Fingerprint);
}

std::string fingerprintHex(StringRef Fingerprint) {
  return utohexstr(fingerprintHash(Fingerprint), /*LowerCase=*/true, 16);
}

std::string entryFileName(const KernelCacheKey &Key) {
  return "kiln-" + Key.hex() + ".entry";
}

std::optional<KernelCacheKey> keyFromEntryFileName(StringRef Name) {
  if (!Name.consume_front("kiln-") || !Name.consume_back(".entry") ||
      Name.size() != 32)
    return std::nullopt;
  for (char C : Name)
    if (!isDigit(C) && !(C >= 'a' && C <= 'f'))
      return std::nullopt;
  KernelCacheKey K;
  if (Name.take_front(16).getAsInteger(16, K.Id) ||
      Name.drop_front(16).getAsInteger(16, K.BuildId))
    return std::nullopt;
  return K;
}

static bool isPlainName(StringRef S) {
  if (S.empty() || S == "." || S == ".." || S.size() > 64)
    return false;
  for (char C : S)
    if (!isAlnum(C) && C != '-' && C != '_' && C != '.')
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Counters
//===----------------------------------------------------------------------===//

namespace {
struct CounterField {
  const char *Name;
  uint64_t StoreCounters::*Field;
};
constexpr CounterField CounterFields[] = {
    {"hits", &StoreCounters::Hits},
    {"misses", &StoreCounters::Misses},
    {"writes", &StoreCounters::Writes},
    {"refusals", &StoreCounters::Refusals},
    {"corrupt-purged", &StoreCounters::CorruptPurged},
    {"bytes-uncompressed", &StoreCounters::BytesUncompressed},
    {"bytes-compressed", &StoreCounters::BytesCompressed},
    {"remote-hits", &StoreCounters::RemoteHits},
    {"remote-misses", &StoreCounters::RemoteMisses},
    {"remote-errors", &StoreCounters::RemoteErrors},
    {"remote-rejected", &StoreCounters::RemoteRejected},
    {"remote-queued", &StoreCounters::RemoteQueued},
    {"remote-dropped", &StoreCounters::RemoteDropped},
};

StoreCounters parseCounters(StringRef Text) {
  StoreCounters C;
  SmallVector<StringRef, 8> Lines;
  Text.split(Lines, '\n', -1, false);
  for (StringRef Line : Lines) {
    auto [Name, Value] = Line.trim().split(' ');
    uint64_t N;
    if (Value.trim().getAsInteger(10, N))
      continue;
    for (const CounterField &F : CounterFields)
      if (Name == F.Name)
        C.*F.Field = N;
  }
  return C;
}

std::string printCounters(const StoreCounters &C) {
  std::string S;
  raw_string_ostream OS(S);
  for (const CounterField &F : CounterFields)
    OS << F.Name << ' ' << C.*F.Field << '\n';
  return S;
}

/// Reads the \p Size bytes of \p FD from its start; an error when it holds
/// another number of bytes now (it changed since it was fstat'ed).
Error readWholeFd(int FD, uint64_t Size, std::vector<uint8_t> &Out) {
  // One byte more than the size, so that a file grown since the fstat is
  // noticed rather than cut short.
  Out.resize(size_t(Size) + 1);
  size_t Done = 0;
  while (Done < Out.size()) {
    ssize_t N = ::pread(FD, Out.data() + Done, Out.size() - Done, off_t(Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return make_error<StoreFileError>(
          StoreFileFault::Unreadable,
          std::string("cannot read it: ") + std::strerror(errno));
    if (N == 0)
      break;
    Done += size_t(N);
  }
  if (Done != Size)
    return make_error<StoreFileError>(StoreFileFault::Unreadable,
                                      "it changed while it was read");
  Out.resize(Done);
  return Error::success();
}

} // namespace

StoreCounters &StoreCounters::operator+=(const StoreCounters &O) {
  for (const CounterField &F : CounterFields)
    this->*F.Field += O.*F.Field;
  return *this;
}

bool StoreCounters::empty() const {
  for (const CounterField &F : CounterFields)
    if (this->*F.Field)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Reading a namespace's files
//===----------------------------------------------------------------------===//

char StoreFileError::ID = 0;

void StoreFileError::log(raw_ostream &OS) const { OS << Why; }

std::error_code StoreFileError::convertToErrorCode() const {
  return std::make_error_code(Fault == StoreFileFault::Missing
                                  ? std::errc::no_such_file_or_directory
                                  : std::errc::illegal_byte_sequence);
}

StoreFileFault classifyStoreFile(const struct stat &St, uint64_t MaxSize,
                                 std::optional<uid_t> Owner, std::string &Why) {
  if (S_ISLNK(St.st_mode)) {
    Why = "it is a symbolic link (never followed)";
    return StoreFileFault::Link;
  }
  if (S_ISDIR(St.st_mode)) {
    Why = "it is a folder, not a file";
    return StoreFileFault::Folder;
  }
  if (!S_ISREG(St.st_mode)) {
    Why = std::string("it is ") +
          (S_ISFIFO(St.st_mode)   ? "a FIFO"
           : S_ISSOCK(St.st_mode) ? "a socket"
                                  : "a device") +
          ", not a regular file";
    return StoreFileFault::Special;
  }
  if (Owner && St.st_uid != *Owner) {
    Why = "it is owned by another user (uid " + std::to_string(St.st_uid) + ")";
    return StoreFileFault::OtherOwner;
  }
  if (uint64_t(St.st_size) > MaxSize) {
    Why = "it has " + std::to_string(uint64_t(St.st_size)) +
          " bytes, more than the limit of " + std::to_string(MaxSize);
    return StoreFileFault::TooLarge;
  }
  return StoreFileFault::None;
}

namespace {
Error fileError(StoreFileFault F, const Twine &Why) {
  return make_error<StoreFileError>(F, Why.str());
}

/// Opens the store file \p Path with O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC and
/// \p Flags, checked before (lstat: nothing but a regular file is opened)
/// and after (fstat, into \p St) by classifyStoreFile.
Expected<int> openStoreFile(const std::string &Path, uint64_t MaxSize,
                            std::optional<uid_t> Owner, int Flags,
                            struct stat &St) {
  std::string Why;
  if (::lstat(Path.c_str(), &St) != 0)
    return errno == ENOENT
               ? fileError(StoreFileFault::Missing, "no such file")
               : fileError(StoreFileFault::Unreadable,
                           Twine("cannot inspect it: ") + std::strerror(errno));
  StoreFileFault F = classifyStoreFile(St, MaxSize, Owner, Why);
  if (F != StoreFileFault::None)
    return fileError(F, Why);
  int FD = ::open(Path.c_str(), Flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0) {
    int E = errno;
    if (E == ENOENT)
      return fileError(StoreFileFault::Missing, "no such file");
    if (E == ELOOP) // replaced by a link since the lstat
      return fileError(StoreFileFault::Link,
                       "it is a symbolic link (never followed)");
    return fileError(StoreFileFault::Unreadable,
                     Twine("cannot read it: ") + std::strerror(E));
  }
  // The file opened may not be the one lstat'ed: check it again.
  if (::fstat(FD, &St) != 0) {
    int E = errno;
    ::close(FD);
    return fileError(StoreFileFault::Unreadable,
                     Twine("cannot inspect it: ") + std::strerror(E));
  }
  F = classifyStoreFile(St, MaxSize, Owner, Why);
  if (F != StoreFileFault::None) {
    ::close(FD);
    return fileError(F, Why);
  }
  return FD;
}
} // namespace

Expected<std::vector<uint8_t>> readStoreFile(StringRef PathRef,
                                             uint64_t MaxSize,
                                             std::optional<uid_t> Owner) {
  struct stat St;
  Expected<int> FD = openStoreFile(PathRef.str(), MaxSize, Owner, O_RDONLY, St);
  if (!FD)
    return FD.takeError();
  std::vector<uint8_t> Out;
  Error E = readWholeFd(*FD, uint64_t(St.st_size), Out);
  ::close(*FD);
  if (E)
    return E;
  return Out;
}

StoreCounters readStoreCounters(StringRef PathRef, StoreWarnings *Warnings) {
  std::string Path = PathRef.str();
  auto Ignore = [&](Error E) {
    handleAllErrors(std::move(E), [&](const StoreFileError &F) {
      if (F.fault() != StoreFileFault::Missing && Warnings)
        Warnings->warn("ignoring the counters file " + Path + ": " + F.why());
    });
    return StoreCounters();
  };
  struct stat St;
  Expected<int> FD =
      openStoreFile(Path, StatsMaxFileSize, std::nullopt, O_RDONLY, St);
  if (!FD)
    return Ignore(FD.takeError());
  flock(*FD, LOCK_SH);
  // Its size under the lock: a writer may have changed it meanwhile.
  std::vector<uint8_t> Bytes;
  std::string Why;
  Error E = Error::success();
  if (::fstat(*FD, &St) != 0)
    E = fileError(StoreFileFault::Unreadable,
                  Twine("cannot inspect it: ") + std::strerror(errno));
  else if (classifyStoreFile(St, StatsMaxFileSize, std::nullopt, Why) !=
           StoreFileFault::None)
    E = fileError(StoreFileFault::TooLarge, Why);
  else
    E = readWholeFd(*FD, uint64_t(St.st_size), Bytes);
  ::close(*FD);
  if (E)
    return Ignore(std::move(E));
  return parseCounters(
      StringRef(reinterpret_cast<const char *>(Bytes.data()), Bytes.size()));
}

Error addStoreCounters(StringRef PathRef, const StoreCounters &Delta,
                       StoreWarnings *Warnings) {
  std::string Path = PathRef.str();
  auto Failure = [](int E) {
    return errorCodeToError(std::error_code(E, std::generic_category()));
  };
  // The file is ours to rewrite only when it is a regular file of this user:
  // what else has its name (a link to another user's file, a FIFO) is
  // removed, never written through, and a fresh file made.
  int FD = -1;
  for (unsigned Try = 0; FD < 0; ++Try) {
    struct stat St;
    std::string Why;
    StoreFileFault F = StoreFileFault::Missing;
    if (::lstat(Path.c_str(), &St) == 0)
      F = classifyStoreFile(St, UINT64_MAX, ::geteuid(), Why);
    else if (errno != ENOENT)
      return Failure(errno);
    if (F == StoreFileFault::Folder)
      return Failure(EISDIR);
    if (F != StoreFileFault::None && F != StoreFileFault::Missing) {
      if (Try > 1)
        return Failure(EEXIST);
      if (::unlink(Path.c_str()) != 0 && errno != ENOENT)
        return Failure(errno);
      if (Warnings)
        Warnings->warn("replaced the counters file " + Path + ": " + Why);
      continue;
    }
    FD = ::open(Path.c_str(),
                O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (FD < 0) {
      if (errno == ELOOP && Try <= 1)
        continue; // made a link since the lstat: looked at again
      return Failure(errno);
    }
    if (::fstat(FD, &St) != 0 ||
        classifyStoreFile(St, UINT64_MAX, ::geteuid(), Why) !=
            StoreFileFault::None) {
      ::close(FD);
      FD = -1;
      if (Try > 1)
        return Failure(EEXIST);
    }
  }
  flock(FD, LOCK_EX);
  StoreCounters C;
  struct stat St;
  if (::fstat(FD, &St) != 0) {
    int E = errno;
    ::close(FD);
    return Failure(E);
  }
  if (uint64_t(St.st_size) > StatsMaxFileSize) {
    // Never read: whatever it held, counting starts again from zero.
    if (Warnings)
      Warnings->warn("ignoring the counters file " + Path + ": it has " +
                     Twine(uint64_t(St.st_size)) +
                     " bytes, more than the limit of " +
                     Twine(StatsMaxFileSize) + "; counting from zero");
  } else {
    std::vector<uint8_t> Bytes;
    if (Error E = readWholeFd(FD, uint64_t(St.st_size), Bytes))
      consumeError(std::move(E)); // unreadable counts start from zero
    else
      C = parseCounters(StringRef(reinterpret_cast<const char *>(Bytes.data()),
                                  Bytes.size()));
  }
  C += Delta;
  std::string Text = printCounters(C);
  bool OK = ftruncate(FD, 0) == 0 && lseek(FD, 0, SEEK_SET) == 0 &&
            writeAllFd(FD, Text.data(), Text.size());
  int Err = errno;
  ::close(FD); // releases the lock
  if (!OK)
    return errorCodeToError(std::error_code(Err, std::generic_category()));
  return Error::success();
}

//===----------------------------------------------------------------------===//
// FileStore
//===----------------------------------------------------------------------===//

FileStore::FileStore(std::string Root, StringRef Backend,
                     StringRef Fingerprint, const StoreConfig &Config,
                     std::shared_ptr<StoreWarnings> Warnings)
    : Root(std::move(Root)), Backend(Backend.str()),
      Fingerprint(Fingerprint.str()),
      NamespaceHash(fingerprintHash(Fingerprint)), Config(Config),
      Warnings(Warnings ? std::move(Warnings)
                        : std::make_shared<StoreWarnings>()) {}

std::unique_ptr<FileStore> FileStore::open(StringRef Backend,
                                           StringRef Fingerprint,
                                           const StoreEnvironment &Env) {
  if (!Env.enabled())
    return nullptr;
  std::unique_ptr<FileStore> S = openAt(*Env.root(), Backend, Fingerprint,
                                        Env.config(), Env.sharedWarnings());
  if (S)
    S->setRemote(Env.remote());
  return S;
}

void FileStore::setRemote(std::shared_ptr<RemoteTier> Tier) {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  Remote = std::move(Tier);
}

std::string FileStore::remoteName(const KernelCacheKey &Key) const {
  return remoteEntryName(Remote ? StringRef(Remote->config().Prefix) : "kiln",
                         Backend, NamespaceHash, Key);
}

static thread_local bool LastReadRemote = false;

bool FileStore::lastReadCameFromRemote() { return LastReadRemote; }

std::unique_ptr<FileStore> FileStore::openAt(StringRef Root, StringRef Backend,
                                             StringRef Fingerprint,
                                             const StoreConfig &Config,
                                             std::shared_ptr<StoreWarnings> W) {
  if (Config.Mode == StoreModeKind::Off || !isPlainName(Backend) ||
      Root.empty())
    return nullptr;
  return std::unique_ptr<FileStore>(
      new FileStore(Root.str(), Backend, Fingerprint, Config, std::move(W)));
}

FileStore::~FileStore() {
  // What this namespace queued is published before its counters are
  // written, within the tier's bound (a dead server: at once).
  if (Remote)
    Remote->drain(std::chrono::milliseconds(1000));
  flushCounters();
}

void FileStore::setMissingFeature(std::function<std::string(StringRef)> F) {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  MissingFeature = std::move(F);
}

/// Makes \p Path a folder (0700) if it is missing; errno on failure.
static bool makeFolder(const std::string &Path) {
  if (::mkdir(Path.c_str(), 0700) == 0 || errno == EEXIST)
    return true;
  if (errno != ENOENT)
    return false;
  StringRef Parent = sys::path::parent_path(Path);
  if (Parent.empty() || Parent == Path)
    return false;
  if (!makeFolder(Parent.str()))
    return false;
  return ::mkdir(Path.c_str(), 0700) == 0 || errno == EEXIST;
}

/// Why \p Path must not be trusted, or "" when it may be.
static std::string untrustedReason(const std::string &Path) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) != 0)
    return std::string("cannot inspect it: ") + std::strerror(errno);
  if (!S_ISDIR(St.st_mode))
    return "it is not a folder";
  if (St.st_uid != ::geteuid())
    return "it is owned by another user";
  if (St.st_mode & (S_IWGRP | S_IWOTH))
    return "others can write to it";
  return std::string();
}

void FileStore::warnUnusable(const Twine &Why) {
  Warnings->warn("not using the kernel store in " + Folder + ": " + Why);
}

bool FileStore::ready() {
  if (Resolved)
    return Usable;
  Resolved = true;
  Usable = false;
  Folder.clear();
  SmallString<256> BackendDir(Root);
  sys::path::append(BackendDir, Backend);
  SmallString<256> NS(BackendDir);
  sys::path::append(NS, fingerprintHex(Fingerprint));
  Folder = std::string(NS);
  bool Writable = Config.Mode == StoreModeKind::ReadWrite;
  struct stat St;
  if (Writable && !makeFolder(Folder)) {
    int E = errno;
    if (::lstat(Folder.c_str(), &St) != 0) {
      // Every kernel compiles, nothing is kept: said once, as the root is
      // the user's (a path under a file, a folder without search right).
      warnUnusable(Twine("cannot create it: ") + std::strerror(E));
      return false;
    }
  }
  // Only folders we create (or that exist under the root) are checked: the
  // root's own parents are the user's business.
  for (const std::string &P : {Root, std::string(BackendDir), Folder}) {
    if (::lstat(P.c_str(), &St) != 0) {
      int E = errno;
      if (E == ENOENT && !Writable) {
        // Nothing stored yet (read-only mode): look again on the next call,
        // another process may create it.
        Resolved = false;
        return false;
      }
      warnUnusable(P + ": cannot inspect it: " + std::strerror(E));
      return false;
    }
    std::string Why = untrustedReason(P);
    if (!Why.empty()) {
      warnUnusable(P + ": " + Why);
      return false;
    }
  }
  if (Writable)
    writeFingerprintFile();
  if (!Dicts || Dicts->folder() != Folder)
    Dicts = std::make_unique<NamespaceDictionaries>(Folder);
  Usable = true;
  return true;
}

bool FileStore::resolveAgain() {
  Resolved = false;
  return ready();
}

void FileStore::writeFingerprintFile() {
  // The readable fingerprint beside the entries: written when missing, and
  // written again when it says something else (a damaged or hand-edited
  // file, which `kiln-store stats` would show and bundles would carry).
  // Anything that is not our own small regular file is left alone.
  SmallString<256> FP(Folder);
  sys::path::append(FP, FingerprintFileName);
  struct stat St;
  bool Replace = false;
  if (::lstat(FP.c_str(), &St) == 0) {
    Expected<std::vector<uint8_t>> Old =
        readStoreFile(FP, FingerprintMaxFileSize, ::geteuid());
    if (!Old) {
      consumeError(Old.takeError());
      return;
    }
    if (StringRef(reinterpret_cast<const char *>(Old->data()), Old->size())
            .rtrim("\n") == Fingerprint)
      return;
    Replace = true;
  } else if (errno != ENOENT) {
    return;
  }
  // A unique temporary name, never opened through what has its name (a
  // link, a crashed writer's file): O_EXCL, then the next name.
  static std::atomic<uint64_t> Counter{0};
  std::string Tmp;
  int FD = -1;
  for (unsigned Try = 0; Try != 16 && FD < 0; ++Try) {
    Tmp = std::string(FP) + ".tmp-" + std::to_string(::getpid()) + "-" +
          std::to_string(Counter.fetch_add(1));
    FD = ::open(Tmp.c_str(),
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (FD < 0 && errno != EEXIST)
      return; // best effort: the entries do not need it
  }
  if (FD < 0)
    return;
  std::string Text = Fingerprint + "\n";
  bool OK = writeAllFd(FD, Text.data(), Text.size());
  ::close(FD);
  // A new one is linked into place (another writer may have been first); a
  // wrong one is renamed over, which replaces the name, never a target.
  if (OK && Replace && ::rename(Tmp.c_str(), FP.c_str()) == 0)
    return;
  if (OK && !Replace)
    (void)::link(Tmp.c_str(), FP.c_str());
  ::unlink(Tmp.c_str());
}

std::string FileStore::folder() {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  ready();
  return Folder;
}

bool FileStore::usable() {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  return ready();
}

void FileStore::bump(uint64_t StoreCounters::*Field, uint64_t By) {
  Pending.*Field += By;
  // Amortised: the stats file is rewritten every 64 events and on close.
  // Only into a folder found trusted (remote counters move without one).
  if (++PendingEvents >= 64 && Usable && !Folder.empty() &&
      Config.Mode == StoreModeKind::ReadWrite) {
    SmallString<256> P(Folder);
    sys::path::append(P, StatsFileName);
    if (Error E = addStoreCounters(P, Pending, Warnings.get()))
      consumeError(std::move(E)); // best effort: kept for the next flush
    else
      Pending = StoreCounters();
    PendingEvents = 0;
  }
}

StoreCounters FileStore::pendingCounters() const {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  return Pending;
}

void FileStore::flushCounters() {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  if (Pending.empty() || !Usable || Folder.empty() ||
      Config.Mode != StoreModeKind::ReadWrite)
    return;
  SmallString<256> P(Folder);
  sys::path::append(P, StatsFileName);
  if (Error E = addStoreCounters(P, Pending, Warnings.get()))
    consumeError(std::move(E)); // statistics are best effort
  else
    Pending = StoreCounters();
  PendingEvents = 0;
}

void FileStore::warnBadEntry(const std::string &Path, StringRef Why) {
  // unlink removes a link, never what it points to.
  if (::unlink(Path.c_str()) == 0) {
    Warnings->warn("removed bad store entry " + Path + ": " + Why);
    bump(&StoreCounters::CorruptPurged);
    return;
  }
  int E = errno;
  if (E == ENOENT) {
    Warnings->warn("bad store entry " + Path + ": " + Why +
                   " (another process removed it meanwhile)");
    return;
  }
  warnLeftInPlace(Path, Why + "; it cannot be removed: " + std::strerror(E));
}

void FileStore::warnLeftInPlace(const std::string &Path, const Twine &Why) {
  // Once per file: it is still there on the next read of its key.
  if (LeftInPlace.insert(Path).second)
    Warnings->warn("ignoring store entry " + Path + ": " + Why +
                   " (left in place)");
}

void FileStore::entryUnreadable(const std::string &Path, Error E) {
  handleAllErrors(
      std::move(E),
      [&](const StoreFileError &F) {
        switch (F.fault()) {
        case StoreFileFault::None:
        case StoreFileFault::Missing:
          return; // a plain miss
        case StoreFileFault::Folder:
          // Not a file we could have written: not ours to remove.
          warnLeftInPlace(Path, F.why());
          return;
        case StoreFileFault::OtherOwner:
          // Never loaded; another user's file is not ours to delete either.
          warnLeftInPlace(Path, F.why() + ", not loaded");
          return;
        case StoreFileFault::Link:
        case StoreFileFault::Special:
        case StoreFileFault::TooLarge:
        case StoreFileFault::Unreadable:
          warnBadEntry(Path, F.why());
          return;
        }
      },
      [&](const ErrorInfoBase &Other) { warnBadEntry(Path, Other.message()); });
}

/// The dictionary a failed decode (\p Payload) is missing, when that is
/// its only fault; the error stays in \p Payload either way.
static std::optional<uint32_t>
missingDictionaryOf(Expected<std::vector<uint8_t>> &Payload) {
  std::optional<uint32_t> Id;
  Error E = handleErrors(
      Payload.takeError(),
      [&](std::unique_ptr<MissingDictionaryError> M) -> Error {
        Id = M->dictionaryId();
        return Error(std::move(M));
      });
  Payload = Expected<std::vector<uint8_t>>(std::move(E));
  return Id;
}

EntryExpectations FileStore::expectationsFor(const KernelCacheKey &Key,
                                             std::optional<uint64_t> IRHash) {
  EntryExpectations Expect;
  Expect.Key = Key;
  Expect.NamespaceHash = NamespaceHash;
  Expect.IRHash = IRHash;
  Expect.MissingFeature = MissingFeature;
  // Called with Lock held, as decodeEntry is: RemoteDicts is only read
  // under it.
  Expect.Dictionary = [this](uint32_t Id)
      -> std::shared_ptr<const EntryDictionary> {
    if (Dicts)
      if (std::shared_ptr<const EntryDictionary> D = Dicts->byId(Id))
        return D;
    auto It = RemoteDicts.find(Id);
    return It == RemoteDicts.end() ? nullptr : It->second;
  };
  return Expect;
}

bool FileStore::fetchRemoteDictionary(std::unique_lock<std::mutex> &L,
                                      uint32_t Id, bool LocalUsable) {
  if (!Remote)
    return false;
  std::shared_ptr<RemoteTier> Tier = Remote;
  std::string Name = remoteDictionaryName(Tier->config().Prefix, Backend,
                                          NamespaceHash, Id);
  L.unlock();
  RemoteFetch F = Tier->fetch(Name);
  L.lock();
  if (F.Status != RemoteFetchStatus::Hit)
    return false;
  Expected<std::shared_ptr<const EntryDictionary>> D =
      EntryDictionary::fromBytes(F.Bytes);
  if (!D || (*D)->id() != Id) {
    Tier->countRejected(Name, D ? "dictionary " +
                                      utohexstr((*D)->id(), true, 8) +
                                      " stored under another id"
                                : toString(D.takeError()));
    return false;
  }
  RemoteDicts[Id] = *D;
  if (LocalUsable && Dicts && Config.Mode == StoreModeKind::ReadWrite) {
    Expected<std::shared_ptr<const EntryDictionary>> Installed =
        Dicts->install(F.Bytes, /*MakeCurrent=*/false);
    if (!Installed)
      consumeError(Installed.takeError()); // served from memory all the same
  }
  return true;
}

std::optional<std::vector<uint8_t>>
FileStore::read(const KernelCacheKey &Key, std::optional<uint64_t> IRHash) {
  LastReadRemote = false;
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::unique_lock<std::mutex> L(Lock);
  bool LocalUsable = ready();
  EntryExpectations Expect = expectationsFor(Key, IRHash);
  if (LocalUsable) {
    SmallString<256> PathBuf(Folder);
    sys::path::append(PathBuf, entryFileName(Key));
    std::string Path(PathBuf);
    Expected<std::vector<uint8_t>> File =
        readStoreFile(Path, EntryMaxFileSize, ::geteuid());
    if (File) {
      Expected<std::vector<uint8_t>> Payload = decodeEntry(*File, Expect);
      // A good entry whose dictionary is not here: the remote tier may
      // have it (another machine trained it).
      if (!Payload && Remote)
        if (std::optional<uint32_t> Missing = missingDictionaryOf(Payload))
          if (fetchRemoteDictionary(L, *Missing, LocalUsable))
            Payload = decodeEntry(*File, expectationsFor(Key, IRHash));
      if (Payload) {
        if (Config.Mode == StoreModeKind::ReadWrite) // last use
          (void)::utimensat(AT_FDCWD, Path.c_str(), nullptr,
                            AT_SYMLINK_NOFOLLOW);
        bump(&StoreCounters::Hits);
        return std::move(*Payload);
      }
      warnBadEntry(Path, toString(Payload.takeError()));
    } else {
      entryUnreadable(Path, File.takeError());
    }
    bump(&StoreCounters::Misses);
  }
  if (!Remote)
    return std::nullopt;
  return readRemote(L, Key, Expect, LocalUsable);
}

std::optional<std::vector<uint8_t>>
FileStore::readRemote(std::unique_lock<std::mutex> &L,
                      const KernelCacheKey &Key,
                      const EntryExpectations &Expect, bool LocalUsable) {
  std::shared_ptr<RemoteTier> Tier = Remote;
  std::string Name = remoteName(Key);
  // Other threads use the local store while this one waits for the server.
  L.unlock();
  RemoteFetch F = Tier->fetch(Name);
  L.lock();
  switch (F.Status) {
  case RemoteFetchStatus::Hit:
    break;
  case RemoteFetchStatus::Miss:
    bump(&StoreCounters::RemoteMisses);
    return std::nullopt;
  case RemoteFetchStatus::Rejected:
    bump(&StoreCounters::RemoteRejected);
    return std::nullopt;
  case RemoteFetchStatus::Error:
  case RemoteFetchStatus::Skipped:
    bump(&StoreCounters::RemoteErrors);
    return std::nullopt;
  }
  // The tag says the fleet made it; the entry's own checks say it is this
  // kernel, for this namespace and CPU, and intact.
  Expected<std::vector<uint8_t>> Payload = decodeEntry(F.Bytes, Expect);
  if (!Payload)
    if (std::optional<uint32_t> Missing = missingDictionaryOf(Payload))
      if (fetchRemoteDictionary(L, *Missing, LocalUsable))
        Payload = decodeEntry(F.Bytes, expectationsFor(Key, Expect.IRHash));
  if (!Payload) {
    Tier->countRejected(Name, toString(Payload.takeError()));
    bump(&StoreCounters::RemoteRejected);
    return std::nullopt;
  }
  bump(&StoreCounters::RemoteHits);
  LastReadRemote = true;
  if (LocalUsable && Config.Mode == StoreModeKind::ReadWrite &&
      !WritesStopped) {
    SmallString<256> Final(Folder);
    sys::path::append(Final, entryFileName(Key));
    Error E = Error::success();
    for (unsigned Attempt = 0;; ++Attempt) {
      std::string Why;
      Install R = installEntryFile(std::string(Final), F.Bytes, Why);
      if (R == Install::FolderGone && Attempt == 0 && resolveAgain())
        continue;
      E = installRefusal(R, Why);
      break;
    }
    if (E) {
      // Served all the same; a failure stops local writes with one warning.
      handleAllErrors(std::move(E), [&](const StoreRefusal &SR) {
        if (!SR.quiet())
          Warnings->warn(SR.reason());
      });
    } else {
      bump(&StoreCounters::Writes);
      bump(&StoreCounters::BytesUncompressed, Payload->size());
      bump(&StoreCounters::BytesCompressed, F.Bytes.size());
      maybePrune(F.Bytes.size());
    }
  }
  return std::move(*Payload);
}

std::optional<EntryInfo> FileStore::info(const KernelCacheKey &Key) {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  if (!ready())
    return std::nullopt;
  SmallString<256> Path(Folder);
  sys::path::append(Path, entryFileName(Key));
  Expected<std::vector<uint8_t>> File =
      readStoreFile(Path, EntryMaxFileSize, ::geteuid());
  if (!File) {
    consumeError(File.takeError());
    return std::nullopt;
  }
  Expected<EntryHeader> H = parseEntryHeader(*File);
  if (!H) {
    consumeError(H.takeError());
    return std::nullopt;
  }
  return H->Info;
}

bool FileStore::purge(const KernelCacheKey &Key) {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  if (!ready())
    return false;
  SmallString<256> Path(Folder);
  sys::path::append(Path, entryFileName(Key));
  return ::unlink(Path.c_str()) == 0;
}

void FileStore::purgeCorrupt(const KernelCacheKey &Key, StringRef Reason) {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  if (!ready())
    return;
  SmallString<256> Path(Folder);
  sys::path::append(Path, entryFileName(Key));
  warnBadEntry(std::string(Path), Reason);
}

Error FileStore::write(const KernelCacheKey &Key, ArrayRef<uint8_t> Payload,
                       const EntryInfo &Info) {
  DeferCallbacks Defer; // warnings reach their sink unlocked
  std::lock_guard<std::mutex> L(Lock);
  auto Quiet = [&](const Twine &Why) {
    bump(&StoreCounters::Refusals);
    return make_error<StoreRefusal>(Why.str(), /*Quiet=*/true);
  };
  if (Config.Mode != StoreModeKind::ReadWrite)
    return make_error<StoreRefusal>("the store is read-only", true);
  if (!ready())
    return make_error<StoreRefusal>("the store folder cannot be used", true);
  if (WritesStopped)
    return Quiet("writes stopped after an earlier failure");
  SmallString<256> FinalBuf(Folder);
  sys::path::append(FinalBuf, entryFileName(Key));
  std::string Final(FinalBuf);
  struct stat St;
  if (::lstat(Final.c_str(), &St) == 0)
    return Quiet("the entry exists already");

  bool Published = false;
  for (unsigned Attempt = 0;; ++Attempt) {
    // Encoded again after the folder was made again: the dictionary it
    // named may have gone with the old one.
    std::shared_ptr<const EntryDictionary> Dict =
        Dicts ? Dicts->current() : nullptr;
    Expected<std::vector<uint8_t>> Bytes =
        encodeEntry(Key, NamespaceHash, Info, Payload, Dict.get());
    if (!Bytes) {
      bump(&StoreCounters::Refusals);
      return make_error<StoreRefusal>(toString(Bytes.takeError()), false);
    }
    if (Bytes->size() > EntryMaxFileSize) {
      // Readers refuse it: not kept, but no reason to stop writing.
      bump(&StoreCounters::Refusals);
      return make_error<StoreRefusal>(
          "not keeping the compiled kernel " + Info.KernelId + ": its entry has " +
              std::to_string(Bytes->size()) +
              " bytes, more than the store's limit of " +
              std::to_string(EntryMaxFileSize),
          false);
    }

    if (Remote && !Remote->readOnly() && !Published) {
      Published = true;
      // The dictionary goes first (the queue is in order), so a machine
      // that fetches the entry finds the dictionary it names.
      if (Dict && PublishedDicts.insert(Dict->id()).second) {
        ArrayRef<uint8_t> DB = Dict->bytes();
        Remote->publish(remoteDictionaryName(Remote->config().Prefix, Backend,
                                             NamespaceHash, Dict->id()),
                        std::vector<uint8_t>(DB.begin(), DB.end()));
      }
      if (Remote->publish(remoteName(Key), *Bytes))
        bump(&StoreCounters::RemoteQueued);
      else
        bump(&StoreCounters::RemoteDropped);
    }
    std::string Why;
    Install R = installEntryFile(Final, *Bytes, Why);
    // The folder was removed (kiln-store clear): made again, trusted again,
    // once per failure; only a real failure stops writes.
    if (R == Install::FolderGone && Attempt == 0 && resolveAgain())
      continue;
    if (Error E = installRefusal(R, Why))
      return E;
    bump(&StoreCounters::Writes);
    bump(&StoreCounters::BytesUncompressed, Payload.size());
    bump(&StoreCounters::BytesCompressed, Bytes->size());
    maybePrune(Bytes->size());
    return Error::success();
  }
}

Error FileStore::installRefusal(Install R, const std::string &Why) {
  switch (R) {
  case Install::Done:
    return Error::success();
  case Install::Exists:
    bump(&StoreCounters::Refusals);
    return make_error<StoreRefusal>("another writer kept the entry first",
                                    /*Quiet=*/true);
  case Install::FolderGone:
    // Gone again at once, or not to be made again (ready() said why):
    // this entry is not kept; the next write tries again.
    bump(&StoreCounters::Refusals);
    return make_error<StoreRefusal>(
        Usable ? "the store folder " + Folder + " vanished while writing (" +
                     Why + ")"
               : "the store folder cannot be used",
        /*Quiet=*/!Usable);
  case Install::Failed:
    WritesStopped = true; // one warning, then compile without keeping
    bump(&StoreCounters::Refusals);
    return make_error<StoreRefusal>(
        "cannot write to the kernel store in " + Folder + " (" + Why +
            "); kernels will be compiled without being kept",
        false);
  }
  llvm_unreachable("every install result is handled");
}

FileStore::Install FileStore::installEntryFile(const std::string &Final,
                                               ArrayRef<uint8_t> Bytes,
                                               std::string &Why) {
  auto Reason = [&](const char *What, int Err) {
    Why = std::string(What) + ": " + std::strerror(Err);
  };
  // A unique temporary name in the same folder, so that the link below is
  // atomic and a reader never sees a partial entry. O_EXCL never opens what
  // has the name already (a crashed writer's file of the same pid, a link):
  // the next name is tried.
  static std::atomic<uint64_t> Counter{0};
  std::string Tmp;
  int FD = -1;
  for (unsigned Try = 0; Try != 16 && FD < 0; ++Try) {
    Tmp = Final + ".tmp-" + std::to_string(::getpid()) + "-" +
          std::to_string(Counter.fetch_add(1));
    FD = ::open(Tmp.c_str(),
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (FD < 0 && errno != EEXIST)
      break;
  }
  if (FD < 0) {
    int Err = errno;
    Reason("create", Err);
    return Err == ENOENT ? Install::FolderGone : Install::Failed;
  }
  bool OK = writeAllFd(FD, Bytes.data(), Bytes.size());
  if (OK && Config.Sync)
    OK = ::fsync(FD) == 0;
  int Err = errno;
  if (::close(FD) != 0 && OK) {
    OK = false;
    Err = errno;
  }
  if (!OK) {
    ::unlink(Tmp.c_str());
    Reason("write", Err);
    return Install::Failed;
  }
  // link() refuses to replace: the first writer of a key wins.
  if (::link(Tmp.c_str(), Final.c_str()) != 0) {
    Err = errno;
    if (Err == EEXIST) {
      ::unlink(Tmp.c_str());
      return Install::Exists;
    }
    if (Err == ENOENT) { // the folder went, with our temporary file
      ::unlink(Tmp.c_str());
      Reason("link", Err);
      return Install::FolderGone;
    }
    // A file system without hard links: rename, which may replace an
    // equivalent entry of the same key.
    if (::rename(Tmp.c_str(), Final.c_str()) != 0) {
      Err = errno;
      ::unlink(Tmp.c_str());
      Reason("rename", Err);
      return Err == ENOENT ? Install::FolderGone : Install::Failed;
    }
  } else {
    ::unlink(Tmp.c_str());
  }
  return Install::Done;
}

void FileStore::maybePrune(uint64_t BytesWritten) {
  // Amortised: the store is measured on the first write of the process,
  // every 64 writes after that (other processes write too), and whenever
  // the running total passes the limit.
  RunningTotal += BytesWritten;
  ++WritesSinceScan;
  if (Scanned && WritesSinceScan < 64 && RunningTotal <= Config.MaxSize)
    return;
  Scanned = true;
  WritesSinceScan = 0;
  RunningTotal = storeSize(Root);
  if (RunningTotal <= Config.MaxSize)
    return;
  PruneResult R =
      pruneStore(Root, uint64_t(double(Config.MaxSize) * Config.LowWatermark));
  RunningTotal = R.BytesAfter;
}

} // namespace kiln
