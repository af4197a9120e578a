//===- ArtifactStoreTest.cpp - The seed's ArtifactStore tests, in C++ ----===//

#include "Support/StoreTestSupport.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <unistd.h>

using namespace kiln;
using namespace kiln::test;

namespace {

/// Stores as compilationStore opens them, over a store rooted at \p Root.
ArtifactStore<uint32_t> makeStore(const std::string &Root) {
  return ArtifactStore<uint32_t>(
      FileStore::openAt(Root, "kernels", "fake-cpu", readWrite()),
      FileStore::openAt(Root, "sources", "fake-cpu", readWrite()));
}

/// Kernels of one build that expand to one source each keep the artifact:
/// taking it for one leaves it to the others.
TEST(ArtifactStore, KernelsSharingASourceEachKeepIt) {
  TempDir Root;
  ArtifactStore<uint32_t> Store = makeStore(Root.path());
  KernelId Kernels[] = {KernelId("First"), KernelId("Second"),
                        KernelId("Third")};
  EXPECT_TRUE(Store.keep(Kernels[0], 7, llvm::StringRef("shared")));
  for (int I = 1; I != 3; ++I) {
    std::optional<uint32_t> A = Store.takeBySource("shared");
    ASSERT_TRUE(A.has_value()) << "kept by source";
    Store.keep(Kernels[I], *A, llvm::StringRef("shared"));
  }
  for (const KernelId &K : Kernels)
    EXPECT_EQ(Store.take(K), std::optional<uint32_t>(7));
}

/// A kernel of an earlier build gives its artifact up: nothing asks for its
/// key again.
TEST(ArtifactStore, AnEarlierBuildIsMoved) {
  TempDir Root;
  ArtifactStore<uint32_t> Store = makeStore(Root.path());
  uint64_t Current = Store.buildId();
  uint64_t Earlier = llvm::xxh3_64bits(llvm::StringRef("an earlier build"));
  KernelId Kernel("First");
  Store.setBuildId(Earlier);
  Store.keep(Kernel, 7, llvm::StringRef("shared"));

  Store.setBuildId(Current);
  EXPECT_EQ(Store.takeBySource("shared"), std::optional<uint32_t>(7));
  Store.setBuildId(Earlier);
  EXPECT_EQ(Store.take(Kernel), std::nullopt) << "moved out";
}

TEST(ArtifactStore, TakeLeavesTheEntryForTheNextRun) {
  TempDir Root;
  KernelId K("k");
  {
    ArtifactStore<uint32_t> Store = makeStore(Root.path());
    EXPECT_EQ(Store.take(K), std::nullopt);
    EXPECT_TRUE(Store.keep(K, 42, std::nullopt));
    EXPECT_EQ(Store.take(K), std::optional<uint32_t>(42));
  }
  ArtifactStore<uint32_t> Again = makeStore(Root.path());
  EXPECT_EQ(Again.take(K), std::optional<uint32_t>(42));
  Again.purge(K);
  EXPECT_EQ(Again.take(K), std::nullopt);
}

TEST(ArtifactStore, VariantsAreKeptApart) {
  TempDir Root;
  ArtifactStore<uint32_t> Store = makeStore(Root.path());
  struct V {
    int N;
    bool operator==(const V &) const = default;
    std::string str() const { return "v" + std::to_string(N); }
  };
  ArtifactId<V> A{KernelId("k"), V{1}}, B{KernelId("k"), V{2}};
  EXPECT_TRUE(Store.storeVariant(A, 1));
  EXPECT_TRUE(Store.storeVariant(B, 2));
  EXPECT_EQ(Store.takeVariant(A), std::optional<uint32_t>(1));
  EXPECT_EQ(Store.takeVariant(B), std::optional<uint32_t>(2));
  EXPECT_EQ(Store.take(KernelId("k")), std::nullopt);
  // The header names kernel and variant, for kiln-store list.
  std::optional<EntryInfo> Info =
      Store.kernels()->info(KernelCacheKey::fromArtifactId(B, Store.buildId()));
  ASSERT_TRUE(Info);
  EXPECT_EQ(Info->KernelId, "k");
  EXPECT_EQ(Info->Variant, "v2");
  Store.purgeVariant(A);
  EXPECT_EQ(Store.takeVariant(A), std::nullopt);
  EXPECT_EQ(Store.takeVariant(B), std::optional<uint32_t>(2));
}

TEST(ArtifactStore, AnArtifactThatDoesNotDecodeIsAMiss) {
  TempDir Root;
  ArtifactStore<uint32_t> Store = makeStore(Root.path());
  KernelId K("k");
  uint8_t Five[5] = {1, 2, 3, 4, 5};
  ASSERT_TRUE(storeCompiled(*Store.kernels(),
                            KernelCacheKey::fromKernel(K, Store.buildId()),
                            Five, EntryInfo{"k", "", "", 0}));
  WarningCapture W(Store.kernels()->warnings());
  EXPECT_EQ(Store.take(K), std::nullopt);
  ASSERT_EQ(W.Warnings.size(), 1u);
  EXPECT_NE(W.Warnings[0].find("an integer artifact has 4 bytes"),
            std::string::npos);
  EXPECT_EQ(Store.take(K), std::nullopt);
  EXPECT_EQ(W.Warnings.size(), 1u) << "the bad entry was removed";
}

TEST(ArtifactStore, NothingKeptWithoutAStore) {
  ArtifactStore<uint32_t> Store;
  EXPECT_FALSE(Store.persists());
  EXPECT_FALSE(Store.isEnabled());
  EXPECT_FALSE(Store.keep(KernelId("k"), 1, llvm::StringRef("s")));
  EXPECT_EQ(Store.take(KernelId("k")), std::nullopt);
  EXPECT_EQ(Store.takeBySource("s"), std::nullopt);
}

TEST(ArtifactStore, CompilationStoreUsesItsEnvironment) {
  TempDir Root, Other;
  StoreConfig Off = readWrite();
  Off.Mode = StoreModeKind::Off;
  EXPECT_EQ(compilationStore(StoreEnvironment(Root.path(), Off), "cpu", "fp"),
            nullptr);
  EXPECT_EQ(compilationStore(StoreEnvironment(), "cpu", "fp"), nullptr)
      << "no root, no store";
  auto Warnings = std::make_shared<StoreWarnings>();
  StoreEnvironment Env(Root.path(), readWrite(), Warnings);
  std::unique_ptr<FileStore> S = compilationStore(Env, "cpu", "fp");
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(S->folder(), Root.path() + "/cpu/" + fingerprintHex("fp"));
  EXPECT_EQ(&S->warnings(), Warnings.get()) << "the environment's warnings";
  // Another environment is another store; the first one stays where it is.
  std::unique_ptr<FileStore> T =
      compilationStore(StoreEnvironment(Other.path(), readWrite()), "cpu", "fp");
  ASSERT_NE(T, nullptr);
  EXPECT_EQ(T->folder(), Other.path() + "/cpu/" + fingerprintHex("fp"));
  EXPECT_EQ(S->folder(), Root.path() + "/cpu/" + fingerprintHex("fp"));
}

TEST(StoreWarnings, CountedAndKeptWithoutASink) {
  StoreWarnings W;
  for (int I = 0; I != 20; ++I)
    W.warn("warning " + llvm::Twine(I));
  EXPECT_EQ(W.count(), 20u);
  std::vector<std::string> R = W.recent();
  ASSERT_EQ(R.size(), StoreWarnings::MaxRecent);
  EXPECT_EQ(R.back(), "warning 19");
  std::vector<std::string> Seen;
  W.setSink([&](llvm::StringRef S) { Seen.push_back(S.str()); });
  W.warn("to the sink");
  EXPECT_EQ(Seen, std::vector<std::string>{"to the sink"});
  EXPECT_EQ(W.count(), 21u);
}

TEST(ArtifactStore, BuildIdIsTheModulesGnuBuildIdNote) {
  // This test binary links Kiln statically: the note is the executable's.
  FILE *P = ::popen(
      ("readelf -n /proc/" + std::to_string(::getpid()) + "/exe 2>/dev/null")
          .c_str(),
      "r");
  if (!P)
    GTEST_SKIP() << "no readelf";
  std::string Out;
  char Buf[512];
  while (std::fgets(Buf, sizeof(Buf), P))
    Out += Buf;
  ::pclose(P);
  size_t At = Out.find("Build ID: ");
  if (At == std::string::npos)
    GTEST_SKIP() << "the binary has no build-id note (or no readelf)";
  std::string Expected = Out.substr(At + 10);
  Expected = Expected.substr(0, Expected.find_first_of("\n "));
  EXPECT_EQ(buildIdText(), Expected);
}

} // namespace
