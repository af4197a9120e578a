//===- SemanticsTest.cpp - Exact semantics of scalar and line operations
//---===//

#include "LoweringHarness.h"
#include "OpRunner.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sys/mman.h>

using namespace kiln;
using namespace kiln::test;

namespace {

const char *VAdd = R"(
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

TEST(LoweringSemantics, ElementwiseWithTail) {
  for (bool Checked : {true, false}) {
    for (bool PerCube : {false, true}) {
      JitKernel K = compile(VAdd, CpuVariant{Checked, 64});
      ASSERT_TRUE(K.Fn);
      EXPECT_EQ(K.Metadata.Symbol, "kiln_cube_vadd");
      EXPECT_EQ(K.Metadata.Params.size(), 4u);
      EXPECT_TRUE(K.Metadata.Params[0].IsBuffer);
      EXPECT_FALSE(K.Metadata.Params[3].IsBuffer);
      uint32_t N = 1000; // not a multiple of 64
      std::vector<float> A(N), Bv(N), C(N + 64, -7.0f);
      for (uint32_t I = 0; I < N; ++I) {
        A[I] = float(I) * 0.5f;
        Bv[I] = 3.0f - float(I);
      }
      KernelArg CArg{C.data(), N};
      K.launch({buf(A), buf(Bv), CArg, val(N)}, {(N + 63) / 64, 1, 1}, PerCube);
      for (uint32_t I = 0; I < N; ++I)
        ASSERT_EQ(C[I], A[I] + Bv[I]) << I;
      for (uint32_t I = N; I < N + 64; ++I)
        ASSERT_EQ(C[I], -7.0f) << "wrote past n at " << I;
    }
  }
}

TEST(LoweringSemantics, Builtins3D) {
  const char *Text = R"(
kernel @b cube_dim(4, 2, 3) (%o: buffer<u32, write>) {
  %a = absolute_pos : u32
  %base = mul %a, 16:u32 : u32
  %v0 = unit_pos : u32
  %v1 = unit_pos.x : u32
  %v2 = unit_pos.y : u32
  %v3 = unit_pos.z : u32
  %v4 = cube_pos : u32
  %v5 = cube_pos.x : u32
  %v6 = cube_pos.y : u32
  %v7 = cube_pos.z : u32
  %v8 = absolute_pos.x : u32
  %v9 = absolute_pos.y : u32
  %v10 = absolute_pos.z : u32
  %v11 = cube_dim : u32
  %v12 = cube_count : u32
  %v13 = unit_pos_plane : u32
  %v14 = plane_pos : u32
  %v15 = plane_dim : u32
  %i0 = add %base, 0:u32 : u32
  store %o[%i0], %v0
  %i1 = add %base, 1:u32 : u32
  store %o[%i1], %v1
  %i2 = add %base, 2:u32 : u32
  store %o[%i2], %v2
  %i3 = add %base, 3:u32 : u32
  store %o[%i3], %v3
  %i4 = add %base, 4:u32 : u32
  store %o[%i4], %v4
  %i5 = add %base, 5:u32 : u32
  store %o[%i5], %v5
  %i6 = add %base, 6:u32 : u32
  store %o[%i6], %v6
  %i7 = add %base, 7:u32 : u32
  store %o[%i7], %v7
  %i8 = add %base, 8:u32 : u32
  store %o[%i8], %v8
  %i9 = add %base, 9:u32 : u32
  store %o[%i9], %v9
  %i10 = add %base, 10:u32 : u32
  store %o[%i10], %v10
  %i11 = add %base, 11:u32 : u32
  store %o[%i11], %v11
  %i12 = add %base, 12:u32 : u32
  store %o[%i12], %v12
  %i13 = add %base, 13:u32 : u32
  store %o[%i13], %v13
  %i14 = add %base, 14:u32 : u32
  store %o[%i14], %v14
  %i15 = add %base, 15:u32 : u32
  store %o[%i15], %v15
}
)";
  DeviceLimits L;
  L.PlaneDim = 4;
  JitKernel K = compile(Text, {}, L);
  ASSERT_TRUE(K.Fn);
  EXPECT_EQ(K.Metadata.PlaneDim, 4u);
  const uint32_t D[3] = {4, 2, 3}, C[3] = {3, 2, 2};
  uint32_t Total = D[0] * D[1] * D[2] * C[0] * C[1] * C[2];
  std::vector<uint32_t> O(Total * 16, 0xFFFFFFFF);
  K.launch({buf(O)}, {C[0], C[1], C[2]});
  std::vector<bool> Seen(Total);
  for (uint32_t Cz = 0; Cz < C[2]; ++Cz)
    for (uint32_t Cy = 0; Cy < C[1]; ++Cy)
      for (uint32_t Cx = 0; Cx < C[0]; ++Cx)
        for (uint32_t U = 0; U < D[0] * D[1] * D[2]; ++U) {
          uint32_t Ux = U % D[0], Uy = (U / D[0]) % D[1],
                   Uz = U / (D[0] * D[1]);
          uint32_t Ax = Cx * D[0] + Ux, Ay = Cy * D[1] + Uy,
                   Az = Cz * D[2] + Uz;
          uint32_t Abs =
              Ax + Ay * (C[0] * D[0]) + Az * (C[0] * D[0]) * (C[1] * D[1]);
          ASSERT_LT(Abs, Total);
          Seen[Abs] = true;
          const uint32_t *R = &O[Abs * 16];
          uint32_t Want[16] = {
              U,  Ux, Uy, Uz,    Cx + Cy * C[0] + Cz * C[0] * C[1],
              Cx, Cy, Cz, Ax,    Ay,
              Az, 24, 12, U % 4, U / 4,
              4};
          for (int J = 0; J < 16; ++J)
            ASSERT_EQ(R[J], Want[J]) << "abs " << Abs << " field " << J;
        }
  for (bool S : Seen)
    EXPECT_TRUE(S);
}

// A kernel whose memory indices run along y (or z) rather than x walks its
// cubes with that dimension fastest (docs/Lowering.md §2, "The cube
// loop"); every cube still sees its own cube_pos, and the linear cube_pos
// still counts x fastest, whether the range is one cube or the whole grid.
TEST(LoweringSemantics, CubesWalkAlongTheContiguousDimension) {
  const char *Text2D = R"(
kernel @w cube_dim(2, 4) (%o: buffer<u32, write>, %rows: u32) {
  %ax = absolute_pos.x : u32
  %ay = absolute_pos.y : u32
  %r = mul %ax, %rows : u32
  %i = add %r, %ay : u32
  %l = cube_pos : u32
  %cx = cube_pos.x : u32
  %cy = cube_pos.y : u32
  %l1 = mul %l, 10000:u32 : u32
  %x1 = mul %cx, 100:u32 : u32
  %v0 = add %l1, %x1 : u32
  %v = add %v0, %cy : u32
  store %o[%i], %v
}
)";
  const char *Text3D = R"(
