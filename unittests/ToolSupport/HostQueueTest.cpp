//===- HostQueueTest.cpp - The in-order queues of kiln-run's plans --------===//

#include "support/HostQueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace kiln;

namespace {

llvm::Error failure(const char *Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Why);
}

TEST(HostQueue, ThreadedQueueRunsInOrderOffTheHostThread) {
  HostQueue Q(/*Inline=*/false);
  std::vector<int> Order;
  std::thread::id Host = std::this_thread::get_id(), Ran;
  for (int I = 0; I < 100; ++I)
    ASSERT_FALSE(bool(Q.push([&, I] {
      Order.push_back(I);
      Ran = std::this_thread::get_id();
      return llvm::Error::success();
    })));
  ASSERT_FALSE(bool(Q.synchronize()));
  ASSERT_EQ(Order.size(), 100u);
  for (int I = 0; I < 100; ++I)
    EXPECT_EQ(Order[I], I);
  EXPECT_NE(Ran, Host);
}

TEST(HostQueue, InlineQueueRunsNowAndReturnsItsFailure) {
  HostQueue Q(/*Inline=*/true);
  int Ran = 0;
  ASSERT_FALSE(bool(Q.push([&] {
    ++Ran;
    return llvm::Error::success();
  })));
  EXPECT_EQ(Ran, 1);
  llvm::Error E = Q.push([] { return failure("boom"); });
  EXPECT_EQ(llvm::toString(std::move(E)), "boom");
  // Failed: later work is refused with the failure, events carry it.
  llvm::Error Later = Q.push([&] {
    ++Ran;
    return llvm::Error::success();
  });
  EXPECT_EQ(llvm::toString(std::move(Later)), "boom");
  EXPECT_EQ(Ran, 1);
  EXPECT_EQ(Q.record()->wait(), std::optional<std::string>("boom"));
  Q.reset();
  EXPECT_FALSE(bool(Q.synchronize()));
}

TEST(HostQueue, EventsOrderQueuesAndCarryFailures) {
  HostQueue A(false), B(false);
  std::atomic<bool> Release{false};
  std::atomic<int> X{0};
  int SeenByB = -1;
  // A holds back until released; B waits for A's event first.
  ASSERT_FALSE(bool(A.push([&] {
    while (!Release.load())
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    X = 42;
    return llvm::Error::success();
  })));
  std::shared_ptr<HostEvent> Done = A.record();
  ASSERT_FALSE(bool(B.wait(Done, "")));
  ASSERT_FALSE(bool(B.push([&] {
    SeenByB = X.load();
    return llvm::Error::success();
  })));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(SeenByB, -1); // still waiting
  Release = true;
  ASSERT_FALSE(bool(B.synchronize()));
  EXPECT_EQ(SeenByB, 42);

  // A fails: its later work is skipped, the event it records after the
  // failure completes with it, and B, waiting for that event, fails too.
  bool Skipped = true;
  ASSERT_FALSE(bool(A.push([] { return failure("launch failed"); })));
  ASSERT_FALSE(bool(A.push([&] {
    Skipped = false;
    return llvm::Error::success();
  })));
  ASSERT_FALSE(bool(B.wait(A.record(), "")));
  EXPECT_EQ(llvm::toString(A.synchronize()), "launch failed");
  EXPECT_EQ(llvm::toString(B.synchronize()), "launch failed");
  EXPECT_TRUE(Skipped);
  A.reset();
  B.reset();
  EXPECT_FALSE(bool(A.synchronize()));
  EXPECT_FALSE(bool(B.synchronize()));
}

} // namespace
