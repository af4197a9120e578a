//===- VectorizeTest.cpp - Unit loops vectorise on the host
//----------------===//
//
// Optimises the lowered element-wise kernel at O3 with a TargetMachine for
// the host (docs/Design.md §10.1-10.2) and checks that the unit loop became
// SIMD code without a runtime alias check (pitfall 3).
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include "kiln/CPU/CodeGen.h"

#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include "gtest/gtest.h"

#include <mutex>

using namespace kiln;
using namespace kiln::test;

namespace {

/// Optimises \p M with the backend's own O3 pipeline (kiln::optimizeModule)
/// for \p CPU (the host with its features when empty) and returns the
/// optimised IR.
std::string optimizeFor(llvm::Module &M, llvm::StringRef CPU = "") {
  CodeGenOptions Opts;
  Opts.CPU = CPU.str();
  auto TM = createTargetMachine(Opts);
  EXPECT_TRUE(!!TM) << (TM ? "" : llvm::toString(TM.takeError()));
  if (!TM)
    return "";
  if (llvm::Error E = optimizeModule(M, **TM, 3)) {
    ADD_FAILURE() << llvm::toString(std::move(E));
    return "";
  }
  std::string IR;
  llvm::raw_string_ostream OS(IR);
  M.print(OS, nullptr);
  return IR;
}

const char *VAdd = R"(
kernel @vadd cube_dim(256) (%a: buffer<f32, read>, %b: buffer<f32, read>,
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

bool hasVectorFAdd(const std::string &IR) {
  return IR.find("fadd <8 x float>") != std::string::npos ||
         IR.find("fadd <4 x float>") != std::string::npos ||
         IR.find("fadd <16 x float>") != std::string::npos;
}

TEST(LoweringVectorize, ElementwiseKernelVectorizesAtO3) {
  for (bool Checked : {false, true}) {
    llvm::LLVMContext Ctx;
    LoweredModule L = lowerOnly(VAdd, Ctx, CpuVariant{Checked, 64});
    ASSERT_TRUE(L.Module);
    std::string IR = optimizeFor(*L.Module);
    EXPECT_TRUE(hasVectorFAdd(IR))
        << (Checked ? "checked" : "unchecked") << "\n"
        << IR;
    // The alias scopes spare the vectoriser its runtime overlap check.
    EXPECT_EQ(IR.find("vector.memcheck"), std::string::npos) << IR;
    // No gathers: consecutive units access consecutive elements.
    EXPECT_EQ(IR.find("masked.gather"), std::string::npos) << IR;
  }
}

TEST(LoweringVectorize, ElementwiseKernelVectorizesForAVX2) {
  // The machine of docs/Lowering.md §11 (znver3: AVX2 + FMA, no AVX-512),
  // whatever the host: only optimisation runs, nothing executes.
  if (!llvm::StringRef(llvm::sys::getProcessTriple()).starts_with("x86_64"))
    GTEST_SKIP() << "not an x86-64 host";
  for (bool Checked : {false, true}) {
    llvm::LLVMContext Ctx;
    LoweredModule L = lowerOnly(VAdd, Ctx, CpuVariant{Checked, 64});
    ASSERT_TRUE(L.Module);
    std::string IR = optimizeFor(*L.Module, "znver3");
    EXPECT_NE(IR.find("fadd <8 x float>"), std::string::npos)
        << (Checked ? "checked" : "unchecked") << "\n"
        << IR;
    EXPECT_EQ(IR.find("vector.memcheck"), std::string::npos) << IR;
  }
}

unsigned countLinesStartingWith(const std::string &IR, llvm::StringRef Prefix) {
  unsigned N = 0;
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  llvm::StringRef(IR).split(Lines, '\n');
  for (llvm::StringRef L : Lines)
    N += L.starts_with(Prefix);
  return N;
}

TEST(LoweringVectorize, CheckedUnitLoopIsNotCloned) {
  // The bounds checks must not give O3's non-trivial unswitching an
  // invariant condition to clone the unit loop on (it made 7 vectorised
  // copies of this loop, one per combination of "buffer above 2^32-1").
  if (!llvm::StringRef(llvm::sys::getProcessTriple()).starts_with("x86_64"))
    GTEST_SKIP() << "not an x86-64 host";
  llvm::LLVMContext Ctx;
  LoweredModule L = lowerOnly(VAdd, Ctx, CpuVariant{true, 64});
  ASSERT_TRUE(L.Module);
  std::string IR = optimizeFor(*L.Module, "znver3");
  // At most two: the loop without checks (LoopVersioning.cpp) and the
  // guarded one (which may stay scalar: it runs only when a check fails).
  unsigned Bodies = countLinesStartingWith(IR, "vector.body");
  EXPECT_GE(Bodies, 1u) << IR;
  EXPECT_LE(Bodies, 2u) << IR;
}

TEST(LoweringVectorize, InBoundsCubesRunWithoutMasks) {
  // Both variants: the kernel's own `%i < %n` narrows the unit loop to the
  // units below n (UnitRange.h), and the loop gets a twin without the
  // bounds checks: plain vector loads and stores, and no masked access
  // even in the cube at the edge (it runs fewer units).
  if (!llvm::StringRef(llvm::sys::getProcessTriple()).starts_with("x86_64"))
    GTEST_SKIP() << "not an x86-64 host";
  for (bool Checked : {false, true}) {
    llvm::LLVMContext Ctx;
    LoweredModule L = lowerOnly(VAdd, Ctx, CpuVariant{Checked, 64});
    ASSERT_TRUE(L.Module);
    std::string IR = optimizeFor(*L.Module, "znver3");
    EXPECT_NE(IR.find("load <8 x float>"), std::string::npos) << IR;
    EXPECT_NE(IR.find("store <8 x float>"), std::string::npos) << IR;
    EXPECT_EQ(IR.find("masked.store"), std::string::npos) << IR;
  }
}

TEST(LoweringVectorize, ShortUnitLoopsVectorizeBeforeUnrolling) {
  // matmul's unit loops run over 16 units: unless the vectoriser sees them
  // before full unrolling, they become scalar tile loads with one branch per
  // bounds check; the tile loads of A and B must be vector loads and the k
  // loop must use vector FMAs.
  if (!llvm::StringRef(llvm::sys::getProcessTriple()).starts_with("x86_64"))
    GTEST_SKIP() << "not an x86-64 host";
  const char *MatMul = TiledMatmulKernel;
  llvm::LLVMContext Ctx;
  LoweredModule L = lowerOnly(MatMul, Ctx, CpuVariant{true, 64});
  ASSERT_TRUE(L.Module);
  std::string IR = optimizeFor(*L.Module, "znver3");
  EXPECT_NE(IR.find("fma.v8f32"), std::string::npos) << IR;
  // A's and B's tile loads, bounds-checked, in the twin without checks:
  // plain vector loads. Their guarded loops prove only bounds checks, so
  // they stay scalar (docs/Lowering.md §7): nothing masked.
  EXPECT_GE(countLinesStartingWith(IR, "  %wide.load"), 2u) << IR;
  EXPECT_EQ(IR.find("masked.load"), std::string::npos) << IR;
  EXPECT_EQ(IR.find("masked.store"), std::string::npos) << IR;
}

} // namespace
