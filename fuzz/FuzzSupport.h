//===- FuzzSupport.h - What Kiln's fuzz targets share ------------*- C++
//-*-===//
//
// A fuzz target reports a finding by aborting: libFuzzer keeps the input as
// a crash file. Sanitizer reports and LLVM fatal errors end up the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUZZ_FUZZSUPPORT_H
#define KILN_FUZZ_FUZZSUPPORT_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace kiln::fuzz {

/// Prints "kiln fuzz finding: WHAT" on standard error and aborts.
[[noreturn]] inline void finding(const llvm::Twine &What) {
  llvm::errs() << "kiln fuzz finding: " << What << "\n";
  llvm::errs().flush();
  std::abort();
}

/// Makes an LLVM fatal error (report_fatal_error, which would exit with
/// status 1) and an allocation failure inside LLVM abort instead, so that
/// libFuzzer keeps the input that caused them.
inline void abortOnLLVMFatalErrors() {
  llvm::install_fatal_error_handler(
      [](void *, const char *Reason, bool) {
        finding(llvm::Twine("LLVM fatal error: ") + Reason);
      },
      nullptr);
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *Reason, bool) {
        finding(llvm::Twine("LLVM allocation failure: ") + Reason);
      },
      nullptr);
}

} // namespace kiln::fuzz

#endif // KILN_FUZZ_FUZZSUPPORT_H
