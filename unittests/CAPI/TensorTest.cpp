//===- TensorTest.cpp - Tensor bindings and tensor maps through the C API -===//
//
// kiln_arg_tensor and kiln_arg_tensor_map (docs/C-API.md, docs/LangRef.md
// §16, §17): the shape, strides and box reach the kernel; malformed
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
  const uint64_t Nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  const uint64_t Two[] = {2, 3}, Big[] = {uint64_t(1) << 32};
  struct Case {
    kiln_arg T;
    const char *Message;
  } Cases[] = {
      {kiln_arg_tensor(view(In), 0, Two, 0, nullptr),
       "argument 0 (%t): a tensor binding has rank 1 to 8, got 0"},
      {kiln_arg_tensor(view(In), 9, Nine, 9, Nine),
       "argument 0 (%t): a tensor binding has rank 1 to 8, got 9"},
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

} // namespace
