//===- APITest.cpp - The public C++ API: devices, kernels, views ----------===//

#include "Kernels.h"

#include "kiln/IR/Builder.h"
#include "kiln/Store/RemoteTier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <cstring>
#include <thread>
#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;

namespace {

TEST(ElementTypeTest, ParsePrintSize) {
  Result<ElementType> T = ElementType::parse("vec<4 x f32>");
  ASSERT_TRUE(T.ok()) << T.status().str();
  EXPECT_EQ(*T, ElementType::line(ScalarType::F32, 4));
  EXPECT_EQ(T->sizeInBytes(), 16u);
  EXPECT_EQ(T->alignment(), 4u);
  EXPECT_EQ(T->str(), "vec<4 x f32>");
  EXPECT_EQ(ElementType::parse("vec<3 x f64>")->sizeInBytes(), 24u);
  EXPECT_EQ(ElementType::parse("u8")->sizeInBytes(), 1u);
  for (const char *Bad : {"", "f31", "vec<5 x f32>", "vec<4 x f32", "vec<4xf32>"}) {
    Result<ElementType> B = ElementType::parse(Bad);
    ASSERT_FALSE(B.ok()) << Bad;
    EXPECT_EQ(B.status().code(), ErrorCode::InvalidArgument);
  }
}

TEST(StatusTest, CodesAndText) {
  Status S(ErrorCode::InvalidLaunch, "bad");
  EXPECT_FALSE(S.ok());
  EXPECT_EQ(S.str(), "invalid launch: bad");
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().str(), "ok");
  EXPECT_STREQ(errorCodeName(ErrorCode::OutOfMemory), "out of memory");
}

TEST(DeviceTest, LoadAndLaunchVadd) {
  Device D = memoryDevice();
  Result<Kernel> K = D.loadKernel(VaddText, "vadd");
  ASSERT_TRUE(K.ok()) << K.status().str();
  EXPECT_EQ(K->name(), "vadd");
  EXPECT_EQ(K->cubeDim().X, 64u);
  ASSERT_EQ(K->parameters().size(), 4u);
  EXPECT_EQ(K->parameters()[2].Name, "c");
  EXPECT_EQ(K->parameters()[2].BufferAccess, Access::Write);
  EXPECT_EQ(K->origin(), KernelOrigin::Compiled);

  const uint32_t N = 1000;
  Buffer A = *Buffer::allocate(N * 4), B = *Buffer::allocate(N * 4),
         C = *Buffer::allocate(N * 4);
  for (uint32_t I = 0; I < N; ++I) {
    static_cast<float *>(A.data())[I] = float(I);
    static_cast<float *>(B.data())[I] = 0.5f;
  }
  Status S = D.launch(*K, {(N + 63) / 64, 1, 1},
                      {Arg::buffer(A.view(f32()), Access::Read),
                       Arg::buffer(B.view(f32()), Access::Read),
                       Arg::buffer(C.view(f32())), Arg::u32(N)});
  ASSERT_TRUE(S.ok()) << S.str();
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(static_cast<float *>(C.data())[I], float(I) + 0.5f) << I;
}

TEST(DeviceTest, KernelErrorsAreCodedAndLocated) {
  Device D = memoryDevice();
  Result<Kernel> P = D.loadKernel("kernel @k cube_dim(4) ( {", {},
                                  KernelOptions{"", "bad.kiln", true});
  ASSERT_FALSE(P.ok());
  EXPECT_EQ(P.status().code(), ErrorCode::InvalidKernel);
  EXPECT_EQ(P.status().message().rfind("bad.kiln:1:", 0), 0u)
      << P.status().message();

  // Parses, does not verify: an f32 stored into a u32 buffer.
  const char *Wrong = "kernel @w cube_dim(4) (%o: buffer<u32, write>) {\n"
                      "  %i = unit_pos : u32\n"
                      "  store %o[%i], 1.0:f32\n"
                      "}\n";
  Result<Kernel> V = D.loadKernel(Wrong, "w", KernelOptions{"", "w.kiln", true});
  ASSERT_FALSE(V.ok());
  EXPECT_EQ(V.status().code(), ErrorCode::InvalidKernel);
  EXPECT_NE(V.status().message().find("w.kiln:3:"), std::string::npos)
      << V.status().message();

  Result<Kernel> N = D.loadKernel(VaddText, "nosuch");
  ASSERT_FALSE(N.ok());
  EXPECT_EQ(N.status().code(), ErrorCode::NotFound);

  std::string Two = std::string(VaddText) + AffineText;
  Result<Kernel> Which = D.loadKernel(Two);
  ASSERT_FALSE(Which.ok());
  EXPECT_EQ(Which.status().code(), ErrorCode::InvalidArgument);
  EXPECT_TRUE(D.loadKernel(Two, "@affine").ok());
}

