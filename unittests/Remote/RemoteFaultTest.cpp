//===- RemoteFaultTest.cpp - A remote tier that fails is only slowness ---===//
//
// The server killed in the middle of a batch, restarted, stalled, full, or
// holding garbage: every read still returns the right bytes or nothing,
// nothing crashes or hangs, each failure is counted, and after repeated
// failures the tier is skipped (its Skipped counter grows) until the
// back-off period is over.
//
// Time decides nothing here except generous upper bounds that catch a hang.
//
//===----------------------------------------------------------------------===//

#include "RemoteTestSupport.h"

#include "kiln/Store/EntryFormat.h"

#include <atomic>
#include <csignal>
#include <hiredis/hiredis.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kiln;
using namespace kiln::test;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

class RemoteFault : public RemoteTest {
protected:
  using RemoteTest::RemoteTest;

  struct Node {
    TempDir Root;
    std::shared_ptr<StoreWarnings> W = std::make_shared<StoreWarnings>();
    std::shared_ptr<RemoteTier> Tier;
    std::unique_ptr<FileStore> Store;
  };
  std::unique_ptr<Node> node(const RemoteConfig &C) {
    auto N = std::make_unique<Node>();
    N->Tier = makeTier(C, N->W);
    N->Store = makeStore(N->Root.path(), N->Tier, N->W);
    return N;
  }
  /// Publishes \p Count entries (keys {I, 1}, payloadFor(I)) through a
  /// node of its own.
  void publishEntries(uint64_t First, uint64_t Count) {
    auto A = node(config());
    for (uint64_t I = First; I != First + Count; ++I)
      ASSERT_FALSE(failed(A->Store->write(KernelCacheKey{I, 1}, payloadFor(I),
                                          infoFor(I))));
    ASSERT_TRUE(A->Tier->drain(milliseconds(20000)));
    ASSERT_EQ(A->Tier->counters().Published, Count);
  }
  std::string nameOf(uint64_t I) {
    return remoteEntryName("kiln", "cpu", fingerprintHash("fingerprint A"),
                           KernelCacheKey{I, 1});
  }
  /// Every publication is accounted for once: written, refused, or
  /// dropped (by publish() or by the publisher).
  static void expectPublicationsAccounted(Node &N) {
    ASSERT_TRUE(N.Tier->drain(milliseconds(20000)));
    RemoteCounters R = N.Tier->counters();
    StoreCounters S = totals(*N.Store);
    EXPECT_EQ(R.Published + R.PublishErrors + R.Dropped,
              S.RemoteQueued + S.RemoteDropped)
        << "published " << R.Published << ", refused " << R.PublishErrors
        << ", dropped " << R.Dropped << "; queued " << S.RemoteQueued
        << ", dropped at once " << S.RemoteDropped;
  }
};

TEST_F(RemoteFault, UnreachableServerIsSkippedAfterAFewFailures) {
  Server.kill9();
  RemoteConfig C = config();
  C.FailuresBeforeBackoff = 3;
  C.Backoff = milliseconds(60000);
  auto B = node(C);
  WarningCapture Cap(*B->W);
  Clock::time_point T0 = Clock::now();
  for (uint64_t I = 0; I != 20; ++I)
    EXPECT_EQ(B->Store->read(KernelCacheKey{I, 1}), std::nullopt);
  EXPECT_LT(secondsSince(T0), 5.0);
  RemoteCounters R = B->Tier->counters();
  EXPECT_EQ(R.Errors, 3u);
  EXPECT_EQ(R.Skipped, 17u);
  EXPECT_TRUE(B->Tier->backingOff());
  EXPECT_EQ(B->Store->pendingCounters().RemoteErrors, 20u);
  ASSERT_EQ(Cap.Warnings.size(), 1u) << joined(Cap.Warnings);
  EXPECT_NE(Cap.Warnings[0].find(Server.url()), std::string::npos);
  EXPECT_NE(Cap.Warnings[0].find("after 3 failures in a row"),
            std::string::npos)
      << Cap.Warnings[0];
  // Publications are dropped at once while backing off.
  ASSERT_FALSE(failed(B->Store->write(KernelCacheKey{1, 1}, payloadFor(1),
                                      infoFor(1))));
  EXPECT_EQ(B->Store->pendingCounters().RemoteDropped, 1u);
  EXPECT_EQ(B->Tier->counters().Dropped, 1u);
  expectPublicationsAccounted(*B);
  EXPECT_FALSE(B->Tier->publish(nameOf(1), payloadFor(1)));
  EXPECT_EQ(B->Tier->counters().Dropped, 2u);
  // The local store is unaffected.
  EXPECT_EQ(B->Store->read(KernelCacheKey{1, 1}),
            std::optional<std::vector<uint8_t>>(payloadFor(1)));
}

