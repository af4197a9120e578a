//===- UnitRangeTest.cpp - Unit loops narrowed to the units of a guard ----===//
//
// A segment that is only `if unit + c OP bound` (bound uniform) runs its unit
// loop over the units where the condition holds (docs/Lowering.md §4,
// "Narrowed unit loops"). Each test compares every unit's output with the
// condition evaluated here in the compared type, for bounds on and around
// every edge (0, 1, units - 1, units, above, negative, the type's extremes),
// lt/le/gt/ge/eq in both operand orders, both bounds variants, unoptimised
// and (for 32-bit types) at O3.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include "gtest/gtest.h"

#include <limits>
#include <string>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr uint32_t Units = 24, Cubes = 2;

std::string replaceAll(std::string S, const std::string &From,
                       const std::string &To) {
  for (size_t P = S.find(From); P != std::string::npos;
       P = S.find(From, P + To.size()))
    S.replace(P, From.size(), To);
  return S;
}

/// `%x` is the unit index in T, shifted by OFF (an add, a sub or nothing);
/// the guarded segment sits between two barriers, as in reduce_sum.
std::string kernelText(const std::string &T, const std::string &XDef,
                       const std::string &Pred, bool Swapped) {
  std::string S = R"(
kernel @nr cube_dim(24) (%out: buffer<u32, read_write>, %b: T) {
  %u = unit_pos : u32
  %g0 = absolute_pos : u32
  store %out[%g0], 7:u32
  sync_cube
  XDEF
  %bb = add %b, 0:T : T
  %c = CMP : bool
  if %c {
    %g = absolute_pos : u32
    %v = add %u, 1000:u32 : u32
    store %out[%g], %v
  }
  sync_cube
  %g2 = absolute_pos : u32
  %o = load %out[%g2] : u32
  %o2 = add %o, 1:u32 : u32
  store %out[%g2], %o2
}
)";
  S = replaceAll(S, "XDEF", XDef);
  S = replaceAll(S, "CMP", Pred + (Swapped ? " %bb, %x" : " %x, %bb"));
  S = replaceAll(S, "%b: T", "%b: " + T);
  S = replaceAll(S, " : T\n", " : " + T + "\n");
  return replaceAll(S, ":T", ":" + T);
}

template <class T> bool holds(const std::string &P, T X, T B) {
  if (P == "lt")
    return X < B;
  if (P == "le")
    return X <= B;
  if (P == "gt")
    return X > B;
  if (P == "ge")
    return X >= B;
  return X == B;
}

/// The bounds to try: the edges of the range of unit + Off and of T.
template <class T> std::vector<T> boundsFor(int64_t Off) {
  using L = std::numeric_limits<T>;
  std::vector<T> Out = {L::min(), L::max(), T(L::max() - 1), T(L::min() + 1)};
  for (int64_t E : {int64_t(0), int64_t(Units), Off, Off + int64_t(Units)})
    for (int64_t D = -2; D <= 2; ++D)
      Out.push_back(static_cast<T>(E + D));
  Out.push_back(static_cast<T>(1000));
  Out.push_back(static_cast<T>(-5));
  return Out;
}

