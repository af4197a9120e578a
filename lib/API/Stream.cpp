//===- Stream.cpp - Streams and events of the public API ------------------===//
//
// A stream is a queue drained by one task at a time on its device's TBB
// arena: submit() queues an item and, when no task is draining the stream,
// enqueues one (tbb::task_arena::enqueue), so launch() returns at once and
// the streams of a device run side by side. A wait on an incomplete event
// parks the stream without holding a thread: the event's completion queues
// the drain task again. A host thread in synchronize takes the queue over
// from a draining task between two items and runs it itself; waiting, it
// spins briefly (helping launches under way), then sleeps.
//
// Submitting is the hot path of a runtime that queues long command lists:
// its items come from a per-stream pool (no allocation once the queue has
// been that deep), the drain thread takes every queued item under one lock
// acquisition, the stream's locks spin briefly before sleeping, and a drain
// task that empties the queue waits a few microseconds for more before it
// ends, so a burst of submits wakes one worker, not one per submit
// (docs/Performance.md, "Bursts"; docs/API.md, "Performance notes").
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include <sys/mman.h>

using namespace kiln;
using namespace kiln::api;
using namespace kiln::api::detail;

//===-- Events ------------------------------------------------------------===//

void EventState::complete(Status S) {
  std::vector<std::function<void()>> Run;
  {
    std::lock_guard<std::mutex> L(M);
    Result = std::move(S);
    Complete.store(true, std::memory_order_release);
    Run.swap(Waiters);
    CV.notify_all();
  }
  for (auto &F : Run)
    F();
}

bool EventState::whenComplete(std::function<void()> Resume) {
  std::lock_guard<std::mutex> L(M);
  if (Complete.load(std::memory_order_relaxed))
    return false;
  Waiters.push_back(std::move(Resume));
  return true;
}

/// Spins for up to this long before sleeping: a launch that ends within it
/// is seen without a wake-up through the kernel.
static constexpr std::chrono::microseconds SpinBeforeSleep{50};
/// How often a host thread asleep in a wait (a stream's synchronize(), an
/// event's) wakes to help a launch that started meanwhile.
static constexpr std::chrono::microseconds HelpPoll{200};

template <typename Pred>
static bool spinUntil(Pred Done,
                      std::chrono::microseconds Window = SpinBeforeSleep) {
  auto Until = std::chrono::steady_clock::now() + Window;
  unsigned N = 0;
  while (!Done()) {
    if ((++N & 63) == 0 && std::chrono::steady_clock::now() > Until)
      return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
  }
  return true;
}

/// Waits until \p Done(): while \p D (may be null) has launches under way,
/// the waiting thread runs cubes of them (Executor::helpWithCubes), one
/// more core's worth, as the master thread of an OpenMP loop; with none to
/// help for SpinBeforeSleep it calls \p Sleep, which waits on the caller's
/// condition for at most HelpPoll (a long launch that starts later still
/// gets the thread's help).
template <typename DoneFn, typename SleepFn>
static void waitHelping(DeviceState *D, DoneFn Done, SleepFn Sleep) {
  // The device may be closing (or closed: Dev is null): help only while it
  // is certainly open, and never wait for its lock.
  auto Help = [&] {
    if (!D)
      return false;
    std::shared_lock<std::shared_mutex> Alive(D->Life, std::try_to_lock);
    return Alive.owns_lock() && D->Dev &&
           D->Dev->executor().helpWithCubes(Done);
  };
  unsigned Spins = 0;
  while (!Done()) {
    bool Helped = false;
    if (spinUntil([&] {
          if (Done())
            return true;
          if ((++Spins & 7) == 0 && Help())
            Helped = true;
          return Helped;
        }) &&
        Helped)
      continue;
    if (Done())
      break;
    Sleep();
  }
}

