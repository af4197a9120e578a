//===- StressTest.cpp - Many threads on one device, a vandalised store ----===//
//
// A concurrency stress test, bounded in time (KILN_STRESS_SECONDS,
// default 25): threads sharing one device launch on several streams with
// events between them, compile batches, load and unload kernels and cancel
// or time out kernels that never end, while a child process (Vandal.h)
// prunes, clears and damages the device's store. Every result is checked
// exactly; a damaged entry may only cost a recompilation (and a warning).
// The binary has its own main: `--vandal DIR SECONDS` makes it the child.
//
//===----------------------------------------------------------------------===//

#include "Support/Kernels.h"
#include "Support/TempDir.h"
#include "Vandal.h"

#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

using namespace kiln::api;
using Clock = std::chrono::steady_clock;

namespace {

/// y[i] = x[i] * (K + 2) + K: one of a family of distinct kernels, so
/// that the store holds many entries for the vandal to damage. \p Name
/// prefixes the kernel's name: threads that unload kernels while others
/// use them must not share texts, since loading a text already loaded
/// gives the kernel already there, whatever id was asked for.
std::string scaleKernel(unsigned K, const char *Name = "scale_") {
  return "kernel @" + std::string(Name) + std::to_string(K) +
         " cube_dim(64) (%x: buffer<f32, read>, %y: buffer<f32, write>, "
         "%n: u32) {\n"
         "  %i = absolute_pos.x : u32\n"
         "  %in = lt %i, %n : bool\n"
         "  if %in {\n"
         "    %v = load %x[%i] : f32\n"
         "    %m = mul %v, " +
         std::to_string(K + 2) +
         ".0:f32 : f32\n"
         "    %r = add %m, " +
         std::to_string(K) +
         ".0:f32 : f32\n"
         "    store %y[%i], %r\n"
         "  }\n"
         "}\n";
}
constexpr unsigned ScaleKernels = 12;

/// The sum of each cube's 64 elements, by a tree in shared memory: a
/// loop around a barrier.
const char *const CubeSumText = R"(
kernel @cubesum cube_dim(64) (%x: buffer<u32, read>, %y: buffer<u32, write>) {
  %u = unit_pos.x : u32
  %i = absolute_pos.x : u32
  %c = cube_pos.x : u32
  %sh = shared u32[64]
  %v = load %x[%i] : u32
  store %sh[%u], %v
  sync_cube
  %s = var u32
  set %s, 32:u32
  loop {
    %cur = get %s : u32
    %done = eq %cur, 0:u32 : bool
    if %done {
      break
    }
    %act = lt %u, %cur : bool
    if %act {
      %j = add %u, %cur : u32
      %a = load %sh[%u] : u32
      %b = load %sh[%j] : u32
      %t = add %a, %b : u32
      store %sh[%u], %t
    }
    sync_cube
    %h = shr %cur, 1:u32 : u32
    set %s, %h
  }
  %z = eq %u, 0:u32 : bool
  if %z {
    %r = load %sh[0] : u32
    store %y[%c], %r
  }
}
)";

/// Never ends.
const char *const SpinText = R"(
kernel @spin cube_dim(64) (%out: buffer<u32, read_write>) {
  %i = absolute_pos.x : u32
  loop {
    %v = load %out[%i] : u32
    %w = add %v, 1:u32 : u32
    store %out[%i], %w
  }
}
)";

ElementType f32() { return ElementType::scalar(ScalarType::F32); }
ElementType u32() { return ElementType::scalar(ScalarType::U32); }

double stressSeconds() {
  if (const char *S = std::getenv("KILN_STRESS_SECONDS"))
    if (double V = std::atof(S); V > 0)
      return V;
  return 25;
}

/// What the threads found wrong, and how much they checked.
struct Findings {
  std::mutex M;
  std::vector<std::string> Errors;
  std::atomic<uint64_t> Checked{0};
  std::atomic<uint64_t> Cancelled{0};
  std::atomic<uint64_t> Batches{0};
  std::atomic<uint64_t> Loads{0};

  void fail(const std::string &Who, const std::string &What) {
    std::lock_guard<std::mutex> L(M);
    if (Errors.size() < 50)
      Errors.push_back(Who + ": " + What);
  }
  /// Whether \p S is ok; records it otherwise.
  bool ok(const std::string &Who, const Status &S) {
    if (S.ok())
      return true;
    fail(Who, S.str());
    return false;
  }
};

std::vector<float> iotaFloats(uint32_t N, uint32_t Seed) {
  std::vector<float> V(N);
  for (uint32_t I = 0; I < N; ++I)
    V[I] = float((I * 7 + Seed) % 1000);
  return V;
}