TEST_F(RemoteFault, ServerKilledMidBatch) {
  constexpr uint64_t Published = 40;
  publishEntries(0, Published);
  RemoteConfig C = config();
  C.ConnectTimeout = C.RequestTimeout = milliseconds(1000);
  C.FailuresBeforeBackoff = 3;
  C.Backoff = milliseconds(60000);
  auto B = node(C);

  constexpr unsigned Threads = 4, AfterKill = 40;
  std::atomic<unsigned> Ops{0}, Wrong{0}, WriteFailed{0}, Hits{0};
  std::atomic<bool> Killed{false};
  std::vector<std::thread> Pool;
  for (unsigned T = 0; T != Threads; ++T)
    Pool.emplace_back([&, T] {
      unsigned SinceKill = 0;
      for (uint64_t Round = 0; SinceKill < AfterKill; ++Round) {
        // A published entry (right bytes or nothing)...
        uint64_t I = (Round * Threads + T) % Published;
        std::optional<std::vector<uint8_t>> Got =
            B->Store->read(KernelCacheKey{I, 1});
        if (Got && *Got != payloadFor(I))
          ++Wrong;
        if (Got)
          ++Hits;
        // ...then a kernel of its own, compiled and written.
        uint64_t Own = 1000 + T * 1000 + Round;
        if (B->Store->read(KernelCacheKey{Own, 1}))
          ++Wrong; // nobody published it
        if (failed(B->Store->write(KernelCacheKey{Own, 1}, payloadFor(Own),
                                   infoFor(Own))))
          ++WriteFailed;
        ++Ops;
        if (Killed)
          ++SinceKill;
      }
    });
  Clock::time_point T0 = Clock::now();
  while (Ops < 20 && secondsSince(T0) < 30)
    std::this_thread::yield();
  Server.kill9();
  Killed = true;
  for (std::thread &T : Pool)
    T.join();
  EXPECT_LT(secondsSince(T0), 30.0) << "the batch hung";

  EXPECT_EQ(Wrong, 0u);
  EXPECT_EQ(WriteFailed, 0u) << "the local store does not need the server";
  EXPECT_GT(Hits, 0u) << "the first reads, before the kill, were hits";
  RemoteCounters R = B->Tier->counters();
  EXPECT_GE(R.Errors, 1u);
  EXPECT_GT(R.Skipped, 0u);
  EXPECT_TRUE(B->Tier->backingOff());
  EXPECT_EQ(B->W->count(), 1u) << "one warning: " << joined(B->W->recent());

  // Backing off: later reads do not touch the server, and return at once.
  RemoteCounters Before = B->Tier->counters();
  Clock::time_point T1 = Clock::now();
  for (uint64_t I = 0; I != 50; ++I)
    EXPECT_EQ(B->Store->read(KernelCacheKey{50000 + I, 1}), std::nullopt);
  EXPECT_LT(secondsSince(T1), 5.0);
  RemoteCounters After = B->Tier->counters();
  EXPECT_EQ(After.Skipped, Before.Skipped + 50);
  EXPECT_EQ(After.Errors, Before.Errors);
  expectPublicationsAccounted(*B);

  // Everything written is in the local store, intact.
  auto Local = makeStore(B->Root.path(), nullptr);
  for (unsigned T = 0; T != Threads; ++T)
    for (uint64_t Round = 0; Round != AfterKill; ++Round) {
      uint64_t Own = 1000 + T * 1000 + Round;
      EXPECT_EQ(Local->read(KernelCacheKey{Own, 1}),
                std::optional<std::vector<uint8_t>>(payloadFor(Own)))
          << Own;
    }
}

