//===- UniformGathersTest.cpp - Masked gathers from one address -----------===//
//
// A masked gather whose addresses are all the same becomes one scalar load,
// made only when some lane is set, broadcast to the selected lanes
// (UniformGathers.h): on hand-written IR, and through the whole pipeline on
// a bounds-guarded loop across the units, whose results must not change.
//
//===----------------------------------------------------------------------===//

#include "UniformGathers.h"
#include "FunctionPassTestUtil.h"
#include "LoweringHarness.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace kiln;
using namespace kiln::test;

namespace {

const char *Gathers = R"(
declare <8 x float> @llvm.masked.gather.v8f32.v8p0(<8 x ptr>, i32, <8 x i1>, <8 x float>)

define <8 x float> @f(ptr %p, ptr %q, <8 x i1> %m, <8 x ptr> %ps) {
  %i = insertelement <8 x ptr> poison, ptr %p, i64 0
  %s = shufflevector <8 x ptr> %i, <8 x ptr> poison, <8 x i32> zeroinitializer
  %g = call <8 x float> @llvm.masked.gather.v8f32.v8p0(<8 x ptr> %s, i32 4, <8 x i1> %m, <8 x float> zeroinitializer)
  %j = insertelement <8 x ptr> poison, ptr %q, i64 0
  %t = shufflevector <8 x ptr> %j, <8 x ptr> poison, <8 x i32> zeroinitializer
  %h = call <8 x float> @llvm.masked.gather.v8f32.v8p0(<8 x ptr> %t, i32 4, <8 x i1> <i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true>, <8 x float> poison)
  %k = call <8 x float> @llvm.masked.gather.v8f32.v8p0(<8 x ptr> %ps, i32 4, <8 x i1> %m, <8 x float> poison)
  %a = fadd <8 x float> %g, %h
  %b = fadd <8 x float> %a, %k
  ret <8 x float> %b
}
)";

TEST(UniformGathers, SplatAddressesBecomeOneGuardedLoad) {
  std::string Out = runOnParsedIR(Gathers, UniformGathersPass());
  // The masked one: a load under `any lane set`, selected by the mask.
  EXPECT_NE(Out.find("llvm.vector.reduce.or.v8i1(<8 x i1> %m)"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("%g.uniform = load float, ptr %p, align 4"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("select <8 x i1> %m"), std::string::npos) << Out;
  // The all-true one: a plain load, no test.
  EXPECT_NE(Out.find("%h.uniform = load float, ptr %q, align 4"),
            std::string::npos)
      << Out;
  // A gather of different addresses stays.
  EXPECT_NE(Out.find("masked.gather.v8f32.v8p0(<8 x ptr> %ps"),
            std::string::npos)
      << Out;
  EXPECT_EQ(Out.find("<8 x ptr> %s,"), std::string::npos) << Out;
  EXPECT_EQ(Out.find("<8 x ptr> %t,"), std::string::npos) << Out;
}

// x[j] is the same for every unit of an iteration and loaded under the
// guard: one scalar load per iteration once vectorised.
const char *GuardedColumn = R"(
kernel @col cube_dim(64) (%a: buffer<f32, read>, %y: buffer<f32, read_write>,
                          %x: buffer<f32, read>, %n: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    for %j = 0:u32 to %n {
      %jn = mul %j, %n : u32
      %ai = add %jn, %i : u32
      %av = load %a[%ai] : f32
      %xv = load %x[%j] : f32
      %p = mul %av, %xv : f32
      %o = load %y[%i] : f32
      %s = add %o, %p : f32
      store %y[%i], %s
    }
  }
}
)";

TEST(UniformGathers, GuardedLoopAcrossUnitsKeepsItsResults) {
  for (bool Checked : {true, false}) {
    SCOPED_TRACE(Checked ? "checked" : "unchecked");
    CpuVariant V;
    V.BoundsChecked = Checked;
    // Optimised for an AVX-512 CPU, where the vectoriser gathers x[j] (with
    // AVX2 alone, znver3's gathers cost too much and the loop has none);
    // the code is generated for the host, which runs it.
    CodeGenOptions Target;
    Target.CPU = "znver4";
    JitKernel K = compile(GuardedColumn, V, {}, true, Target);
    ASSERT_TRUE(K.Fn);
    EXPECT_NE(K.OptimizedIR.find(".uniform = load float"), std::string::npos);
    // n = 70: the second cube has 6 units in range, and x has exactly n
    // elements, so a load for the cube's other units would be past its end.
    uint32_t N = 70;
    std::vector<float> A(size_t(N) * N), X(N), Y(128);
    for (size_t I = 0; I < A.size(); ++I)
      A[I] = float(I % 7) - 3.0f;
    for (uint32_t I = 0; I < N; ++I)
      X[I] = 0.25f * float(I % 5);
    for (uint32_t I = 0; I < 128; ++I)
      Y[I] = float(I);
    std::vector<float> Want = Y;
    for (uint32_t I = 0; I < N; ++I)
      for (uint32_t J = 0; J < N; ++J)
        Want[I] = Want[I] + A[size_t(J) * N + I] * X[J];
    K.launch({buf(A), buf(Y), buf(X), val(N)}, {2, 1, 1});
    EXPECT_EQ(Y, Want);
  }
}

