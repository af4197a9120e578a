//===- PrivatizedAtomicsTest.cpp - Atomics in per-worker private copies ---===//
//
// Histogram-like kernels whose buffer atomics the executor privatises
// (CubeABI.h, AtomicPrivatization.h): every read-modify-write kind on i32,
// u32, i64, u64 and f32 add, both variants, many cubes on two threads, with
// the private copies taken (a small buffer) and not taken (one above the
// 64 KiB limit), against a scalar reference.
//
//===----------------------------------------------------------------------===//

#include "Support/Kernels.h"

#include "kiln/Runtime/Device.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace kiln;

namespace {

struct PrivatizedAtomics : ::testing::Test {
  std::unique_ptr<RuntimeDevice> Dev;
  void SetUp() override {
    DeviceOptions Opts;
    Opts.Threads = 2;
    Opts.StoreMode = DeviceStoreMode::Off;
    Opts.MinWorkPerThreadMicroseconds = 0; // always spread over both threads
    auto D = RuntimeDevice::create(Opts);
    ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
    Dev = std::move(*D);
  }
};

/// bins[idx[i]] OP= data[i] for i < n, cubes of 64 units.
std::string histKernel(const std::string &Op, const std::string &T,
                       bool UseOld = false) {
  std::string S = "kernel @h cube_dim(64) (%data: buffer<" + T +
                  ", read>, %idx: buffer<u32, read>, %bins: buffer<" + T +
                  ", read_write>, %n: u32, %out: buffer<" + T +
                  ", write>) {\n"
                  "  %i = absolute_pos : u32\n"
                  "  %in = lt %i, %n : bool\n"
                  "  if %in {\n"
                  "    %v = load %data[%i] : " +
                  T +
                  "\n"
                  "    %b = load %idx[%i] : u32\n"
                  "    %old = atomic_" +
                  Op + " %bins[%b], %v : " + T + "\n";
  if (UseOld)
    S += "    store %out[%i], %old\n";
  return S + "  }\n}\n";
}

template <class T> T apply(const std::string &Op, T A, T B) {
  if constexpr (std::is_integral_v<T>) { // wrapping, as the kernel's
    using U = std::make_unsigned_t<T>;
    if (Op == "add")
      return static_cast<T>(static_cast<U>(U(A) + U(B)));
    if (Op == "sub")
      return static_cast<T>(static_cast<U>(U(A) - U(B)));
  } else if (Op == "add") {
    return A + B;
  }
  if (Op == "min")
    return std::min(A, B);
  if (Op == "max")
    return std::max(A, B);
  if constexpr (std::is_integral_v<T>) {
    if (Op == "and")
      return A & B;
    if (Op == "or")
      return A | B;
    if (Op == "xor")
      return A ^ B;
  }
  ADD_FAILURE() << "op " << Op;
  return A;
}

template <class T> T randomValue(std::mt19937 &R, const std::string &Op) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<int>(R() % 17) - 8); // sums stay exact
  } else {
    if (Op == "and") // mostly ones, so that the result is not just 0
      return static_cast<T>(~(uint64_t(1) << (R() % (8 * sizeof(T)))));
    return static_cast<T>(uint64_t(R()) << 32 | R());
  }
}

HostBuffer bufferOf(Type Ty, const void *Data, uint64_t Count) {
  HostBuffer B = std::move(*HostBuffer::create(Ty, Count));
  std::memcpy(B.data(), Data, Count * Ty.storeSize());
  return B;
}

