//===- PlaneTest.cpp - Plane operations, partial planes, returned units
//----===//

#include "LoweringHarness.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>

using namespace kiln;
using namespace kiln::test;

namespace {

const char *PlaneKernel = R"(
kernel @planes cube_dim(80) (%in: buffer<u32, read>, %f: buffer<f32, read>,
                             %o: buffer<u32, write>, %of: buffer<f32, write>,
                             %cut: u32) {
  %u = unit_pos : u32
  %g = absolute_pos : u32
  %gone = ge %u, %cut : bool
  if %gone {
    return
  }
  %x = load %in[%g] : u32
  %y = load %f[%g] : f32
  %base = mul %g, 16:u32 : u32
  %sum = plane_sum %x : u32
  %mx = plane_max %y : f32
  %mn = plane_min %x : u32
  %even = band %x, 1:u32 : u32
  %ise = eq %even, 0:u32 : bool
  %all = plane_all %ise : bool
  %any = plane_any %ise : bool
  %bc = plane_broadcast %x, 3:u32 : u32
  %lane = unit_pos_plane : u32
  %src = add %lane, 5:u32 : u32
  %sh = plane_shuffle %x, %src : u32
  %sx = plane_shuffle_xor %x, 16:u32 : u32
  %su = plane_shuffle_up %x, 1:u32 : u32
  %sd = plane_shuffle_down %x, 2:u32 : u32
  %inc = plane_inclusive_sum %x : u32
  %exc = plane_exclusive_sum %x : u32
  %el = plane_elect : bool
  %bal = plane_ballot %ise : vec<4 x u32>
  %pr = plane_prod %even : u32
  sync_cube
  %o0 = add %base, 0:u32 : u32
  store %o[%o0], %sum
  %o1 = add %base, 1:u32 : u32
  store %o[%o1], %mn
  %o2 = add %base, 2:u32 : u32
  %alli = cast %all : u32
  store %o[%o2], %alli
  %o3 = add %base, 3:u32 : u32
  %anyi = cast %any : u32
  store %o[%o3], %anyi
  %o4 = add %base, 4:u32 : u32
  store %o[%o4], %bc
  %o5 = add %base, 5:u32 : u32
  store %o[%o5], %sh
  %o6 = add %base, 6:u32 : u32
  store %o[%o6], %sx
  %o7 = add %base, 7:u32 : u32
  store %o[%o7], %su
  %o8 = add %base, 8:u32 : u32
  store %o[%o8], %sd
  %o9 = add %base, 9:u32 : u32
  store %o[%o9], %inc
  %o10 = add %base, 10:u32 : u32
  store %o[%o10], %exc
  %o11 = add %base, 11:u32 : u32
  %eli = cast %el : u32
  store %o[%o11], %eli
  %o12 = add %base, 12:u32 : u32
  %b0 = extract %bal[0] : u32
  store %o[%o12], %b0
  %o13 = add %base, 13:u32 : u32
  %b1 = extract %bal[1] : u32
  store %o[%o13], %b1
  %o14 = add %base, 14:u32 : u32
  store %o[%o14], %pr
  store %of[%g], %mx
}
)";