TEST_F(RemoteFault, RestartedServerIsUsedAgainAfterTheBackoff) {
  RemoteConfig C = config();
  C.ConnectTimeout = C.RequestTimeout = milliseconds(1000);
  C.FailuresBeforeBackoff = 2;
  C.Backoff = milliseconds(300);
  publishEntries(0, 1);
  auto B = node(C);
  WarningCapture Cap(*B->W);
  Server.kill9();
  for (uint64_t I = 0; I != 6; ++I)
    EXPECT_EQ(B->Store->read(KernelCacheKey{I, 1}), std::nullopt);
  EXPECT_EQ(B->Tier->counters().Errors, 2u);
  EXPECT_EQ(B->Tier->counters().Skipped, 4u);
  EXPECT_TRUE(B->Tier->backingOff());

  // A fresh server (nothing kept), the entry published again.
  ASSERT_TRUE(Server.restart()) << Server.error();
  publishEntries(0, 1);
  // Within a few back-off periods, a read is answered again.
  Clock::time_point T0 = Clock::now();
  std::optional<std::vector<uint8_t>> Got;
  while (!Got && secondsSince(T0) < 10) {
    Got = B->Store->read(KernelCacheKey{0, 1});
    if (!Got)
      std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_TRUE(Got) << "the tier never came back";
  EXPECT_EQ(*Got, payloadFor(0));
  EXPECT_TRUE(FileStore::lastReadCameFromRemote());
  EXPECT_FALSE(B->Tier->backingOff());
  EXPECT_EQ(B->Tier->counters().Hits, 1u);
  EXPECT_TRUE(anyContains(Cap.Warnings, "answers again")) << joined(Cap.Warnings);
  // And it publishes again.
  ASSERT_FALSE(failed(B->Store->write(KernelCacheKey{77, 1}, payloadFor(77),
                                      infoFor(77))));
  ASSERT_TRUE(B->Tier->drain(milliseconds(10000)));
  EXPECT_TRUE(Server.get(nameOf(77)).has_value());
  expectPublicationsAccounted(*B);
}

TEST_F(RemoteFault, RestartWhileIdleIsNotAFailure) {
  // Connections pooled before a restart are dead afterwards; that is no
  // reason to miss, nor to back off, when the server answers.
  RemoteConfig C = config();
  C.FailuresBeforeBackoff = 3;
  C.Backoff = milliseconds(60000);
  publishEntries(0, 8);
  auto B = node(C);
  // Four fetches at once, held by a sleeping server: four connections,
  // pooled when they are answered.
  ASSERT_TRUE(Server.sleepFor(0.5));
  std::vector<std::thread> Pool;
  std::atomic<unsigned> Got{0};
  for (uint64_t T = 0; T != 4; ++T)
    Pool.emplace_back([&, T] {
      if (B->Tier->fetch(nameOf(T)).Status == RemoteFetchStatus::Hit)
        ++Got;
    });
  for (std::thread &T : Pool)
    T.join();
  ASSERT_EQ(Got, 4u);

  Server.kill9();
  ASSERT_TRUE(Server.restart()) << Server.error();
  publishEntries(0, 8);
  for (uint64_t I = 4; I != 8; ++I)
    EXPECT_EQ(B->Tier->fetch(nameOf(I)).Status, RemoteFetchStatus::Hit) << I;
  EXPECT_FALSE(B->Tier->backingOff());
  EXPECT_EQ(B->Tier->counters().Errors, 0u);
  // The publisher's connection was made before the restart too.
  ASSERT_FALSE(failed(B->Store->write(KernelCacheKey{100, 1}, payloadFor(100),
                                      infoFor(100))));
  ASSERT_TRUE(B->Tier->drain(milliseconds(10000)));
  Server.kill9();
  ASSERT_TRUE(Server.restart()) << Server.error();
  ASSERT_FALSE(failed(B->Store->write(KernelCacheKey{101, 1}, payloadFor(101),
                                      infoFor(101))));
  ASSERT_TRUE(B->Tier->drain(milliseconds(10000)));
  EXPECT_TRUE(Server.get(nameOf(101)).has_value())
      << "the first publication after a restart was lost";
  EXPECT_EQ(B->Tier->counters().Errors, 0u);
}

TEST_F(RemoteFault, ServerDyingMidWriteDoesNotKillTheProcess) {
  // A request being written when the server dies: the write fails with
  // EPIPE, and must not raise SIGPIPE, whose default action would end the
  // embedding process. In a child, so that such a death is reported.
  int Ready[2], Go[2];
  ASSERT_EQ(::pipe(Ready), 0);
  ASSERT_EQ(::pipe(Go), 0);
  RemoteConfig C = config();
  C.ConnectTimeout = C.RequestTimeout = milliseconds(10000);
  std::string Name = nameOf(0);
  pid_t Child = ::fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    llvm::Expected<std::shared_ptr<RemoteTier>> T = RemoteTier::create(C);
    if (!T)
      ::_exit(2);
    // A pooled connection, then a value far larger than the socket's
    // buffers, written to a server that does not read.
    if ((*T)->fetch(Name).Status != RemoteFetchStatus::Miss)
      ::_exit(3);
    char B = 1;
    if (::write(Ready[1], &B, 1) != 1 || ::read(Go[0], &B, 1) != 1)
      ::_exit(4);
    llvm::Expected<bool> Set =
        (*T)->publishNow(Name, std::vector<uint8_t>(size_t(32) << 20, 7));
    if (Set) // written to a dead server?
      ::_exit(5);
    llvm::consumeError(Set.takeError());
    ::_exit(0);
  }
  ::close(Ready[1]);
  ::close(Go[0]);
  char B = 0;
  ASSERT_EQ(::read(Ready[0], &B, 1), 1);
  Server.pause();
  ASSERT_EQ(::write(Go[1], &B, 1), 1);
  std::this_thread::sleep_for(milliseconds(300)); // the child blocks writing
  Server.kill9();
  int Status = 0;
  ASSERT_EQ(::waitpid(Child, &Status, 0), Child);
  ::close(Ready[0]);
  ::close(Go[1]);
  ASSERT_FALSE(WIFSIGNALED(Status))
      << "the process was killed by signal " << WTERMSIG(Status)
      << (WTERMSIG(Status) == SIGPIPE ? " (SIGPIPE)" : "");
  EXPECT_EQ(WEXITSTATUS(Status), 0);
}

