//===- TensorTest.cpp - Tensor bindings and tensor maps through the API ---===//
//
// docs/LangRef.md §16 and §17 through the public C++ API: Arg::tensor,
// Arg::tensorMap and Arg::tensorMapIm2col bind shapes, strides, boxes and
// im2col parameters that the kernel reads and copies with; every malformed
// binding is refused at launch with InvalidLaunch, naming the parameter.
// Tensor map kernels built with the KernelBuilder print, parse back and
// run.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "kiln/IR/Builder.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include <gtest/gtest.h>

#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;
using kiln::AccessKind;
using kiln::KernelBuilder;
using kiln::OpKind;
using kiln::ScalarKind;
using kiln::ValueId;
namespace lit = kiln::lit;

namespace {

constexpr const char *MetaText = R"(
kernel @meta cube_dim(1) (%t: buffer<u32, read>, %out: buffer<u32, write>) {
  %r = rank %t : u32
  %l = tensor_len %t : u32
  %n = len %t : u32
  store %out[0], %r
  store %out[1], %l
  store %out[2], %n
  for %d = 0:u32 to 3:u32 {
    %s = shape %t, %d : u32
    %st = stride %t, %d : u32
    %i = add %d, 3:u32 : u32
    %j = add %d, 6:u32 : u32
    store %out[%i], %s
    store %out[%j], %st
  }
}
)";

ElementType u32Type() { return ElementType::scalar(ScalarType::U32); }

std::vector<uint32_t> u32s(const Buffer &B, size_t N) {
  const uint32_t *P = static_cast<const uint32_t *>(B.data());
  return std::vector<uint32_t>(P, P + N);
}

class TensorBindingTest : public ::testing::Test {
protected:
  void SetUp() override {
    Result<Kernel> K = D.loadKernel(MetaText);
    ASSERT_TRUE(K.ok()) << K.status().str();
    Meta = *K;
  }
  /// Launches @meta with \p T as %t.
  Status launch(const Arg &T) {
    return D.launch(Meta, {1, 1, 1}, {T, Arg::buffer(Out.view(u32Type()))});
  }
  Device D = memoryDevice();
  Kernel Meta;
  Buffer In = *Buffer::allocate(64 * 4), Out = *Buffer::allocate(9 * 4);
};

TEST_F(TensorBindingTest, ShapeAndStridesReachTheKernel) {
  std::vector<uint64_t> Shape = {2, 2, 2, 2}, Strides = {32, 16, 4, 1};
  ASSERT_TRUE(launch(Arg::tensor(In.view(u32Type()), Shape, Strides,
                                 Access::Read))
                  .ok());
  // rank, tensor_len, len (the buffer's 64 elements), shape, strides.
  EXPECT_EQ(u32s(Out, 9),
            (std::vector<uint32_t>{4, 16, 64, 2, 2, 2, 32, 16, 4}));
  // Strides left out are contiguous row-major; the shape may exceed the
  // buffer (it is metadata only).
  std::vector<uint64_t> Big = {100, 3, 7};
  ASSERT_TRUE(launch(Arg::tensor(In.view(u32Type()), Big)).ok());
  EXPECT_EQ(u32s(Out, 9),
            (std::vector<uint32_t>{3, 2100, 64, 100, 3, 7, 21, 7, 1}));
  // Without a shape: rank 1, shape [count], strides [1].
  ASSERT_TRUE(launch(Arg::buffer(In.view(u32Type(), 0, 10))).ok());
  EXPECT_EQ(u32s(Out, 9),
            (std::vector<uint32_t>{1, 10, 10, 10, 1, 1, 1, 0, 0}));
}

TEST_F(TensorBindingTest, MalformedBindingsAreRefused) {
  ElementType U32 = u32Type();
  std::vector<uint64_t> None, Nine(9, 1), Two = {2, 3}, One = {6},
                               Huge = {uint64_t(1) << 32},
                               Wide = {65536, 65536};
  struct Case {
    Arg A;
    const char *Message;
  } Cases[] = {
      {Arg::tensor(In.view(U32), None, None),
       "argument 0 (%t): a tensor binding has rank 1 to 8, got 0"},
      {Arg::tensor(In.view(U32), Nine, Nine),
       "argument 0 (%t): a tensor binding has rank 1 to 8, got 9"},
      {Arg::tensor(In.view(U32), Two, One),
       "argument 0 (%t): the shape has 2 dimension(s) but the strides 1; "
       "give one stride per dimension"},
      {Arg::tensor(In.view(U32), Huge, One),
       "argument 0 (%t): shape[0] = 4294967296 does not fit u32"},
      {Arg::tensor(In.view(U32), One, Huge),
       "argument 0 (%t): strides[0] = 4294967296 does not fit u32"},
      {Arg::tensor(In.view(U32), Wide),
       "argument 0 (%t): the shape's product (the tensor_len) exceeds u32 at "
       "dimension 1"},
      {Arg::tensorMap(In.view(U32), Two, None, Two),
       "argument 0 (%t): a tensor map (a binding with a box) is bound to a "
       "buffer parameter; bind the buffer without a box"},
  };
  for (const Case &C : Cases) {
    Status S = launch(C.A);
    EXPECT_EQ(S.code(), ErrorCode::InvalidLaunch) << S.str();
    EXPECT_EQ(S.message(), std::string("launch of kernel 'meta': ") + C.Message);
  }
}

