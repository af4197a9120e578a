//===- RemoteDeviceTest.cpp - Devices sharing a remote tier ---------------===//
//
// End to end through kiln::RuntimeDevice (DeviceOptions::Remote): what one
// device compiles, a device with an empty store loads from the tier, runs, and
// keeps locally; a device with another fleet key, or facing a stalled or
// dead server, compiles and runs right all the same.
//
//===----------------------------------------------------------------------===//

#include "RemoteTestSupport.h"

#include "Support/Kernels.h"

#include "kiln/IR/Hash.h"
#include "kiln/Runtime/Buffer.h"
#include "kiln/Runtime/Device.h"

#include "llvm/Support/FileSystem.h"

using namespace kiln;
using namespace kiln::test;

namespace {

using Clock = std::chrono::steady_clock;

class RemoteDevice : public RemoteTest {
protected:
  void SetUp() override {
    RemoteTest::SetUp();
    M = parseAndVerify(VaddText, DeviceLimits(), "vadd.kiln");
    ASSERT_FALSE(M->Kernels.empty());
  }
  const IRKernel &vadd() { return M->Kernels.front(); }

  /// A device over the store at \p Dir behind \p Remote (none: nullopt is
  /// not used, the environment's tier must not leak in), its warnings
  /// into \p Warnings.
  std::unique_ptr<RuntimeDevice> deviceAt(const std::string &Dir,
                                          RemoteConfig Remote,
                                          std::vector<std::string> *Warnings) {
    DeviceOptions O;
    O.Threads = 2;
    O.StoreDir = Dir;
    O.StoreMode = DeviceStoreMode::ReadWrite;
    O.Remote = std::move(Remote);
    if (Warnings)
      O.WarningSink = [Warnings](llvm::StringRef W) {
        Warnings->push_back(W.str());
      };
    auto D = RuntimeDevice::create(O);
    EXPECT_TRUE(!!D) << llvm::toString(D.takeError());
    return D ? std::move(*D) : nullptr;
  }

  void expectVaddWorks(RuntimeDevice &D, const LoadedKernel &K) {
    const uint32_t N = 1000;
    HostBuffer A =
        std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
    HostBuffer B =
        std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
    HostBuffer C =
        std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
    for (uint32_t I = 0; I < N; ++I) {
      A.as<float>()[I] = float(I);
      B.as<float>()[I] = 0.25f;
      C.as<float>()[I] = -1.0f;
    }
    ArgBinding Args[] = {ArgBinding::buffer(A), ArgBinding::buffer(B),
                         ArgBinding::buffer(C), ArgBinding::u32(N)};
    ASSERT_FALSE(D.launch(K, {(N + 63) / 64, 1, 1}, Args));
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(C.as<float>()[I], float(I) + 0.25f) << I;
  }

  static size_t entryFiles(const std::string &Folder) {
    size_t N = 0;
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator I(Folder, EC), End;
         I != End && !EC; I.increment(EC))
      N += llvm::StringRef(I->path()).ends_with(".entry");
    return N;
  }

  /// Device A compiles vadd into its own store and publishes it; A is
  /// destroyed (its tier drains its queue).
  void publishFromDeviceA() {
    TempDir RootA;
    std::vector<std::string> WA;
    std::unique_ptr<RuntimeDevice> A = deviceAt(RootA.path(), config(), &WA);
    ASSERT_TRUE(A);
    KernelStats S;
    auto K = A->getKernel(vadd(), {}, &S);
    ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
    EXPECT_EQ(S.Origin, KernelProvenance::Compiled);
    EXPECT_TRUE(S.Stored);
    EXPECT_FALSE(S.RemoteHit);
    expectVaddWorks(*A, *K);
    A.reset();
    EXPECT_TRUE(WA.empty()) << joined(WA);
    ASSERT_EQ(Server.keys("kiln:cpu:*").size(), 1u)
        << "device A published its kernel: " << joined(Server.keys());
  }

  std::optional<Module> M;
};

TEST_F(RemoteDevice, CompiledOnOneDeviceLoadedOnAnother) {
  publishFromDeviceA();

  TempDir RootB;
  std::vector<std::string> WB;
  std::unique_ptr<RuntimeDevice> B = deviceAt(RootB.path(), config(), &WB);
  ASSERT_TRUE(B);
  KernelStats S;
  auto K = B->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  EXPECT_EQ(S.Origin, KernelProvenance::Store);
  EXPECT_TRUE(S.StoreHit);
  EXPECT_TRUE(S.RemoteHit);
  EXPECT_FALSE(S.Compiled);
  EXPECT_TRUE(S.HasStore);
  expectVaddWorks(*B, *K);
  // Kept in B's own store.
  EXPECT_EQ(entryFiles(B->storeFolder()), 1u);

  // Loaded again after an unload: from B's store, not the tier.
  ASSERT_TRUE(B->unloadKernel(vadd(), "", hashKernel(vadd()), {}));
  auto K2 = B->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K2);
  EXPECT_EQ(S.Origin, KernelProvenance::Store);
  EXPECT_FALSE(S.RemoteHit);
  expectVaddWorks(*B, *K2);
  std::string Folder = B->storeFolder();
  B.reset();
  EXPECT_TRUE(WB.empty()) << joined(WB);
  // B's counters say so.
  StoreCounters C = readStoreCounters(Folder + "/" + StatsFileName);
  EXPECT_EQ(C.RemoteHits, 1u);
  EXPECT_EQ(C.Hits, 1u);
  EXPECT_EQ(C.RemoteQueued, 0u);

  // A device without a tier on B's store: a plain store hit.
  std::unique_ptr<RuntimeDevice> C2 =
      deviceAt(RootB.path(), RemoteConfig(), nullptr);
  ASSERT_TRUE(C2);
  auto K3 = C2->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K3);
  EXPECT_EQ(S.Origin, KernelProvenance::Store);
  EXPECT_FALSE(S.RemoteHit);
  expectVaddWorks(*C2, *K3);
}

