//===- InterchangeTest.cpp - Per-unit for loops run as rounds over units --===//
//
// A per-unit `for` with a per-unit lower bound and a uniform upper bound and
// step runs interchanged (rounds outside, units inside; docs/Lowering.md
// §4). Each test compares every unit's trip count and accumulated state with
// a plain per-unit loop computed here, unoptimised and at O3, in both
// bounds variants.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include "gtest/gtest.h"

#include <limits>
#include <type_traits>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr uint32_t UnitsPerCube = 16, Cubes = 2,
                   AllUnits = UnitsPerCube * Cubes;

/// The loop both kernels run from their lower bound %l (of type T): %w is
/// defined before the loop and used inside and after it, and the loop
/// accumulates into two vars; unit %g's results go to %acc and %cnt.
const char *LoopAndStores = R"(
  %w = add %l, 3:T : T
  %s = var T
  set %s, %w
  %c = var u32
  set %c, 0:u32
  for %i = %l to %hi step %st {
    %a = get %s : T
    %x = bxor %i, %w : T
    %y = add %a, %x : T
    set %s, %y
    %cc = get %c : u32
    %c1 = add %cc, 1:u32 : u32
    set %c, %c1
  }
  %r = get %s : T
  %r2 = add %r, %w : T
  store %acc[%g], %r2
  %cv = get %c : u32
  store %cnt[%g], %cv
}
)";

/// \p Text with every T replaced by the type \p T.
std::string withType(const std::string &Text, const char *T) {
  std::string Out;
  for (char Ch : Text)
    Out += Ch == 'T' ? std::string(T) : std::string(1, Ch);
  return Out;
}

/// The kernel: each unit loads its lower bound, then LoopAndStores.
std::string kernelText(const char *T) {
  return withType(std::string(R"(
kernel @xc cube_dim(8, 2) (%lo: buffer<T, read>, %acc: buffer<T, write>,
                           %cnt: buffer<u32, write>, %hi: T, %st: T) {
  %u = unit_pos : u32
  %c0 = cube_pos : u32
  %cb = mul %c0, 16:u32 : u32
  %g = add %cb, %u : u32
  %l = load %lo[%g] : T)") +
                      LoopAndStores,
                  T);
}

template <class T> T wrapAdd(T A, T B) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(A) + static_cast<U>(B)));
}

/// The per-unit loop of docs/LangRef.md §5: k = lo, lo+st, ... while k < hi, no
/// iteration for a step that is not positive, and an end instead of a wrap.
template <class T> void reference(T Lo, T Hi, T St, T &Acc, uint32_t &Cnt) {
  T W = wrapAdd(Lo, T(3));
  Acc = W;
  Cnt = 0;
  if (St > T(0))
    for (__int128 Kk = Lo; Kk < static_cast<__int128>(Hi); Kk += St) {
      Acc = wrapAdd(Acc, static_cast<T>(static_cast<T>(Kk) ^ W));
      ++Cnt;
    }
  Acc = wrapAdd(Acc, W);
}

template <class T> T clampTo(__int128 V) {
  __int128 Min = std::numeric_limits<T>::min();
  __int128 Max = std::numeric_limits<T>::max();
  return static_cast<T>(V < Min ? Min : V > Max ? Max : V);
}

/// Every unit's count and accumulator against the reference loop from its
/// lower bound \p Lo.
template <class T>
void expectUnits(const std::vector<T> &Lo, T Hi, T St,
                 const std::vector<T> &Acc, const std::vector<uint32_t> &Cnt) {
  for (uint32_t I = 0; I < AllUnits; ++I) {
    T WantAcc;
    uint32_t WantCnt;
    reference(Lo[I], Hi, St, WantAcc, WantCnt);
    ASSERT_EQ(Cnt[I], WantCnt)
        << "unit " << I << " lo " << int64_t(Lo[I]) << " hi " << int64_t(Hi)
        << " step " << int64_t(St);
    ASSERT_EQ(Acc[I], WantAcc)
        << "unit " << I << " lo " << int64_t(Lo[I]) << " hi " << int64_t(Hi)
        << " step " << int64_t(St);
  }
}

