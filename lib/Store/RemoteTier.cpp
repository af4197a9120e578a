//===- RemoteTier.cpp - A shared store tier on Redis ---------------------===//
//
// Fetches run on the caller's thread over a small pool of connections;
// publications go through a bounded queue to one publisher thread, so a
// launch never waits for a remote write. Every failure is counted; enough
// of them in a row (no answer: a timeout, a connection that fails; not a
// refusal the server answers with) make the tier skip requests for a
// back-off period (one warning), after which a single request tries the
// server again. An idle connection the server closed (a restart) is
// replaced before use, and is no failure.
//
//===----------------------------------------------------------------------===//

#include "kiln/Store/RemoteTier.h"
#include "kiln/Store/Environment.h"

#include "RedisClient.h"

#include "llvm/ADT/StringSet.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

using namespace llvm;

namespace kiln {

namespace {
using Clock = std::chrono::steady_clock;

struct Publication {
  std::string Name;
  std::vector<uint8_t> Payload;
};

/// Idle connections kept for fetches.
constexpr size_t MaxIdleConnections = 4;
} // namespace

class RemoteTier::Impl {
public:
  Impl(RemoteConfig C, RemoteAddress A, FleetKey K,
       std::shared_ptr<StoreWarnings> W)
      : Config(std::move(C)), Address(std::move(A)), Key(std::move(K)),
        SealOverhead(sealRemoteValue(Key, "", {}).size()),
        Warnings(W ? std::move(W) : std::make_shared<StoreWarnings>()) {}
  ~Impl();

  RemoteFetch fetch(StringRef Name);
  bool publish(std::string Name, std::vector<uint8_t> Payload);
  Expected<bool> publishNow(StringRef Name, ArrayRef<uint8_t> Payload);
  bool drain(std::chrono::milliseconds Max);
  Expected<std::vector<KeySummary>> listKeys(const ListLimits &Limits);
  Expected<std::string> serverInfo(StringRef Section);

  bool backingOff() const {
    std::lock_guard<std::mutex> L(HealthLock);
    return Clock::now() < SkipUntil;
  }
  /// Whether a request may be made now: not while backing off; when the
  /// back-off period is over, one request (this one) probes the server
  /// while the others go on skipping until it succeeds or fails. \p Seq
  /// receives the failure count the request starts after (for noteSuccess).
  bool admit(uint64_t &Seq) {
    std::lock_guard<std::mutex> L(HealthLock);
    Seq = FailureSeq;
    if (SkipUntil == Clock::time_point{})
      return true;
    Clock::time_point Now = Clock::now();
    if (Now < SkipUntil)
      return false;
    SkipUntil = Now + Config.Backoff;
    return true;
  }
  void count(uint64_t RemoteCounters::*Field) {
    std::lock_guard<std::mutex> L(CountersLock);
    ++(Counters.*Field);
  }
  /// A hit the caller's checks refused after all.
  void uncountHit() {
    std::lock_guard<std::mutex> L(CountersLock);
    if (Counters.Hits)
      --Counters.Hits;
    ++Counters.Rejected;
  }
  RemoteCounters counters() const {
    std::lock_guard<std::mutex> L(CountersLock);
    return Counters;
  }

  const RemoteConfig Config;
  const RemoteAddress Address;
  const FleetKey Key;
  /// What sealing adds to a payload: MaxValueBytes bounds the sealed
  /// value, as stored and as fetched.
  const size_t SealOverhead;
  std::shared_ptr<StoreWarnings> Warnings;

  /// Whether a payload of \p PayloadBytes, sealed, is over MaxValueBytes:
  /// readers would refuse it.
  bool tooLarge(size_t PayloadBytes) const {
    return PayloadBytes > Config.MaxValueBytes ||
           Config.MaxValueBytes - PayloadBytes < SealOverhead;
  }

private:
  /// A connection from the pool or a new one; null when backing off or the
  /// server cannot be reached (then \p Err says why).
  std::unique_ptr<RedisConnection> acquire(Error &Err);
  void release(std::unique_ptr<RedisConnection> C);
  void noteFailure(const Twine &Why);
  /// A request admitted at failure count \p StartSeq got an answer.
  void noteSuccess(uint64_t StartSeq);
  /// Publishes one value on \p Conn (made when null).
  void publishOne(std::unique_ptr<RedisConnection> &Conn, Publication &P);
  void publisherLoop();

