//===- Environment.cpp - Where the store lives, and how it is configured -===//

#include "kiln/Store/Environment.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <sys/auxv.h>

using namespace llvm;

namespace kiln {

namespace {
struct EnvState {
  std::mutex M;
  bool Overridden = false;
  std::optional<std::string> Root;
  std::atomic<uint64_t> Generation{0};
  std::function<void(StringRef)> WarningHandler;
};
EnvState &state() {
  static EnvState S;
  return S;
}
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
                             "optional K, M or G suffix)",
                             Text.str().c_str());
  return N * Mult;
}

StoreConfig StoreConfig::fromEnvironment() {
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
                   "' (expected 0, 1 or read-only)");
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

std::optional<std::string> storeRoot() {
  EnvState &S = state();
  std::lock_guard<std::mutex> L(S.M);
  if (S.Overridden)
    return S.Root;
  return defaultStoreRoot();
}

void setStoreRoot(std::optional<std::string> Root) {
  EnvState &S = state();
  std::lock_guard<std::mutex> L(S.M);
  S.Overridden = Root.has_value();
  S.Root = std::move(Root);
  S.Generation.fetch_add(1);
}

uint64_t storeGeneration() { return state().Generation.load(); }

void storeWarning(const Twine &Message) {
  EnvState &S = state();
  std::lock_guard<std::mutex> L(S.M);
  std::string Text = Message.str();
  if (S.WarningHandler) {
    S.WarningHandler(Text);
    return;
  }
  errs() << "kiln: warning: " << Text << '\n';
  errs().flush();
}

std::function<void(StringRef)>
setStoreWarningHandler(std::function<void(StringRef)> Handler) {
  EnvState &S = state();
  std::lock_guard<std::mutex> L(S.M);
  std::swap(S.WarningHandler, Handler);
  return Handler;
}

} // namespace kiln