template <class T> void runType(const char *Name) {
  using Lim = std::numeric_limits<T>;
  __int128 Min = Lim::min(), Max = Lim::max();
  std::vector<__int128> His = {Min + 5, Min + 120, Max / 2, Max - 1, Max};
  if (Lim::is_signed)
    His.push_back(0);
  std::vector<__int128> Steps = {0, 1, 7, 64, Max / 3, Max};
  if (Lim::is_signed) {
    Steps.push_back(-1);
    Steps.push_back(Min);
  }
  std::string Text = kernelText(Name);
  for (bool Checked : {true, false}) {
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(std::string(Name) + (Checked ? " checked" : " unchecked") +
                   (O3 ? " O3" : " O0"));
      CpuVariant V;
      V.BoundsChecked = Checked;
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      EXPECT_NE(K.LLVMIR.find("xfor.round"), std::string::npos)
          << "the loop was not interchanged";
      for (__int128 HiW : His) {
        for (__int128 StW : Steps) {
          T Hi = static_cast<T>(HiW), St = static_cast<T>(StW);
          // At most ~300 iterations a unit: lower bounds from hi - 300 on,
          // some at or above hi (no iteration).
          std::vector<T> Lo(AllUnits);
          for (uint32_t I = 0; I < AllUnits; ++I)
            Lo[I] = clampTo<T>(HiW - 300 + __int128((I * 37) % 331));
          // Units 0 and 31 never run: the rounds must follow the smallest
          // lower bound, not unit 0's.
          Lo[0] = Lo[AllUnits - 1] = static_cast<T>(Max);
          Lo[3] = Hi;
          std::vector<T> Acc(AllUnits, T(0x5a));
          std::vector<uint32_t> Cnt(AllUnits, 0xdeadbeef);
          K.launch({buf(Lo), buf(Acc), buf(Cnt), val(Hi), val(St)},
                   {Cubes, 1, 1});
          ASSERT_NO_FATAL_FAILURE(expectUnits(Lo, Hi, St, Acc, Cnt));
        }
      }
    }
  }
}

TEST(LoweringInterchange, U8) { runType<uint8_t>("u8"); }
TEST(LoweringInterchange, I32) { runType<int32_t>("i32"); }
TEST(LoweringInterchange, U32) { runType<uint32_t>("u32"); }
TEST(LoweringInterchange, I64) { runType<int64_t>("i64"); }
TEST(LoweringInterchange, U64) { runType<uint64_t>("u64"); }

/// Grid-stride lower bounds (base + unit), so that every round but the last
/// ones has all units in range and runs the copy without the range test
/// (xfor.full); \p Hi is put on and around each round's edge.
template <class T> void runFullRounds(const char *Name) {
  using Lim = std::numeric_limits<T>;
  std::string Text = kernelText(Name);
  std::vector<__int128> Bases = {0, 5, __int128(Lim::max()) - 200};
  if (Lim::is_signed)
    Bases.push_back(__int128(Lim::min()));
  for (bool O3 : {false, true}) {
    SCOPED_TRACE(std::string(Name) + (O3 ? " O3" : " O0"));
    JitKernel K = compile(Text, {}, {}, O3);
    ASSERT_TRUE(K.Fn);
    EXPECT_NE(K.LLVMIR.find("xfor.full"), std::string::npos)
        << "no round without the range test";
    for (__int128 Base : Bases) {
      for (__int128 Step : {__int128(AllUnits), __int128(AllUnits - 3)}) {
        for (__int128 Rel : {0, 1, 31, 32, 33, 64, 95, 96, 97, 150}) {
          T Hi = clampTo<T>(Base + Rel), St = static_cast<T>(Step);
          std::vector<T> Lo(AllUnits);
          for (uint32_t I = 0; I < AllUnits; ++I)
            Lo[I] = static_cast<T>(Base + I);
          std::vector<T> Acc(AllUnits, T(0x5a));
          std::vector<uint32_t> Cnt(AllUnits, 0xdeadbeef);
          K.launch({buf(Lo), buf(Acc), buf(Cnt), val(Hi), val(St)},
                   {Cubes, 1, 1});
          ASSERT_NO_FATAL_FAILURE(expectUnits(Lo, Hi, St, Acc, Cnt));
        }
      }
    }
  }
}

