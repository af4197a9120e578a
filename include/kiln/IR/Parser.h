//===- Parser.h - Parse the text form of the Kiln IR ------------*- C++ -*-===//

#ifndef KILN_IR_PARSER_H
#define KILN_IR_PARSER_H

#include "kiln/IR/Kernel.h"

#include "llvm/Support/Error.h"

namespace kiln {

/// Parses a whole `.kiln` file. \p FileName only names the file in
/// diagnostics. On failure returns a DiagnosticError with the first problem,
/// located ("FILE:LINE:COL: error: MESSAGE"). Never crashes, recurses without
/// bound or loops on any input (truncated text, binary junk, huge numbers,
/// deep nesting). The result is syntactically well-formed but not verified:
/// run verifyModule() on it.
llvm::Expected<Module> parseModule(llvm::StringRef Text,
                                   llvm::StringRef FileName);

} // namespace kiln

#endif // KILN_IR_PARSER_H