TEST_F(RemoteFault, SlowServerTimesOut) {
  publishEntries(0, 2);
  RemoteConfig C = config();
  C.ConnectTimeout = C.RequestTimeout = milliseconds(100);
  C.FailuresBeforeBackoff = 100;
  auto B = node(C);
  std::string Name = nameOf(0);
  // A warm connection first, so the stall hits a request.
  ASSERT_EQ(B->Tier->fetch(nameOf(1)).Status, RemoteFetchStatus::Hit);

  ASSERT_TRUE(Server.sleepFor(1.0)) << "the server never fell asleep";
  Clock::time_point T0 = Clock::now();
  RemoteFetch F = B->Tier->fetch(Name);
  double S = secondsSince(T0);
  EXPECT_EQ(F.Status, RemoteFetchStatus::Error);
  EXPECT_TRUE(F.Bytes.empty());
  EXPECT_LT(S, 0.7) << "a 100 ms timeout took " << S << " s";
  // A FileStore read during the stall: nothing, quickly, counted.
  T0 = Clock::now();
  EXPECT_EQ(B->Store->read(KernelCacheKey{0, 1}), std::nullopt);
  EXPECT_LT(secondsSince(T0), 0.7);
  EXPECT_EQ(B->Store->pendingCounters().RemoteErrors, 1u);
  EXPECT_EQ(B->Tier->counters().Errors, 2u);
  std::printf("[          ] a fetch from a stalled server returned after "
              "%.0f ms (timeout 100 ms)\n",
              S * 1e3);

  // Awake again, the tier serves (a new connection: the timed-out ones
  // are not trusted).
  Clock::time_point T1 = Clock::now();
  while (!Server.ping(milliseconds(200)) && secondsSince(T1) < 5)
    ;
  EXPECT_EQ(B->Store->read(KernelCacheKey{0, 1}),
            std::optional<std::vector<uint8_t>>(payloadFor(0)));
}

