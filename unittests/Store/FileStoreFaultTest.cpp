//===- FileStoreFaultTest.cpp - Every kind of bad store is a miss --------===//

#include "Support/StoreTestSupport.h"

#include "kiln/Store/Bundle.h"
#include "kiln/Store/StoreScan.h"

#include "llvm/Support/Endian.h"

#include "gtest/gtest.h"

#include <csignal>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>
#include <utime.h>

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<uint8_t> readBytes(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(In), {});
}
void writeBytes(const std::string &Path, const std::vector<uint8_t> &B) {
  std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
  Out.write(reinterpret_cast<const char *>(B.data()), B.size());
}
bool exists(const std::string &Path) {
  return ::access(Path.c_str(), F_OK) == 0;
}

std::vector<uint8_t> payload(size_t N = 300) {
  std::vector<uint8_t> P(N);
  for (size_t I = 0; I != N; ++I)
    P[I] = uint8_t((I * 7) % 13);
  return P;
}

class FaultTest : public ::testing::Test {
protected:
  void SetUp() override {
    Store = FileStore::openAt(Root.path(), "cpu", "fingerprint A", readWrite());
    ASSERT_NE(Store, nullptr);
    ASSERT_FALSE(failed(Store->write(Key, payload(), Info)));
    Path = Store->folder() + "/" + entryFileName(Key);
    ASSERT_TRUE(exists(Path));
  }
  /// The entry, read back after \p Damage: a miss, one warning naming the
  /// file and \p Why, the file deleted.
  void expectMiss(const std::string &Why,
                  std::optional<uint64_t> IRHash = std::nullopt) {
    WarningCapture W(Store->warnings());
    EXPECT_EQ(Store->read(Key, IRHash), std::nullopt);
    ASSERT_EQ(W.Warnings.size(), 1u);
    EXPECT_NE(W.Warnings[0].find(Path), std::string::npos) << W.Warnings[0];
    EXPECT_NE(W.Warnings[0].find(Why), std::string::npos) << W.Warnings[0];
    EXPECT_FALSE(exists(Path)) << "a bad entry is deleted";
    EXPECT_GE(Store->pendingCounters().CorruptPurged, 1u);
  }

  TempDir Root;
  std::unique_ptr<FileStore> Store;
  KernelCacheKey Key{0x1234, 0x5678};
  EntryInfo Info{"add-0011223344556677", "checked-a64", "", 0xabcdef};
  std::string Path;
};

TEST_F(FaultTest, GoodEntryReadsBack) {
  WarningCapture W(Store->warnings());
  EXPECT_EQ(Store->read(Key), std::optional<std::vector<uint8_t>>(payload()));
  EXPECT_EQ(Store->read(Key, 0xabcdef),
            std::optional<std::vector<uint8_t>>(payload()));
  EXPECT_TRUE(W.Warnings.empty());
  EXPECT_EQ(Store->pendingCounters().Hits, 2u);
  EXPECT_EQ(Store->pendingCounters().Writes, 1u);
}

TEST_F(FaultTest, Truncated) {
  std::vector<uint8_t> B = readBytes(Path);
  B.resize(B.size() - 3);
  writeBytes(Path, B);
  expectMiss("truncated entry");
}

TEST_F(FaultTest, TruncatedInsideTheHeader) {
  std::vector<uint8_t> B = readBytes(Path);
  B.resize(40);
  writeBytes(Path, B);
  expectMiss("truncated entry");
}

TEST_F(FaultTest, FlippedByteInTheHeader) {
  std::vector<uint8_t> B = readBytes(Path);
  B[EntryFixedHeaderSize + 2] ^= 0x20; // inside the kernel id text
  writeBytes(Path, B);
  expectMiss("header checksum mismatch");
}

TEST_F(FaultTest, FlippedByteInThePayload) {
  std::vector<uint8_t> B = readBytes(Path);
  B[B.size() - 5] ^= 0x01;
  writeBytes(Path, B);
  expectMiss("payload checksum mismatch");
}

TEST_F(FaultTest, WrongMagic) {
  std::vector<uint8_t> B = readBytes(Path);
  B[0] = 'X';
  writeBytes(Path, B);
  expectMiss("bad magic");
}

TEST_F(FaultTest, WrongVersion) {
  std::vector<uint8_t> B = readBytes(Path);
  llvm::support::endian::write32le(B.data() + 8, 99);
  writeBytes(Path, B);
  expectMiss("unsupported format version 99");
}

