//===- RemoteOptions.cpp - The tools' remote store options ---------------===//

#include "support/RemoteOptions.h"

using namespace llvm;

namespace kiln::tools {

cl::OptionCategory &remoteOptionCategory() {
  static cl::OptionCategory C("remote store options");
  return C;
}

namespace {
cl::opt<std::string> RemoteUrl(
    "remote",
    cl::desc("The store's remote tier: redis://HOST[:PORT][/DB] or "
             "unix:///PATH[?db=N] (default: KILN_REMOTE)"),
    cl::value_desc("URL"), cl::cat(remoteOptionCategory()));
cl::opt<std::string> RemoteKey(
    "remote-key",
    cl::desc("The fleet key file that signs and checks remote entries "
             "(default: KILN_REMOTE_KEY; required with a remote tier)"),
    cl::value_desc("FILE"), cl::cat(remoteOptionCategory()));
cl::opt<bool> RemoteReadOnly(
    "remote-read-only",
    cl::desc("Take entries from the remote tier, never publish to it "
             "(default: KILN_REMOTE_MODE)"),
    cl::cat(remoteOptionCategory()));
cl::opt<unsigned> RemoteTimeoutMs(
    "remote-timeout-ms",
    cl::desc("Connect and request timeout of the remote tier, 1..60000 ms "
             "(default: KILN_REMOTE_TIMEOUT_MS, else 20)"),
    cl::value_desc("N"), cl::cat(remoteOptionCategory()));
cl::opt<bool> NoRemote("no-remote",
                       cl::desc("Use no remote tier, whatever KILN_REMOTE "
                                "says"),
                       cl::cat(remoteOptionCategory()));

Error usage(const Twine &Why) {
  return createStringError(std::make_error_code(std::errc::invalid_argument),
                           Why);
}
} // namespace

Expected<std::optional<RemoteConfig>> remoteConfigFromOptions() {
  bool Any = RemoteUrl.getNumOccurrences() || RemoteKey.getNumOccurrences() ||
             RemoteReadOnly || RemoteTimeoutMs.getNumOccurrences();
  if (NoRemote) {
    if (Any)
      return usage("--no-remote excludes the other --remote options");
    return std::optional<RemoteConfig>(RemoteConfig());
  }
  if (!Any)
    return std::optional<RemoteConfig>();
  if (!remoteTierBuilt())
    return usage(Twine(RemoteUrl.getNumOccurrences() ? "--remote"
                                                     : "the --remote options") +
                 ": " + noRemoteTierMessage());
  if (RemoteUrl.getNumOccurrences() && RemoteUrl.empty())
    return usage("--remote: empty address");
  if (RemoteTimeoutMs.getNumOccurrences() &&
      (RemoteTimeoutMs == 0 || RemoteTimeoutMs > 60000))
    return usage("--remote-timeout-ms must be between 1 and 60000");
  RemoteConfig C = RemoteConfig::fromEnvironment().value_or(RemoteConfig());
  if (RemoteUrl.getNumOccurrences())
    C.Url = RemoteUrl;
  if (RemoteKey.getNumOccurrences())
    C.KeyFile = RemoteKey;
  if (RemoteReadOnly)
    C.Mode = RemoteModeKind::ReadOnly;
  if (RemoteTimeoutMs.getNumOccurrences())
    C.ConnectTimeout = C.RequestTimeout =
        std::chrono::milliseconds(RemoteTimeoutMs);
  if (C.Url.empty())
    return usage("the --remote options need an address: --remote=URL or "
                 "KILN_REMOTE");
  // Options given on the command line that cannot work are an error, not
  // a warning: the user asked for this tier.
  if (Expected<RemoteAddress> A = RemoteAddress::parse(C.Url); !A)
    return A.takeError();
  if (Expected<FleetKey> K = FleetKey::load(C.KeyFile); !K)
    return K.takeError();
  return std::optional<RemoteConfig>(std::move(C));
}

Expected<RemoteConfig> effectiveRemoteConfig() {
  if (!remoteTierBuilt())
    return usage(noRemoteTierMessage());
  Expected<std::optional<RemoteConfig>> C = remoteConfigFromOptions();
  if (!C)
    return C.takeError();
  std::optional<RemoteConfig> R =
      *C ? std::move(*C) : RemoteConfig::fromEnvironment();
  if (!R || R->Url.empty())
    return usage("no remote tier: give --remote=URL (or set KILN_REMOTE) "
                 "and --remote-key=FILE (or KILN_REMOTE_KEY)");
  return std::move(*R);
}

} // namespace kiln::tools
