//===- ControlTest.cpp - Divergent control flow, returns, hoisted loops
//----===//

#include "LoweringHarness.h"

#include "gtest/gtest.h"

using namespace kiln;
using namespace kiln::test;

namespace {

TEST(LoweringControl, DivergentLoopsBreakContinueSwitch) {
  const char *Text = R"(
kernel @div cube_dim(32) (%o: buffer<i32, write>) {
  %u = unit_pos : u32
  %acc = var i32
  set %acc, 0:i32
  %lim = rem %u, 7:u32 : u32
  for %k = 0:u32 to 100:u32 {
    %big = gt %k, %lim : bool
    if %big {
      break
    }
    %odd = band %k, 1:u32 : u32
    %isodd = ne %odd, 0:u32 : bool
    if %isodd {
      continue
    }
    %sel = rem %k, 3:u32 : u32
    %ki = cast %k : i32
    switch %sel {
      case 0 {
        %a = get %acc : i32
        %b = add %a, %ki : i32
        set %acc, %b
      }
      case 1 {
        %a1 = get %acc : i32
        %b1 = mul %a1, 2:i32 : i32
        set %acc, %b1
      }
      default {
        %a2 = get %acc : i32
        %b2 = sub %a2, 1:i32 : i32
        set %acc, %b2
      }
    }
  }
  %cnt = var u32
  set %cnt, 0:u32
  loop {
    %c = get %cnt : u32
    %c1 = add %c, 1:u32 : u32
    set %cnt, %c1
    %stop = ge %c1, %u : bool
    if %stop {
      break
    }
  }
  %r = get %acc : i32
  %cv = get %cnt : u32
  %ci = cast %cv : i32
  %m = mul %ci, 1000:i32 : i32
  %res = add %r, %m : i32
  store %o[%u], %res
  for %j = 250:u8 to 255:u8 step 10:u8 {
    store %o[%u], %res
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<int32_t> O(32);
  K.launch({buf(O)}, {1, 1, 1});
  for (uint32_t U = 0; U < 32; ++U) {
    int32_t Acc = 0;
    for (uint32_t Kk = 0; Kk < 100; ++Kk) {
      if (Kk > U % 7)
        break;
      if (Kk & 1)
        continue;
      switch (Kk % 3) {
      case 0:
        Acc += int32_t(Kk);
        break;
      case 1:
        Acc *= 2;
        break;
      default:
        Acc -= 1;
        break;
      }
    }
    uint32_t Cnt = 0;
    do {
      ++Cnt;
    } while (Cnt < U);
    EXPECT_EQ(O[U], Acc + int32_t(Cnt) * 1000) << U;
  }
}

TEST(LoweringControl, ReturnBeforeBarrier) {
  // Units >= n return; the others still meet at the barriers and reduce.
  const char *Text = R"(
kernel @ret cube_dim(64) (%o: buffer<u32, write>, %n: u32) {
  %s = shared u32[64]
  %u = unit_pos : u32
  store %s[%u], 0:u32
  sync_cube
  %out = ge %u, %n : bool
  if %out {
    return
  }
  %v = add %u, 1:u32 : u32
  store %s[%u], %v
  sync_cube
  %z = eq %u, 0:u32 : bool
  if %z {
    %t = var u32
    set %t, 0:u32
    for %i = 0:u32 to 64:u32 {
      %x = load %s[%i] : u32
      %a = get %t : u32
      %b = add %a, %x : u32
      set %t, %b
    }
    %tv = get %t : u32
    store %o[0:u32], %tv
  }
  store %o[%v], %u
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  for (uint32_t N : {0u, 1u, 10u, 64u}) {
    std::vector<uint32_t> O(66, 0xABCD);
    K.launch({buf(O), val(N)}, {1, 1, 1});
    if (N == 0) {
      EXPECT_EQ(O[0], 0xABCDu);
    } else {
      EXPECT_EQ(O[0], N * (N + 1) / 2) << N;
    }
    for (uint32_t U = 0; U < 64; ++U)
      EXPECT_EQ(O[U + 1], U < N ? U : 0xABCDu) << N << "," << U;
  }
}

TEST(LoweringControl, HoistedLoopEndsWhenAllUnitsReturn) {
  // A uniform loop with a barrier that never breaks: every unit returns in
  // the third iteration, and the cube must still finish.
  const char *Text = R"(
kernel @spin cube_dim(16) (%o: buffer<u32, read_write>) {
  %u = absolute_pos : u32
  %it = var u32
  set %it, 0:u32
  loop {
    %i = get %it : u32
    %i1 = add %i, 1:u32 : u32
    set %it, %i1
    %three = eq %i1, 3:u32 : bool
    if %three {
      store %o[%u], %i1
      return
    }
    sync_cube
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<uint32_t> O(32, 0);
  // Two cubes in one call: the return flags of the first must not leak
  // into the second.
  K.launch({buf(O)}, {2, 1, 1});
  for (uint32_t U = 0; U < 32; ++U)
    EXPECT_EQ(O[U], 3u) << U;
}

TEST(LoweringControl, UniformBreakAndContinueOfHoistedLoop) {
  const char *Text = R"(
kernel @hb cube_dim(8) (%o: buffer<u32, read_write>, %stop: u32) {
  %s = shared u32[8]
  %u = unit_pos : u32
  store %s[%u], 0:u32
  for %k = 0:u32 to 100:u32 {
    %end = eq %k, %stop : bool
    if %end {
      break
    }
    %skip = eq %k, 2:u32 : bool
    if %skip {
      continue
    }
    %x = load %s[%u] : u32
    %y = add %x, %k : u32
    store %s[%u], %y
    sync_cube
    %nb = add %u, 1:u32 : u32
    %nbi = rem %nb, 8:u32 : u32
    %z = load %s[%nbi] : u32
    sync_cube
    %w = load %s[%u] : u32
    %w2 = add %w, %z : u32
    store %s[%u], %w2
    sync_cube
  }
  %r = load %s[%u] : u32
  store %o[%u], %r
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<uint32_t> O(8);
  uint32_t Stop = 6;
  K.launch({buf(O), val(Stop)}, {1, 1, 1});
  std::vector<uint32_t> S(8, 0);
  for (uint32_t Kk = 0; Kk < 100; ++Kk) {
    if (Kk == Stop)
      break;
    if (Kk == 2)
      continue;
    for (auto &V : S)
      V += Kk;
    std::vector<uint32_t> Z(8);
    for (uint32_t U = 0; U < 8; ++U)
      Z[U] = S[(U + 1) % 8];
    for (uint32_t U = 0; U < 8; ++U)
      S[U] += Z[U];
  }
  EXPECT_EQ(O, S);
}

TEST(LoweringControl, HoistedIfAndSwitchWithBarrier) {
  const char *Text = R"(
kernel @hs cube_dim(4) (%o: buffer<i32, write>, %mode: i32) {
  %s = shared i32[4]
  %u = unit_pos : u32
  %ui = cast %u : i32
  switch %mode {
    case 1 {
      store %s[%u], %ui
      sync_cube
    }
    case -3 {
      %t = mul %ui, 10:i32 : i32
      store %s[%u], %t
      sync_cube
    }
    default {
      store %s[%u], -1:i32
      sync_cube
    }
  }
  %pos = gt %mode, 0:i32 : bool
  if %pos {
    %r = sub 3:u32, %u : u32
    %v = load %s[%r] : i32
    sync_cube
    store %o[%u], %v
  } else {
    %v2 = load %s[%u] : i32
    sync_cube
    store %o[%u], %v2
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  for (int32_t Mode : {1, -3, 5, 0}) {
    std::vector<int32_t> O(4);
    K.launch({buf(O), val(Mode)}, {1, 1, 1});
    for (int U = 0; U < 4; ++U) {
      int32_t Want;
      if (Mode == 1)
        Want = 3 - U;
      else if (Mode == -3)
        Want = 10 * U;
      else if (Mode > 0)
        Want = -1;
      else
        Want = -1;
      EXPECT_EQ(O[U], Want) << Mode << "," << U;
    }
  }
}

TEST(LoweringControl, UniformBarrierFreeLoops) {
  // Barrier-free loops with uniform bounds, vars across them, a divergent
  // if inside, a negative start and a step.
  const char *Text = R"(
kernel @ix cube_dim(8, 3) (%w: buffer<i32, read>, %o: buffer<i32, write>, %n: i32) {
  %g = absolute_pos : u32
  %u = unit_pos : u32
  %ui = cast %u : i32
  %acc = var i32
  set %acc, %ui
  %scale = mul %ui, 3:i32 : i32
  %hi = add %n, 2:i32 : i32
  for %k = -3:i32 to %hi step 2:i32 {
    %t = var i32
    %kw = add %k, 3:i32 : i32
    %wv = load %w[%kw] : i32
    set %t, %wv
    %odd = band %ui, 1:i32 : i32
    %isodd = ne %odd, 0:i32 : bool
    if %isodd {
      %t2 = mul %wv, %scale : i32
      set %t, %t2
    }
    %a = get %acc : i32
    %tv = get %t : i32
    %a2 = add %a, %tv : i32
    set %acc, %a2
  }
  for %j = 0:u32 to 0:u32 {
    store %o[%g], -1:i32
  }
  %r = get %acc : i32
  store %o[%g], %r
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<int32_t> W(32);
  for (int I = 0; I < 32; ++I)
    W[I] = I * I - 7;
  for (int32_t N : {-10, 0, 5, 20}) {
    std::vector<int32_t> O(48, 123);
    K.launch({buf(W), buf(O), val(N)}, {2, 1, 1});
    for (int C = 0; C < 2; ++C)
      for (int U = 0; U < 24; ++U) {
        int Ux = U % 8, Uy = U / 8;
        int G = (C * 8 + Ux) + Uy * 16;
        int32_t Acc = U;
        for (int32_t Kk = -3; Kk < N + 2; Kk += 2) {
          int32_t T = Kk + 3 < 32 ? W[Kk + 3] : 0;
          if (U & 1)
            T *= 3 * U;
          Acc += T;
        }
        EXPECT_EQ(O[G], Acc) << N << " unit " << U << " cube " << C;
      }
  }
}

TEST(LoweringControl, SwitchLabelsOutsideTheSelectorRangeNeverMatch) {
  const char *Text = R"(
kernel @sw cube_dim(5) (%s: buffer<u32, read>, %b: buffer<i8, read>, %r: buffer<u32, write>) {
  %i = unit_pos : u32
  %v = load %s[%i] : u32
  %w = load %b[%i] : i8
  %o = mul %i, 2:u32 : u32
  %o1 = add %o, 1:u32 : u32
  store %r[%o], 100:u32
  store %r[%o1], 100:u32
  switch %v {
    case 4294967297 {
      store %r[%o], 1:u32
    }
    case -1 {
      store %r[%o], 2:u32
    }
    case 7 {
      store %r[%o], 7:u32
    }
  }
  switch %w {
    case 300 {
      store %r[%o1], 1:u32
    }
    case -129 {
      store %r[%o1], 2:u32
    }
    case -128 {
      store %r[%o1], 128:u32
    }
  }
}
)";
  JitKernel K = compile(Text);
  ASSERT_TRUE(K.Fn);
  std::vector<uint32_t> S = {1, 0xFFFFFFFFu, 7, 0, 2}, R(10);
  std::vector<int8_t> Bv = {44, 127, -128, -1, 2};
  K.launch({buf(S), buf(Bv), buf(R)}, {1, 1, 1});
  EXPECT_EQ(R, (std::vector<uint32_t>{100, 100, 100, 100, 7, 128, 100, 100, 100,
                                      100}));
}

} // namespace
