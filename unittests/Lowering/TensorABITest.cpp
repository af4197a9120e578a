//===- TensorABITest.cpp - LaunchArgs::Tensors as the lowering reads it ---===//
//
// The contract of CubeABI.h for tensor metadata (docs/LangRef.md §16.5,
// §17): only kernels that read metadata load LaunchArgs::Tensors and say so
// in their metadata; a null table reads as the default bindings; a table
// filled by hand is read at the documented offsets, dimensions past the
// rank giving shape 1 and stride 0; a tensor map copy walks the box of its
// entry.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr const char *MetaKernel = R"(
kernel @meta cube_dim(1) (%n: u32, %t: buffer<f32, read>, %p: buffer<f32, read>,
                          %out: buffer<u32, write>) {
  %r = rank %t : u32
  %l = tensor_len %t : u32
  store %out[0], %r
  store %out[1], %l
  for %d = 0:u32 to 4:u32 {
    %s = shape %t, %d : u32
    %st = stride %t, %d : u32
    %i = add %d, 2:u32 : u32
    %j = add %d, 6:u32 : u32
    store %out[%i], %s
    store %out[%j], %st
  }
  %sn = shape %t, %n : u32
  store %out[10], %sn
}
)";

TensorInfo info(std::vector<uint32_t> Shape, std::vector<uint32_t> Strides,
                std::vector<uint32_t> Box = {}) {
  TensorInfo T{};
  T.Rank = static_cast<uint32_t>(Shape.size());
  T.Len = 1;
  for (uint32_t &S : T.Shape)
    S = 1;
  for (size_t D = 0; D < Shape.size(); ++D) {
    T.Shape[D] = Shape[D];
    T.Strides[D] = Strides[D];
    T.Len *= Shape[D];
  }
  for (size_t D = 0; D < Box.size(); ++D)
    T.Box[D] = Box[D];
  return T;
}

TEST(TensorABITest, OnlyParametersWhoseMetadataIsReadAreMarked) {
  JitKernel K = compile(MetaKernel);
  ASSERT_NE(K.Fn, nullptr);
  ASSERT_EQ(K.Metadata.Params.size(), 4u);
  EXPECT_FALSE(K.Metadata.Params[0].ReadsTensorInfo);
  EXPECT_TRUE(K.Metadata.Params[1].ReadsTensorInfo);
  EXPECT_FALSE(K.Metadata.Params[2].ReadsTensorInfo);
  EXPECT_FALSE(K.Metadata.Params[3].ReadsTensorInfo);
  EXPECT_TRUE(K.Metadata.readsTensorInfo());
  EXPECT_NE(K.LLVMIR.find("%tensors = load ptr"), std::string::npos);

  // A kernel that reads no metadata never loads the table.
  JitKernel Plain = compile(R"(
kernel @plain cube_dim(1) (%t: buffer<u32, write>) {
  %n = len %t : u32
  store %t[0], %n
}
)");
  ASSERT_NE(Plain.Fn, nullptr);
  EXPECT_FALSE(Plain.Metadata.readsTensorInfo());
  EXPECT_EQ(Plain.LLVMIR.find("tensors"), std::string::npos);
}

TEST(TensorABITest, NullTableReadsDefaultsAndATableIsReadAsLaidOut) {
  JitKernel K = compile(MetaKernel);
  ASSERT_NE(K.Fn, nullptr);
  std::vector<float> T(7), P(3);
  std::vector<uint32_t> Out(11, 99);
  uint32_t N = 0;
  K.launch({val(N), buf(T), buf(P), buf(Out)}, {1, 1, 1});
  EXPECT_EQ(Out, (std::vector<uint32_t>{1, 7, 7, 1, 1, 1, 1, 0, 0, 0, 7}));

  std::vector<TensorInfo> Table(4);
  Table[1] = info({5, 6, 7}, {100, 10, 3});
  N = 2;
  K.launch({val(N), buf(T), buf(P), buf(Out)}, {1, 1, 1}, false, Table.data());
  EXPECT_EQ(Out,
            (std::vector<uint32_t>{3, 210, 5, 6, 7, 1, 100, 10, 3, 0, 7}));
  N = 12345;
  K.launch({val(N), buf(T), buf(P), buf(Out)}, {1, 1, 1}, false, Table.data());
  EXPECT_EQ(Out[10], 1u);
}