TEST_F(RemoteFault, StoppedServerTimesOut) {
  publishEntries(0, 1);
  RemoteConfig C = config();
  C.ConnectTimeout = C.RequestTimeout = milliseconds(100);
  C.FailuresBeforeBackoff = 2;
  C.Backoff = milliseconds(60000);
  auto B = node(C);
  Server.pause();
  Clock::time_point T0 = Clock::now();
  for (uint64_t I = 0; I != 10; ++I)
    EXPECT_EQ(B->Store->read(KernelCacheKey{I, 1}), std::nullopt);
  double S = secondsSince(T0);
  Server.resume();
  // Two timeouts, then skipped.
  EXPECT_LT(S, 3.0);
  EXPECT_EQ(B->Tier->counters().Errors, 2u);
  EXPECT_EQ(B->Tier->counters().Skipped, 8u);
  // Publications while backing off are dropped; the tier's destructor does
  // not wait for them.
  ASSERT_FALSE(failed(B->Store->write(KernelCacheKey{5, 1}, payloadFor(5),
                                      infoFor(5))));
  expectPublicationsAccounted(*B);
}

TEST_F(RemoteFault, QueueBoundsDropWhatDoesNotFit) {
  RemoteConfig C = config();
  C.QueueEntries = 2;
  auto B = node(C);
  // The publisher is held up by a stalled server: the queue fills.
  Server.pause();
  unsigned Accepted = 0;
  for (uint64_t I = 0; I != 10; ++I)
    Accepted += B->Tier->publish(nameOf(I), payloadFor(I));
  Server.resume();
  EXPECT_GE(Accepted, 2u);
  EXPECT_LE(Accepted, 3u) << "two queued, at most one being published";
  ASSERT_TRUE(B->Tier->drain(milliseconds(10000)));
  RemoteCounters R = B->Tier->counters();
  EXPECT_EQ(R.Published, Accepted);
  EXPECT_EQ(R.Dropped, 10 - Accepted);
  EXPECT_EQ(Server.keys("kiln:*").size(), Accepted);

  // The byte bound too.
  RemoteConfig Small = config();
  Small.QueueBytes = 1000;
  auto D = node(Small);
  Server.pause();
  EXPECT_TRUE(D->Tier->publish(nameOf(20), payloadFor(20, 600)));
  bool Second = D->Tier->publish(nameOf(21), payloadFor(21, 600));
  bool Third = D->Tier->publish(nameOf(22), payloadFor(22, 600));
  Server.resume();
  EXPECT_FALSE(Second && Third) << "1800 bytes queued under a 1000-byte bound";
  ASSERT_TRUE(D->Tier->drain(milliseconds(10000)));
}

TEST_F(RemoteFault, DestroyingATierWithAStalledServerIsBounded) {
  RemoteConfig C = config();
  C.ConnectTimeout = C.RequestTimeout = milliseconds(200);
  auto T = makeTier(C);
  Server.pause();
  for (uint64_t I = 0; I != 50; ++I)
    T->publish(nameOf(I), payloadFor(I));
  Clock::time_point T0 = Clock::now();
  T.reset();
  double S = secondsSince(T0);
  Server.resume();
  EXPECT_LT(S, 4.0) << "~RemoteTier waits a second, then one request";
}

class FullServer : public RemoteFault {
protected:
  FullServer() : RemoteFault({"--maxmemory-policy", "noeviction"}) {}
};