Status EventState::wait() {
  auto Done = [&] { return Complete.load(std::memory_order_acquire); };
  std::shared_ptr<DeviceState> D = Device.lock();
  waitHelping(D.get(), Done, [&] {
    std::unique_lock<std::mutex> L(M);
    CV.wait_for(L, HelpPoll, Done);
  });
  std::lock_guard<std::mutex> L(M);
  return Result;
}

bool Event::isComplete() const {
  return S && S->Complete.load(std::memory_order_acquire);
}

Status Event::synchronize() const {
  if (!S)
    return Status(ErrorCode::InvalidArgument,
                  "Event::synchronize: the event is null");
  // Recorded after the launch whose debug text this thread is handling:
  // it cannot complete before the callback returns.
  if (const CallbackSource *C = currentCallback();
      C && C->Stream && C->Stream == S->Stream &&
      !S->Complete.load(std::memory_order_acquire))
    return selfWait("Event::synchronize",
                    "a launch queued before the event on its stream");
  return S->wait();
}

//===-- Streams -----------------------------------------------------------===//

std::unique_lock<std::mutex> detail::lockBriefly(std::mutex &M) {
  for (unsigned N = 0; N != 128; ++N) {
    if (M.try_lock())
      return std::unique_lock<std::mutex>(M, std::adopt_lock);
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
  }
  return std::unique_lock<std::mutex>(M);
}

void StreamState::Item::clear() {
  Seq = 0;
  Work = nullptr;
  if (IsLaunch) {
    IsLaunch = false;
    Launch.Code = LoadedKernel();
    Launch.CubeCount = {1, 1, 1};
    Launch.IndirectCount = nullptr;
    Launch.Bindings.clear();
    Launch.Keep.clear();
    Launch.TimeoutMilliseconds = 0;
  }
  WaitFor.reset();
  Signal.reset();
}

/// Items a pool makes at once when it is empty: as many as it has already
/// (at least MinSlab, at most MaxSlab), so that a queue that grows to N
/// items pays for new memory in about log2(N) submits, not in every few.
static constexpr size_t MinSlab = 64, MaxSlab = 1024;

StreamState::Slab::Slab(size_t Count) {
  // Populated by the kernel at once: on a virtual machine a first touch of
  // each page can cost 10-20 us, about three times what a populated
  // mapping costs a page (docs/API.md, "Performance notes").
  size_t Bytes = Count * sizeof(Item);
  void *P = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (P == MAP_FAILED)
    return;
  Items = static_cast<Item *>(P);
  this->Count = Count;
  std::uninitialized_default_construct_n(Items, Count);
}

StreamState::Slab::~Slab() {
  if (!Items)
    return;
  std::destroy_n(Items, Count);
  munmap(Items, Count * sizeof(Item));
}

StreamState::Item *StreamState::takeItem() {
  size_t Have;
  {
    std::unique_lock<std::mutex> L = lockBriefly(PoolLock);
    if (Item *I = FreeItems) {
      FreeItems = I->Next;
      I->Next = nullptr;
      return I;
    }
    Have = PoolSize;
  }
  // A new slab, made without the lock: the drain thread may give items back
  // meanwhile.
  auto New = std::make_unique<Slab>(std::clamp(Have, MinSlab, MaxSlab));
  if (!New->Items)
    return nullptr;
  Item *Items = New->Items;
  size_t Count = New->Count;
  for (size_t I = 1; I + 1 < Count; ++I)
    Items[I].Next = &Items[I + 1];
  std::unique_lock<std::mutex> L = lockBriefly(PoolLock);
  Items[Count - 1].Next = FreeItems;
  FreeItems = &Items[1];
  Slabs.push_back(std::move(New));
  PoolSize += Count;
  return &Items[0];
}

void StreamState::giveBack(Item *I) {
  I->clear();
  ItemList One;
  One.push(I);
  giveBack(One);
}

