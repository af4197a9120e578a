//===- Diagnostic.cpp - Located diagnostics -------------------------------===//

#include "kiln/IR/Diagnostic.h"

#include "llvm/Support/raw_ostream.h"

using namespace kiln;

char DiagnosticError::ID = 0;

std::string Diagnostic::str() const {
  return File + ":" + std::to_string(Loc.Line) + ":" + std::to_string(Loc.Col) +
         ": error: " + Message;
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
  return llvm::make_error<DiagnosticError>(
      std::vector<Diagnostic>{{File.str(), Loc, Message.str()}});
}
