//===- MinifloatTest.cpp - Minifloat types, literals and the builder ------===//

#include "kiln/IR/Builder.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Literal.h"
#include "kiln/IR/Minifloat.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kiln;

namespace {

const ScalarKind Kinds[] = {ScalarKind::F8E4M3, ScalarKind::F8E5M2,
                            ScalarKind::F6E2M3, ScalarKind::F6E3M2,
                            ScalarKind::F4E2M1, ScalarKind::F4E2M1X2,
                            ScalarKind::UE8M0};

std::string literalText(uint64_t Bits, ScalarKind Kind) {
  return printLiteral(Bits, Kind);
}

uint64_t parsed(llvm::StringRef Text, ScalarKind Kind) {
  llvm::Expected<uint64_t> Bits = parseLiteral(Text, Kind);
  if (!Bits) {
    ADD_FAILURE() << Text.str() << ": " << llvm::toString(Bits.takeError());
    return ~uint64_t(0);
  }
  return *Bits;
}

std::string parseError(llvm::StringRef Text, ScalarKind Kind) {
  llvm::Expected<uint64_t> Bits = parseLiteral(Text, Kind);
  if (Bits) {
    ADD_FAILURE() << Text.str() << " parsed as " << *Bits;
    return "";
  }
  return llvm::toString(Bits.takeError());
}

TEST(Minifloat, TypesAreOneByteStorageTypes) {
  for (ScalarKind K : Kinds) {
    SCOPED_TRACE(scalarName(K).str());
    EXPECT_EQ(parseScalarName(scalarName(K)), K);
    EXPECT_EQ(byteSize(K), 1u);
    EXPECT_TRUE(isMinifloat(K));
    EXPECT_FALSE(isFloat(K));
    EXPECT_FALSE(isInteger(K));
    EXPECT_EQ(Type::line(K, 4).storeSize(), 4u);
  }
  EXPECT_EQ(Type::line(ScalarKind::F6E2M3, 3).str(), "vec<3 x f6e2m3>");
  EXPECT_FALSE(isMinifloat(ScalarKind::F64));
  EXPECT_FALSE(isMinifloat(ScalarKind::U8));
}

TEST(Minifloat, EveryCodeEncodesBackToItself) {
  for (ScalarKind K : Kinds) {
    if (K == ScalarKind::F4E2M1X2)
      continue;
    const MinifloatFormat &F = minifloatFormat(K);
    for (unsigned Code = 0; Code < (1u << F.Bits); ++Code) {
      double V = decodeMinifloat(Code, K);
      uint8_t Back = encodeMinifloat(V, K);
      if (std::isnan(V)) // NaN comes back as the canonical NaN, sign kept
        EXPECT_TRUE(std::isnan(decodeMinifloat(Back, K)));
      else if (std::isinf(V)) // a cast saturates infinities
        EXPECT_EQ(Back, F.MaxCode | (Code & 0x80)) << scalarName(K).str();
      else
        EXPECT_EQ(Back, Code) << scalarName(K).str() << " " << V;
    }
  }
}

TEST(Minifloat, FormatsFollowTheSpecs) {
  EXPECT_EQ(decodeMinifloat(0x7E, ScalarKind::F8E4M3), 448.0);
  EXPECT_TRUE(std::isnan(decodeMinifloat(0xFF, ScalarKind::F8E4M3)));
  EXPECT_EQ(decodeMinifloat(0x01, ScalarKind::F8E4M3), std::ldexp(1.0, -9));
  EXPECT_EQ(decodeMinifloat(0x7B, ScalarKind::F8E5M2), 57344.0);
  EXPECT_EQ(decodeMinifloat(0xFC, ScalarKind::F8E5M2), -INFINITY);
  EXPECT_EQ(decodeMinifloat(0x1F, ScalarKind::F6E2M3), 7.5);
  EXPECT_EQ(decodeMinifloat(0x3F, ScalarKind::F6E3M2), -28.0);
  EXPECT_EQ(decodeMinifloat(0x7, ScalarKind::F4E2M1), 6.0);
  EXPECT_EQ(decodeMinifloat(0x00, ScalarKind::UE8M0), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(decodeMinifloat(0xFF, ScalarKind::UE8M0)));
  // Ties to even, saturation, NaN, ue8m0 rounding up.
  EXPECT_EQ(encodeMinifloat(464.0, ScalarKind::F8E4M3), 0x7E);
  EXPECT_EQ(encodeMinifloat(-INFINITY, ScalarKind::F8E4M3), 0xFE);
  EXPECT_EQ(encodeMinifloat(INFINITY, ScalarKind::F8E5M2), 0x7B);
  EXPECT_EQ(encodeMinifloat(-NAN, ScalarKind::F8E5M2), 0xFE);
  EXPECT_EQ(encodeMinifloat(NAN, ScalarKind::F6E2M3), 0x1F);
  EXPECT_EQ(encodeMinifloat(2.5, ScalarKind::F4E2M1), 0x4);
  EXPECT_EQ(encodeMinifloat(0.25, ScalarKind::F4E2M1), 0x0);
  EXPECT_EQ(encodeMinifloat(-0.25, ScalarKind::F4E2M1), 0x8);
  EXPECT_EQ(encodeMinifloat(57312.0, ScalarKind::UE8M0), 0x8F);
  EXPECT_EQ(encodeMinifloat(-1.0, ScalarKind::UE8M0), 0x00);
  EXPECT_EQ(encodeMinifloat(1e300, ScalarKind::UE8M0), 0xFE);
  EXPECT_EQ(encodeMinifloat(INFINITY, ScalarKind::UE8M0), 0xFE);
}

TEST(Minifloat, LiteralsRoundTrip) {
  EXPECT_EQ(parsed("0.3", ScalarKind::F8E4M3), 0x2Au); // 0.3125
  EXPECT_EQ(literalText(0x2A, ScalarKind::F8E4M3), "0.3125");
  EXPECT_EQ(parsed("1000", ScalarKind::F8E4M3), 0x7Eu);
  EXPECT_EQ(parsed("-nan", ScalarKind::F8E4M3), 0xFFu);
  EXPECT_EQ(literalText(0x7F, ScalarKind::F8E4M3), "nan");
  EXPECT_EQ(literalText(0xFF, ScalarKind::F8E4M3), "0xff");
  EXPECT_EQ(parsed("-inf", ScalarKind::F8E5M2), 0xFCu);
  EXPECT_EQ(literalText(0xFC, ScalarKind::F8E5M2), "-inf");
  EXPECT_EQ(literalText(0x80, ScalarKind::F8E5M2), "-0.0");
  EXPECT_EQ(parsed("0x2c", ScalarKind::F4E2M1X2), 0x2Cu);
  EXPECT_EQ(literalText(0x2C, ScalarKind::F4E2M1X2), "0x2c");
  // A decimal just above a tie rounds up although its double is the tie.
  EXPECT_EQ(parsed("1.06250000000000000000001", ScalarKind::F8E4M3), 0x39u);
  EXPECT_EQ(parsed("1.0625", ScalarKind::F8E4M3), 0x38u);
  // ue8m0 rounds the exact decimal up.
  EXPECT_EQ(parsed("1.00000000000000000000001", ScalarKind::UE8M0), 0x80u);
  for (ScalarKind K : Kinds) {
    const MinifloatFormat &F = minifloatFormat(K);
    unsigned Codes = K == ScalarKind::F4E2M1X2 ? 256 : 1u << F.Bits;
    for (unsigned Code = 0; Code < Codes; ++Code) {
      std::string Text = literalText(Code, K);
      EXPECT_EQ(parsed(Text, K), Code) << scalarName(K).str() << " " << Text;
    }
  }
  EXPECT_EQ(parseError("nan", ScalarKind::F6E2M3), "'f6e2m3' has no NaN");
  EXPECT_EQ(parseError("inf", ScalarKind::F8E4M3),
            "'f8e4m3' has no infinity");
  EXPECT_EQ(parseError("0x40", ScalarKind::F6E3M2),
            "hex literal '0x40' does not fit in 6 bits of 'f6e3m2'");
  EXPECT_EQ(parseError("-nan", ScalarKind::UE8M0),
            "'ue8m0' is unsigned: '-nan'");
}

TEST(Minifloat, BuilderKernelVerifiesAndPrints) {
  KernelBuilder B("pack");
  B.setCubeDim({32});
  ValueId In = B.addBuffer("in", Type::line(ScalarKind::F32, 8),
                           AccessKind::Read);
  ValueId Out = B.addBuffer("out", Type::line(ScalarKind::F8E4M3, 8),
                            AccessKind::Write);
  ValueId Pairs = B.addBuffer("pairs", Type::line(ScalarKind::F4E2M1X2, 4),
                              AccessKind::Write);
  ValueId I = B.builtin(OpKind::AbsolutePos);
  ValueId X = B.load(In, I);
  ValueId C = B.cast(X, Type::line(ScalarKind::F8E4M3, 8));
  ValueId Big = B.splat(lit::minifloat(ScalarKind::F8E4M3, 300.0), 8);
  ValueId Keep = B.select(B.op(OpKind::Lt, {I, lit::u32(4)}), C, Big);
  B.store(Out, I, Keep);
  B.store(Pairs, I, B.cast(X, Type::line(ScalarKind::F4E2M1X2, 4)));
  llvm::Expected<IRKernel> K = B.finish();
  ASSERT_TRUE(bool(K)) << llvm::toString(K.takeError());
  llvm::Error E = verifyKernel(*K, DeviceLimits(), "");
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  std::string Text = printKernel(*K);
  EXPECT_NE(Text.find("%6 = cast %1 : vec<4 x f4e2m1x2>"), std::string::npos)
      << Text;
  EXPECT_NE(Text.find("splat 288.0:f8e4m3 : vec<8 x f8e4m3>"),
            std::string::npos)
      << Text;
}

TEST(Minifloat, BuilderArithmeticIsRefused) {
  KernelBuilder B("bad");
  B.setCubeDim({1});
  ValueId X = B.addScalar("x", Type::scalar(ScalarKind::F8E5M2));
  B.op(OpKind::Add, {X, X});
  B.cast(X, Type::scalar(ScalarKind::F4E2M1X2));
  llvm::Expected<IRKernel> K = B.finish();
  ASSERT_TRUE(bool(K)) << llvm::toString(K.takeError());
  llvm::Error E = verifyKernel(*K, DeviceLimits(), "");
  ASSERT_TRUE(bool(E));
  std::string S = llvm::toString(std::move(E));
  EXPECT_NE(S.find("add does not take 'f8e5m2': minifloat types are storage "
                   "types; cast to 'f32' to compute, bitcast to compare bits"),
            std::string::npos)
      << S;
  EXPECT_NE(S.find("cast from 'f8e5m2' to 'f4e2m1x2': each lane of "
                   "'f4e2m1x2' holds two values, so the other side must be a "
                   "line of 2 lanes"),
            std::string::npos)
      << S;
}

} // namespace
