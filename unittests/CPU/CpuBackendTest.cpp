//===- CpuBackendTest.cpp - CpuCompiler, CpuTarget and the loader over them -===//

#include "Support/Kernels.h"
#include "Support/TempDir.h"

#include "kiln/CPU/CpuBackend.h"
#include "kiln/Compile/KernelLoader.h"
#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Hash.h"
#include "kiln/IR/Parser.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Store/Environment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace kiln;
using kiln::test::TempDir;

namespace {

const char *Kernels = R"(
kernel @fill cube_dim(64) (%y: buffer<u32, write>) {
  %i = absolute_pos : u32
  store %y[%i], 7:u32
}
kernel @vadd cube_dim(64) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                           %c: buffer<f32, write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = add %x, %y : f32
    store %c[%i], %s
  }
}
kernel @scale cube_dim(32) (%x: buffer<f32, read_write>, %k: f32) {
  %i = absolute_pos : u32
  %v = load %x[%i] : f32
  %r = mul %v, %k : f32
  store %x[%i], %r
}
kernel @bad cube_dim(32) (%x: buffer<f32, read>) {
  %i = absolute_pos : u32
  store %x[%i], 1.0:f32
}
)";

struct CpuBackendTest : ::testing::Test {
  Module M;
  std::unique_ptr<JITLinker> Linker;
  void SetUp() override {
    M = test::parseOk(Kernels, "k.kiln");
    ASSERT_FALSE(M.Kernels.empty());
    auto L = JITLinker::create();
    ASSERT_TRUE(!!L) << llvm::toString(L.takeError());
    Linker = std::move(*L);
  }
  const IRKernel &kernel(llvm::StringRef Name) { return *M.findKernel(Name); }
  CpuTarget::Id idOf(const IRKernel &K, CpuVariant V = {}) {
    return {KernelId(kernelIdFromIR(K), hashKernel(K)), V};
  }
  ArtifactStore<CpuArtifact> storeAt(const std::string &Root) {
    StoreConfig C;
    return ArtifactStore<CpuArtifact>(
        FileStore::openAt(Root, "cpu", cpuStoreFingerprint({}), C), nullptr,
        sourceBuildIdHash());
  }
};

CpuArtifact sampleArtifact() {
  CpuArtifact A;
  A.Object = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  A.Meta.KernelName = "k";
  A.Meta.Symbol = "kiln_cube_k";
  A.Meta.CubeDim = {4, 2, 1};
  A.IRHash = 0x1234567890abcdefULL;
  A.Features = "+avx2,-avx512f";
  return A;
}

TEST(CpuArtifactCodec, RoundTrips) {
  CpuArtifact A = sampleArtifact();
  auto B = ArtifactCodec<CpuArtifact>::decode(
      ArtifactCodec<CpuArtifact>::encode(A));
  ASSERT_TRUE(!!B) << llvm::toString(B.takeError());
  EXPECT_EQ(*B, A);
}

TEST(CpuArtifactCodec, RejectsEveryTruncationAndTrailingBytes) {
  std::vector<uint8_t> Bytes =
      ArtifactCodec<CpuArtifact>::encode(sampleArtifact());
  for (size_t N = 0; N < Bytes.size(); ++N) {
    auto R = ArtifactCodec<CpuArtifact>::decode(
        llvm::ArrayRef<uint8_t>(Bytes).take_front(N));
    ASSERT_FALSE(!!R) << "decoded a truncation to " << N << " bytes";
    llvm::consumeError(R.takeError());
  }
  Bytes.push_back(0);
  auto R = ArtifactCodec<CpuArtifact>::decode(Bytes);
  ASSERT_FALSE(!!R);
  EXPECT_NE(llvm::toString(R.takeError()).find("trailing"), std::string::npos);
}