kernel @w cube_dim(2, 2, 4) (%o: buffer<u32, write>, %ny: u32, %nz: u32) {
  %ax = absolute_pos.x : u32
  %ay = absolute_pos.y : u32
  %az = absolute_pos.z : u32
  %r0 = mul %ax, %ny : u32
  %r1 = add %r0, %ay : u32
  %r2 = mul %r1, %nz : u32
  %i = add %r2, %az : u32
  %l = cube_pos : u32
  %cx = cube_pos.x : u32
  %cy = cube_pos.y : u32
  %cz = cube_pos.z : u32
  %l1 = mul %l, 1000000:u32 : u32
  %x1 = mul %cx, 10000:u32 : u32
  %y1 = mul %cy, 100:u32 : u32
  %v0 = add %l1, %x1 : u32
  %v1 = add %v0, %y1 : u32
  %v = add %v1, %cz : u32
  store %o[%i], %v
}
)";
  for (bool ThreeD : {false, true}) {
    JitKernel K = compile(ThreeD ? Text3D : Text2D);
    ASSERT_TRUE(K.Fn);
    EXPECT_NE(K.LLVMIR.find(ThreeD ? "urem i32 %cube_begin, %cube_count.z"
                                   : "urem i32 %cube_begin, %cube_count.y"),
              std::string::npos)
        << K.LLVMIR;
    const uint32_t D[3] = {2, ThreeD ? 2u : 4u, ThreeD ? 4u : 1u};
    const uint32_t C[3] = {3, ThreeD ? 5u : 7u, ThreeD ? 3u : 1u};
    uint32_t N[3] = {D[0] * C[0], D[1] * C[1], D[2] * C[2]};
    for (bool PerCube : {false, true}) {
      std::vector<uint32_t> O(N[0] * N[1] * N[2], 0xFFFFFFFF);
      if (ThreeD)
        K.launch({buf(O), val(N[1]), val(N[2])}, {C[0], C[1], C[2]}, PerCube);
      else
        K.launch({buf(O), val(N[1])}, {C[0], C[1], 1}, PerCube);
      for (uint32_t X = 0; X < N[0]; ++X)
        for (uint32_t Y = 0; Y < N[1]; ++Y)
          for (uint32_t Z = 0; Z < N[2]; ++Z) {
            uint32_t Cx = X / D[0], Cy = Y / D[1], Cz = Z / D[2];
            uint32_t Linear = Cx + C[0] * (Cy + C[1] * Cz);
            uint32_t Want = ThreeD ? Linear * 1000000 + Cx * 10000 +
                                         Cy * 100 + Cz
                                   : Linear * 10000 + Cx * 100 + Cy;
            ASSERT_EQ(O[(X * N[1] + Y) * N[2] + Z], Want)
                << (ThreeD ? "3-D" : "2-D") << " per cube " << PerCube
                << " at " << X << ", " << Y << ", " << Z;
          }
    }
  }
  // Indices along x keep the GPU's order, x fastest.
  JitKernel X = compile(R"(
kernel @x cube_dim(4, 4) (%o: buffer<u32, write>, %cols: u32) {
  %ax = absolute_pos.x : u32
  %ay = absolute_pos.y : u32
  %r = mul %ay, %cols : u32
  %i = add %r, %ax : u32
  %l = cube_pos : u32
  store %o[%i], %l
}
)");
  ASSERT_TRUE(X.Fn);
  EXPECT_NE(X.LLVMIR.find("urem i32 %cube_begin, %cube_count.x"),
            std::string::npos);
}