TEST_F(FaultTest, EntryOfAnotherFingerprintCopiedIn) {
  auto Other =
      FileStore::openAt(Root.path(), "cpu", "fingerprint B", readWrite());
  ASSERT_FALSE(failed(Other->write(Key, payload(10), Info)));
  writeBytes(Path, readBytes(Other->folder() + "/" + entryFileName(Key)));
  expectMiss("entry of another namespace");
}

TEST_F(FaultTest, EntryRenamedToAnotherKey) {
  KernelCacheKey K2{0x9999, 0x5678};
  std::string P2 = Store->folder() + "/" + entryFileName(K2);
  ASSERT_EQ(::rename(Path.c_str(), P2.c_str()), 0);
  Path = P2;
  Key = K2;
  expectMiss("key mismatch");
}

TEST_F(FaultTest, StaleIRHash) { expectMiss("stale entry", 0x999); }

TEST_F(FaultTest, FeatureTheHostLacks) {
  KernelCacheKey K2{0x77, 0x5678};
  EntryInfo I2 = Info;
  I2.Features = "+sse2,+imaginary-feature";
  ASSERT_FALSE(failed(Store->write(K2, payload(), I2)));
  Store->setMissingFeature([](llvm::StringRef F) {
    return F.contains("+imaginary-feature") ? std::string("+imaginary-feature")
                                            : std::string();
  });
  Key = K2;
  Path = Store->folder() + "/" + entryFileName(K2);
  expectMiss("needs CPU feature +imaginary-feature");
}

TEST_F(FaultTest, NoFeatureCheckUnlessTheBackendInstallsOne) {
  KernelCacheKey K2{0x78, 0x5678};
  EntryInfo I2 = Info;
  I2.Features = "+imaginary-feature";
  ASSERT_FALSE(failed(Store->write(K2, payload(), I2)));
  EXPECT_EQ(Store->read(K2), std::optional<std::vector<uint8_t>>(payload()));
}

TEST_F(FaultTest, UnreadableFile) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root reads a chmod 000 file; the group-writable folder "
                    "test covers the permission logic";
  ::chmod(Path.c_str(), 0);
  expectMiss("cannot read it");
}

TEST_F(FaultTest, GroupWritableFolderIsNotLoadedFrom) {
  ::chmod(Store->folder().c_str(), 0770);
  auto Fresh =
      FileStore::openAt(Root.path(), "cpu", "fingerprint A", readWrite());
  WarningCapture W(Fresh->warnings());
  EXPECT_EQ(Fresh->read(Key), std::nullopt);
  EXPECT_EQ(Fresh->read(Key), std::nullopt);
  EXPECT_TRUE(failed(Fresh->write(KernelCacheKey{1, 2}, payload(), Info)));
  ASSERT_EQ(W.Warnings.size(), 1u) << "one warning, not one per kernel";
  EXPECT_NE(W.Warnings[0].find("others can write to it"), std::string::npos);
  EXPECT_TRUE(exists(Path)) << "an untrusted folder is left alone";
}

TEST_F(FaultTest, ReadOnlyFolder) {
  if (::geteuid() == 0)
    GTEST_SKIP()
        << "root writes into a read-only folder; FailedWrite covers it";
  ::chmod(Store->folder().c_str(), 0500);
  WarningCapture W(Store->warnings());
  EXPECT_FALSE(storeCompiled(*Store, KernelCacheKey{1, 2}, payload(), Info));
  EXPECT_FALSE(storeCompiled(*Store, KernelCacheKey{3, 4}, payload(), Info));
  EXPECT_EQ(W.Warnings.size(), 1u);
  EXPECT_EQ(Store->read(Key), std::optional<std::vector<uint8_t>>(payload()));
}

TEST_F(FaultTest, FailedWriteWarnsOnceThenCompilesOn) {
  // A file size limit makes write() fail with EFBIG, even for root.
  rlimit Old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &Old), 0);
  auto OldHandler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit Small = Old;
  Small.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &Small), 0);
  bool First, Second;
  WarningCapture W(Store->warnings());
  First = storeCompiled(*Store, KernelCacheKey{1, 2}, payload(), Info);
  Second = storeCompiled(*Store, KernelCacheKey{3, 4}, payload(), Info);
  ::setrlimit(RLIMIT_FSIZE, &Old);
  std::signal(SIGXFSZ, OldHandler);
  EXPECT_FALSE(First);
  EXPECT_FALSE(Second);
  ASSERT_EQ(W.Warnings.size(), 1u);
  EXPECT_NE(W.Warnings[0].find("cannot write to the kernel store"),
            std::string::npos)
      << W.Warnings[0];
  // No partial entry, no temporary file left behind.
  for (const NamespaceDir &NS : scanStore(Root.path()))
    EXPECT_EQ(NS.Entries.size(), 1u);
  EXPECT_EQ(Store->read(Key), std::optional<std::vector<uint8_t>>(payload()));
  EXPECT_FALSE(
      exists(Store->folder() + "/" + entryFileName(KernelCacheKey{1, 2})));
}