TEST(LoweringInterchange, FullRoundsU8) { runFullRounds<uint8_t>("u8"); }
TEST(LoweringInterchange, FullRoundsI32) { runFullRounds<int32_t>("i32"); }
TEST(LoweringInterchange, FullRoundsU64) { runFullRounds<uint64_t>("u64"); }

/// A one-dimensional cube whose lower bound is `unit + c` (softmax_rows'
/// `for %j = %lid to %ncols step 256`): each round runs its unit loop over
/// the prefix of units in range, with no per-unit range test and no min/max
/// of the lower bounds (docs/Lowering.md §4, "Unit-stride lower bounds").
/// \p C is the literal added to the unit; hi and the step are put on and
/// around each round's edge, steps below the unit count included.
template <class T> void runUnitStride(const char *Name, int64_t C) {
  using Lim = std::numeric_limits<T>;
  constexpr uint32_t Units = 16;
  std::string Text = R"(
kernel @us cube_dim(16) (%acc: buffer<T, write>, %cnt: buffer<u32, write>,
                         %hi: T, %st: T) {
  %u32 = unit_pos : u32
  %u = cast %u32 : T
  %l = OFFSET
  %c0 = cube_pos : u32
  %cb = mul %c0, 16:u32 : u32
  %g = add %cb, %u32 : u32)";
  Text += LoopAndStores;
  Text.replace(Text.find("OFFSET"), 6,
               std::string(C < 0 ? "sub" : "add") + " %u, " +
                   std::to_string(C < 0 ? -C : C) + ":T : T");
  Text = withType(Text, Name);
  __int128 Min = Lim::min(), Max = Lim::max();
  std::vector<__int128> Steps = {0, 1, 3, Units, Units + 5, 100, Max};
  if (Lim::is_signed)
    Steps.push_back(-2);
  std::vector<__int128> His;
  for (__int128 Rel : {-5, 0, 1, 2, 15, 16, 17, 31, 32, 33, 48, 200})
    if (C + Rel >= Min && C + Rel <= Max)
      His.push_back(C + Rel);
  His.push_back(Max);
  for (bool Checked : {true, false}) {
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(std::string(Name) + " c " + std::to_string(C) +
                   (Checked ? " checked" : " unchecked") +
                   (O3 ? " O3" : " O0"));
      CpuVariant V;
      V.BoundsChecked = Checked;
      // std::vector's storage is not 64-byte aligned; the one-dimensional
      // cube's stores are vectorised.
      V.BufferAlignment = 1;
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      EXPECT_NE(K.LLVMIR.find("xfor.round"), std::string::npos);
      EXPECT_EQ(K.LLVMIR.find("xfor.partial"), std::string::npos)
          << "a unit-stride round has no partial copy";
      for (__int128 HiW : His) {
        for (__int128 StW : Steps) {
          T Hi = static_cast<T>(HiW), St = static_cast<T>(StW);
          // Units * 200 / step rounds at most: skip the long ones.
          if (StW > 0 && (HiW - C) / StW > 400)
            continue;
          std::vector<T> Acc(AllUnits, T(0x5a));
          std::vector<uint32_t> Cnt(AllUnits, 0xdeadbeef);
          K.launch({buf(Acc), buf(Cnt), val(Hi), val(St)}, {Cubes, 1, 1});
          std::vector<T> Lo(AllUnits);
          for (uint32_t I = 0; I < AllUnits; ++I)
            Lo[I] = static_cast<T>(__int128(I % Units) + C);
          ASSERT_NO_FATAL_FAILURE(expectUnits(Lo, Hi, St, Acc, Cnt));
        }
      }
    }
  }
}

