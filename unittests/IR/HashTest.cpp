//===- HashTest.cpp - Stable kernel hashes and ids ------------------------===//

#include "Support/Kernels.h"

#include "kiln/IR/Hash.h"
#include "kiln/IR/Parser.h"

#include "gtest/gtest.h"

using namespace kiln;

namespace {

const char *Scale = "kernel @scale cube_dim(64) (%a: buffer<f32, read_write>) {\n"
                    "  %i = absolute_pos : u32\n"
                    "  %x = load %a[%i] : f32\n"
                    "  %y = mul %x, 2.0:f32 : f32\n"
                    "  store %a[%i], %y\n"
                    "}\n";

TEST(HashTest, GoldenValue) {
  // The hash of the canonical text is part of every stored kernel's key:
  // it must not change between processes, runs or machines. The value was
  // checked against the reference xxHash library (XXH3_64bits of the text).
  IRKernel K = test::parseOneKernel(Scale, "h.kiln");
  EXPECT_EQ(kernelIdFromIR(K), "scale-91b5812487edf0a0");
}

TEST(HashTest, SameTextSameHashAnyFormatting) {
  IRKernel A = test::parseOneKernel(Scale, "h.kiln");
  IRKernel B = test::parseOneKernel(
      "// comment\nkernel   @scale cube_dim( 64 )(%a: buffer<f32,read_write>){"
      "%i = absolute_pos:u32 %x = load %a[%i]:f32 "
      "%y = mul %x, 2:f32 : f32 store %a[%i], %y}",
      "h.kiln");
  EXPECT_EQ(hashKernel(A), hashKernel(B));
}

TEST(HashTest, ChangesWithTheKernel) {
  IRKernel A = test::parseOneKernel(Scale, "h.kiln");
  std::string Other = Scale;
  Other.replace(Other.find("2.0:f32"), 7, "3.0:f32");
  EXPECT_NE(hashKernel(A), hashKernel(test::parseOneKernel(Other, "h.kiln")));
  std::string Dim = Scale;
  Dim.replace(Dim.find("cube_dim(64)"), 12, "cube_dim(64, 1)");
  EXPECT_NE(hashKernel(A), hashKernel(test::parseOneKernel(Dim, "h.kiln")));
  std::string Id = kernelIdFromIR(A);
  ASSERT_EQ(Id.size(), std::string("scale-").size() + 16);
  EXPECT_EQ(Id.find_first_not_of("0123456789abcdef", 6), std::string::npos);
}

} // namespace
