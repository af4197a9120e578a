//===- TensorTest.cpp - Tensor bindings and tensor maps through the C API -===//
//
// kiln_arg_tensor, kiln_arg_tensor_map and kiln_arg_tensor_map_im2col
// (docs/C-API.md, docs/LangRef.md §16, §17): the shape, strides, box and
// im2col parameters reach the kernel; malformed
// bindings are refused at launch with KILN_ERROR_INVALID_LAUNCH naming the
// parameter; constructors given something else make a kiln_arg that the
// launch refuses as malformed.
//
//===----------------------------------------------------------------------===//

#include "CAPITestSupport.h"

#include <cstring>
#include <string>
#include <vector>

using namespace kiln::capi::test;

namespace {

constexpr const char *MetaText = R"(
kernel @meta cube_dim(1) (%t: buffer<u32, read>, %m: tensor_map<u32, read>,
                          %out: buffer<u32, write>) {
  %r = rank %t : u32
  %l = tensor_len %t : u32
  %s0 = shape %t, 0:u32 : u32
  %st0 = stride %t, 0:u32 : u32
  %m0 = shape %m, 0:u32 : u32
  %bar = barrier_cube 1:u32
  %tile = shared u32[4]
  tma_load %bar, %tile, 0:u32, %m, 1:i32, 1:i32
  %tok = barrier_arrive_tx %bar, 1:u32, 16:u32 : u32
  barrier_wait %bar, %tok
  %v = load %tile[3] : u32
  store %out[0], %r
  store %out[1], %l
  store %out[2], %s0
  store %out[3], %st0
  store %out[4], %m0
  store %out[5], %v
}
)";

class CAPITensorTest : public ::testing::Test {
protected:
  void SetUp() override {
    D = memoryDevice();
    K = loadKernel(D, MetaText);
    ASSERT_NE(K, nullptr);
    for (kiln_buffer *B : {&In, &Map, &Out})
      ASSERT_KILN_OK(kiln_buffer_allocate(64 * 4, B));
    void *Data = nullptr;
    ASSERT_KILN_OK(kiln_buffer_data(Map, &Data));
    for (uint32_t I = 0; I < 64; ++I)
      static_cast<uint32_t *>(Data)[I] = I;
  }
  void TearDown() override {
    for (kiln_buffer B : {In, Map, Out})
      kiln_buffer_destroy(B);
    kiln_kernel_destroy(K);
    kiln_device_destroy(D);
  }
  kiln_arg view(kiln_buffer B) {
    return kiln_arg_buffer(B, kiln_scalar(KILN_U32), KILN_ACCESS_READ_WRITE);
  }
  /// A 8 x 8 tensor map with a 2 x 2 box.
  kiln_arg map() {
    const uint64_t Shape[] = {8, 8}, Box[] = {2, 2};
    return kiln_arg_tensor_map(kiln_arg_tensor(view(Map), 2, Shape, 0, nullptr),
                               2, Box);
  }
  kiln_status launch(kiln_arg T, kiln_arg M) {
    kiln_arg Args[] = {T, M, view(Out)};
    return kiln_device_launch(D, K, dim(1), Args, 3);
  }
  std::vector<uint32_t> out() {
    void *Data = nullptr;
    EXPECT_KILN_OK(kiln_buffer_data(Out, &Data));
    const uint32_t *P = static_cast<const uint32_t *>(Data);
    return std::vector<uint32_t>(P, P + 6);
  }
  kiln_device D = nullptr;
  kiln_kernel K = nullptr;
  kiln_buffer In = nullptr, Map = nullptr, Out = nullptr;
};

TEST_F(CAPITensorTest, ParameterInfoTellsTensorMaps) {
  kiln_parameter_info Info;
  ASSERT_KILN_OK(kiln_kernel_get_parameter(K, 0, &Info));
  EXPECT_TRUE(Info.is_buffer);
  EXPECT_FALSE(Info.is_tensor_map);
  ASSERT_KILN_OK(kiln_kernel_get_parameter(K, 1, &Info));
  EXPECT_TRUE(Info.is_buffer);
  EXPECT_TRUE(Info.is_tensor_map);
}