/// Runs the histogram of \p Op on \p Bins bins and compares with the
/// reference; returns whether the executor privatised the launch.
template <class T>
bool runHist(RuntimeDevice &Dev, ScalarKind SK, const std::string &Op,
             uint64_t Bins, bool Checked, bool UseOld = false) {
  Type Ty = Type::scalar(SK);
  Module M = test::parseAndVerify(histKernel(Op, Ty.str(), UseOld));
  EXPECT_FALSE(M.Kernels.empty());
  if (M.Kernels.empty())
    return false;
  CpuVariant V;
  V.BoundsChecked = Checked;
  auto K = Dev.getKernel(M.Kernels.front(), V);
  EXPECT_TRUE(!!K) << llvm::toString(K.takeError());
  if (!K)
    return false;
  bool Privatizable = false;
  for (const ParamMetadata &P : K->metadata().Params)
    if (P.Name == "bins")
      Privatizable = P.Private != PrivateAtomic::None;
  EXPECT_EQ(Privatizable, !UseOld);

  const uint32_t Cubes = 700, N = Cubes * 64 - 13;
  std::mt19937 R(static_cast<uint32_t>(Bins * 31 + Op.size() + Checked));
  std::vector<T> Data(N), Init(Bins);
  std::vector<uint32_t> Idx(N);
  for (uint32_t I = 0; I < N; ++I) {
    Data[I] = randomValue<T>(R, Op);
    // Skewed to a few hot bins (contention); out of bounds now and then
    // in the checked variant (dropped).
    uint32_t B = R() % 4 ? R() % 8 : R() % Bins;
    if (Checked && R() % 50 == 0)
      B = static_cast<uint32_t>(Bins + R() % 5);
    Idx[I] = B;
  }
  for (T &X : Init)
    X = randomValue<T>(R, Op);
  std::vector<T> Expected = Init;
  for (uint32_t I = 0; I < N; ++I)
    if (Idx[I] < Bins)
      Expected[Idx[I]] = apply(Op, Expected[Idx[I]], Data[I]);

  HostBuffer DataB = bufferOf(Ty, Data.data(), N);
  HostBuffer IdxB = bufferOf(Type::scalar(ScalarKind::U32), Idx.data(), N);
  HostBuffer BinsB = bufferOf(Ty, Init.data(), Bins);
  HostBuffer OutB = std::move(*HostBuffer::create(Ty, N));
  uint64_t Before = Dev.executor().privatizedLaunches();
  llvm::Error E = Dev.launch(
      *K, {Cubes, 1, 1},
      {ArgBinding::buffer(DataB), ArgBinding::buffer(IdxB),
       ArgBinding::buffer(BinsB), ArgBinding::u32(N),
       ArgBinding::buffer(OutB)});
  EXPECT_FALSE(!!E) << llvm::toString(std::move(E));
  const T *Got = static_cast<const T *>(BinsB.data());
  size_t Bad = 0;
  for (uint64_t I = 0; I < Bins; ++I)
    if (std::memcmp(&Got[I], &Expected[I], sizeof(T)) != 0 && Bad++ < 3)
      ADD_FAILURE() << Op << " " << Ty.str() << " bins " << Bins
                    << (Checked ? " checked" : " unchecked") << ": bin " << I
                    << " is " << +Got[I] << ", expected " << +Expected[I];
  return Dev.executor().privatizedLaunches() != Before;
}

// 97 bins: privatised; 20000 four-byte bins (80 KB) or 9000 eight-byte ones
// (72 KB): above the 64 KiB limit, real atomics.
constexpr uint64_t Small = 97;
uint64_t large(ScalarKind SK) { return byteSize(SK) == 4 ? 20000 : 9000; }

