//===- Internal.h - The state behind the public API's handles ---*- C++ -*-===//
//
// Private to lib/API. Each public handle (kiln/kiln.h) is a shared_ptr to one
// of these states; the states wrap the internal, LLVM-typed libraries.
//
// Lifetimes: a DeviceState owns the internal kiln::RuntimeDevice (compiler,
// store, JIT, task arena) until the public Device is destroyed, which drains
// every stream, waits until no task of its streams is alive, and only then
// drops it. Kernel handles hold their LoadedKernels (the code stays linked
// while they do) and a weak reference to the device (to compile another
// variant). Streams hold their device's state, so a queued task can always
// reach it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_API_INTERNAL_H
#define KILN_LIB_API_INTERNAL_H

#include "kiln/kiln.h"

#include "kiln/CPU/LoadedKernel.h"
#include "kiln/IR/Kernel.h"
#include "kiln/IR/Type.h"
#include "kiln/Runtime/Buffer.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Runtime/Launch.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace kiln::api::detail {

/// \p E as a Status: a located kernel diagnostic is InvalidKernel, a lack of
/// memory OutOfMemory, anything else \p Default.
Status statusOf(llvm::Error E, ErrorCode Default);

kiln::Type irType(ElementType T);
ElementType apiType(kiln::Type T);
/// Whether \p T names a type the IR has (a known scalar, a valid width).
bool isValidType(ElementType T);
kiln::AccessKind irAccess(Access A);
Access apiAccess(kiln::AccessKind A);

struct BufferState {
  kiln::HostBuffer Owned; ///< Kiln's memory (empty for a wrapped buffer)
  void *Data = nullptr;
  uint64_t Size = 0;

  static const std::shared_ptr<BufferState> &of(const Buffer &B) { return B.S; }
  static Buffer make(std::shared_ptr<BufferState> S) {
    Buffer B;
    B.S = std::move(S);
    return B;
  }
};

struct StreamState;

struct KernelState;

struct DeviceState {
  DeviceConfig Config;
  /// Shared while Dev is used from an API call; unique while the public
  /// Device closes it.
  std::shared_mutex Life;
  std::unique_ptr<kiln::RuntimeDevice> Dev; ///< null once closed
  bool Closed = false;

  /// Stream tasks queued or running on Dev's arena.
  std::mutex TasksLock;
  std::condition_variable TasksDone;
  int LiveTasks = 0;

  std::mutex StreamsLock;
  std::vector<std::weak_ptr<StreamState>> Streams;

  /// Loaded kernels by id, one map per bounds-checking choice: the device
  /// keeps them until unloadKernel.
  std::mutex KernelsLock;
  std::unordered_map<std::string, std::shared_ptr<KernelState>> ById[2];

  /// Variants linked by a launch itself (DeviceCounters), and of those the
  /// ones compiled.
  std::atomic<uint64_t> LaunchLinks{0}, LaunchCompiles{0};

  static const std::shared_ptr<DeviceState> &of(const Device &D) { return D.S; }

  void taskStarted() {
    std::lock_guard<std::mutex> L(TasksLock);
    ++LiveTasks;
  }
  void taskEnded() {
    std::lock_guard<std::mutex> L(TasksLock);
    if (--LiveTasks == 0)
      TasksDone.notify_all();
  }
};

/// The variants a kernel handle may link: the alignment its buffers give
/// (64 bytes, or only their elements') times whether they may overlap.
constexpr unsigned VariantCount = 4;
inline unsigned variantIndex(bool Aligned64, bool MayAlias) {
  return (Aligned64 ? 0 : 1) + (MayAlias ? 2 : 0);
}

struct KernelState {
  std::weak_ptr<DeviceState> Device;
  /// The IR, kept to compile the variants launches ask for later.
  kiln::IRKernel IR;
  std::string FileName;
  std::string Id;
  uint64_t IRHash = 0;
  bool BoundsChecked = true;
  Dim3 CubeDim;
  uint32_t PlaneDim = 32;
  std::vector<ParameterInfo> Params;
  KernelOrigin Origin = KernelOrigin::Compiled;

  /// Variants linked so far. A slot is written once, under VariantsLock,
  /// before its Ready flag is set; launches read it without a lock.
  std::mutex VariantsLock;
  std::atomic<bool> Ready[VariantCount] = {};
  LoadedKernel Variants[VariantCount];

  static const std::shared_ptr<KernelState> &of(const Kernel &K) { return K.S; }
  static Kernel make(std::shared_ptr<KernelState> S) {
    Kernel K;
    K.S = std::move(S);
    return K;
  }

  /// The linked variant \p Index, compiling (or loading) it the first time:
  /// what a launch asks for (counted in DeviceState::LaunchLinks).
  Result<LoadedKernel> variant(unsigned Index);
  static CpuVariant variantOf(unsigned Index, bool BoundsChecked);
  /// The device's request for variant \p Index (IR, id and hash known).
  KernelRequest request(unsigned Index) const;
};

