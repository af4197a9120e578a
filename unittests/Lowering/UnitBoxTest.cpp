//===- UnitBoxTest.cpp - Unit loops narrowed to a box of units ------------===//
//
// A segment ending in `if` on a conjunction of comparisons of unit indices
// (a position along one dimension, unit or absolute, plus literal and
// uniform offsets) with uniform bounds runs each dimension's unit loop over
// the units where they hold (docs/Lowering.md §4, "Narrowed unit loops").
// Every test compares every unit's output with the condition evaluated here
// in the kernel's types, wrapping included, for bounds on and around every
// edge, in both bounds variants, unoptimised and at O3.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

using namespace kiln;
using namespace kiln::test;

namespace {

/// Runs \p K over a grid of \p Count cubes of \p Dim units with arguments
/// (out, a, b) and checks out[g] against \p Want(x, y) for every absolute
/// position (x, y) of the grid: 1000 + x + 100000 * y where the kernel's
/// condition holds, 7 (the fill) elsewhere.
void checkGrid(const JitKernel &K, std::array<uint32_t, 3> Dim,
               std::array<uint32_t, 3> Count, int32_t A, int32_t B,
               const std::function<bool(uint32_t, uint32_t)> &Want) {
  uint32_t W = Dim[0] * Count[0], H = Dim[1] * Count[1];
  std::vector<uint32_t> Out(size_t(W) * H, 7);
  int32_t AA = A, BB = B;
  K.launch({buf(Out), val(AA), val(BB)}, Count);
  for (uint32_t Y = 0; Y < H; ++Y)
    for (uint32_t X = 0; X < W; ++X) {
      uint32_t Expect = Want(X, Y) ? 1000 + X + 100000 * Y : 7;
      ASSERT_EQ(Out[size_t(Y) * W + X], Expect)
          << "x " << X << " y " << Y << " a " << A << " b " << B;
    }
}

/// Compiles \p Text in both bounds variants, unoptimised and at O3, and
/// calls \p Run with each; \p Narrowed: the names the narrowed loops'
/// bounds get must appear in the lowered module.
void forEachBuild(const std::string &Text,
                  std::initializer_list<const char *> Narrowed,
                  const std::function<void(const JitKernel &)> &Run) {
  for (bool Checked : {true, false})
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(std::string(Checked ? "checked" : "unchecked") +
                   (O3 ? " O3" : " O0"));
      CpuVariant V;
      V.BoundsChecked = Checked;
      V.BufferAlignment = 4; // std::vector's, not 64
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      for (const char *Name : Narrowed)
        EXPECT_NE(K.LLVMIR.find(Name), std::string::npos) << Name;
      Run(K);
    }
}

/// Gaussian elimination's Fan2 in an 8 x 4 cube: `x < a && Y_TEST` on the
/// absolute position, each index cast to i32; in the box every unit stores
/// 1000 + x + 100000 y at its own element, then runs \p Tail.
std::string fan2Kernel(const std::string &YTest, const std::string &Tail) {
  return R"(
kernel @box2 cube_dim(8, 4) (%out: buffer<u32, read_write>, %a: i32, %b: i32) {
  %xu = absolute_pos.x : u32
  %yu = absolute_pos.y : u32
  %x = cast %xu : i32
  %y = cast %yu : i32
  %inx = lt %x, %a : bool
  %iny = )" + YTest + R"( : bool
  %in = and %inx, %iny : bool
  if %in {
    %w0 = cube_count.x : u32
    %w = mul %w0, 8:u32 : u32
    %row = mul %yu, %w : u32
    %g = add %row, %xu : u32
    %hy = mul %yu, 100000:u32 : u32
    %v0 = add %xu, 1000:u32 : u32
    %v = add %v0, %hy : u32
    store %out[%g], %v
)" + Tail + R"(  }
}
)";
}

TEST(LoweringUnitBox, TwoDimensionalAbsoluteGuard) {
  // `x < a && b > y`: both orders of a comparison.
  const std::string Text = fan2Kernel("gt %b, %y", "");
  forEachBuild(Text, {"unit.hi.x", "unit.hi.y"}, [](const JitKernel &K) {
    for (int32_t A : {-3, 0, 1, 7, 8, 9, 17, 24, 25, 1 << 30})
      for (int32_t B : {std::numeric_limits<int32_t>::min(), 0, 1, 4, 6, 12,
                        13, std::numeric_limits<int32_t>::max()})
        checkGrid(K, {8, 4, 1}, {3, 3, 1}, A, B,
                  [&](uint32_t X, uint32_t Y) {
                    return int32_t(X) < A && B > int32_t(Y);
                  });
  });
}

