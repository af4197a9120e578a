//===- HostileStoreTest.cpp - A damaged or poisoned store is harmless ----===//
//
// The findings of a hostile-input trial (docs/Store.md, "Failures, all of
// them"): huge files, FIFOs, links, other users' files, folders named like
// files, a namespace folder removed under a writer, an unreachable root,
// files that cannot be removed, bundles that lie. A read that could hang or
// run out of memory runs in a forked child with an alarm and an address
// space limit, so that a regression is a failure, not a hung test.
//
//===----------------------------------------------------------------------===//

#include "Support/StoreTestSupport.h"

#include "kiln/Store/Bundle.h"
#include "kiln/Store/StoreScan.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"

#include "gtest/gtest.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr uint64_t HugeSize = uint64_t(5) << 30; // sparse: no disk used

std::vector<uint8_t> readBytes(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(In), {});
}
void writeText(const std::string &Path, const std::string &Text) {
  std::ofstream(Path, std::ios::binary | std::ios::trunc) << Text;
}
std::string readText(const std::string &Path) {
  std::vector<uint8_t> B = readBytes(Path);
  return std::string(B.begin(), B.end());
}
bool exists(const std::string &Path) {
  struct stat St;
  return ::lstat(Path.c_str(), &St) == 0;
}
bool isRegular(const std::string &Path) {
  struct stat St;
  return ::lstat(Path.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}
void makeHuge(const std::string &Path) {
  int FD = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(FD, 0) << std::strerror(errno);
  ASSERT_EQ(::ftruncate(FD, off_t(HugeSize)), 0) << std::strerror(errno);
  ::close(FD);
}
std::vector<uint8_t> payload(size_t N = 300) {
  std::vector<uint8_t> P(N);
  for (size_t I = 0; I != N; ++I)
    P[I] = uint8_t((I * 7) % 13);
  return P;
}
bool contains(const std::string &S, const std::string &Part) {
  return S.find(Part) != std::string::npos;
}
std::string joined(const std::vector<std::string> &V) {
  std::string S;
  for (const std::string &W : V)
    S += W + "\n";
  return S;
}

/// The bytes of address space this process uses now.
uint64_t addressSpaceNow() {
  std::ifstream In("/proc/self/status");
  std::string Line;
  while (std::getline(In, Line))
    if (Line.rfind("VmSize:", 0) == 0)
      return std::stoull(Line.substr(7)) * 1024; // "VmSize:   1234 kB"
  return uint64_t(1) << 30;
}

/// What a child run by inChild said, or why it said nothing.
struct ChildResult {
  std::string Output;
  std::string Failure; ///< "" when it exited normally with status 0
};

/// Runs \p Fn in a forked child bounded to \p Seconds and to 1 GiB of
/// address space more than this process has: a read that blocks is killed
/// by SIGALRM, one that allocates a huge file fails its allocation. The
/// child's answer is what \p Fn returns. \p BeforeRun runs first in the
/// child (dropping privileges, for instance); a non-empty answer from it is
/// reported as the failure.
ChildResult inChild(unsigned Seconds, std::function<std::string()> Fn,
                    std::function<std::string()> BeforeRun = {}) {
  uint64_t Limit = addressSpaceNow() + (uint64_t(1) << 30);
  int Pipe[2];
  if (::pipe(Pipe) != 0)
    return {"", std::string("pipe: ") + std::strerror(errno)};
  pid_t Pid = ::fork();
  if (Pid < 0)
    return {"", std::string("fork: ") + std::strerror(errno)};
  if (Pid == 0) {
    ::close(Pipe[0]);
    ::alarm(Seconds);
    rlimit L{rlim_t(Limit), rlim_t(Limit)};
    ::setrlimit(RLIMIT_AS, &L);
    std::string Out;
    int Status = 0;
    if (BeforeRun)
      Out = BeforeRun();
    if (!Out.empty())
      Status = 3;
    else
      Out = Fn();
    const char *P = Out.data();
    size_t Left = Out.size();
    while (Left) {
      ssize_t N = ::write(Pipe[1], P, Left);
      if (N <= 0)
        break;
      P += N;
      Left -= size_t(N);
    }
    ::_exit(Status);
  }
  ::close(Pipe[1]);
  ChildResult R;
  char Buf[4096];
  ssize_t N;
  while ((N = ::read(Pipe[0], Buf, sizeof(Buf))) > 0 ||
         (N < 0 && errno == EINTR))
    if (N > 0)
      R.Output.append(Buf, size_t(N));
  ::close(Pipe[0]);
  int Status = 0;
  while (::waitpid(Pid, &Status, 0) < 0 && errno == EINTR)
    ;
  if (WIFSIGNALED(Status))
    R.Failure = WTERMSIG(Status) == SIGALRM
                    ? "the child hung (killed after " +
                          std::to_string(Seconds) + " s)"
                    : "the child died of signal " +
                          std::to_string(WTERMSIG(Status)) +
                          " (out of memory?)";
  else if (WEXITSTATUS(Status) != 0)
    R.Failure = "the child exited with status " +
                std::to_string(WEXITSTATUS(Status)) + ": " + R.Output;
  return R;
}

/// A store with one good entry, as FileStoreFaultTest's.
class HostileTest : public ::testing::Test {
protected:
  void SetUp() override {
    Store = FileStore::openAt(Root.path(), "cpu", "fingerprint A", readWrite());
    ASSERT_NE(Store, nullptr);
    ASSERT_FALSE(failed(Store->write(Key, payload(), Info)));
    Folder = Store->folder();
    Path = Folder + "/" + entryFileName(Key);
    Stats = Folder + "/" + StatsFileName;
    ASSERT_TRUE(isRegular(Path));
  }

  /// A read of Key in a bounded child: "hit" or "miss", then the warnings.
  ChildResult readInChild() {
    return inChild(20, [this] {
      WarningCapture W(Store->warnings());
      std::optional<std::vector<uint8_t>> P = Store->read(Key);
      return std::string(P ? "hit\n" : "miss\n") + joined(W.Warnings);
    });
  }

  TempDir Root, Elsewhere;
  std::unique_ptr<FileStore> Store;
  KernelCacheKey Key{0x1234, 0x5678};
  EntryInfo Info{"add-0011223344556677", "checked-a64", "", 0xabcdef};
  std::string Folder, Path, Stats;
};

//===----------------------------------------------------------------------===//
// 1. Huge files are never read
//===----------------------------------------------------------------------===//

TEST_F(HostileTest, HugeEntryIsABadEntryNeverRead) {
  makeHuge(Path);
  ChildResult R = readInChild();
  ASSERT_EQ(R.Failure, "");
  EXPECT_TRUE(contains(R.Output, "miss\n")) << R.Output;
  EXPECT_TRUE(contains(R.Output, "removed bad store entry " + Path)) << R.Output;
  EXPECT_TRUE(contains(R.Output, "it has 5368709120 bytes, more than the "
                                 "limit of 67108864"))
      << R.Output;
  EXPECT_FALSE(exists(Path));
  // The next write keeps it again.
  EXPECT_FALSE(failed(Store->write(Key, payload(), Info)));
  EXPECT_EQ(Store->read(Key), std::optional<std::vector<uint8_t>>(payload()));
}

TEST_F(HostileTest, ScanVerifyAndPruneNeverReadAHugeEntry) {
  makeHuge(Path);
  ChildResult R = inChild(20, [this] {
    std::string Out;
    for (const NamespaceDir &NS : scanStore(Root.path()))
      for (const EntryFile &E : NS.Entries)
        Out += E.Name + ": " + llvm::toString(verifyEntryFile(NS, E)) + "\n";
    PruneResult P = pruneStore(Root.path(), uint64_t(1) << 30);
    Out += "removed bad " + std::to_string(P.RemovedBad) + "\n";
    return Out;
  });
  ASSERT_EQ(R.Failure, "");
  EXPECT_TRUE(contains(R.Output, "more than the limit of 67108864")) << R.Output;
  EXPECT_TRUE(contains(R.Output, "removed bad 1")) << R.Output;
  EXPECT_FALSE(exists(Path)) << "pruning removes what nothing can read";
}

TEST_F(HostileTest, OversizedEntryIsNotWrittenAndWritesGoOn) {
  // Incompressible bytes: the entry is larger than the limit.
  std::vector<uint8_t> Big(size_t(EntryMaxFileSize) + 4096);
  uint64_t X = 88172645463325252ull;
  for (uint8_t &B : Big) {
    X ^= X << 13;
    X ^= X >> 7;
    X ^= X << 17;
    B = uint8_t(X);
  }
  KernelCacheKey K2{7, 7};
  llvm::Error E = Store->write(K2, Big, Info);
  ASSERT_TRUE(bool(E));
  bool Quiet = true;
  std::string Reason;
  llvm::handleAllErrors(std::move(E), [&](const StoreRefusal &SR) {
    Quiet = SR.quiet();
    Reason = SR.reason();
  });
  EXPECT_FALSE(Quiet);
  EXPECT_TRUE(contains(Reason, "more than the store's limit")) << Reason;
  EXPECT_FALSE(exists(Folder + "/" + entryFileName(K2)));
  EXPECT_FALSE(failed(Store->write(KernelCacheKey{8, 8}, payload(), Info)))
      << "an oversized entry does not stop writes";
}

TEST_F(HostileTest, HugeStatsFileIsIgnoredNeverRead) {
  makeHuge(Stats);
  ChildResult R = inChild(20, [this] {
    StoreWarnings W;
    std::vector<std::string> Seen;
    W.setSink([&](llvm::StringRef M) { Seen.push_back(M.str()); });
    StoreCounters C = readStoreCounters(Stats, &W);
    std::string Out = "read hits " + std::to_string(C.Hits) + "\n";
    {
      WarningCapture WC(Store->warnings());
      Store->read(Key);
      Store->flushCounters();
      Seen.insert(Seen.end(), WC.Warnings.begin(), WC.Warnings.end());
    }
    return Out + joined(Seen);
  });
  ASSERT_EQ(R.Failure, "");
  EXPECT_TRUE(contains(R.Output, "read hits 0")) << R.Output;
  EXPECT_TRUE(contains(R.Output, "ignoring the counters file " + Stats +
                                     ": it has 5368709120 bytes"))
      << R.Output;
  EXPECT_TRUE(contains(R.Output, "; counting from zero")) << R.Output;
  // Counting started again from zero: this process's write and hit.
  struct stat St;
  ASSERT_EQ(::lstat(Stats.c_str(), &St), 0);
  EXPECT_LT(St.st_size, 4096);
  StoreCounters C = readStoreCounters(Stats);
  EXPECT_EQ(C.Writes, 1u);
  EXPECT_EQ(C.Hits, 1u);
}

//===----------------------------------------------------------------------===//
// 2. Nothing blocks on a FIFO
//===----------------------------------------------------------------------===//

TEST_F(HostileTest, FifoEntryNeverBlocks) {
  ASSERT_EQ(::unlink(Path.c_str()), 0);
  ASSERT_EQ(::mkfifo(Path.c_str(), 0600), 0);
  ChildResult R = readInChild();
  ASSERT_EQ(R.Failure, "");
  EXPECT_TRUE(contains(R.Output, "miss\n")) << R.Output;
  EXPECT_TRUE(contains(R.Output, "removed bad store entry " + Path +
                                     ": it is a FIFO, not a regular file"))
      << R.Output;
  EXPECT_FALSE(exists(Path));
}

TEST_F(HostileTest, FifoStatsAndFingerprintNeverBlock) {
  std::string FP = Folder + "/" + FingerprintFileName;
  ASSERT_EQ(::unlink(FP.c_str()), 0);
  ASSERT_EQ(::mkfifo(FP.c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(Stats.c_str(), 0600), 0);
  ChildResult R = inChild(20, [this] {
    StoreWarnings W;
    std::vector<std::string> Seen;
    W.setSink([&](llvm::StringRef M) { Seen.push_back(M.str()); });
    readStoreCounters(Stats, &W);
    std::string Out;
    for (const NamespaceDir &NS : scanStore(Root.path()))
      Out += "description '" + NS.Description + "'\n";
    WarningCapture WC(Store->warnings());
    Store->flushCounters();
    Seen.insert(Seen.end(), WC.Warnings.begin(), WC.Warnings.end());
    return Out + joined(Seen);
  });
  ASSERT_EQ(R.Failure, "");
  EXPECT_TRUE(contains(R.Output, "description ''")) << R.Output;
  EXPECT_TRUE(contains(R.Output, "ignoring the counters file " + Stats +
                                     ": it is a FIFO"))
      << R.Output;
  EXPECT_TRUE(contains(R.Output, "replaced the counters file " + Stats +
                                     ": it is a FIFO"))
      << R.Output;
  EXPECT_TRUE(isRegular(Stats));
  EXPECT_EQ(readStoreCounters(Stats).Writes, 1u);
}

//===----------------------------------------------------------------------===//
// 3. Nothing in a namespace is followed through a link
//===----------------------------------------------------------------------===//

TEST_F(HostileTest, LinkedEntryIsNotServedAndOnlyTheLinkIsRemoved) {
  // A valid entry, elsewhere (another user's, say), linked into place.
  std::string Target = Elsewhere.sub("entry");
  ASSERT_EQ(::rename(Path.c_str(), Target.c_str()), 0);
  ASSERT_EQ(::symlink(Target.c_str(), Path.c_str()), 0);
  std::vector<uint8_t> Before = readBytes(Target);
  WarningCapture W(Store->warnings());
  EXPECT_EQ(Store->read(Key), std::nullopt);
  ASSERT_EQ(W.Warnings.size(), 1u);
  EXPECT_TRUE(contains(W.Warnings[0], "removed bad store entry " + Path +
                                          ": it is a symbolic link"))
      << W.Warnings[0];
  EXPECT_FALSE(exists(Path));
  EXPECT_EQ(readBytes(Target), Before) << "the target is left alone";
  EXPECT_EQ(Store->info(Key), std::nullopt);
}

TEST_F(HostileTest, LinkedStatsFileIsNeverWrittenThrough) {
  std::string Victim = Elsewhere.sub("victim");
  writeText(Victim, "another user's file\n");
  ASSERT_EQ(::symlink(Victim.c_str(), Stats.c_str()), 0);
  WarningCapture W(Store->warnings());
  Store->flushCounters();
  EXPECT_EQ(readText(Victim), "another user's file\n");
  EXPECT_TRUE(isRegular(Stats)) << "the link is replaced by a file";
  EXPECT_EQ(readStoreCounters(Stats).Writes, 1u);
  ASSERT_EQ(W.Warnings.size(), 1u);
  EXPECT_TRUE(contains(W.Warnings[0], "replaced the counters file " + Stats +
                                          ": it is a symbolic link"))
      << W.Warnings[0];
  // readStoreCounters does not follow one either.
  ASSERT_EQ(::unlink(Stats.c_str()), 0);
  writeText(Victim, "hits 99\n");
  ASSERT_EQ(::symlink(Victim.c_str(), Stats.c_str()), 0);
  EXPECT_EQ(readStoreCounters(Stats).Hits, 0u);
}

TEST_F(HostileTest, PlantedFingerprintTemporaryIsNotFollowed) {
  // A namespace not used yet, whose folder holds links at the names a
  // writer of this process could pick for its fingerprint.txt temporary.
  std::string Victim = Elsewhere.sub("victim");
  writeText(Victim, "precious\n");
  std::string NS = Root.sub("cpu/" + fingerprintHex("fingerprint Z"));
  ASSERT_EQ(::mkdir(NS.c_str(), 0700), 0);
  std::string Base =
      NS + "/" + FingerprintFileName + ".tmp-" + std::to_string(::getpid());
  ASSERT_EQ(::symlink(Victim.c_str(), Base.c_str()), 0);
  for (int N = 0; N != 64; ++N)
    ASSERT_EQ(::symlink(Victim.c_str(), (Base + "-" + std::to_string(N)).c_str()),
              0);
  auto Z = FileStore::openAt(Root.path(), "cpu", "fingerprint Z", readWrite());
  EXPECT_FALSE(failed(Z->write(KernelCacheKey{1, 1}, payload(), Info)));
  EXPECT_EQ(readText(Victim), "precious\n");
}

TEST_F(HostileTest, LinkedFingerprintIsNotBelieved) {
  std::string FP = Folder + "/" + FingerprintFileName;
  std::string Forged = Elsewhere.sub("forged");
  writeText(Forged, "a CPU it is not\n");
  ASSERT_EQ(::unlink(FP.c_str()), 0);
  ASSERT_EQ(::symlink(Forged.c_str(), FP.c_str()), 0);
  std::vector<NamespaceDir> All = scanStore(Root.path());
  ASSERT_EQ(All.size(), 1u);
  EXPECT_EQ(All[0].Description, "");
}

TEST_F(HostileTest, EntryOfAnotherUserIsNeitherLoadedNorDeleted) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "only root can give a file to another user";
  ASSERT_EQ(::chown(Path.c_str(), 12345, 12345), 0);
  WarningCapture W(Store->warnings());
  EXPECT_EQ(Store->read(Key), std::nullopt);
  EXPECT_EQ(Store->read(Key), std::nullopt);
  ASSERT_EQ(W.Warnings.size(), 1u) << "once per file and process";
  EXPECT_TRUE(contains(W.Warnings[0], "ignoring store entry " + Path +
                                          ": it is owned by another user "
                                          "(uid 12345), not loaded (left in "
                                          "place)"))
      << W.Warnings[0];
  EXPECT_TRUE(isRegular(Path));
  EXPECT_EQ(Store->pendingCounters().CorruptPurged, 0u);
  // kiln-store verify calls it bad (the folder is this user's).
  std::vector<NamespaceDir> All = scanStore(Root.path());
  ASSERT_EQ(All.size(), 1u);
  ASSERT_EQ(All[0].Entries.size(), 1u);
  EXPECT_EQ(All[0].Entries[0].Fault, StoreFileFault::OtherOwner);
  EXPECT_TRUE(contains(
      llvm::toString(verifyEntryFile(All[0], All[0].Entries[0])),
      "owned by another user"));
}

TEST_F(HostileTest, PruneRemovesLinksAndFifosWithoutFollowing) {
  std::string Target = Elsewhere.sub("target");
  writeText(Target, "kept\n");
  std::string L = Folder + "/" + entryFileName(KernelCacheKey{1, 1});
  std::string F = Folder + "/" + entryFileName(KernelCacheKey{2, 2});
  std::string T = Folder + "/" + entryFileName(KernelCacheKey{3, 3}) +
                  ".tmp-1-1";
  ASSERT_EQ(::symlink(Target.c_str(), L.c_str()), 0);
  ASSERT_EQ(::mkfifo(F.c_str(), 0600), 0);
  ASSERT_EQ(::symlink(Target.c_str(), T.c_str()), 0);
  timespec Old[2] = {{0, 0}, {0, 0}}; // a temporary left an hour ago and more
  ASSERT_EQ(::utimensat(AT_FDCWD, T.c_str(), Old, AT_SYMLINK_NOFOLLOW), 0);
  PruneResult R = pruneStore(Root.path(), uint64_t(1) << 30);
  EXPECT_EQ(R.RemovedBad, 2u);
  EXPECT_EQ(R.Removed, 0u);
  EXPECT_TRUE(R.Failures.empty()) << joined(R.Failures);
  EXPECT_FALSE(exists(L));
  EXPECT_FALSE(exists(F));
  EXPECT_FALSE(exists(T));
  EXPECT_EQ(readText(Target), "kept\n");
  EXPECT_TRUE(isRegular(Path));
}

//===----------------------------------------------------------------------===//
// 4. A writer that finds its folder gone
//===----------------------------------------------------------------------===//

TEST_F(HostileTest, FolderRemovedMidBatchIsMadeAgain) {
  WarningCapture W(Store->warnings());
  std::filesystem::remove_all(Folder); // kiln-store clear, meanwhile
  KernelCacheKey K2{2, 2}, K3{3, 3};
  llvm::Error E = Store->write(K2, payload(40), Info);
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  EXPECT_FALSE(failed(Store->write(K3, payload(50), Info)));
  EXPECT_EQ(Store->read(K2), std::optional<std::vector<uint8_t>>(payload(40)));
  EXPECT_EQ(Store->read(K3), std::optional<std::vector<uint8_t>>(payload(50)));
  EXPECT_TRUE(W.Warnings.empty()) << joined(W.Warnings);
  struct stat St;
  ASSERT_EQ(::lstat(Folder.c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 0777, 0700u);
  EXPECT_EQ(readText(Folder + "/" + FingerprintFileName), "fingerprint A\n");
  // And again: once per failure, not once per process.
  std::filesystem::remove_all(Root.sub("cpu"));
  EXPECT_FALSE(failed(Store->write(KernelCacheKey{4, 4}, payload(), Info)));
  EXPECT_TRUE(isRegular(Folder + "/" + entryFileName(KernelCacheKey{4, 4})));
}

TEST_F(HostileTest, FolderMadeAgainIsTrustedAgain) {
  // The folder is gone, and the backend folder above it is no longer this
  // user's alone: the writer that makes it again checks it again.
  std::filesystem::remove_all(Folder);
  ASSERT_EQ(::chmod(Root.sub("cpu").c_str(), 0770), 0);
  WarningCapture W(Store->warnings());
  EXPECT_TRUE(failed(Store->write(KernelCacheKey{2, 2}, payload(), Info)));
  EXPECT_TRUE(failed(Store->write(KernelCacheKey{3, 3}, payload(), Info)));
  ASSERT_EQ(W.Warnings.size(), 1u) << joined(W.Warnings);
  EXPECT_TRUE(contains(W.Warnings[0], Root.sub("cpu") +
                                          ": others can write to it"))
      << W.Warnings[0];
  EXPECT_FALSE(exists(Folder + "/" + entryFileName(KernelCacheKey{2, 2})));
}

//===----------------------------------------------------------------------===//
// 5. Right words
//===----------------------------------------------------------------------===//

TEST_F(HostileTest, FolderNamedLikeAnEntryIsWarnedAboutOnceAndLeft) {
  ASSERT_EQ(::unlink(Path.c_str()), 0);
  ASSERT_EQ(::mkdir(Path.c_str(), 0700), 0);
  WarningCapture W(Store->warnings());
  EXPECT_EQ(Store->read(Key), std::nullopt);
  EXPECT_EQ(Store->read(Key), std::nullopt);
  ASSERT_EQ(W.Warnings.size(), 1u) << joined(W.Warnings);
  EXPECT_EQ(W.Warnings[0], "ignoring store entry " + Path +
                               ": it is a folder, not a file (left in place)");
  EXPECT_FALSE(contains(W.Warnings[0], "removed"));
  struct stat St;
  ASSERT_EQ(::lstat(Path.c_str(), &St), 0);
  EXPECT_TRUE(S_ISDIR(St.st_mode));
  EXPECT_EQ(Store->pendingCounters().CorruptPurged, 0u);
  EXPECT_TRUE(failed(Store->write(Key, payload(), Info)));
  EXPECT_EQ(W.Warnings.size(), 1u);
}

TEST(HostileRoot, UnreachableRootWarnsOnce) {
  TempDir T;
  writeText(T.sub("file"), "a regular file\n");
  std::string Root = T.sub("file/store"); // under a file: ENOTDIR
  for (StoreModeKind Mode : {StoreModeKind::ReadWrite, StoreModeKind::ReadOnly}) {
    StoreConfig C = readWrite();
    C.Mode = Mode;
    auto S = FileStore::openAt(Root, "cpu", "fingerprint A", C);
    ASSERT_NE(S, nullptr);
    WarningCapture W(S->warnings());
    EXPECT_EQ(S->read(KernelCacheKey{1, 1}), std::nullopt);
    EXPECT_TRUE(failed(S->write(KernelCacheKey{1, 1}, payload(), EntryInfo{})));
    EXPECT_EQ(S->read(KernelCacheKey{1, 1}), std::nullopt);
    EXPECT_FALSE(S->usable());
    ASSERT_EQ(W.Warnings.size(), 1u) << joined(W.Warnings);
    EXPECT_TRUE(contains(W.Warnings[0], "not using the kernel store in " +
                                            Root + "/cpu/"))
        << W.Warnings[0];
    EXPECT_TRUE(contains(W.Warnings[0], std::strerror(ENOTDIR)))
        << W.Warnings[0];
  }
}

TEST(HostileRoot, ReadOnlyStoreNotMadeYetIsQuiet) {
  TempDir T;
  StoreConfig C = readWrite();
  C.Mode = StoreModeKind::ReadOnly;
  auto S = FileStore::openAt(T.sub("none"), "cpu", "fingerprint A", C);
  WarningCapture W(S->warnings());
  EXPECT_EQ(S->read(KernelCacheKey{1, 1}), std::nullopt);
  EXPECT_TRUE(W.Warnings.empty()) << joined(W.Warnings);
}

/// Drops to the user "nobody" (65534) in a child when running as root: mode
/// bits bind only other users. \p Tree is given to that user first.
std::function<std::string()> asAnotherUser(const std::string &Tree) {
  return [Tree]() -> std::string {
    if (::geteuid() != 0)
      return "";
    std::error_code EC;
    for (auto I = std::filesystem::recursive_directory_iterator(Tree, EC);
         !EC && I != std::filesystem::recursive_directory_iterator();
         I.increment(EC))
      if (::lchown(I->path().c_str(), 65534, 65534) != 0)
        return "lchown: " + std::string(std::strerror(errno));
    if (::lchown(Tree.c_str(), 65534, 65534) != 0)
      return "lchown: " + std::string(std::strerror(errno));
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 ||
        ::setuid(65534) != 0)
      return "dropping root: " + std::string(std::strerror(errno));
    return "";
  };
}

/// Whether a user other than the owner may reach \p Path: every folder
/// from the root down to it can be searched by others.
bool othersCanReach(const std::string &Path) {
  std::filesystem::path P(Path);
  for (std::filesystem::path Q = P; !Q.empty() && Q != Q.root_path();
       Q = Q.parent_path()) {
    struct stat St;
    if (::stat(Q.parent_path().c_str(), &St) != 0 || !(St.st_mode & S_IXOTH))
      return false;
  }
  return true;
}

TEST(HostilePrune, PruneSaysWhichFilesItCannotRemove) {
  // Root tries it as nobody, in a folder nobody can reach: under /tmp, as
  // $TMPDIR may be a folder only its owner can enter.
  std::string Saved = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
  ::setenv("TMPDIR", "/tmp", 1);
  TempDir Root;
  if (Saved.empty())
    ::unsetenv("TMPDIR");
  else
    ::setenv("TMPDIR", Saved.c_str(), 1);
  if (::geteuid() == 0 && !othersCanReach(Root.path()))
    GTEST_SKIP() << "root tries this as nobody, who cannot reach "
                 << Root.path();
  std::string Path;
  {
    auto S = FileStore::openAt(Root.path(), "cpu", "fingerprint A", readWrite());
    ASSERT_FALSE(failed(S->write(KernelCacheKey{1, 2}, payload(), EntryInfo{})));
    Path = S->folder() + "/" + entryFileName(KernelCacheKey{1, 2});
    ASSERT_EQ(::chmod(S->folder().c_str(), 0500), 0);
  }
  ChildResult R = inChild(
      20,
      [&] {
        PruneResult P = pruneStore(Root.path(), 0);
        return "removed " + std::to_string(P.Removed) + "\n" +
               joined(P.Failures);
      },
      asAnotherUser(Root.path()));
  ASSERT_EQ(R.Failure, "");
  EXPECT_TRUE(contains(R.Output, "removed 0\n")) << R.Output;
  EXPECT_TRUE(contains(R.Output, Path + ": " + std::strerror(EACCES)))
      << R.Output;
  EXPECT_TRUE(isRegular(Path));
}

//===----------------------------------------------------------------------===//
// 6. Bundles
//===----------------------------------------------------------------------===//

TEST(HostileBundle, ImportRefusesWhatIsNotARegularFileWithoutReadingIt) {
  TempDir To, Files;
  std::string Fifo = Files.sub("fifo");
  ASSERT_EQ(::mkfifo(Fifo.c_str(), 0600), 0);
  ChildResult R = inChild(20, [&] {
    std::string Out;
    for (const std::string &P : {std::string("/dev/zero"), Fifo}) {
      llvm::Expected<BundleSummary> S = importBundle(To.path(), P);
      Out += S ? std::string("imported\n") : llvm::toString(S.takeError()) + "\n";
    }
    return Out;
  });
  ASSERT_EQ(R.Failure, "");
  EXPECT_TRUE(contains(R.Output, "cannot read '/dev/zero': not a regular file"))
      << R.Output;
  EXPECT_TRUE(contains(R.Output, "cannot read '" + Fifo +
                                     "': not a regular file"))
      << R.Output;
  EXPECT_TRUE(scanStore(To.path()).empty());
}

TEST(HostileBundle, ImportRefusesAHugeBundleWithoutReadingIt) {
  TempDir To, Files;
  std::string Big = Files.sub("big");
  int FD = ::open(Big.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(FD, 0);
  ASSERT_EQ(::ftruncate(FD, off_t(BundleMaxFileSize + 1)), 0);
  ::close(FD);
  ChildResult R = inChild(20, [&] {
    llvm::Expected<BundleSummary> S = importBundle(To.path(), Big);
    return S ? std::string("imported") : llvm::toString(S.takeError());
  });
  ASSERT_EQ(R.Failure, "");
  EXPECT_EQ(R.Output, "cannot read '" + Big + "': larger than " +
                          std::to_string(BundleMaxFileSize) +
                          " bytes (it has " +
                          std::to_string(BundleMaxFileSize + 1) + ")");
}

/// A sparse file of BundleMaxFileSize bytes (nothing written but \p Head).
std::string sparseBundle(const TempDir &Files, const std::string &Name,
                         const std::string &Head) {
  std::string Path = Files.sub(Name);
  int FD = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  EXPECT_GE(FD, 0);
  EXPECT_EQ(::write(FD, Head.data(), Head.size()), ssize_t(Head.size()));
  EXPECT_EQ(::ftruncate(FD, off_t(BundleMaxFileSize)), 0);
  ::close(FD);
  return Path;
}

// A bundle within BundleMaxFileSize but beyond the address space left: it
// was read whole before its magic was checked, and the allocation ended
// the process ("LLVM ERROR: out of memory"). Now a file that is not a
// bundle is refused from its first bytes, and one that is mapped, never
// copied: mapping 4 GiB with 1 GiB of address space left is an error.
TEST(HostileBundle, HugeBundleUnderAnAddressSpaceLimitIsAnError) {
  TempDir To, Files;
  std::string Zeros = sparseBundle(Files, "zeros", "");
  std::string Headed =
      sparseBundle(Files, "headed", std::string("KILNBNDL\x01\0\0\0", 12));
  ChildResult R = inChild(60, [&] {
    std::string Out;
    for (const std::string &P : {Zeros, Headed}) {
      llvm::Expected<BundleSummary> S = importBundle(To.path(), P);
      Out +=
          S ? std::string("imported\n") : llvm::toString(S.takeError()) + "\n";
    }
    return Out;
  });
  ASSERT_EQ(R.Failure, "");
  EXPECT_TRUE(contains(R.Output, "'" + Zeros +
                                     "' is not a valid bundle: bad "
                                     "magic\n"))
      << R.Output;
  EXPECT_TRUE(contains(R.Output, "cannot map '" + Headed + "' (" +
                                     std::to_string(BundleMaxFileSize) +
                                     " bytes): "))
      << R.Output;
  EXPECT_TRUE(scanStore(To.path()).empty());
}

// A fingerprint.txt edited to name another CPU is not the namespace's
// fingerprint: scans do not take it, a bundle carries none (so import keeps
// the entries; a bundle that does carry a forged text is refused whole:
// test/kiln-store/import-hostile.test), and once it is gone the store
// writes the true one again.
TEST(HostileBundle, FingerprintTextThatDoesNotHashIsNotExported) {
  TempDir From, To, Files;
  std::string FolderA;
  {
    auto A = FileStore::openAt(From.path(), "cpu", "machine A", readWrite());
    auto B = FileStore::openAt(From.path(), "cpu", "machine B", readWrite());
    ASSERT_FALSE(failed(A->write(KernelCacheKey{1, 1}, payload(), EntryInfo{})));
    ASSERT_FALSE(failed(A->write(KernelCacheKey{3, 1}, payload(), EntryInfo{})));
    ASSERT_FALSE(failed(B->write(KernelCacheKey{2, 1}, payload(), EntryInfo{})));
    FolderA = A->folder();
  }
  std::string FP = FolderA + "/" + FingerprintFileName;
  writeText(FP, "machine C\n");
  std::string HexA = fingerprintHex("machine A");
  for (const NamespaceDir &NS : scanStore(From.path()))
    if (NS.Hex == HexA) {
      EXPECT_EQ(NS.Description, "");
      EXPECT_EQ(NS.DescriptionFault, "its text hashes to " +
                                         fingerprintHex("machine C") +
                                         ", not to the folder's name " + HexA);
    } else {
      EXPECT_EQ(NS.Description, "machine B");
      EXPECT_EQ(NS.DescriptionFault, "");
    }

  std::string Bundle = Files.sub("b");
  ASSERT_TRUE(bool(exportBundle(From.path(), Bundle)));
  StoreWarnings W;
  std::vector<std::string> Seen;
  W.setSink([&](llvm::StringRef M) { Seen.push_back(M.str()); });
  llvm::Expected<BundleSummary> S = importBundle(To.path(), Bundle, &W);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_TRUE(Seen.empty()) << joined(Seen);
  EXPECT_EQ(S->Refused, 0u);
  EXPECT_EQ(S->Namespaces, 2u);
  EXPECT_EQ(S->Entries, 3u);
  auto A = FileStore::openAt(To.path(), "cpu", "machine A", readWrite());
  EXPECT_EQ(A->read(KernelCacheKey{3, 1}),
            std::optional<std::vector<uint8_t>>(payload()));

  // The next writable open of the namespace mends it: rewritten when
  // wrong, empty or gone; a read-only open leaves it as it is.
  for (const char *Damage : {"machine C\n", "", "gone"}) {
    if (std::string(Damage) == "gone")
      ASSERT_EQ(::unlink(FP.c_str()), 0);
    else
      writeText(FP, Damage);
    auto ReadOnly =
        FileStore::openAt(From.path(), "cpu", "machine A", readOnly());
    ReadOnly->read(KernelCacheKey{1, 1});
    if (std::string(Damage) != "gone") {
      EXPECT_EQ(readText(FP), Damage);
    }
    auto Again =
        FileStore::openAt(From.path(), "cpu", "machine A", readWrite());
    EXPECT_EQ(Again->read(KernelCacheKey{1, 1}),
              std::optional<std::vector<uint8_t>>(payload()));
    EXPECT_EQ(readText(FP), "machine A\n") << "after: " << Damage;
  }
  // An empty text is as wrong as another CPU's.
  writeText(FP, "");
  for (const NamespaceDir &NS : scanStore(From.path())) {
    if (NS.Hex == HexA) {
      EXPECT_EQ(NS.DescriptionFault, "it is empty");
    }
  }
}

// A bundle that says a namespace is another CPU than its name says (its
// fingerprint text patched, the checksum made right again) is refused whole:
// none of its entries is imported, the others are.
TEST(HostileBundle, NamespaceWhoseFingerprintDoesNotHashIsRefusedWhole) {
  TempDir From, To, Files;
  {
    auto A = FileStore::openAt(From.path(), "cpu", "machine A", readWrite());
    auto B = FileStore::openAt(From.path(), "cpu", "machine B", readWrite());
    ASSERT_FALSE(
        failed(A->write(KernelCacheKey{1, 1}, payload(), EntryInfo{})));
    ASSERT_FALSE(
        failed(A->write(KernelCacheKey{3, 1}, payload(), EntryInfo{})));
    ASSERT_FALSE(
        failed(B->write(KernelCacheKey{2, 1}, payload(), EntryInfo{})));
  }
  std::string Bundle = Files.sub("b");
  ASSERT_TRUE(bool(exportBundle(From.path(), Bundle)));
  std::string Bytes = readText(Bundle);
  size_t At = Bytes.find("machine A");
  ASSERT_NE(At, std::string::npos);
  Bytes.replace(At, 9, "machine C");
  ASSERT_GE(Bytes.size(), 8u);
  char Sum[8];
  llvm::support::endian::write64le(
      Sum, llvm::xxh3_64bits(llvm::StringRef(Bytes).drop_back(8)));
  Bytes.replace(Bytes.size() - 8, 8, Sum, 8);
  writeText(Bundle, Bytes);

  StoreWarnings W;
  std::vector<std::string> Seen;
  W.setSink([&](llvm::StringRef M) { Seen.push_back(M.str()); });
  llvm::Expected<BundleSummary> S = importBundle(To.path(), Bundle, &W);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(S->Refused, 1u);
  EXPECT_EQ(S->RefusedEntries, 2u);
  EXPECT_EQ(S->Skipped, 0u);
  EXPECT_EQ(S->Namespaces, 1u);
  EXPECT_EQ(S->Entries, 1u);
  std::string HexA = fingerprintHex("machine A");
  ASSERT_EQ(Seen.size(), 1u) << joined(Seen);
  EXPECT_EQ(Seen[0], "bundle namespace cpu/" + HexA +
                         " refused: its fingerprint text hashes to " +
                         fingerprintHex("machine C") + ", not " + HexA +
                         "; none of its 2 entries imported");
  EXPECT_FALSE(exists(To.sub("cpu/" + HexA))) << "nothing of it is written";
  auto B = FileStore::openAt(To.path(), "cpu", "machine B", readWrite());
  EXPECT_EQ(B->read(KernelCacheKey{2, 1}),
            std::optional<std::vector<uint8_t>>(payload()));
}

TEST(HostileBundle, ImportNeverWritesThroughALinkedNamespaceFolder) {
  TempDir From, To, Files, Elsewhere;
  {
    auto A = FileStore::openAt(From.path(), "cpu", "machine A", readWrite());
    ASSERT_FALSE(failed(A->write(KernelCacheKey{1, 1}, payload(), EntryInfo{})));
  }
  std::string Bundle = Files.sub("b");
  ASSERT_TRUE(bool(exportBundle(From.path(), Bundle)));
  ASSERT_EQ(::mkdir(To.sub("cpu").c_str(), 0700), 0);
  std::string Target = Elsewhere.sub("target");
  ASSERT_EQ(::mkdir(Target.c_str(), 0755), 0);
  ASSERT_EQ(::symlink(Target.c_str(),
                      To.sub("cpu/" + fingerprintHex("machine A")).c_str()),
            0);
  StoreWarnings W;
  llvm::Expected<BundleSummary> S = importBundle(To.path(), Bundle, &W);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(S->Refused, 1u);
  EXPECT_EQ(S->Entries, 0u);
  EXPECT_TRUE(std::filesystem::is_empty(Target));
  struct stat St;
  ASSERT_EQ(::stat(Target.c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 0777, 0755u) << "not chmod'ed through the link";
  ASSERT_EQ(W.recent().size(), 1u);
  EXPECT_TRUE(contains(W.recent()[0], "it is a symbolic link"))
      << W.recent()[0];
}

} // namespace
