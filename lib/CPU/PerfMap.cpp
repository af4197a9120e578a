//===- PerfMap.cpp - Kernel symbols for Linux perf ------------------------===//

#include "PerfMap.h"

#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

using namespace kiln;
using namespace llvm;
using namespace llvm::orc;

bool kiln::perfMapRequested() {
  const char *V = std::getenv("KILN_PERF_MAP");
  if (!V)
    return false;
  StringRef S(V);
  return S == "1" || S.equals_insensitive("on") || S.equals_insensitive("true");
}

std::string kiln::perfMapPath() {
  return "/tmp/perf-" + std::to_string(::getpid()) + ".map";
}

namespace {
class PerfMapPlugin final : public ObjectLinkingLayer::Plugin {
public:
  void modifyPassConfig(MaterializationResponsibility &,
                        jitlink::LinkGraph &,
                        jitlink::PassConfiguration &Config) override {
    // After fixups the symbols have their final addresses.
    Config.PostFixupPasses.emplace_back(&PerfMapPlugin::record);
  }
  Error notifyFailed(MaterializationResponsibility &) override {
    return Error::success();
  }
  Error notifyRemovingResources(JITDylib &, ResourceKey) override {
    return Error::success();
  }
  void notifyTransferringResources(JITDylib &, ResourceKey,
                                   ResourceKey) override {}

private:
  static Error record(jitlink::LinkGraph &G) {
    std::string Lines;
    raw_string_ostream OS(Lines);
    for (jitlink::Symbol *Sym : G.defined_symbols()) {
      if (!Sym->hasName() || !Sym->isCallable() || Sym->getSize() == 0)
        continue;
      OS << format_hex_no_prefix(Sym->getAddress().getValue(), 1) << ' '
         << format_hex_no_prefix(Sym->getSize(), 1) << ' ' << Sym->getName()
         << '\n';
    }
    if (Lines.empty())
      return Error::success();
    // One append per object, under a lock: the lines of concurrent links
    // never interleave.
    static std::mutex Lock;
    std::lock_guard<std::mutex> G2(Lock);
    if (std::FILE *F = std::fopen(perfMapPath().c_str(), "a")) {
      std::fwrite(Lines.data(), 1, Lines.size(), F);
      std::fclose(F);
    }
    return Error::success();
  }
};
} // namespace

std::unique_ptr<ObjectLinkingLayer::Plugin> kiln::createPerfMapPlugin() {
  return std::make_unique<PerfMapPlugin>();
}