TEST(DeviceTest, BatchLoadsEveryKernel) {
  Device D = memoryDevice();
  std::string Two = std::string(VaddText) + AffineText;
  std::vector<Result<Kernel>> Ks = D.loadKernels(Two, KernelOptions{"mod", "", true});
  ASSERT_EQ(Ks.size(), 2u);
  ASSERT_TRUE(Ks[0].ok() && Ks[1].ok());
  EXPECT_EQ(Ks[0]->id(), "mod.vadd");
  EXPECT_EQ(Ks[1]->id(), "mod.affine");
  EXPECT_EQ(D.loadedKernelCount(), 2u);
}

TEST(DeviceTest, FindByIdAndUnload) {
  Device D = memoryDevice();
  KernelOptions O;
  O.Id = "runtime-vadd-v1";
  Result<Kernel> K = D.loadKernel(VaddText, "vadd", O);
  ASSERT_TRUE(K.ok()) << K.status().str();
  EXPECT_EQ(K->id(), "runtime-vadd-v1");
  // Found without the IR; the same handle state.
  Result<Kernel> F = D.findKernel("runtime-vadd-v1");
  ASSERT_TRUE(F.ok());
  EXPECT_EQ(F->name(), "vadd");
  // A known id is served without parsing: even bad text gets the kernel.
  Result<Kernel> Again = D.loadKernel("not kiln at all", {}, O);
  ASSERT_TRUE(Again.ok()) << Again.status().str();
  EXPECT_FALSE(D.findKernel("runtime-vadd-v1", /*BoundsChecked=*/false).ok());

  Kernel Copy = *K;
  ASSERT_TRUE(D.unloadKernel(*K).ok());
  EXPECT_FALSE(K->valid());
  Result<Kernel> Gone = D.findKernel("runtime-vadd-v1");
  ASSERT_FALSE(Gone.ok());
  EXPECT_EQ(Gone.status().code(), ErrorCode::NotFound);
  EXPECT_EQ(D.loadedKernelCount(), 0u);
  // A copy of the handle still runs: its code is freed with the last copy.
  Buffer A = *Buffer::allocate(64 * 4), C = *Buffer::allocate(64 * 4);
  Status S = D.launch(Copy, {1, 1, 1},
                      {Arg::buffer(A.view(f32()), Access::Read),
                       Arg::buffer(A.view(f32()), Access::Read),
                       Arg::buffer(C.view(f32())), Arg::u32(64)});
  EXPECT_TRUE(S.ok()) << S.str();
  // Loading it again compiles it again (the device forgot it).
  Result<Kernel> Reloaded = D.loadKernel(VaddText, "vadd", O);
  ASSERT_TRUE(Reloaded.ok());
  EXPECT_EQ(Reloaded->origin(), KernelOrigin::Compiled);

  Kernel Null;
  EXPECT_EQ(D.unloadKernel(Null).code(), ErrorCode::InvalidArgument);
}