void StreamState::giveBack(ItemList &Cleared) {
  if (Cleared.empty())
    return;
  std::unique_lock<std::mutex> L = lockBriefly(PoolLock);
  Cleared.Tail->Next = FreeItems;
  FreeItems = Cleared.Head;
  Cleared = ItemList();
}

void StreamState::fail(Status S, uint64_t At) {
  std::lock_guard<std::mutex> L(M);
  if (Error.ok()) {
    Error = std::move(S);
    FailedAfter = At;
    Failed.store(true, std::memory_order_release);
  }
}

void StreamState::kick() {
  if (Queue.empty() || Draining || Parked || TaskQueued)
    return;
  TaskQueued = true;
  Device->taskStarted();
  Device->Dev->executor().enqueue(
      [Self = shared_from_this()] { Self->runTask(); });
}

void StreamState::runTask() {
  {
    std::lock_guard<std::mutex> L(M);
    TaskQueued = false;
    if (Draining || Parked || Queue.empty()) {
      Device->taskEnded();
      return;
    }
    Draining = true;
  }
  drainLoop(0);
  Device->taskEnded();
}

void StreamState::drainHere(uint64_t UpTo) {
  {
    std::lock_guard<std::mutex> L(M);
    if (Draining || Parked || Queue.empty())
      return;
    Draining = true;
  }
  drainLoop(UpTo);
}

Status StreamState::submit(Item *I) {
  std::shared_lock<std::shared_mutex> Alive(Device->Life);
  Status E;
  if (Device->Closed)
    E = closedDevice();
  else {
    std::unique_lock<std::mutex> L = lockBriefly(M);
    if (Error.ok()) {
      I->Seq = ++Submitted;
      Queue.push(I);
      LastQueued.store(I->Seq, std::memory_order_release);
      kick();
      return Status();
    }
    E = Error;
  }
  giveBack(I);
  return E;
}

/// How long a drain task that emptied its queue waits for more before it
/// ends: longer than a submit takes, shorter than what a task queued behind
/// it on the arena would notice.
static constexpr std::chrono::microseconds LingerWindow{20};

bool StreamState::lingerForWork(std::unique_lock<std::mutex> &L) {
  uint64_t Seen = LastQueued.load(std::memory_order_relaxed);
  L.unlock();
  bool Came = spinUntil(
      [&] { return LastQueued.load(std::memory_order_acquire) != Seen; },
      LingerWindow);
  L.lock();
  return Came && !Queue.empty();
}

void StreamState::runItem(Item &I) {
  auto Skipped = [&] {
    if (!Failed.load(std::memory_order_acquire))
      return false;
    std::lock_guard<std::mutex> L(M);
    return I.Seq > FailedAfter;
  };
  if (I.WaitFor && !Skipped()) {
    Status W;
    {
      std::lock_guard<std::mutex> L(I.WaitFor->M);
      W = I.WaitFor->Result;
    }
    if (!W.ok())
      fail(Status(ErrorCode::Cancelled,
                  "waited for an event of a failed stream: " + W.str()),
           I.Seq - 1);
  }
  if ((I.Work || I.IsLaunch) && !Skipped()) {
    Status S = I.IsLaunch ? runLaunch(*Device, I.Launch, &Stop, this) : I.Work();
    if (!S.ok())
      fail(std::move(S), I.Seq - 1);
  }
  if (I.Signal) {
    Status Now;
    if (Skipped()) {
      std::lock_guard<std::mutex> L(M);
      Now = Error;
    }
    I.Signal->complete(std::move(Now));
  }
}

/// Items run that a drain thread clears and keeps before it gives them back
/// to the pool together.
static constexpr unsigned GiveBackEvery = 32;

