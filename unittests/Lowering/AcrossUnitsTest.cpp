//===- AcrossUnitsTest.cpp - Per-unit loops run across the units ---------===//
//
// A per-unit `for` with uniform bounds and step that carries a value from
// one iteration to the next, or reads along a column, runs at cube level
// with one unit loop per iteration (docs/Lowering.md §4, "Loops across
// units"); inside a range guard it runs over the units in range only. Each
// test compares every unit's result, bit for bit, with a plain per-unit loop
// computed here in the kernel's order, unoptimised and at O3, in both
// bounds variants, and checks which form the lowering chose.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr uint32_t Units = 16, Cubes = 3, AllUnits = Units * Cubes;

bool runsAcross(const JitKernel &K) {
  return K.LLVMIR.find("cube.for.end") != std::string::npos;
}

/// Compiles \p Text in both variants, at O0 and O3, and calls \p Run with
/// each; \p Across: whether the loop must run across the units.
template <class Fn> void forEachBuild(const char *Text, bool Across, Fn Run) {
  for (bool Checked : {true, false}) {
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(std::string(Checked ? "checked" : "unchecked") +
                   (O3 ? " O3" : " O0"));
      CpuVariant V;
      V.BoundsChecked = Checked;
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      EXPECT_EQ(runsAcross(K), Across) << K.LLVMIR;
      Run(K);
    }
  }
}

bool sameBits(float A, float B) { return std::memcmp(&A, &B, 4) == 0; }

// mvt's second product: unit i accumulates column i of a into x[i], in the
// buffer itself; the guard keeps units past n out.
const char *ColumnAccumulator = R"(
kernel @col cube_dim(16) (%a: buffer<f32, read>, %x: buffer<f32, read_write>,
                          %y: buffer<f32, read>, %n: i32) {
  %iu = absolute_pos : u32
  %i = cast %iu : i32
  %ok = lt %i, %n : bool
  if %ok {
    for %j = 0:i32 to %n {
      %jn = mul %j, %n : i32
      %ai = add %jn, %i : i32
      %av = load %a[%ai] : f32
      %yv = load %y[%j] : f32
      %p = mul %av, %yv : f32
      %o = load %x[%i] : f32
      %s = add %o, %p : f32
      store %x[%i], %s
    }
  }
}
)";

TEST(LoweringAcrossUnits, ColumnAccumulatorInMemory) {
  forEachBuild(ColumnAccumulator, true, [](const JitKernel &K) {
    // n = 0 (no unit in range), one partial cube, a whole grid past n.
    for (int32_t N : {0, 1, 5, 16, 37}) {
      SCOPED_TRACE("n = " + std::to_string(N));
      size_t Size = std::max<size_t>(size_t(N) * N, 1);
      std::vector<float> A(Size), Y(std::max(N, 1)), X(AllUnits);
      for (size_t I = 0; I < A.size(); ++I)
        A[I] = float((I * 7) % 13) * 0.25f - 1.0f;
      for (size_t I = 0; I < Y.size(); ++I)
        Y[I] = 1.0f / float(I + 3);
      for (uint32_t I = 0; I < AllUnits; ++I)
        X[I] = float(I) * 0.5f;
      std::vector<float> Want = X;
      for (int32_t I = 0; I < std::min<int32_t>(N, AllUnits); ++I)
        for (int32_t J = 0; J < N; ++J)
          Want[I] = Want[I] + A[size_t(J) * N + I] * Y[J];
      int32_t NArg = N;
      K.launch({buf(A), buf(X), buf(Y), val(NArg)}, {Cubes, 1, 1});
      for (uint32_t I = 0; I < AllUnits; ++I)
        ASSERT_TRUE(sameBits(X[I], Want[I]))
            << "unit " << I << ": " << X[I] << " != " << Want[I];
    }
  });
}

// A row per unit into a var, a bound computed inside the guard, a step
// taken from a parameter: every unit's trip is the same.
const char *RowIntoVar = R"(
kernel @row cube_dim(16) (%a: buffer<f32, read>, %out: buffer<f32, write>,
                          %n: u32, %lo: u32, %st: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %n : bool
  if %ok {
    %hi = add %n, 0:u32 : u32
    %acc = var f32
    set %acc, 1.0:f32
    %row = mul %i, %n : u32
    for %j = %lo to %hi step %st {
      %ai = add %row, %j : u32
      %v = load %a[%ai] : f32
      %o = get %acc : f32
      %s = fma %o, 0.5:f32, %v : f32
      set %acc, %s
    }
    %r = get %acc : f32
    store %out[%i], %r
  }
}
)";