/// unit 0 loads a [2, 4] box of %src at (y, x) into shared memory on a cube
/// barrier, every unit waits, each unit copies one element out; then unit 0
/// stores the tile into %dst at (x, y) with the store ordering operations.
kiln::IRKernel buildTileCopy() {
  KernelBuilder B("tile");
  B.setCubeDim({8});
  kiln::Type F32 = kiln::Type::scalar(ScalarKind::F32);
  kiln::Type I32 = kiln::Type::scalar(ScalarKind::I32);
  ValueId Src = B.addTensorMap("src", F32, AccessKind::Read);
  ValueId Dst = B.addTensorMap("dst", F32, AccessKind::Write);
  ValueId Out = B.addBuffer("out", F32, AccessKind::Write);
  ValueId Y = B.addScalar("y", I32);
  ValueId X = B.addScalar("x", I32);
  ValueId Tile = B.named("tile").shared(F32, 8);
  ValueId Bar = B.named("bar").barrierCube(lit::u32(8));
  ValueId U = B.named("u").builtin(OpKind::UnitPos);
  ValueId First = B.named("first").binary(OpKind::Eq, U, lit::u32(0));
  B.beginIf(First);
  B.tmaLoad(Bar, Tile, lit::u32(0), Src, {Y, X});
  B.end();
  ValueId Bytes = B.named("bytes").select(First, lit::u32(32), lit::u32(0));
  ValueId Token = B.named("t").barrierArriveTx(Bar, lit::u32(1), Bytes);
  B.barrierWait(Bar, Token);
  ValueId V = B.named("v").load(Tile, U);
  B.store(Out, U, V);
  B.beginIf(First);
  B.tmaStore(Tile, lit::u32(0), Dst, {X, Y});
  B.tmaCommit();
  B.tmaWait(OpKind::TmaWaitRead, lit::u32(0));
  B.end();
  return finishOrFail(B);
}