/// A launch checked and bound, ready to run now or later.
struct PreparedLaunch {
  LoadedKernel Code;
  std::array<uint32_t, 3> CubeCount = {1, 1, 1};
  /// An indirect launch: the cube count is read from here when it runs.
  const uint32_t *IndirectCount = nullptr;
  llvm::SmallVector<ArgBinding, 4> Bindings;
  /// The buffers bound, alive until the launch has run.
  llvm::SmallVector<std::shared_ptr<BufferState>, 4> Keep;
  /// The stream's launch timeout when it was queued (0: none).
  uint64_t TimeoutMilliseconds = 0;
};

/// Checks views (bounds, element alignment), picks and links the variant
/// the bindings need, binds and validates the launch.
Status prepareLaunch(PreparedLaunch &P, const Kernel &K, Dim3 CubeCount,
                     std::span<const Arg> Args);
/// Runs \p P (prepared, so not validated again) on \p D's executor. With
/// \p Stop (a stream's), the launch can be cancelled, and is timed out
/// after P.TimeoutMilliseconds. \p From: the stream it runs on, if any
/// (what its debug-print callback is from).
Status runLaunch(DeviceState &D, const PreparedLaunch &P,
                 LaunchStop *Stop = nullptr, const StreamState *From = nullptr);
/// Checks \p CubeCounts (at least 3 u32 in a live buffer) and makes \p P
/// read its cube count there; keeps the buffer alive with the launch.
Status prepareIndirect(PreparedLaunch &P, const BufferView &CubeCounts,
                       const char *Fn);

struct EventState {
  /// The stream whose record() made it (compared, never followed).
  const StreamState *Stream = nullptr;
  /// Its stream's device, whose launches a host thread waiting for the
  /// event helps run (wait()).
  std::weak_ptr<DeviceState> Device;
  std::mutex M;
  std::condition_variable CV;
  std::atomic<bool> Complete{false};
  Status Result;
  std::vector<std::function<void()>> Waiters;

  /// Marks it complete with \p S, wakes the host and runs the streams'
  /// waiters (outside the lock).
  void complete(Status S);
  /// Runs \p Resume when it completes; false (and \p Resume is dropped)
  /// when it is complete already.
  bool whenComplete(std::function<void()> Resume);
  Status wait();

  static const std::shared_ptr<EventState> &of(const Event &E) { return E.S; }
  static Event make(std::shared_ptr<EventState> S) {
    Event E;
    E.S = std::move(S);
    return E;
  }
};

/// Locks \p M, spinning a little before sleeping: a stream's lock is held
/// for a few dozen nanoseconds at a time, far less than a sleep and a
/// wake-up through the kernel cost the thread that waits.
std::unique_lock<std::mutex> lockBriefly(std::mutex &M);

struct StreamState : std::enable_shared_from_this<StreamState> {
  std::shared_ptr<DeviceState> Device;

  /// One piece of queued work. Items come from their stream's pool and go
  /// back to it once run, keeping the capacity of their vectors, so that
  /// queueing allocates nothing until the queue grows deeper than it ever
  /// was.
  struct Item {
    Item *Next = nullptr;                    ///< in a queue or the pool
    uint64_t Seq = 0;                        ///< its place in the stream
    std::function<Status()> Work;            ///< a copy, or none
    bool IsLaunch = false;
    PreparedLaunch Launch;                   ///< when IsLaunch
    std::shared_ptr<EventState> WaitFor;     ///< wait(): run after it
    std::shared_ptr<EventState> Signal;      ///< record(): complete it

    /// Drops what it keeps alive (buffers, code, events, a copy's
    /// closure), keeping its capacity.
    void clear();
  };
  /// Items in order, linked through Item::Next.
  struct ItemList {
    Item *Head = nullptr, *Tail = nullptr;
    bool empty() const { return !Head; }
    void push(Item *I) {
      I->Next = nullptr;
      (Tail ? Tail->Next : Head) = I;
      Tail = I;
    }
    Item *pop() {
      Item *I = Head;
      Head = I->Next;
      if (!Head)
        Tail = nullptr;
      I->Next = nullptr;
      return I;
    }
    /// Moves \p Other's items after these.
    void append(ItemList &Other) {
      if (Other.empty())
        return;
      (Tail ? Tail->Next : Head) = Other.Head;
      Tail = Other.Tail;
      Other = ItemList();
    }
  };

  /// A cleared item from the pool (a new one when the pool is empty), or
  /// null without memory.
  Item *takeItem();
  /// Clears \p I and gives it back to the pool.
  void giveBack(Item *I);
  /// Gives the items of \p Cleared (each cleared) back to the pool.
  void giveBack(ItemList &Cleared);