TEST(TensorABITest, ACopyWalksTheBoxOfItsEntry) {
  JitKernel K = compile(R"(
kernel @copy cube_dim(1) (%m: tensor_map<i32, read>, %out: buffer<i32, write>) {
  %tile = shared i32[6]
  %bar = barrier_cube 1:u32
  tma_load %bar, %tile, 0:u32, %m, 1:i32, -1:i32
  %t = barrier_arrive_tx %bar, 1:u32, 24:u32 : u32
  barrier_wait %bar, %t
  for %i = 0:u32 to 6:u32 {
    %v = load %tile[%i] : i32
    store %out[%i], %v
  }
}
)");
  ASSERT_NE(K.Fn, nullptr);
  EXPECT_TRUE(K.Metadata.Params[0].IsTensorMap);
  EXPECT_EQ(K.Metadata.Params[0].TensorMapRank, 2);
  // A 3 x 4 tensor stored column by column (strides 1, 3); box 2 x 3 at
  // (1, -1): column -1 is outside.
  std::vector<int32_t> M(12), Out(6, -7);
  for (int R = 0; R < 3; ++R)
    for (int C = 0; C < 4; ++C)
      M[R + 3 * C] = 10 * R + C;
  std::vector<TensorInfo> Table(2);
  Table[0] = info({3, 4}, {1, 3}, {2, 3});
  K.launch({buf(M), buf(Out)}, {1, 1, 1}, false, Table.data());
  EXPECT_EQ(Out, (std::vector<int32_t>{0, 10, 11, 0, 20, 21}));
}

// An im2col map's parameters sit in the box entries (Im2col*Slot).
TEST(TensorABITest, AnIm2colLoadReadsItsParametersFromTheBoxEntries) {
  JitKernel K = compile(R"(
kernel @col cube_dim(1) (%m: tensor_map<i32, read, im2col>, %out: buffer<i32, write>) {
  %tile = shared i32[6]
  %bar = barrier_cube 1:u32
  tma_load_im2col %bar, %tile, 0:u32, %m, 0:i32, -1:i32, 0:i32 offsets 1:u16
  %t = barrier_arrive_tx %bar, 1:u32, 24:u32 : u32
  barrier_wait %bar, %t
  for %i = 0:u32 to 6:u32 {
    %v = load %tile[%i] : i32
    store %out[%i], %v
  }
}
)");
  ASSERT_NE(K.Fn, nullptr);
  EXPECT_TRUE(K.Metadata.Params[0].IsTensorMap);
  EXPECT_TRUE(K.Metadata.Params[0].IsIm2col);
  EXPECT_EQ(K.Metadata.Params[0].TensorMapRank, 3);
  // A 1 x 4 x 2 NWC tensor, element (0, w, c) = 10w + c; pixel box [-1, 3],
  // 3 pixels of 2 channels from w = -1, read at w + 1.
  std::vector<int32_t> M(8), Out(6, -7);
  for (int W = 0; W < 4; ++W)
    for (int C = 0; C < 2; ++C)
      M[W * 2 + C] = 10 * W + C;
  std::vector<TensorInfo> Table(2);
  Table[0] = info({1, 4, 2}, {8, 2, 1});
  Table[0].Box[Im2colPixelsSlot] = 3;
  Table[0].Box[Im2colChannelsSlot] = 2;
  Table[0].Box[Im2colLowerSlot] = static_cast<uint32_t>(-1);
  Table[0].Box[Im2colUpperSlot] = 0;
  K.launch({buf(M), buf(Out)}, {1, 1, 1}, false, Table.data());
  EXPECT_EQ(Out, (std::vector<int32_t>{0, 1, 10, 11, 20, 21}));
}

} // namespace
