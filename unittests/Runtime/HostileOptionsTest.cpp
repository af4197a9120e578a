//===- HostileOptionsTest.cpp - Device options that cannot work -----------===//
//
// Thread counts above the limit and target options that LLVM does not know,
// that leave x86-64 or that the host cannot run are errors of
// Device::create, before anything is compiled; LLVM's error diagnostics
// become errors of code generation instead of exiting the process.
//
//===----------------------------------------------------------------------===//

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/HostInfo.h"
#include "kiln/Runtime/Device.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"

#include "llvm/TargetParser/Triple.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

DeviceOptions memoryOptions() {
  DeviceOptions O;
  O.StoreMode = DeviceStoreMode::Off;
  return O;
}

/// The message of Device::create's error for \p O ("" if it succeeded), and
/// whether the error says invalid_argument.
std::string createError(const DeviceOptions &O, bool *Invalid = nullptr) {
  auto D = RuntimeDevice::create(O);
  if (D)
    return "";
  std::string Msg;
  llvm::handleAllErrors(D.takeError(), [&](const llvm::ErrorInfoBase &E) {
    if (Invalid)
      *Invalid = E.convertToErrorCode() ==
                 std::make_error_code(std::errc::invalid_argument);
    Msg = E.message();
  });
  return Msg;
}

TEST(HostileOptions, ThreadLimit) {
  DeviceOptions O = memoryOptions();
  O.Threads = Executor::MaxThreads;
  EXPECT_EQ(createError(O), ""); // capped to the cores
  O.Threads = Executor::MaxThreads + 1;
  bool Invalid = false;
  EXPECT_EQ(createError(O, &Invalid),
            "launch threads 4097 is above the limit of 4096 (0: all cores)");
  EXPECT_TRUE(Invalid);
  O.Threads = 65537; // what crashed the task arena once
  EXPECT_NE(createError(O), "");
  O.Threads = ~0u;
  EXPECT_NE(createError(O), "");

  O = memoryOptions();
  O.BatchThreads = Executor::MaxThreads;
  EXPECT_EQ(createError(O), "");
  O.BatchThreads = Executor::MaxThreads + 1;
  EXPECT_EQ(createError(O),
            "compile threads 4097 is above the limit of 4096 (0: all cores)");
}

TEST(HostileOptions, UnknownAndNonX86_64Targets) {
  if (!llvm::Triple(hostInfo().Triple).isX86())
    GTEST_SKIP() << "x86-64 CPUs and features on a device of this host";
  DeviceOptions O = memoryOptions();
  const std::string Triple = hostInfo().Triple;
  bool Invalid = false;
  O.CPU = "no-such-cpu";
  EXPECT_EQ(createError(O, &Invalid),
            "unknown CPU 'no-such-cpu' for " + Triple);
  EXPECT_TRUE(Invalid);
  // Valid x86 CPUs without 64-bit mode: LLVM would abort on them.
  for (const char *CPU : {"i386", "i686", "pentium4"}) {
    O.CPU = CPU;
    std::string E = createError(O);
    EXPECT_NE(E.find(std::string("CPU '") + CPU +
                     "' is not an x86-64 CPU: it lacks 64bit"),
              std::string::npos)
        << E;
  }
  O.CPU = "";
  O.Features = "+no-such-feature";
  EXPECT_EQ(createError(O),
            "unknown target feature 'no-such-feature' for " + Triple);
  O.Features = "avx2";
  EXPECT_EQ(createError(O), "target feature 'avx2' must start with '+' or '-'");
  O.Features = "+";
  EXPECT_EQ(createError(O), "unknown target feature '' for " + Triple);
  for (const char *F : {"-64bit", "-64bit-mode", "-sse2", "+avx2,-sse"}) {
    O.Features = F;
    std::string E = createError(O);
    EXPECT_NE(E.find(std::string("target features '") + F + "' turn off "),
              std::string::npos)
        << E;
    EXPECT_NE(E.find("which code for " + Triple + " needs"), std::string::npos)
        << E;
  }
  // Turning features off, a tuning flag and empty items are fine.
  for (const char *F : {"-avx2,-avx", "+slow-3ops-lea", "+sse2,,+cx8"}) {
    O.Features = F;
    EXPECT_EQ(createError(O), "") << F;
  }
}

