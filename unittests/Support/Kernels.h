//===- Kernels.h - Kernel texts and parse helpers for tests -----*- C++ -*-===//
//
// Part of the test-support library (unittests/Support): the kernel texts
// several unit-test binaries share, and the parse-and-verify helpers they
// would otherwise each write again. A helper that expects success reports a
// failure through ADD_FAILURE and returns an empty value, so a test goes on
// to its own checks.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_SUPPORT_KERNELS_H
#define KILN_UNITTESTS_SUPPORT_KERNELS_H

#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Kernel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln::test {

/// @vadd(%a, %b, %c, %n): c[i] = a[i] + b[i] for i < n; cube_dim(64), f32.
extern const char *const VaddText;
/// @affine(%y, %a, %b, %n): y[i] = a * y[i] + b for i < n; cube_dim(64).
extern const char *const AffineText;
/// @spin(%out): every unit counts up forever in out[absolute_pos.x], a
/// kernel that never ends (cancellation tests); cube_dim(64), u32.
extern const char *const SpinText;

/// The module \p Text holds; ADD_FAILURE and an empty module when it does
/// not parse. \p File names it in diagnostics.
Module parseOk(llvm::StringRef Text, llvm::StringRef File = "t.kiln");

/// The first kernel of \p Text (parseOk); ADD_FAILURE and an empty kernel
/// when there is none.
IRKernel parseOneKernel(llvm::StringRef Text, llvm::StringRef File = "t.kiln");

/// The parser's error for \p Text; ADD_FAILURE and "" when it parses.
std::string parseError(llvm::StringRef Text, llvm::StringRef File = "t.kiln");

/// parseOk, then verifyModule against \p Limits; ADD_FAILURE with the
/// diagnostics when it does not verify.
Module parseAndVerify(llvm::StringRef Text, const DeviceLimits &Limits = {},
                      llvm::StringRef File = "t.kiln");

/// The text of each diagnostic of \p E ("file:line:col: error: ..."), or of
/// "unexpected error: MESSAGE" for any other error; empty for success.
std::vector<std::string> diagnosticTexts(llvm::Error E);

} // namespace kiln::test

#endif
