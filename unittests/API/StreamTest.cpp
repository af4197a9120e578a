//===- StreamTest.cpp - Streams, events, failures, device teardown --------===//

#include "Kernels.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;

namespace {

Status affine(Stream &S, const Kernel &K, const Buffer &B, uint32_t N, float A,
              float C) {
  return S.launch(K, {(N + 63) / 64, 1, 1},
                  {Arg::buffer(B.view(f32(), 0, N)), Arg::f32(A), Arg::f32(C),
                   Arg::u32(N)});
}

TEST(StreamTest, OrderedChainWithCopies) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(AffineText, "affine");
  Stream S = *D.createStream();
  const uint32_t N = 5000;
  std::vector<float> In(N), Out(N, -1.0f);
  for (uint32_t I = 0; I < N; ++I)
    In[I] = float(I % 13);
  Buffer B = *Buffer::allocate(N * 4);
  ASSERT_TRUE(S.copyToBuffer(B, 0, In.data(), N * 4).ok());
  for (int R = 0; R < 20; ++R)
    ASSERT_TRUE(affine(S, K, B, N, 1.0f, float(R)).ok());
  ASSERT_TRUE(S.copyFromBuffer(Out.data(), B, 0, N * 4).ok());
  ASSERT_TRUE(S.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(Out[I], float(I % 13) + 190.0f) << I;
  // Out-of-range copies are refused at once, and fail nothing.
  EXPECT_EQ(S.copyToBuffer(B, N * 4 - 2, In.data(), 4).code(),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(S.copyFromBuffer(nullptr, B, 0, 4).code(),
            ErrorCode::InvalidArgument);
  EXPECT_TRUE(S.status().ok());
}

TEST(StreamTest, EventOrdersTwoStreams) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(AffineText, "affine");
  Stream A = *D.createStream(), B = *D.createStream();
  const uint32_t N = 20000;
  Buffer X = *Buffer::allocate(N * 4), Y = *Buffer::allocate(N * 4);
  for (int R = 0; R < 30; ++R)
    ASSERT_TRUE(affine(A, K, X, N, 1.0f, 1.0f).ok()); // x = 30
  Event Done = *A.record();
  ASSERT_TRUE(B.wait(Done).ok());
  ASSERT_TRUE(B.copyBuffer(Y, 0, X, 0, N * 4).ok());
  ASSERT_TRUE(affine(B, K, Y, N, 2.0f, 0.0f).ok()); // y = 60
  ASSERT_TRUE(B.synchronize().ok());
  EXPECT_TRUE(Done.isComplete());
  EXPECT_TRUE(Done.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(static_cast<float *>(Y.data())[I], 60.0f) << I;
}

TEST(StreamTest, FailureIsStickySkipsLaterWorkAndResets) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(AffineText, "affine");
  Stream S = *D.createStream(), Other = *D.createStream();
  const uint32_t N = 256;
  Buffer B = *Buffer::allocate(N * 4);
  ASSERT_TRUE(affine(S, K, B, N, 1.0f, 1.0f).ok());
  // Wrong argument count: refused, and the stream is failed.
  Status Bad = S.launch(K, {4, 1, 1}, {Arg::f32(1.0f)});
  EXPECT_EQ(Bad.code(), ErrorCode::InvalidLaunch);
  EXPECT_EQ(S.status().code(), ErrorCode::InvalidLaunch);
  Status Later = affine(S, K, B, N, 1.0f, 100.0f);
  EXPECT_EQ(Later.code(), ErrorCode::InvalidLaunch);
  EXPECT_EQ(Later.message(), Bad.message());
  // An event recorded now carries the failure; a stream waiting on it fails
  // with Cancelled and says why.
  Result<Event> E = S.record();
  ASSERT_TRUE(E.ok());
  EXPECT_TRUE(E->isComplete());
  EXPECT_EQ(E->synchronize().code(), ErrorCode::InvalidLaunch);
  ASSERT_TRUE(Other.wait(*E).ok());
  Status O = Other.synchronize();
  EXPECT_EQ(O.code(), ErrorCode::Cancelled);
  EXPECT_NE(O.message().find("argument"), std::string::npos) << O.message();
  EXPECT_EQ(S.synchronize().code(), ErrorCode::InvalidLaunch);
  EXPECT_EQ(D.synchronize().code(), ErrorCode::InvalidLaunch);
  // The work queued before the failure ran; the work after it did not.
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(static_cast<float *>(B.data())[I], 1.0f) << I;
  // The device stays usable: a new stream runs, and a reset stream too.
  Stream Fresh = *D.createStream();
  ASSERT_TRUE(affine(Fresh, K, B, N, 1.0f, 1.0f).ok());
  ASSERT_TRUE(Fresh.synchronize().ok());
  EXPECT_EQ(S.resetError().code(), ErrorCode::InvalidLaunch);
  EXPECT_TRUE(S.status().ok());
  ASSERT_TRUE(affine(S, K, B, N, 1.0f, 1.0f).ok());
  ASSERT_TRUE(S.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(static_cast<float *>(B.data())[I], 3.0f) << I;
}

TEST(StreamTest, NullHandlesAndForeignKernels) {
  Stream S;
  EXPECT_EQ(S.launch(Kernel(), {1, 1, 1}, {}).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(S.synchronize().code(), ErrorCode::InvalidArgument);
  EXPECT_FALSE(S.record().ok());
  Event E;
  EXPECT_EQ(E.synchronize().code(), ErrorCode::InvalidArgument);
  EXPECT_FALSE(E.isComplete());
  Device D1 = memoryDevice(), D2 = memoryDevice();
  Kernel K1 = *D1.loadKernel(AffineText, "affine");
  Stream S2 = *D2.createStream();
  Buffer B = *Buffer::allocate(64 * 4);
  EXPECT_EQ(S2.wait(E).code(), ErrorCode::InvalidArgument);
  // A foreign kernel fails the stream like any other bad launch.
  EXPECT_EQ(affine(S2, K1, B, 64, 1, 1).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(S2.status().code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(D2.launch(K1, {1, 1, 1}, {}).code(), ErrorCode::InvalidArgument);
}

TEST(StreamTest, DestroyingTheDeviceDrainsQueuedWork) {
  std::vector<float> Host(4096, 0.0f);
  Stream S;
  Kernel K;
  {
    Device D = memoryDevice();
    K = *D.loadKernel(AffineText, "affine");
    S = *D.createStream();
    Buffer B = *Buffer::wrap(Host.data(), Host.size() * 4);
    for (int R = 0; R < 200; ++R)
      ASSERT_TRUE(affine(S, K, B, 4096, 1.0f, 1.0f).ok());
    // B's handle goes first: the queued launches keep the buffer alive.
  }
  for (float V : Host)
    ASSERT_EQ(V, 200.0f);
  // Handles that outlive their device fail cleanly.
  Buffer B = *Buffer::wrap(Host.data(), Host.size() * 4);
  EXPECT_EQ(affine(S, K, B, 16, 1, 1).code(), ErrorCode::Cancelled);
  EXPECT_EQ(S.record().status().code(), ErrorCode::Cancelled);
  EXPECT_TRUE(S.synchronize().ok());
  // A variant the kernel never linked cannot be compiled any more.
  Stream Dead = S;
  EXPECT_EQ(Dead.launch(K, {1, 1, 1},
                        {Arg::buffer(B.view(f32(), 4, 16)), Arg::f32(1),
                         Arg::f32(1), Arg::u32(16)})
                .code(),
            ErrorCode::Cancelled);
}

// Several threads, each with its own stream, passing work to each other
// through events; every result is checked. Bounded by its launch count.
TEST(StreamTest, StressStreamsThreadsAndEvents) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(AffineText, "affine");
  constexpr int Threads = 4, Rounds = 60;
  constexpr uint32_t N = 3000;
  std::vector<Buffer> Bufs;
  for (int T = 0; T < Threads; ++T)
    Bufs.push_back(*Buffer::allocate(N * 4));
  // Round r: thread t adds 1 to its own buffer, then (after the previous
  // thread's event of this round) adds that buffer's round count... kept
  // simple and checkable: each thread's buffer gets +1 per round, and its
  // stream waits for its neighbour's event of the same round first.
  std::vector<std::vector<Event>> Events(Threads, std::vector<Event>(Rounds));
  std::atomic<int> Published[Threads] = {};
  std::vector<int> Errors(Threads, 0);
  std::vector<std::thread> Ts;
  for (int T = 0; T < Threads; ++T)
    Ts.emplace_back([&, T] {
      Stream S = *D.createStream();
      std::mt19937 Rng(T);
      for (int R = 0; R < Rounds; ++R) {
        int Prev = (T + Threads - 1) % Threads;
        // Wait (on the host) until the neighbour has recorded round R - 1.
        while (Published[Prev].load() < R)
          std::this_thread::yield();
        if (R > 0 && !S.wait(Events[Prev][R - 1]).ok())
          ++Errors[T];
        uint32_t Cubes = 1 + Rng() % ((N + 63) / 64);
        uint32_t Count = std::min<uint32_t>(N, Cubes * 64);
        // Add 1 to every element: the launch covers a random prefix, a
        // second launch the rest.
        if (!affine(S, K, Bufs[T], Count, 1.0f, 1.0f).ok())
          ++Errors[T];
        if (Count < N &&
            !S.launch(K, {(N - Count + 63) / 64, 1, 1},
                      {Arg::buffer(Bufs[T].view(f32(), Count * 4, N - Count)),
                       Arg::f32(1.0f), Arg::f32(1.0f), Arg::u32(N - Count)})
                 .ok())
          ++Errors[T];
        Result<Event> E = S.record();
        if (!E.ok())
          ++Errors[T];
        else
          Events[T][R] = *E;
        Published[T].store(R + 1);
      }
      if (!S.synchronize().ok())
        ++Errors[T];
    });
  for (auto &T : Ts)
    T.join();
  ASSERT_TRUE(D.synchronize().ok());
  for (int T = 0; T < Threads; ++T) {
    EXPECT_EQ(Errors[T], 0) << T;
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(static_cast<float *>(Bufs[T].data())[I], float(Rounds))
          << "thread " << T << " element " << I;
    for (int R = 0; R < Rounds; ++R)
      EXPECT_TRUE(Events[T][R].isComplete());
  }
}

// Two cubes that each wait (boundedly) for the other's flag meet only when
// they run at the same time. On a stream of a 2-thread device, the launch
// runs in a task on the arena's one worker; the host thread waiting in
// Stream::synchronize() or Event::synchronize() must run the other cube
// (Executor::helpWithCubes), or the first cube gives up and records that
// it met no one.
constexpr const char *MeetText = R"(
kernel @meet cube_dim(1) (%flags: buffer<u32, read_write>,
                          %met: buffer<u32, write>) {
  %c = cube_pos.x : u32
  %other = sub 1:u32, %c : u32
  atomic_store %flags[%c], 1:u32
  %seen = var u32
  set %seen, 0:u32
  for %i = 0:u32 to 400000000:u32 {
    %f = atomic_load %flags[%other] : u32
    %up = ne %f, 0:u32 : bool
    if %up {
      set %seen, 1:u32
      break
    }
  }
  %s = get %seen : u32
  store %met[%c], %s
}
)";

TEST(StreamTest, TheWaitingHostRunsCubesBesideTheWorker) {
  Device D = memoryDevice(2);
  if (D.concurrency() < 2)
    GTEST_SKIP() << "one core: a 2-thread device cannot be made";
  Kernel K = *D.loadKernel(MeetText, "meet");
  Stream S = *D.createStream();
  // Rounds 0-2 wait with Stream::synchronize, 3-5 with Event::synchronize.
  for (int Round = 0; Round < 6; ++Round) {
    Buffer Flags = *Buffer::allocate(8), Met = *Buffer::allocate(8);
    std::memset(Flags.data(), 0, 8);
    std::memset(Met.data(), 0xff, 8);
    ASSERT_TRUE(S.launch(K, {2, 1, 1},
                         {Arg::buffer(Flags.view(u32(), 0, 2)),
                          Arg::buffer(Met.view(u32(), 0, 2))})
                    .ok());
    // Long enough for the worker to take the launch: the host that comes
    // to synchronize() later finds it running (else it drains the stream
    // itself, in the arena's master slot, beside the worker).
    Result<Event> Done = S.record();
    ASSERT_TRUE(Done.ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (Round < 3)
      ASSERT_TRUE(S.synchronize().ok());
    else
      ASSERT_TRUE(Done->synchronize().ok());
    const uint32_t *M = static_cast<const uint32_t *>(Met.data());
    EXPECT_EQ(M[0], 1u) << "round " << Round;
    EXPECT_EQ(M[1], 1u) << "round " << Round;
  }
}

// A worker draining the stream hands the queue to a host that waits in
// synchronize; what is queued after the wait began still runs once that
// host leaves (a task takes it up again), and an event recorded behind it
// completes: nothing is stranded between the two.
TEST(StreamTest, AQueueHandedToTheWaitingHostLeavesNothingBehind) {
  Device D = memoryDevice(2);
  Kernel K = *D.loadKernel(AffineText, "affine");
  const uint32_t N = 256;
  for (int Round = 0; Round < 20; ++Round) {
    Stream S = *D.createStream();
    Buffer B = *Buffer::allocate(N * 4);
    std::memset(B.data(), 0, N * 4);
    for (int R = 0; R < 200; ++R)
      ASSERT_TRUE(affine(S, K, B, N, 1.0f, 1.0f).ok());
    std::atomic<bool> Recorded{false};
    Event Last;
    std::thread More([&] {
      for (int R = 0; R < 200; ++R)
        ASSERT_TRUE(affine(S, K, B, N, 1.0f, 1.0f).ok());
      Result<Event> E = S.record();
      ASSERT_TRUE(E.ok());
      Last = *E;
      Recorded = true;
    });
    ASSERT_TRUE(S.synchronize().ok());
    More.join();
    ASSERT_TRUE(Recorded.load());
    ASSERT_TRUE(Last.synchronize().ok()) << "round " << Round;
    const float *V = static_cast<const float *>(B.data());
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(V[I], 400.0f) << "round " << Round << ", element " << I;
  }
}

} // namespace

namespace {

// Several devices in one process, each with its own threads, as a
// runtime might make one per NUMA node: work flows from one to the other
// through events and copies, buffers being host memory of no device.
TEST(MultiDeviceTest, TwoDevicesHandWorkToEachOtherThroughEventsAndCopies) {
  Device D1 = memoryDevice(1), D2 = memoryDevice(2);
  ASSERT_EQ(D1.concurrency(), 1u);
  ASSERT_EQ(D2.concurrency(), std::min(2u, std::thread::hardware_concurrency()));
  Kernel K1 = *D1.loadKernel(AffineText, "affine");
  Kernel K2 = *D2.loadKernel(AffineText, "affine");
  // A kernel of one device is refused on the other.
  Stream S1 = *D1.createStream(), S2 = *D2.createStream();
  const uint32_t N = 30000;
  Buffer X = *Buffer::allocate(N * 4), Y = *Buffer::allocate(N * 4);
  EXPECT_EQ(affine(S2, K1, X, N, 1.0f, 1.0f).code(),
            ErrorCode::InvalidArgument);
  // resetError gives back the failure it cleared.
  EXPECT_EQ(S2.resetError().code(), ErrorCode::InvalidArgument);
  ASSERT_TRUE(S2.status().ok());
  for (int R = 0; R < 10; ++R)
    ASSERT_TRUE(affine(S1, K1, X, N, 1.0f, 1.0f).ok()); // x = 10 on D1
  Event OnD1 = *S1.record();
  // D2 waits for D1's event, copies between the buffers, works on the copy.
  ASSERT_TRUE(S2.wait(OnD1).ok());
  ASSERT_TRUE(S2.copyBuffer(Y, 0, X, 0, N * 4).ok());
  ASSERT_TRUE(affine(S2, K2, Y, N, 3.0f, 1.0f).ok()); // y = 31 on D2
  Event OnD2 = *S2.record();
  // And back: D1 waits for D2, copies y into x and doubles it.
  ASSERT_TRUE(S1.wait(OnD2).ok());
  ASSERT_TRUE(S1.copyBuffer(X, 0, Y, 0, N * 4).ok());
  ASSERT_TRUE(affine(S1, K1, X, N, 2.0f, 0.0f).ok()); // x = 62
  std::vector<float> HX(N), HY(N);
  ASSERT_TRUE(S1.copyFromBuffer(HX.data(), X, 0, N * 4).ok());
  ASSERT_TRUE(S1.synchronize().ok());
  ASSERT_TRUE(S2.copyFromBuffer(HY.data(), Y, 0, N * 4).ok());
  ASSERT_TRUE(S2.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I) {
    ASSERT_EQ(HY[I], 31.0f) << I;
    ASSERT_EQ(HX[I], 62.0f) << I;
  }
  // Destroying one device leaves the other working.
  { Device Gone = std::move(D1); }
  ASSERT_TRUE(affine(S2, K2, Y, N, 1.0f, 1.0f).ok());
  ASSERT_TRUE(S2.synchronize().ok());
  ASSERT_TRUE(S2.copyFromBuffer(HY.data(), Y, 0, N * 4).ok());
  ASSERT_TRUE(S2.synchronize().ok());
  EXPECT_EQ(HY[0], 32.0f);
}

} // namespace

namespace {

// Indirect dispatch: the cube count is read from a buffer when
// the launch runs, after the stream's earlier work wrote it.
constexpr const char *SetCountText = R"(
kernel @setcount cube_dim(1) (%c: buffer<u32, write>, %x: u32, %y: u32) {
  store %c[0:u32], %x
  store %c[1:u32], %y
  store %c[2:u32], 1:u32
}
)";

TEST(IndirectLaunchTest, TheCountIsReadWhenTheLaunchRuns) {
  Device D = memoryDevice();
  Kernel K = *D.loadKernel(AffineText, "affine");
  Kernel Set = *D.loadKernel(SetCountText, "setcount");
  const ElementType U32 = ElementType::scalar(ScalarType::U32);
  const uint32_t N = 64 * 40;
  Buffer X = *Buffer::allocate(N * 4);
  Buffer Counts = *Buffer::allocate(16);
  std::vector<float> Host(N);

  // Synchronous: the count is read at once (10 cubes of 64 units).
  uint32_t Ten[3] = {10, 1, 1};
  Stream S = *D.createStream();
  ASSERT_TRUE(S.copyToBuffer(Counts, 0, Ten, 12).ok());
  ASSERT_TRUE(S.synchronize().ok());
  ASSERT_TRUE(D.launchIndirect(K, Counts.view(U32, 0, 3),
                               std::initializer_list<Arg>{
                                   Arg::buffer(X.view(f32(), 0, N)),
                                   Arg::f32(1.0f), Arg::f32(1.0f), Arg::u32(N)})
                  .ok());
  ASSERT_TRUE(S.copyFromBuffer(Host.data(), X, 0, N * 4).ok());
  ASSERT_TRUE(S.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(Host[I], I < 640 ? 1.0f : 0.0f) << I;

  // On a stream: a kernel writes the count (25 cubes), the indirect launch
  // after it reads that, not what the buffer held when it was queued.
  ASSERT_TRUE(S.launch(Set, {1, 1, 1},
                       {Arg::buffer(Counts.view(U32, 0, 3)), Arg::u32(25),
                        Arg::u32(1)})
                  .ok());
  ASSERT_TRUE(S.launchIndirect(K, Counts.view(U32, 0, 3),
                               {Arg::buffer(X.view(f32(), 0, N)),
                                Arg::f32(1.0f), Arg::f32(10.0f), Arg::u32(N)})
                  .ok());
  ASSERT_TRUE(S.copyFromBuffer(Host.data(), X, 0, N * 4).ok());
  ASSERT_TRUE(S.synchronize().ok());
  for (uint32_t I = 0; I < N; ++I)
    ASSERT_EQ(Host[I], I < 640 ? 11.0f : I < 1600 ? 10.0f : 0.0f) << I;

  // A zero count runs nothing.
  ASSERT_TRUE(S.launch(Set, {1, 1, 1},
                       {Arg::buffer(Counts.view(U32, 0, 3)), Arg::u32(0),
                        Arg::u32(1)})
                  .ok());
  ASSERT_TRUE(S.launchIndirect(K, Counts.view(U32, 0, 3),
                               {Arg::buffer(X.view(f32(), 0, N)),
                                Arg::f32(0.0f), Arg::f32(-1.0f), Arg::u32(N)})
                  .ok());
  ASSERT_TRUE(S.copyFromBuffer(Host.data(), X, 0, N * 4).ok());
  ASSERT_TRUE(S.synchronize().ok());
  EXPECT_EQ(Host[0], 11.0f);

  // A view that cannot hold a count is refused at once.
  Status Bad = S.launchIndirect(K, Counts.view(f32(), 0, 3),
                                {Arg::buffer(X.view(f32(), 0, N)),
                                 Arg::f32(1.0f), Arg::f32(1.0f), Arg::u32(N)});
  EXPECT_EQ(Bad.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(Bad.message().find("at least 3 u32"), std::string::npos)
      << Bad.message();
  EXPECT_EQ(S.resetError().code(), ErrorCode::InvalidArgument);

  // A count of more than 2^32-1 cubes fails the stream when it runs.
  ASSERT_TRUE(S.launch(Set, {1, 1, 1},
                       {Arg::buffer(Counts.view(U32, 0, 3)),
                        Arg::u32(65536), Arg::u32(65537)})
                  .ok());
  ASSERT_TRUE(S.launchIndirect(K, Counts.view(U32, 0, 3),
                               {Arg::buffer(X.view(f32(), 0, N)),
                                Arg::f32(1.0f), Arg::f32(1.0f), Arg::u32(N)})
                  .ok());
  Status Late = S.synchronize();
  EXPECT_EQ(Late.code(), ErrorCode::InvalidLaunch) << Late.message();
}

} // namespace