  mutable std::mutex CountersLock;
  RemoteCounters Counters;

  mutable std::mutex HealthLock;
  unsigned Failures = 0;
  uint64_t FailureSeq = 0; ///< failures ever noted
  Clock::time_point SkipUntil{};

  std::mutex PoolLock;
  std::vector<std::unique_ptr<RedisConnection>> Idle;

  std::mutex QueueLock;
  std::condition_variable QueueReady, QueueIdle;
  std::deque<Publication> Queue;
  size_t QueueBytes = 0;
  bool Busy = false;
  bool Stopping = false;
  bool WarnedPublishError = false;
  std::atomic<bool> WarnedFetchRefusal{false};
  std::thread Publisher;
};

RemoteTier::Impl::~Impl() {
  drain(std::chrono::milliseconds(1000));
  {
    std::lock_guard<std::mutex> L(QueueLock);
    Stopping = true;
  }
  QueueReady.notify_all();
  if (Publisher.joinable())
    Publisher.join();
  std::lock_guard<std::mutex> L(CountersLock);
  Counters.Dropped += Queue.size();
}

std::unique_ptr<RedisConnection> RemoteTier::Impl::acquire(Error &Err) {
  for (;;) {
    std::unique_ptr<RedisConnection> C;
    {
      std::lock_guard<std::mutex> L(PoolLock);
      if (Idle.empty())
        break;
      C = std::move(Idle.back());
      Idle.pop_back();
    }
    // One the server closed while it was idle (a restart) is no failure of
    // the server: a new connection is made instead.
    if (!C->closedByServer())
      return C;
  }
  Expected<std::unique_ptr<RedisConnection>> C = RedisConnection::connect(
      Address, Config.ConnectTimeout, Config.RequestTimeout);
  if (!C) {
    Err = C.takeError();
    return nullptr;
  }
  return std::move(*C);
}

void RemoteTier::Impl::release(std::unique_ptr<RedisConnection> C) {
  if (!C || C->broken())
    return;
  std::lock_guard<std::mutex> L(PoolLock);
  if (Idle.size() < MaxIdleConnections)
    Idle.push_back(std::move(C));
}

void RemoteTier::Impl::noteFailure(const Twine &Why) {
  count(&RemoteCounters::Errors);
  DeferCallbacks Defer; // the warning reaches its sink unlocked
  std::lock_guard<std::mutex> L(HealthLock);
  ++FailureSeq;
  if (++Failures < Config.FailuresBeforeBackoff)
    return;
  bool WasSkipping = SkipUntil != Clock::time_point{};
  SkipUntil = Clock::now() + Config.Backoff;
  if (!WasSkipping)
    Warnings->warn("remote store " + Address.str() + ": " + Why + "; after " +
                   Twine(Failures) + " failures in a row it is skipped for " +
                   Twine(Config.Backoff.count()) + " ms at a time");
  // Connections made before the failure are not trusted to be healthy.
  std::lock_guard<std::mutex> P(PoolLock);
  Idle.clear();
}

void RemoteTier::Impl::noteSuccess(uint64_t StartSeq) {
  DeferCallbacks Defer; // the warning reaches its sink unlocked
  std::lock_guard<std::mutex> L(HealthLock);
  // An answer to a request sent before a later failure (a reply the server
  // wrote before it was killed) says nothing about the server now: it
  // neither ends the backoff nor resets the count.
  if (StartSeq != FailureSeq)
    return;
  if (SkipUntil != Clock::time_point{} && Failures >= Config.FailuresBeforeBackoff)
    Warnings->warn("remote store " + Address.str() + " answers again");
  Failures = 0;
  SkipUntil = Clock::time_point{};
}

RemoteFetch RemoteTier::Impl::fetch(StringRef Name) {
  RemoteFetch Out;
  uint64_t Seq;
  if (!admit(Seq)) {
    count(&RemoteCounters::Skipped);
    Out.Status = RemoteFetchStatus::Skipped;
    return Out;
  }
  Error Err = Error::success();
  std::unique_ptr<RedisConnection> C = acquire(Err);
  if (!C) {
    noteFailure(toString(std::move(Err)));
    Out.Status = RemoteFetchStatus::Error;
    return Out;
  }
  consumeError(std::move(Err));
  Expected<RedisValue> V = C->get(Name, Config.MaxValueBytes);
  if (!V) {
    std::string Why = toString(V.takeError());
    bool Broken = C->broken();
    release(std::move(C));
    if (!Broken && Why.find("over the limit") != std::string::npos) {
      count(&RemoteCounters::Rejected);
      Warnings->warn("remote store: ignored " + Name + ": " + Why);
      Out.Status = RemoteFetchStatus::Rejected;
      return Out;
    }
    if (!Broken) {
      // The server answered, with a refusal (a value of another type
      // under the key: WRONGTYPE): it is alive, so this is no reason to
      // back off, as for a refused publication; else a few bad keys would
      // switch the tier off for everyone.
      count(&RemoteCounters::Errors);
      if (!WarnedFetchRefusal.exchange(true))
        Warnings->warn("remote store refused to read " + Name + ": " + Why +
                       " (further refusals are only counted)");
      Out.Status = RemoteFetchStatus::Error;
      return Out;
    }
    noteFailure(Why);
    Out.Status = RemoteFetchStatus::Error;
    return Out;
  }
  release(std::move(C));
  noteSuccess(Seq);
  if (!V->Found) {
    count(&RemoteCounters::Misses);
    Out.Status = RemoteFetchStatus::Miss;
    return Out;
  }
  Expected<std::vector<uint8_t>> Payload = openRemoteValue(Key, Name, V->Bytes);
  if (!Payload) {
    count(&RemoteCounters::Rejected);
    Warnings->warn("remote store: ignored " + Name + ": " +
                   toString(Payload.takeError()));
    Out.Status = RemoteFetchStatus::Rejected;
    return Out;
  }
  count(&RemoteCounters::Hits);
  Out.Status = RemoteFetchStatus::Hit;
  Out.Bytes = std::move(*Payload);
  return Out;
}

bool RemoteTier::Impl::publish(std::string Name, std::vector<uint8_t> Payload) {
  if (Config.Mode == RemoteModeKind::ReadOnly)
    return false;
  if (backingOff() || tooLarge(Payload.size())) {
    count(&RemoteCounters::Dropped);
    return false;
  }
  {
    std::lock_guard<std::mutex> L(QueueLock);
    if (Stopping || Queue.size() >= Config.QueueEntries ||
        QueueBytes + Payload.size() > Config.QueueBytes) {
      std::lock_guard<std::mutex> C(CountersLock);
      ++Counters.Dropped;
      return false;
    }
    QueueBytes += Payload.size();
    Queue.push_back({std::move(Name), std::move(Payload)});
    if (!Publisher.joinable())
      Publisher = std::thread([this] { publisherLoop(); });
  }
  QueueReady.notify_one();
  return true;
}

void RemoteTier::Impl::publishOne(std::unique_ptr<RedisConnection> &Conn,
                                  Publication &P) {
  uint64_t Seq;
  if (!admit(Seq)) {
    count(&RemoteCounters::Dropped);
    return;
  }
  if (!Conn || Conn->broken() || Conn->closedByServer()) {
    Conn.reset();
    Expected<std::unique_ptr<RedisConnection>> C = RedisConnection::connect(
        Address, Config.ConnectTimeout, Config.RequestTimeout);
    if (!C) {
      noteFailure(toString(C.takeError()));
      count(&RemoteCounters::Dropped);
      return;
    }
    Conn = std::move(*C);
  }
  std::vector<uint8_t> Sealed = sealRemoteValue(Key, P.Name, P.Payload);
  Expected<bool> Set = Conn->setIfAbsent(P.Name, Sealed);
  if (Set) {
    noteSuccess(Seq);
    count(&RemoteCounters::Published);
    return;
  }
  std::string Why = toString(Set.takeError());
  if (Conn->broken()) {
    noteFailure(Why);
    count(&RemoteCounters::Dropped);
    return;
  }
  // The server answered, with a refusal (full: OOM; read-only replica):
  // it is alive, so this is not a reason to back off.
  count(&RemoteCounters::PublishErrors);
  DeferCallbacks Defer; // the warning reaches its sink unlocked
  std::lock_guard<std::mutex> L(QueueLock);
  if (!WarnedPublishError) {
    WarnedPublishError = true;
    Warnings->warn("remote store did not take " + P.Name + ": " + Why +
                   " (further refusals are only counted)");
  }
}

void RemoteTier::Impl::publisherLoop() {
  std::unique_ptr<RedisConnection> Conn;
  std::unique_lock<std::mutex> L(QueueLock);
  for (;;) {
    QueueReady.wait(L, [&] { return Stopping || !Queue.empty(); });
    if (Queue.empty() || Stopping)
      break;
    Publication P = std::move(Queue.front());
    Queue.pop_front();
    QueueBytes -= P.Payload.size();
    Busy = true;
    L.unlock();
    publishOne(Conn, P);
    L.lock();
    Busy = false;
    if (Queue.empty())
      QueueIdle.notify_all();
  }
  Busy = false;
  QueueIdle.notify_all();
}

bool RemoteTier::Impl::drain(std::chrono::milliseconds Max) {
  std::unique_lock<std::mutex> L(QueueLock);
  return QueueIdle.wait_for(L, Max, [&] { return Queue.empty() && !Busy; });
}

Expected<bool> RemoteTier::Impl::publishNow(StringRef Name,
                                            ArrayRef<uint8_t> Payload) {
  if (Config.Mode == RemoteModeKind::ReadOnly)
    return createStringError(std::make_error_code(std::errc::permission_denied),
                             "the remote tier is read-only");
  if (tooLarge(Payload.size()))
    return createStringError(
        std::make_error_code(std::errc::value_too_large),
        "a value of " + Twine(Payload.size() + SealOverhead) +
            " bytes sealed is over the remote tier's limit of " +
            Twine(Config.MaxValueBytes));
  Error Err = Error::success();
  std::unique_ptr<RedisConnection> C = acquire(Err);
  if (!C)
    return Err;
  consumeError(std::move(Err));
  Expected<bool> Set = C->setIfAbsent(Name, sealRemoteValue(Key, Name, Payload));
  release(std::move(C));
  if (Set)
    count(&RemoteCounters::Published);
  else
    count(&RemoteCounters::PublishErrors);
  return Set;
}

Expected<std::vector<RemoteTier::KeySummary>>
RemoteTier::Impl::listKeys(const ListLimits &Limits) {
  Error Err = Error::success();
  std::unique_ptr<RedisConnection> C = acquire(Err);
  if (!C)
    return Err;
  consumeError(std::move(Err));
  std::vector<KeySummary> Out;
  StringSet<> Seen;
  uint64_t Steps = 0, NameBytes = 0;
  auto Start = std::chrono::steady_clock::now();
  auto Stopped = [&](const Twine &Why) {
    return createStringError(
        std::make_error_code(std::errc::result_out_of_range),
        "listing the keys of " + Address.str() + " stopped: " + Why +
            " (after " + Twine(Steps) + " SCAN steps, " + Twine(Out.size()) +
            " keys)");
  };
  std::string Cursor = "0";
  std::string Pattern = Config.Prefix + ":*";
  do {
    if (Steps == Limits.MaxSteps)
      return Stopped("the server's SCAN cursor did not come back to 0 "
                     "within " +
                     Twine(Limits.MaxSteps) + " steps");
    if (std::chrono::steady_clock::now() - Start > Limits.MaxTime)
      return Stopped("it took more than " + Twine(Limits.MaxTime.count()) +
                     " ms");
    ++Steps;
    auto Step = C->scan(Cursor, Pattern);
    if (!Step)
      return Step.takeError();
    Cursor = Step->first;
    for (std::string &Name : Step->second) {
      if (!Seen.insert(Name).second)
        continue;
      NameBytes += Name.size();
      if (Seen.size() > Limits.MaxKeys)
        return Stopped("the server named more than " + Twine(Limits.MaxKeys) +
                       " keys");
      if (NameBytes > Limits.MaxNameBytes)
        return Stopped("the keys' names take more than " +
                       Twine(Limits.MaxNameBytes) + " bytes");
      Expected<uint64_t> Len = C->strlen(Name);
      if (!Len)
        return Len.takeError();
      Out.push_back({std::move(Name), *Len});
    }
  } while (Cursor != "0");
  release(std::move(C));
  return Out;
}

Expected<std::string> RemoteTier::Impl::serverInfo(StringRef Section) {
  Error Err = Error::success();
  std::unique_ptr<RedisConnection> C = acquire(Err);
  if (!C)
    return Err;
  consumeError(std::move(Err));
  Expected<std::string> Text = C->info(Section);
  release(std::move(C));
  return Text;
}

//===----------------------------------------------------------------------===//
// RemoteTier
//===----------------------------------------------------------------------===//

Expected<std::shared_ptr<RemoteTier>>
RemoteTier::create(const RemoteConfig &Config,
                   std::shared_ptr<StoreWarnings> Warnings) {
  Expected<RemoteAddress> A = RemoteAddress::parse(Config.Url);
  if (!A)
    return A.takeError();
  Expected<FleetKey> K = FleetKey::load(Config.KeyFile);
  if (!K)
    return K.takeError();
  if (Config.Prefix.empty() || StringRef(Config.Prefix).contains(':'))
    return createStringError(std::make_error_code(std::errc::invalid_argument),
                             "remote key prefix '" + Config.Prefix +
                                 "' must be non-empty, without ':'");
  return std::shared_ptr<RemoteTier>(new RemoteTier(std::make_unique<Impl>(
      Config, std::move(*A), std::move(*K), std::move(Warnings))));
}

RemoteTier::RemoteTier(std::unique_ptr<Impl> I) : I(std::move(I)) {}
RemoteTier::~RemoteTier() = default;

RemoteFetch RemoteTier::fetch(StringRef Name) { return I->fetch(Name); }
bool RemoteTier::publish(std::string Name, std::vector<uint8_t> Payload) {
  return I->publish(std::move(Name), std::move(Payload));
}
Expected<bool> RemoteTier::publishNow(StringRef Name,
                                      ArrayRef<uint8_t> Payload) {
  return I->publishNow(Name, Payload);
}
void RemoteTier::countRejected(StringRef Name, StringRef Why) {
  I->uncountHit();
  I->Warnings->warn("remote store: ignored " + Name + ": " + Why);
}
bool RemoteTier::drain(std::chrono::milliseconds Max) { return I->drain(Max); }
Expected<std::vector<RemoteTier::KeySummary>>
RemoteTier::listKeys(const ListLimits &Limits) {
  return I->listKeys(Limits);
}
Expected<std::string> RemoteTier::serverInfo(StringRef Section) {
  return I->serverInfo(Section);
}
RemoteCounters RemoteTier::counters() const { return I->counters(); }
const RemoteConfig &RemoteTier::config() const { return I->Config; }
bool RemoteTier::readOnly() const {
  return I->Config.Mode == RemoteModeKind::ReadOnly;
}
std::string RemoteTier::where() const { return I->Address.str(); }
bool RemoteTier::backingOff() const { return I->backingOff(); }

} // namespace kiln
