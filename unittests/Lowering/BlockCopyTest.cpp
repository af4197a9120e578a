//===- BlockCopyTest.cpp - Block copies and fills as vector loops ---------===//
//
// A unit loop that copies a per-unit var's slots into a shared array, or
// zeroes a shared array, becomes `llvm.memcpy` / `llvm.memset` in LLVM's loop
// idiom pass; after optimisation ExpandBlockCopies.h makes each one a loop
// of full-width vector moves and a shorter tail. The tests check that the
// loops are made, with the target's vector width, that no library call is
// left, and that every unit reads what the kernel says, for a block that is
// not a whole number of vectors.
//
//===----------------------------------------------------------------------===//

#include "ExpandBlockCopies.h"
#include "FunctionPassTestUtil.h"
#include "LoweringHarness.h"

#include "kiln/CPU/HostInfo.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace kiln;
using namespace kiln::test;

namespace {

/// 300 units: a per-unit var copied into a shared array (1200 bytes, from
/// the var's slots) and a shared array zeroed, 37.5 vectors of 32 bytes
/// and 18.75 of 64, so the loops have tails.
const char *CopyAndFill = R"(
kernel @blocks cube_dim(300) (%in: buffer<f32, read>, %out: buffer<f32, write>, %n: u32) {
  %s = shared f32[300]
  %z = shared f32[300]
  %lid = unit_pos : u32
  %gid = absolute_pos : u32
  store %z[%lid], 0.0:f32
  %m = var f32
  set %m, 0.0:f32
  for %j = %lid to %n step 300:u32 {
    %x = load %in[%j] : f32
    %c = get %m : f32
    %d = add %c, %x : f32
    set %m, %d
  }
  %ml = get %m : f32
  store %s[%lid], %ml
  sync_cube
  %r = sub 299:u32, %lid : u32
  %y = load %s[%r] : f32
  %w = load %z[%r] : f32
  %l1 = add %lid, 1:u32 : u32
  %lf = cast %l1 : f32
  %t = add %w, %lf : f32
  store %z[%r], %t
  sync_cube
  %v = load %z[%lid] : f32
  %o = mul %y, %v : f32
  store %out[%gid], %o
}
)";

void runAndCheck(const CodeGenOptions &Target, unsigned VectorBytes) {
  for (bool Checked : {true, false}) {
    SCOPED_TRACE(Target.CPU + " " + Target.Features +
                 (Checked ? " checked" : " unchecked"));
    CpuVariant V;
    V.BoundsChecked = Checked;
    JitKernel K = compile(CopyAndFill, V, {}, /*OptimizeO3=*/true, Target);
    ASSERT_TRUE(K.Fn);
    const std::string &IR = K.OptimizedIR;
    // Library copies and fills are gone; the inline tails stay.
    EXPECT_EQ(countOf(IR, "call void @llvm.memcpy.p0"), 0u) << IR;
    EXPECT_EQ(countOf(IR, "call void @llvm.memset.p0"), 0u) << IR;
    std::string Vec = "<" + std::to_string(VectorBytes) + " x i8>";
    EXPECT_GE(countOf(IR, "store " + Vec + " zeroinitializer"), 1u)
        << "no fill loop\n"
        << IR;
    EXPECT_GE(countOf(IR, "load " + Vec), 1u) << "no copy loop\n" << IR;

    constexpr uint32_t Cubes = 3, Units = 300, N = 700;
    std::vector<float> In(N), Out(Cubes * Units, -7.0f);
    for (uint32_t I = 0; I < N; ++I)
      In[I] = float(I % 97) + 0.25f;
    uint32_t NV = N;
    K.launch({buf(In), buf(Out), val(NV)}, {Cubes, 1, 1});
    for (uint32_t C = 0; C < Cubes; ++C)
      for (uint32_t U = 0; U < Units; ++U) {
        // Unit U reads s[299 - U] (unit 299 - U's sum of in[j], j = 299 - U
        // step 300 below N) and z[U], which unit 299 - U wrote as
        // 0 + (299 - U + 1).
        float Sum = 0;
        for (uint32_t J = 299 - U; J < N; J += 300)
          Sum += In[J];
        float Want = Sum * float(300 - U);
        ASSERT_EQ(Out[C * Units + U], Want) << "cube " << C << " unit " << U;
      }
  }
}

bool hostHas(const char *Feature) { return hostInfo().hasFeature(Feature); }

TEST(ExpandBlockCopies, HostVectors) {
  runAndCheck({}, hostHas("avx512f") ? 64 : hostHas("avx2") ? 32 : 16);
}

TEST(ExpandBlockCopies, AVX2Vectors) {
  if (!hostHas("avx2"))
    GTEST_SKIP() << "the host cannot run AVX2 code";
  CodeGenOptions O;
  O.Features = "-avx512f";
  runAndCheck(O, 32);
}

TEST(ExpandBlockCopies, SSEVectors) {
  CodeGenOptions O;
  O.CPU = "x86-64-v2";
  runAndCheck(O, 16);
}

// A fill with a byte known only at run time (a parameter, a flag computed
// in the kernel) is splatted once before the loop: in the loop the splat's
// instructions would come before the loop's phi, which the verifier refuses
// (runFunctionPass verifies the module). With 16-byte vectors (x86-64-v2)
// more fills are long enough to be expanded.
TEST(ExpandBlockCopies, FillWithAValueKnownAtRunTime) {
  const char *IR = R"(
define void @f(ptr %p, i8 %v) {
entry:
  call void @llvm.memset.p0.i64(ptr align 16 %p, i8 %v, i64 1000, i1 false)
  ret void
}
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
)";
  std::string Out = runOnParsedIR(IR, ExpandBlockCopiesPass(), "x86-64-v2");
  EXPECT_EQ(countOf(Out, "call void @llvm.memset.p0"), 0u) << Out;
  EXPECT_EQ(countOf(Out, "store <16 x i8> %"), 1u) << "no fill loop\n" << Out;
  size_t Splat = Out.find("shufflevector"), Loop = Out.find("block.copy:");
  ASSERT_NE(Splat, std::string::npos) << Out;
  EXPECT_LT(Splat, Loop) << "the splat is not before the loop\n" << Out;
}

} // namespace