TEST(LoweringAcrossUnits, CarriedVarWithRuntimeBoundsAndSteps) {
  forEachBuild(RowIntoVar, true, [](const JitKernel &K) {
    for (uint32_t N : {0u, 3u, 20u}) {
      for (uint32_t Lo : {0u, 2u, 25u}) {
        for (uint32_t St : {0u, 1u, 3u}) {
          SCOPED_TRACE("n " + std::to_string(N) + " lo " + std::to_string(Lo) +
                       " step " + std::to_string(St));
          std::vector<float> A(std::max<size_t>(size_t(N) * N, 1));
          for (size_t I = 0; I < A.size(); ++I)
            A[I] = float(I % 11) - 4.0f;
          std::vector<float> Out(AllUnits, -7.0f), Want = Out;
          for (uint32_t I = 0; I < std::min(N, AllUnits); ++I) {
            float Acc = 1.0f;
            if (St != 0)
              for (uint32_t J = Lo; J < N; J += St)
                Acc = std::fma(Acc, 0.5f, A[size_t(I) * N + J]);
            Want[I] = Acc;
          }
          K.launch({buf(A), buf(Out), val(N), val(Lo), val(St)}, {Cubes, 1, 1});
          for (uint32_t I = 0; I < AllUnits; ++I)
            ASSERT_TRUE(sameBits(Out[I], Want[I]))
                << "unit " << I << ": " << Out[I] << " != " << Want[I];
        }
      }
    }
  });
}

// kmeans' membership: for each cluster a distance summed over the features
// (feature-major, so consecutive units read consecutive points), the nearest
// cluster kept. Both loops run across the units.
const char *Nearest = R"(
kernel @nearest cube_dim(16) (%feat: buffer<f32, read>, %cl: buffer<f32, read>,
                              %member: buffer<i32, write>, %np: i32,
                              %nc: i32, %nf: i32) {
  %pu = absolute_pos : u32
  %p = cast %pu : i32
  %ok = lt %p, %np : bool
  if %ok {
    %best = var f32
    set %best, 3.0e38:f32
    %idx = var i32
    set %idx, -1:i32
    for %c = 0:i32 to %nc {
      %dist = var f32
      set %dist, 0.0:f32
      %cf = mul %c, %nf : i32
      for %l = 0:i32 to %nf {
        %fi0 = mul %l, %np : i32
        %fi = add %fi0, %p : i32
        %f = load %feat[%fi] : f32
        %ci = add %cf, %l : i32
        %cv = load %cl[%ci] : f32
        %d = sub %f, %cv : f32
        %dd = mul %d, %d : f32
        %o = get %dist : f32
        %s = add %o, %dd : f32
        set %dist, %s
      }
      %dv = get %dist : f32
      %b = get %best : f32
      %closer = lt %dv, %b : bool
      if %closer {
        set %best, %dv
        set %idx, %c
      }
    }
    %r = get %idx : i32
    store %member[%p], %r
  }
}
)";

TEST(LoweringAcrossUnits, NestedLoopsAcrossUnits) {
  forEachBuild(Nearest, true, [](const JitKernel &K) {
    int32_t NP = 41, NC = 5, NF = 7;
    std::vector<float> Feat(size_t(NP) * NF), Cl(size_t(NC) * NF);
    for (size_t I = 0; I < Feat.size(); ++I)
      Feat[I] = float((I * 31) % 17) * 0.125f;
    for (size_t I = 0; I < Cl.size(); ++I)
      Cl[I] = float((I * 13) % 19) * 0.1f;
    std::vector<int32_t> Member(AllUnits, 99), Want = Member;
    for (int32_t P = 0; P < NP; ++P) {
      float Best = 3.0e38f;
      int32_t Idx = -1;
      for (int32_t C = 0; C < NC; ++C) {
        float Dist = 0.0f;
        for (int32_t L = 0; L < NF; ++L) {
          float D = Feat[size_t(L) * NP + P] - Cl[size_t(C) * NF + L];
          Dist = Dist + D * D;
        }
        if (Dist < Best) {
          Best = Dist;
          Idx = C;
        }
      }
      Want[P] = Idx;
    }
    K.launch({buf(Feat), buf(Cl), buf(Member), val(NP), val(NC), val(NF)},
             {Cubes, 1, 1});
    EXPECT_EQ(Member, Want);
  });
}

// A row per unit with nothing carried: every index moves by one element
// per iteration and by a row from one unit to the next, so the loop stays
// per unit (where it can vectorise along the row).
const char *RowElementwise = R"(
kernel @scale cube_dim(16) (%a: buffer<f32, read>, %out: buffer<f32, write>,
                            %n: u32) {
  %i = absolute_pos : u32
  %row = mul %i, %n : u32
  for %j = 0:u32 to %n {
    %k = add %row, %j : u32
    %v = load %a[%k] : f32
    %w = mul %v, 2.0:f32 : f32
    store %out[%k], %w
  }
}
)";

