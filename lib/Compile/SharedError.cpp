//===- SharedError.cpp - An error several requests share -----------------===//

#include "kiln/Compile/SharedError.h"

using namespace llvm;

namespace kiln {

SharedError::SharedError(Error E) {
  handleAllErrors(
      std::move(E),
      [&](const DiagnosticError &D) {
        Part P;
        P.IsDiagnostic = true;
        P.Diags = D.diagnostics();
        Parts.push_back(std::move(P));
      },
      [&](const ErrorInfoBase &Info) {
        Part P;
        P.Message = Info.message();
        P.EC = Info.convertToErrorCode();
        Parts.push_back(std::move(P));
      });
  // A success handed in by mistake must still make a failure.
  if (Parts.empty()) {
    Part P;
    P.Message = "unknown error";
    P.EC = inconvertibleErrorCode();
    Parts.push_back(std::move(P));
  }
}

Error SharedError::make() const {
  Error Result = Error::success();
  for (const Part &P : Parts) {
    Error E = P.IsDiagnostic
                  ? Error(std::make_unique<DiagnosticError>(P.Diags))
                  : Error(std::make_unique<StringError>(P.Message, P.EC));
    Result = joinErrors(std::move(Result), std::move(E));
  }
  return Result;
}

std::string SharedError::message() const { return toString(make()); }

} // namespace kiln
