//===- BlendScratchTest.cpp - Masked stores to scratch as blends ----------===//
//
// Optimised for a CPU whose masked stores are microcoded (Zen 3 without
// AVX-512, by LLVM's scheduling model), a divergent store into shared memory
// or a per-unit slot becomes load + blend + store when the vector lies in
// the scratch area (BlendScratchStores.h). Each test checks that the
// rewrite happened (or did not, on CPUs where masked stores are cheap) and
// that every unit's result is the one the kernel asks for.
//
//===----------------------------------------------------------------------===//

#include "BlendScratchStores.h"
#include "LoweringHarness.h"

#include "kiln/CPU/HostInfo.h"

#include "gtest/gtest.h"

#include <string>
#include <tuple>
#include <vector>

using namespace kiln;
using namespace kiln::test;

namespace {

/// Two guarded stores into shared arrays (one at an offset index, so that
/// the last vectors reach past the array) and a var set under a condition,
/// read after a barrier.
const char *GuardedStores = R"(
kernel @guarded cube_dim(64) (%in: buffer<f32, read>, %out: buffer<f32, write>) {
  %s = shared f32[64]
  %t = shared f32[70]
  %lid = unit_pos : u32
  store %s[%lid], -1.0:f32
  %l6 = add %lid, 6:u32 : u32
  store %t[%l6], -2.0:f32
  %small = lt %lid, 6:u32 : bool
  if %small {
    store %t[%lid], -3.0:f32
  }
  %acc = var f32
  set %acc, 5.0:f32
  sync_cube
  %gid = absolute_pos : u32
  %x = load %in[%gid] : f32
  %pos = gt %x, 0.0:f32 : bool
  if %pos {
    %y = mul %x, 2.0:f32 : f32
    store %s[%lid], %y
    store %t[%l6], %x
    set %acc, %y
  }
  sync_cube
  %a = load %s[%lid] : f32
  %b = load %t[%l6] : f32
  %c = get %acc : f32
  %ab = add %a, %b : f32
  %abc = add %ab, %c : f32
  store %out[%gid], %abc
}
)";

float expected(float X) {
  if (X > 0)
    return 2 * X + X + 2 * X;
  return -1.0f - 2.0f + 5.0f;
}

bool hostRunsAVX2() {
  for (const char *F : {"avx", "avx2", "fma", "bmi2"})
    if (!hostInfo().hasFeature(F))
      return false;
  return true;
}

/// \p CPU's scheduling model (which decides the rewrite) with the features
/// the host lacks switched off, so that the code runs here: an Intel host
/// has no `clzero`, `sse4a` or `mwaitx`, which `znver3` implies.
CodeGenOptions runnableHere(const char *CPU) {
  CodeGenOptions O;
  O.CPU = CPU;
  for (const char *F : {"clzero", "sse4a", "mwaitx", "rdpid", "sha", "vaes",
                        "vpclmulqdq", "adx", "wbnoinvd", "rdpru", "clwb",
                        "xsaves", "xsavec", "prfchw", "rdseed", "movbe"})
    if (!hostInfo().hasFeature(F))
      O.Features += std::string(O.Features.empty() ? "" : ",") + "-" + F;
  return O;
}

void runAndCheck(const CodeGenOptions &Target, bool WantBlend) {
  for (bool Checked : {true, false}) {
    SCOPED_TRACE(Target.CPU + " " + Target.Features +
                 (Checked ? " checked" : " unchecked"));
    CpuVariant V;
    V.BoundsChecked = Checked;
    V.BufferAlignment = 4; // std::vector's, not 64
    JitKernel K = compile(GuardedStores, V, {}, /*OptimizeO3=*/true, Target);
    ASSERT_TRUE(K.Fn);
    EXPECT_EQ(K.OptimizedIR.find("scratch.old") != std::string::npos,
              WantBlend)
        << K.OptimizedIR;
    // Each blend is behind `offset <= scratch bytes - 32` (8 x f32): a
    // vector that reaches past the area keeps its masked store.
    std::string Edge =
        ", " + std::to_string(K.Metadata.ScratchBytes - 32) + "\n";
    for (size_t P = K.OptimizedIR.find("%scratch.inside");
         P != std::string::npos;
         P = K.OptimizedIR.find("%scratch.inside", P + 1)) {
      size_t EOL = K.OptimizedIR.find('\n', P);
      std::string Line = K.OptimizedIR.substr(P, EOL + 1 - P);
      if (Line.find(" = icmp ule i64 ") != std::string::npos) {
        EXPECT_NE(Line.find(Edge), std::string::npos) << Line;
      }
    }
    constexpr uint32_t Cubes = 5, Units = 64;
    std::vector<float> In(Cubes * Units), Out(Cubes * Units, 0);
    for (uint32_t I = 0; I < In.size(); ++I)
      In[I] = ((I * 7919u) % 13u < 6u ? -1.0f : 1.0f) * float(I % 17 + 1);
    K.launch({buf(In), buf(Out)}, {Cubes, 1, 1});
    for (uint32_t I = 0; I < In.size(); ++I)
      ASSERT_EQ(Out[I], expected(In[I])) << "unit " << I;
  }
}

TEST(BlendScratchStores, Zen3BlendsAndKeepsResults) {
  if (!hostRunsAVX2())
    GTEST_SKIP() << "the host cannot run AVX2 code";
  runAndCheck(runnableHere("znver3"), /*WantBlend=*/true);
}

TEST(BlendScratchStores, CheapMaskedStoresAreKept) {
  if (!hostRunsAVX2())
    GTEST_SKIP() << "the host cannot run AVX2 code";
  // vmaskmovps store: 2 micro-ops
  runAndCheck(runnableHere("skylake"), /*WantBlend=*/false);
}

TEST(BlendScratchStores, CostFromTheSchedulingModel) {
  for (auto [CPU, Features, Expensive] :
       {std::tuple<const char *, const char *, bool>{"znver3", "", true},
        {"skylake", "", false},
        {"haswell", "", false},
        {"znver4", "", false}, // AVX-512: masked stores are `vmovups {k}`
        {"x86-64-v2", "", false}}) { // no AVX: nothing to rewrite
    SCOPED_TRACE(CPU);
    CodeGenOptions O;
    O.CPU = CPU;
    O.Features = Features;
    auto TM = createTargetMachine(O);
    ASSERT_TRUE(bool(TM)) << llvm::toString(TM.takeError());
    llvm::LLVMContext Ctx;
    llvm::Module M("m", Ctx);
    auto *F = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx), false),
        llvm::GlobalValue::ExternalLinkage, "f", M);
    EXPECT_EQ(maskedStoresAreMicrocoded(**TM, *F), Expensive);
  }
}

} // namespace