const char *Scatters = R"(
declare void @llvm.masked.scatter.v8f32.v8p0(<8 x float>, <8 x ptr>, i32, <8 x i1>)

define void @f(ptr %p, ptr %q, <8 x float> %v, <8 x i1> %m, <8 x ptr> %ps) {
  %i = insertelement <8 x ptr> poison, ptr %p, i64 0
  %s = shufflevector <8 x ptr> %i, <8 x ptr> poison, <8 x i32> zeroinitializer
  call void @llvm.masked.scatter.v8f32.v8p0(<8 x float> %v, <8 x ptr> %s, i32 4, <8 x i1> %m)
  %j = insertelement <8 x ptr> poison, ptr %q, i64 0
  %t = shufflevector <8 x ptr> %j, <8 x ptr> poison, <8 x i32> zeroinitializer
  call void @llvm.masked.scatter.v8f32.v8p0(<8 x float> %v, <8 x ptr> %t, i32 4, <8 x i1> <i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true>)
  call void @llvm.masked.scatter.v8f32.v8p0(<8 x float> %v, <8 x ptr> %ps, i32 4, <8 x i1> %m)
  ret void
}
)";

TEST(UniformGathers, ScattersToOneAddressStoreTheLastActiveLane) {
  std::string Out = runOnParsedIR(Scatters, UniformGathersPass());
  // The masked one: under `any lane set`, the highest set lane's value
  // (lanes store in order, so it is the one memory keeps).
  EXPECT_NE(Out.find("bitcast <8 x i1> %m to i8"), std::string::npos) << Out;
  EXPECT_NE(Out.find("llvm.ctlz.i8"), std::string::npos) << Out;
  EXPECT_NE(Out.find("store float"), std::string::npos) << Out;
  // The all-true one: lane 7, no test.
  EXPECT_NE(Out.find("extractelement <8 x float> %v, i32 7"),
            std::string::npos)
      << Out;
  // A scatter to different addresses stays; none to one address does.
  EXPECT_NE(Out.find("masked.scatter.v8f32.v8p0(<8 x float> %v, <8 x ptr> %ps"),
            std::string::npos)
      << Out;
  EXPECT_EQ(Out.find("<8 x ptr> %s,"), std::string::npos) << Out;
  EXPECT_EQ(Out.find("<8 x ptr> %t,"), std::string::npos) << Out;
}

// Gaussian elimination's `if y == 0 { b[row] = ... }` inside a unit loop
// along y: one unit of each row writes b[row], an address the same for the
// whole row (vectorised as a scatter to one address, or peeled, as LLVM
// chooses); the results must be exact either way. The corpus's gaussian
// (ctest corpus-kiln-*) runs the scatter form.
const char *RowLead = R"(
kernel @lead cube_dim(16, 16) (%a: buffer<f32, read_write>, %b: buffer<f32, read_write>,
                               %n: u32) {
  %x = absolute_pos.x : u32
  %y = absolute_pos.y : u32
  %inx = lt %x, %n : bool
  %iny = lt %y, %n : bool
  %in = and %inx, %iny : bool
  if %in {
    %r = mul %x, %n : u32
    %ai = add %r, %y : u32
    %av = load %a[%ai] : f32
    %d = mul %av, 2.0:f32 : f32
    store %a[%ai], %d
    %first = eq %y, 0:u32 : bool
    if %first {
      %bv = load %b[%x] : f32
      %bn = add %bv, %av : f32
      store %b[%x], %bn
    }
  }
}
)";

TEST(UniformGathers, RowLeadStoresKeepTheirResults) {
  for (bool Checked : {true, false}) {
    SCOPED_TRACE(Checked ? "checked" : "unchecked");
    CpuVariant V;
    V.BoundsChecked = Checked;
    JitKernel K = compile(RowLead, V, {}, true);
    ASSERT_TRUE(K.Fn);
    for (uint32_t N : {1u, 5u, 16u, 23u}) {
      SCOPED_TRACE("n " + std::to_string(N));
      std::vector<float> A(size_t(N) * N), B(N);
      for (size_t I = 0; I < A.size(); ++I)
        A[I] = float(I % 11) - 4.0f;
      for (uint32_t I = 0; I < N; ++I)
        B[I] = 0.5f * float(I);
      std::vector<float> WantA = A, WantB = B;
      for (uint32_t X = 0; X < N; ++X) {
        WantB[X] = B[X] + A[size_t(X) * N];
        for (uint32_t Y = 0; Y < N; ++Y)
          WantA[size_t(X) * N + Y] = A[size_t(X) * N + Y] * 2.0f;
      }
      uint32_t C = (N + 15) / 16;
      K.launch({buf(A), buf(B), val(N)}, {C, C, 1});
      EXPECT_EQ(A, WantA);
      EXPECT_EQ(B, WantB);
    }
  }
}

} // namespace