/// One kernel per (offset, predicate, order, variant); every bound of
/// boundsFor run through it. \p Narrows: whether the lowering must narrow.
template <class T>
void runAll(const std::string &TName, bool WithO3) {
  struct Shape {
    std::string XDef;
    int64_t Off;
    bool Narrows;
  };
  std::vector<Shape> Shapes = {
      {TName == "u32" ? "%x = unit_pos : u32" : "%x = cast %u : " + TName, 0,
       true},
      {"%x0 = cast %u : " + TName + "\n  %x = add %x0, 3:" + TName + " : " +
           TName,
       3, true},
      {"%x0 = cast %u : " + TName + "\n  %x = add 5:" + TName + ", %x0 : " +
           TName,
       5, true},
      // unit - 2: exact for signed types only (an unsigned one wraps for
      // units 0 and 1 and keeps the plain `if`).
      {"%x0 = cast %u : " + TName + "\n  %x = sub %x0, 2:" + TName + " : " +
           TName,
       -2, std::numeric_limits<T>::is_signed},
  };
  if (TName == "u32") {
    Shapes[1].XDef = "%x = add %u, 3:u32 : u32";
    Shapes[2].XDef = "%x = add 5:u32, %u : u32";
    Shapes[3].XDef = "%x = sub %u, 2:u32 : u32";
  }
  for (const Shape &Sh : Shapes)
    for (const char *P : {"lt", "le", "gt", "ge", "eq"})
      for (bool Swapped : {false, true})
        for (bool Checked : {true, false})
          for (bool O3 : {false, true}) {
            if (O3 && !WithO3)
              continue;
            SCOPED_TRACE(TName + " " + Sh.XDef + " " + P +
                         (Swapped ? " swapped" : "") +
                         (Checked ? " checked" : " unchecked") +
                         (O3 ? " O3" : ""));
            CpuVariant V;
            V.BoundsChecked = Checked;
            V.BufferAlignment = 4; // std::vector's, not 64
            JitKernel K =
                compile(kernelText(TName, Sh.XDef, P, Swapped), V, {}, O3);
            ASSERT_TRUE(K.Fn);
            EXPECT_EQ(K.LLVMIR.find("unit.lo") != std::string::npos ||
                          K.LLVMIR.find("unit.hi") != std::string::npos,
                      Sh.Narrows);
            for (T Bound : boundsFor<T>(Sh.Off)) {
              SCOPED_TRACE("bound " + std::to_string(Bound));
              std::vector<uint32_t> Out(Units * Cubes, 0);
              T BArg = Bound;
              K.launch({buf(Out), val(BArg)}, {Cubes, 1, 1});
              for (uint32_t G = 0; G < Units * Cubes; ++G) {
                uint32_t U = G % Units;
                // Wraps as the kernel does (unit - 2 in an unsigned type).
                T X = static_cast<T>(static_cast<int64_t>(U) + Sh.Off);
                bool In = Swapped ? holds<T>(P, Bound, X)
                                  : holds<T>(P, X, Bound);
                ASSERT_EQ(Out[G], In ? 1001 + U : 8u) << "unit " << G;
              }
            }
          }
}

TEST(LoweringUnitRange, U32) { runAll<uint32_t>("u32", true); }
TEST(LoweringUnitRange, I32) { runAll<int32_t>("i32", true); }
TEST(LoweringUnitRange, U64) { runAll<uint64_t>("u64", false); }
TEST(LoweringUnitRange, I64) { runAll<int64_t>("i64", false); }
TEST(LoweringUnitRange, U8) { runAll<uint8_t>("u8", false); }
TEST(LoweringUnitRange, I16) { runAll<int16_t>("i16", false); }

/// With return flags the bound is read from the first unit still running: a
/// uniform value kept in a per-unit slot, junk for the units that returned
/// before it was defined.
TEST(LoweringUnitRange, BoundFromSlotWithReturnedUnits) {
  const char *Text = R"(
kernel @nrf cube_dim(24) (%out: buffer<u32, read_write>, %bs: buffer<u32, read>,
                          %r: u32) {
  %u = unit_pos : u32
  %g0 = absolute_pos : u32
  store %out[%g0], 7:u32
  %early = lt %u, %r : bool
  if %early {
    return
  }
  %bl = load %bs[0:u32] : u32
  sync_cube
  %c = lt %u, %bl : bool
  if %c {
    %g = absolute_pos : u32
    %v = add %u, 1000:u32 : u32
    store %out[%g], %v
  }
}
)";
  for (bool Checked : {true, false})
    for (bool O3 : {false, true}) {
      CpuVariant V;
      V.BoundsChecked = Checked;
      V.BufferAlignment = 4; // std::vector's, not 64
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      EXPECT_NE(K.LLVMIR.find("unit.hi"), std::string::npos);
      for (uint32_t R : {0u, 1u, 5u, 23u, 24u, 30u})
        for (uint32_t Bound : {0u, 3u, 10u, 24u, 100u, 0xffffffffu}) {
          SCOPED_TRACE("r " + std::to_string(R) + " bound " +
                       std::to_string(Bound));
          std::vector<uint32_t> Out(Units * Cubes, 0), Bs = {Bound};
          uint32_t RArg = R;
          K.launch({buf(Out), buf(Bs), val(RArg)}, {Cubes, 1, 1});
          for (uint32_t G = 0; G < Units * Cubes; ++G) {
            uint32_t U = G % Units;
            uint32_t Want = U < R ? 7 : (U < Bound ? 1000 + U : 7);
            ASSERT_EQ(Out[G], Want) << "unit " << G;
          }
        }
    }
}

