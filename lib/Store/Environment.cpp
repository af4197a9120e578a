//===- Environment.cpp - Where the store lives, and how it is configured -===//

#include "kiln/Store/Environment.h"
#include "kiln/Store/RemoteTier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>
#include <sys/auxv.h>

using namespace llvm;

namespace kiln {

namespace {
const char *env(const char *Name) {
  const char *V = std::getenv(Name);
  return V && *V ? V : nullptr;
}
} // namespace

Expected<uint64_t> parseStoreSize(StringRef Text) {
  StringRef T = Text.trim();
  uint64_t Mult = 1;
  if (T.ends_with_insensitive("ib"))
    T = T.drop_back(2);
  else if (T.ends_with_insensitive("b"))
    T = T.drop_back(1);
  if (!T.empty()) {
    switch (toLower(T.back())) {
    case 'k':
      Mult = uint64_t(1) << 10;
      break;
    case 'm':
      Mult = uint64_t(1) << 20;
      break;
    case 'g':
      Mult = uint64_t(1) << 30;
      break;
    case 't':
      Mult = uint64_t(1) << 40;
      break;
    default:
      break;
    }
    if (Mult != 1)
      T = T.drop_back(1);
  }
  uint64_t N = 0;
  if (T.empty() || T.getAsInteger(10, N) || (N && Mult > UINT64_MAX / N))
    return createStringError(std::errc::invalid_argument,
                             "invalid size '%s' (expected bytes with an "
                             "optional K, M, G or T suffix, B or iB after "
                             "it allowed)",
                             Text.str().c_str());
  return N * Mult;
}

StoreConfig StoreConfig::fromEnvironment(StoreWarnings *Warnings) {
  auto storeWarning = [&](const Twine &Message) {
    if (Warnings)
      Warnings->warn(Message);
  };
  StoreConfig C;
  if (const char *V = env("KILN_CACHE")) {
    StringRef S(V);
    if (S == "0" || S.equals_insensitive("off"))
      C.Mode = StoreModeKind::Off;
    else if (S == "1" || S.equals_insensitive("on"))
      C.Mode = StoreModeKind::ReadWrite;
    else if (S.equals_insensitive("read-only"))
      C.Mode = StoreModeKind::ReadOnly;
    else
      storeWarning("ignoring KILN_CACHE='" + S +
                   "' (expected 0 or off, 1 or on, or read-only)");
  }
  if (const char *V = env("KILN_CACHE_MAX_SIZE")) {
    if (Expected<uint64_t> N = parseStoreSize(V))
      C.MaxSize = *N;
    else
      storeWarning("ignoring KILN_CACHE_MAX_SIZE: " + toString(N.takeError()));
  }
  if (const char *V = env("KILN_CACHE_SYNC"))
    C.Sync = StringRef(V) == "1";
  // A setuid process must not run code from a folder its caller controls.
  if (getauxval(AT_SECURE))
    C.Mode = StoreModeKind::Off;
  return C;
}

std::optional<std::string> defaultStoreRoot() {
  if (const char *D = env("KILN_CACHE_DIR"))
    return std::string(D);
  SmallString<256> P;
  if (const char *X = env("XDG_CACHE_HOME")) {
    P = X;
  } else if (const char *H = env("HOME")) {
    P = H;
    sys::path::append(P, ".cache");
  } else {
    return std::nullopt;
  }
  sys::path::append(P, "kiln");
  return std::string(P);
}

const DefaultStoreSettings &defaultStoreSettings() {
  static const DefaultStoreSettings Settings = [] {
    DefaultStoreSettings S;
    StoreWarnings W;
    S.Root = defaultStoreRoot();
    S.Config = StoreConfig::fromEnvironment(&W);
    // A setuid or setgid process takes no code from where its caller's
    // environment points, as it keeps no store (StoreConfig::fromEnvironment).
    if (!getauxval(AT_SECURE))
      if (std::optional<RemoteConfig> R = RemoteConfig::fromEnvironment(&W))
        S.Remote = std::make_shared<const RemoteConfig>(std::move(*R));
    S.Warnings = W.recent();
    return S;
  }();
  return Settings;
}

void StoreWarnings::warn(const Twine &Message) {
  std::string Text = Message.str();
  Sink Copy;
  {
    std::lock_guard<std::mutex> L(M);
    ++Count;
    Recent.push_back(Text);
    if (Recent.size() > MaxRecent)
      Recent.pop_front();
    Copy = S;
  }
  // Outside the lock: a sink may take its own locks, or warn again; and
  // after the caller's locks, when it defers callbacks.
  if (Copy)
    DeferCallbacks::runOrDefer(
        [Copy = std::move(Copy), Text = std::move(Text)] { Copy(Text); });
}

namespace {
/// This thread's DeferCallbacks: how many are alive, and what waits.
struct DeferredCallbacks {
  unsigned Depth = 0;
  std::vector<std::function<void()>> Queue;
};
DeferredCallbacks &deferred() {
  thread_local DeferredCallbacks D;
  return D;
}
} // namespace

DeferCallbacks::DeferCallbacks() { ++deferred().Depth; }

DeferCallbacks::~DeferCallbacks() {
  DeferredCallbacks &D = deferred();
  if (--D.Depth != 0)
    return;
  // Depth is 0: what these raise runs at once.
  std::vector<std::function<void()>> Run;
  Run.swap(D.Queue);
  for (std::function<void()> &F : Run)
    F();
}

void DeferCallbacks::runOrDefer(std::function<void()> F) {
  DeferredCallbacks &D = deferred();
  if (D.Depth)
    D.Queue.push_back(std::move(F));
  else
    F();
}

uint64_t StoreWarnings::count() const {
  std::lock_guard<std::mutex> L(M);
  return Count;
}

std::vector<std::string> StoreWarnings::recent() const {
  std::lock_guard<std::mutex> L(M);
  return std::vector<std::string>(Recent.begin(), Recent.end());
}

void StoreWarnings::setSink(Sink NewSink) {
  std::lock_guard<std::mutex> L(M);
  S = std::move(NewSink);
}

void printWarningToStderr(StringRef Message) {
  // One write per line, so that warnings of several threads do not mix.
  std::string Line = ("kiln: warning: " + Message + "\n").str();
  errs() << Line;
  errs().flush();
}

StoreEnvironment::StoreEnvironment(std::optional<std::string> Root,
                                   StoreConfig Config,
                                   std::shared_ptr<StoreWarnings> Warnings)
    : Root(std::move(Root)), Config(Config),
      Warnings(Warnings ? std::move(Warnings)
                        : std::make_shared<StoreWarnings>()) {}

StoreEnvironment
StoreEnvironment::fromDefaults(std::shared_ptr<StoreWarnings> Warnings) {
  const DefaultStoreSettings &D = defaultStoreSettings();
  StoreEnvironment E(D.Root, D.Config, std::move(Warnings));
  for (const std::string &W : D.Warnings)
    E.warnings().warn(W);
  if (D.Remote)
    if (Error Err = E.useRemote(*D.Remote))
      E.warnings().warn("not using the remote store (KILN_REMOTE): " +
                        toString(std::move(Err)));
  return E;
}

Error StoreEnvironment::useRemote(const RemoteConfig &C) {
  Remote.reset();
  Expected<std::shared_ptr<RemoteTier>> T = RemoteTier::create(C, Warnings);
  if (!T)
    return T.takeError();
  Remote = std::move(*T);
  return Error::success();
}

} // namespace kiln