  std::mutex M;
  std::condition_variable Progress;
  ItemList Queue;
  /// The last Seq queued (Submitted, readable without M): what a draining
  /// thread that found the queue empty watches for a little while.
  std::atomic<uint64_t> LastQueued{0};
  /// A drain task is queued and has not started yet.
  bool TaskQueued = false;
  /// A thread (a task, or the host in synchronize) runs the queue.
  bool Draining = false;
  /// The front item waits for an incomplete event, whose completion kicks
  /// the stream again.
  bool Parked = false;
  Status Error;
  /// The last item that may run: items after a failure are skipped, those
  /// before it (queued earlier) still run.
  uint64_t FailedAfter = UINT64_MAX;
  std::atomic<bool> Failed{false};
  /// What the stream's running launch polls: set by cancel() (until
  /// resetError) or by the watchdog at the launch's deadline (cleared after
  /// that launch).
  LaunchStop Stop;
  /// Stream::setLaunchTimeout's value, copied into each launch queued.
  std::atomic<uint64_t> TimeoutMilliseconds{0};
  uint64_t Submitted = 0;
  std::atomic<uint64_t> Finished{0};
  /// The smallest Finished count a thread sleeping in synchronize waits
  /// for (UINT64_MAX: none sleeps): the drain wakes the sleepers when it is
  /// reached, not after every item (a futex wake per launch and a host
  /// woken to go back to sleep cost more than a short launch).
  std::atomic<uint64_t> WakeAt{UINT64_MAX};
  /// Host threads in synchronize: a drain task hands them the queue
  /// between two items (drainLoop) and sets HandedOver.
  std::atomic<unsigned> HostsWaiting{0};
  std::atomic<bool> HandedOver{false};

  /// Queues \p I (from takeItem): Cancelled on a closed device, the
  /// stream's error on a failed stream (\p I then goes back to the pool).
  Status submit(Item *I);
  /// Runs queued items in order, with Draining taken, until none is left,
  /// one must wait, or (when \p UpTo is not 0) item \p UpTo has run.
  void drainLoop(uint64_t UpTo);
  /// Runs the queue on this thread up to item \p UpTo when no one else
  /// does: a host about to wait does the work instead of waking a worker.
  void drainHere(uint64_t UpTo);
  /// Waits until everything submitted so far has run.
  Status synchronize();
  /// Fails the stream after item \p At (items up to it still run).
  void fail(Status S, uint64_t At);

  StreamState() = default;
  StreamState(const StreamState &) = delete;
  StreamState &operator=(const StreamState &) = delete;

  static const std::shared_ptr<StreamState> &of(const Stream &S) { return S.S; }
  static Stream make(std::shared_ptr<StreamState> St) {
    Stream S;
    S.S = std::move(St);
    return S;
  }

private:
  /// With M held: queues a drain task unless the queue is empty, drained,
  /// parked or has a task queued already.
  void kick();
  void runTask();
  /// Runs \p I (not skipped) and completes what it signals.
  void runItem(Item &I);
  /// With \p L (on M) held and the queue empty: waits a little, without
  /// the lock, for more work (a burst of submits keeps one drain task
  /// instead of waking a worker for each). Whether work came.
  bool lingerForWork(std::unique_lock<std::mutex> &L);

  /// The pool: free items, and the slabs every item lives in (freed with
  /// the stream). PoolLock is held for a few instructions at a time.
  std::mutex PoolLock;
  Item *FreeItems = nullptr;
  /// Items made together, in memory mapped and populated at once.
  struct Slab {
    Item *Items = nullptr; ///< null when the memory could not be had
    size_t Count = 0;
    explicit Slab(size_t Count);
    ~Slab();
    Slab(const Slab &) = delete;
    Slab &operator=(const Slab &) = delete;
  };
  std::vector<std::unique_ptr<Slab>> Slabs;
  size_t PoolSize = 0; ///< items in Slabs
};

/// Waits for every stream of \p D; the first failure among them.
Status synchronizeStreams(DeviceState &D);

/// Where a callback comes from: a device's warning sink (no stream), or the
/// debug-print handler of a launch on \p Stream (none: Device::launch).
/// Compared, never followed.
struct CallbackSource {
  const DeviceState *Device = nullptr;
  const StreamState *Stream = nullptr;
};
/// The callback this thread is running (the innermost), or null.
const CallbackSource *currentCallback();
/// Runs \p F as a callback from \p Source.
void runAsCallback(const CallbackSource &Source,
                   const std::function<void()> &F);
/// The launch this thread is running (runLaunch), whose debug text is a
/// callback from it; null outside launches.
const CallbackSource *currentLaunch();
/// Marks this thread as running a launch from \p Source while it lives.
class LaunchScope {
public:
  explicit LaunchScope(const CallbackSource &Source);
  ~LaunchScope();
  LaunchScope(const LaunchScope &) = delete;
  LaunchScope &operator=(const LaunchScope &) = delete;

private:
  const CallbackSource *Outer;
  CallbackSource Mine;
};
/// The error of a call a callback from \p Source may not make: \p Fn
/// waits for work that cannot end before the callback returns.
Status selfWait(const char *Fn, const char *What);

inline Status closedDevice() {
  return Status(ErrorCode::Cancelled, "the device was destroyed");
}

} // namespace kiln::api::detail

#endif // KILN_LIB_API_INTERNAL_H