void StreamState::drainLoop(uint64_t UpTo) {
  // The items taken from the queue at once, run without the lock, and those
  // run and cleared, not given back yet.
  ItemList Batch, Done;
  unsigned DoneCount = 0;
  for (;;) {
    if (Batch.empty()) {
      giveBack(Done);
      DoneCount = 0;
      std::unique_lock<std::mutex> L = lockBriefly(M);
      auto NothingToRun = [&] {
        return Queue.empty() || (UpTo && Queue.Head->Seq > UpTo);
      };
      if (NothingToRun() && (UpTo || !lingerForWork(L) || NothingToRun())) {
        Draining = false;
        kick(); // the rest, if the host stopped early
        Progress.notify_all();
        return;
      }
      Item *Front = Queue.Head;
      if (Front->WaitFor &&
          !Front->WaitFor->Complete.load(std::memory_order_acquire)) {
        // Park: the event's completion kicks this stream again.
        Parked = true;
        Draining = false;
        auto Self = shared_from_this();
        if (Front->WaitFor->whenComplete([Self] {
              std::lock_guard<std::mutex> G(Self->M);
              Self->Parked = false;
              Self->kick();
            }))
          return;
        Parked = false;
        Draining = true;
      }
      // Everything queued (up to UpTo): one lock for the whole batch.
      if (!UpTo || Queue.Tail->Seq <= UpTo) {
        Batch = Queue;
        Queue = ItemList();
      } else {
        while (!Queue.empty() && Queue.Head->Seq <= UpTo)
          Batch.push(Queue.pop());
      }
    }
    // A host thread waits in synchronize: a task gives it the queue (the
    // items taken back to the queue's front, in order) rather than keep it
    // spinning beside this one.
    if (!UpTo && HostsWaiting.load(std::memory_order_relaxed)) {
      giveBack(Done);
      DoneCount = 0;
      std::lock_guard<std::mutex> L(M);
      // Decided under M, where a host leaving synchronize counts itself
      // out and restarts a drain for what it leaves.
      if (!HostsWaiting.load(std::memory_order_relaxed))
        continue;
      Batch.append(Queue);
      Queue = Batch;
      Draining = false;
      HandedOver.store(true, std::memory_order_release);
      Progress.notify_all();
      return;
    }
    Item *I = Batch.pop();
    // An item that waits for an incomplete event goes back to the queue's
    // front with those after it, to park there.
    if (I->WaitFor && !I->WaitFor->Complete.load(std::memory_order_acquire)) {
      ItemList Back;
      Back.push(I);
      Back.append(Batch);
      std::lock_guard<std::mutex> L(M);
      Back.append(Queue);
      Queue = Back;
      continue;
    }
    runItem(*I);
    I->clear(); // drops what it kept alive before saying it ran
    Done.push(I);
    if (++DoneCount == GiveBackEvery) {
      giveBack(Done);
      DoneCount = 0;
    }
    // seq_cst, with WakeAt's update in synchronize: either the sleeper sees
    // this count before it sleeps, or this sees its target.
    uint64_t Now = Finished.fetch_add(1, std::memory_order_seq_cst) + 1;
    if (Now >= WakeAt.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> L(M);
      WakeAt.store(UINT64_MAX, std::memory_order_relaxed);
      Progress.notify_all();
    }
  }
}

Status StreamState::synchronize() {
  uint64_t Target;
  {
    std::lock_guard<std::mutex> L(M);
    Target = Submitted;
  }
  auto Done = [&] {
    return Finished.load(std::memory_order_acquire) >= Target;
  };
  // A worker draining the stream hands the queue over between two items
  // (drainLoop): this thread, blocked anyway, then runs the launches itself,
  // as the master thread of an OpenMP program runs its loops, and the
  // workers stay free to run their cubes beside it.
  HostsWaiting.fetch_add(1, std::memory_order_seq_cst);
  while (!Done()) {
    drainHere(Target);
    if (Done())
      break;
    // Another thread drains the stream: help its launches until they are
    // done or it hands the queue over.
    auto DoneOrHandedOver = [&] {
      return Done() || HandedOver.load(std::memory_order_acquire);
    };
    waitHelping(Device.get(), DoneOrHandedOver, [&] {
      std::unique_lock<std::mutex> L(M);
      // Woken when Target is reached (or by the drain's end, or HelpPoll
      // later, to help a launch that started since).
      uint64_t At = WakeAt.load(std::memory_order_seq_cst);
      while (Target < At && !WakeAt.compare_exchange_weak(
                                At, Target, std::memory_order_seq_cst))
        ;
      Progress.wait_for(L, HelpPoll, DoneOrHandedOver);
    });
    HandedOver.store(false, std::memory_order_relaxed);
  }
  std::lock_guard<std::mutex> L(M);
  HostsWaiting.fetch_sub(1, std::memory_order_relaxed);
  // A task may have handed this thread items queued after Target: a new
  // one runs them.
  kick();
  return Error;
}

