//===- HostQueue.cpp - In-order work queues of kiln-run's plans -----------===//

#include "support/HostQueue.h"

using namespace kiln;

void HostEvent::complete(std::optional<std::string> Why) {
  {
    std::lock_guard<std::mutex> L(M);
    Done = true;
    Failure = std::move(Why);
  }
  CV.notify_all();
}

std::optional<std::string> HostEvent::wait() {
  std::unique_lock<std::mutex> L(M);
  CV.wait(L, [&] { return Done; });
  return Failure;
}

HostQueue::HostQueue(bool IsInline) : Inline(IsInline) {
  if (!Inline)
    Worker = std::thread([this] { loop(); });
}

HostQueue::~HostQueue() {
  if (!Inline) {
    {
      std::lock_guard<std::mutex> L(M);
      Stopping = true;
    }
    Changed.notify_all();
    Worker.join();
  }
}

void HostQueue::runOne(const std::function<llvm::Error()> &Work) {
  {
    std::lock_guard<std::mutex> L(M);
    if (Failure)
      return;
  }
  if (llvm::Error E = Work()) {
    std::string Why = llvm::toString(std::move(E));
    std::lock_guard<std::mutex> L(M);
    if (!Failure)
      Failure = std::move(Why);
  }
}

void HostQueue::loop() {
  std::unique_lock<std::mutex> L(M);
  for (;;) {
    Changed.wait(L, [&] { return Stopping || !Queue.empty(); });
    if (Queue.empty())
      return; // stopping, and everything has run
    Item Next = std::move(Queue.front());
    Queue.pop_front();
    Busy = true;
    L.unlock();
    if (Next.EvenAfterFailure)
      llvm::cantFail(Next.Work());
    else
      runOne(Next.Work);
    L.lock();
    Busy = false;
    Changed.notify_all();
  }
}

llvm::Error HostQueue::push(std::function<llvm::Error()> Work) {
  if (Inline) {
    {
      std::lock_guard<std::mutex> L(M);
      if (Failure)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       *Failure);
    }
    if (llvm::Error E = Work()) {
      std::string Why = llvm::toString(std::move(E));
      std::lock_guard<std::mutex> L(M);
      Failure = Why;
      return llvm::createStringError(llvm::inconvertibleErrorCode(), Why);
    }
    return llvm::Error::success();
  }
  {
    std::lock_guard<std::mutex> L(M);
    Queue.push_back({std::move(Work), false});
  }
  Changed.notify_all();
  return llvm::Error::success();
}

std::shared_ptr<HostEvent> HostQueue::record() {
  auto E = std::make_shared<HostEvent>();
  if (Inline) {
    std::lock_guard<std::mutex> L(M);
    E->complete(Failure);
    return E;
  }
  // Run in order, even on a failed queue: it completes with the failure
  // the queue has by then.
  std::lock_guard<std::mutex> L(M);
  Queue.push_back({[this, E] {
    std::optional<std::string> Why;
    {
      std::lock_guard<std::mutex> G(M);
      Why = Failure;
    }
    E->complete(std::move(Why));
    return llvm::Error::success();
  }, true});
  Changed.notify_all();
  return E;
}

llvm::Error HostQueue::wait(std::shared_ptr<HostEvent> E,
                            std::string WhyFailed) {
  auto Work = [E, WhyFailed]() -> llvm::Error {
    if (std::optional<std::string> Why = E->wait())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     WhyFailed + *Why);
    return llvm::Error::success();
  };
  return push(std::move(Work));
}

llvm::Error HostQueue::synchronize() {
  std::unique_lock<std::mutex> L(M);
  Changed.wait(L, [&] { return Queue.empty() && !Busy; });
  if (Failure)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *Failure);
  return llvm::Error::success();
}

void HostQueue::reset() {
  std::unique_lock<std::mutex> L(M);
  Changed.wait(L, [&] { return Queue.empty() && !Busy; });
  Failure.reset();
}