TEST(LoweringAcrossUnits, RowWithoutCarriedValueStaysPerUnit) {
  forEachBuild(RowElementwise, false, [](const JitKernel &K) {
    uint32_t N = 9;
    std::vector<float> A(size_t(AllUnits) * N), Out(A.size());
    for (size_t I = 0; I < A.size(); ++I)
      A[I] = float(I);
    K.launch({buf(A), buf(Out), val(N)}, {Cubes, 1, 1});
    for (size_t I = 0; I < A.size(); ++I)
      ASSERT_EQ(Out[I], 2.0f * float(I));
  });
}

// Literal bounds: 16 iterations stay per unit (LLVM unrolls them fully and
// vectorises across the units itself); 100 run across the units.
const char *LiteralTrips = R"(
kernel @lit cube_dim(16) (%a: buffer<u32, read>, %out: buffer<u32, write>) {
  %i = absolute_pos : u32
  %acc = var u32
  set %acc, 0:u32
  for %k = 0:u32 to TRIPS:u32 {
    %ki = mul %k, 48:u32 : u32
    %ai = add %ki, %i : u32
    %v = load %a[%ai] : u32
    %o = get %acc : u32
    %m = mul %o, 3:u32 : u32
    %s = add %m, %v : u32
    set %acc, %s
  }
  %r = get %acc : u32
  store %out[%i], %r
}
)";

void runLiteral(uint32_t Trips, bool Across) {
  std::string Text = LiteralTrips;
  Text.replace(Text.find("TRIPS"), 5, std::to_string(Trips));
  forEachBuild(Text.c_str(), Across, [&](const JitKernel &K) {
    std::vector<uint32_t> A(size_t(Trips) * 48), Out(AllUnits);
    for (size_t I = 0; I < A.size(); ++I)
      A[I] = uint32_t(I * 2654435761u);
    K.launch({buf(A), buf(Out)}, {Cubes, 1, 1});
    for (uint32_t I = 0; I < AllUnits; ++I) {
      uint32_t Acc = 0;
      for (uint32_t T = 0; T < Trips; ++T)
        Acc = Acc * 3 + A[size_t(T) * 48 + I];
      ASSERT_EQ(Out[I], Acc) << "unit " << I;
    }
  });
}

TEST(LoweringAcrossUnits, ShortLiteralLoopStaysPerUnit) {
  runLiteral(16, false);
}
TEST(LoweringAcrossUnits, LongLiteralLoopRunsAcross) { runLiteral(100, true); }

// The loop's bound is loaded inside the guard: with no unit in range (an
// empty bounds buffer in the checked variant) nothing of the body may run,
// not even the load of the bound.
const char *BoundLoadedInGuard = R"(
kernel @guarded cube_dim(16) (%nb: buffer<u32, read>, %out: buffer<u32, read_write>,
                              %limit: u32) {
  %i = absolute_pos : u32
  %ok = lt %i, %limit : bool
  if %ok {
    %n = load %nb[0:u32] : u32
    for %k = 0:u32 to %n {
      %o = load %out[%i] : u32
      %s = add %o, %k : u32
      store %out[%i], %s
    }
  }
}
)";

TEST(LoweringAcrossUnits, EmptyRangeEvaluatesNothing) {
  forEachBuild(BoundLoadedInGuard, true, [](const JitKernel &K) {
    std::vector<uint32_t> Empty, Out(AllUnits, 5);
    uint32_t Limit = 0;
    KernelArg NoBounds{Empty.data(), 0};
    K.launch({NoBounds, buf(Out), val(Limit)}, {Cubes, 1, 1});
    EXPECT_EQ(Out, std::vector<uint32_t>(AllUnits, 5));
    // With units in range: each adds 0 + 1 + ... + (n - 1).
    std::vector<uint32_t> NB = {6};
    Limit = 21;
    K.launch({buf(NB), buf(Out), val(Limit)}, {Cubes, 1, 1});
    for (uint32_t I = 0; I < AllUnits; ++I)
      ASSERT_EQ(Out[I], I < Limit ? 5u + 15u : 5u) << "unit " << I;
  });
}

// A guard on the unit's own index is a unit range: the unit loops of the
// body run over it, with no test per unit.
const char *UnitRange = R"(
kernel @range cube_dim(16) (%a: buffer<u32, read>, %out: buffer<u32, read_write>,
                            %first: u32, %n: u32) {
  %u = unit_pos : u32
  %g = absolute_pos : u32
  %ok = ge %u, %first : bool
  if %ok {
    %acc = var u32
    set %acc, 7:u32
    for %k = 0:u32 to %n {
      %kk = mul %k, 48:u32 : u32
      %ai = add %kk, %g : u32
      %v = load %a[%ai] : u32
      %o = get %acc : u32
      %m = mul %o, 5:u32 : u32
      %s = add %m, %v : u32
      set %acc, %s
    }
    %r = get %acc : u32
    store %out[%g], %r
  }
}
)";

