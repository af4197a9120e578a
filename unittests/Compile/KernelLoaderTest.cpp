//===- KernelLoaderTest.cpp - The loader over a fake backend -------------===//
//
// A fake backend whose artifact is an integer, as in the seed's tests: it
// counts lowerings, finalizations and loads, so each test can say exactly
// what was compiled.
//
//===----------------------------------------------------------------------===//

#include "Support/StoreTestSupport.h"

#include "kiln/Compile/KernelLoader.h"
#include "kiln/CPU/CubeMetadata.h"
#include "kiln/IR/Diagnostic.h"
#include "kiln/Store/ArtifactStore.h"

#include "llvm/Support/Endian.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

using namespace kiln;
using kiln::test::TempDir;

namespace {

/// What the fake compiler compiles.
struct FakeSource {
  std::string Text;
  bool Fails = false;
  std::string Shared = {}; ///< a source text other kernels may share
  int SleepMs = 0;
};

struct FakeLowered {
  uint32_t Value;
  std::string Shared;
};

struct FakeCompiler {
  using Source = FakeSource;
  using Variant = NoVariant;
  using Lowered = FakeLowered;
  using Artifact = uint32_t;

  mutable std::atomic<int> Lowerings{0};
  mutable std::atomic<int> Finalizations{0};

  llvm::Expected<Lowered> lower(const Source &Src,
                                const ArtifactId<Variant> &Id,
                                CompilationRecording &Rec,
                                CompilationLogger &Log) const {
    ++Lowerings;
    if (Src.SleepMs)
      std::this_thread::sleep_for(std::chrono::milliseconds(Src.SleepMs));
    if (Src.Fails)
      return makeDiagnostic("fake.kiln", SourceLoc{3, 7},
                            "kernel " + Id.Kernel.str() + " does not compile");
    Rec.record(RecordingKind::KernelIR, Src.Text);
    return Lowered{uint32_t(llvm::xxh3_64bits(Src.Text) & 0xffffff),
                   Src.Shared};
  }
  static std::optional<llvm::StringRef> source(const Lowered &L) {
    if (L.Shared.empty())
      return std::nullopt;
    return llvm::StringRef(L.Shared);
  }
  llvm::Expected<Artifact> finalize(const ArtifactId<Variant> &,
                                    Lowered L) const {
    ++Finalizations;
    return L.Value;
  }
};

struct FakeLoaded {
  uint32_t Value = 0;
  int LoadNumber = 0;
};

struct FakeTarget {
  using Compiler = FakeCompiler;
  using Loaded = FakeLoaded;

  FakeCompiler C;
  ArtifactStore<uint32_t> Store;
  int Loads = 0;
  int Stores = 0;