Status detail::synchronizeStreams(DeviceState &D) {
  std::vector<std::shared_ptr<StreamState>> Live;
  {
    std::lock_guard<std::mutex> L(D.StreamsLock);
    for (auto &W : D.Streams)
      if (auto S = W.lock())
        Live.push_back(std::move(S));
  }
  Status First;
  for (auto &S : Live) {
    Status St = S->synchronize();
    if (First.ok() && !St.ok())
      First = std::move(St);
  }
  return First;
}

static Status nullStream(const char *Fn) {
  return Status(ErrorCode::InvalidArgument,
                std::string("Stream::") + Fn + ": the stream is null");
}

Result<Stream> api::Device::createStream() {
  if (!S)
    return Status(ErrorCode::InvalidArgument,
                  "createStream: the device is null (moved from)");
  {
    std::shared_lock<std::shared_mutex> Alive(S->Life);
    if (S->Closed)
      return closedDevice();
  }
  auto St = std::make_shared<StreamState>();
  St->Device = S;
  std::lock_guard<std::mutex> L(S->StreamsLock);
  // Forget streams that are gone, so the list stays as long as the live ones.
  std::erase_if(S->Streams, [](const std::weak_ptr<StreamState> &W) {
    return W.expired();
  });
  S->Streams.push_back(St);
  return StreamState::make(std::move(St));
}

Status api::Device::synchronize() {
  if (!S)
    return Status(ErrorCode::InvalidArgument,
                  "synchronize: the device is null (moved from)");
  if (const CallbackSource *C = currentCallback();
      C && C->Stream && C->Device == S.get())
    return selfWait("Device::synchronize",
                    "a launch on one of the device's streams");
  return synchronizeStreams(*S);
}

static Status noItem(const char *Fn) {
  return Status(ErrorCode::OutOfMemory,
                std::string("Stream::") + Fn + ": cannot allocate a queue entry");
}

/// Checks and queues a launch (indirect when \p CubeCounts is given).
static Status queueLaunch(StreamState &S, const api::Kernel &K, Dim3 CubeCount,
                          const BufferView *CubeCounts,
                          std::span<const Arg> Args, const char *Fn) {
  const std::shared_ptr<KernelState> &KS = KernelState::of(K);
  StreamState::Item *I = S.takeItem();
  if (!I)
    return noItem(Fn);
  I->IsLaunch = true;
  Status E;
  if (KS && KS->Device.lock() != S.Device)
    E = Status(ErrorCode::InvalidArgument, std::string("Stream::") + Fn +
                                               ": kernel '" + K.name() +
                                               "' belongs to another device");
  else
    E = prepareLaunch(I->Launch, K, CubeCount, Args);
  if (E.ok() && CubeCounts)
    E = prepareIndirect(I->Launch, *CubeCounts, "Stream::launchIndirect");
  if (!E.ok()) {
    S.giveBack(I);
    // The work queued after it was meant to follow it: fail the stream
    // (what was queued before still runs).
    uint64_t Last;
    {
      std::lock_guard<std::mutex> G(S.M);
      Last = S.Submitted;
    }
    S.fail(E, Last);
    return E;
  }
  I->Launch.TimeoutMilliseconds =
      S.TimeoutMilliseconds.load(std::memory_order_relaxed);
  return S.submit(I);
}