TEST(LoweringInterchange, UnitStrideU8) {
  runUnitStride<uint8_t>("u8", 0);
  runUnitStride<uint8_t>("u8", 239); // the last unit's bound is 254
}
TEST(LoweringInterchange, UnitStrideI32) {
  runUnitStride<int32_t>("i32", -20);
  runUnitStride<int32_t>("i32", 2147483647 - 15);
}
TEST(LoweringInterchange, UnitStrideU32) { runUnitStride<uint32_t>("u32", 7); }
TEST(LoweringInterchange, UnitStrideI64) {
  runUnitStride<int64_t>("i64", -(int64_t(1) << 39));
}
TEST(LoweringInterchange, UnitStrideU64) { runUnitStride<uint64_t>("u64", 0); }

/// hist_local's shape: bins in shared memory between two barriers and a
/// grid-stride loop over the data, whose bounds and header are \p Loop
/// (%n of type \p NType).
std::string histKernel(const char *NType, const std::string &Loop) {
  return std::string(R"(
kernel @hist cube_dim(64) (%data: buffer<u32, read>,
                           %bins: buffer<u32, read_write>, %n: )") +
         NType + R"() {
  %lh = shared u32[64]
  %lid = unit_pos : u32
  store %lh[%lid], 0:u32
  sync_cube
  %gid = absolute_pos : u32
  %cubes = cube_count.x : u32
  %stride = mul %cubes, 64:u32 : u32)" +
         Loop + R"(
    %v = load %data[%i] : u32
    %old = atomic_add %lh[%v], 1:u32 : u32
  }
  sync_cube
  %h = load %lh[%lid] : u32
  %prev = atomic_add %bins[%lid], %h : u32
}
)";
}

/// Runs \p K on \p Cubes cubes over the first \p N of \p DataSize values
/// and compares the bins with a count made here.
void expectHistogram(const JitKernel &K, uint32_t N, size_t DataSize,
                     uint32_t Cubes) {
  std::vector<uint32_t> Data(DataSize);
  for (uint32_t I = 0; I < Data.size(); ++I)
    Data[I] = (I * 2654435761u) >> 26;
  std::vector<uint32_t> Bins(64, 0), Want(64, 0);
  for (uint32_t I = 0; I < N; ++I)
    ++Want[Data[I]];
  K.launch({buf(Data), buf(Bins), {&N, 1}}, {Cubes, 1, 1});
  EXPECT_EQ(Bins, Want) << "n = " << N;
}

