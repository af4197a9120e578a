//===- ScanBoundTest.cpp - Listing a hostile server's keys ends -----------===//
//
// A fake server (a thread on a Unix socket speaking just enough RESP) whose
// SCAN cursor never comes back to 0: once `kiln-store remote stats` never
// ended and its memory grew. Every listing now stops at a bound (steps,
// keys, name bytes, time) with an error naming it.
//
//===----------------------------------------------------------------------===//

#include "Support/RedisServer.h"
#include "Support/TempDir.h"

#include "kiln/Store/RemoteTier.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace kiln;
using namespace kiln::test;
using std::chrono::milliseconds;

namespace {

/// A server that answers SCAN through \p Scan (given the request number,
/// it returns the keys of that step; the cursor is always "1"), STRLEN
/// with 10 and anything else with +OK.
class FakeServer {
public:
  using ScanReply = std::function<std::vector<std::string>(uint64_t Step)>;

  FakeServer(std::string Path, ScanReply Scan, milliseconds Delay = {})
      : Path(std::move(Path)), Scan(std::move(Scan)), Delay(Delay) {
    Listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un A{};
    A.sun_family = AF_UNIX;
    std::snprintf(A.sun_path, sizeof(A.sun_path), "%s", this->Path.c_str());
    Ok = Listener >= 0 &&
         ::bind(Listener, reinterpret_cast<sockaddr *>(&A), sizeof(A)) == 0 &&
         ::listen(Listener, 4) == 0;
    if (Ok)
      Thread = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    Stop = true;
    if (Thread.joinable())
      Thread.join();
    if (Listener >= 0)
      ::close(Listener);
  }
  bool ok() const { return Ok; }
  uint64_t scans() const { return Scans.load(); }

private:
  /// Waits until \p FD is readable or the server stops.
  bool readable(int FD) {
    while (!Stop) {
      pollfd P{FD, POLLIN, 0};
      int N = ::poll(&P, 1, 50);
      if (N > 0)
        return true;
    }
    return false;
  }
  void serve() {
    while (readable(Listener)) {
      int C = ::accept4(Listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (C < 0)
        continue;
      talk(C);
      ::close(C);
    }
  }
  /// One command (a RESP array of bulk strings) from \p Buf, if whole.
  static bool parse(std::string &Buf, std::vector<std::string> &Argv) {
    Argv.clear();
    size_t P = 0;
    auto Line = [&](std::string &Out) {
      size_t E = Buf.find("\r\n", P);
      if (E == std::string::npos)
        return false;
      Out = Buf.substr(P, E - P);
      P = E + 2;
      return true;
    };
    std::string L;
    if (!Line(L) || L.empty() || L[0] != '*')
      return false;
    long N = std::stol(L.substr(1));
    for (long I = 0; I < N; ++I) {
      if (!Line(L) || L.empty() || L[0] != '$')
        return false;
      size_t Len = std::stoul(L.substr(1));
      if (Buf.size() < P + Len + 2)
        return false;
      Argv.push_back(Buf.substr(P, Len));
      P += Len + 2;
    }
    Buf.erase(0, P);
    return true;
  }
  static std::string bulk(const std::string &S) {
    return "$" + std::to_string(S.size()) + "\r\n" + S + "\r\n";
  }
  void talk(int C) {
    std::string Buf;
    char Chunk[4096];
    std::vector<std::string> Argv;
    while (readable(C)) {
      ssize_t N = ::read(C, Chunk, sizeof(Chunk));
      if (N <= 0)
        return;
      Buf.append(Chunk, size_t(N));
      while (parse(Buf, Argv)) {
        std::string Reply = "+OK\r\n";
        if (!Argv.empty() && Argv[0] == "SCAN") {
          if (Delay.count())
            std::this_thread::sleep_for(Delay);
          std::vector<std::string> Keys = Scan(Scans++);
          Reply =
              "*2\r\n" + bulk("1") + "*" + std::to_string(Keys.size()) + "\r\n";
          for (const std::string &K : Keys)
            Reply += bulk(K);
        } else if (!Argv.empty() && Argv[0] == "STRLEN") {
          Reply = ":10\r\n";
        }
        for (size_t Done = 0; Done < Reply.size();) {
          ssize_t W = ::write(C, Reply.data() + Done, Reply.size() - Done);
          if (W <= 0)
            return;
          Done += size_t(W);
        }
      }
    }
  }

  std::string Path;
  ScanReply Scan;
  milliseconds Delay;
  int Listener = -1;
  bool Ok = false;
  std::atomic<bool> Stop{false};
  std::atomic<uint64_t> Scans{0};
  std::thread Thread;
};

class ScanBound : public ::testing::Test {
protected:
  std::shared_ptr<RemoteTier> tier() {
    RemoteConfig C;
    C.Url = "unix://" + Dir.sub("redis.sock");
    C.KeyFile = writeFleetKeyFile(Dir.sub("fleet.key"));
    C.ConnectTimeout = C.RequestTimeout = milliseconds(3000);
    auto T = RemoteTier::create(C, nullptr);
    if (!T) {
      ADD_FAILURE() << llvm::toString(T.takeError());
      return nullptr;
    }
    return std::move(*T);
  }
  /// The error of a listing that must fail, as text.
  std::string failure(RemoteTier &T, const RemoteTier::ListLimits &L) {
    auto Keys = T.listKeys(L);
    if (Keys) {
      ADD_FAILURE() << "listed " << Keys->size() << " keys";
      return "";
    }
    return llvm::toString(Keys.takeError());
  }
  TempDir Dir;
};

bool has(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

TEST_F(ScanBound, CursorThatNeverReturnsStopsAtTheDefaultBound) {
  FakeServer S(Dir.sub("redis.sock"),
               [](uint64_t) { return std::vector<std::string>(); });
  ASSERT_TRUE(S.ok());
  auto T = tier();
  ASSERT_NE(T, nullptr);
  auto Keys = T->listKeys();
  ASSERT_FALSE(!!Keys) << "listed " << Keys->size() << " keys";
  std::string Why = llvm::toString(Keys.takeError());
  EXPECT_TRUE(has(Why, "SCAN cursor did not come back to 0 within 65536 "
                       "steps"))
      << Why;
  EXPECT_EQ(S.scans(), 65536u);
}

TEST_F(ScanBound, TheSameKeysAgainAndAgainAreListedOnce) {
  FakeServer S(Dir.sub("redis.sock"), [](uint64_t) {
    return std::vector<std::string>{"kiln:cpu:0123456789abcdef:00",
                                    "kiln:cpu:0123456789abcdef:01"};
  });
  ASSERT_TRUE(S.ok());
  auto T = tier();
  ASSERT_NE(T, nullptr);
  RemoteTier::ListLimits L;
  L.MaxSteps = 100;
  std::string Why = failure(*T, L);
  EXPECT_TRUE(has(Why, "within 100 steps (after 100 SCAN steps, 2 keys)"))
      << Why;
}

TEST_F(ScanBound, EndlessKeysStopAtTheKeyAndByteBounds) {
  FakeServer S(Dir.sub("redis.sock"), [](uint64_t Step) {
    return std::vector<std::string>{"kiln:cpu:0123456789abcdef:" +
                                    std::to_string(Step)};
  });
  ASSERT_TRUE(S.ok());
  auto T = tier();
  ASSERT_NE(T, nullptr);
  RemoteTier::ListLimits L;
  L.MaxKeys = 50;
  std::string Why = failure(*T, L);
  EXPECT_TRUE(has(Why, "the server named more than 50 keys")) << Why;
  L = RemoteTier::ListLimits();
  L.MaxNameBytes = 1000;
  Why = failure(*T, L);
  EXPECT_TRUE(has(Why, "the keys' names take more than 1000 bytes")) << Why;
}

TEST_F(ScanBound, SlowEndlessScanStopsAtTheTimeBound) {
  FakeServer S(
      Dir.sub("redis.sock"),
      [](uint64_t) { return std::vector<std::string>(); }, milliseconds(20));
  ASSERT_TRUE(S.ok());
  auto T = tier();
  ASSERT_NE(T, nullptr);
  RemoteTier::ListLimits L;
  L.MaxTime = milliseconds(300);
  auto T0 = std::chrono::steady_clock::now();
  std::string Why = failure(*T, L);
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();
  EXPECT_TRUE(has(Why, "it took more than 300 ms")) << Why;
  EXPECT_LT(Seconds, 3.0);
}

} // namespace