Status Stream::launch(const api::Kernel &K, Dim3 CubeCount,
                      std::span<const Arg> Args) {
  if (!S)
    return nullStream("launch");
  if (S->Failed.load(std::memory_order_acquire))
    return status();
  return queueLaunch(*S, K, CubeCount, nullptr, Args, "launch");
}

Status Stream::launchIndirect(const api::Kernel &K,
                              const BufferView &CubeCounts,
                              std::span<const Arg> Args) {
  if (!S)
    return nullStream("launchIndirect");
  if (S->Failed.load(std::memory_order_acquire))
    return status();
  return queueLaunch(*S, K, {1, 1, 1}, &CubeCounts, Args, "launchIndirect");
}

/// Queues the copy \p Work.
static Status queueWork(StreamState &S, std::function<Status()> Work,
                        const char *Fn) {
  StreamState::Item *I = S.takeItem();
  if (!I)
    return noItem(Fn);
  I->Work = std::move(Work);
  return S.submit(I);
}

static Status checkRange(const char *Fn, const api::Buffer &B, uint64_t Offset,
                         uint64_t Bytes, const char *Which) {
  if (!B.valid())
    return Status(ErrorCode::InvalidArgument,
                  std::string("Stream::") + Fn + ": the " + Which +
                      " buffer is null");
  if (Offset > B.size() || Bytes > B.size() - Offset)
    return Status(ErrorCode::InvalidArgument,
                  std::string("Stream::") + Fn + ": " + std::to_string(Bytes) +
                      " bytes at offset " + std::to_string(Offset) +
                      " do not fit in the " + Which + " buffer of " +
                      std::to_string(B.size()) + " bytes");
  return Status();
}

Status Stream::copyToBuffer(const api::Buffer &Dst, uint64_t DstOffset,
                            const void *Src, uint64_t Bytes) {
  if (!S)
    return nullStream("copyToBuffer");
  if (Status E = checkRange("copyToBuffer", Dst, DstOffset, Bytes,
                            "destination");
      !E.ok())
    return E;
  if (!Src && Bytes)
    return Status(ErrorCode::InvalidArgument,
                  "Stream::copyToBuffer: the source address is null");
  std::shared_ptr<BufferState> B = BufferState::of(Dst);
  return queueWork(
      *S,
      [B, DstOffset, Src, Bytes] {
        if (Bytes)
          std::memcpy(static_cast<char *>(B->Data) + DstOffset, Src, Bytes);
        return Status();
      },
      "copyToBuffer");
}

Status Stream::copyFromBuffer(void *Dst, const api::Buffer &Src,
                              uint64_t SrcOffset, uint64_t Bytes) {
  if (!S)
    return nullStream("copyFromBuffer");
  if (Status E = checkRange("copyFromBuffer", Src, SrcOffset, Bytes, "source");
      !E.ok())
    return E;
  if (!Dst && Bytes)
    return Status(ErrorCode::InvalidArgument,
                  "Stream::copyFromBuffer: the destination address is null");
  std::shared_ptr<BufferState> B = BufferState::of(Src);
  return queueWork(
      *S,
      [B, SrcOffset, Dst, Bytes] {
        if (Bytes)
          std::memcpy(Dst, static_cast<char *>(B->Data) + SrcOffset, Bytes);
        return Status();
      },
      "copyFromBuffer");
}