TEST(TensorMapTest, BuiltKernelPrintsParsesAndRuns) {
  kiln::IRKernel K = buildTileCopy();
  ASSERT_FALSE(llvm::errorToBool(
      kiln::verifyKernel(K, kiln::DeviceLimits(), "<builder>")));
  std::string Text = kiln::printKernel(K);
  EXPECT_NE(Text.find("(%src: tensor_map<f32, read>, %dst: tensor_map<f32, "
                      "write>, "),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("    tma_load %bar, %tile, 0:u32, %src, %y, %x\n"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("    tma_store %tile, 0:u32, %dst, %x, %y\n    "
                      "tma_commit\n    tma_wait_read 0:u32\n"),
            std::string::npos)
      << Text;
  llvm::Expected<kiln::Module> M = kiln::parseModule(Text, "tile.kiln");
  ASSERT_TRUE(static_cast<bool>(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(kiln::printKernel(M->Kernels[0]), Text);

  Device D = memoryDevice();
  Result<Kernel> Loaded = D.loadKernel(K);
  ASSERT_TRUE(Loaded.ok()) << Loaded.status().str();
  ASSERT_EQ(Loaded->parameters().size(), 5u);
  EXPECT_TRUE(Loaded->parameters()[0].IsTensorMap);
  EXPECT_FALSE(Loaded->parameters()[2].IsTensorMap);
  // A 6 x 5 tensor of 30 floats, value 10 * row + column; a 5 x 6 output.
  Buffer Src = *Buffer::allocate(30 * 4), Dst = *Buffer::allocate(30 * 4),
         Out = *Buffer::allocate(8 * 4);
  float *S = static_cast<float *>(Src.data());
  for (int R = 0; R < 6; ++R)
    for (int C = 0; C < 5; ++C)
      S[R * 5 + C] = float(10 * R + C);
  std::vector<uint64_t> SrcShape = {6, 5}, DstShape = {5, 6}, Box = {2, 4};
  std::vector<uint64_t> NoStrides;
  auto Launch = [&](int32_t Y, int32_t X) {
    std::fill_n(static_cast<float *>(Dst.data()), 30, -1.0f);
    return D.launch(
        *Loaded, {1, 1, 1},
        {Arg::tensorMap(Src.view(f32()), SrcShape, NoStrides, Box,
                        Access::Read),
         Arg::tensorMap(Dst.view(f32()), DstShape, NoStrides, Box,
                        Access::Write),
         Arg::buffer(Out.view(f32())), Arg::i32(Y), Arg::i32(X)});
  };
  // The box at (4, 2) reaches past the last column: zeros there.
  Status St = Launch(4, 2);
  ASSERT_TRUE(St.ok()) << St.str();
  const float *O = static_cast<const float *>(Out.data());
  std::vector<float> Got(O, O + 8);
  EXPECT_EQ(Got, (std::vector<float>{42, 43, 44, 0, 52, 53, 54, 0}));
  // Stored at (2, 4) of the 5 x 6 output: rows 2-3, columns 4-7, of which
  // columns 6 and 7 are outside and skipped.
  const float *T = static_cast<const float *>(Dst.data());
  for (int R = 0; R < 5; ++R)
    for (int C = 0; C < 6; ++C) {
      float Want = -1;
      if (R >= 2 && R < 4 && C >= 4)
        Want = Got[(R - 2) * 4 + (C - 4)];
      EXPECT_EQ(T[R * 6 + C], Want) << R << " " << C;
    }

  // Misbound tensor maps are refused, the parameter named.
  std::vector<uint64_t> Three = {6, 5, 1}, BigBox = {2, 300}, Box1 = {2};
  auto Refused = [&](Arg A, const std::string &Message) {
    Status S = D.launch(*Loaded, {1, 1, 1},
                        {A,
                         Arg::tensorMap(Dst.view(f32()), DstShape, NoStrides,
                                        Box, Access::Write),
                         Arg::buffer(Out.view(f32())), Arg::i32(0),
                         Arg::i32(0)});
    EXPECT_EQ(S.code(), ErrorCode::InvalidLaunch) << S.str();
    EXPECT_EQ(S.message(), "launch of kernel 'tile': argument 0 (%src): " +
                               Message);
  };
  Refused(Arg::buffer(Src.view(f32()), Access::Read),
          "a tensor_map parameter needs a tensor map binding: a shape, "
          "strides and a box");
  Refused(Arg::tensorMap(Src.view(f32()), Three, NoStrides, Three,
                         Access::Read),
          "the kernel's tensor map copies use rank 2, the binding has rank 3");
  Refused(Arg::tensorMap(Src.view(f32()), SrcShape, NoStrides, Box1,
                         Access::Read),
          "the box has 1 dimension(s), the tensor 2");
  Refused(Arg::tensorMap(Src.view(f32()), SrcShape, NoStrides, BigBox,
                         Access::Read),
          "box[1] = 300: a box dimension is 1 to 256");
  std::vector<uint64_t> Six(6, 1);
  Refused(Arg::tensorMap(Src.view(f32()), Six, NoStrides, Six, Access::Read),
          "a tensor map binding has rank 1 to 5, got 6");
}

/// One unit loads 8 pixels of 2 channels of an im2col map at (0, -1, -1, 0)
/// with offsets (1, 1) into shared memory; 16 units copy them out.
kiln::IRKernel buildIm2colLoad() {
  KernelBuilder B("im2col");
  B.setCubeDim({16});
  kiln::Type U32 = kiln::Type::scalar(ScalarKind::U32);
  ValueId In = B.addTensorMap("in", U32, AccessKind::Read, /*Im2col=*/true);
  ValueId Out = B.addBuffer("out", U32, AccessKind::Write);
  ValueId Tile = B.named("tile").shared(U32, 16);
  ValueId Bar = B.named("bar").barrierCube(lit::u32(16));
  ValueId U = B.named("u").builtin(OpKind::UnitPos);
  ValueId First = B.named("first").binary(OpKind::Eq, U, lit::u32(0));
  B.beginIf(First);
  kiln::Literal One = lit::make(ScalarKind::U16, 1);
  B.tmaLoadIm2col(Bar, Tile, lit::u32(0), In,
                  {lit::i32(0), lit::i32(-1), lit::i32(-1), lit::i32(0)},
                  {One, One});
  B.end();
  ValueId Bytes = B.named("bytes").select(First, lit::u32(64), lit::u32(0));
  ValueId Token = B.named("t").barrierArriveTx(Bar, lit::u32(1), Bytes);
  B.barrierWait(Bar, Token);
  ValueId V = B.named("v").load(Tile, U);
  B.store(Out, U, V);
  return finishOrFail(B);
}

TEST(TensorMapTest, Im2colKernelPrintsParsesRunsAndChecksItsBinding) {
  kiln::IRKernel K = buildIm2colLoad();
  ASSERT_FALSE(llvm::errorToBool(
      kiln::verifyKernel(K, kiln::DeviceLimits(), "<builder>")));
  std::string Text = kiln::printKernel(K);
  EXPECT_NE(Text.find("(%in: tensor_map<u32, read, im2col>, "),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("    tma_load_im2col %bar, %tile, 0:u32, %in, 0:i32, "
                      "-1:i32, -1:i32, 0:i32 offsets 1:u16, 1:u16\n"),
            std::string::npos)
      << Text;
  llvm::Expected<kiln::Module> M = kiln::parseModule(Text, "im2col.kiln");
  ASSERT_TRUE(static_cast<bool>(M)) << llvm::toString(M.takeError());
  EXPECT_EQ(kiln::printKernel(M->Kernels[0]), Text);

  Device D = memoryDevice();
  Result<Kernel> Loaded = D.loadKernel(K);
  ASSERT_TRUE(Loaded.ok()) << Loaded.status().str();
  EXPECT_TRUE(Loaded->parameters()[0].IsTensorMap);
  EXPECT_TRUE(Loaded->parameters()[0].IsIm2col);
  EXPECT_FALSE(Loaded->parameters()[1].IsIm2col);
  // A 1 x 3 x 3 x 2 NHWC tensor: pixel p = 3y + x holds 2p + 1, 2p + 2.
  Buffer In = *Buffer::allocate(18 * 4), Out = *Buffer::allocate(16 * 4);
  uint32_t *P = static_cast<uint32_t *>(In.data());
  for (uint32_t I = 0; I < 18; ++I)
    P[I] = I + 1;
  std::vector<uint64_t> Shape = {1, 3, 3, 2}, NoStrides;
  std::vector<int64_t> Lower = {-1, -1}, Upper = {0, 0};
  auto Map = [&](std::vector<uint64_t> S, std::vector<int64_t> Lo,
                 std::vector<int64_t> Hi, uint64_t Channels, uint64_t Pixels) {
    return Arg::tensorMapIm2col(In.view(u32Type()), S, NoStrides, Lo, Hi,
                                Channels, Pixels, Access::Read);
  };
  Status St = D.launch(
      *Loaded, {1, 1, 1},
      {Map(Shape, Lower, Upper, 2, 8), Arg::buffer(Out.view(u32Type()))});
  ASSERT_TRUE(St.ok()) << St.str();
  // The box's row y = -1 reads row 0 (offset 1), x = -1..2 reads 0..3.
  EXPECT_EQ(u32s(Out, 16), (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 0, 0, 7, 8,
                                                  9, 10, 11, 12, 0, 0}));

  auto Refused = [&](Arg A, const std::string &Message) {
    Status S =
        D.launch(*Loaded, {1, 1, 1}, {A, Arg::buffer(Out.view(u32Type()))});
    EXPECT_EQ(S.code(), ErrorCode::InvalidLaunch) << S.str();
    EXPECT_EQ(S.message(),
              "launch of kernel 'im2col': argument 0 (%in): " + Message);
  };
  std::vector<uint64_t> Box = {1, 1, 1, 1};
  Refused(
      Arg::tensorMap(In.view(u32Type()), Shape, NoStrides, Box, Access::Read),
      "an im2col tensor map takes no box; bind it with a shape, strides "
      "and im2col parameters");
  Refused(Arg::tensor(In.view(u32Type()), Shape, NoStrides, Access::Read),
          "an im2col tensor_map parameter needs an im2col binding: a shape, "
          "strides, the pixel box corners, channels per pixel and pixels per "
          "column");
  Refused(Map({1, 3, 3, 2, 1}, {-1, -1, 0}, {0, 0, 0}, 2, 8),
          "the kernel's tensor map copies use rank 4, the binding has rank 5");
  Refused(Map(Shape, {-1}, Upper, 2, 8),
          "pixel_box_lower_corner has 1 entry(ies), the tensor 2 spatial "
          "dimension(s) (rank - 2)");
  Refused(Map(Shape, Lower, {0, 32768}, 2, 8),
          "pixel_box_upper_corner[1] = 32768: a corner is -32768 to 32767");
  Refused(Map(Shape, {0, 4}, Upper, 2, 8),
          "the pixel box of spatial dimension 1 is empty: shape 3 + upper "
          "corner 0 - lower corner 4 = -1");
  Refused(Map(Shape, Lower, Upper, 257, 8),
          "channels_per_pixel = 257: it is 1 to 256");
  Refused(Map(Shape, Lower, Upper, 2, 0),
          "pixels_per_column = 0: it is 1 to 1024");
}

} // namespace
