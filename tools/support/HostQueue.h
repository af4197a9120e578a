//===- HostQueue.h - In-order work queues of kiln-run's plans ---*- C++ -*-===//
//
// Part of the tools' support library (KilnToolSupport).
//
// A plan's streams (docs/Tools.md §3.6): each is an in-order queue of work
// (launches, copies, read-backs, collectives) run by a thread of its own,
// with events that one queue records and another (or the host) waits for.
// The plan's own stream is an *inline* queue: its work runs on the host's
// thread as it is queued, so that a plan without streams runs as it always
// did. A failure stops its queue: the work after it is skipped, and the
// events recorded after it carry the failure to the queues that wait.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_SUPPORT_HOSTQUEUE_H
#define KILN_TOOLS_SUPPORT_HOSTQUEUE_H

#include "llvm/Support/Error.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace kiln {

/// A point in a queue: complete once the work queued before it has run (or
/// been skipped); Failure then says whether that queue had failed.
class HostEvent {
public:
  void complete(std::optional<std::string> Failure);
  /// Waits until complete; the failure it carries, if any.
  std::optional<std::string> wait();

private:
  std::mutex M;
  std::condition_variable CV;
  bool Done = false;
  std::optional<std::string> Failure;
};

class HostQueue {
public:
  /// \p Inline: run each piece of work on the caller's thread when queued.
  explicit HostQueue(bool Inline);
  /// Waits for the queued work, then ends the thread.
  ~HostQueue();
  HostQueue(const HostQueue &) = delete;
  HostQueue &operator=(const HostQueue &) = delete;

  /// Queues \p Work. An inline queue runs it now and returns its error (the
  /// queue is then failed too); a threaded one returns success, and a
  /// failure shows in synchronize().
  llvm::Error push(std::function<llvm::Error()> Work);
  /// An event complete once everything queued so far has run.
  std::shared_ptr<HostEvent> record();
  /// Later work waits for \p E; when \p E carries a failure this queue fails
  /// with \p WhyFailed followed by it. An inline queue waits now.
  llvm::Error wait(std::shared_ptr<HostEvent> E, std::string WhyFailed);
  /// Waits for everything queued so far; the queue's failure, which stays
  /// until reset().
  llvm::Error synchronize();
  /// Waits, then clears the failure (each run of a plan starts afresh).
  void reset();

private:
  void loop();
  /// Runs \p Work unless the queue has failed; records its failure.
  void runOne(const std::function<llvm::Error()> &Work);

  bool Inline;
  std::mutex M;
  std::condition_variable Changed;
  struct Item {
    std::function<llvm::Error()> Work;
    bool EvenAfterFailure = false; ///< an event's completion
  };
  std::deque<Item> Queue;
  bool Busy = false, Stopping = false;
  std::optional<std::string> Failure; ///< guarded by M
  std::thread Worker;
};

} // namespace kiln

#endif // KILN_TOOLS_SUPPORT_HOSTQUEUE_H
