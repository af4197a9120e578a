//===- DebugPrint.cpp - The runtime side of debug_print -------------------===//
//
// See kiln/CPU/DebugPrint.h and docs/LangRef.md §14.
//
//===----------------------------------------------------------------------===//

#include "kiln/CPU/DebugPrint.h"
#include "kiln/IR/DebugFormat.h"

#include <cstdio>
#include <cstring>

using namespace kiln;

namespace {
/// The scope of the calling thread, or null.
thread_local DebugPrintScope *CurrentScope = nullptr;
/// One writer to standard output at a time: a launch's text stays whole.
std::mutex StdoutLock;
} // namespace

void kiln::writeDebugPrintToStdout(std::string_view Text) {
  std::lock_guard<std::mutex> G(StdoutLock);
  std::fwrite(Text.data(), 1, Text.size(), stdout);
  std::fflush(stdout);
}

bool DebugPrintCollector::reserve(uint64_t Bytes) {
  if (Dropped.load(std::memory_order_relaxed) == 0) {
    uint64_t Before = Used.fetch_add(Bytes, std::memory_order_relaxed);
    if (Before + Bytes <= Limit)
      return true;
  }
  Dropped.fetch_add(Bytes, std::memory_order_relaxed);
  return false;
}

void DebugPrintCollector::merge(std::string &&More) {
  if (More.empty())
    return;
  std::lock_guard<std::mutex> G(Lock);
  if (Text.empty())
    Text = std::move(More);
  else
    Text += More;
}

std::string DebugPrintCollector::take() {
  std::lock_guard<std::mutex> G(Lock);
  std::string Out = std::move(Text);
  Text.clear();
  if (uint64_t D = Dropped.load(std::memory_order_relaxed))
    Out += "... " + std::to_string(D) + " bytes of debug output dropped\n";
  return Out;
}

DebugPrintScope::DebugPrintScope(DebugPrintCollector &Collector)
    : Collector(Collector), Outer(CurrentScope) {
  CurrentScope = this;
}

DebugPrintScope::~DebugPrintScope() {
  CurrentScope = Outer;
  Collector.merge(std::move(Buffer));
}

void DebugPrintScope::append(std::string_view Text) {
  if (Collector.reserve(Text.size()))
    Buffer.append(Text.data(), Text.size());
}

extern "C" void kiln_debug_print(const char *Format, const uint64_t *Args,
                                 uint32_t NumArgs) {
  std::string Text = formatDebugPrint(
      llvm::StringRef(Format, std::strlen(Format)),
      llvm::ArrayRef<uint64_t>(Args, NumArgs));
  if (DebugPrintScope *S = CurrentScope)
    S->append(Text);
  else
    writeDebugPrintToStdout(Text);
}
