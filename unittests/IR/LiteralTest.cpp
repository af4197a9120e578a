//===- LiteralTest.cpp - Literal text to bits and back --------------------===//

#include "kiln/IR/Literal.h"

#include "gtest/gtest.h"

#include <limits>
#include <random>

using namespace kiln;

namespace {

uint64_t bits(llvm::StringRef Text, ScalarKind Kind) {
  llvm::Expected<uint64_t> B = parseLiteral(Text, Kind);
  if (!B) {
    ADD_FAILURE() << Text.str() << ": " << llvm::toString(B.takeError());
    return 0;
  }
  return *B;
}

std::string error(llvm::StringRef Text, ScalarKind Kind) {
  llvm::Expected<uint64_t> B = parseLiteral(Text, Kind);
  if (B) {
    ADD_FAILURE() << Text.str() << " parsed";
    return "";
  }
  return llvm::toString(B.takeError());
}

TEST(LiteralTest, Integers) {
  EXPECT_EQ(bits("-3", ScalarKind::I32), 0xfffffffdu);
  EXPECT_EQ(bits("-128", ScalarKind::I8), 0x80u);
  EXPECT_EQ(bits("255", ScalarKind::U8), 255u);
  EXPECT_EQ(bits("0xff", ScalarKind::U8), 255u);
  EXPECT_EQ(bits("18446744073709551615", ScalarKind::U64), ~uint64_t(0));
  EXPECT_EQ(bits("-9223372036854775808", ScalarKind::I64), uint64_t(1) << 63);
  EXPECT_EQ(error("128", ScalarKind::I8),
            "integer literal '128' out of range for 'i8'");
  EXPECT_EQ(error("-1", ScalarKind::U32),
            "integer literal '-1' out of range for 'u32'");
  EXPECT_EQ(error("0xffffffff", ScalarKind::I32),
            "integer literal '0xffffffff' out of range for 'i32'");
  EXPECT_EQ(error("99999999999999999999999", ScalarKind::U64),
            "integer literal '99999999999999999999999' out of range for 'u64'");
  EXPECT_EQ(error("1.5", ScalarKind::I32), "invalid i32 literal '1.5'");
  EXPECT_EQ(printLiteral(0xfffffffd, ScalarKind::I32), "-3");
  EXPECT_EQ(printLiteral(0x80, ScalarKind::I8), "-128");
  EXPECT_EQ(printLiteral(0xfffffffd, ScalarKind::U32), "4294967293");
}

TEST(LiteralTest, BoolsAndSpecials) {
  EXPECT_EQ(bits("true", ScalarKind::Bool), 1u);
  EXPECT_EQ(bits("false", ScalarKind::Bool), 0u);
  EXPECT_EQ(error("1", ScalarKind::Bool),
            "invalid bool literal '1': expected true or false");
  EXPECT_EQ(bits("inf", ScalarKind::F32), 0x7f800000u);
  EXPECT_EQ(bits("-inf", ScalarKind::F64), 0xfff0000000000000u);
  EXPECT_EQ(bits("nan", ScalarKind::F16), 0x7e00u);
  EXPECT_EQ(bits("nan", ScalarKind::BF16), 0x7fc0u);
  EXPECT_EQ(bits("-0.0", ScalarKind::F32), 0x80000000u);
  EXPECT_EQ(bits("0x3f800000", ScalarKind::F32), 0x3f800000u);
  EXPECT_EQ(error("0x1ffff", ScalarKind::F16),
            "hex literal '0x1ffff' does not fit in 16 bits of 'f16'");
  EXPECT_EQ(error("1.2.3", ScalarKind::F32), "invalid f32 literal '1.2.3'");
  EXPECT_EQ(printLiteral(0x7fc00000, ScalarKind::F32), "nan");
  EXPECT_EQ(printLiteral(0x7fc00001, ScalarKind::F32), "0x7fc00001");
  EXPECT_EQ(printLiteral(0xffc00000, ScalarKind::F32), "0xffc00000");
  EXPECT_EQ(printLiteral(0x80000000, ScalarKind::F32), "-0.0");
  EXPECT_EQ(printLiteral(0xff800000, ScalarKind::F32), "-inf");
}

TEST(LiteralTest, FloatsRoundCorrectly) {
  EXPECT_EQ(bits("0.1", ScalarKind::F32), 0x3dcccccdu);
  EXPECT_EQ(bits("0.1", ScalarKind::F64), 0x3fb999999999999au);
  EXPECT_EQ(bits("1", ScalarKind::F16), 0x3c00u);
  EXPECT_EQ(bits("65520", ScalarKind::F16), 0x7c00u); // rounds to inf
  EXPECT_EQ(bits("1e60", ScalarKind::F32), 0x7f800000u);
  EXPECT_EQ(bits("1.00390625", ScalarKind::BF16), 0x3f80u); // tie to even
  EXPECT_EQ(printLiteral(0x3dcccccd, ScalarKind::F32), "0.1");
  EXPECT_EQ(printLiteral(0x3f800000, ScalarKind::F32), "1.0");
  EXPECT_EQ(printLiteral(0x3fb999999999999a, ScalarKind::F64), "0.1");
  EXPECT_EQ(printLiteral(0x501502f9, ScalarKind::F32), "1e+10");
  EXPECT_EQ(printLiteral(0x0001, ScalarKind::F16), "6e-08");
}

TEST(LiteralTest, EveryPrintedFloatReadsBack) {
  std::mt19937_64 Rng(42);
  for (ScalarKind Kind : {ScalarKind::F16, ScalarKind::BF16, ScalarKind::F32,
                          ScalarKind::F64}) {
    unsigned Width = bitWidth(Kind);
    for (int I = 0; I < 20000; ++I) {
      uint64_t B = Rng();
      if (Width < 64)
        B &= (uint64_t(1) << Width) - 1;
      std::string Text = printLiteral(B, Kind);
      EXPECT_EQ(bits(Text, Kind), B) << Text;
      EXPECT_EQ(printLiteral(bits(Text, Kind), Kind), Text);
    }
  }
}

TEST(LiteralTest, CaseValues) {
  EXPECT_EQ(*parseCaseValue("-2"), CaseLabel(-2));
  EXPECT_EQ(*parseCaseValue("0x10"), CaseLabel(16));
  EXPECT_EQ(*parseCaseValue("-0"), CaseLabel(0));
  // Every value of i64 and of u64 is a label.
  EXPECT_EQ(*parseCaseValue("-9223372036854775808"),
            CaseLabel(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(*parseCaseValue("9223372036854775808"),
            CaseLabel::fromUnsigned(uint64_t(1) << 63));
  EXPECT_EQ(*parseCaseValue("18446744073709551615"),
            CaseLabel::fromUnsigned(~uint64_t(0)));
  EXPECT_EQ(*parseCaseValue("0xffffffffffffffff"),
            CaseLabel::fromUnsigned(~uint64_t(0)));
  EXPECT_NE(*parseCaseValue("18446744073709551615"), CaseLabel(-1));
  for (const char *Text : {"18446744073709551616", "-9223372036854775809",
                           "1.5", "0x", "--1"}) {
    llvm::Expected<CaseLabel> Bad = parseCaseValue(Text);
    ASSERT_FALSE(Bad) << Text;
    EXPECT_EQ(llvm::toString(Bad.takeError()),
              std::string("invalid case value '") + Text +
                  "': expected an integer from -2^63 to 2^64-1");
  }
}

TEST(LiteralTest, CaseLabelRangeAndText) {
  CaseLabel MaxU64 = CaseLabel::fromUnsigned(~uint64_t(0));
  CaseLabel MinusOne(-1);
  EXPECT_EQ(MaxU64.str(), "18446744073709551615");
  EXPECT_EQ(MinusOne.str(), "-1");
  EXPECT_EQ(CaseLabel(std::numeric_limits<int64_t>::min()).str(),
            "-9223372036854775808");
  EXPECT_TRUE(MinusOne < CaseLabel(0));
  EXPECT_TRUE(CaseLabel(std::numeric_limits<int64_t>::max()) <
              CaseLabel::fromUnsigned(uint64_t(1) << 63));
  // Both are the same 64 bits; each fits one signedness only.
  EXPECT_EQ(MaxU64.bits(), MinusOne.bits());
  EXPECT_TRUE(MaxU64.fits(64, /*Signed=*/false));
  EXPECT_FALSE(MaxU64.fits(64, /*Signed=*/true));
  EXPECT_FALSE(MinusOne.fits(64, /*Signed=*/false));
  EXPECT_TRUE(MinusOne.fits(64, /*Signed=*/true));
  EXPECT_TRUE(MinusOne.fits(8, /*Signed=*/true));
  EXPECT_FALSE(MaxU64.fits(32, /*Signed=*/false));
  EXPECT_TRUE(CaseLabel(4294967295).fits(32, /*Signed=*/false));
  EXPECT_FALSE(CaseLabel(4294967296).fits(32, /*Signed=*/false));
  EXPECT_TRUE(CaseLabel(-128).fits(8, /*Signed=*/true));
  EXPECT_FALSE(CaseLabel(-129).fits(8, /*Signed=*/true));
  EXPECT_TRUE(CaseLabel(127).fits(8, /*Signed=*/true));
  EXPECT_FALSE(CaseLabel(128).fits(8, /*Signed=*/true));
  EXPECT_FALSE(CaseLabel::fromUnsigned(uint64_t(1) << 63).fits(64, true));
  EXPECT_TRUE(CaseLabel(std::numeric_limits<int64_t>::min()).fits(64, true));
}

} // namespace
