//===- DebugPrint.h - Where the text of debug_print goes --------*- C++ -*-===//
//
// debug_print (docs/LangRef.md §14) compiles to a call of the C function
// kiln_debug_print, an external symbol that JITLinker resolves to this
// process's copy when it links a kernel object (no address is baked into
// the object, so a stored object stays valid in any process).
//
// The function formats the text (formatDebugPrint) and appends it to the
// sink of the calling thread: the launcher installs a DebugPrintScope around
// each call of a cube function, and gathers the scopes of one launch in a
// DebugPrintCollector, which enforces the launch's byte limit and hands the
// whole text over once the launch has completed. A thread without a scope
// (a cube function called directly) writes to standard output at once.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CPU_DEBUGPRINT_H
#define KILN_CPU_DEBUGPRINT_H

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

extern "C" {
/// What the compiled code calls: \p Format is the verified format (NUL
/// terminated), \p Args one 64-bit word per conversion (DebugFormat.h).
void kiln_debug_print(const char *Format, const uint64_t *Args,
                      uint32_t NumArgs);
}

namespace kiln {

/// The symbol of kiln_debug_print as the lowering names it.
inline const char *debugPrintSymbol() { return "kiln_debug_print"; }

/// Receives the text of one launch, whole; called once per launch that
/// printed, on the thread that ran the launch.
using DebugPrintHandler = std::function<void(std::string_view Text)>;

/// The default handler: the text to standard output, flushed, written in
/// one piece so that two launches never interleave mid-line.
void writeDebugPrintToStdout(std::string_view Text);

/// The byte limit of a launch's debug text unless a device says otherwise
/// (cudaLimitPrintfFifoSize's default is of this size too).
constexpr uint64_t DefaultDebugPrintLimit = uint64_t(1) << 20;

/// The text of one launch, from every thread that ran its cubes.
class DebugPrintCollector {
public:
  explicit DebugPrintCollector(uint64_t LimitBytes) : Limit(LimitBytes) {}

  /// Whether \p Bytes more fit the limit; counts them as dropped if not.
  /// Once one print is dropped every later one is too, so what is kept is
  /// a prefix of each unit's output.
  bool reserve(uint64_t Bytes);
  /// Appends the text one scope gathered (thread-safe).
  void merge(std::string &&Text);
  /// Everything printed, followed by "... N bytes of debug output
  /// dropped\n" when the limit dropped some.
  std::string take();

private:
  const uint64_t Limit;
  std::atomic<uint64_t> Used{0};
  std::atomic<uint64_t> Dropped{0};
  std::mutex Lock;
  std::string Text;
};

/// Makes \p Collector the calling thread's sink while it lives (nested
/// scopes restore the outer one); its text goes to the collector at the end.
class DebugPrintScope {
public:
  explicit DebugPrintScope(DebugPrintCollector &Collector);
  ~DebugPrintScope();
  DebugPrintScope(const DebugPrintScope &) = delete;
  DebugPrintScope &operator=(const DebugPrintScope &) = delete;

  /// Appends one print's text, if the launch's limit allows it.
  void append(std::string_view Text);

private:
  DebugPrintCollector &Collector;
  DebugPrintScope *Outer;
  std::string Buffer;
};

} // namespace kiln

#endif // KILN_CPU_DEBUGPRINT_H
