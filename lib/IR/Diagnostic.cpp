//===- Diagnostic.cpp - Located diagnostics -------------------------------===//

#include "kiln/IR/Diagnostic.h"

#include "llvm/Support/raw_ostream.h"

using namespace kiln;

char DiagnosticError::ID = 0;

std::string Diagnostic::str() const {
  if (Loc.isValid())
    return File + ":" + std::to_string(Loc.Line) + ":" +
           std::to_string(Loc.Col) + ": error: " + Message;
  std::string S = File.empty() ? "<builder>" : File;
  S += ": error: ";
  if (KernelName) {
    S += "in kernel ";
    S += KernelName->empty() ? "<unnamed>" : "@" + *KernelName;
    if (OpIndex) {
      S += ", operation #" + std::to_string(*OpIndex);
      if (!OpText.empty())
        S += " (" + OpText + ")";
    }
    S += ": ";
  }
  return S + Message;
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