TEST_F(FullServer, PublicationsAreRefusedReadsStayRight) {
  // Room for about ten of the entries below, not thirty.
  unsigned long long Used = Server.infoNumber("memory", "used_memory");
  ASSERT_GT(Used, 0u);
  RedisReplyPtr R = Server.command(
      {"CONFIG", "SET", "maxmemory", std::to_string(Used + (1 << 20))});
  ASSERT_TRUE(R && R->type == REDIS_REPLY_STATUS);

  constexpr uint64_t Count = 30;
  auto A = node(config());
  WarningCapture Cap(*A->W);
  for (uint64_t I = 0; I != Count; ++I)
    ASSERT_FALSE(failed(A->Store->write(KernelCacheKey{I, 1},
                                        payloadFor(I, 100000, true),
                                        infoFor(I))));
  ASSERT_TRUE(A->Tier->drain(milliseconds(20000)));
  RemoteCounters RC = A->Tier->counters();
  EXPECT_GT(RC.Published, 0u);
  EXPECT_GT(RC.PublishErrors, 0u);
  EXPECT_EQ(RC.Published + RC.PublishErrors, Count);
  EXPECT_EQ(RC.Errors, 0u);
  EXPECT_FALSE(A->Tier->backingOff()) << "a full server is not a dead one";
  ASSERT_EQ(Cap.Warnings.size(), 1u) << joined(Cap.Warnings);
  EXPECT_NE(Cap.Warnings[0].find("OOM"), std::string::npos) << Cap.Warnings[0];
  expectPublicationsAccounted(*A);
  std::vector<std::string> Keys = Server.keys("kiln:*");
  EXPECT_EQ(Keys.size(), RC.Published);

  // Another machine gets the published ones, and nothing wrong.
  auto B = node(config());
  unsigned Hits = 0;
  for (uint64_t I = 0; I != Count; ++I) {
    std::optional<std::vector<uint8_t>> Got = B->Store->read(KernelCacheKey{I, 1});
    bool There = Server.get(nameOf(I)).has_value();
    EXPECT_EQ(Got.has_value(), There) << I;
    if (Got) {
      EXPECT_EQ(*Got, payloadFor(I, 100000, true)) << I;
      ++Hits;
    }
  }
  EXPECT_EQ(Hits, RC.Published);
  EXPECT_EQ(B->Tier->counters().Errors, 0u);
}

TEST_F(RemoteFault, GarbageUnderAnEntryKeyIsRejected) {
  auto B = node(config());
  ASSERT_TRUE(Server.set(nameOf(0), "not a kiln value at all"));
  ASSERT_TRUE(Server.set(nameOf(1), ""));
  ASSERT_TRUE(Server.set(nameOf(2), std::string(100, '\0')));
  WarningCapture Cap(*B->W);
  for (uint64_t I = 0; I != 3; ++I)
    EXPECT_EQ(B->Store->read(KernelCacheKey{I, 1}), std::nullopt) << I;
  EXPECT_EQ(B->Tier->counters().Rejected, 3u);
  EXPECT_EQ(B->Tier->counters().Errors, 0u);
  EXPECT_EQ(B->Store->pendingCounters().RemoteRejected, 3u);
  EXPECT_EQ(Cap.Warnings.size(), 3u) << joined(Cap.Warnings);
  EXPECT_TRUE(anyContains(Cap.Warnings, "not a sealed kiln value"));
  EXPECT_FALSE(B->Tier->backingOff());
}

TEST_F(RemoteFault, ValueOfAnotherTypeIsAnError) {
  publishEntries(9, 1);
  RemoteConfig C = config();
  C.FailuresBeforeBackoff = 3;
  auto B = node(C);
  WarningCapture Cap(*B->W);
  RedisReplyPtr R = Server.command({"RPUSH", nameOf(0), "a", "b"});
  ASSERT_TRUE(R && R->type == REDIS_REPLY_INTEGER);
  RemoteFetch F = B->Tier->fetch(nameOf(0));
  EXPECT_EQ(F.Status, RemoteFetchStatus::Error);
  EXPECT_EQ(B->Tier->counters().Errors, 1u);
  EXPECT_EQ(B->Store->read(KernelCacheKey{0, 1}), std::nullopt);
  EXPECT_EQ(B->Store->pendingCounters().RemoteErrors, 1u);
  EXPECT_EQ(B->Tier->counters().Errors, 2u);
  // A hash, a set, a sorted set: the same.
  Server.command({"HSET", nameOf(1), "f", "v"});
  Server.command({"SADD", nameOf(2), "m"});
  Server.command({"ZADD", nameOf(3), "1", "m"});
  for (uint64_t I = 1; I != 4; ++I)
    EXPECT_EQ(B->Tier->fetch(nameOf(I)).Status, RemoteFetchStatus::Error) << I;
  EXPECT_EQ(B->Tier->counters().Errors, 5u);
  // The server answered each time: the connection and the tier still
  // work. Five bad keys in a row do not switch the tier off.
  EXPECT_FALSE(B->Tier->backingOff());
  EXPECT_EQ(B->Tier->counters().Skipped, 0u);
  EXPECT_EQ(B->Store->read(KernelCacheKey{9, 1}),
            std::optional<std::vector<uint8_t>>(payloadFor(9)));
  EXPECT_EQ(B->Tier->counters().Hits, 1u);
  ASSERT_EQ(Cap.Warnings.size(), 1u) << joined(Cap.Warnings);
  EXPECT_NE(Cap.Warnings[0].find("WRONGTYPE"), std::string::npos)
      << Cap.Warnings[0];
  // Publishing over a key of another type writes nothing (SET NX) and
  // breaks nothing.
  llvm::Expected<bool> Now = B->Tier->publishNow(nameOf(0), payloadFor(0));
  ASSERT_TRUE(!!Now) << llvm::toString(Now.takeError());
  EXPECT_FALSE(*Now);
  RedisReplyPtr Type = Server.command({"TYPE", nameOf(0)});
  ASSERT_TRUE(Type && Type->type == REDIS_REPLY_STATUS);
  EXPECT_EQ(std::string(Type->str, Type->len), "list");
}