TEST(LoweringUnitBox, UniformOffsetsAndWrapping) {
  // Pathfinder's `x = blk + tx; x <= a` with blk = b - 3 a uniform value:
  // near INT32_MAX the index wraps (to negative values, which pass) for
  // some units of a cube (the scalar fallback runs there), and a unit's own
  // range conjuncts (`tx >= 2`, `tx <= a`) intersect.
  const std::string Text = R"(
kernel @boxoff cube_dim(16) (%out: buffer<u32, read_write>, %a: i32, %b: i32) {
  %tu = unit_pos.x : u32
  %tx = cast %tu : i32
  %blk = sub %b, 3:i32 : i32
  %x = add %blk, %tx : i32
  %inr = le %x, %a : bool
  %t2 = ge %tx, 2:i32 : bool
  %ta = le %tx, %a : bool
  %tt = and %t2, %ta : bool
  %in = and %inr, %tt : bool
  if %in {
    %g = absolute_pos : u32
    %v = add %g, 1000:u32 : u32
    store %out[%g], %v
  }
}
)";
  constexpr int32_t Max = std::numeric_limits<int32_t>::max();
  forEachBuild(Text, {"unit.lo.x", "unit.hi.x"}, [&](const JitKernel &K) {
    for (int32_t A : {-1, 0, 3, 9, 15, 40, Max})
      for (int32_t B : {std::numeric_limits<int32_t>::min() + 2, -20, -5, 0, 3,
                        10, Max - 20, Max - 7, Max})
        checkGrid(K, {16, 1, 1}, {2, 1, 1}, A, B,
                  [&](uint32_t G, uint32_t) {
                    int32_t Tx = int32_t(G % 16);
                    // b - 3 + tx in i32, wrapping as the kernel does.
                    int32_t X = int32_t(uint32_t(B) - 3u + uint32_t(Tx));
                    return X <= A && Tx >= 2 && Tx <= A;
                  });
  });
}

TEST(LoweringUnitBox, OtherConjunctsStillTested) {
  // `g < a && (g & 1) == b`: the first conjunct narrows the loop, the second
  // is tested per unit inside it.
  const std::string Text = R"(
kernel @boxpart cube_dim(32) (%out: buffer<u32, read_write>, %a: i32, %b: i32) {
  %g = absolute_pos : u32
  %gi = cast %g : i32
  %lt = lt %gi, %a : bool
  %odd = band %gi, 1:i32 : i32
  %eq = eq %odd, %b : bool
  %in = and %eq, %lt : bool
  if %in {
    %v = add %g, 1000:u32 : u32
    store %out[%g], %v
  }
}
)";
  forEachBuild(Text, {"unit.hi.x"}, [](const JitKernel &K) {
    for (int32_t A : {0, 5, 32, 33, 70, 96, 200})
      for (int32_t B : {0, 1})
        checkGrid(K, {32, 1, 1}, {3, 1, 1}, A, B, [&](uint32_t G, uint32_t) {
          return int32_t(G) < A && int32_t(G & 1) == B;
        });
  });
}

TEST(LoweringUnitBox, LinearAbsolutePositionOverATwoDimensionalGrid) {
  // The linear absolute_pos of a 1-D cube spans a 2-D grid of cubes (as
  // runtimes launch long 1-D problems): units are counted row after row of
  // cubes.
  const std::string Text = R"(
kernel @boxlin cube_dim(16) (%out: buffer<u32, read_write>, %a: i32, %b: i32) {
  %g = absolute_pos : u32
  %gi = cast %g : i64
  %a64 = cast %a : i64
  %lim = sub %a64, 1:i64 : i64
  %in = le %gi, %lim : bool
  if %in {
    %v = add %g, 1000:u32 : u32
    store %out[%g], %v
  }
}
)";
  forEachBuild(Text, {"unit.hi.x"}, [](const JitKernel &K) {
    for (int32_t A : {0, 1, 15, 16, 17, 40, 47, 48, 1000})
      for (std::array<uint32_t, 3> Count :
           {std::array<uint32_t, 3>{3, 1, 1}, {1, 3, 1}, {1, 1, 3}}) {
        uint32_t N = 16 * Count[0] * Count[1] * Count[2];
        std::vector<uint32_t> Out(N, 7);
        int32_t AA = A, BB = 0;
        K.launch({buf(Out), val(AA), val(BB)}, Count);
        for (uint32_t G = 0; G < N; ++G)
          ASSERT_EQ(Out[G], int32_t(G) < A ? 1000 + G : 7u)
              << "g " << G << " a " << A;
      }
  });
}

