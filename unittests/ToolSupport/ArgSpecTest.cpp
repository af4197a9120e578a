//===- ArgSpecTest.cpp - kiln-run's argument text forms -------------------===//

#include "support/ArgSpec.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace kiln;

namespace {

std::string errorOf(llvm::Error E) { return llvm::toString(std::move(E)); }
template <typename T> std::string errorOf(llvm::Expected<T> R) {
  return R ? std::string("<no error>") : llvm::toString(R.takeError());
}

TEST(ArgSpec, Types) {
  EXPECT_EQ(*parseTypeText("f32"), Type::scalar(ScalarKind::F32));
  EXPECT_EQ(*parseTypeText("vec<4 x f32>"), Type::line(ScalarKind::F32, 4));
  EXPECT_EQ(*parseTypeText("vec< 16 x u8 >"), Type::line(ScalarKind::U8, 16));
  EXPECT_NE(errorOf(parseTypeText("f31")).find("unknown type"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTypeText("vec<5 x f32>")).find("lanes"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTypeText("vec<4 x q>")).find("element"),
            std::string::npos);
  EXPECT_NE(errorOf(parseTypeText("vec<4 x f32")).find("vec<N x T>"),
            std::string::npos);
}

TEST(ArgSpec, BufferSpecs) {
  auto S = parseBufferSpec("vec<4 x f32>[256]:zeros");
  ASSERT_TRUE(!!S) << errorOf(S.takeError());
  EXPECT_EQ(S->ElementType, Type::line(ScalarKind::F32, 4));
  EXPECT_EQ(S->Count, 256u);
  EXPECT_EQ(S->Init, BufferSpec::InitKind::Zeros);
  S = parseBufferSpec("i32[3]:fill=-7");
  ASSERT_TRUE(!!S);
  EXPECT_EQ(S->Init, BufferSpec::InitKind::Fill);
  EXPECT_EQ(S->Operand, "-7");
  EXPECT_EQ(parseBufferSpec("u8[1]:file=/x/y")->Operand, "/x/y");
  EXPECT_EQ(parseBufferSpec("f16[9]:iota")->Init, BufferSpec::InitKind::Iota);

  EXPECT_NE(errorOf(parseBufferSpec("f32[abc]:zeros")).find("element count"),
            std::string::npos);
  EXPECT_NE(errorOf(parseBufferSpec("f32[-1]:zeros")).find("element count"),
            std::string::npos);
  EXPECT_NE(errorOf(parseBufferSpec("f32[99999999999999999999]:zeros"))
                .find("element count"),
            std::string::npos);
  EXPECT_NE(errorOf(parseBufferSpec("f32[4]zeros")).find("':'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseBufferSpec("f32[4]:ones")).find("unknown contents"),
            std::string::npos);
  EXPECT_NE(errorOf(parseBufferSpec("u8[4]:fill=256"))
                .find("integer literal '256' out of range"),
            std::string::npos);
  EXPECT_NE(errorOf(parseBufferSpec("u8[4]:file=")).find("empty file"),
            std::string::npos);
  EXPECT_NE(errorOf(parseBufferSpec("f32:zeros")).find("TYPE[COUNT]"),
            std::string::npos);
}

TEST(ArgSpec, Values) {
  auto V = parseValueText("2.5", Type::scalar(ScalarKind::F32));
  ASSERT_TRUE(!!V);
  float F;
  std::memcpy(&F, V->data(), 4);
  EXPECT_EQ(F, 2.5f);
  V = parseValueText("0x3f800000", Type::scalar(ScalarKind::F32));
  std::memcpy(&F, V->data(), 4);
  EXPECT_EQ(F, 1.0f);
  V = parseValueText("-3", Type::scalar(ScalarKind::I16));
  ASSERT_EQ(V->size(), 2u);
  EXPECT_EQ((*V)[0], 0xfd);
  EXPECT_EQ((*V)[1], 0xff);
  V = parseValueText("true", Type::scalar(ScalarKind::Bool));
  ASSERT_EQ(V->size(), 1u);
  EXPECT_EQ((*V)[0], 1);
  V = parseValueText("1,2,3,4", Type::line(ScalarKind::U16, 4));
  ASSERT_EQ(V->size(), 8u);
  EXPECT_EQ((*V)[6], 4);
  EXPECT_NE(errorOf(parseValueText("1,x,3", Type::line(ScalarKind::U8, 3)))
                .find("lane 1: invalid u8 literal 'x'"),
            std::string::npos);
  V = parseValueText("[9]", Type::line(ScalarKind::U8, 3));
  ASSERT_TRUE(!!V);
  EXPECT_EQ(*V, (std::vector<uint8_t>{9, 9, 9}));

  EXPECT_NE(errorOf(parseValueText("2.5", Type::scalar(ScalarKind::U32)))
                .find("invalid u32 literal '2.5'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseValueText("-1", Type::scalar(ScalarKind::U8)))
                .find("integer literal '-1' out of range"),
            std::string::npos);
  EXPECT_NE(errorOf(parseValueText("yes", Type::scalar(ScalarKind::Bool)))
                .find("invalid bool literal 'yes'"),
            std::string::npos);
  EXPECT_NE(errorOf(parseValueText("1,2", Type::line(ScalarKind::F32, 4)))
                .find("2 lanes given"),
            std::string::npos);
}

TEST(ArgSpec, FillIotaAndFile) {
  auto B = createBuffer(*parseBufferSpec("vec<2 x i8>[200]:iota"));
  ASSERT_TRUE(!!B);
  const int8_t *P = B->as<int8_t>();
  EXPECT_EQ(P[0], 0);
  EXPECT_EQ(P[3], 3);
  EXPECT_EQ(P[2 * 100 + 1], int8_t(201)); // wraps modulo 2^8
  auto H = createBuffer(*parseBufferSpec("f16[3]:iota"));
  ASSERT_TRUE(!!H);
  EXPECT_EQ(H->as<uint16_t>()[2], 0x4000); // 2.0 in half
  auto F = createBuffer(*parseBufferSpec("vec<2 x f64>[3]:fill=1.5,-2"));
  ASSERT_TRUE(!!F);
  EXPECT_EQ(F->as<double>()[4], 1.5);
  EXPECT_EQ(F->as<double>()[5], -2.0);

  llvm::SmallString<128> Path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("argspec", "bin", Path));
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    uint32_t Data[3] = {7, 8, 9};
    OS.write(reinterpret_cast<const char *>(Data), sizeof(Data));
  }
  auto FB = createBuffer(*parseBufferSpec(("u32[3]:file=" + Path).str()));
  ASSERT_TRUE(!!FB) << errorOf(FB.takeError());
  EXPECT_EQ(FB->as<uint32_t>()[2], 9u);
  std::string Msg =
      errorOf(createBuffer(*parseBufferSpec(("u32[4]:file=" + Path).str())));
  EXPECT_NE(Msg.find("has 12 bytes, expected 4 elements of u32 (16 bytes)"),
            std::string::npos)
      << Msg;
  Msg = errorOf(createBuffer(*parseBufferSpec("u32[4]:file=/no/such/file")));
  EXPECT_NE(Msg.find("cannot read '/no/such/file'"), std::string::npos) << Msg;

  // A PATH that ends like a tensor suffix is taken whole when it names an
  // existing file; otherwise the suffix is a tensor binding's.
  std::string Odd = (Path + ":shape=3").str();
  ASSERT_FALSE(llvm::sys::fs::copy_file(Path, Odd));
  auto Whole = parseBufferSpec("u32[3]:file=" + Odd);
  ASSERT_TRUE(!!Whole) << errorOf(Whole.takeError());
  EXPECT_TRUE(Whole->Shape.empty());
  EXPECT_EQ(Whole->Operand, Odd);
  auto OddBuffer = createBuffer(*Whole);
  ASSERT_TRUE(!!OddBuffer) << errorOf(OddBuffer.takeError());
  EXPECT_EQ(OddBuffer->as<uint32_t>()[0], 7u);
  llvm::sys::fs::remove(Odd);
  auto Tensor = parseBufferSpec("u32[3]:file=" + Odd);
  ASSERT_TRUE(!!Tensor) << errorOf(Tensor.takeError());
  EXPECT_EQ(Tensor->Shape, (std::vector<uint64_t>{3}));
  EXPECT_EQ(Tensor->Operand, Path.str().str());
  llvm::sys::fs::remove(Path);
}

TEST(ArgSpec, FormatElements) {
  float F[4] = {1.0f, 0.1f, -2.5f, 3e38f};
  EXPECT_EQ(formatElement(&F[1], Type::scalar(ScalarKind::F32)), "0.1");
  std::string Line = formatElement(F, Type::line(ScalarKind::F32, 4));
  EXPECT_EQ(std::count(Line.begin(), Line.end(), ' '), 3) << Line;
  // A printed line is a value spec too: its lanes read back, spaces and all.
  auto LineBack = parseValueText(Line, Type::line(ScalarKind::F32, 4));
  ASSERT_TRUE(!!LineBack) << llvm::toString(LineBack.takeError());
  EXPECT_EQ(std::memcmp(LineBack->data(), F, sizeof(F)), 0);
  EXPECT_NE(errorOf(parseValueText("1 2 3", Type::line(ScalarKind::F32, 4)))
                .find("3 lanes given"),
            std::string::npos);
  // Printed floats read back to the same bits.
  for (float X : F) {
    auto Back = parseValueText(formatElement(&X, Type::scalar(ScalarKind::F32)),
                               Type::scalar(ScalarKind::F32));
    ASSERT_TRUE(!!Back);
    EXPECT_EQ(std::memcmp(Back->data(), &X, 4), 0);
  }
  auto F32Text = [](float X) {
    return formatElement(&X, Type::scalar(ScalarKind::F32));
  };
  EXPECT_EQ(F32Text(10.0f), "10");
  EXPECT_EQ(F32Text(11000.0f), "11000");
  EXPECT_EQ(F32Text(16777216.0f), "16777216");
  EXPECT_EQ(F32Text(1e20f), "1e+20");
  EXPECT_EQ(F32Text(1e-7f), "1e-07");
  EXPECT_EQ(F32Text(-0.0f), "-0");
  EXPECT_EQ(F32Text(1.0f / 3.0f), "0.33333334");
  EXPECT_EQ(F32Text(INFINITY), "inf");
  EXPECT_EQ(F32Text(-INFINITY), "-inf");
  EXPECT_EQ(F32Text(NAN), "nan");
  double D = 0.1 + 0.2;
  EXPECT_EQ(formatElement(&D, Type::scalar(ScalarKind::F64)),
            "0.30000000000000004");
  uint16_t Half = 0x3555; // 0.33325195 in f16
  EXPECT_EQ(formatElement(&Half, Type::scalar(ScalarKind::F16)), "0.3333");
  int64_t I = -5;
  EXPECT_EQ(formatElement(&I, Type::scalar(ScalarKind::I64)), "-5");
  uint8_t Bools[2] = {0, 1};
  EXPECT_EQ(formatElement(Bools, Type::line(ScalarKind::Bool, 2)),
            "false true");
}

TEST(ArgSpec, CubeCounts) {
  EXPECT_EQ(*parseCubeCount("7"), (std::array<uint32_t, 3>{7, 1, 1}));
  EXPECT_EQ(*parseCubeCount("2,3,4"), (std::array<uint32_t, 3>{2, 3, 4}));
  // A zero is a launch of no cubes (LangRef §2.1), not an error.
  EXPECT_EQ(*parseCubeCount("0"), (std::array<uint32_t, 3>{0, 1, 1}));
  EXPECT_EQ(*parseCubeCount("3,0"), (std::array<uint32_t, 3>{3, 0, 1}));
  EXPECT_NE(errorOf(parseCubeCount("1,2,3,4")).find("at most three"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCubeCount("4294967296")).find("not a number"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCubeCount("x")).find("not a number"),
            std::string::npos);
  EXPECT_NE(errorOf(parseCubeCount("")).find("not a number"),
            std::string::npos);
}

std::vector<ParamMetadata> params() {
  return {{"a", true, Type::scalar(ScalarKind::F32), AccessKind::Read},
          {"n", false, Type::scalar(ScalarKind::U32), AccessKind::ReadWrite}};
}

TEST(ArgSpec, BindArguments) {
  auto In = bindArguments(params(), {"%a=f32[4]:iota", "n=4"});
  ASSERT_TRUE(!!In) << errorOf(In.takeError());
  ASSERT_EQ(In->Bindings.size(), 2u);
  EXPECT_TRUE(In->Bindings[0].isBuffer());
  EXPECT_EQ(In->Bindings[0].bufferCount(), 4u);
  EXPECT_EQ(In->Bindings[0].bufferData(), In->Buffers[0].data());
  EXPECT_FALSE(In->Bindings[1].isBuffer());
  EXPECT_EQ(In->Bindings[1].valueSize(), 4u);

  auto Err = [](std::vector<std::string> A) {
    return errorOf(bindArguments(params(), A));
  };
  EXPECT_NE(Err({"a=f32[4]:zeros"}).find("missing --arg for parameter %n"),
            std::string::npos);
  EXPECT_NE(Err({"a=f32[4]:zeros", "n=1", "m=2"})
                .find("--arg m: the kernel has no parameter %m"),
            std::string::npos);
  EXPECT_NE(Err({"a=f32[4]:zeros", "n=1", "n=2"})
                .find("--arg n: parameter %n is given more than once"),
            std::string::npos);
  EXPECT_NE(
      Err({"a=i32[4]:zeros", "n=1"})
          .find("--arg a: %a is a buffer of f32, the buffer given holds i32"),
      std::string::npos);
  EXPECT_NE(Err({"a=2.5", "n=1"}).find("--arg a: %a is a buffer of f32"),
            std::string::npos);
  EXPECT_NE(Err({"a=f32[4]:zeros", "n=u32[1]:zeros"})
                .find("--arg n: %n is a value of type u32, not a buffer"),
            std::string::npos);
  EXPECT_NE(Err({"a=f32[4]:zeros", "n=-1"})
                .find("--arg n: integer literal '-1' out of range"),
            std::string::npos);
  EXPECT_NE(Err({"a", "n=1"}).find("expected NAME=SPEC"), std::string::npos);
}

} // namespace
