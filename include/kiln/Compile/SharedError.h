//===- SharedError.h - An error several requests share ----------*- C++ -*-===//
//
// A kernel requested twice in one batch is compiled once; when it fails,
// every request gets the failure. llvm::Error is move-only and must be
// consumed once, so a SharedError takes it apart and makes equal Errors on
// demand.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_SHAREDERROR_H
#define KILN_COMPILE_SHAREDERROR_H

#include "kiln/IR/Diagnostic.h"

#include "llvm/Support/Error.h"

#include <string>
#include <system_error>
#include <vector>

namespace kiln {

class SharedError {
public:
  /// Consumes \p E, which must be a failure.
  explicit SharedError(llvm::Error E);

  /// A new Error equal to the one consumed: a DiagnosticError keeps its
  /// diagnostics (and type), anything else its message and error code.
  llvm::Error make() const;
  /// The message, as llvm::toString would give it.
  std::string message() const;

private:
  struct Part {
    bool IsDiagnostic = false;
    std::vector<Diagnostic> Diags;
    std::string Message;
    std::error_code EC;
  };
  std::vector<Part> Parts;
};

} // namespace kiln

#endif // KILN_COMPILE_SHAREDERROR_H