TEST(DeviceTest, BuilderKernels) {
  using kiln::OpKind;
  kiln::Type U32 = kiln::Type::scalar(kiln::ScalarKind::U32);
  kiln::KernelBuilder B("twice");
  B.setCubeDim({16});
  kiln::ValueId Out = B.addBuffer("out", U32, kiln::AccessKind::Write);
  kiln::ValueId I = B.builtin(OpKind::AbsolutePos);
  kiln::ValueId Two = B.op(OpKind::Add, {I, I});
  B.store(Out, I, Two);
  llvm::Expected<kiln::IRKernel> K = B.finish();
  ASSERT_TRUE(static_cast<bool>(K)) << llvm::toString(K.takeError());
  Device D = memoryDevice();
  Result<Kernel> H = D.loadKernel(*K);
  ASSERT_TRUE(H.ok()) << H.status().str();
  Buffer O = *Buffer::allocate(32 * 4);
  ASSERT_TRUE(D.launch(*H, {2, 1, 1},
                       {Arg::buffer(O.view(ElementType::scalar(ScalarType::U32)))})
                  .ok());
  for (uint32_t J = 0; J < 32; ++J)
    EXPECT_EQ(static_cast<uint32_t *>(O.data())[J], 2 * J);

  // One that does not verify (an f32 stored into a u32 buffer): refused as
  // an invalid kernel whose message names the kernel.
  kiln::KernelBuilder Bad("bad");
  Bad.setCubeDim({4});
  kiln::ValueId BO = Bad.addBuffer("out", U32, kiln::AccessKind::Write);
  kiln::ValueId BI = Bad.builtin(OpKind::UnitPos);
  kiln::ValueId F = Bad.cast(BI, kiln::Type::scalar(kiln::ScalarKind::F32));
  Bad.store(BO, BI, F);
  llvm::Expected<kiln::IRKernel> BK = Bad.finish();
  ASSERT_TRUE(static_cast<bool>(BK)) << llvm::toString(BK.takeError());
  Result<Kernel> BH = D.loadKernel(*BK);
  ASSERT_FALSE(BH.ok());
  EXPECT_EQ(BH.status().code(), ErrorCode::InvalidKernel);
  EXPECT_NE(BH.status().message().find("<builder>"), std::string::npos)
      << BH.status().message();
  EXPECT_NE(BH.status().message().find("bad"), std::string::npos)
      << BH.status().message();
}

TEST(LaunchTest, ViewsAtOffsets) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(VaddText, "vadd");
  const uint32_t N = 300;
  Buffer Pool = *Buffer::allocate(64 * 1024);
  for (uint64_t Offset : {4u, 16u, 100u, 132u}) {
    std::memset(Pool.data(), 0, Pool.size());
    uint64_t AOff = Offset, BOff = Offset + 4096 + 8, COff = 8192 + Offset * 3;
    auto *Base = static_cast<char *>(Pool.data());
    for (uint32_t I = 0; I < N; ++I) {
      float A = float(I) * 0.25f, Bv = 3.0f - float(I);
      std::memcpy(Base + AOff + 4 * I, &A, 4);
      std::memcpy(Base + BOff + 4 * I, &Bv, 4);
    }
    Status S = D.launch(K, {(N + 63) / 64, 1, 1},
                        {Arg::buffer(Pool.view(f32(), AOff, N), Access::Read),
                         Arg::buffer(Pool.view(f32(), BOff, N), Access::Read),
                         Arg::buffer(Pool.view(f32(), COff, N)), Arg::u32(N)});
    ASSERT_TRUE(S.ok()) << "offset " << Offset << ": " << S.str();
    for (uint32_t I = 0; I < N; ++I) {
      float C;
      std::memcpy(&C, Base + COff + 4 * I, 4);
      ASSERT_EQ(C, float(I) * 0.25f + 3.0f - float(I)) << Offset << " " << I;
    }
    // Nothing outside the output view was written.
    float Before, After;
    std::memcpy(&Before, Base + COff - 4, 4);
    std::memcpy(&After, Base + COff + 4 * N, 4);
    EXPECT_EQ(Before, 0.0f);
    EXPECT_EQ(After, 0.0f);
  }
}

