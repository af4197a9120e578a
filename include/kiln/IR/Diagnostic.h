//===- Diagnostic.h - Located diagnostics as llvm::Error --------*- C++ -*-===//
//
// Every user-facing error about a kernel has the form
//   FILE:LINE:COL: error: MESSAGE
// IR built in memory has no locations; its diagnostics say instead which
// kernel and operation they are about:
//   FILE: error: in kernel @NAME, operation #N (TEXT): MESSAGE
//   FILE: error: in kernel @NAME: MESSAGE
// (FILE "<builder>" when empty). A DiagnosticError carries one or more of
// them, in the order they were found, so that batch compilation can report
// them deterministically.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_DIAGNOSTIC_H
#define KILN_IR_DIAGNOSTIC_H

#include "kiln/IR/Operation.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct Diagnostic {
  std::string File;
  SourceLoc Loc;
  std::string Message; ///< lower case, no final period

  // What the diagnostic is about, filled when Loc is unknown (IR built in
  // memory) so that it can still be found.
  /// The kernel's name without '@' (empty for a kernel without a name);
  /// unset when the diagnostic is about no kernel.
  std::optional<std::string> KernelName;
  /// The operation's number (see forEachOperation in Kernel.h); unset for a
  /// diagnostic about the kernel as a whole.
  std::optional<unsigned> OpIndex;
  /// The operation as printOperationSummary (Printer.h) gives it.
  std::string OpText;

  /// With a location: "FILE:LINE:COL: error: MESSAGE". Without one (line 0):
  /// "FILE: error: in kernel @NAME, operation #N (TEXT): MESSAGE", the parts
  /// that are unset left out ("FILE: error: in kernel @NAME: MESSAGE",
  /// "FILE: error: MESSAGE"), with FILE "<builder>" when empty.
  std::string str() const;
};

/// An llvm::Error holding located diagnostics.
class DiagnosticError : public llvm::ErrorInfo<DiagnosticError> {
public:
  static char ID;
  explicit DiagnosticError(std::vector<Diagnostic> Found)
      : Diags(std::move(Found)) {}
  const std::vector<Diagnostic> &diagnostics() const { return Diags; }
  /// One diagnostic per line, no trailing newline.
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::vector<Diagnostic> Diags;
};

/// Formats \p Loc as "LINE:COL", as diagnostics name another place
/// ("already defined at 2:1").
std::string formatLoc(SourceLoc Loc);

/// Makes an Error holding one located diagnostic.
llvm::Error makeDiagnostic(llvm::StringRef File, SourceLoc Loc,
                           const llvm::Twine &Message);

} // namespace kiln

#endif // KILN_IR_DIAGNOSTIC_H