TEST(LoweringSemantics, IntegerDivisionNeverTraps) {
  const int32_t Min = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> A = {7, -7, 7, -7, 5, Min, Min, 0, Min, 123, -1};
  std::vector<int32_t> Bv = {2, 2, -2, -2, 0, -1, 0, 0, 1, 7, Min};
  auto Q = runOp<int32_t>("div", "i32", "i32", A, Bv);
  auto R = runOp<int32_t>("rem", "i32", "i32", A, Bv);
  for (size_t I = 0; I < A.size(); ++I) {
    int32_t WantQ, WantR;
    if (Bv[I] == 0) {
      WantQ = 0;
      WantR = 0;
    } else if (A[I] == Min && Bv[I] == -1) {
      WantQ = Min;
      WantR = 0;
    } else {
      WantQ = A[I] / Bv[I];
      WantR = A[I] % Bv[I];
    }
    EXPECT_EQ(Q[I], WantQ) << A[I] << " / " << Bv[I];
    EXPECT_EQ(R[I], WantR) << A[I] << " rem " << Bv[I];
  }
  std::vector<uint32_t> UA = {7, 0xFFFFFFFF, 9, 0x80000000},
                        UB = {0, 0xFFFFFFFF, 4, 3};
  auto UQ = runOp<uint32_t>("div", "u32", "u32", UA, UB);
  auto UR = runOp<uint32_t>("rem", "u32", "u32", UA, UB);
  for (size_t I = 0; I < UA.size(); ++I) {
    EXPECT_EQ(UQ[I], UB[I] ? UA[I] / UB[I] : 0u);
    EXPECT_EQ(UR[I], UB[I] ? UA[I] % UB[I] : 0u);
  }
  std::vector<int64_t> LA = {std::numeric_limits<int64_t>::min(), 10},
                       LB = {-1, 0};
  auto LQ = runOp<int64_t>("div", "i64", "i64", LA, LB);
  EXPECT_EQ(LQ[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(LQ[1], 0);
  std::vector<int8_t> BA = {-128, 9}, BB = {-1, 0};
  auto BQ = runOp<int8_t>("div", "i8", "i8", BA, BB);
  auto BR = runOp<int8_t>("rem", "i8", "i8", BA, BB);
  EXPECT_EQ(BQ[0], -128);
  EXPECT_EQ(BR[0], 0);
  EXPECT_EQ(BQ[1], 0);
}

TEST(LoweringSemantics, ShiftsModuloWidth) {
  std::vector<int32_t> A = {1, -16, -16, 1, 0x40000000, -1};
  std::vector<int32_t> S = {33, 2, 34, 32, 31, -1}; // -1 & 31 = 31
  auto L = runOp<int32_t>("shl", "i32", "i32", A, S);
  auto R = runOp<int32_t>("shr", "i32", "i32", A, S);
  for (size_t I = 0; I < A.size(); ++I) {
    unsigned Amt = unsigned(S[I]) & 31;
    EXPECT_EQ(L[I], int32_t(uint32_t(A[I]) << Amt)) << I;
    EXPECT_EQ(R[I], A[I] >> Amt) << I; // arithmetic
  }
  std::vector<uint32_t> UA = {0x80000000u, 0xF0u}, US = {31, 36};
  auto UR = runOp<uint32_t>("shr", "u32", "u32", UA, US);
  EXPECT_EQ(UR[0], 1u);   // logical
  EXPECT_EQ(UR[1], 0xFu); // 36 mod 32 = 4
  std::vector<uint8_t> BA = {0x81}, BS = {9};
  EXPECT_EQ(runOp<uint8_t>("shl", "u8", "u8", BA, BS)[0], 0x02);
}

TEST(LoweringSemantics, BitsAndMulHi) {
  std::vector<uint32_t> A = {0, 1, 0x80000000u, 0xFFFFFFFFu, 0x00F0F000u};
  auto Pop = runOp<uint32_t>("popcount", "u32", "u32", A);
  auto Clz = runOp<uint32_t>("clz", "u32", "u32", A);
  auto Ctz = runOp<uint32_t>("ctz", "u32", "u32", A);
  auto Rev = runOp<uint32_t>("reverse_bits", "u32", "u32", A);
  for (size_t I = 0; I < A.size(); ++I) {
    EXPECT_EQ(Pop[I], uint32_t(std::popcount(A[I])));
    EXPECT_EQ(Clz[I], uint32_t(std::countl_zero(A[I]))); // 32 for 0
    EXPECT_EQ(Ctz[I], uint32_t(std::countr_zero(A[I])));
    uint32_t Want = 0;
    for (int Bt = 0; Bt < 32; ++Bt)
      if (A[I] & (1u << Bt))
        Want |= 1u << (31 - Bt);
    EXPECT_EQ(Rev[I], Want);
  }
  std::vector<int32_t> SA = {-3, 0x7FFFFFFF, -0x7FFFFFFF - 1},
                       SB = {5, 0x7FFFFFFF, -0x7FFFFFFF - 1};
  auto SH = runOp<int32_t>("mulhi", "i32", "i32", SA, SB);
  for (size_t I = 0; I < SA.size(); ++I)
    EXPECT_EQ(SH[I], int32_t((int64_t(SA[I]) * SB[I]) >> 32));
  std::vector<uint64_t> UA = {0xFFFFFFFFFFFFFFFFull, 1ull << 63},
                        UB = {0xFFFFFFFFFFFFFFFFull, 6};
  auto UH = runOp<uint64_t>("mulhi", "u64", "u64", UA, UB);
  for (size_t I = 0; I < UA.size(); ++I)
    EXPECT_EQ(UH[I], uint64_t((unsigned __int128)UA[I] * UB[I] >> 64));
  std::vector<int32_t> AbsIn = {-5, 5, -0x7FFFFFFF - 1};
  auto Abs = runOp<int32_t>("abs", "i32", "i32", AbsIn);
  EXPECT_EQ(Abs[0], 5);
  EXPECT_EQ(Abs[1], 5);
  EXPECT_EQ(Abs[2], -0x7FFFFFFF - 1); // wraps
  std::vector<int32_t> MA = {-1, 3}, MB = {1, -4};
  EXPECT_EQ(runOp<int32_t>("min", "i32", "i32", MA, MB)[0], -1);
  std::vector<uint32_t> NA = {0xFFFFFFFFu, 3}, NB = {1, 4};
  EXPECT_EQ(runOp<uint32_t>("min", "u32", "u32", NA, NB)[0], 1u);
  EXPECT_EQ(runOp<uint32_t>("max", "u32", "u32", NA, NB)[0], 0xFFFFFFFFu);
}

TEST(LoweringSemantics, FloatToIntSaturatesNaNIsZero) {
  const float Inf = std::numeric_limits<float>::infinity();
  std::vector<float> A = {NAN,  Inf,   -Inf,  3e10f,  -3e10f,
                          3.7f, -3.7f, -0.5f, 255.9f, 300.0f};
  auto I32 = runOp<int32_t>("cast", "f32", "i32", A);
  auto U32 = runOp<uint32_t>("cast", "f32", "u32", A);
  auto I8 = runOp<int8_t>("cast", "f32", "i8", A);
  auto U8 = runOp<uint8_t>("cast", "f32", "u8", A);
  auto Sat = [](float F, double Lo, double Hi) -> double {
    if (std::isnan(F))
      return 0;
    double T = std::trunc(double(F));
    return T < Lo ? Lo : T > Hi ? Hi : T;
  };
  for (size_t I = 0; I < A.size(); ++I) {
    EXPECT_EQ(I32[I], int32_t(Sat(A[I], INT32_MIN, INT32_MAX))) << A[I];
    EXPECT_EQ(U32[I], uint32_t(Sat(A[I], 0, UINT32_MAX))) << A[I];
    EXPECT_EQ(I8[I], int8_t(Sat(A[I], -128, 127))) << A[I];
    EXPECT_EQ(U8[I], uint8_t(Sat(A[I], 0, 255))) << A[I];
  }
}

TEST(LoweringSemantics, CastsBetweenBoolIntFloat) {
  std::vector<int32_t> A = {0, 1, -2, 7};
  auto ToBool = runOp<uint8_t>("cast", "i32", "bool", A);
  EXPECT_EQ(ToBool, (std::vector<uint8_t>{0, 1, 1, 1}));
  std::vector<uint8_t> Bools = {0, 1, 1, 0};
  auto BoolToI = runOp<int32_t>("cast", "bool", "i32", Bools);
  EXPECT_EQ(BoolToI, (std::vector<int32_t>{0, 1, 1, 0}));
  auto BoolToF = runOp<float>("cast", "bool", "f32", Bools);
  EXPECT_EQ(BoolToF, (std::vector<float>{0.0f, 1.0f, 1.0f, 0.0f}));
  std::vector<int32_t> N = {-1, 300};
  auto ToU8 = runOp<uint8_t>("cast", "i32", "u8", N);
  EXPECT_EQ(ToU8[0], 255);
  EXPECT_EQ(ToU8[1], 44);
  std::vector<int8_t> S8 = {-1};
  EXPECT_EQ(runOp<int64_t>("cast", "i8", "i64", S8)[0], -1); // sign extends
  std::vector<uint8_t> U8 = {255};
  EXPECT_EQ(runOp<int64_t>("cast", "u8", "i64", U8)[0], 255); // zero extends
  std::vector<float> F = {1.5f, -0.0f};
  auto Bits = runOp<uint32_t>("bitcast", "f32", "u32", F);
  EXPECT_EQ(Bits[0], 0x3FC00000u);
  EXPECT_EQ(Bits[1], 0x80000000u);
  std::vector<uint32_t> U = {0xFFFFFFFFu};
  EXPECT_EQ(runOp<float>("cast", "u32", "f32", U)[0], 4294967296.0f);
  std::vector<double> D = {1e300, 0.1};
  auto DF = runOp<float>("cast", "f64", "f32", D);
  EXPECT_TRUE(std::isinf(DF[0]));
  EXPECT_EQ(DF[1], 0.1f);
}

TEST(LoweringSemantics, FloatComparisonsMinMaxRoundFma) {
  std::vector<float> A = {NAN, 1.0f, NAN, 2.0f}, Bv = {1.0f, NAN, NAN, 2.0f};
  auto Ne = runOp<uint8_t>("ne", "f32", "bool", A, Bv);
  auto Eq = runOp<uint8_t>("eq", "f32", "bool", A, Bv);
  auto Lt = runOp<uint8_t>("lt", "f32", "bool", A, Bv);
  EXPECT_EQ(Ne, (std::vector<uint8_t>{1, 1, 1, 0})); // unordered
  EXPECT_EQ(Eq, (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(Lt, (std::vector<uint8_t>{0, 0, 0, 0}));
  auto Mn = runOp<float>("min", "f32", "f32", A, Bv);
  EXPECT_EQ(Mn[0], 1.0f); // minnum: the number wins over NaN
  EXPECT_EQ(Mn[1], 1.0f);
  EXPECT_TRUE(std::isnan(Mn[2]));
  std::vector<float> R = {2.5f, 3.5f, -2.5f, 0.5f, 1.4999999f, -0.5f};
  auto Rd = runOp<float>("round", "f32", "f32", R);
  EXPECT_EQ(Rd, (std::vector<float>{2.0f, 4.0f, -2.0f, 0.0f, 1.0f, -0.0f}));
  EXPECT_TRUE(std::signbit(Rd[5]));
  auto In = runOp<uint8_t>("isnan", "f32", "bool", A);
  EXPECT_EQ(In, (std::vector<uint8_t>{1, 0, 1, 0}));
  std::vector<float> I = {INFINITY, -INFINITY, 1e38f, NAN};
  EXPECT_EQ(runOp<uint8_t>("isinf", "f32", "bool", I),
            (std::vector<uint8_t>{1, 1, 0, 0}));
  const char *Fma = R"(
kernel @f cube_dim(1) (%a: buffer<f32, read>, %o: buffer<f32, write>) {
  %x = load %a[0:u32] : f32
  %y = load %a[1:u32] : f32
  %z = load %a[2:u32] : f32
  %r = fma %x, %y, %z : f32
  store %o[0:u32], %r
  %c = clamp %z, 0.0:f32, 1.0:f32 : f32
  store %o[1:u32], %c
  %c2 = clamp %x, 0.0:f32, 0.5:f32 : f32
  store %o[2:u32], %c2
}
)";
  JitKernel K = compile(Fma);
  ASSERT_TRUE(K.Fn);
  float Ea = 1.0f + std::ldexp(1.0f, -23), Eb = 1.0f - std::ldexp(1.0f, -23);
  std::vector<float> In3 = {Ea, Eb, -1.0f}, Out(3);
  K.launch({buf(In3), buf(Out)}, {1, 1, 1});
  EXPECT_EQ(Out[0], std::fma(Ea, Eb, -1.0f));
  EXPECT_NE(Out[0], 0.0f); // fused: not rounded to 1 first
  EXPECT_EQ(Out[1], 0.0f);
  EXPECT_EQ(Out[2], 0.5f);
}

TEST(LoweringSemantics, HalfBFloatAndDouble) {
  std::vector<uint16_t> HA, HB;
  std::vector<float> FA = {1.0f, 0.333f, -2.5f, 65504.0f, 1e-3f, 100.0f};
  std::vector<float> FB = {2.0f, 3.0f, 0.125f, 2.0f, 7.0f, 0.01f};
  for (size_t I = 0; I < FA.size(); ++I) {
    HA.push_back(toHalf(FA[I]));
    HB.push_back(toHalf(FB[I]));
  }
  auto HAdd = runOp<uint16_t>("add", "f16", "f16", HA, HB);
  auto HMul = runOp<uint16_t>("mul", "f16", "f16", HA, HB);
  auto HDiv = runOp<uint16_t>("div", "f16", "f16", HA, HB);
  for (size_t I = 0; I < FA.size(); ++I) {
    float A = fromHalf(HA[I]), Bf = fromHalf(HB[I]);
    // One rounding of the exact result (f32 holds the f16 sum/product exactly).
    EXPECT_EQ(HAdd[I], toHalf(A + Bf)) << I;
    EXPECT_EQ(HMul[I], toHalf(A * Bf)) << I;
    EXPECT_EQ(HDiv[I], toHalf(float(double(A) / double(Bf)))) << I;
  }
  std::vector<uint16_t> HS = {toHalf(2.0f), toHalf(0.5f)};
  auto HSqrt = runOp<uint16_t>("sqrt", "f16", "f16", HS);
  EXPECT_EQ(HSqrt[0], toHalf(std::sqrt(2.0f)));
  auto HExp = runOp<uint16_t>("exp", "f16", "f16", HS);
  EXPECT_EQ(HExp[1], toHalf(std::exp(0.5f)));
  auto HToF = runOp<float>("cast", "f16", "f32", HA);
  EXPECT_EQ(HToF[1], fromHalf(HA[1]));
  std::vector<uint16_t> BA = {toBF16(1.0f), toBF16(3.0f)},
                        BB = {toBF16(0.0078125f), toBF16(-1.5f)};
  auto BAdd = runOp<uint16_t>("add", "bf16", "bf16", BA, BB);
  for (size_t I = 0; I < BA.size(); ++I)
    EXPECT_EQ(BAdd[I], toBF16(fromBF16(BA[I]) + fromBF16(BB[I])));
  // bf16 subnormals are f32 subnormals: never flushed.
  std::vector<uint16_t> Z = {0x0000, 0x0001, 0x8001},
                        Dn = {0x0001, 0x0001, 0x0001};
  EXPECT_EQ(runOp<uint16_t>("add", "bf16", "bf16", Z, Dn),
            (std::vector<uint16_t>{0x0001, 0x0002, 0x0000}));
  EXPECT_EQ(runOp<uint16_t>("div", "bf16", "bf16", Z, Dn)[0], 0x0000);
  std::vector<float> Sub = {std::bit_cast<float>(0x000116c2u)};
  EXPECT_EQ(runOp<uint16_t>("cast", "f32", "bf16", Sub)[0], 0x0001);
  // Single rounding where a naive double rounding goes wrong.
  std::vector<int64_t> BigI = {4311744516ll, 1077936129ll};
  EXPECT_EQ(runOp<uint16_t>("cast", "i64", "bf16", BigI),
            (std::vector<uint16_t>{0x4f81, 0x4e81}));
  std::vector<double> DTie = {std::ldexp(1.0 + 1.0 / 256, 0) +
                              std::ldexp(1.0, -40)};
  EXPECT_EQ(runOp<uint16_t>("cast", "f64", "bf16", DTie)[0],
            0x3f81); // above the tie
  const char *Fma = R"(
kernel @bfma cube_dim(1) (%a: buffer<bf16, read>, %o: buffer<bf16, write>) {
  %x = load %a[0:u32] : bf16
  %y = load %a[1:u32] : bf16
  %z = load %a[2:u32] : bf16
  %r = fma %x, %y, %z : bf16
  store %o[0:u32], %r
}
)";
  JitKernel FK = compile(Fma);
  ASSERT_TRUE(FK.Fn);
  // 3 * -1.0078125 = -3.0234375 is a bf16 tie; the tiny + c decides it.
  std::vector<uint16_t> FIn = {0x4040, 0xbf81, 0x0080}, FOut(1);
  FK.launch({buf(FIn), buf(FOut)}, {1, 1, 1});
  EXPECT_EQ(FOut[0], 0xc041);
  auto BToH = runOp<uint16_t>("cast", "bf16", "f16", BA);
  EXPECT_EQ(BToH[1], toHalf(3.0f));
  std::vector<double> DA = {1.0, 2.0, 1e300}, DB = {3.0, 0.0, 1e10};
  auto DDiv = runOp<double>("div", "f64", "f64", DA, DB);
  for (size_t I = 0; I < DA.size(); ++I)
    EXPECT_EQ(DDiv[I], DA[I] / DB[I]);
  auto DSqrt = runOp<double>("sqrt", "f64", "f64", DA);
  EXPECT_EQ(DSqrt[1], std::sqrt(2.0));
  auto DExp = runOp<double>("exp", "f64", "f64", DA);
  EXPECT_NEAR(DExp[0], std::exp(1.0), 1e-15);
  std::vector<double> Big = {3e9, -1e20, NAN};
  auto DI = runOp<int32_t>("cast", "f64", "i32", Big);
  EXPECT_EQ(DI, (std::vector<int32_t>{INT32_MAX, INT32_MIN, 0}));
}

TEST(LoweringSemantics, Lines) {
  const char *Text = R"(
kernel @lines cube_dim(8) (%a: buffer<vec<4 x f32>, read>, %b: buffer<vec<4 x f32>, read>,
                           %c: buffer<vec<4 x f32>, write>, %d: buffer<f32, write>,
                           %t: buffer<vec<3 x f32>, read_write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %x = load %a[%i] : vec<4 x f32>
    %y = load %b[%i] : vec<4 x f32>
    %two = splat 2.0:f32 : vec<4 x f32>
    %m = mul %x, %y : vec<4 x f32>
    %r = add %m, %two : vec<4 x f32>
    %k = rem %i, 6:u32 : u32
    %e = extract %r[%k] : f32
    %w = insert %r[%k], -1.0:f32 : vec<4 x f32>
    store %c[%i], %w
    %dt = dot %x, %y : f32
    %i4 = mul %i, 4:u32 : u32
    store %d[%i4], %dt
    %i41 = add %i4, 1:u32 : u32
    store %d[%i41], %e
    %mag = magnitude %x : f32
    %i42 = add %i4, 2:u32 : u32
    store %d[%i42], %mag
    %gt = gt %x, %y : vec<4 x bool>
    %sel = select %gt, %x, %y : vec<4 x f32>
    %s0 = extract %sel[3] : f32
    %i43 = add %i4, 3:u32 : u32
    store %d[%i43], %s0
    %tv = load %t[%i] : vec<3 x f32>
    %tw = add %tv, %tv : vec<3 x f32>
    store %t[%i], %tw
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  uint32_t N = 13;
  std::vector<float> A(4 * N), Bv(4 * N), C(4 * N), D(4 * N), T(3 * N);
  for (uint32_t I = 0; I < 4 * N; ++I) {
    A[I] = float(I % 7) - 2.0f;
    Bv[I] = float(I % 5) * 0.5f;
  }
  for (uint32_t I = 0; I < 3 * N; ++I)
    T[I] = float(I);
  KernelArg AA{A.data(), N}, BA{Bv.data(), N}, CA{C.data(), N},
      DA{D.data(), 4 * N}, TA{T.data(), N};
  K.launch({AA, BA, CA, DA, TA, val(N)}, {2, 1, 1});
  for (uint32_t I = 0; I < N; ++I) {
    float R[4], Dot = 0, Sq = 0;
    for (int L = 0; L < 4; ++L) {
      R[L] = A[4 * I + L] * Bv[4 * I + L] + 2.0f;
      Dot += A[4 * I + L] * Bv[4 * I + L];
      Sq += A[4 * I + L] * A[4 * I + L];
    }
    uint32_t Kx = I % 6;
    for (int L = 0; L < 4; ++L)
      EXPECT_EQ(C[4 * I + L], int(Kx) == L ? -1.0f : R[L]) << I << "," << L;
    EXPECT_EQ(D[4 * I], Dot);
    EXPECT_EQ(D[4 * I + 1], Kx < 4 ? R[Kx] : 0.0f); // out of range: 0
    EXPECT_EQ(D[4 * I + 2], std::sqrt(Sq));
    EXPECT_EQ(D[4 * I + 3], std::max(A[4 * I + 3], Bv[4 * I + 3]));
  }
  for (uint32_t I = 0; I < 3 * N;
       ++I) // vec<3 x f32> is packed: stride 12 bytes
    EXPECT_EQ(T[I], 2.0f * float(I));
}

TEST(LoweringSemantics, BoundsCheckedVariant) {
  const char *Text = R"(
kernel @oob cube_dim(16) (%a: buffer<f32, read>, %o: buffer<f32, write>,
                          %cnt: buffer<u32, read_write>, %old: buffer<u32, write>,
                          %neg: buffer<f32, write>) {
  %i = absolute_pos : u32
  %x = load %a[%i] : f32
  store %o[%i], %x
  %r = atomic_add %cnt[%i], 1:u32 : u32
  store %old[%i], %r
  %s = shared f32[8]
  %l = local_array f32[4]
  store %s[%i], 5.0:f32
  store %l[%i], 6.0:f32
  %sv = load %s[%i] : f32
  %lv = load %l[%i] : f32
  %sum = add %sv, %lv : f32
  %si = cast %i : i32
  %m = sub %si, 8:i32 : i32
  %nv = load %a[%m] : f32
  %t = add %sum, %nv : f32
  store %neg[%i], %t
  %ln = len %a : u32
  %c0 = eq %i, 0:u32 : bool
  if %c0 {
    store %neg[20:u32], 0.0:f32
  }
  %c1 = eq %i, 1:u32 : bool
  if %c1 {
    %lf = cast %ln : f32
    store %neg[1:u32], %lf
  }
}
)";
  JitKernel K = compile(Text, CpuVariant{true, 64});
  ASSERT_TRUE(K.Fn);
  // a has 10 elements, o has 6 (with a guard zone), cnt 4, old 16, neg 16.
  std::vector<float> A(10), O(16, -1.0f), Neg(32, -9.0f);
  std::vector<uint32_t> Cnt(8, 100), Old(16, 77);
  for (int I = 0; I < 10; ++I)
    A[I] = float(I + 1);
  K.launch({KernelArg{A.data(), 10}, KernelArg{O.data(), 6},
            KernelArg{Cnt.data(), 4}, buf(Old), KernelArg{Neg.data(), 16}},
           {1, 1, 1});
  for (int I = 0; I < 16; ++I) {
    EXPECT_EQ(O[I], I < 6 ? float(I + 1) : -1.0f) << I; // dropped beyond 6
    EXPECT_EQ(Old[I], I < 4 ? 100u : 0u) << I;          // atomic oob gives 0
    float Sv = I < 8 ? 5.0f : 0.0f, Lv = I < 4 ? 6.0f : 0.0f;
    float Nv =
        (I - 8 >= 0 && I - 8 < 10) ? float(I - 8 + 1) : 0.0f; // negative: oob
    if (I == 1)
      EXPECT_EQ(Neg[1], 10.0f); // len
    else
      EXPECT_EQ(Neg[I], Sv + Lv + Nv) << I;
  }
  for (int I = 16; I < 32; ++I)
    EXPECT_EQ(Neg[I], -9.0f); // store at 20 dropped
  for (int I = 0; I < 8; ++I)
    EXPECT_EQ(Cnt[I], I < 4 ? 101u : 100u);
}

TEST(LoweringSemantics, UncheckedVariantHasNoGuards) {
  llvm::LLVMContext Ctx;
  LoweredModule L = lowerOnly(VAdd, Ctx, CpuVariant{false, 16});
  ASSERT_TRUE(L.Module);
  std::string IR;
  llvm::raw_string_ostream OS(IR);
  L.Module->print(OS, nullptr);
  EXPECT_EQ(IR.find("inbounds.end"), std::string::npos);
  LoweredModule C = lowerOnly(VAdd, Ctx, CpuVariant{true, 16});
  std::string IR2;
  llvm::raw_string_ostream OS2(IR2);
  C.Module->print(OS2, nullptr);
  EXPECT_NE(IR2.find("inbounds.end"), std::string::npos);
  EXPECT_NE(IR2.find("\"align\"(ptr"), std::string::npos);
}

// A u32 index against a buffer of 2^32 elements or more: every u32 index,
// 2^32-1 included, is in bounds; with 2^32-1 elements, 2^32-1 is out of
// bounds. The buffers are 4 GiB reservations of which one page is touched.
TEST(LoweringSemantics, BoundsCheckU32IndexHugeBuffer) {
  const char *Text = R"(
kernel @huge cube_dim(2) (%p: buffer<u8, read_write>, %o: buffer<u8, write>) {
  %u = unit_pos : u32
  %i = sub 4294967295:u32, %u : u32
  %x = load %p[%i] : u8
  store %o[%u], %x
  %y = add %x, 1:u8 : u8
  store %p[%i], %y
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  const size_t Bytes = (size_t(1) << 32) + 4096;
  void *Map = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Map == MAP_FAILED)
    GTEST_SKIP() << "cannot reserve 4 GiB of address space";
  auto *P = static_cast<uint8_t *>(Map);
  const size_t Last = 0xFFFFFFFFull;
  for (uint64_t Count :
       {uint64_t(1) << 32, (uint64_t(1) << 32) + 7, uint64_t(0xFFFFFFFF)}) {
    P[Last] = 40;
    P[Last - 1] = 50;
    std::vector<uint8_t> O(2, 0xAA);
    K.launch({KernelArg{P, Count}, buf(O)}, {1, 1, 1});
    bool LastIn = Count > Last;
    EXPECT_EQ(O[0], LastIn ? 40 : 0) << Count;
    EXPECT_EQ(P[Last], LastIn ? 41 : 40) << Count;
    EXPECT_EQ(O[1], 50) << Count;
    EXPECT_EQ(P[Last - 1], 51) << Count;
  }
  munmap(Map, Bytes);
}

// Unit loops run without checks only where every unit's accesses are in
// bounds (LowerVersioning.cpp): cubes at both edges of the buffers, indices
// with a step, below zero (signed) and past the end must keep exact
// bounds-checked results, and the kernel's own `lt` must still mask.
TEST(LoweringSemantics, VersionedUnitLoopsKeepEdgeCubesChecked) {
  const char *Text = R"(
kernel @edge cube_dim(8) (%a: buffer<i32, read>, %o: buffer<i32, write>,
                          %t: buffer<i32, write>, %n: u32) {
  %i = absolute_pos : u32
  %si = cast %i : i32
  %m1 = sub %si, 1:i32 : i32
  %prev = load %a[%m1] : i32
  %i2 = mul %i, 2:u32 : u32
  %twice = load %a[%i2] : i32
  %ip = add %i, 3:u32 : u32
  %next = load %a[%ip] : i32
  %s0 = add %prev, %twice : i32
  %s = add %s0, %next : i32
  store %o[%i], %s
  %in = lt %i, %n : bool
  if %in {
    store %t[%i], %s
  }
}
)";
  for (bool Checked : {true, false}) {
    JitKernel K = compile(Text, CpuVariant{Checked, 64});
    ASSERT_TRUE(K.Fn);
    const int Cubes = 6, Total = Cubes * 8, N = 40, Tn = 37;
    std::vector<int32_t> A(N), O(Total, -7), T(Total, -7);
    for (int I = 0; I < N; ++I)
      A[I] = I * 10 + 1;
    uint32_t NV = Tn;
    // The unchecked variant may only touch what is in bounds: give it room.
    std::vector<int32_t> ABig(3 * Total, 0);
    std::copy(A.begin(), A.end(), ABig.begin() + Total);
    KernelArg AArg =
        Checked ? buf(A) : KernelArg{ABig.data() + Total, 2 * Total};
    K.launch({AArg, buf(O), buf(T), val(NV)}, {Cubes, 1, 1});
    auto At = [&](int64_t J) -> int32_t {
      if (J < 0 || J >= N)
        return 0;
      return A[J];
    };
    for (int I = 0; I < Total; ++I) {
      if (!Checked && (I == 0 || 2 * I >= N || I + 3 >= N))
        continue; // out of bounds: the kernel's bug in this variant
      int32_t S = At(I - 1) + At(2 * I) + At(I + 3);
      EXPECT_EQ(O[I], S) << I << (Checked ? " checked" : "");
      EXPECT_EQ(T[I], I < Tn ? S : -7) << I << (Checked ? " checked" : "");
    }
  }
}

/// A 2-D cube reads `%a[%base + row * %pitch + col]` (u32, wrapping): the
/// unit loop over a row of units is versioned once for all rows of the cube
/// (bounds and no wrap, its offsets computed in 64 bits in the twin), and
/// the guarded loop must still give every unit its own answer when the test
/// fails: the buffer's end inside a cube, indices that wrap past 2^32 back
/// into the buffer.
TEST(LoweringSemantics, VersionedRowLoopsOfTwoDimensionalCubes) {
  const char *Text = R"(
kernel @rows cube_dim(8, 4) (%a: buffer<f32, read>, %o: buffer<f32, write>,
                             %base: u32, %pitch: u32, %w: u32) {
  %col = absolute_pos.x : u32
  %row = absolute_pos.y : u32
  %r0 = mul %row, %pitch : u32
  %r1 = add %base, %r0 : u32
  %i = add %r1, %col : u32
  %v = load %a[%i] : f32
  %o0 = mul %row, %w : u32
  %oi = add %o0, %col : u32
  store %o[%oi], %v
}
)";
  const uint32_t CubesX = 3, CubesY = 5, W = CubesX * 8, H = CubesY * 4;
  struct Case {
    const char *Name;
    uint32_t Base, Pitch, N;
    bool Checked; ///< only the checked variant may read out of bounds
  };
  const Case Cases[] = {
      {"in bounds", 5, 40, 5 + 40 * H, false},
      {"in bounds, pitch below the row", 3, 7, 3 + 7 * H + W, false},
      {"the end inside a cube", 0, 32, 32 * 9 + 13, true},
      // Rows from 2^32 - 100 on: a cube's first rows lie past the end, its
      // later ones wrap back to the buffer's start.
      {"wrapping rows", 0xffffffffu - 100, 30, 600, true},
  };
  for (bool O3 : {false, true})
    for (bool Checked : {true, false}) {
      JitKernel K = compile(Text, CpuVariant{Checked, 64}, {}, O3);
      ASSERT_TRUE(K.Fn);
      EXPECT_NE(K.LLVMIR.find("wide.start"), std::string::npos)
          << "the row loop has no twin with 64-bit offsets";
      for (const Case &C : Cases) {
        if (C.Checked && !Checked)
          continue;
        SCOPED_TRACE(std::string(C.Name) + (Checked ? " checked" : "") +
                     (O3 ? " O3" : " O0"));
        std::vector<float> A(C.N), O(size_t(W) * H, -1.0f);
        for (uint32_t I = 0; I < C.N; ++I)
          A[I] = float(I) + 0.5f;
        uint32_t Base = C.Base, Pitch = C.Pitch, Wv = W;
        K.launch({buf(A), buf(O), val(Base), val(Pitch), val(Wv)},
                 {CubesX, CubesY, 1});
        for (uint32_t R = 0; R < H; ++R)
          for (uint32_t X = 0; X < W; ++X) {
            uint32_t I = Base + R * Pitch + X; // wraps as the kernel's u32
            float Want = I < C.N ? A[I] : 0.0f;
            ASSERT_EQ(O[size_t(R) * W + X], Want)
                << "row " << R << " col " << X << " index " << I;
          }
      }
    }
}

