//===- PrivatizationTest.cpp - Privatisable buffer atomics ----------------===//
//
// Which buffers AtomicPrivatization.h finds (the metadata's Private), and
// the cube function's side of the contract of CubeABI.h: with bit k of
// LaunchArgs::Reserved set, the atomics go to the private copy named in the
// scratch area and the buffer is untouched; with it clear, to the buffer.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include "AtomicPrivatization.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace kiln;
using namespace kiln::test;

namespace {

/// The Private of each parameter of the kernel \p Text.
std::vector<PrivateAtomic> privateOf(llvm::StringRef Text,
                                     CpuVariant V = {}) {
  llvm::LLVMContext Ctx;
  LoweredModule L = lowerOnly(Text, Ctx, V);
  std::vector<PrivateAtomic> Out;
  for (const ParamMetadata &P : L.Metadata.Params)
    Out.push_back(P.Private);
  return Out;
}

std::string atomicKernel(const std::string &Body, const std::string &T = "u32") {
  return "kernel @k cube_dim(32) (%a: buffer<" + T + ", read_write>, %b: buffer<" +
         T + ", read_write>, %x: " + T + ") {\n  %i = unit_pos : u32\n" + Body +
         "}\n";
}

constexpr PrivateAtomic None = PrivateAtomic::None;

TEST(Privatization, EachOperationMergesByItsKind) {
  struct {
    const char *Op;
    PrivateAtomic Want;
  } Cases[] = {{"add", PrivateAtomic::Add}, {"sub", PrivateAtomic::Add},
               {"min", PrivateAtomic::Min}, {"max", PrivateAtomic::Max},
               {"and", PrivateAtomic::And}, {"or", PrivateAtomic::Or},
               {"xor", PrivateAtomic::Xor}, {"exchange", None}};
  for (const char *T : {"u32", "i32", "u64", "i64"})
    for (auto &C : Cases) {
      SCOPED_TRACE(std::string(C.Op) + " " + T);
      auto P = privateOf(atomicKernel(std::string("  %o = atomic_") + C.Op +
                                          " %a[%i], %x : " + T + "\n",
                                      T));
      EXPECT_EQ(P, (std::vector<PrivateAtomic>{C.Want, None, None}));
    }
  EXPECT_EQ(privateOf(atomicKernel("  %o = atomic_add %a[%i], %x : f32\n",
                                   "f32")),
            (std::vector<PrivateAtomic>{PrivateAtomic::Add, None, None}));
}

TEST(Privatization, WhatDisqualifiesABuffer) {
  // add and sub together merge by addition; `len` is fine.
  EXPECT_EQ(privateOf(atomicKernel("  %n = len %a : u32\n"
                                   "  %o = atomic_add %a[%i], %x : u32\n"
                                   "  %p = atomic_sub %a[%n], 1:u32 : u32\n")),
            (std::vector<PrivateAtomic>{PrivateAtomic::Add, None, None}));
  // The old value is used: not privatised (b is, it only takes atomics).
  EXPECT_EQ(privateOf(atomicKernel("  %o = atomic_add %a[%i], %x : u32\n"
                                   "  %p = atomic_or %b[%i], %o : u32\n")),
            (std::vector<PrivateAtomic>{None, PrivateAtomic::Or, None}));
  // Also loaded, stored or read atomically: not privatised.
  EXPECT_EQ(privateOf(atomicKernel("  %o = atomic_add %a[%i], %x : u32\n"
                                   "  %v = load %a[%i] : u32\n"
                                   "  store %b[%i], %v\n")),
            (std::vector<PrivateAtomic>{None, None, None}));
  EXPECT_EQ(privateOf(atomicKernel("  %o = atomic_add %a[%i], %x : u32\n"
                                   "  store %a[%i], %x\n")),
            (std::vector<PrivateAtomic>{None, None, None}));
  EXPECT_EQ(privateOf(atomicKernel("  %o = atomic_add %a[%i], %x : u32\n"
                                   "  %v = atomic_load %a[0:u32] : u32\n"
                                   "  %p = atomic_xor %b[%i], %v : u32\n")),
            (std::vector<PrivateAtomic>{None, PrivateAtomic::Xor, None}));
  // Two kinds of merge on one buffer.
  EXPECT_EQ(privateOf(atomicKernel("  %o = atomic_add %a[%i], %x : u32\n"
                                   "  %p = atomic_max %a[%i], %x : u32\n")),
            (std::vector<PrivateAtomic>{None, None, None}));
  // Buffers that may overlap: another parameter could observe it.
  CpuVariant Alias{true, 4, /*MayAlias=*/true};
  EXPECT_EQ(privateOf(atomicKernel("  %o = atomic_add %a[%i], %x : u32\n"),
                      Alias),
            (std::vector<PrivateAtomic>{None, None, None}));
}

TEST(Privatization, KernelsWithoutThemReadNoFlag) {
  llvm::LLVMContext Ctx;
  LoweredModule L =
      lowerOnly(atomicKernel("  %o = atomic_add %a[%i], %x : u32\n"
                             "  store %a[%i], %o\n"),
                Ctx);
  std::string IR;
  llvm::raw_string_ostream OS(IR);
  L.Module->print(OS, nullptr);
  EXPECT_EQ(IR.find("privatised"), std::string::npos);
  EXPECT_EQ(IR.find("atomic.private"), std::string::npos);
}

/// Calls \p K over \p Cubes cubes with Reserved = \p Mask and the copies
/// \p Copies (one per privatisable buffer) in the scratch table.
void callWithCopies(const JitKernel &K, std::vector<KernelArg> Args,
                    uint32_t Cubes, uint32_t Mask,
                    std::vector<void *> Copies) {
  uint64_t Table = privateCopyTableOffset(K.Metadata.ScratchBytes);
  size_t Bytes = (Table + 8 * Copies.size() + 63) / 64 * 64;
  void *Scratch = std::aligned_alloc(64, Bytes);
  std::memset(Scratch, 0xCD, Bytes);
  for (size_t I = 0; I < Copies.size(); ++I)
    std::memcpy(static_cast<char *>(Scratch) + Table + 8 * I, &Copies[I], 8);
  LaunchArgs LA{Args.data(), {Cubes, 1, 1}, Mask, nullptr};
  K.Fn(&LA, 0, Cubes, Scratch);
  std::free(Scratch);
}

TEST(Privatization, TheCubeFunctionHonoursTheLaunchsChoice) {
  // Two privatisable buffers (bits 0 and 1): max into %a, sub from %c.
  const char *Text = R"(
kernel @k cube_dim(64) (%a: buffer<i32, read_write>, %d: buffer<i32, read>,
                        %c: buffer<u64, read_write>, %n: u32) {
  %i = absolute_pos : u32
  %v = load %d[%i] : i32
  %bin = band %i, 7:u32 : u32
  %o = atomic_max %a[%bin], %v : i32
  %w = cast %v : u64
  %p = atomic_sub %c[%bin], %w : u64
}
)";
  for (bool Checked : {true, false})
    for (bool O3 : {false, true}) {
      SCOPED_TRACE(std::string(Checked ? "checked" : "unchecked") +
                   (O3 ? " O3" : ""));
      CpuVariant V;
      V.BoundsChecked = Checked;
      JitKernel K = compile(Text, V, {}, O3);
      ASSERT_NE(K.Fn, nullptr);
      ASSERT_EQ(K.Metadata.Params[0].Private, PrivateAtomic::Max);
      ASSERT_EQ(K.Metadata.Params[2].Private, PrivateAtomic::Add);
      const uint32_t Cubes = 5, N = Cubes * 64;
      std::vector<int32_t> D(N);
      for (uint32_t I = 0; I < N; ++I)
        D[I] = static_cast<int32_t>((I * 7919u) % 1000) - 500;
      std::vector<int32_t> MaxRef(8, INT32_MIN);
      std::vector<uint64_t> SubRef(8, 0);
      for (uint32_t I = 0; I < N; ++I) {
        MaxRef[I & 7] = std::max(MaxRef[I & 7], D[I]);
        SubRef[I & 7] -= static_cast<uint64_t>(static_cast<int64_t>(D[I]));
      }
      uint32_t NV = N;
      // Both privatised: the buffers stay as they were.
      std::vector<int32_t> A(8, 77), PA(8, INT32_MIN);
      std::vector<uint64_t> C(8, 5), PC(8, 0);
      callWithCopies(K, {buf(A), buf(D), buf(C), val(NV)}, Cubes, 3,
                     {PA.data(), PC.data()});
      EXPECT_EQ(A, std::vector<int32_t>(8, 77));
      EXPECT_EQ(C, std::vector<uint64_t>(8, 5));
      EXPECT_EQ(PA, MaxRef);
      EXPECT_EQ(PC, SubRef);
      // Only %c privatised: %a takes real atomics.
      std::fill(PC.begin(), PC.end(), 0);
      callWithCopies(K, {buf(A), buf(D), buf(C), val(NV)}, Cubes, 2,
                     {nullptr, PC.data()});
      for (int J = 0; J < 8; ++J)
        EXPECT_EQ(A[J], std::max(77, MaxRef[J]));
      EXPECT_EQ(PC, SubRef);
      EXPECT_EQ(C, std::vector<uint64_t>(8, 5));
      // None (Reserved zero, as every older caller): a scratch area of
      // ScratchBytes only, nothing read beyond it.
      std::fill(A.begin(), A.end(), 77);
      K.launch({buf(A), buf(D), buf(C), val(NV)}, {Cubes, 1, 1});
      for (int J = 0; J < 8; ++J) {
        EXPECT_EQ(A[J], std::max(77, MaxRef[J]));
        EXPECT_EQ(C[J], 5 + SubRef[J]);
      }
    }
}

} // namespace