Status Stream::copyBuffer(const api::Buffer &Dst, uint64_t DstOffset,
                          const api::Buffer &Src, uint64_t SrcOffset,
                          uint64_t Bytes) {
  if (!S)
    return nullStream("copyBuffer");
  if (Status E = checkRange("copyBuffer", Dst, DstOffset, Bytes, "destination");
      !E.ok())
    return E;
  if (Status E = checkRange("copyBuffer", Src, SrcOffset, Bytes, "source");
      !E.ok())
    return E;
  std::shared_ptr<BufferState> D = BufferState::of(Dst);
  std::shared_ptr<BufferState> Sr = BufferState::of(Src);
  return queueWork(
      *S,
      [D, DstOffset, Sr, SrcOffset, Bytes] {
        if (Bytes)
          std::memmove(static_cast<char *>(D->Data) + DstOffset,
                       static_cast<char *>(Sr->Data) + SrcOffset, Bytes);
        return Status();
      },
      "copyBuffer");
}

Result<Event> Stream::record() {
  if (!S)
    return nullStream("record");
  auto E = std::make_shared<EventState>();
  E->Stream = S.get();
  E->Device = S->Device;
  StreamState::Item *I = S->takeItem();
  if (!I)
    return noItem("record");
  I->Signal = E;
  if (Status St = S->submit(I); !St.ok()) {
    if (St.code() == ErrorCode::Cancelled && !S->Failed.load())
      return St; // the device is gone
    E->complete(std::move(St));
  }
  return EventState::make(std::move(E));
}

Status Stream::wait(const Event &E) {
  if (!S)
    return nullStream("wait");
  const std::shared_ptr<EventState> &ES = EventState::of(E);
  if (!ES)
    return Status(ErrorCode::InvalidArgument, "Stream::wait: the event is null");
  StreamState::Item *I = S->takeItem();
  if (!I)
    return noItem("wait");
  I->WaitFor = ES;
  return S->submit(I);
}

/// Whether this thread runs a debug-print callback of a launch on \p S.
static bool inOwnCallback(const StreamState &S) {
  const CallbackSource *C = currentCallback();
  return C && C->Stream == &S;
}

bool Stream::inCallback() const { return S && inOwnCallback(*S); }

Status Stream::synchronize() {
  if (!S)
    return nullStream("synchronize");
  if (inOwnCallback(*S))
    return selfWait("Stream::synchronize", "a launch on this stream");
  return S->synchronize();
}

Status Stream::status() const {
  if (!S)
    return nullStream("status");
  std::lock_guard<std::mutex> L(S->M);
  return S->Error;
}

Status Stream::resetError() {
  if (!S)
    return nullStream("resetError");
  if (inOwnCallback(*S))
    return selfWait("Stream::resetError", "a launch on this stream");
  (void)S->synchronize();
  std::lock_guard<std::mutex> L(S->M);
  Status Old = std::move(S->Error);
  S->Error = Status();
  S->FailedAfter = UINT64_MAX;
  S->Failed.store(false, std::memory_order_release);
  S->Stop.reset(); // no launch runs: the queue is drained and failed
  return Old;
}

Status Stream::cancel() {
  if (!S)
    return nullStream("cancel");
  {
    std::lock_guard<std::mutex> L(S->M);
    if (S->Error.ok()) {
      S->Error = Status(ErrorCode::Cancelled, "the stream was cancelled");
      S->Failed.store(true, std::memory_order_release);
    }
    // Nothing queued runs any more, even before an earlier failure.
    S->FailedAfter = 0;
    // Under M, so that resetError (which clears it under M) cannot run
    // between the failure and the flag.
    S->Stop.cancel();
  }
  return Status();
}

Status Stream::setLaunchTimeout(uint64_t Milliseconds) {
  if (!S)
    return nullStream("setLaunchTimeout");
  // Far beyond any real limit; a wrapped negative number is a mistake.
  constexpr uint64_t MaxMilliseconds = uint64_t(1) << 40;
  if (Milliseconds > MaxMilliseconds)
    return Status(ErrorCode::InvalidArgument,
                  "Stream::setLaunchTimeout: " + std::to_string(Milliseconds) +
                      " ms is more than the limit of 2^40 ms");
  S->TimeoutMilliseconds.store(Milliseconds, std::memory_order_relaxed);
  return Status();
}
