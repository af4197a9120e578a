//===- Dictionary.cpp - Per-namespace zstd dictionaries for entries ------===//

#include "kiln/Store/Dictionary.h"
#include "kiln/Store/FileStore.h"
#include "WriteAll.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

// ZDICT_trainFromBuffer is the fast cover trainer with a quarter of the
// samples kept aside to test with; a namespace of five or six entries then
// has too few to train on at all. The same trainer, called directly (the
// "static linking only" part of zdict.h, exported by libzstd since 1.4),
// trains and tests on every sample.
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>

using namespace llvm;

namespace kiln {

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static constexpr StringLiteral DictPrefix = "zdict-";
static constexpr StringLiteral DictSuffix = ".dict";
/// zdict-current holds "<8 hex>\n"; anything much longer is not ours.
static constexpr size_t CurrentMaxSize = 64;

std::string dictionaryFileName(uint32_t Id) {
  return (DictPrefix + utohexstr(Id, /*LowerCase=*/true, 8) + DictSuffix)
      .str();
}

static std::optional<uint32_t> parseHex8(StringRef S) {
  if (S.size() != 8 ||
      !llvm::all_of(S, [](char C) { return isDigit(C) || (C >= 'a' && C <= 'f'); }))
    return std::nullopt;
  uint32_t Id = 0;
  if (S.getAsInteger(16, Id))
    return std::nullopt;
  return Id;
}

std::optional<uint32_t> dictionaryIdFromFileName(StringRef Name) {
  if (!Name.consume_front(DictPrefix) || !Name.consume_back(DictSuffix))
    return std::nullopt;
  return parseHex8(Name);
}

bool isDictionaryFileName(StringRef Name) {
  return Name.starts_with(DictPrefix) &&
         (dictionaryIdFromFileName(Name) || Name == CurrentDictionaryFileName ||
          Name.contains(".tmp-"));
}

static Error bad(const Twine &Why) {
  return createStringError(
      std::make_error_code(std::errc::illegal_byte_sequence), Why);
}

static std::string hex8(uint32_t Id) { return utohexstr(Id, true, 8); }

//===----------------------------------------------------------------------===//
// EntryDictionary
//===----------------------------------------------------------------------===//

Expected<std::shared_ptr<const EntryDictionary>>
EntryDictionary::fromBytes(ArrayRef<uint8_t> Bytes) {
  if (Bytes.size() > DictionaryMaxSize)
    return bad("dictionary of " + Twine(Bytes.size()) +
               " bytes is larger than " + Twine(DictionaryMaxSize));
  // ZDICT_getDictID answers 0 for anything without the dictionary magic
  // (raw content "dictionaries" included): those cannot be named by a frame.
  uint32_t Id = ZDICT_getDictID(Bytes.data(), Bytes.size());
  if (Id == 0)
    return bad("not a zstd dictionary with an id");
  // A header that does not parse (truncated entropy tables) is refused
  // here, not at the first entry.
  size_t HeaderSize = ZDICT_getDictHeaderSize(Bytes.data(), Bytes.size());
  if (ZDICT_isError(HeaderSize))
    return bad(Twine("bad zstd dictionary: ") + ZDICT_getErrorName(HeaderSize));
  std::shared_ptr<EntryDictionary> D(new EntryDictionary());
  D->Bytes.assign(Bytes.begin(), Bytes.end());
  D->Id = Id;
  D->DDict = ZSTD_createDDict(D->Bytes.data(), D->Bytes.size());
  if (!D->DDict)
    return bad("zstd cannot load dictionary " + hex8(Id));
  return std::shared_ptr<const EntryDictionary>(std::move(D));
}

const ZSTD_CDict *EntryDictionary::compressionDict() const {
  std::call_once(CDictOnce, [this] {
    CDict = ZSTD_createCDict(Bytes.data(), Bytes.size(), EntryCompressionLevel);
  });
  return CDict;
}

EntryDictionary::~EntryDictionary() {
  ZSTD_freeCDict(CDict);
  ZSTD_freeDDict(DDict);
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

char TooFewSamplesError::ID = 0;

void TooFewSamplesError::log(raw_ostream &OS) const {
  OS << Samples << (Samples == 1 ? " sample" : " samples")
     << ", training a dictionary needs at least " << DictionaryMinSamples;
}

std::error_code TooFewSamplesError::convertToErrorCode() const {
  return std::make_error_code(std::errc::invalid_argument);
}

Expected<std::vector<uint8_t>>
trainEntryDictionary(ArrayRef<ArrayRef<uint8_t>> Samples, size_t TargetSize) {
  if (TargetSize == 0)
    TargetSize = DictionaryDefaultSize;
  TargetSize = std::min(TargetSize, DictionaryMaxSize);
  // zstd's trainer wants one buffer and the sizes; empty samples teach it
  // nothing, and past the cap the rest is left out.
  std::vector<uint8_t> All;
  std::vector<size_t> Sizes;
  for (ArrayRef<uint8_t> S : Samples) {
    if (S.empty())
      continue;
    if (All.size() + S.size() > DictionaryMaxTrainingBytes)
      break;
    All.insert(All.end(), S.begin(), S.end());
    Sizes.push_back(S.size());
  }
  if (Sizes.size() < DictionaryMinSamples)
    return make_error<TooFewSamplesError>(Sizes.size());
  std::vector<uint8_t> Dict(TargetSize);
  // ZDICT_trainFromBuffer's parameters but the split.
  ZDICT_fastCover_params_t P;
  std::memset(&P, 0, sizeof(P));
  P.d = 8;
  P.steps = 4;
  P.splitPoint = 1.0;
  P.zParams.compressionLevel = EntryCompressionLevel;
  size_t N = ZDICT_optimizeTrainFromBuffer_fastCover(
      Dict.data(), Dict.size(), All.data(), Sizes.data(),
      unsigned(Sizes.size()), &P);
  if (ZDICT_isError(N))
    return bad(Twine("zstd dictionary training failed on ") +
               Twine(Sizes.size()) + " samples of " + Twine(All.size()) +
               " bytes: " + ZDICT_getErrorName(N));
  Dict.resize(N);
  if (ZDICT_getDictID(Dict.data(), Dict.size()) == 0)
    return bad("zstd dictionary training made a dictionary without an id");
  return Dict;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

namespace {
/// Reads the file \p Path of at most \p Limit bytes: not through a link,
/// never blocking (a FIFO), only a regular file of the effective user, the
/// size checked before anything is read. \p Stat gets the file's stat.
Expected<std::vector<uint8_t>> readOwnFile(const std::string &Path,
                                           size_t Limit,
                                           struct stat *StatOut = nullptr) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0) {
    int E = errno;
    return createStringError(std::error_code(E, std::generic_category()),
                             "cannot open %s: %s", Path.c_str(),
                             E == ELOOP ? "it is a symbolic link"
                                        : std::strerror(E));
  }
  struct stat St;
  auto Refuse = [&](const Twine &Why) {
    ::close(FD);
    return bad(Path + ": " + Why);
  };
  if (::fstat(FD, &St) != 0)
    return Refuse(Twine("cannot inspect it: ") + std::strerror(errno));
  if (!S_ISREG(St.st_mode))
    return Refuse("it is not a regular file");
  if (St.st_uid != ::geteuid())
    return Refuse("it is owned by another user");
  if (uint64_t(St.st_size) > Limit)
    return Refuse("it has " + Twine(uint64_t(St.st_size)) +
                  " bytes, more than " + Twine(uint64_t(Limit)));
  // One byte more than the size, so that a file grown since the fstat is
  // noticed rather than cut short.
  std::vector<uint8_t> Out(size_t(St.st_size) + 1);
  size_t Done = 0;
  while (Done < Out.size()) {
    ssize_t N = ::read(FD, Out.data() + Done, Out.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return Refuse(Twine("cannot read it: ") + std::strerror(errno));
    if (N == 0)
      break;
    Done += size_t(N);
  }
  ::close(FD);
  if (Done != size_t(St.st_size))
    return bad(Path + ": it changed while it was read");
  Out.resize(Done);
  if (StatOut)
    *StatOut = St;
  return Out;
}

std::atomic<uint64_t> TmpCounter{0};

/// A fresh temporary name beside \p Path.
std::string tmpName(const std::string &Path) {
  return Path + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(TmpCounter.fetch_add(1));
}

/// Writes \p Bytes to a new temporary file beside \p Path (0600, synced
/// when \p Sync); its name, or an error.
Expected<std::string> writeTemporary(const std::string &Path,
                                     ArrayRef<uint8_t> Bytes, bool Sync,
                                     const struct timespec *Times = nullptr) {
  std::string Tmp = tmpName(Path);
  int FD = ::open(Tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (FD < 0)
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot create %s: %s", Tmp.c_str(),
                             std::strerror(errno));
  bool OK = writeAllFd(FD, Bytes.data(), Bytes.size());
  if (OK && Times)
    OK = ::futimens(FD, Times) == 0;
  if (OK && Sync)
    OK = ::fsync(FD) == 0;
  int E = errno;
  if (::close(FD) != 0 && OK) {
    OK = false;
    E = errno;
  }
  if (!OK) {
    ::unlink(Tmp.c_str());
    return createStringError(std::error_code(E, std::generic_category()),
                             "cannot write %s: %s", Tmp.c_str(),
                             std::strerror(E));
  }
  return Tmp;
}

void syncFolder(const std::string &Folder) {
  int FD = ::open(Folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (FD >= 0) {
    (void)::fsync(FD);
    ::close(FD);
  }
}

std::vector<std::string> listFolder(const std::string &Path) {
  std::vector<std::string> Names;
  if (DIR *D = ::opendir(Path.c_str())) {
    while (dirent *E = ::readdir(D)) {
      StringRef N(E->d_name);
      if (N != "." && N != "..")
        Names.push_back(N.str());
    }
    ::closedir(D);
  }
  std::sort(Names.begin(), Names.end());
  return Names;
}
} // namespace

//===----------------------------------------------------------------------===//
// NamespaceDictionaries
//===----------------------------------------------------------------------===//

bool NamespaceDictionaries::FileStamp::operator==(const FileStamp &O) const {
  return Dev == O.Dev && Ino == O.Ino && Size == O.Size &&
         MTime.tv_sec == O.MTime.tv_sec && MTime.tv_nsec == O.MTime.tv_nsec;
}

NamespaceDictionaries::NamespaceDictionaries(std::string Folder)
    : Folder(std::move(Folder)) {}

Expected<std::shared_ptr<const EntryDictionary>>
NamespaceDictionaries::loadLocked(uint32_t Id) {
  if (auto It = Loaded.find(Id); It != Loaded.end())
    return It->second;
  std::string Path = Folder + "/" + dictionaryFileName(Id);
  Expected<std::vector<uint8_t>> Bytes = readOwnFile(Path, DictionaryMaxSize);
  if (!Bytes)
    return Bytes.takeError();
  Expected<std::shared_ptr<const EntryDictionary>> D =
      EntryDictionary::fromBytes(*Bytes);
  if (!D)
    return bad(Path + ": " + toString(D.takeError()));
  if ((*D)->id() != Id)
    return bad(Path + ": it holds dictionary " + hex8((*D)->id()) +
               ", not the one its name gives");
  // Only good ones are kept: a missing dictionary may be installed later.
  Loaded[Id] = *D;
  return *D;
}

Expected<std::shared_ptr<const EntryDictionary>>
NamespaceDictionaries::load(uint32_t Id) {
  std::lock_guard<std::mutex> L(Lock);
  return loadLocked(Id);
}

std::shared_ptr<const EntryDictionary> NamespaceDictionaries::byId(uint32_t Id) {
  Expected<std::shared_ptr<const EntryDictionary>> D = load(Id);
  if (!D) {
    consumeError(D.takeError());
    return nullptr;
  }
  return *D;
}

Expected<std::shared_ptr<const EntryDictionary>>
NamespaceDictionaries::loadCurrent() {
  std::lock_guard<std::mutex> L(Lock);
  std::string Path = Folder + "/" + CurrentDictionaryFileName;
  struct stat St;
  if (::lstat(Path.c_str(), &St) != 0) {
    CurrentStamp.reset();
    CurrentId = 0;
    if (errno == ENOENT)
      return nullptr;
    return createStringError(std::error_code(errno, std::generic_category()),
                             "cannot inspect %s: %s", Path.c_str(),
                             std::strerror(errno));
  }
  FileStamp Now{St.st_dev, St.st_ino, St.st_size, St.st_mtim};
  // zdict-current is replaced by a rename, never rewritten in place: the
  // same inode, size and time is the same content.
  if (!CurrentStamp || !(*CurrentStamp == Now)) {
    CurrentStamp.reset();
    CurrentId = 0;
    Expected<std::vector<uint8_t>> Text =
        readOwnFile(Path, CurrentMaxSize, &St);
    if (!Text)
      return Text.takeError();
    StringRef S(reinterpret_cast<const char *>(Text->data()), Text->size());
    std::optional<uint32_t> Id = parseHex8(S.trim());
    if (!Id || *Id == 0)
      return bad(Path + ": it does not hold a dictionary id (8 hex digits)");
    CurrentStamp = FileStamp{St.st_dev, St.st_ino, St.st_size, St.st_mtim};
    CurrentId = *Id;
  }
  return loadLocked(CurrentId);
}

std::shared_ptr<const EntryDictionary> NamespaceDictionaries::current() {
  Expected<std::shared_ptr<const EntryDictionary>> D = loadCurrent();
  if (!D) {
    consumeError(D.takeError());
    return nullptr;
  }
  return *D;
}

std::function<std::shared_ptr<const EntryDictionary>(uint32_t)>
NamespaceDictionaries::lookup() {
  return [this](uint32_t Id) { return byId(Id); };
}

Expected<std::shared_ptr<const EntryDictionary>>
NamespaceDictionaries::install(ArrayRef<uint8_t> Bytes, bool MakeCurrent) {
  Expected<std::shared_ptr<const EntryDictionary>> D =
      EntryDictionary::fromBytes(Bytes);
  if (!D)
    return D.takeError();
  std::lock_guard<std::mutex> L(Lock);
  uint32_t Id = (*D)->id();
  std::string Path = Folder + "/" + dictionaryFileName(Id);
  // Synced before it is linked: an entry may name it as soon as it is
  // current, and such an entry must never outlive it.
  Expected<std::string> Tmp = writeTemporary(Path, Bytes, /*Sync=*/true);
  if (!Tmp)
    return Tmp.takeError();
  int R = ::link(Tmp->c_str(), Path.c_str());
  int E = errno;
  ::unlink(Tmp->c_str());
  if (R != 0 && E != EEXIST)
    return createStringError(std::error_code(E, std::generic_category()),
                             "cannot install %s: %s", Path.c_str(),
                             std::strerror(E));
  if (R != 0) {
    // Never replaced: entries may name the one there. It must be the same.
    Expected<std::vector<uint8_t>> Old = readOwnFile(Path, DictionaryMaxSize);
    if (!Old)
      return Old.takeError();
    if (ArrayRef<uint8_t>(*Old) != Bytes)
      return bad(Path + ": another dictionary with id " + hex8(Id) +
                 " is installed already");
  }
  Loaded.emplace(Id, *D);
  if (MakeCurrent) {
    std::string Text = hex8(Id) + "\n";
    std::string CurPath = Folder + "/" + CurrentDictionaryFileName;
    Expected<std::string> CurTmp = writeTemporary(
        CurPath,
        ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Text.data()),
                          Text.size()),
        /*Sync=*/true);
    if (!CurTmp)
      return CurTmp.takeError();
    if (::rename(CurTmp->c_str(), CurPath.c_str()) != 0) {
      int E = errno;
      ::unlink(CurTmp->c_str());
      return createStringError(std::error_code(E, std::generic_category()),
                               "cannot replace %s: %s", CurPath.c_str(),
                               std::strerror(E));
    }
    CurrentStamp.reset(); // read again at the next current()
  }
  syncFolder(Folder);
  return *D;
}

//===----------------------------------------------------------------------===//
// Retraining a folder
//===----------------------------------------------------------------------===//

namespace {
/// An entry as retraining read it.
struct ReadEntry {
  std::string Name;
  struct stat St;
  EntryHeader Header;
  std::vector<uint8_t> Payload;
};

bool sameFile(const struct stat &A, const struct stat &B) {
  return A.st_dev == B.st_dev && A.st_ino == B.st_ino &&
         A.st_size == B.st_size && A.st_mtim.tv_sec == B.st_mtim.tv_sec &&
         A.st_mtim.tv_nsec == B.st_mtim.tv_nsec;
}
} // namespace

Expected<RetrainSummary> retrainNamespace(StringRef FolderRef,
                                          uint64_t NamespaceHash,
                                          size_t DictionarySize) {
  std::string Folder = FolderRef.str();
  NamespaceDictionaries Dicts(Folder);
  RetrainSummary Sum;

  // Every entry that decodes, with whichever dictionary it was written with.
  std::vector<ReadEntry> Entries;
  for (const std::string &Name : listFolder(Folder)) {
    std::optional<KernelCacheKey> Key = keyFromEntryFileName(Name);
    if (!Key)
      continue;
    ReadEntry E;
    E.Name = Name;
    Expected<std::vector<uint8_t>> File =
        readOwnFile(Folder + "/" + Name,
                    size_t(std::min<uint64_t>(EntryMaxPayloadSize, SIZE_MAX)),
                    &E.St);
    if (!File) {
      consumeError(File.takeError());
      ++Sum.LeftAlone;
      continue;
    }
    EntryExpectations Expect;
    Expect.Key = *Key;
    Expect.NamespaceHash = NamespaceHash;
    Expect.Dictionary = Dicts.lookup();
    Expected<std::vector<uint8_t>> Payload =
        decodeEntry(*File, Expect, &E.Header);
    if (!Payload) {
      consumeError(Payload.takeError());
      ++Sum.LeftAlone;
      continue;
    }
    E.Payload = std::move(*Payload);
    Entries.push_back(std::move(E));
  }

  // Trained on what the frames hold (the feature list, then the payload).
  std::vector<std::vector<uint8_t>> Contents;
  for (const ReadEntry &E : Entries)
    Contents.push_back(entryFrameContent(E.Header.Info.Features, E.Payload));
  std::vector<ArrayRef<uint8_t>> Samples(Contents.begin(), Contents.end());
  Expected<std::vector<uint8_t>> Bytes =
      trainEntryDictionary(Samples, DictionarySize);
  if (!Bytes)
    return Bytes.takeError();
  Expected<std::shared_ptr<const EntryDictionary>> D =
      Dicts.install(*Bytes, /*MakeCurrent=*/true);
  if (!D)
    return D.takeError();
  Sum.DictionaryId = (*D)->id();
  Sum.DictionarySize = (*D)->bytes().size();

  for (ReadEntry &E : Entries) {
    Expected<std::vector<uint8_t>> New =
        encodeEntry(E.Header.Key, NamespaceHash, E.Header.Info, E.Payload,
                    D->get());
    if (!New)
      return New.takeError();
    std::string Path = Folder + "/" + E.Name;
    // The entry keeps its last use: pruning goes by modification time.
    struct timespec Times[2] = {E.St.st_atim, E.St.st_mtim};
    Expected<std::string> Tmp = writeTemporary(Path, *New, false, Times);
    if (!Tmp)
      return Tmp.takeError();
    // Another process may have purged or replaced the entry since it was
    // read: then it is left to that process.
    struct stat Now;
    if (::lstat(Path.c_str(), &Now) != 0 || !sameFile(Now, E.St)) {
      ::unlink(Tmp->c_str());
      ++Sum.Changed;
      continue;
    }
    if (::rename(Tmp->c_str(), Path.c_str()) != 0) {
      int Err = errno;
      ::unlink(Tmp->c_str());
      return createStringError(std::error_code(Err, std::generic_category()),
                               "cannot replace %s: %s", Path.c_str(),
                               std::strerror(Err));
    }
    ++Sum.Entries;
    Sum.BytesBefore += uint64_t(E.St.st_size);
    Sum.BytesAfter += New->size();
  }
  return Sum;
}

Expected<size_t> pruneDictionaries(StringRef FolderRef, unsigned GraceSeconds) {
  std::string Folder = FolderRef.str();
  std::string CurPath = Folder + "/" + CurrentDictionaryFileName;
  struct stat CurSt;
  if (::lstat(CurPath.c_str(), &CurSt) == 0 &&
      ::time(nullptr) - CurSt.st_mtime < time_t(GraceSeconds))
    return 0;
  NamespaceDictionaries Dicts(Folder);
  uint32_t Current = 0;
  Expected<std::shared_ptr<const EntryDictionary>> Cur = Dicts.loadCurrent();
  if (!Cur) {
    // A current marker we cannot read: do not guess which one is in use.
    consumeError(Cur.takeError());
    if (::access(CurPath.c_str(), F_OK) == 0)
      return 0;
  } else if (*Cur) {
    Current = (*Cur)->id();
  }

  std::vector<std::string> Names = listFolder(Folder);
  std::set<uint32_t> Used;
  for (const std::string &Name : Names) {
    if (!keyFromEntryFileName(Name) && !(StringRef(Name).starts_with("kiln-") &&
                                         StringRef(Name).contains(".tmp-")))
      continue;
    // Temporaries too: a write in progress may name a dictionary.
    Expected<std::vector<uint8_t>> File = readOwnFile(
        Folder + "/" + Name,
        size_t(std::min<uint64_t>(EntryMaxPayloadSize, SIZE_MAX)));
    // An entry that cannot be read may still need any dictionary: nothing
    // is deleted then. One removed meanwhile needs none.
    auto KeepAll = [&](const std::string &Why) {
      return createStringError(
          std::make_error_code(std::errc::operation_canceled),
          "kept every dictionary of %s: entry %s cannot be read (%s), so "
          "the dictionaries it needs are unknown",
          Folder.c_str(), Name.c_str(), Why.c_str());
    };
    if (!File) {
      bool Gone = false;
      std::string Why;
      handleAllErrors(File.takeError(), [&](const ErrorInfoBase &E) {
        Gone = E.convertToErrorCode() == std::errc::no_such_file_or_directory;
        Why = E.message();
      });
      if (Gone)
        continue;
      return KeepAll(Why);
    }
    Expected<EntryHeader> H = parseEntryHeader(*File);
    if (!H)
      return KeepAll(toString(H.takeError()));
    if (H->DictionaryId)
      Used.insert(H->DictionaryId);
  }
  size_t Removed = 0;
  for (const std::string &Name : Names) {
    std::optional<uint32_t> Id = dictionaryIdFromFileName(Name);
    if (!Id || *Id == Current || Used.count(*Id))
      continue;
    if (::unlink((Folder + "/" + Name).c_str()) == 0)
      ++Removed;
  }
  return Removed;
}

} // namespace kiln