// Between barriers, with a shared array and the kernel's grid-stride shape
// (hist_local): the loop is its own segment, the barriers stay where they are.
TEST(LoweringInterchange, GridStrideBetweenBarriers) {
  std::string Text = histKernel("u32", R"(
  for %i = %gid to %n step %stride {)");
  for (bool O3 : {false, true}) {
    JitKernel K = compile(Text, {}, {}, O3);
    ASSERT_TRUE(K.Fn);
    EXPECT_NE(K.LLVMIR.find("xfor.round"), std::string::npos);
    for (uint32_t N : {0u, 1u, 63u, 1000u, 5000u})
      expectHistogram(K, N, 5000, 3);
  }
}

// The same with rounds a grid (20 cubes of 64 elements: 5 KiB) apart, so
// that each round prefetches the one two ahead, and loads at the loop
// variable through its 64-bit round sum (docs/Lowering.md §4, §13 fix 6):
// the prefetches reach past the end of the data, which is exactly n elements
// long, and past hi; the bins stay exact in both variants, with a u32 and
// an i32 loop variable.
TEST(LoweringInterchange, GridStridePrefetchKeepsBinsExact) {
  for (const char *T : {"u32", "i32"}) {
    std::string Src = histKernel(T, std::string("\n  %lo = cast %gid : ") + T +
                                        "\n  %st = cast %stride : " + T +
                                        "\n  for %i = %lo to %n step %st {");
    for (bool Checked : {true, false}) {
      for (bool O3 : {false, true}) {
        SCOPED_TRACE(std::string(T) + (Checked ? " checked" : " unchecked") +
                     (O3 ? " O3" : " O0"));
        CpuVariant V;
        V.BoundsChecked = Checked;
        JitKernel K = compile(Src, V, {}, O3);
        ASSERT_TRUE(K.Fn);
        EXPECT_NE(K.LLVMIR.find("xfor.prefetch"), std::string::npos);
        for (uint32_t N : {1u, 1279u, 1280u, 1281u, 3900u, 40000u})
          expectHistogram(K, N, N, 20);
      }
    }
  }
}

// A uniform lower bound (matmul's k loop) and a loop with a break that leaves
// it stay per unit.
TEST(LoweringInterchange, OnlyPerUnitLowerBoundsWithoutEarlyExits) {
  const char *Uniform = R"(
kernel @u cube_dim(32) (%o: buffer<u32, write>, %n: u32) {
  %u = unit_pos : u32
  %s = var u32
  set %s, 0:u32
  for %k = 0:u32 to %n {
    %a = get %s : u32
    %b = add %a, %k : u32
    set %s, %b
  }
  %r = get %s : u32
  store %o[%u], %r
}
)";
  const char *Break = R"(
kernel @b cube_dim(32) (%o: buffer<u32, write>, %n: u32) {
  %u = unit_pos : u32
  %s = var u32
  set %s, 0:u32
  for %k = %u to %n {
    %a = get %s : u32
    %b = add %a, %k : u32
    set %s, %b
    %big = gt %b, 100:u32 : bool
    if %big {
      break
    }
  }
  %r = get %s : u32
  store %o[%u], %r
}
)";
  JitKernel U = compile(Uniform);
  ASSERT_TRUE(U.Fn);
  EXPECT_EQ(U.LLVMIR.find("xfor.round"), std::string::npos);
  JitKernel Br = compile(Break);
  ASSERT_TRUE(Br.Fn);
  EXPECT_EQ(Br.LLVMIR.find("xfor.round"), std::string::npos);
  uint32_t N = 40;
  std::vector<uint32_t> O(32);
  Br.launch({buf(O), val(N)}, {1, 1, 1});
  for (uint32_t I = 0; I < 32; ++I) {
    uint32_t S = 0;
    for (uint32_t Kk = I; Kk < N; ++Kk) {
      S += Kk;
      if (S > 100)
        break;
    }
    EXPECT_EQ(O[I], S) << "unit " << I;
  }
}