TEST(LaunchTest, BadViewsAreRefusedNamingTheParameter) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(VaddText, "vadd");
  Buffer Pool = *Buffer::allocate(4096);
  auto Launch = [&](BufferView C) {
    return D.launch(K, {1, 1, 1},
                    {Arg::buffer(Pool.view(f32(), 0, 64), Access::Read),
                     Arg::buffer(Pool.view(f32(), 256, 64), Access::Read),
                     Arg::buffer(C), Arg::u32(64)});
  };
  Status Misaligned = Launch(Pool.view(f32(), 1026, 64));
  EXPECT_EQ(Misaligned.code(), ErrorCode::InvalidLaunch);
  EXPECT_NE(Misaligned.message().find("argument 2 (%c)"), std::string::npos)
      << Misaligned.message();
  EXPECT_NE(Misaligned.message().find("alignment"), std::string::npos);
  Status Outside = Launch(Pool.view(f32(), 4096 - 16, 64));
  EXPECT_EQ(Outside.code(), ErrorCode::InvalidLaunch);
  EXPECT_NE(Outside.message().find("does not fit"), std::string::npos)
      << Outside.message();
  Status Null = Launch(BufferView());
  EXPECT_EQ(Null.code(), ErrorCode::InvalidLaunch);
  Status Count = D.launch(K, {1, 1, 1}, {Arg::u32(3)});
  EXPECT_EQ(Count.code(), ErrorCode::InvalidLaunch);
  EXPECT_NE(Count.message().find("1 argument given"), std::string::npos)
      << Count.message();
  Status Type = D.launch(K, {1, 1, 1},
                         {Arg::buffer(Pool.view(f32(), 0, 64)),
                          Arg::buffer(Pool.view(f32(), 256, 64)),
                          Arg::buffer(Pool.view(f32(), 512, 64)), Arg::f32(1)});
  EXPECT_EQ(Type.code(), ErrorCode::InvalidLaunch);
  EXPECT_NE(Type.message().find("(%n)"), std::string::npos) << Type.message();
  // A zero cube count is a launch of no cubes: it succeeds, runs nothing,
  // and its arguments are still checked.
  static_cast<float *>(Pool.data())[128] = 7.0f;
  Status Zero = D.launch(K, {0, 1, 1},
                         {Arg::buffer(Pool.view(f32(), 0, 64)),
                          Arg::buffer(Pool.view(f32(), 256, 64)),
                          Arg::buffer(Pool.view(f32(), 512, 64)), Arg::u32(64)});
  EXPECT_TRUE(Zero.ok()) << Zero.str();
  EXPECT_EQ(static_cast<float *>(Pool.data())[128], 7.0f);
  EXPECT_EQ(D.launch(K, {4, 0, 2}, {Arg::u32(1)}).code(),
            ErrorCode::InvalidLaunch);
  EXPECT_EQ(D.launch(Kernel(), {1, 1, 1}, {}).code(),
            ErrorCode::InvalidArgument);
}

TEST(LaunchTest, WrappedMemoryAndManyThreads) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(AffineText, "affine");
  constexpr int Threads = 4, Rounds = 50;
  std::vector<std::thread> Ts;
  std::vector<int> Bad(Threads, 0);
  for (int T = 0; T < Threads; ++T)
    Ts.emplace_back([&, T] {
      std::vector<float> Host(200, float(T));
      Buffer B = *Buffer::wrap(Host.data(), Host.size() * 4);
      for (int R = 0; R < Rounds; ++R) {
        Status S = D.launch(K, {4, 1, 1},
                            {Arg::buffer(B.view(f32())), Arg::f32(1.0f),
                             Arg::f32(1.0f), Arg::u32(200)});
        if (!S.ok())
          ++Bad[T];
      }
      for (float V : Host)
        if (V != float(T + Rounds))
          ++Bad[T];
    });
  for (auto &T : Ts)
    T.join();
  for (int T = 0; T < Threads; ++T)
    EXPECT_EQ(Bad[T], 0) << T;
  EXPECT_FALSE(Buffer::wrap(nullptr, 4).ok());
  EXPECT_TRUE(Buffer::wrap(nullptr, 0).ok());
}

TEST(DeviceTest, OptionsAreChecked) {
  DeviceConfig C;
  C.OptLevel = 7;
  Result<Device> D = Device::create(C);
  ASSERT_FALSE(D.ok());
  EXPECT_EQ(D.status().code(), ErrorCode::InvalidArgument);
  Device Moved = memoryDevice();
  Device Other = std::move(Moved);
  EXPECT_FALSE(Moved.valid());
  EXPECT_EQ(Moved.loadKernel(VaddText).status().code(),
            ErrorCode::InvalidArgument);
  EXPECT_TRUE(Other.valid());
}

} // namespace