TEST_F(RemoteFault, HugeValueIsRejected) {
  RemoteConfig C = config();
  C.MaxValueBytes = 4096;
  publishEntries(1, 1);
  auto B = node(C);
  ASSERT_TRUE(Server.set(nameOf(0), std::string(100000, 'x')));
  WarningCapture Cap(*B->W);
  RemoteFetch F = B->Tier->fetch(nameOf(0));
  EXPECT_EQ(F.Status, RemoteFetchStatus::Rejected);
  EXPECT_TRUE(F.Bytes.empty());
  EXPECT_EQ(B->Store->read(KernelCacheKey{0, 1}), std::nullopt);
  RemoteCounters R = B->Tier->counters();
  EXPECT_EQ(R.Rejected, 2u);
  EXPECT_EQ(R.Errors, 0u);
  EXPECT_FALSE(B->Tier->backingOff());
  EXPECT_TRUE(anyContains(Cap.Warnings, "over the limit of 4096"))
      << joined(Cap.Warnings);
  // The connection still works.
  EXPECT_EQ(B->Store->read(KernelCacheKey{1, 1}),
            std::optional<std::vector<uint8_t>>(payloadFor(1)));
  // Nor is a value over the limit published.
  EXPECT_FALSE(B->Tier->publish(nameOf(5), payloadFor(5, 5000)));
  EXPECT_EQ(B->Tier->counters().Dropped, 1u);
}

TEST_F(RemoteFault, WhatIsPublishedFitsTheLimitReadersApply) {
  // An entry just under MaxValueBytes: the sealed value is 64 bytes more.
  // Whatever a tier publishes, a tier with the same configuration must
  // accept; else every machine fetches it and throws it away, forever.
  KernelCacheKey Key{3, 1};
  std::vector<uint8_t> P = payloadFor(3, 3000, true);
  llvm::Expected<std::vector<uint8_t>> Entry =
      encodeEntry(Key, fingerprintHash("fingerprint A"), infoFor(3), P);
  ASSERT_TRUE(!!Entry);
  RemoteConfig C = config();
  C.MaxValueBytes = Entry->size() + 10;
  auto A = node(C);
  ASSERT_FALSE(failed(A->Store->write(Key, P, infoFor(3))));
  ASSERT_TRUE(A->Tier->drain(milliseconds(10000)));
  auto B = node(C);
  std::optional<std::vector<uint8_t>> Got = B->Store->read(Key);
  EXPECT_EQ(B->Tier->counters().Rejected, 0u)
      << "a value this configuration published was refused by it: "
      << joined(B->W->recent());
  if (Server.get(nameOf(3)))
    EXPECT_EQ(Got, std::optional<std::vector<uint8_t>>(P));
  else
    EXPECT_EQ(A->Tier->counters().Dropped, 1u);
  // publishNow keeps the same bound.
  llvm::Expected<bool> Now = A->Tier->publishNow(nameOf(4), *Entry);
  EXPECT_FALSE(Now && *Now) << "publishNow wrote a value over MaxValueBytes";
  if (!Now)
    llvm::consumeError(Now.takeError());
}

} // namespace