// A per-unit `for` with a uniform lower bound and step whose upper bound is
// `unit + c` or plane_pos, and whose body every unit runs alike in a round
// (loads at an index computed from the loop variable alone), runs as rounds
// over the suffix of units still in range (docs/Lowering.md §4, "Per-unit
// upper bounds"). Each unit's trip count and accumulator against a plain
// per-unit loop, both variants, unoptimised and at O3.
template <class T> void runUpperBound(const char *Name, int64_t C) {
  std::string Text = withType(R"(
kernel @ub cube_dim(16) (%tab: buffer<T, read>, %acc: buffer<T, write>,
                         %cnt: buffer<u32, write>, %lo: T, %st: T) {
  %u = unit_pos : u32
  %c0 = cube_pos : u32
  %cb = mul %c0, 16:u32 : u32
  %g = add %cb, %u : u32
  %ut = cast %u : T
  %hi = add %ut, OFF:T : T
  %s = var T
  set %s, 0:T
  %n = var u32
  set %n, 0:u32
  for %i = %lo to %hi step %st {
    %m = band %i, 63:T : T
    %ix = cast %m : u32
    %x = load %tab[%ix] : T
    %a = get %s : T
    %y = add %a, %x : T
    %z = bxor %y, %i : T
    set %s, %z
    %nn = get %n : u32
    %n1 = add %nn, 1:u32 : u32
    set %n, %n1
  }
  %r = get %s : T
  store %acc[%g], %r
  %rn = get %n : u32
  store %cnt[%g], %rn
}
)",
                              Name);
  std::string Off = std::to_string(C);
  Text.replace(Text.find("OFF"), 3, Off);
  using Lim = std::numeric_limits<T>;
  std::vector<T> Tab(64);
  for (unsigned I = 0; I < 64; ++I)
    Tab[I] = static_cast<T>(I * 29 + 7);
  // Lower bounds around the offset: at most a few dozen iterations a unit
  // (below it in an unsigned type wraps to a bound past every unit's).
  std::vector<__int128> Los;
  for (int D : {-40, -9, -1, 0, 1, 3, 9, 15, 40})
    if (__int128(C) + D <= __int128(Lim::max()))
      Los.push_back(C + D);
  std::vector<__int128> Steps = {1, 2, 5, 0, Lim::max()};
  if (Lim::is_signed)
    Steps.push_back(-1);
  for (bool Checked : {true, false}) {
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(std::string(Name) + " offset " + Off +
                   (Checked ? " checked" : " unchecked") +
                   (O3 ? " O3" : " O0"));
      CpuVariant V;
      V.BoundsChecked = Checked;
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      EXPECT_NE(K.LLVMIR.find("unit.suffix"), std::string::npos)
          << "the loop did not run as rounds by its upper bound";
      for (__int128 LoW : Los)
        for (__int128 StW : Steps) {
          T Lo = static_cast<T>(LoW), St = static_cast<T>(StW);
          std::vector<T> Acc(AllUnits, T(0x5a));
          std::vector<uint32_t> Cnt(AllUnits, 0xdeadbeef);
          K.launch({buf(Tab), buf(Acc), buf(Cnt), val(Lo), val(St)},
                   {Cubes, 1, 1});
          for (uint32_t G = 0; G < AllUnits; ++G) {
            __int128 Hi = __int128(G % UnitsPerCube) + C;
            T S = 0;
            uint32_t N = 0;
            if (St > T(0))
              for (__int128 Kk = Lo; Kk < Hi; Kk += St) {
                T Kt = static_cast<T>(Kk);
                S = static_cast<T>(wrapAdd(S, Tab[unsigned(Kt & T(63))]) ^ Kt);
                ++N;
              }
            ASSERT_EQ(Cnt[G], N) << "unit " << G << " lo " << int64_t(Lo)
                                 << " step " << int64_t(St);
            ASSERT_EQ(Acc[G], S) << "unit " << G << " lo " << int64_t(Lo)
                                 << " step " << int64_t(St);
          }
        }
    }
  }
}

TEST(LoweringInterchange, UpperBoundUnitOffsetU8) {
  runUpperBound<uint8_t>("u8", 0);
  runUpperBound<uint8_t>("u8", 200);
}
TEST(LoweringInterchange, UpperBoundUnitOffsetI32) {
  runUpperBound<int32_t>("i32", 0);
  runUpperBound<int32_t>("i32", -6);
  runUpperBound<int32_t>("i32", 2147483632);
}
TEST(LoweringInterchange, UpperBoundUnitOffsetU32) {
  runUpperBound<uint32_t>("u32", 3);
}

