//===- RemoteOptions.h - The tools' remote store options --------*- C++ -*-===//
//
// Part of the tools' support library (KilnToolSupport). The options every
// tool takes for the store's remote tier (docs/Tools.md, docs/Store.md):
//   --remote=URL  --remote-key=FILE  --remote-read-only
//   --remote-timeout-ms=N  --no-remote
// Each overrides its variable (KILN_REMOTE, KILN_REMOTE_KEY,
// KILN_REMOTE_MODE, KILN_REMOTE_TIMEOUT_MS); without any of them a tool uses
// the environment's tier.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_SUPPORT_REMOTEOPTIONS_H
#define KILN_TOOLS_SUPPORT_REMOTEOPTIONS_H

#include "kiln/Store/RemoteTier.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace kiln::tools {

/// The category the remote options are in (for cl::HideUnrelatedOptions).
llvm::cl::OptionCategory &remoteOptionCategory();

/// What the options ask for: nullopt when none was given (the
/// environment's tier, if any), a config with an empty Url for --no-remote,
/// else the environment's settings with the options on top. An error for
/// options that contradict each other or cannot work (a bad address, a key
/// file that FleetKey refuses).
llvm::Expected<std::optional<RemoteConfig>> remoteConfigFromOptions();

/// The tier the options and the environment name together (for kiln-store,
/// which uses it directly): an error when none is configured or it cannot
/// be made.
llvm::Expected<RemoteConfig> effectiveRemoteConfig();

} // namespace kiln::tools

#endif // KILN_TOOLS_SUPPORT_REMOTEOPTIONS_H
