//===- CodeGenTest.cpp - Target machines, optimisation and emission -------===//

#include "IRObject.h"

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/HostInfo.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

using namespace kiln;
using namespace llvm;

namespace {

/// The x86-64 tests compile for it from any host (docs/Portability.md).
const char *const X86Triple = "x86_64-linux-gnu";

/// A loop the loop vectoriser turns into SIMD: c[i] = a[i] + b[i].
const char *LoopIR = R"(
define void @add(ptr noalias %a, ptr noalias %b, ptr noalias %c, i64 %n) {
entry:
  %z = icmp eq i64 %n, 0
  br i1 %z, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %in, %loop ]
  %pa = getelementptr float, ptr %a, i64 %i
  %x = load float, ptr %pa
  %pb = getelementptr float, ptr %b, i64 %i
  %y = load float, ptr %pb
  %s = fadd float %x, %y
  %pc = getelementptr float, ptr %c, i64 %i
  store float %s, ptr %pc
  %in = add i64 %i, 1
  %more = icmp ult i64 %in, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
)";

/// c[i] = expf(a[i]): vectorised through libmvec when the target has AVX2.
const char *ExpIR = R"(
declare float @expf(float)
define void @vexp(ptr noalias %a, ptr noalias %c, i64 %n) {
entry:
  %z = icmp eq i64 %n, 0
  br i1 %z, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %in, %loop ]
  %pa = getelementptr float, ptr %a, i64 %i
  %x = load float, ptr %pa
  %e = call float @expf(float %x) #0
  %pc = getelementptr float, ptr %c, i64 %i
  store float %e, ptr %pc
  %in = add i64 %i, 1
  %more = icmp ult i64 %in, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
attributes #0 = { nounwind memory(none) }
)";

std::string assemblyFor(const char *IR, const CodeGenOptions &Opts) {
  LLVMContext Ctx;
  SMDiagnostic Diag;
  auto M = parseAssemblyString(IR, Diag, Ctx);
  EXPECT_TRUE(M) << Diag.getMessage().str();
  if (!M)
    return "";
  auto TM = createTargetMachine(Opts);
  EXPECT_TRUE(!!TM);
  if (!TM)
    return toString(TM.takeError());
  if (Error E = optimizeModule(*M, **TM, Opts.OptLevel))
    return toString(std::move(E));
  auto Asm = emitAssembly(*M, **TM);
  EXPECT_TRUE(!!Asm);
  return Asm ? *Asm : toString(Asm.takeError());
}

TEST(CodeGen, EmitsAnObjectAndAssemblyForTheHost) {
  auto Obj = test::compileIR(test::vaddIR("kiln_cube_vadd"));
  ASSERT_GE(Obj.size(), 4u);
  EXPECT_EQ(StringRef(Obj.data(), 4), "\x7f"
                                      "ELF");
  std::string Asm = assemblyFor(test::vaddIR("kiln_cube_vadd").c_str(), {});
  EXPECT_NE(Asm.find("kiln_cube_vadd:"), std::string::npos);
}

TEST(CodeGen, SetsTripleAndDataLayout) {
  LLVMContext Ctx;
  Module M("m", Ctx);
  auto TM = createTargetMachine({});
  ASSERT_TRUE(!!TM) << toString(TM.takeError());
  ASSERT_FALSE(optimizeModule(M, **TM, 0));
  EXPECT_EQ(M.getTargetTriple(), hostInfo().Triple);
  EXPECT_EQ(M.getDataLayout(), (*TM)->createDataLayout());
}

TEST(CodeGen, ExplicitAVX2GivesYmm) {
  CodeGenOptions Opts;
  Opts.Triple = X86Triple;
  Opts.CPU = "x86-64";
  Opts.Features = "+avx2,+fma";
  std::string Asm = assemblyFor(LoopIR, Opts);
  EXPECT_NE(Asm.find("ymm"), std::string::npos) << Asm;
  Opts.Features = "-avx,-avx2";
  Asm = assemblyFor(LoopIR, Opts);
  EXPECT_EQ(Asm.find("ymm"), std::string::npos) << Asm;
  EXPECT_NE(Asm.find("xmm"), std::string::npos) << Asm;
}

TEST(CodeGen, NoVectorizationAtO1) {
  CodeGenOptions Opts;
  Opts.Triple = X86Triple;
  Opts.CPU = "x86-64";
  Opts.Features = "+avx2";
  Opts.OptLevel = 1;
  std::string Asm = assemblyFor(LoopIR, Opts);
  EXPECT_EQ(Asm.find("ymm"), std::string::npos) << Asm;
}

