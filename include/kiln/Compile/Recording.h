//===- Recording.h - What a compilation produced, for debugging -*- C++ -*-===//
//
// A CompilationRecording holds the named texts one compilation produced: the
// kernel's IR, the LLVM IR before and after optimisation, the assembly, and
// the IR after the backend steps KILN_DUMP_AFTER names. With KILN_DUMP=DIR
// set they are written to DIR/<kernel id>/ once compiled.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_RECORDING_H
#define KILN_COMPILE_RECORDING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// The texts a compilation can record; each has a fixed file name in a dump.
enum class RecordingKind {
  KernelIR,        ///< "kernel.kiln": the verified IR, canonical text
  LLVMIR,          ///< "lowered.ll": LLVM IR as lowering produced it
  OptimizedLLVMIR, ///< "optimized.ll": LLVM IR after the pass pipeline
  Assembly,        ///< "kernel.s": the host assembly
};

/// The file name of \p Kind in a dump folder.
llvm::StringRef recordingFileName(RecordingKind Kind);

/// The texts of one kernel's compilation. Not thread-safe: every compile
/// task owns its own recording.
class CompilationRecording {
public:
  /// A recording that keeps texts only when \p Enabled; a disabled one drops
  /// what it is told, so a compiler may skip producing costly texts
  /// (assembly) when enabled() is false.
  explicit CompilationRecording(bool Enabled = false) : Enabled(Enabled) {}

  /// KILN_DUMP, read once per process (thread-safe): the dump folder of the
  /// default configuration; "" when unset.
  static const std::string &defaultDumpDir();
  /// KILN_DUMP_AFTER, read once per process (thread-safe): the names of the
  /// backend steps after which a recording keeps the IR, split at commas;
  /// empty when unset. The backend checks the names.
  static const std::vector<std::string> &defaultDumpAfter();

  bool enabled() const { return Enabled; }
  /// Keeps \p Text as \p Kind, replacing an earlier one of that kind.
  void record(RecordingKind Kind, std::string Text);
  /// The text recorded as \p Kind, if any.
  std::optional<llvm::StringRef> get(RecordingKind Kind) const;
  /// Everything recorded, in the order first recorded.
  const std::vector<std::pair<RecordingKind, std::string>> &sections() const {
    return Sections;
  }

  /// Adds \p Text to the file \p FileName of the dump (a backend step's IR:
  /// "after-07-emission.ll"), after what an earlier call gave it.
  void recordFile(llvm::StringRef FileName, llvm::StringRef Text);
  /// The files recordFile made, in the order first recorded.
  const std::vector<std::pair<std::string, std::string>> &files() const {
    return Files;
  }

  /// Writes every section to \p Dir/<id>/ where <id> is \p KernelIdText with
  /// any character outside [A-Za-z0-9._-] replaced by '_'. Creates the
  /// folders. An error names the file that could not be written.
  llvm::Error writeTo(llvm::StringRef Dir, llvm::StringRef KernelIdText) const;

  /// writeTo(\p Dir) when \p Dir is not empty and something was recorded;
  /// success otherwise.
  llvm::Error dumpIfRequested(llvm::StringRef Dir,
                              llvm::StringRef KernelIdText) const;

private:
  bool Enabled;
  std::vector<std::pair<RecordingKind, std::string>> Sections;
  std::vector<std::pair<std::string, std::string>> Files;
};

} // namespace kiln

#endif // KILN_COMPILE_RECORDING_H