void checkPlanes(uint32_t Cut) {
  DeviceLimits L; // plane_dim 32: planes of 32, 32 and a partial one of 16
  JitKernel K = compile(PlaneKernel, {}, L);
  ASSERT_TRUE(K.Fn);
  const uint32_t U = 80, P = 32, Cubes = 2, N = U * Cubes;
  std::vector<uint32_t> In(N), O(N * 16, 0xDEAD);
  std::vector<float> F(N), OF(N, -1.0f);
  for (uint32_t I = 0; I < N; ++I) {
    In[I] = (I * 2654435761u) % 1000;
    F[I] = float(int(I * 31 % 97) - 40) * 0.25f;
  }
  K.launch({buf(In), buf(F), buf(O), buf(OF), val(Cut)}, {Cubes, 1, 1});
  for (uint32_t C = 0; C < Cubes; ++C)
    for (uint32_t Uu = 0; Uu < std::min(U, Cut); ++Uu) {
      uint32_t G = C * U + Uu, Base = (Uu / P) * P;
      uint32_t End = std::min(Base + P, U), Act = std::min(End, Cut);
      uint32_t Lane = Uu - Base, Len = End - Base;
      auto X = [&](uint32_t Unit) { return In[C * U + Unit]; };
      uint32_t Sum = 0, Mn = ~0u, Inc = 0, Exc = 0, Pr = 1;
      float Mx = -INFINITY;
      bool All = true, Any = false;
      uint32_t Bal[4] = {0, 0, 0, 0};
      for (uint32_t V = Base; V < Act; ++V) {
        Sum += X(V);
        Mn = std::min(Mn, X(V));
        Mx = std::max(Mx, F[C * U + V]);
        bool E = X(V) % 2 == 0;
        All &= E;
        Any |= E;
        Pr *= X(V) & 1;
        if (E)
          Bal[(V - Base) / 32] |= 1u << ((V - Base) % 32);
        if (V <= Uu)
          Inc += X(V);
        if (V < Uu)
          Exc += X(V);
      }
      const uint32_t *R = &O[G * 16];
      // A lane outside the plane gives the unit's own value; a lane whose
      // unit returned gives an unspecified value (not checked).
      auto CheckLane = [&](int Field, uint64_t Src) {
        if (Src >= Len) {
          EXPECT_EQ(R[Field], X(Uu)) << G << " field " << Field;
        } else if (Base + Src < Cut) {
          EXPECT_EQ(R[Field], X(Base + uint32_t(Src)))
              << G << " field " << Field;
        }
      };
      EXPECT_EQ(R[0], Sum) << G;
      EXPECT_EQ(R[1], Mn) << G;
      EXPECT_EQ(R[2], uint32_t(All)) << G;
      EXPECT_EQ(R[3], uint32_t(Any)) << G;
      EXPECT_EQ(R[4], X(Base + 3)) << G;
      CheckLane(5, Lane + 5);
      CheckLane(6, Lane ^ 16);
      CheckLane(7, Lane >= 1 ? uint64_t(Lane - 1) : uint64_t(~0u));
      CheckLane(8, Lane + 2);
      EXPECT_EQ(R[9], Inc) << G;
      EXPECT_EQ(R[10], Exc) << G;
      EXPECT_EQ(R[11], uint32_t(Uu == Base)) << G; // lowest active lane
      EXPECT_EQ(R[12], Bal[0]) << G;
      EXPECT_EQ(R[13], Bal[1]) << G;
      EXPECT_EQ(R[14], Pr) << G;
      EXPECT_EQ(OF[G], Mx) << G;
    }
}

TEST(LoweringPlane, AllOperationsWithPartialPlane) { checkPlanes(80); }

TEST(LoweringPlane, ReturnedUnitsTakeNoPart) { checkPlanes(50); }