/// Launches y = scale_K(x) on \p S and checks it; false on a failure.
bool runScale(Findings &F, const std::string &Who, Stream &S,
              const Kernel &Kern, unsigned K, uint32_t N, uint32_t Seed) {
  std::vector<float> X = iotaFloats(N, Seed), Y(N, -1.0f);
  Buffer XB = *Buffer::wrap(X.data(), N * 4);
  Buffer YB = *Buffer::wrap(Y.data(), N * 4);
  if (!F.ok(Who, S.launch(Kern, {(N + 63) / 64, 1, 1},
                          {Arg::buffer(XB.view(f32()), Access::Read),
                           Arg::buffer(YB.view(f32()), Access::Write),
                           Arg::u32(N)})) ||
      !F.ok(Who, S.synchronize()))
    return false;
  for (uint32_t I = 0; I < N; ++I)
    if (Y[I] != X[I] * float(K + 2) + float(K)) {
      F.fail(Who, "scale_" + std::to_string(K) + ": y[" + std::to_string(I) +
                      "] = " + std::to_string(Y[I]));
      return false;
    }
  F.Checked.fetch_add(1, std::memory_order_relaxed);
  return true;
}

/// Two streams: vadd on one, and after an event the other copies its
/// result out and sums it per cube; everything checked.
void launcherThread(Findings &F, Device &D, const Kernel &Vadd,
                    const Kernel &CubeSum, unsigned Id, Clock::time_point End) {
  std::string Who = "launcher " + std::to_string(Id);
  Stream S1 = *D.createStream(), S2 = *D.createStream();
  std::mt19937 Rng(Id);
  while (Clock::now() < End) {
    uint32_t N = 1 + Rng() % 40000;
    uint32_t Cubes = (N + 63) / 64;
    Buffer A = *Buffer::allocate(N * 4), B = *Buffer::allocate(N * 4),
           C = *Buffer::allocate(N * 4);
    auto *AP = static_cast<float *>(A.data());
    auto *BP = static_cast<float *>(B.data());
    for (uint32_t I = 0; I < N; ++I) {
      AP[I] = float(I % 4096);
      BP[I] = float((I * 3 + Id) % 512);
    }
    std::vector<float> Out(N, -1.0f);
    // cubesum over 64-element cubes of u32 data.
    Buffer Ints = *Buffer::allocate(uint64_t(Cubes) * 64 * 4);
    Buffer Sums = *Buffer::allocate(uint64_t(Cubes) * 4);
    auto *IP = static_cast<uint32_t *>(Ints.data());
    for (uint32_t I = 0; I < Cubes * 64; ++I)
      IP[I] = (I * 2654435761u) >> 20;
    std::vector<uint32_t> SumsOut(Cubes, 0);

    bool Ok = F.ok(Who, S1.launch(Vadd, {Cubes, 1, 1},
                                  {Arg::buffer(A.view(f32())),
                                   Arg::buffer(B.view(f32())),
                                   Arg::buffer(C.view(f32())), Arg::u32(N)}));
    Result<Event> E = S1.record();
    Ok = Ok && F.ok(Who, E.status()) && F.ok(Who, S2.wait(*E)) &&
         F.ok(Who, S2.copyFromBuffer(Out.data(), C, 0, N * 4)) &&
         F.ok(Who, S2.launch(CubeSum, {Cubes, 1, 1},
                             {Arg::buffer(Ints.view(u32())),
                              Arg::buffer(Sums.view(u32()))})) &&
         F.ok(Who, S2.copyFromBuffer(SumsOut.data(), Sums, 0, Cubes * 4)) &&
         F.ok(Who, S2.synchronize()) && F.ok(Who, S1.synchronize());
    if (!Ok)
      return;
    for (uint32_t I = 0; I < N; ++I)
      if (Out[I] != AP[I] + BP[I]) {
        F.fail(Who, "vadd: c[" + std::to_string(I) + "] = " +
                        std::to_string(Out[I]));
        return;
      }
    for (uint32_t Cube = 0; Cube < Cubes; ++Cube) {
      uint32_t Want = 0;
      for (uint32_t U = 0; U < 64; ++U)
        Want += IP[Cube * 64 + U];
      if (SumsOut[Cube] != Want) {
        F.fail(Who, "cubesum: cube " + std::to_string(Cube) + " = " +
                        std::to_string(SumsOut[Cube]) + ", expected " +
                        std::to_string(Want));
        return;
      }
    }
    F.Checked.fetch_add(2, std::memory_order_relaxed);
  }
}