TEST(LoweringSemantics, ConstantsBoolLinesAndIndices) {
  const char *Text = R"(
kernel @misc cube_dim(4) (%o: buffer<vec<4 x f32>, write>, %b: buffer<vec<4 x bool>, read_write>,
                          %w: buffer<i32, read_write>, %flag: bool, %d: buffer<vec<2 x f64>, write>) {
  %u = unit_pos : u32
  %c = const [1.0, -2.5, 0x3f800000, inf] : vec<4 x f32>
  %z = splat 0.0:f32 : vec<4 x f32>
  %sel = select %flag, %c, %z : vec<4 x f32>
  store %o[%u], %sel
  %bv = load %b[%u] : vec<4 x bool>
  %nb = not %bv : vec<4 x bool>
  store %b[%u], %nb
  %si = cast %u : i64
  %neg = sub %si, 2:i64 : i64
  %x = load %w[%neg] : i32
  %ui = cast %u : u64
  %big = add %ui, 4294967296:u64 : u64
  store %w[%big], 99:i32
  %y = add %x, 1:i32 : i32
  %idx = add %u, 4:u32 : u32
  store %w[%idx], %y
  %s = shared f32[6]
  %ls = len %s : u32
  %lsi = cast %ls : i32
  %j = add %u, 8:u32 : u32
  store %w[%j], %lsi
  %dv = const [0.1, 1e300] : vec<2 x f64>
  %dd = mul %dv, %dv : vec<2 x f64>
  store %d[%u], %dd
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<float> O(16);
  std::vector<uint8_t> Bb(16);
  for (int I = 0; I < 16; ++I)
    Bb[I] = I % 3 == 0;
  std::vector<int32_t> W = {10, 20, 30, 40, 0, 0, 0, 0, 0, 0, 0, 0};
  std::vector<double> D(8);
  uint8_t Flag = 1;
  K.launch({KernelArg{O.data(), 4}, KernelArg{Bb.data(), 4}, buf(W), val(Flag),
            KernelArg{D.data(), 4}},
           {1, 1, 1});
  for (int U = 0; U < 4; ++U) {
    EXPECT_EQ(O[4 * U + 0], 1.0f);
    EXPECT_EQ(O[4 * U + 1], -2.5f);
    EXPECT_EQ(O[4 * U + 2], 1.0f); // hexadecimal bit pattern
    EXPECT_TRUE(std::isinf(O[4 * U + 3]));
    for (int L = 0; L < 4; ++L)
      EXPECT_EQ(Bb[4 * U + L], (4 * U + L) % 3 == 0 ? 0 : 1) << U << "," << L;
    // w[u - 2] with a negative i64 index reads 0 (checked variant).
    EXPECT_EQ(W[4 + U], (U >= 2 ? (U == 2 ? 10 : 20) : 0) + 1) << U;
    EXPECT_EQ(W[8 + U], 6); // len of shared f32[6]
    EXPECT_EQ(D[2 * U], 0.1 * 0.1);
    EXPECT_TRUE(std::isinf(D[2 * U + 1]));
  }
  EXPECT_EQ(W[0], 10); // index 2^32 + u is out of bounds, not wrapped to u
  Flag = 0;
  K.launch({KernelArg{O.data(), 4}, KernelArg{Bb.data(), 4}, buf(W), val(Flag),
            KernelArg{D.data(), 4}},
           {1, 1, 1});
  EXPECT_EQ(O[1], 0.0f);
}

} // namespace