// scan_plane's loop: every unit adds the totals of the planes before its
// own, `for %p = %lo to %plane step %st` reading shared memory.
void runPlanePos(uint32_t Units) {
  std::string Text = R"(
kernel @pp cube_dim(UNITS) (%in: buffer<u32, read>, %out: buffer<u32, write>,
                          %lo: u32, %st: u32) {
  %tot = shared u32[4]
  %u = unit_pos : u32
  %p = plane_pos : u32
  %c0 = cube_pos : u32
  %cb = mul %c0, UNITS:u32 : u32
  %g = add %cb, %u : u32
  %first = unit_pos_plane : u32
  %lead = eq %first, 0:u32 : bool
  if %lead {
    %c4 = mul %c0, 4:u32 : u32
    %ti = add %c4, %p : u32
    %t = load %in[%ti] : u32
    store %tot[%p], %t
  }
  sync_cube
  %s = var u32
  set %s, 1:u32
  for %q = %lo to %p step %st {
    %v = load %tot[%q] : u32
    %a = get %s : u32
    %m = mul %a, 3:u32 : u32
    %b = add %m, %v : u32
    set %s, %b
  }
  %r = get %s : u32
  store %out[%g], %r
}
)";
  for (size_t At; (At = Text.find("UNITS")) != std::string::npos;)
    Text.replace(At, 5, std::to_string(Units));
  constexpr uint32_t CubesP = 3;
  std::vector<uint32_t> In(4 * CubesP);
  for (uint32_t I = 0; I < In.size(); ++I)
    In[I] = I * 1000003u + 17;
  for (bool Checked : {true, false}) {
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(std::to_string(Units) + " units, " +
                   (Checked ? "checked" : "unchecked") + (O3 ? " O3" : " O0"));
      CpuVariant V;
      V.BoundsChecked = Checked;
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_TRUE(K.Fn);
      EXPECT_NE(K.LLVMIR.find("unit.suffix"), std::string::npos);
      for (uint32_t Lo : {0u, 1u, 2u, 3u, 9u})
        for (uint32_t St : {1u, 2u, 0u, 4294967295u}) {
          std::vector<uint32_t> Out(Units * CubesP, 0xdeadbeef);
          K.launch({buf(In), buf(Out), val(Lo), val(St)}, {CubesP, 1, 1});
          for (uint32_t G = 0; G < Units * CubesP; ++G) {
            uint32_t Cube = G / Units, P = (G % Units) / 32, S = 1;
            if (St != 0)
              for (uint64_t Q = Lo; Q < P; Q += St)
                S = S * 3 + In[Cube * 4 + Q];
            ASSERT_EQ(Out[G], S)
                << "unit " << G << " lo " << Lo << " step " << St;
          }
        }
    }
  }
}

// A whole number of planes, and a last plane of 4 units.
TEST(LoweringInterchange, UpperBoundPlanePos) {
  runPlanePos(128);
  runPlanePos(100);
}

// Loops whose body does not run alike for every unit of a round (a store, a
// load at a per-unit index) or whose upper bound has another form stay per
// unit, and still compute the per-unit loop's results.
TEST(LoweringInterchange, UpperBoundRoundsOnlyForBodiesRunAlike) {
  const char *Store = R"(
kernel @st cube_dim(32) (%o: buffer<u32, read_write>) {
  %u = unit_pos : u32
  for %k = 0:u32 to %u {
    %b = mul %u, 32:u32 : u32
    %i = add %b, %k : u32
    store %o[%i], %k
  }
}
)";
  const char *PerUnitIndex = R"(
kernel @pi cube_dim(32) (%t: buffer<u32, read>, %o: buffer<u32, write>) {
  %u = unit_pos : u32
  %s = var u32
  set %s, 0:u32
  for %k = 0:u32 to %u {
    %i = add %u, %k : u32
    %x = load %t[%i] : u32
    %a = get %s : u32
    %b = add %a, %x : u32
    set %s, %b
  }
  %r = get %s : u32
  store %o[%u], %r
}
)";
  const char *OtherForm = R"(