/// Batches of scale kernels compiled together (or served by the store,
/// damaged or not), each launched and checked, then unloaded so that the
/// next batch goes to the store again.
void batchThread(Findings &F, Device &D, Clock::time_point End) {
  const std::string Who = "batch";
  Stream S = *D.createStream();
  std::mt19937 Rng(99);
  while (Clock::now() < End) {
    std::vector<unsigned> Ks;
    std::string Text;
    for (unsigned I = 0, First = Rng() % ScaleKernels; I < 4; ++I) {
      Ks.push_back((First + I * 5) % ScaleKernels);
      Text += scaleKernel(Ks.back());
    }
    std::vector<Result<Kernel>> Loaded = D.loadKernels(Text);
    if (Loaded.size() != Ks.size()) {
      F.fail(Who, "loadKernels gave " + std::to_string(Loaded.size()) +
                      " results for 4 kernels");
      return;
    }
    F.Batches.fetch_add(1, std::memory_order_relaxed);
    for (size_t I = 0; I < Ks.size(); ++I) {
      if (!F.ok(Who, Loaded[I].status()))
        return;
      if (!runScale(F, Who, S, *Loaded[I], Ks[I], 1 + Rng() % 5000, I))
        return;
    }
    for (Result<Kernel> &K : Loaded)
      if (!F.ok(Who, D.unloadKernel(*K)))
        return;
  }
}

/// One kernel at a time: loaded, launched (with and without a stream),
/// checked, unloaded.
void loadUnloadThread(Findings &F, Device &D, Clock::time_point End) {
  const std::string Who = "load/unload";
  Stream S = *D.createStream();
  std::mt19937 Rng(7);
  while (Clock::now() < End) {
    unsigned K = Rng() % ScaleKernels;
    // A text and an id of its own: the batch thread loads and unloads the
    // scale_K kernels at the same time, and a text loaded twice is one
    // kernel (the batch thread's, which it may unload before findKernel
    // below: seen under the sanitizers' slower timing).
    KernelOptions Opts;
    Opts.Id = "stress.single_scale_" + std::to_string(K);
    Result<Kernel> Kern =
        D.loadKernel(scaleKernel(K, "single_scale_"), {}, Opts);
    if (!F.ok(Who, Kern.status()))
      return;
    F.Loads.fetch_add(1, std::memory_order_relaxed);
    if (!runScale(F, Who, S, *Kern, K, 1 + Rng() % 3000, K))
      return;
    // The same kernel by id, launched without a stream.
    Result<Kernel> Again = D.findKernel(Kern->id());
    if (!F.ok(Who, Again.status()))
      return;
    uint32_t N = 100;
    std::vector<float> X = iotaFloats(N, 3), Y(N, 0.0f);
    Buffer XB = *Buffer::wrap(X.data(), N * 4), YB = *Buffer::wrap(Y.data(), N * 4);
    if (!F.ok(Who, D.launch(*Again, {2, 1, 1},
                            {Arg::buffer(XB.view(f32())),
                             Arg::buffer(YB.view(f32())), Arg::u32(N)})))
      return;
    for (uint32_t I = 0; I < N; ++I)
      if (Y[I] != X[I] * float(K + 2) + float(K)) {
        F.fail(Who, "Device::launch of scale_" + std::to_string(K) +
                        " gave a wrong y[" + std::to_string(I) + "]");
        return;
      }
    F.Checked.fetch_add(1, std::memory_order_relaxed);
    if (!F.ok(Who, D.unloadKernel(*Kern)))
      return;
  }
}

/// Kernels that never end, stopped by a timeout or by cancel(); the stream
/// then runs checked work again.
void cancelThread(Findings &F, Device &D, const Kernel &Vadd,
                  Clock::time_point End) {
  const std::string Who = "cancel";
  Result<Kernel> Spin = D.loadKernel(SpinText);
  if (!F.ok(Who, Spin.status()))
    return;
  Stream S = *D.createStream();
  Buffer Counters = *Buffer::allocate(4 * 64 * 4);
  for (unsigned Round = 0; Clock::now() < End; ++Round) {
    bool ByTimeout = Round % 2 == 0;
    if (!F.ok(Who, S.setLaunchTimeout(ByTimeout ? 15 : 0)) ||
        !F.ok(Who, S.launch(*Spin, {1 + Round % 4, 1, 1},
                            {Arg::buffer(Counters.view(u32()))})))
      return;
    if (!ByTimeout) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (!F.ok(Who, S.cancel()))
        return;
    }
    Status Sync = S.synchronize();
    if (Sync.code() != ErrorCode::Cancelled) {
      F.fail(Who, "a kernel that never ends gave " + Sync.str());
      return;
    }
    (void)S.resetError();
    // The stream works again.
    uint32_t N = 1000;
    std::vector<float> A(N, 1.5f), B(N, 2.0f), C(N, 0.0f);
    Buffer AB = *Buffer::wrap(A.data(), N * 4), BB = *Buffer::wrap(B.data(), N * 4),
           CB = *Buffer::wrap(C.data(), N * 4);
    if (!F.ok(Who, S.setLaunchTimeout(0)) ||
        !F.ok(Who, S.launch(Vadd, {(N + 63) / 64, 1, 1},
                            {Arg::buffer(AB.view(f32())),
                             Arg::buffer(BB.view(f32())),
                             Arg::buffer(CB.view(f32())), Arg::u32(N)})) ||
        !F.ok(Who, S.synchronize()))
      return;
    for (float V : C)
      if (V != 3.5f) {
        F.fail(Who, "vadd after a cancel gave " + std::to_string(V));
        return;
      }
    F.Cancelled.fetch_add(1, std::memory_order_relaxed);
    F.Checked.fetch_add(1, std::memory_order_relaxed);
  }
}