TEST_F(CAPITensorTest, ShapesStridesAndBoxesReachTheKernel) {
  const uint64_t Shape[] = {3, 4, 5}, Strides[] = {40, 10, 2};
  kiln_arg T = kiln_arg_tensor(view(In), 3, Shape, 3, Strides);
  EXPECT_EQ(T.kind, KILN_ARG_TENSOR);
  EXPECT_EQ(T.tensor.rank, 3u);
  ASSERT_KILN_OK(launch(T, map()));
  // The box at (1, 1) of the 8 x 8 map: its element (1, 1) is at (2, 2).
  EXPECT_EQ(out(), (std::vector<uint32_t>{3, 60, 3, 40, 8, 18}));
  // A plain buffer: rank 1, shape [64].
  ASSERT_KILN_OK(launch(view(In), map()));
  EXPECT_EQ(out(), (std::vector<uint32_t>{1, 64, 64, 1, 8, 18}));
}

TEST_F(CAPITensorTest, MalformedBindingsAreRefusedAtLaunch) {
  const uint64_t Two[] = {2, 3}, Big[] = {uint64_t(1) << 32};
  struct Case {
    kiln_arg T;
    const char *Message;
  } Cases[] = {
      {kiln_arg_tensor(view(In), 0, Two, 0, nullptr),
       "argument 0 (%t): a tensor binding has rank 1 to 8, got 0"},
      {kiln_arg_tensor(view(In), 2, Two, 1, Two),
       "argument 0 (%t): the shape has 2 dimension(s) but the strides 1; give "
       "one stride per dimension"},
      {kiln_arg_tensor(view(In), 1, Big, 0, nullptr),
       "argument 0 (%t): shape[0] = 4294967296 does not fit u32"},
  };
  for (const Case &C : Cases) {
    EXPECT_EQ(launch(C.T, map()), KILN_ERROR_INVALID_LAUNCH);
    EXPECT_TRUE(lastErrorHas(C.Message));
  }
  // A plain buffer for the tensor map parameter.
  EXPECT_EQ(launch(view(In), view(Map)), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(lastErrorHas("argument 1 (%m): a tensor_map parameter needs a "
                           "tensor map binding"));
  // A box of another rank.
  const uint64_t Shape[] = {8, 8}, Box[] = {2};
  kiln_arg M = kiln_arg_tensor_map(
      kiln_arg_tensor(view(Map), 2, Shape, 0, nullptr), 1, Box);
  EXPECT_EQ(launch(view(In), M), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(lastErrorHas("argument 1 (%m): the box has 1 dimension(s), the "
                           "tensor 2"));
}

TEST_F(CAPITensorTest, CountsPastTheArraysAreArgumentErrors) {
  // A count past its array names entries that are not there; 2^32 - 1 once
  // made and zeroed 32 GiB before the launch said "rank 1 to 8".
  const uint64_t Nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  kiln_arg T = kiln_arg_tensor(view(In), 9, Nine, 9, Nine);
  EXPECT_EQ(launch(T, map()), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(
      lastErrorHas("kiln_device_launch: args[0].tensor.rank is 9, more than "
                   "KILN_MAX_TENSOR_RANK (8)"));
  T.tensor.rank = UINT32_MAX;
  EXPECT_EQ(launch(T, map()), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("args[0].tensor.rank is 4294967295, more than "
                           "KILN_MAX_TENSOR_RANK (8)"));
  T = kiln_arg_tensor(view(In), SIZE_MAX, Nine, 0, nullptr);
  EXPECT_EQ(T.tensor.rank, UINT32_MAX);
  EXPECT_EQ(launch(T, map()), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("args[0].tensor.rank is 4294967295"));
  T = kiln_arg_tensor(view(In), 2, Nine, 2, Nine);
  T.tensor.stride_count = UINT32_MAX;
  EXPECT_EQ(launch(T, map()), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("args[0].tensor.stride_count is 4294967295"));
  kiln_arg M = map();
  M.tensor.box_rank = UINT32_MAX;
  EXPECT_EQ(launch(view(In), M), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("args[1].tensor.box_rank is 4294967295"));
  // A plain tensor's box_rank is not read.
  T = kiln_arg_tensor(view(In), 2, Nine, 0, nullptr);
  T.tensor.box_rank = UINT32_MAX;
  EXPECT_KILN_OK(launch(T, map()));
}

TEST_F(CAPITensorTest, ConstructorsGivenSomethingElseMakeAMalformedArg) {
  const uint64_t Shape[] = {4};
  EXPECT_EQ(kiln_arg_tensor(kiln_arg_u32(1), 1, Shape, 0, nullptr).kind,
            KILN_ARG_NONE);
  EXPECT_EQ(kiln_arg_tensor(view(In), 1, nullptr, 0, nullptr).kind,
            KILN_ARG_NONE);
  EXPECT_EQ(kiln_arg_tensor_map(view(In), 1, Shape).kind, KILN_ARG_NONE);
  kiln_arg Bad = kiln_arg_tensor_map(view(In), 1, Shape);
  EXPECT_EQ(launch(Bad, map()), KILN_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorHas("args[0].kind is 0"));
}

/// A 3-D (one spatial dimension) im2col load: 6 pixels of 2 channels from
/// (n, w, c) = (0, -1, 1) of a 2 x 3 x 3 tensor holding 1..18, the pixel
/// box [-1, 3 - 1 + 0] per image, so the column runs into image 1.
constexpr const char *Im2colText = R"(
kernel @im2col cube_dim(1) (%m: tensor_map<u32, read, im2col>,
                            %out: buffer<u32, write>) {
  %bar = barrier_cube 1:u32
  %tile = shared u32[12]
  tma_load_im2col %bar, %tile, 0:u32, %m, 0:i32, -1:i32, 1:i32 offsets 0:u16
  %tok = barrier_arrive_tx %bar, 1:u32, 48:u32 : u32
  barrier_wait %bar, %tok
  for %i = 0:u32 to 12:u32 {
    %v = load %tile[%i] : u32
    store %out[%i], %v
  }
}
)";

TEST(CAPIIm2colTest, ParametersReachTheKernelAndBadOnesAreRefused) {
  kiln_device D = memoryDevice();
  kiln_kernel K = loadKernel(D, Im2colText);
  ASSERT_NE(K, nullptr);
  kiln_parameter_info Info;
  ASSERT_KILN_OK(kiln_kernel_get_parameter(K, 0, &Info));
  EXPECT_TRUE(Info.is_tensor_map);
  EXPECT_TRUE(Info.is_im2col);
  ASSERT_KILN_OK(kiln_kernel_get_parameter(K, 1, &Info));
  EXPECT_FALSE(Info.is_im2col);
  kiln_buffer Map = nullptr, Out = nullptr;
  ASSERT_KILN_OK(kiln_buffer_allocate(18 * 4, &Map));
  ASSERT_KILN_OK(kiln_buffer_allocate(12 * 4, &Out));
  void *Data = nullptr;
  ASSERT_KILN_OK(kiln_buffer_data(Map, &Data));
  for (uint32_t I = 0; I < 18; ++I)
    static_cast<uint32_t *>(Data)[I] = I + 1;
  auto View = [](kiln_buffer B) {
    return kiln_arg_buffer(B, kiln_scalar(KILN_U32), KILN_ACCESS_READ_WRITE);
  };
  const uint64_t Shape[] = {2, 3, 3};
  auto Im2col = [&](size_t Spatial, const int32_t *Lower, const int32_t *Upper,
                    uint32_t Channels, uint32_t Pixels) {
    return kiln_arg_tensor_map_im2col(
        kiln_arg_tensor(View(Map), 3, Shape, 0, nullptr), Spatial, Lower, Upper,
        Channels, Pixels);
  };
  auto Launch = [&](kiln_arg M) {
    kiln_arg Args[] = {M, View(Out)};
    return kiln_device_launch(D, K, dim(1), Args, 2);
  };
  const int32_t Lower[] = {-1}, Upper[] = {0};
  kiln_arg M = Im2col(1, Lower, Upper, 2, 6);
  EXPECT_EQ(M.kind, KILN_ARG_TENSOR_MAP_IM2COL);
  ASSERT_KILN_OK(Launch(M));
  ASSERT_KILN_OK(kiln_buffer_data(Out, &Data));
  const uint32_t *P = static_cast<const uint32_t *>(Data);
  // Image 0 at w = -1, 0, 1, 2 (channels 1 and 2; w = -1 outside), then
  // image 1 at w = -1, 0.
  EXPECT_EQ(std::vector<uint32_t>(P, P + 12),
            (std::vector<uint32_t>{0, 0, 2, 3, 5, 6, 8, 9, 0, 0, 11, 12}));

  struct Case {
    kiln_arg A;
    const char *Message;
  };
  const int32_t Far[] = {-40000}, Two[] = {0, 0};
  const uint64_t Box[] = {1, 1, 1};
  const Case Cases[] = {
      {Im2col(1, Far, Upper, 2, 6),
       "argument 0 (%m): pixel_box_lower_corner[0] = -40000: a corner is "
       "-32768 to 32767"},
      {Im2col(2, Two, Two, 2, 6),
       "argument 0 (%m): pixel_box_lower_corner has 2 entry(ies), the tensor "
       "1 spatial dimension(s) (rank - 2)"},
      {Im2col(1, Lower, Upper, 0, 6),
       "argument 0 (%m): channels_per_pixel = 0: it is 1 to 256"},
      {Im2col(1, Lower, Upper, 2, 1025),
       "argument 0 (%m): pixels_per_column = 1025: it is 1 to 1024"},
      {kiln_arg_tensor_map(kiln_arg_tensor(View(Map), 3, Shape, 0, nullptr), 3,
                           Box),
       "argument 0 (%m): an im2col tensor map takes no box"},
  };
  for (const Case &C : Cases) {
    EXPECT_EQ(Launch(C.A), KILN_ERROR_INVALID_LAUNCH);
    EXPECT_TRUE(lastErrorHas(C.Message));
  }
  // Im2col parameters for a buffer parameter.
  kiln_arg Args[] = {M, M};
  EXPECT_EQ(kiln_device_launch(D, K, dim(1), Args, 2),
            KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(lastErrorHas("argument 1 (%out): an im2col tensor map binding "
                           "is bound to a buffer parameter"));
  // Constructors given something else make a malformed kiln_arg.
  EXPECT_EQ(kiln_arg_tensor_map_im2col(View(Map), 1, Lower, Upper, 2, 6).kind,
            KILN_ARG_NONE);
  EXPECT_EQ(Im2col(1, nullptr, Upper, 2, 6).kind, KILN_ARG_NONE);
  kiln_buffer_destroy(Map);
  kiln_buffer_destroy(Out);
  kiln_kernel_destroy(K);
  kiln_device_destroy(D);
}

TEST_F(CAPITensorTest, ATiledMapRefusesIm2colParameters) {
  const uint64_t Shape[] = {8, 8};
  const int32_t Corner[] = {0};
  kiln_arg M = kiln_arg_tensor_map_im2col(
      kiln_arg_tensor(view(Map), 2, Shape, 0, nullptr), 0, Corner, Corner, 1,
      1);
  EXPECT_EQ(launch(view(In), M), KILN_ERROR_INVALID_LAUNCH);
  EXPECT_TRUE(lastErrorHas("argument 1 (%m): a tiled tensor map takes no "
                           "im2col parameters"));
}

} // namespace