TEST_F(RemoteDevice, DevicesAtOnceAllLoadFromTheTier) {
  publishFromDeviceA();
  // Several devices at once, each with an empty store.
  constexpr unsigned N = 4;
  std::vector<std::unique_ptr<TempDir>> Roots;
  for (unsigned I = 0; I != N; ++I)
    Roots.push_back(std::make_unique<TempDir>());
  std::vector<std::thread> Threads;
  std::atomic<unsigned> Remote{0}, Right{0};
  for (unsigned I = 0; I != N; ++I)
    Threads.emplace_back([&, I] {
      std::unique_ptr<RuntimeDevice> D =
          deviceAt(Roots[I]->path(), config(), nullptr);
      if (!D)
        return;
      std::vector<KernelStats> Stats;
      KernelRequest R;
      R.K = &vadd();
      auto Results = D->getKernels({R}, {}, &Stats);
      if (Results.size() == 1 && Results[0]) {
        Remote += Stats[0].RemoteHit;
        expectVaddWorks(*D, *Results[0]);
        ++Right;
      } else if (Results.size() == 1) {
        ADD_FAILURE() << llvm::toString(Results[0].takeError());
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Right, N);
  EXPECT_EQ(Remote, N);
}

TEST_F(RemoteDevice, AnotherFleetKeyCompiles) {
  publishFromDeviceA();
  TempDir RootD;
  RemoteConfig Other = config();
  Other.KeyFile = OtherKeyFile;
  std::vector<std::string> WD;
  std::unique_ptr<RuntimeDevice> D = deviceAt(RootD.path(), Other, &WD);
  ASSERT_TRUE(D);
  KernelStats S;
  auto K = D->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  EXPECT_EQ(S.Origin, KernelProvenance::Compiled);
  EXPECT_FALSE(S.RemoteHit);
  expectVaddWorks(*D, *K);
  EXPECT_TRUE(anyContains(WD, "another fleet key")) << joined(WD);
}

TEST_F(RemoteDevice, ATierThatCannotBeMadeIsOneWarning) {
  TempDir RootD;
  RemoteConfig NoKey = config();
  NoKey.KeyFile = Keys.sub("absent.key");
  std::vector<std::string> WD;
  std::unique_ptr<RuntimeDevice> D = deviceAt(RootD.path(), NoKey, &WD);
  ASSERT_TRUE(D);
  KernelStats S;
  auto K = D->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K);
  EXPECT_EQ(S.Origin, KernelProvenance::Compiled);
  expectVaddWorks(*D, *K);
  D.reset();
  ASSERT_EQ(WD.size(), 1u) << joined(WD);
  EXPECT_NE(WD[0].find("not using the remote store"), std::string::npos);
  EXPECT_NE(WD[0].find("absent.key"), std::string::npos);
  EXPECT_TRUE(Server.keys().empty());
}

TEST_F(RemoteDevice, SlowServerStillRightBecauseItCompiles) {
  publishFromDeviceA();
  TempDir RootD;
  RemoteConfig C = config();
  C.ConnectTimeout = C.RequestTimeout = milliseconds(100);
  std::unique_ptr<RuntimeDevice> D = deviceAt(RootD.path(), C, nullptr);
  ASSERT_TRUE(D);
  ASSERT_TRUE(Server.sleepFor(1.5)) << "the server never fell asleep";
  Clock::time_point T0 = Clock::now();
  KernelStats S;
  auto K = D->getKernel(vadd(), {}, &S);
  double Seconds = std::chrono::duration<double>(Clock::now() - T0).count();
  ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  EXPECT_EQ(S.Origin, KernelProvenance::Compiled)
      << "the stalled tier answered within its 100 ms timeout?";
  EXPECT_FALSE(S.RemoteHit);
  expectVaddWorks(*D, *K);
  EXPECT_LT(Seconds, 10.0);
  std::printf("[          ] getKernel with a stalled server: %.0f ms\n",
              Seconds * 1e3);
}

TEST_F(RemoteDevice, DeadServerStillRightAndCounted) {
  Server.kill9();
  TempDir RootD;
  RemoteConfig C = config();
  C.ConnectTimeout = C.RequestTimeout = milliseconds(200);
  std::unique_ptr<RuntimeDevice> D = deviceAt(RootD.path(), C, nullptr);
  ASSERT_TRUE(D);
  std::optional<Module> M2 =
      parseAndVerify(AffineText, DeviceLimits(), "affine.kiln");
  ASSERT_FALSE(M2->Kernels.empty());
  KernelRequest R1, R2;
  R1.K = &vadd();
  R2.K = &M2->Kernels.front();
  std::vector<KernelStats> Stats;
  auto Results = D->getKernels({R1, R2}, {}, &Stats);
  ASSERT_EQ(Results.size(), 2u);
  for (size_t I = 0; I != 2; ++I) {
    ASSERT_TRUE(!!Results[I]) << llvm::toString(Results[I].takeError());
    EXPECT_EQ(Stats[I].Origin, KernelProvenance::Compiled);
    EXPECT_TRUE(Stats[I].Stored);
  }
  expectVaddWorks(*D, *Results[0]);
  std::string Folder = D->storeFolder();
  D.reset();
  StoreCounters SC = readStoreCounters(Folder + "/" + StatsFileName);
  EXPECT_EQ(SC.RemoteErrors, 2u);
  EXPECT_EQ(SC.Writes, 2u);
  EXPECT_EQ(SC.RemoteHits, 0u);
}

} // namespace