TEST(CodeGen, VectorMathThroughLibmvec) {
  CodeGenOptions Opts;
  Opts.Triple = X86Triple;
  Opts.CPU = "x86-64";
  Opts.Features = "+avx2,+fma";
  std::string Asm = assemblyFor(ExpIR, Opts);
  EXPECT_NE(Asm.find("_ZGVdN8v_expf"), std::string::npos) << Asm;
  Opts.Features = "-avx,-avx2";
  Asm = assemblyFor(ExpIR, Opts);
  EXPECT_EQ(Asm.find("_ZGVdN8v_expf"), std::string::npos);
}

TEST(CodeGen, RejectsBadLevelsAndModules) {
  CodeGenOptions Opts;
  Opts.OptLevel = 4;
  auto TM = createTargetMachine(Opts);
  ASSERT_FALSE(!!TM);
  EXPECT_NE(toString(TM.takeError()).find("out of range"), std::string::npos);

  CodeGenOptions BadCPU;
  BadCPU.CPU = "no-such-cpu";
  auto TM2 = createTargetMachine(BadCPU);
  ASSERT_FALSE(!!TM2);
  EXPECT_NE(toString(TM2.takeError()).find("unknown CPU 'no-such-cpu'"),
            std::string::npos);
  CodeGenOptions BadFeature;
  BadFeature.Triple = X86Triple;
  BadFeature.Features = "+avx2,+no-such-feature";
  auto TM3 = createTargetMachine(BadFeature);
  ASSERT_FALSE(!!TM3);
  EXPECT_NE(toString(TM3.takeError())
                .find("unknown target feature 'no-such-feature'"),
            std::string::npos);
  BadFeature.Features = "avx2";
  auto TM4 = createTargetMachine(BadFeature);
  ASSERT_FALSE(!!TM4);
  EXPECT_NE(toString(TM4.takeError()).find("must start with '+' or '-'"),
            std::string::npos);

  auto Good = createTargetMachine({});
  ASSERT_TRUE(!!Good);
  LLVMContext Ctx;
  Module M("m", Ctx);
  // A block without a terminator does not verify.
  Function *F = Function::Create(FunctionType::get(Type::getVoidTy(Ctx), false),
                                 Function::ExternalLinkage, "f", M);
  BasicBlock::Create(Ctx, "entry", F);
  Error E = optimizeModule(M, **Good, 2);
  ASSERT_TRUE(!!E);
  EXPECT_NE(toString(std::move(E)).find("invalid LLVM module"),
            std::string::npos);
  Error E5 = optimizeModule(M, **Good, 5);
  ASSERT_TRUE(!!E5);
  consumeError(std::move(E5));
}

/// a[3i] = 1: loop strength reduction would replace the scaled index by a
/// pointer stepping 12 bytes (`addq $12`); code generation leaves it out
/// (CodeGen.cpp, CodeGenerationGate), so the store keeps the index.
/// Also checks that the context's own gate is back afterwards.
TEST(CodeGen, CodeGenerationLeavesOutLoopStrengthReduction) {
  const char *StrideIR = R"(
define void @stride3(ptr %a, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %in, %loop ]
  %j = mul i64 %i, 3
  %p = getelementptr float, ptr %a, i64 %j
  store float 1.0, ptr %p
  %in = add i64 %i, 1
  %more = icmp ult i64 %in, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
)";
  LLVMContext Ctx;
  OptPassGate &Before = Ctx.getOptPassGate();
  SMDiagnostic Diag;
  auto M = parseAssemblyString(StrideIR, Diag, Ctx);
  ASSERT_TRUE(M) << Diag.getMessage().str();
  CodeGenOptions X86;
  X86.Triple = X86Triple;
  auto TM = createTargetMachine(X86);
  ASSERT_TRUE(!!TM) << toString(TM.takeError());
  auto Asm = emitAssembly(*M, **TM);
  ASSERT_TRUE(!!Asm) << toString(Asm.takeError());
  EXPECT_EQ(Asm->find("addq\t$12"), std::string::npos) << *Asm;
  EXPECT_NE(Asm->find(",4)"), std::string::npos) << *Asm; // scaled index
  EXPECT_EQ(&Ctx.getOptPassGate(), &Before);
}

/// Records every pass the context's gate is asked about, and lets it run.
class RecordingGate final : public OptPassGate {
public:
  bool shouldRunPass(StringRef PassName, StringRef IRDescription) override {
    Asked.insert((PassName + " @ " + IRDescription).str());
    return true;
  }
  bool isEnabled() const override { return true; }
  bool asked(StringRef PassName, StringRef Function) const {
    return Asked.count((PassName + " @ function (" + Function + ")").str());
  }
  std::set<std::string> Asked;
};

