//===- TypeTest.cpp - Types and the operation list ------------------------===//

#include "kiln/IR/Operation.h"
#include "kiln/IR/Type.h"

#include "gtest/gtest.h"

using namespace kiln;

TEST(TypeTest, NamesRoundTrip) {
  for (unsigned K = 0; K <= unsigned(LastScalarKind); ++K) {
    auto Kind = ScalarKind(K);
    EXPECT_EQ(parseScalarName(scalarName(Kind)), Kind);
  }
  EXPECT_EQ(Type::line(ScalarKind::F32, 4).str(), "vec<4 x f32>");
  EXPECT_NE(Type::line(ScalarKind::F32, 1), Type::scalar(ScalarKind::F32));
  EXPECT_EQ(Type::line(ScalarKind::F32, 3).storeSize(), 12u);
}

TEST(TypeTest, EveryOperationNameParsesBack) {
#define KILN_OP(Enum, Name, Class)                                             \
  EXPECT_EQ(parseOpName(Name), OpKind::Enum);                                  \
  EXPECT_EQ(opName(OpKind::Enum), Name);
#include "kiln/IR/Ops.def"
  EXPECT_FALSE(parseOpName("frobnicate"));
}
