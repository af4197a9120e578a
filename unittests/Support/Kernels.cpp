//===- Kernels.cpp - Kernel texts and parse helpers for tests -------------===//

#include "Support/Kernels.h"

#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace kiln;

const char *const kiln::test::VaddText = R"(
kernel @vadd cube_dim(64) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                           %c: buffer<f32, write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = add %x, %y : f32
    store %c[%i], %s
  }
}
)";

const char *const kiln::test::SpinText = R"(
kernel @spin cube_dim(64) (%out: buffer<u32, read_write>) {
  %i = absolute_pos.x : u32
  %n = var u32
  set %n, 0:u32
  loop {
    %v = get %n : u32
    %w = add %v, 1:u32 : u32
    set %n, %w
    store %out[%i], %w
  }
}
)";

const char *const kiln::test::AffineText = R"(
kernel @affine cube_dim(64) (%y: buffer<f32, read_write>, %a: f32, %b: f32,
                             %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %v = load %y[%i] : f32
    %r = fma %a, %v, %b : f32
    store %y[%i], %r
  }
}
)";

Module kiln::test::parseOk(llvm::StringRef Text, llvm::StringRef File) {
  llvm::Expected<Module> M = parseModule(Text, File);
  if (!M) {
    ADD_FAILURE() << llvm::toString(M.takeError());
    return Module();
  }
  return std::move(*M);
}

IRKernel kiln::test::parseOneKernel(llvm::StringRef Text,
                                    llvm::StringRef File) {
  Module M = parseOk(Text, File);
  if (M.Kernels.empty()) {
    ADD_FAILURE() << "no kernel in:\n" << Text.str();
    return IRKernel();
  }
  return std::move(M.Kernels.front());
}

std::string kiln::test::parseError(llvm::StringRef Text,
                                   llvm::StringRef File) {
  llvm::Expected<Module> M = parseModule(Text, File);
  if (M) {
    ADD_FAILURE() << "parsed:\n" << printModule(*M);
    return "";
  }
  return llvm::toString(M.takeError());
}

Module kiln::test::parseAndVerify(llvm::StringRef Text,
                                  const DeviceLimits &Limits,
                                  llvm::StringRef File) {
  Module M = parseOk(Text, File);
  for (const std::string &D : diagnosticTexts(verifyModule(M, Limits)))
    ADD_FAILURE() << D;
  return M;
}

std::vector<std::string> kiln::test::diagnosticTexts(llvm::Error E) {
  std::vector<std::string> Out;
  llvm::handleAllErrors(
      std::move(E),
      [&](const DiagnosticError &D) {
        for (const Diagnostic &X : D.diagnostics())
          Out.push_back(X.str());
      },
      [&](const llvm::ErrorInfoBase &Other) {
        Out.push_back("unexpected error: " + Other.message());
      });
  return Out;
}