  explicit FakeTarget(ArtifactStore<uint32_t> S) : Store(std::move(S)) {}
  const Compiler &compiler() const { return C; }
  bool persists() const { return Store.persists(); }
  std::optional<uint32_t> stored(const IdOf<FakeTarget> &Id) {
    return Store.takeVariant(Id);
  }
  std::optional<uint32_t> storedForSource(llvm::StringRef Src) {
    return Store.takeBySource(Src);
  }
  llvm::Expected<Loaded> load(const IdOf<FakeTarget> &, const uint32_t &A) {
    return Loaded{A, ++Loads};
  }
  bool store(const IdOf<FakeTarget> &Id, uint32_t A,
             std::optional<llvm::StringRef> Src) {
    ++Stores;
    return Store.keepVariant(Id, A, Src);
  }
};
static_assert(CompilationTarget<FakeTarget>);
// The CPU backend's variant plugs in as it is.
static_assert(ArtifactVariant<CpuVariant>);
static_assert(ArtifactVariant<NoVariant>);

ArtifactStore<uint32_t> storeAt(const std::string &Root) {
  StoreConfig C;
  return ArtifactStore<uint32_t>(
      FileStore::openAt(Root, "fake", "fake-cpu", C),
      FileStore::openAt(Root, "fake-src", "fake-cpu", C));
}

ArtifactId<NoVariant> id(const std::string &Name) {
  return ArtifactId<NoVariant>{KernelId(Name), NoVariant{}};
}

TEST(KernelLoader, CompilesOnceThenServesFromMemory) {
  TempDir Root;
  FakeTarget T(storeAt(Root.path()));
  KernelLoader<FakeTarget> L(T);
  FakeSource S{"add"};
  llvm::Expected<FakeLoaded> A = L.get(id("add"), S);
  ASSERT_TRUE(bool(A));
  llvm::Expected<FakeLoaded> B = L.get(id("add"), S);
  ASSERT_TRUE(bool(B));
  EXPECT_EQ(A->Value, B->Value);
  EXPECT_EQ(B->LoadNumber, 1) << "the same loaded kernel";
  EXPECT_EQ(T.C.Lowerings, 1);
  EXPECT_EQ(T.Stores, 1);
  LoaderStatistics St = L.statistics();
  EXPECT_EQ(St.Compiled, 1u);
  EXPECT_EQ(St.MemoryHits, 1u);
}

TEST(KernelLoader, SecondLoaderOverTheSameFolderCompilesNothing) {
  TempDir Root;
  uint32_t Value;
  {
    FakeTarget T(storeAt(Root.path()));
    KernelLoader<FakeTarget> L(T);
    FakeSource S{"add"};
    Value = L.get(id("add"), S)->Value;
  }
  FakeTarget T(storeAt(Root.path()));
  KernelLoader<FakeTarget> L(T);
  FakeSource S{"add"};
  llvm::Expected<FakeLoaded> A = L.get(id("add"), S);
  ASSERT_TRUE(bool(A));
  EXPECT_EQ(A->Value, Value);
  EXPECT_EQ(T.C.Lowerings, 0);
  EXPECT_EQ(T.C.Finalizations, 0);
  EXPECT_EQ(T.Stores, 0);
  EXPECT_EQ(L.statistics().StoreHits, 1u);
}

TEST(KernelLoader, BatchWithDuplicatesAndAFailingKernel) {
  TempDir Root;
  FakeTarget T(storeAt(Root.path()));
  KernelLoader<FakeTarget> L(T);
  FakeSource A{"a"}, B{"b", /*Fails=*/true}, C{"c"};
  using R = KernelLoader<FakeTarget>::Request;
  std::vector<R> Batch = {{id("a"), &A},
                          {id("b"), &B},
                          {id("a"), &A},
                          {id("c"), &C},
                          {id("b"), &B}};
  auto Results = L.getBatch(Batch, BatchOptions{4, {}});
  ASSERT_EQ(Results.size(), 5u);
  EXPECT_EQ(T.C.Lowerings, 3) << "duplicates compiled once";
  ASSERT_TRUE(bool(Results[0]));
  ASSERT_TRUE(bool(Results[2]));
  ASSERT_TRUE(bool(Results[3]));
  EXPECT_EQ(Results[0]->LoadNumber, Results[2]->LoadNumber) << "shared result";
  for (int I : {1, 4}) {
    ASSERT_FALSE(bool(Results[I]));
    bool IsDiag = false;
    std::string Msg;
    llvm::handleAllErrors(Results[I].takeError(),
                          [&](const DiagnosticError &D) {
                            IsDiag = true;
                            Msg = D.diagnostics().at(0).str();
                          });
    EXPECT_TRUE(IsDiag) << "the diagnostic keeps its type";
    EXPECT_EQ(Msg, "fake.kiln:3:7: error: kernel b does not compile");
  }
  LoaderStatistics St = L.statistics();
  EXPECT_EQ(St.Compiled, 2u);
  EXPECT_EQ(St.Failed, 1u);
  EXPECT_EQ(T.Stores, 2) << "a failure is never stored";
}

/// Runs a batch of 40 kernels (every 7th failing) with \p Threads and
/// returns each result and the log order as text.
std::vector<std::string> runBatch(unsigned Threads) {
  TempDir Root;
  FakeTarget T(storeAt(Root.path()));
  std::vector<std::string> Lines;
  LoaderOptions Opts;
  Opts.LogSink = [&](const CompilationLogger &Log) {
    Lines.push_back("log " + Log.kernel() + " " +
                    servedKindName(Log.served()).str());
  };
  KernelLoader<FakeTarget> L(T, Opts);
  std::vector<FakeSource> Srcs;
  for (int I = 0; I != 40; ++I)
    Srcs.push_back(FakeSource{"k" + std::to_string(I), I % 7 == 3, "", I % 5});
  std::vector<KernelLoader<FakeTarget>::Request> Batch;
  for (int I = 0; I != 40; ++I)
    Batch.push_back({id("k" + std::to_string(I % 37)), &Srcs[I % 37]});
  auto Results = L.getBatch(Batch, BatchOptions{Threads, {}});
  for (auto &R : Results)
    Lines.push_back(R ? "ok " + std::to_string(R->Value)
                      : "error " + llvm::toString(R.takeError()));
  return Lines;
}

TEST(KernelLoader, BatchResultsDoNotDependOnThreads) {
  std::vector<std::string> One = runBatch(1);
  std::vector<std::string> Four = runBatch(4);
  EXPECT_EQ(One, Four);
  EXPECT_EQ(One.size(), 37u + 40u);
}

TEST(KernelLoader, ProgressCountsToTheTotal) {
  TempDir Root;
  FakeTarget T(storeAt(Root.path()));
  KernelLoader<FakeTarget> L(T);
  FakeSource A{"a"}, B{"b"}, C{"c", true};
  ASSERT_TRUE(bool(L.get(id("a"), A))); // a memory hit in the batch
  std::vector<std::pair<size_t, size_t>> Calls;
  BatchOptions O{2, [&](size_t Done, size_t Total) {
                   Calls.push_back({Done, Total});
                 }};
  auto Results = L.getBatch(
      {{id("a"), &A}, {id("b"), &B}, {id("c"), &C}, {id("b"), &B}}, O);
  ASSERT_FALSE(Calls.empty());
  EXPECT_EQ(Calls.front(), std::make_pair(size_t(1), size_t(3)));
  EXPECT_EQ(Calls.back(), std::make_pair(size_t(3), size_t(3)));
  for (size_t I = 1; I < Calls.size(); ++I)
    EXPECT_EQ(Calls[I].first, Calls[I - 1].first + 1);
  llvm::consumeError(Results[2].takeError());
}

TEST(KernelLoader, TwoThreadsAskingForOneKernelCompileItOnce) {
  TempDir Root;
  FakeTarget T(storeAt(Root.path()));
  KernelLoader<FakeTarget> L(T);
  FakeSource S{"slow", false, "", 200};
  uint32_t V1 = 0, V2 = 0;
  std::thread A([&] { V1 = L.get(id("slow"), S)->Value; });
  std::thread B([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    V2 = L.get(id("slow"), S)->Value;
  });
  A.join();
  B.join();
  EXPECT_EQ(T.C.Lowerings, 1);
  EXPECT_EQ(V1, V2);
  EXPECT_NE(V1, 0u);
}

TEST(KernelLoader, AnArtifactFinalizedFromASharedSourceIsReused) {
  TempDir Root;
  {
    FakeTarget T(storeAt(Root.path()));
    KernelLoader<FakeTarget> L(T);
    FakeSource S{"first", false, "shared text"};
    ASSERT_TRUE(bool(L.get(id("first"), S)));
    EXPECT_EQ(T.C.Finalizations, 1);
  }
  FakeTarget T(storeAt(Root.path()));
  KernelLoader<FakeTarget> L(T);
  FakeSource S{"second", false, "shared text"};
  llvm::Expected<FakeLoaded> R = L.get(id("second"), S);
  ASSERT_TRUE(bool(R));
  EXPECT_EQ(T.C.Lowerings, 1);
  EXPECT_EQ(T.C.Finalizations, 0) << "finalized by the first kernel";
  EXPECT_EQ(R->Value,
            uint32_t(llvm::xxh3_64bits(llvm::StringRef("first")) & 0xffffff));
  EXPECT_EQ(L.statistics().SourceHits, 1u);
}

TEST(KernelLoader, RecordingIsDumpedWhenAsked) {
  TempDir Root, Dump;
  FakeTarget T(storeAt(Root.path()));
  LoaderOptions O;
  O.DumpDir = Dump.path();
  KernelLoader<FakeTarget> L(T, O);
  FakeSource S{"the kernel text"};
  ASSERT_TRUE(bool(L.get(id("k/1"), S)));
  FILE *F = std::fopen((Dump.path() + "/k_1/kernel.kiln").c_str(), "r");
  ASSERT_NE(F, nullptr);
  char Buf[64] = {};
  std::fread(Buf, 1, sizeof(Buf) - 1, F);
  std::fclose(F);
  EXPECT_STREQ(Buf, "the kernel text");
}

TEST(ArtifactIdTest, HashAndOrder) {
  struct V {
    int N;
    bool operator==(const V &) const = default;
    std::string str() const { return std::to_string(N); }
  };
  ArtifactId<V> A{KernelId("k"), V{1}}, B{KernelId("k"), V{2}};
  EXPECT_NE(A.stableHash(), B.stableHash());
  EXPECT_TRUE(A < B);
  EXPECT_FALSE(A == B);
  EXPECT_EQ(A.str(), "k [1]");
  // The hash is the same in every process: pinned.
  EXPECT_EQ(KernelId("add").stableHash(),
            llvm::xxh3_64bits(llvm::StringRef("add")));
  EXPECT_EQ(KernelId("k", 5), KernelId("k", 6))
      << "the IR hash is not identity";
}

} // namespace