TEST(CpuArtifactCodec, RejectsBadMagicVersionAndHugeLengths) {
  std::vector<uint8_t> Good =
      ArtifactCodec<CpuArtifact>::encode(sampleArtifact());
  // Every single-byte corruption of the header and length fields decodes to
  // an error or to some artifact, never a crash; the magic and version are
  // always rejected.
  for (size_t I = 0; I < 8; ++I) {
    std::vector<uint8_t> B = Good;
    B[I] ^= 0x5a;
    auto R = ArtifactCodec<CpuArtifact>::decode(B);
    EXPECT_FALSE(!!R) << "byte " << I;
    if (!R)
      llvm::consumeError(R.takeError());
  }
  for (size_t I = 8; I < Good.size(); ++I) {
    std::vector<uint8_t> B = Good;
    B[I] = 0xff;
    auto R = ArtifactCodec<CpuArtifact>::decode(B);
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

TEST_F(CpuBackendTest, LowerVerifiesFirst) {
  CpuCompiler C;
  CompilationRecording Rec;
  CompilationLogger Log;
  auto A = C.lower({kernel("bad"), "k.kiln"}, idOf(kernel("bad")), Rec, Log);
  ASSERT_FALSE(!!A);
  std::string Msg = llvm::toString(A.takeError());
  EXPECT_NE(Msg.find("k.kiln:"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("declared 'read'"), std::string::npos) << Msg;
}

TEST_F(CpuBackendTest, LowerMakesAnObjectAndRecordsOnlyWhenAsked) {
  CpuCompiler C;
  const IRKernel &K = kernel("vadd");
  CompilationRecording Off;
  CompilationLogger Log;
  auto A = C.lower({K, "k.kiln"}, idOf(K), Off, Log);
  ASSERT_TRUE(!!A) << llvm::toString(A.takeError());
  EXPECT_FALSE(A->Object.empty());
  EXPECT_EQ(A->IRHash, hashKernel(K));
  EXPECT_EQ(A->Meta.KernelName, "vadd");
  EXPECT_FALSE(A->Features.empty());
  EXPECT_TRUE(Off.sections().empty());
  bool Timed = false;
  for (const auto &P : Log.phases())
    Timed |= P.first == cpu_phase::Codegen;
  EXPECT_TRUE(Timed);

  CompilationRecording On(true);
  auto B = C.lower({K, "k.kiln"}, idOf(K), On, Log);
  ASSERT_TRUE(!!B) << llvm::toString(B.takeError());
  ASSERT_EQ(On.sections().size(), 4u);
  EXPECT_NE(On.get(RecordingKind::KernelIR)->find("@vadd"), llvm::StringRef::npos);
  EXPECT_NE(On.get(RecordingKind::LLVMIR)->find("define"),
            llvm::StringRef::npos);
  EXPECT_NE(On.get(RecordingKind::Assembly)->find("kiln_cube_vadd"),
            llvm::StringRef::npos);
  // Recording does not change the code.
  EXPECT_EQ(A->Object, B->Object);
}

TEST_F(CpuBackendTest, StoreHitInANewTargetAndStaleArtifactRecompiles) {
  TempDir Root;
  const IRKernel &K = kernel("fill");
  CpuSource Src{K, "k.kiln"};
  {
    CpuTarget T(CpuCompiler(), *Linker, storeAt(Root.path()));
    KernelLoader<CpuTarget> L(T);
    auto R = L.get(idOf(K), Src);
    ASSERT_TRUE(!!R) << llvm::toString(R.takeError());
    EXPECT_EQ(L.statistics().Compiled, 1u);
    EXPECT_EQ(T.takeStoreOutcome(idOf(K)), std::optional<bool>(true));
  }
  {
    CpuTarget T(CpuCompiler(), *Linker, storeAt(Root.path()));
    KernelLoader<CpuTarget> L(T);
    auto R = L.get(idOf(K), Src);
    ASSERT_TRUE(!!R) << llvm::toString(R.takeError());
    EXPECT_EQ(L.statistics().StoreHits, 1u);
    EXPECT_EQ(L.statistics().Compiled, 0u);
  }
  // An artifact the linker refuses (its symbol is not in the object) is
  // discarded with a warning and the kernel compiled again.
  {
    CpuTarget T(CpuCompiler(), *Linker, storeAt(Root.path()));
    std::optional<CpuArtifact> A = T.stored(idOf(K));
    ASSERT_TRUE(A.has_value());
    T.discard(idOf(K));
    A->Meta.Symbol = "no_such_symbol";
    ASSERT_TRUE(T.store(idOf(K), *A, std::nullopt));
  }
  std::vector<std::string> Warnings;
  {
    CpuTarget T(CpuCompiler(), *Linker, storeAt(Root.path()));
    LoaderOptions LO;
    LO.WarningSink = [&](llvm::StringRef W) { Warnings.push_back(W.str()); };
    KernelLoader<CpuTarget> L(T, LO);
    auto R = L.get(idOf(K), Src);
    ASSERT_TRUE(!!R) << llvm::toString(R.takeError());
    EXPECT_EQ(L.statistics().Compiled, 1u);
    EXPECT_EQ(R->metadata().Symbol, "kiln_cube_fill");
  }
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_NE(Warnings[0].find("did not load"), std::string::npos) << Warnings[0];
}

/// Compiles every good kernel of the module with \p Threads threads into a
/// fresh store and returns the stored artifacts, in kernel order.
std::vector<CpuArtifact> batchInto(CpuBackendTest &F, const std::string &Root,
                                   unsigned Threads) {
  CpuTarget T(CpuCompiler(), *F.Linker, F.storeAt(Root));
  KernelLoader<CpuTarget> L(T);
  std::vector<CpuSource> Sources;
  std::vector<KernelLoader<CpuTarget>::Request> Requests;
  Sources.reserve(F.M.Kernels.size() * 2);
  for (const IRKernel &K : F.M.Kernels)
    for (bool Checked : {true, false}) {
      if (K.Name == "bad")
        continue;
      Sources.push_back({K, "k.kiln"});
      CpuVariant V;
      V.BoundsChecked = Checked;
      Requests.push_back({F.idOf(K, V), &Sources.back()});
    }
  BatchOptions BO;
  BO.Threads = Threads;
  auto Results = L.getBatch(Requests, BO);
  std::vector<CpuArtifact> Out;
  for (size_t I = 0; I < Results.size(); ++I) {
    EXPECT_TRUE(!!Results[I]) << llvm::toString(Results[I].takeError());
    std::optional<CpuArtifact> A = T.stored(Requests[I].Key);
    EXPECT_TRUE(A.has_value());
    if (A)
      Out.push_back(std::move(*A));
  }
  return Out;
}

TEST_F(CpuBackendTest, BatchObjectsAreTheSameForOneAndTwoThreads) {
  TempDir One, Two;
  std::vector<CpuArtifact> A = batchInto(*this, One.path(), 1);
  std::vector<CpuArtifact> B = batchInto(*this, Two.path(), 2);
  ASSERT_EQ(A.size(), 6u);
  ASSERT_EQ(A.size(), B.size());
  for (size_t I = 0; I < A.size(); ++I) {
    EXPECT_EQ(A[I].Object, B[I].Object) << "artifact " << I;
    EXPECT_EQ(A[I], B[I]);
  }
  // The checked and unchecked variants of a kernel are distinct code.
  EXPECT_NE(A[2].Object, A[3].Object);
}

TEST_F(CpuBackendTest, DeviceServesFromItsStore) {
  TempDir Root;
  DeviceOptions O;
  O.StoreDir = Root.path();
  O.StoreMode = DeviceStoreMode::ReadWrite;
  const IRKernel &K = kernel("fill");
  {
    auto D = RuntimeDevice::create(O);
    ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
    KernelStats S;
    auto L = (*D)->getKernel(K, {}, &S);
    ASSERT_TRUE(!!L) << llvm::toString(L.takeError());
    EXPECT_TRUE(S.Compiled);
    EXPECT_TRUE(S.Stored);
    EXPECT_TRUE(S.HasStore);
    EXPECT_GT(S.CodegenSeconds, 0.0);
  }
  auto D = RuntimeDevice::create(O);
  ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
  KernelStats S;
  ASSERT_TRUE(!!(*D)->getKernel(K, {}, &S));
  EXPECT_EQ(S.Origin, KernelProvenance::Store);
  EXPECT_EQ(S.CodegenSeconds, 0.0);
  ASSERT_TRUE(!!(*D)->getKernel(K, {}, &S));
  EXPECT_EQ(S.Origin, KernelProvenance::Memory);
  // A runtime-given id is another entry.
  ASSERT_TRUE(!!(*D)->getKernel(K, "runtime-fill-1", {}, &S));
  EXPECT_EQ(S.Origin, KernelProvenance::Compiled);
  auto Empty = (*D)->getKernel(K, "", {}, &S);
  EXPECT_FALSE(!!Empty);
  llvm::consumeError(Empty.takeError());
  EXPECT_EQ((*D)->storeWarnings().count(), 0u);
}

/// A stored entry needing a CPU feature the host lacks is refused by the
/// check the CPU target installs on its (generic) store.
TEST_F(CpuBackendTest, TargetInstallsTheHostFeatureCheck) {
  TempDir Root;
  const IRKernel &K = kernel("fill");
  CpuSource Src{K, "k.kiln"};
  {
    CpuTarget T(CpuCompiler(), *Linker, storeAt(Root.path()));
    KernelLoader<CpuTarget> L(T);
    ASSERT_TRUE(!!L.get(idOf(K), Src));
    std::optional<CpuArtifact> A = T.stored(idOf(K));
    ASSERT_TRUE(A.has_value());
    T.discard(idOf(K));
    A->Features += ",+imaginary-feature";
    ASSERT_TRUE(T.store(idOf(K), *A, std::nullopt));
  }
  CpuTarget T(CpuCompiler(), *Linker, storeAt(Root.path()));
  EXPECT_EQ(T.stored(idOf(K)), std::nullopt);
  EXPECT_EQ(T.artifactStore().kernels()->warnings().count(), 1u);
  std::vector<std::string> R = T.artifactStore().kernels()->warnings().recent();
  ASSERT_EQ(R.size(), 1u);
  EXPECT_NE(R[0].find("needs CPU feature +imaginary-feature"),
            std::string::npos)
      << R[0];
}

TEST_F(CpuBackendTest, DeviceBatchFailsABadKernelAlone) {
  DeviceOptions O;
  O.StoreMode = DeviceStoreMode::Off;
  auto D = RuntimeDevice::create(O);
  ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
  std::vector<KernelRequest> Rs;
  for (const IRKernel &K : M.Kernels)
    Rs.push_back({&K, {}, "k.kiln", "", {}});
  Rs.push_back({&kernel("fill"), {}, "k.kiln", "", {}}); // a duplicate
  Rs.push_back({nullptr, {}, "", "", {}});
  std::vector<KernelStats> S;
  size_t Calls = 0, LastDone = 0, LastTotal = 0;
  KernelBatchOptions BO;
  BO.Threads = 2;
  BO.Progress = [&](size_t Done, size_t Total) {
    ++Calls;
    LastDone = Done;
    LastTotal = Total;
  };
  auto R = (*D)->getKernels(Rs, BO, &S);
  ASSERT_EQ(R.size(), 6u);
  for (size_t I : {0, 1, 2, 4})
    EXPECT_TRUE(!!R[I]) << I << ": " << llvm::toString(R[I].takeError());
  ASSERT_FALSE(!!R[3]);
  EXPECT_NE(llvm::toString(R[3].takeError()).find("k.kiln:"),
            std::string::npos);
  EXPECT_FALSE(!!R[5]);
  llvm::consumeError(R[5].takeError());
  EXPECT_EQ(S[0].Origin, KernelProvenance::Compiled);
  EXPECT_EQ(S[3].Origin, KernelProvenance::Failed);
  EXPECT_EQ(R[0]->entry(), R[4]->entry());
  EXPECT_GT(Calls, 0u);
  EXPECT_EQ(LastDone, LastTotal);
  EXPECT_EQ(LastTotal, 4u);
}

} // namespace
