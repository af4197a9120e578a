//===- AtomicRMWTest.cpp - Each read-modify-write atomic's atomicrmw ------===//
//
// rmwBinOp maps exactly the operations of class AtomicRMW, each to its own
// atomicrmw; every other operation gets none (it once fell through to
// exchange, so a new atomic without a mapping would have swapped values).
//
//===----------------------------------------------------------------------===//

#include "AtomicRMW.h"

#include "gtest/gtest.h"

using namespace kiln;
using namespace kiln::lowering;
using BO = llvm::AtomicRMWInst::BinOp;

namespace {

const OpKind AllKinds[] = {
#define KILN_OP(Enum, Name, Class) OpKind::Enum,
#include "kiln/IR/Ops.def"
};

TEST(AtomicRMW, OnlyReadModifyWriteAtomicsMap) {
  Type U32 = Type::scalar(ScalarKind::U32);
  for (OpKind K : AllKinds) {
    std::optional<BO> Bin = rmwBinOp(K, U32);
    EXPECT_EQ(Bin.has_value(), opClass(K) == OpClass::AtomicRMW)
        << opName(K).str();
    if (Bin && *Bin == BO::Xchg)
      EXPECT_EQ(K, OpKind::AtomicExchange)
          << opName(K).str() << " maps to exchange";
  }
}

TEST(AtomicRMW, EachAtomicHasItsOwnOperation) {
  Type I32 = Type::scalar(ScalarKind::I32);
  Type U32 = Type::scalar(ScalarKind::U32);
  Type F32 = Type::scalar(ScalarKind::F32);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicAdd, U32), BO::Add);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicAdd, F32), BO::FAdd);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicSub, U32), BO::Sub);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicSub, F32), BO::FSub);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicMin, I32), BO::Min);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicMin, U32), BO::UMin);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicMin, F32), BO::FMin);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicMax, I32), BO::Max);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicMax, U32), BO::UMax);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicMax, F32), BO::FMax);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicAnd, U32), BO::And);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicOr, U32), BO::Or);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicXor, U32), BO::Xor);
  EXPECT_EQ(rmwBinOp(OpKind::AtomicExchange, U32), BO::Xchg);
  EXPECT_FALSE(rmwBinOp(OpKind::AtomicCas, U32).has_value());
  EXPECT_FALSE(rmwBinOp(OpKind::AtomicLoad, U32).has_value());
  EXPECT_FALSE(rmwBinOp(OpKind::AtomicStore, U32).has_value());
}

} // namespace