/// `(unit + c) % m == r` (unit_pos_plane, `rem` or `band` by a literal) runs
/// every m-th unit from the first that passes; r out of [0, m) runs none.
TEST(LoweringUnitRange, Modular) {
  struct Shape {
    const char *T;
    const char *XDef;
    int64_t M, Off;
    bool Narrows;
  };
  const Shape Shapes[] = {
      {"u32", "%x = unit_pos_plane : u32", 8, 0, true},
      {"u32", "%x = rem %u, 5:u32 : u32", 5, 0, true},
      {"u32", "%x0 = add %u, 3:u32 : u32\n  %x = rem %x0, 7:u32 : u32", 7, 3,
       true},
      {"u32", "%x = band %u, 3:u32 : u32", 4, 0, true},
      {"u32", "%x0 = add %u, 6:u32 : u32\n  %x = band 7:u32, %x0 : u32", 8, 6,
       true},
      {"i32", "%x0 = cast %u : i32\n  %x = rem %x0, 6:i32 : i32", 6, 0, true},
      {"u64", "%x0 = cast %u : u64\n  %x = rem %x0, 32:u64 : u64", 32, 0,
       true},
      {"u8", "%x0 = cast %u : u8\n  %x = band %x0, 1:u8 : u8", 2, 0, true},
      // Not narrowed: unit - 2 may be negative (and `rem` keeps its sign),
      // m = 1 is left alone, 6 is no mask.
      {"i32", "%x0 = cast %u : i32\n  %x1 = sub %x0, 2:i32 : i32\n"
              "  %x = rem %x1, 4:i32 : i32",
       4, -2, false},
      {"u32", "%x = rem %u, 1:u32 : u32", 1, 0, false},
      {"u32", "%x = band %u, 6:u32 : u32", 0, 0, false},
  };
  for (const Shape &Sh : Shapes)
    for (bool Swapped : {false, true})
      for (bool Checked : {true, false})
        for (bool O3 : {false, true}) {
          SCOPED_TRACE(std::string(Sh.XDef) + (Swapped ? " swapped" : "") +
                       (Checked ? " checked" : " unchecked") +
                       (O3 ? " O3" : ""));
          std::string Text = kernelText(Sh.T, Sh.XDef, "eq", Swapped);
          CpuVariant V;
          V.BoundsChecked = Checked;
          V.BufferAlignment = 4; // std::vector's, not 64
          DeviceLimits L;
          L.PlaneDim = 8; // three planes of a 24-unit cube
          JitKernel K = compile(Text, V, L, O3);
          ASSERT_TRUE(K.Fn);
          if (!O3) {
            EXPECT_EQ(K.LLVMIR.find("unit.lo") != std::string::npos,
                      Sh.Narrows);
          }
          for (int64_t Bound : {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 31, 32, 1000}) {
            SCOPED_TRACE("bound " + std::to_string(Bound));
            std::vector<uint32_t> Out(Units * Cubes, 0);
            uint64_t B64 = static_cast<uint64_t>(Bound);
            uint32_t B32 = static_cast<uint32_t>(Bound);
            uint8_t B8 = static_cast<uint8_t>(Bound);
            std::string T = Sh.T;
            KernelArg A = T == "u64" ? val(B64) : T == "u8" ? val(B8) : val(B32);
            K.launch({buf(Out), A}, {Cubes, 1, 1});
            for (uint32_t G = 0; G < Units * Cubes; ++G) {
              uint32_t U = G % Units;
              // C's `%` keeps the dividend's sign, as `rem` does.
              int64_t X = Sh.M ? (int64_t(U) + Sh.Off) % Sh.M : int64_t(U & 6);
              // The bound as the compared type reads it.
              int64_t B = T == "u8"    ? int64_t(B8)
                          : T == "i32" ? int64_t(int32_t(B32))
                          : T == "u32" ? int64_t(B32)
                                       : Bound;
              bool In = X == B;
              ASSERT_EQ(Out[G], In ? 1001 + U : 8u) << "unit " << G;
            }
          }
        }
}

