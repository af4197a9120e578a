//===- Diagnostic.h - Located diagnostics as llvm::Error --------*- C++ -*-===//
//
// Every user-facing error about a kernel has the form
//   FILE:LINE:COL: error: MESSAGE
// A DiagnosticError carries one or more of them, in the order they were
// found, so that batch compilation can report them deterministically.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_DIAGNOSTIC_H
#define KILN_IR_DIAGNOSTIC_H

#include "kiln/IR/Operation.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln {

struct Diagnostic {
  std::string File;
  SourceLoc Loc;
  std::string Message; ///< lower case, no final period

  /// "FILE:LINE:COL: error: MESSAGE" (line and column 0 when unknown).
  std::string str() const;
};

/// An llvm::Error holding located diagnostics.
class DiagnosticError : public llvm::ErrorInfo<DiagnosticError> {
public:
  static char ID;
  explicit DiagnosticError(std::vector<Diagnostic> Diags)
      : Diags(std::move(Diags)) {}
  const std::vector<Diagnostic> &diagnostics() const { return Diags; }
  /// One diagnostic per line, no trailing newline.
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::vector<Diagnostic> Diags;
};

/// Makes an Error holding one located diagnostic.
llvm::Error makeDiagnostic(llvm::StringRef File, SourceLoc Loc,
                           const llvm::Twine &Message);

} // namespace kiln

#endif // KILN_IR_DIAGNOSTIC_H