TEST_F(FaultTest, FirstWriterWins) {
  llvm::Error E = Store->write(Key, payload(5), Info);
  ASSERT_TRUE(bool(E));
  bool Quiet = false;
  llvm::handleAllErrors(std::move(E),
                        [&](const StoreRefusal &R) { Quiet = R.quiet(); });
  EXPECT_TRUE(Quiet);
  EXPECT_EQ(Store->read(Key), std::optional<std::vector<uint8_t>>(payload()));
}

TEST_F(FaultTest, ReadOnlyModeServesButNeverWrites) {
  StoreConfig C = readWrite();
  C.Mode = StoreModeKind::ReadOnly;
  auto RO = FileStore::openAt(Root.path(), "cpu", "fingerprint A", C);
  EXPECT_EQ(RO->read(Key), std::optional<std::vector<uint8_t>>(payload()));
  WarningCapture W(RO->warnings());
  EXPECT_FALSE(storeCompiled(*RO, KernelCacheKey{5, 6}, payload(), Info));
  EXPECT_TRUE(W.Warnings.empty());
}

TEST_F(FaultTest, StatsFileAddsUp) {
  Store->read(Key);
  Store->read(KernelCacheKey{9, 9});
  std::string Folder = Store->folder();
  Store.reset(); // flushes
  StoreCounters C = readStoreCounters(Folder + "/" + StatsFileName);
  EXPECT_EQ(C.Writes, 1u);
  EXPECT_EQ(C.Hits, 1u);
  EXPECT_EQ(C.Misses, 1u);
  EXPECT_EQ(C.BytesUncompressed, 300u);
  EXPECT_GT(C.BytesCompressed, 0u);
  auto Again =
      FileStore::openAt(Root.path(), "cpu", "fingerprint A", readWrite());
  Again->read(Key);
  Again.reset();
  EXPECT_EQ(readStoreCounters(Folder + "/" + StatsFileName).Hits, 2u);
}

