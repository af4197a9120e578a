//===- Diagnostic.cpp - Located diagnostics -------------------------------===//

#include "kiln/IR/Diagnostic.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

using namespace kiln;

char DiagnosticError::ID = 0;

std::string kiln::formatLoc(SourceLoc Loc) {
  return std::to_string(Loc.Line) + ":" + std::to_string(Loc.Col);
}

std::string Diagnostic::str() const {
  if (Loc.isValid())
    return fmt::format("{}:{}:{}: error: {}", File, Loc.Line, Loc.Col, Message);
  // No location (a kernel made with the builder): name the kernel and the
  // operation instead.
  std::string Where;
  if (KernelName) {
    Where = KernelName->empty() ? "in kernel <unnamed>"
                                : fmt::format("in kernel @{}", *KernelName);
    if (OpIndex)
      Where += OpText.empty()
                   ? fmt::format(", operation #{}", *OpIndex)
                   : fmt::format(", operation #{} ({})", *OpIndex, OpText);
    Where += ": ";
  }
  return fmt::format("{}: error: {}{}", File.empty() ? "<builder>" : File,
                     Where, Message);
}

void DiagnosticError::log(llvm::raw_ostream &OS) const {
  for (size_t I = 0; I < Diags.size(); ++I) {
    if (I)
      OS << "\n";
    OS << Diags[I].str();
  }
}

std::error_code DiagnosticError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

llvm::Error kiln::makeDiagnostic(llvm::StringRef File, SourceLoc Loc,
                                 const llvm::Twine &Message) {
  Diagnostic D;
  D.File = File.str();
  D.Loc = Loc;
  D.Message = Message.str();
  return llvm::make_error<DiagnosticError>(std::vector<Diagnostic>{D});
}