/// `(unit + c) rem m == r` with m a uniform value runs every |m|-th unit
/// (m read as its type reads it; by 0 the remainder is 0, as by 1), from
/// the first that passes, with a step computed per cube.
template <class T> void runUniformModulus(const std::string &TName) {
  std::string Text = replaceAll(R"(
kernel @um cube_dim(24) (%out: buffer<u32, read_write>, %b: T, %m: T) {
  %u = unit_pos : u32
  %g0 = absolute_pos : u32
  store %out[%g0], 7:u32
  sync_cube
  %x0 = cast %u : T
  %x = add %x0, 2:T : T
  %r = rem %x, %m : T
  %c = eq %r, %b : bool
  if %c {
    %g = absolute_pos : u32
    %v = add %u, 1000:u32 : u32
    store %out[%g], %v
  }
}
)",
                                ":T", ":" + TName);
  Text = replaceAll(Text, ": T", ": " + TName);
  using L = std::numeric_limits<T>;
  std::vector<T> Ms = {0, 1, 2, 3, 5, 23, 24, 25, 26, 1000, L::max(),
                       static_cast<T>(-1), static_cast<T>(-3), L::min()};
  std::vector<T> Bs = {0, 1, 2, 4, 25, static_cast<T>(-1), L::max()};
  for (bool Checked : {true, false})
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(TName + (Checked ? " checked" : " unchecked") +
                   (O3 ? " O3" : ""));
      CpuVariant V;
      V.BoundsChecked = Checked;
      V.BufferAlignment = 4; // std::vector's, not 64
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      if (!O3)
        EXPECT_NE(K.LLVMIR.find("unit.step"), std::string::npos);
      for (T M : Ms)
        for (T B : Bs) {
          SCOPED_TRACE("m " + std::to_string(int64_t(M)) + " b " +
                       std::to_string(int64_t(B)));
          std::vector<uint32_t> Out(Units * Cubes, 0);
          T MArg = M, BArg = B;
          K.launch({buf(Out), val(BArg), val(MArg)}, {Cubes, 1, 1});
          for (uint32_t G = 0; G < Units * Cubes; ++G) {
            uint32_t U = G % Units;
            T X = static_cast<T>(U + 2);
            // rem as LangRef defines it: by 0 it is 0; C's `%` otherwise
            // (x >= 0, so min / -1 never arises).
            T R = M == 0 ? T(0) : static_cast<T>(X % M);
            ASSERT_EQ(Out[G], R == B ? 1000 + U : 7u) << "unit " << G;
          }
        }
    }
}

TEST(LoweringUnitRange, UniformModulusU32) {
  runUniformModulus<uint32_t>("u32");
}
TEST(LoweringUnitRange, UniformModulusI32) {
  runUniformModulus<int32_t>("i32");
}
TEST(LoweringUnitRange, UniformModulusI64) {
  runUniformModulus<int64_t>("i64");
}