/// A function of \p Adds dependent adds on loaded values, stored back.
std::string chainIR(StringRef Name, unsigned Adds) {
  std::string IR = ("define void @" + Name + "(ptr %p) {\n").str();
  IR += "  %v0 = load i32, ptr %p\n";
  for (unsigned I = 1; I <= Adds; ++I) {
    IR += "  %q" + std::to_string(I) + " = getelementptr i32, ptr %p, i64 " +
          std::to_string(I % 64) + "\n";
    IR += "  %w" + std::to_string(I) + " = load i32, ptr %q" +
          std::to_string(I) + "\n";
    IR += "  %v" + std::to_string(I) + " = add i32 %v" + std::to_string(I - 1) +
          ", %w" + std::to_string(I) + "\n";
    IR += "  store i32 %v" + std::to_string(I) + ", ptr %q" +
          std::to_string(I) + "\n";
  }
  return IR + "  ret void\n}\n";
}

/// Emits \p M as assembly for \p CPU (the gates see every pass).
Error emitFor(const char *CPU, Module &M) {
  CodeGenOptions Opts;
  Opts.Triple = X86Triple;
  Opts.CPU = CPU;
  auto TM = createTargetMachine(Opts);
  if (!TM)
    return TM.takeError();
  auto Asm = emitAssembly(M, **TM);
  return Asm ? Error::success() : Asm.takeError();
}

/// Post-RA list scheduling is left out of functions of more than
/// PostRASchedulingLimit IR instructions and kept for smaller ones. The gate
/// installed before (here one that records what it is asked) still decides
/// every other pass, and is the context's again afterwards.
TEST(CodeGen, PostRASchedulingOnlyForFunctionsUpToTheLimit) {
  // 4 instructions an add: `small` stays under the limit, `large` exceeds it.
  unsigned SmallAdds = PostRASchedulingLimit / 4 - 2;
  unsigned LargeAdds = PostRASchedulingLimit / 4 + 2;
  // A tuning that schedules after register allocation (Zen) and one that
  // does not (Skylake): the gate is asked the same on both.
  for (const char *CPU : {"znver3", "skylake"}) {
    SCOPED_TRACE(CPU);
    LLVMContext Ctx;
    RecordingGate Recorder;
    Ctx.setOptPassGate(Recorder);
    SMDiagnostic Diag;
    auto M = parseAssemblyString(
        chainIR("small", SmallAdds) + chainIR("large", LargeAdds), Diag, Ctx);
    ASSERT_TRUE(M) << Diag.getMessage().str();
    ASSERT_LE(M->getFunction("small")->getInstructionCount(),
              PostRASchedulingLimit);
    ASSERT_GT(M->getFunction("large")->getInstructionCount(),
              PostRASchedulingLimit);
    Error E = emitFor(CPU, *M);
    ASSERT_FALSE(!!E) << toString(std::move(E));
    const char *PostRA = "Post RA top-down list latency scheduler";
    EXPECT_TRUE(Recorder.asked(PostRA, "small"));
    EXPECT_FALSE(Recorder.asked(PostRA, "large"));
    // Both functions went through code generation, asking the recorder.
    const char *Cleanup = "Machine Copy Propagation Pass";
    EXPECT_TRUE(Recorder.asked(Cleanup, "small"));
    EXPECT_TRUE(Recorder.asked(Cleanup, "large"));
    EXPECT_EQ(&Ctx.getOptPassGate(), &Recorder);
  }
}

/// X86 domain reassignment is left out on AVX-512 targets (the only ones
/// where it does anything): the gate refuses it before the recorder installed
/// before is asked, while the recorder still sees the other passes.
TEST(CodeGen, DomainReassignmentLeftOut) {
  for (const char *CPU : {"znver4", "skylake-avx512"}) {
    SCOPED_TRACE(CPU);
    LLVMContext Ctx;
    RecordingGate Recorder;
    Ctx.setOptPassGate(Recorder);
    SMDiagnostic Diag;
    auto M = parseAssemblyString(chainIR("f", 8), Diag, Ctx);
    ASSERT_TRUE(M) << Diag.getMessage().str();
    Error E = emitFor(CPU, *M);
    ASSERT_FALSE(!!E) << toString(std::move(E));
    EXPECT_FALSE(Recorder.asked("X86 Domain Reassignment Pass", "f"));
    EXPECT_TRUE(Recorder.asked("Machine Copy Propagation Pass", "f"));
    EXPECT_EQ(&Ctx.getOptPassGate(), &Recorder);
  }
}

TEST(CodeGen, ConcurrentCompilationsWithOwnMachines) {
  std::vector<std::thread> Threads;
  std::vector<size_t> Sizes(4);
  for (unsigned T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      Sizes[T] =
          test::compileIR(test::vaddIR("kiln_cube_v" + std::to_string(T)), 3)
              .size();
    });
  for (std::thread &T : Threads)
    T.join();
  for (size_t S : Sizes)
    EXPECT_GT(S, 0u);
}

} // namespace