TEST(HostileOptions, FeaturesTheHostLacks) {
  // Any instruction-set feature LLVM detects and this host does not have.
  const HostInfo &H = hostInfo();
  std::string Lacking;
  for (const std::string &F : H.Features)
    if (F[0] == '-' && F != "-64bit")
      Lacking = F.substr(1);
  if (Lacking.empty())
    GTEST_SKIP() << "the host has every feature LLVM knows";
  DeviceOptions O = memoryOptions();
  O.Features = "+" + Lacking;
  bool Invalid = false;
  EXPECT_EQ(createError(O, &Invalid),
            "the host lacks +" + Lacking +
                ": code compiled for it could not run here");
  EXPECT_TRUE(Invalid);
  // The same request is fine for code that does not run here.
  CodeGenOptions CG;
  CG.Features = O.Features;
  EXPECT_FALSE(checkTargetOptions(CG)) << Lacking;
  llvm::Error Runs = checkRunsOnHost(CG);
  EXPECT_TRUE(!!Runs);
  llvm::consumeError(std::move(Runs));
  // A CPU whose features the host lacks, named in the message.
  if (!H.hasFeature("avx512f")) {
    O.Features = "";
    O.CPU = "skylake-avx512";
    std::string E = createError(O);
    EXPECT_NE(E.find("the host lacks "), std::string::npos) << E;
    EXPECT_NE(E.find("+avx512f"), std::string::npos) << E;
  }
  // What the host has is fine.
  if (H.hasFeature("avx2")) {
    O = memoryOptions();
    O.Features = "+avx2";
    EXPECT_EQ(createError(O), "");
  }
}

const char *MaskedStoreIR = R"(
define void @f(ptr %p, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %next ]
  %q = getelementptr float, ptr %p, i32 %i
  %v = load float, ptr %q
  %c = fcmp olt float %v, 0.0
  br i1 %c, label %store, label %next
store:
  store float 0.0, ptr %q
  br label %next
next:
  %i1 = add i32 %i, 1
  %done = icmp eq i32 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
)";

std::unique_ptr<llvm::Module> parseIR(const char *Text,
                                      llvm::LLVMContext &Ctx) {
  llvm::SMDiagnostic Err;
  std::unique_ptr<llvm::Module> M = llvm::parseAssemblyString(Text, Err, Ctx);
  EXPECT_TRUE(!!M) << Err.getMessage().str();
  return M;
}

TEST(HostileOptions, AVX512OnACPUWithoutIt) {
  if (!llvm::Triple(hostInfo().Triple).isX86())
    GTEST_SKIP() << "x86-64 CPUs and features on a device of this host";
  // AVX-512 on a CPU without it gets 512-bit vectors too: without them
  // code generation aborts ("Cannot select: masked_store").
  for (const char *CPU : {"haswell", "znver3", "x86-64"}) {
    CodeGenOptions Opts;
    Opts.CPU = CPU;
    Opts.Features = "+avx512f";
    auto TM = createTargetMachine(Opts);
    ASSERT_TRUE(!!TM) << llvm::toString(TM.takeError());
    EXPECT_NE((*TM)->getTargetFeatureString().find("+evex512"),
              llvm::StringRef::npos);
    llvm::LLVMContext Ctx;
    std::unique_ptr<llvm::Module> M = parseIR(MaskedStoreIR, Ctx);
    ASSERT_TRUE(!!M);
    ASSERT_FALSE(optimizeModule(*M, **TM, 3));
    auto Obj = emitObject(*M, **TM);
    EXPECT_TRUE(!!Obj) << llvm::toString(Obj.takeError());
  }
  // Without 512-bit vectors, on purpose: only with avx512vl.
  CodeGenOptions Opts;
  Opts.CPU = "haswell";
  Opts.Features = "+avx512f,-evex512";
  auto TM = createTargetMachine(Opts);
  ASSERT_FALSE(!!TM);
  EXPECT_EQ(llvm::toString(TM.takeError()),
            "target features '+avx512f,-evex512': AVX-512 without evex512 "
            "needs +avx512vl");
  Opts.Features = "+avx512f,+avx512vl,-evex512";
  auto TM2 = createTargetMachine(Opts);
  ASSERT_TRUE(!!TM2) << llvm::toString(TM2.takeError());
  EXPECT_EQ((*TM2)->getTargetFeatureString().find("+evex512"),
            llvm::StringRef::npos);
}

TEST(HostileOptions, DiagnosticErrorsAreErrors) {
  // An error LLVM reports as a diagnostic (here, bad inline assembly) would
  // make LLVMContext's default handler print it and exit the process.
  auto TM = createTargetMachine({});
  ASSERT_TRUE(!!TM) << llvm::toString(TM.takeError());
  llvm::LLVMContext Ctx;
  std::unique_ptr<llvm::Module> M = parseIR(R"(
define void @f() {
  call void asm sideeffect "no_such_instruction %eax", ""()
  ret void
}
)",
                                            Ctx);
  ASSERT_TRUE(!!M);
  auto Obj = emitObject(*M, **TM);
  ASSERT_FALSE(!!Obj);
  std::string E = llvm::toString(Obj.takeError());
  EXPECT_NE(E.find("LLVM reported an error in code generation"),
            std::string::npos)
      << E;
  EXPECT_NE(E.find("no_such_instruction"), std::string::npos) << E;
  // The context's own handler is back afterwards.
  EXPECT_EQ(Ctx.getDiagHandlerPtr()->DiagHandlerCallback, nullptr);
}

} // namespace