namespace {

// A loaded kernel is found and launched while another thread compiles a big
// kernel on the same device: lookups and launches do not wait for it.
TEST(DeviceTest, LookupsDoNotWaitBehindACompile) {
  Device D = memoryDevice();
  KernelOptions O;
  O.Id = "small";
  Kernel Small = *D.loadKernel(AffineText, "affine", O);
  std::string Big = "kernel @big cube_dim(64) (%y: buffer<f32, read_write>) {\n"
                    "  %i = absolute_pos : u32\n  %v0 = load %y[%i] : f32\n";
  const int Ops = 1500;
  for (int L = 1; L < Ops; ++L)
    Big += "  %v" + std::to_string(L) + " = fma %v" + std::to_string(L - 1) +
           ", 1.0001:f32, 0.5:f32 : f32\n  store %y[%i], %v" +
           std::to_string(L) + "\n";
  Big += "}\n";
  std::atomic<bool> Started{false}, Done{false};
  std::thread Compiler([&] {
    Started = true;
    Result<Kernel> K = D.loadKernel(Big, "big");
    EXPECT_TRUE(K.ok()) << K.status().str();
    Done = true;
  });
  while (!Started)
    std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  Buffer B = *Buffer::allocate(64 * 4);
  for (int I = 0; I < 100; ++I) {
    ASSERT_TRUE(D.findKernel("small").ok());
    ASSERT_TRUE(D.loadKernel(AffineText, "affine", O).ok());
    ASSERT_TRUE(D.launch(Small, {1, 1, 1},
                         {Arg::buffer(B.view(f32())), Arg::f32(1),
                          Arg::f32(1), Arg::u32(64)})
                    .ok());
  }
  bool CompileStillRunning = !Done;
  Compiler.join();
  EXPECT_TRUE(CompileStillRunning)
      << "the lookups finished only after the other thread's compile";
  EXPECT_EQ(static_cast<float *>(B.data())[0], 100.0f);
}

} // namespace

