//===- Watchdog.h - Stopping launches early: cancel and deadlines -*- C++ -*-===//
//
// A running kernel cannot be killed on a CPU without killing its thread, so
// launches stop cooperatively: the compiled code polls a LaunchStop's flag
// at the back edge of its loops and after every cube (CubeABI.h), and returns
// when it is set. cancel() sets it from any thread; a Watchdog sets it when a
// deadline passes. docs/Lowering.md, "Cancellation", has the whole design.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_WATCHDOG_H
#define KILN_RUNTIME_WATCHDOG_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace kiln {

/// The flag a launch's code polls, and why it was set. Reusable: reset()
/// clears it for the next launch once none runs with it. On a cache line of
/// its own: the polls of every worker read it while the launch runs, and
/// nothing else written there may take the line from them.
class alignas(64) LaunchStop {
public:
  enum class Reason : uint32_t { None = 0, Cancelled = 1, TimedOut = 2 };

  /// Asks the launches running with it to stop; the first reason set stays.
  void cancel() { set(Reason::Cancelled); }
  void timeOut() { set(Reason::TimedOut); }
  void reset() { Flag.store(0, std::memory_order_relaxed); }
  /// Clears the flag if \p R set it (a deadline that stopped one launch
  /// only); whether it did.
  bool clear(Reason R) {
    uint32_t Expected = static_cast<uint32_t>(R);
    return Flag.compare_exchange_strong(Expected, 0,
                                        std::memory_order_relaxed);
  }
  bool stopped() const { return Flag.load(std::memory_order_relaxed) != 0; }
  Reason reason() const {
    return static_cast<Reason>(Flag.load(std::memory_order_relaxed));
  }
  /// What LaunchArgs::Stop points at: the compiled code reads it with a
  /// relaxed atomic load of 4 bytes.
  const uint32_t *flag() const {
    return reinterpret_cast<const uint32_t *>(&Flag);
  }

private:
  void set(Reason R) {
    uint32_t Expected = 0;
    Flag.compare_exchange_strong(Expected, static_cast<uint32_t>(R),
                                 std::memory_order_relaxed);
  }
  std::atomic<uint32_t> Flag{0};
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                    std::atomic<uint32_t>::is_always_lock_free,
                "the compiled code reads the flag as a plain u32");
};

/// One thread that times LaunchStops out at their deadlines. It is started
/// by the first arm(), so a device whose launches have no deadline has none.
/// Thread-safe.
class Watchdog {
public:
  using Clock = std::chrono::steady_clock;

  Watchdog() = default;
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// Calls \p Stop.timeOut() at \p Deadline unless disarmed first. The
  /// ticket to disarm it with.
  uint64_t arm(LaunchStop &Stop, Clock::time_point Deadline);
  /// Once it returns, the watchdog no longer touches the LaunchStop of
  /// \p Ticket (it may have timed it out already).
  void disarm(uint64_t Ticket);

  /// Arms on construction (when \p Timeout is positive), disarms on
  /// destruction.
  class Scope {
  public:
    Scope(Watchdog &W, LaunchStop &Stop, std::chrono::microseconds Timeout)
        : W(W) {
      if (Timeout.count() > 0)
        Ticket = W.arm(Stop, Clock::now() + Timeout);
    }
    ~Scope() {
      if (Ticket)
        W.disarm(Ticket);
    }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    Watchdog &W;
    uint64_t Ticket = 0;
  };

private:
  void run();

  std::mutex M;
  std::condition_variable Changed;
  /// Armed stops by (deadline, ticket), and each ticket's deadline.
  std::map<std::pair<Clock::time_point, uint64_t>, LaunchStop *> Armed;
  std::unordered_map<uint64_t, Clock::time_point> Deadlines;
  uint64_t NextTicket = 1;
  bool Quit = false;
  std::thread Thread;
};

} // namespace kiln

#endif // KILN_RUNTIME_WATCHDOG_H