kernel @of cube_dim(32) (%t: buffer<u32, read>, %o: buffer<u32, write>) {
  %u = unit_pos : u32
  %h = mul %u, 2:u32 : u32
  %s = var u32
  set %s, 0:u32
  for %k = 0:u32 to %h {
    %x = load %t[%k] : u32
    %a = get %s : u32
    %b = add %a, %x : u32
    set %s, %b
  }
  %r = get %s : u32
  store %o[%u], %r
}
)";
  JitKernel St = compile(Store);
  ASSERT_TRUE(St.Fn);
  EXPECT_EQ(St.LLVMIR.find("xfor.round"), std::string::npos);
  std::vector<uint32_t> O(32 * 32, 7);
  St.launch({buf(O)}, {1, 1, 1});
  for (uint32_t U = 0; U < 32; ++U)
    for (uint32_t Kk = 0; Kk < 32; ++Kk)
      EXPECT_EQ(O[U * 32 + Kk], Kk < U ? Kk : 7u) << U << " " << Kk;
  std::vector<uint32_t> T(64);
  for (uint32_t I = 0; I < 64; ++I)
    T[I] = I * I + 1;
  for (const char *Text : {PerUnitIndex, OtherForm}) {
    JitKernel K = compile(Text);
    ASSERT_TRUE(K.Fn);
    EXPECT_EQ(K.LLVMIR.find("xfor.round"), std::string::npos);
    std::vector<uint32_t> Out(32);
    K.launch({buf(T), buf(Out)}, {1, 1, 1});
    for (uint32_t U = 0; U < 32; ++U) {
      uint32_t S = 0;
      bool Other = Text == OtherForm;
      for (uint32_t Kk = 0; Kk < (Other ? 2 * U : U); ++Kk)
        S += T[Other ? Kk : U + Kk];
      EXPECT_EQ(Out[U], S) << "unit " << U;
    }
  }
}

// The loop variable cast to the unsigned type of its width is the same LLVM
// value, and must index by its own (zero) extension, not by the rounds'
// signed 64-bit sum: an i8 loop from -4 reads tab[252] through cast to u8,
// in rounds by either bound.
TEST(LoweringInterchange, CastOfTheLoopVariableIndexesAsItsOwnType) {
  // The kernel: BOUNDS sets %l and %h, then the loop from %l to %h.
  const std::string Kernel = R"(
kernel @cs cube_dim(16) (%tab: buffer<u8, read>, %out: buffer<u32, write>,
                         %lo: i8) {
  %u = unit_pos : u32
  %ui = cast %u : i8
BOUNDS
  %s = var u32
  set %s, 0:u32
  for %k = %l to %h {
    %ix = cast %k : u8
    %x = load %tab[%ix] : u8
    %xw = cast %x : u32
    %a = get %s : u32
    %b = mul %a, 3:u32 : u32
    %c = add %b, %xw : u32
    set %s, %c
  }
  %r = get %s : u32
  store %out[%u], %r
}
)";
  auto withBounds = [&](const char *Bounds) {
    std::string T = Kernel;
    T.replace(T.find("BOUNDS"), 6, Bounds);
    return T;
  };
  // From %lo to the unit's index; from %lo - unit to 6.
  const std::string ByUpper = withBounds("  %l = add %lo, 0:i8 : i8\n"
                                         "  %h = add %ui, 0:i8 : i8");
  const std::string ByLower = withBounds("  %l = sub %lo, %ui : i8\n"
                                         "  %h = add %lo, 10:i8 : i8");
  std::vector<uint8_t> Tab(256);
  for (unsigned I = 0; I < 256; ++I)
    Tab[I] = uint8_t(I * 7 + 1);
  for (bool Upper : {true, false})
    for (bool Checked : {true, false})
      for (bool O3 : {false, true}) {
        SCOPED_TRACE(
            std::string(Upper ? "by the upper bound" : "by the lower") +
            (Checked ? " checked" : " unchecked") + (O3 ? " O3" : " O0"));
        CpuVariant V;
        V.BoundsChecked = Checked;
        JitKernel K = compile(Upper ? ByUpper : ByLower, V, {}, O3);
        ASSERT_TRUE(K.Fn);
        EXPECT_NE(K.LLVMIR.find("xfor.round"), std::string::npos);
        int8_t Lo = -4;
        std::vector<uint32_t> Out(16, 0xdeadbeef);
        K.launch({buf(Tab), buf(Out), val(Lo)}, {1, 1, 1});
        for (int U = 0; U < 16; ++U) {
          uint32_t S = 0;
          for (int Kk = Upper ? Lo : Lo - U; Kk < (Upper ? U : 6); ++Kk)
            S = S * 3 + Tab[uint8_t(Kk)];
          EXPECT_EQ(Out[U], S) << "unit " << U;
        }
      }
}

} // namespace