namespace {

TEST(CompilationLogger, PrintsPhasesAndStatisticsAddUp) {
  CompilationLogger Log("add-00");
  Log.addPhase("lower", std::chrono::microseconds(1500));
  Log.addPhase("finalize", std::chrono::microseconds(20));
  Log.addPhase("lower", std::chrono::microseconds(500));
  Log.setServed(ServedKind::Compiled);
  std::string S;
  llvm::raw_string_ostream OS(S);
  Log.print(OS);
  EXPECT_EQ(S, "kiln: add-00: compiled (lower 2.000 ms, finalize 0.020 ms)\n");
  LoaderStatistics St;
  St.add(Log);
  Log.setServed(ServedKind::StoreHit);
  St.add(Log);
  EXPECT_EQ(St.Compiled, 1u);
  EXPECT_EQ(St.StoreHits, 1u);
  ASSERT_EQ(St.PhaseTotals.size(), 2u);
  EXPECT_EQ(St.PhaseTotals[0].first, "finalize"); // sorted by name
  EXPECT_EQ(St.PhaseTotals[1].second, std::chrono::milliseconds(4));
}

TEST(SharedErrorTest, MakesEqualErrorsAgainAndAgain) {
  SharedError E(llvm::joinErrors(
      makeDiagnostic("f.kiln", SourceLoc{1, 2}, "first"),
      llvm::createStringError(std::make_error_code(std::errc::io_error),
                              "second")));
  for (int I = 0; I != 2; ++I)
    EXPECT_EQ(llvm::toString(E.make()), "f.kiln:1:2: error: first\nsecond");
}

} // namespace
