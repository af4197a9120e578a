//===- StopTest.cpp - Stopping launches: cancel, deadlines, the watchdog --===//
//
// Kernels that never end (a per-unit loop, a cube-level loop around
// barriers, a `for` over all of u64, an interchanged `for`) are stopped by a
// LaunchStop, set by hand or by a Watchdog, and the device runs other
// launches correctly afterwards. docs/Lowering.md, "Cancellation".
//
//===----------------------------------------------------------------------===//

#include "Support/Kernels.h"

#include "kiln/Runtime/Device.h"

#include <gtest/gtest.h>

#include <chrono>
#include <system_error>
#include <thread>

using namespace kiln;
using namespace std::chrono_literals;

namespace {

using kiln::test::SpinText;

/// A cube-level loop around two barriers: the units of a cube pass values
/// round through shared memory forever.
const char *const SpinSyncText = R"(
kernel @spin_sync cube_dim(64) (%out: buffer<u32, read_write>) {
  %u = unit_pos.x : u32
  %i = absolute_pos.x : u32
  %sh = shared u32[64]
  loop {
    %old = load %out[%i] : u32
    %new = add %old, 1:u32 : u32
    store %sh[%u], %new
    sync_cube
    %n = add %u, 1:u32 : u32
    %j = band %n, 63:u32 : u32
    %v = load %sh[%j] : u32
    store %out[%i], %v
    sync_cube
  }
}
)";

/// A `for` over all of u64 (it would end in centuries).
const char *const LongForText = R"(
kernel @long_for cube_dim(64) (%out: buffer<u64, read_write>) {
  %i = absolute_pos.x : u32
  for %k = 0:u64 to 18446744073709551615:u64 {
    store %out[%i], %k
  }
}
)";

/// \p Count zeroed elements of \p T, 64-byte aligned as the kernels'
/// default variant assumes.
HostBuffer zeroed(Type T, uint64_t Count) {
  auto B = HostBuffer::create(T, Count);
  if (!B) {
    ADD_FAILURE() << llvm::toString(B.takeError());
    return HostBuffer();
  }
  return std::move(*B);
}

const Type F32 = Type::scalar(ScalarKind::F32);
const Type U32 = Type::scalar(ScalarKind::U32);

std::error_code codeOf(llvm::Error E) {
  std::error_code EC;
  llvm::handleAllErrors(std::move(E), [&](const llvm::ErrorInfoBase &I) {
    EC = I.convertToErrorCode();
  });
  return EC;
}

struct StopTest : ::testing::Test {
  std::unique_ptr<RuntimeDevice> Dev;
  std::vector<Module> Modules;

  void SetUp() override {
    DeviceOptions Opts;
    Opts.Threads = 2;
    Opts.StoreMode = DeviceStoreMode::Off;
    auto D = RuntimeDevice::create(Opts);
    ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
    Dev = std::move(*D);
  }
  LoadedKernel load(const char *Text) {
    Modules.push_back(test::parseAndVerify(Text));
    auto K = Dev->getKernel(Modules.back().Kernels.front());
    EXPECT_TRUE(!!K) << llvm::toString(K.takeError());
    return K ? *K : LoadedKernel();
  }
  /// vadd on \p N elements, checked.
  void expectVaddWorks(uint32_t N) {
    auto K = load(test::VaddText);
    HostBuffer A = zeroed(F32, N), B = zeroed(F32, N), C = zeroed(F32, N);
    for (uint32_t I = 0; I < N; ++I) {
      A.as<float>()[I] = float(I);
      B.as<float>()[I] = 2.0f * float(I);
      C.as<float>()[I] = -1.0f;
    }
    ASSERT_FALSE(Dev->launch(K, {(N + 63) / 64, 1, 1},
                             {ArgBinding::buffer(A), ArgBinding::buffer(B),
                              ArgBinding::buffer(C), ArgBinding::u32(N)}));
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(C.as<float>()[I], 3.0f * float(I)) << I;
  }
};

TEST_F(StopTest, ALoopThatNeverEndsIsCancelledFromAnotherThread) {
  LoadedKernel K = load(SpinText);
  const uint32_t Cubes = 8;
  HostBuffer Out = zeroed(U32, Cubes * 64);
  LaunchStop Stop;
  llvm::Error Result = llvm::Error::success();
  std::thread Launcher([&] {
    llvm::consumeError(std::move(Result));
    Result = Dev->launch(K, {Cubes, 1, 1}, {ArgBinding::buffer(Out)}, &Stop);
  });
  std::this_thread::sleep_for(50ms);
  Stop.cancel();
  Launcher.join();
  EXPECT_EQ(codeOf(std::move(Result)),
            std::make_error_code(std::errc::operation_canceled));
  EXPECT_EQ(Stop.reason(), LaunchStop::Reason::Cancelled);
  // It did run until it was stopped.
  EXPECT_NE(Out.as<uint32_t>()[0], 0u);
  expectVaddWorks(10000);
}