namespace {

TEST(DeviceTest, RemoteSettingsThatCannotWorkAreInvalidArguments) {
  if (!kiln::remoteTierBuilt()) {
    // Any remote setting but "off" cannot work in a build without a tier.
    DeviceConfig C;
    C.Store = StoreMode::Off;
    C.RemoteStore = "unix:///tmp/kiln-no-such-folder/redis.sock";
    Result<Device> D = Device::create(C);
    ASSERT_FALSE(D.ok());
    EXPECT_EQ(D.status().code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(D.status().message(), std::string("remote tier settings: ") +
                                        kiln::noRemoteTierMessage());
    C.RemoteStore = "off";
    EXPECT_TRUE(Device::create(C).ok());
    return;
  }
  std::filesystem::path Dir =
      std::filesystem::temp_directory_path() /
      ("kiln-api-remote-" + std::to_string(::getpid()));
  std::filesystem::create_directories(Dir);
  std::string Key = (Dir / "key").string();
  {
    FILE *F = std::fopen(Key.c_str(), "w");
    ASSERT_NE(F, nullptr);
    std::fputs("0123456789abcdef0123456789abcdef0123", F);
    std::fclose(F);
  }
  std::filesystem::permissions(Key, std::filesystem::perms::owner_read |
                                        std::filesystem::perms::owner_write);
  auto Create = [&](const DeviceConfig &C) {
    Result<Device> D = Device::create(C);
    return D.ok() ? Status() : D.status();
  };
  DeviceConfig C;
  C.Store = StoreMode::Off;
  C.RemoteStore = "http://example";
  C.RemoteKeyFile = Key;
  Status S = Create(C);
  EXPECT_EQ(S.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(S.message().find("expected redis://"), std::string::npos)
      << S.message();
  C.RemoteStore = "unix:///tmp/kiln-no-such-folder/redis.sock";
  C.RemoteKeyFile = (Dir / "missing").string();
  S = Create(C);
  EXPECT_EQ(S.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(S.message().find("fleet key file"), std::string::npos)
      << S.message();
  // A key others may read is refused, naming the rule.
  std::filesystem::permissions(Key, std::filesystem::perms::group_read,
                               std::filesystem::perm_options::add);
  C.RemoteKeyFile = Key;
  S = Create(C);
  EXPECT_EQ(S.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(S.message().find("chmod 600"), std::string::npos) << S.message();
  std::filesystem::permissions(Key, std::filesystem::perms::group_read,
                               std::filesystem::perm_options::remove);
  // A server that is not there is no error: only slowness, later.
  EXPECT_TRUE(Create(C).ok());
  C.RemoteTimeoutMilliseconds = 70000;
  EXPECT_EQ(Create(C).code(), ErrorCode::InvalidArgument);
  // "off" needs nothing else.
  DeviceConfig Off;
  Off.Store = StoreMode::Off;
  Off.RemoteStore = "off";
  EXPECT_TRUE(Create(Off).ok());
  std::filesystem::remove_all(Dir);
}

TEST(DeviceTest, AStoreThatCannotBeUsedIsAStoreFailure) {
  // A store folder under a regular file cannot be created.
  std::string File = ::testing::TempDir() + "kiln-api-not-a-folder";
  FILE *F = std::fopen(File.c_str(), "w");
  ASSERT_NE(F, nullptr);
  std::fclose(F);
  DeviceConfig C;
  C.StoreDir = File + "/store";
  C.Store = StoreMode::ReadWrite;
  Result<Device> D = Device::create(C);
  ASSERT_FALSE(D.ok());
  EXPECT_EQ(D.status().code(), ErrorCode::StoreFailure);
  EXPECT_NE(D.status().message().find(C.StoreDir), std::string::npos)
      << D.status().message();
  // The environment's mode with the same folder: no store, no failure.
  C.Store = StoreMode::Environment;
  Result<Device> Quiet = Device::create(C);
  ASSERT_TRUE(Quiet.ok()) << Quiet.status().str();
  EXPECT_FALSE(Quiet->hasStore());
  std::remove(File.c_str());
}

TEST(DeviceTest, TheSameTextLoadedTwiceSharesOneHandle) {
  Device D = memoryDevice();
  Kernel A = *D.loadKernel(VaddText);
  Kernel B = *D.loadKernel(VaddText);
  EXPECT_EQ(A.id(), B.id());
  EXPECT_EQ(D.loadedKernelCount(), 1u);
  std::string Id = A.id();
  ASSERT_TRUE(D.unloadKernel(A).ok());
  EXPECT_FALSE(D.findKernel(Id).ok());
  EXPECT_EQ(D.loadedKernelCount(), 0u);
  EXPECT_TRUE(B.valid()); // the other copy still runs
}

} // namespace

namespace {

TEST(DeviceTest, WarningsGoToTheSinkNeverToStderr) {
  // A store folder others can write to is not trusted: one warning.
  std::string Root = ::testing::TempDir() + "kiln-api-open-store";
  std::filesystem::remove_all(Root);
  std::filesystem::create_directories(Root);
  std::filesystem::permissions(Root, std::filesystem::perms::all);
  std::vector<std::string> Seen;
  std::mutex SeenLock;
  DeviceConfig C;
  C.StoreDir = Root;
  C.WarningSink = [&](std::string_view W) {
    std::lock_guard<std::mutex> L(SeenLock);
    Seen.emplace_back(W);
  };
  Result<Device> D = Device::create(C);
  ASSERT_TRUE(D.ok()) << D.status().str();
  EXPECT_FALSE(D->hasStore());
  testing::internal::CaptureStderr();
  ASSERT_TRUE(D->loadKernel(VaddText).ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_GE(D->warningCount(), 1u);
  ASSERT_FALSE(Seen.empty());
  EXPECT_NE(Seen.front().find("others can write"), std::string::npos)
      << Seen.front();
  EXPECT_EQ(D->recentWarnings().back(), Seen.back());
  std::filesystem::remove_all(Root);
}

TEST(DeviceTest, RefusesThreadCountsAndTargetsThatCannotWork) {
  DeviceConfig C;
  C.Store = StoreMode::Off;
  C.Threads = MaxThreads;
  Result<Device> Max = Device::create(C);
  ASSERT_TRUE(Max.ok()) << Max.status().str();
  EXPECT_LE(Max->concurrency(), MaxThreads);

  C.Threads = MaxThreads + 1;
  Result<Device> D = Device::create(C);
  ASSERT_FALSE(D.ok());
  EXPECT_EQ(D.status().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(D.status().message(),
            "Threads 4097 is above the limit of 4096 (0: all cores)");
  C.Threads = 0;
  C.BatchThreads = 100000;
  D = Device::create(C);
  ASSERT_FALSE(D.ok());
  EXPECT_EQ(D.status().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(D.status().message(),
            "BatchThreads 100000 is above the limit of 4096 (0: all cores)");

  // Target options the device refuses are the caller's mistake: not Internal.
  C.BatchThreads = 0;
  for (auto [CPU, Features] :
       {std::pair<const char *, const char *>{"no-such-cpu", ""},
        {"i386", ""},
        {"", "+no-such-feature"},
        {"", "-64bit"},
        {"", "avx2"}}) {
    C.CPU = CPU;
    C.Features = Features;
    D = Device::create(C);
    ASSERT_FALSE(D.ok()) << CPU << Features;
    EXPECT_EQ(D.status().code(), ErrorCode::InvalidArgument)
        << D.status().str();
  }
}

} // namespace