/// A tree reduction written as Rodinia's srad writes it: a cube-level loop
/// whose step doubles (a var read by every unit), left by a uniform
/// `break`, and `if (unit + 1) % step == 0` adding the partner's partial
/// sum. The loop's test and break run for every unit in a loop of their
/// own; the `if` then runs every step-th unit.
TEST(LoweringUnitRange, SteppedAfterUniformBreak) {
  const char *Text = R"(
kernel @tree cube_dim(24) (%data: buffer<u32, read_write>, %top: i32) {
  %p = shared u32[24]
  %u = unit_pos : u32
  %g = absolute_pos : u32
  %t = cast %u : i32
  %t1 = add %t, 1:i32 : i32
  %v = load %data[%g] : u32
  store %p[%u], %v
  sync_cube
  %i = var i32
  set %i, 2:i32
  loop {
    %iv = get %i : i32
    %done = gt %iv, %top : bool
    if %done {
      break
    }
    %r = rem %t1, %iv : i32
    %every = eq %r, 0:i32 : bool
    if %every {
      %half = div %iv, 2:i32 : i32
      %o = sub %t, %half : i32
      %a = load %p[%u] : u32
      %b = load %p[%o] : u32
      %s = add %a, %b : u32
      store %p[%u], %s
    }
    sync_cube
    %next = mul %iv, 2:i32 : i32
    set %i, %next
  }
  %w = load %p[%u] : u32
  store %data[%g], %w
}
)";
  for (bool Checked : {true, false})
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(std::string(Checked ? "checked" : "unchecked") +
                   (O3 ? " O3" : ""));
      CpuVariant V;
      V.BoundsChecked = Checked;
      V.BufferAlignment = 4;
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      if (!O3)
        EXPECT_NE(K.LLVMIR.find("unit.step"), std::string::npos);
      for (int32_t Top : {1, 2, 8, 16, 24, 32, 1000}) {
        SCOPED_TRACE("top " + std::to_string(Top));
        std::vector<uint32_t> Data(Units * Cubes);
        for (uint32_t G = 0; G < Data.size(); ++G)
          Data[G] = G * 7 + 1;
        std::vector<uint32_t> Want = Data;
        for (uint32_t C = 0; C < Cubes; ++C) {
          uint32_t *P = Want.data() + C * Units;
          for (int32_t I = 2; I <= Top; I *= 2) {
            std::vector<uint32_t> Before(P, P + Units);
            for (int32_t T = 0; T < int32_t(Units); ++T)
              if ((T + 1) % I == 0)
                P[T] = Before[T] + Before[T - I / 2];
          }
        }
        int32_t TopArg = Top;
        K.launch({buf(Data), val(TopArg)}, {Cubes, 1, 1});
        for (uint32_t G = 0; G < Data.size(); ++G)
          ASSERT_EQ(Data[G], Want[G]) << "element " << G;
      }
    }
}

/// Multi-dimensional cubes and divergent bounds keep the plain `if`.
TEST(LoweringUnitRange, NotNarrowed) {
  const char *TwoD = R"(
kernel @two cube_dim(4, 4) (%out: buffer<u32, write>, %b: u32) {
  %u = unit_pos : u32
  %c = lt %u, %b : bool
  if %c {
    store %out[%u], 1:u32
  }
}
)";
  const char *Divergent = R"(
kernel @div cube_dim(16) (%out: buffer<u32, write>, %bs: buffer<u32, read>) {
  %u = unit_pos : u32
  %b = load %bs[%u] : u32
  %c = lt %u, %b : bool
  if %c {
    store %out[%u], 1:u32
  }
}
)";
  for (const char *Text : {TwoD, Divergent}) {
    JitKernel K = compile(Text);
    ASSERT_TRUE(K.Fn);
    EXPECT_EQ(K.LLVMIR.find("unit.hi"), std::string::npos);
    EXPECT_EQ(K.LLVMIR.find("unit.lo"), std::string::npos);
  }
}

} // namespace
