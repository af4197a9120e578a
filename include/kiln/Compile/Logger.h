//===- Logger.h - The compilation log of a kernel loader --------*- C++ -*-===//
//
// A CompilationLogger is the log of one kernel's trip through a loader:
// which kernel, how it was served (memory, store, compiled, failed) and how
// long each phase took. A compile task owns its logger, so no two threads
// share one; the loader merges them into its LoaderStatistics on the server
// thread, in request order, and hands them to its LogSink (the tools print
// them on stderr when KILN_LOG=1; the library never does).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_LOGGER_H
#define KILN_COMPILE_LOGGER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// How a loader served a kernel.
enum class ServedKind {
  MemoryHit, ///< already loaded in this loader
  StoreHit,  ///< loaded from the artifact store, nothing compiled
  SourceHit, ///< lowered, then an artifact finalized from the same source
             ///< reused
  Compiled,  ///< lowered and finalized
  Failed,    ///< an error; the diagnostic went to the caller
};

llvm::StringRef servedKindName(ServedKind Kind);

/// The log of one kernel. Phases are named by the code that times them
/// ("lower", "finalize", "load", "store", or a backend's own: "optimize").
class CompilationLogger {
public:
  using Duration = std::chrono::nanoseconds;

  CompilationLogger() = default;
  explicit CompilationLogger(std::string Kernel) : Kernel(std::move(Kernel)) {}

  const std::string &kernel() const { return Kernel; }
  ServedKind served() const { return Served; }
  void setServed(ServedKind K) { Served = K; }

  /// Adds \p D to phase \p Name (a phase timed twice accumulates).
  void addPhase(llvm::StringRef Name, Duration D);
  const std::vector<std::pair<std::string, Duration>> &phases() const {
    return Phases;
  }
  /// Sum of all phases.
  Duration total() const;

  /// Times the scope it lives in as phase \p Name.
  class ScopedPhase {
  public:
    ScopedPhase(CompilationLogger &L, llvm::StringRef Name)
        : L(L), Name(Name.str()), Start(std::chrono::steady_clock::now()) {}
    ~ScopedPhase() {
      L.addPhase(Name, std::chrono::duration_cast<Duration>(
                           std::chrono::steady_clock::now() - Start));
    }
    ScopedPhase(const ScopedPhase &) = delete;
    ScopedPhase &operator=(const ScopedPhase &) = delete;

  private:
    CompilationLogger &L;
    std::string Name;
    std::chrono::steady_clock::time_point Start;
  };
  ScopedPhase time(llvm::StringRef Name) { return ScopedPhase(*this, Name); }

  /// One line: "kiln: KERNEL: compiled (lower 1.20 ms, finalize 0.01 ms, ...)".
  void print(llvm::raw_ostream &OS) const;

private:
  std::string Kernel;
  ServedKind Served = ServedKind::Compiled;
  std::vector<std::pair<std::string, Duration>> Phases;
};

/// What one loader did since it was made: counts by ServedKind and the total
/// time of each phase.
struct LoaderStatistics {
  uint64_t MemoryHits = 0;
  uint64_t StoreHits = 0;
  uint64_t SourceHits = 0;
  uint64_t Compiled = 0;
  uint64_t Failed = 0;
  /// Total time per phase name, sorted by name.
  std::vector<std::pair<std::string, CompilationLogger::Duration>> PhaseTotals;

  /// Counts \p Log and adds its phases.
  void add(const CompilationLogger &Log);
  void print(llvm::raw_ostream &OS) const;
};

/// True when KILN_LOG=1 (read once per process): whether a tool prints each
/// kernel's log.
bool compilationLoggingEnabled();

} // namespace kiln

#endif // KILN_COMPILE_LOGGER_H