TEST(LoweringUnitBox, EffectsBeforeTheIfRunForEveryUnit) {
  // Pathfinder's loop body: a per-unit variable reset (kept across the
  // barrier), a store for every unit, and a value kept per unit before a
  // boxed `if` that sets the variable; after the barrier every unit reports
  // it. The effects run for every unit, the `if` only in the box.
  const std::string Text = R"(
kernel @boxsplit cube_dim(16) (%out: buffer<u32, read_write>, %a: i32, %b: i32) {
  %done = var u32
  %tu = unit_pos.x : u32
  %tx = cast %tu : i32
  %g = absolute_pos : u32
  %kept = mul %tu, 3:u32 : u32
  for %k = 0:i32 to 2:i32 {
    set %done, 5:u32
    %side = add %g, 100000:u32 : u32
    store %out[%g], %side
    %x = add %tx, %b : i32
    %lo = ge %x, %k : bool
    %hi = lt %x, %a : bool
    %in = and %lo, %hi : bool
    if %in {
      %v = add %g, 1000:u32 : u32
      set %done, %v
    }
    sync_cube
  }
  %d = get %done : u32
  %o = load %out[%g] : u32
  %s0 = add %d, %o : u32
  %s = add %s0, %kept : u32
  store %out[%g], %s
}
)";
  forEachBuild(Text, {"unit.hi.x"}, [](const JitKernel &K) {
    for (int32_t A : {-1, 0, 4, 16, 40})
      for (int32_t B : {-20, -3, 0, 5, 16}) {
        std::vector<uint32_t> Out(32, 7);
        int32_t AA = A, BB = B;
        K.launch({buf(Out), val(AA), val(BB)}, {2, 1, 1});
        for (uint32_t G = 0; G < 32; ++G) {
          int32_t X = int32_t(G % 16) + B;
          // The last step (k = 1) decides.
          uint32_t Done = X >= 1 && X < A ? 1000 + G : 5;
          ASSERT_EQ(Out[G], Done + (G + 100000) + (G % 16) * 3)
              << "g " << G << " a " << A << " b " << B;
        }
      }
  });
}

TEST(LoweringUnitBox, BoxedIfEndingABoxedBodyRunsAsItsOwnNest) {
  // Gaussian elimination's Fan2: inside the box `x < a && y < b`, the lead
  // unit of each column (`y == 1`) updates again what it stored. The lead's
  // `if` runs as a nest of its own over both boxes (one unit per column,
  // none in cubes away from y = 1), after the unit's own store.
  const std::string Text = fan2Kernel("lt %y, %b", R"(    %lead = eq %y, 1:i32 : bool
    if %lead {
      %o = load %out[%g] : u32
      %o2 = add %o, 7:u32 : u32
      store %out[%g], %o2
    }
)");
  forEachBuild(Text, {"unit.lo.y", "unit.hi.y"}, [](const JitKernel &K) {
    for (int32_t A : {0, 3, 8, 17, 24})
      for (int32_t B : {0, 1, 2, 5, 12}) {
        uint32_t W = 24, H = 12;
        std::vector<uint32_t> Out(size_t(W) * H, 7);
        int32_t AA = A, BB = B;
        K.launch({buf(Out), val(AA), val(BB)}, {3, 3, 1});
        for (uint32_t Y = 0; Y < H; ++Y)
          for (uint32_t X = 0; X < W; ++X) {
            bool In = int32_t(X) < A && int32_t(Y) < B;
            uint32_t Want = In ? 1000 + X + 100000 * Y : 7;
            if (In && Y == 1)
              Want += 7;
            ASSERT_EQ(Out[size_t(Y) * W + X], Want)
                << "x " << X << " y " << Y << " a " << A << " b " << B;
          }
      }
  });
}

} // namespace