TEST(LoweringPlane, WarpReductionThroughShuffleXor) {
  const char *Text = R"(
kernel @wr cube_dim(64) (%in: buffer<f32, read>, %out: buffer<f32, write>) {
  %g = absolute_pos : u32
  %x = load %in[%g] : f32
  %s16 = plane_shuffle_xor %x, 16:u32 : f32
  %a16 = add %x, %s16 : f32
  %s8 = plane_shuffle_xor %a16, 8:u32 : f32
  %a8 = add %a16, %s8 : f32
  %s4 = plane_shuffle_xor %a8, 4:u32 : f32
  %a4 = add %a8, %s4 : f32
  %s2 = plane_shuffle_xor %a4, 2:u32 : f32
  %a2 = add %a4, %s2 : f32
  %s1 = plane_shuffle_xor %a2, 1:u32 : f32
  %a1 = add %a2, %s1 : f32
  %lane = unit_pos_plane : u32
  %first = eq %lane, 0:u32 : bool
  if %first {
    %p = plane_pos : u32
    %c = cube_pos : u32
    %c2 = mul %c, 2:u32 : u32
    %idx = add %c2, %p : u32
    store %out[%idx], %a1
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<float> In(256), Out(8);
  for (int I = 0; I < 256; ++I)
    In[I] = float(I % 17);
  K.launch({buf(In), buf(Out)}, {4, 1, 1});
  for (int P = 0; P < 8; ++P) {
    float Want = 0;
    for (int I = 0; I < 32; ++I)
      Want += In[P * 32 + I];
    EXPECT_EQ(Out[P], Want) << P;
  }
}

TEST(LoweringPlane, BuiltinsAndConstantsAcrossSplits) {
  // Builtins and constants are recomputed, not kept per unit: at cube level
  // (plane operands, hoisted loop bounds) and in later unit loops.
  const char *Text = R"(
kernel @remat cube_dim(40) (%o: buffer<u32, write>) {
  %u = unit_pos : u32
  %g = absolute_pos : u32
  %dim = cube_dim : u32
  %c = const 5 : u32
  %steps = shr %dim, 3:u32 : u32
  sync_cube
  %s = plane_sum %u : u32
  %b = plane_broadcast %c, 0:u32 : u32
  %acc = var u32
  set %acc, 0:u32
  for %k = 0:u32 to %dim step %steps {
    %a = get %acc : u32
    %a1 = add %a, %k : u32
    set %acc, %a1
    sync_cube
  }
  %r0 = add %s, %b : u32
  %av = get %acc : u32
  %r = add %r0, %av : u32
  store %o[%g], %r
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<uint32_t> O(80);
  K.launch({buf(O)}, {2, 1, 1});
  for (uint32_t G = 0; G < 80; ++G) {
    uint32_t U = G % 40, Base = U / 32 * 32, End = std::min(Base + 32, 40u),
             Sum = 0;
    for (uint32_t V = Base; V < End; ++V)
      Sum += V;
    uint32_t Acc = 0;
    for (uint32_t Kk = 0; Kk < 40; Kk += 5)
      Acc += Kk;
    EXPECT_EQ(O[G], Sum + 5 + Acc) << G;
  }
}

// Results read only under `if`s on the unit's index are stored only for the
// lanes those `if`s let through, and planes none of whose lanes is read are
// not computed (docs/Lowering.md §6): what the guarded units read is still
// every operation's value, and a guard with a bound that is not a literal
// (or a use outside any guard) keeps every lane.
TEST(LoweringPlane, ResultsReadUnderUnitGuards) {
  const char *Text = R"(
kernel @guarded cube_dim(80) (%in: buffer<u32, read>, %o: buffer<u32, write>,
                              %cut: u32) {
  %u = unit_pos : u32
  %g = absolute_pos : u32
  %x = load %in[%g] : u32
  %s = plane_sum %x : u32
  %inc = plane_inclusive_sum %x : u32
  %bc = plane_broadcast %x, 5:u32 : u32
  %mx = plane_max %x : u32
  %exc = plane_exclusive_sum %x : u32
  %mn = plane_min %x : u32
  %sx = plane_shuffle_xor %x, 1:u32 : u32
  %base = mul %g, 8:u32 : u32
  %lt = lt %u, 40:u32 : bool
  if %lt {
    store %o[%base], %s
  }
  %ge = ge %u, 70:u32 : bool
  if %ge {
    %o1 = add %base, 1:u32 : u32
    store %o[%o1], %inc
  }
  %lane = unit_pos_plane : u32
  %l3 = eq %lane, 3:u32 : bool
  if %l3 {
    %o2 = add %base, 2:u32 : u32
    store %o[%o2], %bc
  }
  %le = le %u, 35:u32 : bool
  if %le {
    %gt = lt 33:u32, %u : bool
    if %gt {
      %o3 = add %base, 3:u32 : u32
      store %o[%o3], %mx
    }
  }
  %cutoff = lt %u, %cut : bool
  if %cutoff {
    %o4 = add %base, 4:u32 : u32
    store %o[%o4], %exc
  }
  %r = rem %u, 16:u32 : u32
  %r15 = eq %r, 15:u32 : bool
  if %r15 {
    %o5 = add %base, 5:u32 : u32
    %v = add %sx, 0:u32 : u32
    store %o[%o5], %v
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  const uint32_t U = 80, P = 32, Cubes = 2, N = U * Cubes, Cut = 50;
  std::vector<uint32_t> In(N), O(N * 8, 0xDEAD);
  for (uint32_t I = 0; I < N; ++I)
    In[I] = (I * 2654435761u) % 1000;
  uint32_t CutV = Cut;
  K.launch({buf(In), buf(O), val(CutV)}, {Cubes, 1, 1});
  for (uint32_t C = 0; C < Cubes; ++C)
    for (uint32_t Uu = 0; Uu < U; ++Uu) {
      uint32_t G = C * U + Uu, Base = Uu / P * P, End = std::min(Base + P, U);
      uint32_t Lane = Uu - Base;
      auto X = [&](uint32_t Unit) { return In[C * U + Unit]; };
      uint32_t Sum = 0, Inc = 0, Exc = 0, Mx = 0;
      for (uint32_t V = Base; V < End; ++V) {
        Sum += X(V);
        Mx = std::max(Mx, X(V));
        Inc += V <= Uu ? X(V) : 0;
        Exc += V < Uu ? X(V) : 0;
      }
      uint32_t Xor = (Lane ^ 1) < End - Base ? X(Base + (Lane ^ 1)) : X(Uu);
      const uint32_t *R = &O[G * 8];
      auto Want = [&](bool Guard, uint32_t V) { return Guard ? V : 0xDEAD; };
      EXPECT_EQ(R[0], Want(Uu < 40, Sum)) << G;
      EXPECT_EQ(R[1], Want(Uu >= 70, Inc)) << G;
      EXPECT_EQ(R[2], Want(Lane == 3, X(Base + 5))) << G;
      EXPECT_EQ(R[3], Want(Uu <= 35 && Uu > 33, Mx)) << G;
      EXPECT_EQ(R[4], Want(Uu < Cut, Exc)) << G;
      EXPECT_EQ(R[5], Want(Uu % 16 == 15, Xor)) << G;
    }
}

} // namespace