namespace {
const char *FlattenedIfText = R"(
kernel @flat cube_dim(32) (%idx: buffer<i32, read>, %tab: buffer<f32, read>,
                           %tab2: buffer<i32, read>, %out: buffer<f32, write>) {
  %g = absolute_pos.x : u32
  %nb = load %idx[%g] : i32
  %acc = var f32
  %cnt = var i32
  set %acc, -1.0:f32
  set %cnt, 0:i32
  %pos = ge %nb, 0:i32 : bool
  if %pos {
    %v = load %tab[%nb] : f32
    %k = load %tab2[%nb] : i32
    %odd = band %k, 1:i32 : i32
    %isodd = eq %odd, 1:i32 : bool
    if %isodd {
      %w = mul %v, 3.0:f32 : f32
      set %acc, %w
      set %cnt, %k
    } else {
      %z = div %k, %odd : i32
      set %acc, %v
      set %cnt, %z
    }
  } else {
    %m = neg %nb : i32
    %u = load %tab2[%m] : i32
    set %cnt, %u
  }
  %a = get %acc : f32
  %c = get %cnt : i32
  %cf = cast %c : f32
  %r = add %a, %cf : f32
  store %out[%g], %r
}
)";
} // namespace

// A divergent `if` tree that only computes, sets variables and reads at
// loaded indices is lowered without branches (docs/Lowering.md §11,
// "Branch-free ifs"): every unit runs both bodies, so each read must be
// safe for any index (out of bounds, negative, a buffer of no elements)
// and each `set` must keep its variable where the unit's path does not
// take it. Checked against the branching semantics, per unit, at O0 and
// O3 (vectorised), a call per cube or for all, in both variants.
TEST(LoweringSemantics, BranchFreeIfsKeepTheBranchingSemantics) {
  const uint32_t Cubes = 5, N = 32 * Cubes;
  for (bool Checked : {true, false}) {
    for (bool O3 : {false, true}) {
      JitKernel K = compile(FlattenedIfText, CpuVariant{Checked, 64}, {}, O3);
      ASSERT_TRUE(K.Fn);
      EXPECT_NE(K.LLVMIR.find("@kiln.zero_cell"), std::string::npos);
      for (uint32_t TabN : {0u, 7u, 40u}) {
        std::vector<float> Tab(TabN);
        std::vector<int32_t> Tab2(TabN);
        for (uint32_t I = 0; I < TabN; ++I) {
          Tab[I] = 0.25f * float(I) + 1.0f;
          Tab2[I] = int32_t(I * 7 % 11) - 3;
        }
        // Indices from -12 to 52: negative, in bounds, past the end. The
        // unchecked variant gets only those its reads may take: in bounds
        // where a path reads them (a read elsewhere is the flattening's).
        std::vector<int32_t> Idx(N);
        for (uint32_t I = 0; I < N; ++I) {
          int32_t V = int32_t(I * 37 % 65) - 12;
          if (!Checked && (V >= int32_t(TabN) || -V >= int32_t(TabN)))
            V = TabN ? V % int32_t(TabN) : 0;
          if (!Checked && TabN == 0)
            V = 0;
          Idx[I] = V;
        }
        if (!Checked && TabN == 0)
          continue; // every path reads a table
        auto At = [&](auto &T, int32_t I) {
          using E = typename std::decay_t<decltype(T)>::value_type;
          return I >= 0 && uint32_t(I) < TabN ? T[I] : E(0);
        };
        for (bool PerCube : {false, true}) {
          std::vector<float> Out(N, 1e9f);
          K.launch({buf(Idx), buf(Tab), buf(Tab2), buf(Out)}, {Cubes, 1, 1},
                   PerCube);
          for (uint32_t I = 0; I < N; ++I) {
            int32_t Nb = Idx[I];
            float Acc = -1.0f;
            int32_t Cnt = 0;
            if (Nb >= 0) {
              float V = At(Tab, Nb);
              int32_t Kv = At(Tab2, Nb);
              int32_t Odd = Kv & 1;
              if (Odd == 1) {
                Acc = V * 3.0f;
                Cnt = Kv;
              } else {
                Acc = V;
                Cnt = 0; // Kv / 0: division by zero gives 0
              }
            } else {
              Cnt = At(Tab2, -Nb);
            }
            ASSERT_EQ(Out[I], Acc + float(Cnt))
                << "checked " << Checked << " O3 " << O3 << " table of "
                << TabN << " per cube " << PerCube << " unit " << I
                << " index " << Nb;
          }
        }
      }
    }
  }
}