TEST_F(PrivatizedAtomics, EveryIntegerOpBothVariantsBothPaths) {
  const char *Ops[] = {"add", "sub", "min", "max", "and", "or", "xor"};
  for (bool Checked : {true, false})
    for (const char *Op : Ops) {
      SCOPED_TRACE(std::string(Op) + (Checked ? " checked" : " unchecked"));
      EXPECT_TRUE(runHist<uint32_t>(*Dev, ScalarKind::U32, Op, Small, Checked));
      EXPECT_FALSE(runHist<uint32_t>(*Dev, ScalarKind::U32, Op,
                                     large(ScalarKind::U32), Checked));
      EXPECT_TRUE(runHist<int32_t>(*Dev, ScalarKind::I32, Op, Small, Checked));
      EXPECT_FALSE(runHist<int32_t>(*Dev, ScalarKind::I32, Op,
                                    large(ScalarKind::I32), Checked));
      EXPECT_TRUE(runHist<int64_t>(*Dev, ScalarKind::I64, Op, Small, Checked));
      EXPECT_TRUE(runHist<uint64_t>(*Dev, ScalarKind::U64, Op, Small, Checked));
      EXPECT_FALSE(runHist<uint64_t>(*Dev, ScalarKind::U64, Op,
                                     large(ScalarKind::U64), Checked));
    }
}

TEST_F(PrivatizedAtomics, FloatAddOfIntegerValuesIsExact) {
  for (bool Checked : {true, false}) {
    EXPECT_TRUE(runHist<float>(*Dev, ScalarKind::F32, "add", Small, Checked));
    EXPECT_FALSE(runHist<float>(*Dev, ScalarKind::F32, "add",
                                large(ScalarKind::F32), Checked));
  }
}

TEST_F(PrivatizedAtomics, UsedOldValueKeepsRealAtomics) {
  EXPECT_FALSE(runHist<uint32_t>(*Dev, ScalarKind::U32, "add", Small,
                                 /*Checked=*/true, /*UseOld=*/true));
}

TEST_F(PrivatizedAtomics, RepeatedLaunchesAccumulate) {
  // hist_global's shape: one atomic_add of 1 per element, launched twice on
  // the same bins (copies are fresh each launch).
  Module M = test::parseAndVerify(R"(
kernel @hist cube_dim(256) (%data: buffer<u32, read>,
                            %bins: buffer<u32, read_write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %v = load %data[%i] : u32
    %old = atomic_add %bins[%v], 1:u32 : u32
  }
}
)");
  auto K = Dev->getKernel(M.Kernels.front());
  ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  const uint32_t N = 256 * 1000;
  std::vector<uint32_t> Data(N), Expected(256, 0);
  for (uint32_t I = 0; I < N; ++I) {
    Data[I] = (I * 2654435761u) >> 24;
    Expected[Data[I]] += 2;
  }
  HostBuffer DataB = bufferOf(Type::scalar(ScalarKind::U32), Data.data(), N);
  HostBuffer BinsB =
      std::move(*HostBuffer::create(Type::scalar(ScalarKind::U32), 256));
  std::memset(BinsB.data(), 0, 256 * 4);
  uint64_t Before = Dev->executor().privatizedLaunches();
  for (int L = 0; L < 2; ++L) {
    llvm::Error E =
        Dev->launch(*K, {N / 256, 1, 1},
                    {ArgBinding::buffer(DataB), ArgBinding::buffer(BinsB),
                     ArgBinding::u32(N)});
    ASSERT_FALSE(!!E) << llvm::toString(std::move(E));
  }
  EXPECT_EQ(Dev->executor().privatizedLaunches(), Before + 2);
  EXPECT_EQ(std::memcmp(BinsB.data(), Expected.data(), 256 * 4), 0);
  // One cube of 256 units, 256 bins: still privatised, inline.
  std::memset(BinsB.data(), 0, 256 * 4);
  llvm::Error E = Dev->launch(*K, {1, 1, 1},
                              {ArgBinding::buffer(DataB),
                               ArgBinding::buffer(BinsB), ArgBinding::u32(N)});
  ASSERT_FALSE(!!E) << llvm::toString(std::move(E));
  EXPECT_EQ(Dev->executor().privatizedLaunches(), Before + 3);
  std::vector<uint32_t> One(256, 0);
  for (uint32_t I = 0; I < 256; ++I)
    ++One[Data[I]];
  EXPECT_EQ(std::memcmp(BinsB.data(), One.data(), 256 * 4), 0);
}

} // namespace
