//===- FunctionPassTestUtil.h - One function pass on parsed IR -*- C++ -*-===//
//
// The tests of lib/CPU's own LLVM passes (JamUnitLoops, StreamingUnroll)
// run one pass on one function of hand-written IR, with the analyses a
// PassBuilder registers (and TTI from a target machine when given), then
// verify and print the module.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_LOWERING_FUNCTIONPASSTESTUTIL_H
#define KILN_UNITTESTS_LOWERING_FUNCTIONPASSTESTUTIL_H

#include "kiln/CPU/CodeGen.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include "gtest/gtest.h"

#include <string>

namespace kiln::test {

/// Runs \p Pass on the function \p Name of \p M (with \p TM's target
/// information when given), checks that the module still verifies and
/// returns it printed.
template <typename PassT>
std::string runFunctionPass(llvm::Module &M, llvm::StringRef Name, PassT Pass,
                            llvm::TargetMachine *TM = nullptr) {
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PassBuilder PB(TM);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  llvm::FunctionPassManager FPM;
  FPM.addPass(std::move(Pass));
  FPM.run(*M.getFunction(Name), FAM);
  std::string Err;
  llvm::raw_string_ostream ErrOS(Err);
  EXPECT_FALSE(llvm::verifyModule(M, &ErrOS)) << Err;
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  M.print(OS, nullptr);
  return Out;
}

/// Parses \p IR and runs \p Pass on its function `f`: with \p CPU's target
/// machine, the module prepared as optimizeModule prepares it, when \p CPU
/// is given. Returns the module printed; "" (and a test failure) when the
/// IR does not parse or the CPU is unknown.
template <typename PassT>
std::string runOnParsedIR(const std::string &IR, PassT Pass,
                          const char *CPU = nullptr) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Diag;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(IR, Diag, Ctx);
  if (!M) {
    ADD_FAILURE() << Diag.getMessage().str() << "\n" << IR;
    return "";
  }
  if (!CPU)
    return runFunctionPass(*M, "f", std::move(Pass));
  CodeGenOptions Opts;
  Opts.CPU = CPU;
  auto TM = createTargetMachine(Opts);
  if (!TM) {
    ADD_FAILURE() << llvm::toString(TM.takeError());
    return "";
  }
  prepareModule(*M, **TM);
  return runFunctionPass(*M, "f", std::move(Pass), TM->get());
}

/// How many times \p What occurs in \p Text (printed IR).
inline size_t countOf(const std::string &Text, const std::string &What) {
  size_t N = 0;
  for (size_t P = Text.find(What); P != std::string::npos;
       P = Text.find(What, P + 1))
    ++N;
  return N;
}

} // namespace kiln::test

#endif // KILN_UNITTESTS_LOWERING_FUNCTIONPASSTESTUTIL_H
