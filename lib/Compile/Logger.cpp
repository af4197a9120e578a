//===- Logger.cpp - The compilation log of a kernel loader ---------------===//

#include "kiln/Compile/Logger.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace kiln {

StringRef servedKindName(ServedKind Kind) {
  switch (Kind) {
  case ServedKind::MemoryHit:
    return "memory hit";
  case ServedKind::StoreHit:
    return "loaded from the store";
  case ServedKind::SourceHit:
    return "reused by source";
  case ServedKind::Compiled:
    return "compiled";
  case ServedKind::Failed:
    return "failed";
  }
  llvm_unreachable("unknown served kind");
}

void CompilationLogger::addPhase(StringRef Name, Duration D) {
  for (auto &[N, T] : Phases)
    if (N == Name) {
      T += D;
      return;
    }
  Phases.emplace_back(Name.str(), D);
}

CompilationLogger::Duration CompilationLogger::total() const {
  Duration Sum{0};
  for (const auto &P : Phases)
    Sum += P.second;
  return Sum;
}

static void printPhases(
    raw_ostream &OS,
    const std::vector<std::pair<std::string, CompilationLogger::Duration>>
        &Ps) {
  bool First = true;
  for (const auto &[Name, D] : Ps) {
    OS << (First ? "" : ", ") << Name << ' '
       << format("%.3f ms", double(D.count()) / 1e6);
    First = false;
  }
}

void CompilationLogger::print(raw_ostream &OS) const {
  OS << "kiln: " << Kernel << ": " << servedKindName(Served);
  if (!Phases.empty()) {
    OS << " (";
    printPhases(OS, Phases);
    OS << ')';
  }
  OS << '\n';
}

void LoaderStatistics::add(const CompilationLogger &Log) {
  switch (Log.served()) {
  case ServedKind::MemoryHit:
    ++MemoryHits;
    break;
  case ServedKind::StoreHit:
    ++StoreHits;
    break;
  case ServedKind::SourceHit:
    ++SourceHits;
    break;
  case ServedKind::Compiled:
    ++Compiled;
    break;
  case ServedKind::Failed:
    ++Failed;
    break;
  }
  for (const auto &[Name, D] : Log.phases()) {
    auto It = std::lower_bound(
        PhaseTotals.begin(), PhaseTotals.end(), Name,
        [](const auto &P, const std::string &N) { return P.first < N; });
    if (It != PhaseTotals.end() && It->first == Name)
      It->second += D;
    else
      PhaseTotals.insert(It, {Name, D});
  }
}

void LoaderStatistics::print(raw_ostream &OS) const {
  OS << "kiln: " << MemoryHits << " memory hits, " << StoreHits
     << " store hits, " << SourceHits << " reused by source, " << Compiled
     << " compiled, " << Failed << " failed";
  if (!PhaseTotals.empty()) {
    OS << " (";
    printPhases(OS, PhaseTotals);
    OS << ')';
  }
  OS << '\n';
}

bool compilationLoggingEnabled() {
  static const bool Enabled = [] {
    const char *V = std::getenv("KILN_LOG");
    return V && std::strcmp(V, "1") == 0;
  }();
  return Enabled;
}

} // namespace kiln
