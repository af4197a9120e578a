//===- RemoteCommands.h - kiln-store remote push|stats ----------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_STORE_REMOTECOMMANDS_H
#define KILN_TOOLS_KILN_STORE_REMOTECOMMANDS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln::tools {

/// Runs `kiln-store remote ARGS...` on the store at \p Root with the remote
/// tier the options and environment name; the exit status.
int runRemoteCommand(llvm::StringRef Root, llvm::ArrayRef<std::string> Args,
                     llvm::StringRef NamespaceFilter, llvm::StringRef ToolName);

} // namespace kiln::tools

#endif // KILN_TOOLS_KILN_STORE_REMOTECOMMANDS_H