TEST_F(FaultTest, FoldersAreOwnerOnly) {
  struct stat St;
  ASSERT_EQ(::stat(Store->folder().c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(Path.c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 077, 0u);
  std::ifstream FP(Store->folder() + "/" + FingerprintFileName);
  std::string Line;
  std::getline(FP, Line);
  EXPECT_EQ(Line, "fingerprint A");
}

TEST(StorePruning, LeastRecentlyUsedGoesFirst) {
  TempDir Root;
  StoreConfig C = readWrite();
  C.MaxSize = uint64_t(1) << 40;
  auto S = FileStore::openAt(Root.path(), "cpu", "fp", C);
  std::vector<uint8_t> P = payload(4000);
  for (uint64_t I = 0; I != 10; ++I) {
    P[0] = uint8_t(I);
    ASSERT_FALSE(failed(S->write(KernelCacheKey{I, 1}, P, EntryInfo{})));
    // Distinct last-use times: entry I was used I seconds after the epoch+1000.
    std::string F = S->folder() + "/" + entryFileName(KernelCacheKey{I, 1});
    utimbuf T{time_t(1000 + I), time_t(1000 + I)};
    ::utime(F.c_str(), &T);
  }
  S->read(KernelCacheKey{0, 1}); // used now: the most recent
  uint64_t Size = storeSize(Root.path());
  uint64_t One = Size / 10;
  PruneResult R = pruneStore(Root.path(), Size - 3 * One);
  EXPECT_EQ(R.Removed, 3u);
  EXPECT_LE(R.BytesAfter, Size - 3 * One);
  EXPECT_TRUE(S->read(KernelCacheKey{0, 1}).has_value());
  EXPECT_FALSE(S->read(KernelCacheKey{1, 1}).has_value());
  EXPECT_FALSE(S->read(KernelCacheKey{3, 1}).has_value());
  EXPECT_TRUE(S->read(KernelCacheKey{4, 1}).has_value());
}

TEST(StorePruning, WritesKeepTheStoreUnderItsLimit) {
  TempDir Root;
  StoreConfig C = readWrite();
  C.MaxSize = 20000;
  auto S = FileStore::openAt(Root.path(), "cpu", "fp", C);
  std::vector<uint8_t> P(3000);
  for (uint64_t I = 0; I != 40; ++I) {
    for (size_t J = 0; J != P.size(); ++J)
      P[J] = uint8_t((I * 131 + J * J) >> 3); // compresses poorly
    ASSERT_FALSE(failed(S->write(KernelCacheKey{I, 1}, P, EntryInfo{})));
    EXPECT_LE(storeSize(Root.path()), C.MaxSize + 4000);
  }
  EXPECT_TRUE(S->read(KernelCacheKey{39, 1}).has_value()) << "the newest stays";
}

TEST(StoreConfig, Sizes) {
  EXPECT_EQ(*parseStoreSize("4096"), 4096u);
  EXPECT_EQ(*parseStoreSize("512K"), 512u << 10);
  EXPECT_EQ(*parseStoreSize("64M"), 64u << 20);
  EXPECT_EQ(*parseStoreSize("2G"), uint64_t(2) << 30);
  EXPECT_EQ(*parseStoreSize("1GiB"), uint64_t(1) << 30);
  for (const char *Bad : {"", "x", "12Q", "-1", "K"}) {
    llvm::Expected<uint64_t> R = parseStoreSize(Bad);
    EXPECT_FALSE(bool(R)) << Bad;
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

TEST(StoreConfig, Environment) {
  StoreWarnings Warnings;
  WarningCapture W(Warnings);
  ::setenv("KILN_CACHE", "read-only", 1);
  ::setenv("KILN_CACHE_MAX_SIZE", "10M", 1);
  StoreConfig C = StoreConfig::fromEnvironment(&Warnings);
  EXPECT_EQ(C.Mode, StoreModeKind::ReadOnly);
  EXPECT_EQ(C.MaxSize, 10u << 20);
  ::setenv("KILN_CACHE", "maybe", 1);
  ::setenv("KILN_CACHE_MAX_SIZE", "lots", 1);
  C = StoreConfig::fromEnvironment(&Warnings);
  EXPECT_EQ(C.Mode, StoreModeKind::ReadWrite);
  EXPECT_EQ(C.MaxSize, uint64_t(1) << 30);
  EXPECT_EQ(W.Warnings.size(), 2u);
  ::unsetenv("KILN_CACHE");
  ::unsetenv("KILN_CACHE_MAX_SIZE");
}

TEST(StoreConfig, DefaultRoot) {
  std::string Saved =
      std::getenv("KILN_CACHE_DIR") ? std::getenv("KILN_CACHE_DIR") : "";
  ::setenv("KILN_CACHE_DIR", "/a/b", 1);
  EXPECT_EQ(defaultStoreRoot(), std::optional<std::string>("/a/b"));
  ::unsetenv("KILN_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/x", 1);
  EXPECT_EQ(defaultStoreRoot(), std::optional<std::string>("/x/kiln"));
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/h", 1);
  EXPECT_EQ(defaultStoreRoot(), std::optional<std::string>("/h/.cache/kiln"));
  if (!Saved.empty())
    ::setenv("KILN_CACHE_DIR", Saved.c_str(), 1);
}

TEST(Bundle, RoundTripKeepsNamespaces) {
  TempDir From, To, Files;
  {
    auto A = FileStore::openAt(From.path(), "cpu", "machine A", readWrite());
    auto B = FileStore::openAt(From.path(), "cpu", "machine B", readWrite());
    ASSERT_FALSE(failed(
        A->write(KernelCacheKey{1, 1}, payload(), EntryInfo{"k1", "", "", 0})));
    ASSERT_FALSE(failed(B->write(KernelCacheKey{2, 1}, payload(20),
                                 EntryInfo{"k2", "", "", 0})));
  }
  std::string Bundle = Files.sub("warm.kilnbundle");
  llvm::Expected<BundleSummary> E = exportBundle(From.path(), Bundle);
  ASSERT_TRUE(bool(E)) << llvm::toString(E.takeError());
  EXPECT_EQ(E->Namespaces, 2u);
  EXPECT_EQ(E->Entries, 2u);
  llvm::Expected<BundleSummary> I = importBundle(To.path(), Bundle);
  ASSERT_TRUE(bool(I)) << llvm::toString(I.takeError());
  EXPECT_EQ(I->Entries, 2u);
  auto A = FileStore::openAt(To.path(), "cpu", "machine A", readWrite());
  auto B = FileStore::openAt(To.path(), "cpu", "machine B", readWrite());
  EXPECT_EQ(A->read(KernelCacheKey{1, 1}),
            std::optional<std::vector<uint8_t>>(payload()));
  EXPECT_EQ(A->read(KernelCacheKey{2, 1}), std::nullopt)
      << "B's entry stays in B";
  EXPECT_EQ(B->read(KernelCacheKey{2, 1}),
            std::optional<std::vector<uint8_t>>(payload(20)));
  // Importing twice keeps what is there.
  llvm::Expected<BundleSummary> Again = importBundle(To.path(), Bundle);
  ASSERT_TRUE(bool(Again));
  EXPECT_EQ(Again->Entries, 0u);
  EXPECT_EQ(Again->Skipped, 2u);
  // A damaged bundle writes nothing.
  std::vector<uint8_t> Bytes = readBytes(Bundle);
  Bytes[Bytes.size() / 2] ^= 1;
  writeBytes(Bundle, Bytes);
  TempDir Empty;
  llvm::Expected<BundleSummary> Bad = importBundle(Empty.path(), Bundle);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("checksum mismatch"),
            std::string::npos);
  EXPECT_TRUE(scanStore(Empty.path()).empty());
}

} // namespace

namespace {

/// Every single-bit flip and every truncation of an entry is caught: the
/// decoder answers an error or (never, with a checksum over every byte) the
/// original payload, and does not crash.
TEST(EntryRobustness, EveryFlipAndTruncationIsCaught) {
  std::vector<uint8_t> P = payload(500);
  KernelCacheKey K{11, 22};
  EntryInfo I{"kernel-id", "variant", "+avx2", 99};
  llvm::Expected<std::vector<uint8_t>> E = encodeEntry(K, 5, I, P);
  ASSERT_TRUE(bool(E));
  EntryExpectations X;
  X.Key = K;
  X.NamespaceHash = 5;
  X.IRHash = 99;
  llvm::Expected<std::vector<uint8_t>> Good = decodeEntry(*E, X);
  ASSERT_TRUE(bool(Good));
  EXPECT_EQ(*Good, P);
  size_t Caught = 0, Total = 0;
  for (size_t Byte = 0; Byte != E->size(); ++Byte)
    for (int Bit = 0; Bit != 8; ++Bit) {
      std::vector<uint8_t> B = *E;
      B[Byte] ^= uint8_t(1u << Bit);
      llvm::Expected<std::vector<uint8_t>> R = decodeEntry(B, X);
      ++Total;
      if (!R) {
        llvm::consumeError(R.takeError());
        ++Caught;
      }
    }
  EXPECT_EQ(Caught, Total);
  for (size_t Len = 0; Len != E->size(); ++Len) {
    llvm::Expected<std::vector<uint8_t>> R =
        decodeEntry(llvm::ArrayRef<uint8_t>(*E).take_front(Len), X);
    EXPECT_FALSE(bool(R)) << Len;
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

/// A bundle damaged inside but with a matching checksum is still refused
/// (or imports only entries that pass every check), never crashes.
TEST(EntryRobustness, DamagedBundlesWithValidChecksums) {
  TempDir From, Files;
  {
    auto A = FileStore::openAt(From.path(), "cpu", "m", readWrite());
    ASSERT_FALSE(
        failed(A->write(KernelCacheKey{1, 1}, payload(), EntryInfo{})));
  }
  std::string Bundle = Files.sub("b");
  llvm::Expected<BundleSummary> S = exportBundle(From.path(), Bundle);
  ASSERT_TRUE(bool(S));
  std::vector<uint8_t> Orig = readBytes(Bundle);
  StoreWarnings Warnings;
  for (size_t Byte = 8; Byte + 8 < Orig.size(); Byte += 3) {
    std::vector<uint8_t> B = Orig;
    B[Byte] ^= 0x5a;
    B.resize(B.size() - 8);
    uint64_t Sum = llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(B));
    B.resize(B.size() + 8);
    llvm::support::endian::write64le(B.data() + B.size() - 8, Sum);
    writeBytes(Bundle, B);
    TempDir To;
    llvm::Expected<BundleSummary> R =
        importBundle(To.path(), Bundle, &Warnings);
    if (!R) {
      llvm::consumeError(R.takeError());
      continue;
    }
    for (const NamespaceDir &NS : scanStore(To.path()))
      for (const EntryFile &E : NS.Entries)
        EXPECT_FALSE(failed(verifyEntryFile(NS, E))) << "byte " << Byte;
  }
}

} // namespace