/// Starts this binary as the vandal of \p Root; its pid, or -1.
pid_t startVandal(const std::string &Root, double Seconds) {
  std::string Secs = std::to_string(Seconds);
  std::string Flag = kiln::stress::VandalFlag;
  std::string Self = "/proc/self/exe";
  std::vector<char *> Argv = {Self.data(), Flag.data(),
                              const_cast<char *>(Root.c_str()), Secs.data(),
                              nullptr};
  pid_t Pid = -1;
  if (posix_spawn(&Pid, Self.c_str(), nullptr, nullptr, Argv.data(), environ))
    return -1;
  return Pid;
}

TEST(Stress, ThreadsStreamsBatchesAndCancelsBesideAVandalizedStore) {
  double Seconds = stressSeconds();
  kiln::test::TempDir Store;
  std::atomic<uint64_t> Warnings{0};
  DeviceConfig C;
  C.StoreDir = Store.path();
  C.Store = StoreMode::ReadWrite;
  C.RemoteStore = "off";
  C.WarningSink = [&](std::string_view) {
    Warnings.fetch_add(1, std::memory_order_relaxed);
  };
  Result<Device> DR = Device::create(C);
  ASSERT_TRUE(DR.ok()) << DR.status().str();
  Device &D = *DR;
  ASSERT_TRUE(D.hasStore());
  Result<Kernel> Vadd = D.loadKernel(kiln::test::VaddText);
  Result<Kernel> CubeSum = D.loadKernel(CubeSumText);
  ASSERT_TRUE(Vadd.ok()) << Vadd.status().str();
  ASSERT_TRUE(CubeSum.ok()) << CubeSum.status().str();

  pid_t Vandal = startVandal(Store.path(), Seconds);
  ASSERT_GT(Vandal, 0) << "cannot start the vandal: " << std::strerror(errno);
  Findings F;
  auto End = Clock::now() + std::chrono::microseconds(
                                static_cast<int64_t>(Seconds * 1e6));
  std::vector<std::thread> Threads;
  for (unsigned I = 0; I < 3; ++I)
    Threads.emplace_back(launcherThread, std::ref(F), std::ref(D),
                         std::cref(*Vadd), std::cref(*CubeSum), I, End);
  Threads.emplace_back(batchThread, std::ref(F), std::ref(D), End);
  Threads.emplace_back(loadUnloadThread, std::ref(F), std::ref(D), End);
  Threads.emplace_back(cancelThread, std::ref(F), std::ref(D),
                       std::cref(*Vadd), End);
  for (std::thread &T : Threads)
    T.join();
  int VandalStatus = 0;
  ASSERT_EQ(waitpid(Vandal, &VandalStatus, 0), Vandal);
  EXPECT_TRUE(WIFEXITED(VandalStatus) && WEXITSTATUS(VandalStatus) == 0)
      << "the vandal failed: status " << VandalStatus;

  for (const std::string &E : F.Errors)
    ADD_FAILURE() << E;
  std::printf("stress: %.0f s: %llu results checked, %llu batches, %llu "
              "loads, %llu never-ending kernels stopped, %llu store "
              "warnings\n",
              Seconds, (unsigned long long)F.Checked.load(),
              (unsigned long long)F.Batches.load(),
              (unsigned long long)F.Loads.load(),
              (unsigned long long)F.Cancelled.load(),
              (unsigned long long)Warnings.load());
  // Every thread did its part (not a timing: each needs one round).
  EXPECT_GT(F.Batches.load(), 0u);
  EXPECT_GT(F.Loads.load(), 0u);
  EXPECT_GT(F.Cancelled.load(), 0u);
  EXPECT_GT(F.Checked.load(), 10u);
  EXPECT_TRUE(D.synchronize().ok());
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 4 && std::strcmp(argv[1], kiln::stress::VandalFlag) == 0)
    return kiln::stress::runVandal(argv[2], std::atof(argv[3]));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