TEST(LoweringAcrossUnits, UnitRangeGuardNarrowsTheUnitLoops) {
  forEachBuild(UnitRange, true, [](const JitKernel &K) {
    EXPECT_NE(K.LLVMIR.find("unit.lo"), std::string::npos);
    EXPECT_EQ(K.LLVMIR.find("unit.pass"), std::string::npos);
    for (uint32_t First : {0u, 5u, 15u, 16u, 40u}) {
      SCOPED_TRACE("first " + std::to_string(First));
      uint32_t N = 9;
      std::vector<uint32_t> A(size_t(N) * 48), Out(AllUnits, 3);
      for (size_t I = 0; I < A.size(); ++I)
        A[I] = uint32_t(I * 40503u + 17u);
      K.launch({buf(A), buf(Out), val(First), val(N)}, {Cubes, 1, 1});
      for (uint32_t G = 0; G < AllUnits; ++G) {
        uint32_t Want = 3;
        if (G % Units >= First) {
          Want = 7;
          for (uint32_t T = 0; T < N; ++T)
            Want = Want * 5 + A[size_t(T) * 48 + G];
        }
        ASSERT_EQ(Out[G], Want) << "unit " << G;
      }
    }
  });
}

// A rank-k update in a two-dimensional cube under a compound guard, as
// PolyBench's GPU syrk writes it: the guard is no unit range, so every unit
// loop of its body tests each unit's condition.
const char *RankK2D = R"(
kernel @syrk cube_dim(8, 4) (%a: buffer<f32, read>, %c: buffer<f32, read_write>,
                             %alpha: f32, %n: i32, %m: i32) {
  %ju = absolute_pos.x : u32
  %j = cast %ju : i32
  %iu = absolute_pos.y : u32
  %i = cast %iu : i32
  %inr = lt %i, %n : bool
  %jnr = lt %j, %n : bool
  %in = and %inr, %jnr : bool
  if %in {
    %in0 = mul %i, %n : i32
    %ci = add %in0, %j : i32
    %im = mul %i, %m : i32
    %jm = mul %j, %m : i32
    for %k = 0:i32 to %m {
      %ai = add %im, %k : i32
      %aj = add %jm, %k : i32
      %x = load %a[%ai] : f32
      %y = load %a[%aj] : f32
      %p = mul %alpha, %x : f32
      %q = mul %p, %y : f32
      %old = load %c[%ci] : f32
      %new = add %old, %q : f32
      store %c[%ci], %new
    }
  }
}
)";

TEST(LoweringAcrossUnits, CompoundGuardInTwoDimensions) {
  forEachBuild(RankK2D, true, [](const JitKernel &K) {
    EXPECT_NE(K.LLVMIR.find("unit.pass"), std::string::npos);
    for (int32_t N : {0, 3, 13}) {
      SCOPED_TRACE("n = " + std::to_string(N));
      int32_t M = 11;
      float Alpha = 0.5f;
      // A 2 x 4 grid of 8 x 4 cubes covers 16 x 16 elements; c is exactly
      // n x n, so a unit past n that ran would write out of bounds.
      std::vector<float> A(std::max<size_t>(size_t(N) * M, 1)),
          C(std::max<size_t>(size_t(N) * N, 1));
      for (size_t I = 0; I < A.size(); ++I)
        A[I] = float((I * 5) % 9) - 4.0f;
      for (size_t I = 0; I < C.size(); ++I)
        C[I] = float(I % 3);
      std::vector<float> Want = C;
      for (int32_t I = 0; I < N; ++I)
        for (int32_t J = 0; J < N; ++J)
          for (int32_t T = 0; T < M; ++T)
            Want[size_t(I) * N + J] =
                Want[size_t(I) * N + J] +
                Alpha * A[size_t(I) * M + T] * A[size_t(J) * M + T];
      KernelArg CArg{C.data(), size_t(N) * N};
      KernelArg AArg{A.data(), size_t(N) * M};
      K.launch({AArg, CArg, val(Alpha), val(N), val(M)}, {2, 4, 1});
      for (size_t I = 0; I < size_t(N) * N; ++I)
        ASSERT_TRUE(sameBits(C[I], Want[I]))
            << "element " << I << ": " << C[I] << " != " << Want[I];
    }
  });
}

} // namespace