TEST_F(StopTest, ADeadlineStopsEveryKindOfLoop) {
  for (const char *Text : {SpinText, SpinSyncText, LongForText}) {
    LoadedKernel K = load(Text);
    ASSERT_TRUE(K.valid());
    SCOPED_TRACE(K.metadata().KernelName);
    const CubeMetadata &M = K.metadata();
    Type T = M.Params[0].Ty;
    // One cube (run on this thread) and many (on every thread).
    for (uint32_t Cubes : {1u, 64u}) {
      HostBuffer Out = zeroed(T, Cubes * 64);
      LaunchStop Stop;
      llvm::Error E = llvm::Error::success();
      {
        Watchdog::Scope Deadline(Dev->executor().watchdog(), Stop, 30ms);
        E = Dev->launch(K, {Cubes, 1, 1}, {ArgBinding::buffer(Out)}, &Stop);
      }
      std::string Message = E ? llvm::toString(std::move(E)) : "";
      EXPECT_NE(Message.find("launch of kernel '" + M.KernelName +
                             "': stopped at its deadline"),
                std::string::npos)
          << Message;
      EXPECT_EQ(Stop.reason(), LaunchStop::Reason::TimedOut);
    }
  }
  expectVaddWorks(4096);
}

TEST_F(StopTest, AStopSetBeforeTheLaunchRunsNothing) {
  LoadedKernel K = load(test::VaddText);
  const uint32_t N = 256;
  HostBuffer A = zeroed(F32, N), B = zeroed(F32, N), C = zeroed(F32, N);
  for (uint32_t I = 0; I < N; ++I) {
    A.as<float>()[I] = 1.0f;
    B.as<float>()[I] = 2.0f;
    C.as<float>()[I] = -1.0f;
  }
  auto Args = [&] {
    return std::vector<ArgBinding>{ArgBinding::buffer(A), ArgBinding::buffer(B),
                                   ArgBinding::buffer(C), ArgBinding::u32(N)};
  };
  LaunchStop Stop;
  Stop.cancel();
  EXPECT_EQ(codeOf(Dev->launch(K, {N / 64, 1, 1}, Args(), &Stop)),
            std::make_error_code(std::errc::operation_canceled));
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(C.as<float>()[I], -1.0f);
  // Reset, the same stop lets the launch run.
  Stop.reset();
  EXPECT_FALSE(Dev->launch(K, {N / 64, 1, 1}, Args(), &Stop));
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(C.as<float>()[I], 3.0f);
}

TEST_F(StopTest, AnUnsetStopChangesNothing) {
  // A launch that ends by itself is not reported as stopped, and a
  // deadline that has not passed never fires after it was disarmed.
  auto V = load(test::VaddText);
  const uint32_t N = 640;
  HostBuffer A = zeroed(F32, N), B = zeroed(F32, N), C = zeroed(F32, N);
  for (int R = 0; R < 50; ++R) {
    LaunchStop Stop;
    {
      Watchdog::Scope Deadline(Dev->executor().watchdog(), Stop, 10s);
      ASSERT_FALSE(Dev->launch(V, {N / 64, 1, 1},
                               {ArgBinding::buffer(A), ArgBinding::buffer(B),
                                ArgBinding::buffer(C), ArgBinding::u32(N)},
                               &Stop));
    }
    EXPECT_FALSE(Stop.stopped());
  }
}

TEST(Watchdog, FiresAtTheDeadlineAndNotWhenDisarmed) {
  Watchdog W;
  LaunchStop Soon, Late, Disarmed;
  auto Now = Watchdog::Clock::now();
  uint64_t T1 = W.arm(Late, Now + 1h);
  uint64_t T2 = W.arm(Soon, Now + 20ms);
  uint64_t T3 = W.arm(Disarmed, Now + 40ms);
  W.disarm(T3);
  auto Until = Watchdog::Clock::now() + 30s;
  while (!Soon.stopped() && Watchdog::Clock::now() < Until)
    std::this_thread::sleep_for(1ms);
  EXPECT_EQ(Soon.reason(), LaunchStop::Reason::TimedOut);
  std::this_thread::sleep_for(60ms);
  EXPECT_FALSE(Disarmed.stopped());
  EXPECT_FALSE(Late.stopped());
  W.disarm(T2); // fired already: nothing to do
  W.disarm(T1);
}

TEST(Watchdog, TheFirstReasonStays) {
  LaunchStop S;
  S.cancel();
  S.timeOut();
  EXPECT_EQ(S.reason(), LaunchStop::Reason::Cancelled);
  EXPECT_FALSE(S.clear(LaunchStop::Reason::TimedOut));
  EXPECT_TRUE(S.clear(LaunchStop::Reason::Cancelled));
  EXPECT_FALSE(S.stopped());
}

} // namespace
