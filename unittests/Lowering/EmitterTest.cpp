//===- EmitterTest.cpp - The emitters of LoweringImpl.h, each alone -------===//
//
// The emitter classes share a LoweringContext; here they are wired around a
// bare function so that one of them can be run and its output inspected
// (docs/Lowering.md, "Structure"). The last test goes through the whole
// lowering (LoweringHarness.h) and checks the shape a construct leaves.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"
#include "LoweringImpl.h"
#include "PassTestUtil.h"

#include "llvm/Analysis/ConstantFolding.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Verifier.h"

using namespace kiln;
using namespace kiln::lowering;
using namespace kiln::test;

namespace {

/// The emitters of one kernel, as the driver wires them, around an empty
/// function `void f()` whose entry block is the insert point. No pass has
/// run: the scratch layout is empty (no return flags).
struct Emitters {
  LoweringContext Cx;
  TypeLowering Types{Cx};
  AliasScopes Scopes{Cx};
  UnitLoops Pos{Cx, Scopes, Memory};
  ValueTable Values{Cx, Types, Pos, Scalar, Memory};
  ScalarEmitter Scalar{Cx, Types, Values, Pos};
  MemoryEmitter Memory{Cx, Types, Scopes, Pos, Values, Scalar};

  Emitters(const IRKernel &K, llvm::LLVMContext &Ctx) : Cx(K, {}, {}, Ctx) {
    Cx.M = std::make_unique<llvm::Module>("emitters", Ctx);
    auto *FT = llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx), false);
    Cx.F = llvm::Function::Create(FT, llvm::GlobalValue::ExternalLinkage, "f",
                                  Cx.M.get());
    Cx.EntryBB = Cx.newBlock("entry");
    Cx.B.SetInsertPoint(Cx.EntryBB);
  }
  ~Emitters() { llvm::consumeError(std::move(Cx.Err)); }
  llvm::Constant *i32(int64_t V) {
    return llvm::ConstantInt::get(Cx.I32, static_cast<uint64_t>(V), true);
  }
};

const Type U32 = Type::scalar(ScalarKind::U32);
const Type I32 = Type::scalar(ScalarKind::I32);

/// The integer value of \p V, which must have folded to a constant.
int64_t folded(llvm::Value *V) {
  auto *C = llvm::dyn_cast_or_null<llvm::ConstantInt>(V);
  EXPECT_TRUE(C) << "not a constant";
  return C ? C->getSExtValue() : -999;
}

TEST(EmitterTest, IntegerDivisionAndShiftsNeverTrap) {
  Module M = parseVerified("kernel @k cube_dim(1) () {\n}\n");
  llvm::LLVMContext Ctx;
  Emitters E(M.Kernels.at(0), Ctx);
  ScalarEmitter &S = E.Scalar;
  // On constants the builder folds what the emitter builds: the values of
  // docs/LangRef.md §5 come out directly.
  EXPECT_EQ(folded(S.emitBinary(OpKind::Div, U32, E.i32(7), E.i32(0))), 0);
  EXPECT_EQ(folded(S.emitBinary(OpKind::Rem, U32, E.i32(7), E.i32(0))), 0);
  EXPECT_EQ(folded(S.emitBinary(OpKind::Div, I32, E.i32(-7), E.i32(2))), -3);
  EXPECT_EQ(folded(S.emitBinary(OpKind::Rem, I32, E.i32(-7), E.i32(2))), -1);
  EXPECT_EQ(folded(S.emitBinary(OpKind::Div, I32, E.i32(INT32_MIN), E.i32(-1))),
            INT32_MIN);
  EXPECT_EQ(folded(S.emitBinary(OpKind::Rem, I32, E.i32(INT32_MIN), E.i32(-1))),
            0);
  // Shift amounts are taken modulo the width.
  EXPECT_EQ(folded(S.emitBinary(OpKind::Shl, U32, E.i32(1), E.i32(33))), 2);
  EXPECT_EQ(folded(S.emitBinary(OpKind::Shr, I32, E.i32(-8), E.i32(34))), -2);
  // mul_hi: the high half of the double-width product.
  EXPECT_EQ(
      folded(S.emitBinary(OpKind::MulHi, U32, E.i32(0x40000000), E.i32(8))), 2);
  EXPECT_FALSE(E.Cx.Err);
}

TEST(EmitterTest, SaturatingAddSubClampToTheType) {
  Module M = parseVerified("kernel @k cube_dim(1) () {\n}\n");
  llvm::LLVMContext Ctx;
  Emitters E(M.Kernels.at(0), Ctx);
  ScalarEmitter &S = E.Scalar;
  // The builder leaves intrinsic calls alone; LLVM's constant folder gives
  // the value the call computes.
  auto Sat = [&](OpKind Kind, Type T, int64_t A, int64_t B) -> int64_t {
    auto *Call = llvm::dyn_cast_or_null<llvm::IntrinsicInst>(
        S.emitBinary(Kind, T, E.i32(A), E.i32(B)));
    EXPECT_TRUE(Call) << "not an intrinsic call";
    if (!Call)
      return -999;
    llvm::Constant *Args[] = {E.i32(A), E.i32(B)};
    return folded(
        llvm::ConstantFoldCall(Call, Call->getCalledFunction(), Args));
  };
  EXPECT_EQ(Sat(OpKind::AddSat, I32, INT32_MAX, 1), INT32_MAX);
  EXPECT_EQ(Sat(OpKind::SubSat, I32, INT32_MIN, 1), INT32_MIN);
  EXPECT_EQ(Sat(OpKind::AddSat, I32, -5, 3), -2);
  // Unsigned: 0xffffffff (read back sign-extended as -1) and 0.
  EXPECT_EQ(Sat(OpKind::AddSat, U32, -2, 7), -1);
  EXPECT_EQ(Sat(OpKind::SubSat, U32, 1, 2), 0);
  EXPECT_EQ(Sat(OpKind::SubSat, U32, 9, 2), 7);
  EXPECT_FALSE(E.Cx.Err);
}

TEST(EmitterTest, UnitLoopNestRunsXInnermost) {
  Module M = parseVerified("kernel @k cube_dim(8, 4) () {\n}\n");
  llvm::LLVMContext Ctx;
  Emitters E(M.Kernels.at(0), Ctx);
  UnitLoops &Pos = E.Pos;
  llvm::Value *Unit = nullptr, *XYZ[3] = {};
  llvm::BasicBlock *Body = nullptr;
  Pos.emitNest([&] {
    Unit = Pos.Unit;
    std::copy(Pos.UnitXYZ, Pos.UnitXYZ + 3, XYZ);
    Body = E.Cx.B.GetInsertBlock();
    EXPECT_TRUE(Pos.AccessGroup);
  });
  E.Cx.B.CreateRetVoid();
  ASSERT_FALSE(llvm::verifyFunction(*E.Cx.F, &llvm::errs()));
  // Outside the nest there is no current unit.
  EXPECT_EQ(Pos.Unit, nullptr);
  EXPECT_EQ(Pos.AccessGroup, nullptr);

  // Two loops (z has size 1): y outside, x inside; u = x + y * 8.
  llvm::DominatorTree DT(*E.Cx.F);
  llvm::LoopInfo LI(DT);
  ASSERT_EQ(LI.getTopLevelLoops().size(), 1u);
  llvm::Loop *Outer = LI.getTopLevelLoops()[0];
  ASSERT_EQ(Outer->getSubLoops().size(), 1u);
  llvm::Loop *Inner = Outer->getSubLoops()[0];
  EXPECT_EQ(LI.getLoopFor(Body), Inner);
  ASSERT_EQ(Pos.InnerUnitHeaders.size(), 1u);
  EXPECT_EQ(Pos.InnerUnitHeaders[0], Inner->getHeader());
  EXPECT_EQ(XYZ[0]->getName(), "unit.x");
  EXPECT_EQ(XYZ[1]->getName(), "unit.y");
  EXPECT_EQ(folded(XYZ[2]), 0);
  EXPECT_EQ(llvm::cast<llvm::PHINode>(XYZ[0])->getParent(), Inner->getHeader());
  EXPECT_EQ(llvm::cast<llvm::PHINode>(XYZ[1])->getParent(), Outer->getHeader());
  EXPECT_EQ(Unit->getName(), "u");

  // Each loop: parallel accesses, no unrolling before vectorisation.
  for (llvm::Loop *L : {Outer, Inner}) {
    llvm::MDNode *ID = L->getLoopID();
    ASSERT_TRUE(ID);
    std::vector<std::string> Hints;
    for (const llvm::MDOperand &Op : ID->operands())
      if (auto *N = llvm::dyn_cast<llvm::MDNode>(Op.get()); N && N != ID)
        if (auto *S = llvm::dyn_cast<llvm::MDString>(N->getOperand(0)))
          Hints.push_back(S->getString().str());
    EXPECT_EQ(Hints, (std::vector<std::string>{
                         "llvm.loop.parallel_accesses",
                         "llvm.loop.mustprogress", "llvm.loop.unroll.disable",
                         "llvm.loop.vectorize.followup_vectorized"}));
  }
}

TEST(EmitterTest, BuiltinsReadTheNestAndTheCube) {
  Module M = parseVerified(R"(
kernel @k cube_dim(8, 4) () {
  %x = unit_pos.x : u32
  %y = unit_pos.y : u32
  %z = unit_pos.z : u32
  %d = cube_dim : u32
  %p = plane_dim : u32
}
)");
  const IRKernel &K = M.Kernels.at(0);
  llvm::LLVMContext Ctx;
  Emitters E(K, Ctx);
  E.Cx.PlaneDim = 16;
  auto Def = [&](llvm::StringRef Name) { return *opDefining(K, Name); };
  E.Pos.emitNest([&] {
    EXPECT_EQ(E.Pos.emitBuiltin(Def("x")), E.Pos.UnitXYZ[0]);
    EXPECT_EQ(E.Pos.emitBuiltin(Def("y")), E.Pos.UnitXYZ[1]);
    EXPECT_EQ(folded(E.Pos.emitBuiltin(Def("z"))), 0);
  });
  EXPECT_EQ(folded(E.Pos.emitBuiltin(Def("d"))), 32);
  EXPECT_EQ(folded(E.Pos.emitBuiltin(Def("p"))), 16);
}

/// The blocks of \p F whose name starts with \p Prefix.
unsigned countBlocks(const llvm::Function &F, llvm::StringRef Prefix) {
  unsigned N = 0;
  for (const llvm::BasicBlock &BB : F)
    N += BB.getName().starts_with(Prefix);
  return N;
}

TEST(EmitterTest, ForAtBothLevelsThroughTheLowering) {
  // The outer `for` holds a barrier: it runs at cube level around two unit
  // loops. The inner one is ordinary per-unit control flow.
  const char *Text = R"(
kernel @k cube_dim(4) (%o: buffer<u32, write>, %n: u32) {
  %u = unit_pos : u32
  for %t = 0:u32 to %n {
    store %o[%u], %t
    sync_cube
    for %j = 0:u32 to %u step 3:u32 {
      store %o[%j], %t
    }
  }
}
)";
  llvm::LLVMContext Ctx;
  LoweredModule L = lowerOnly(Text, Ctx);
  ASSERT_TRUE(L.Module);
  llvm::Function *F = L.Module->getFunction(L.Metadata.Symbol);
  ASSERT_TRUE(F);
  EXPECT_EQ(countBlocks(*F, "cube.for.end"), 1u);
  EXPECT_EQ(countBlocks(*F, "for.end"), 1u);
  EXPECT_EQ(countBlocks(*F, "for.latch"), 2u);
  // The inner latch, whose `k + 3` may pass the largest u32 below a
  // run-time bound, stops on overflow instead of wrapping; the outer one,
  // a step of 1 below its bound, cannot overflow and just adds.
  unsigned Overflow = 0;
  for (llvm::Instruction &I : llvm::instructions(*F))
    if (auto *II = llvm::dyn_cast<llvm::IntrinsicInst>(&I))
      Overflow += II->getIntrinsicID() == llvm::Intrinsic::uadd_with_overflow;
  EXPECT_EQ(Overflow, 1u);

  // Loops: the cube loop holds a unit loop (%u) and the cube-level for,
  // which holds the unit loops before and after the barrier; the second
  // holds the per-unit for.
  llvm::DominatorTree DT(*F);
  llvm::LoopInfo LI(DT);
  ASSERT_EQ(LI.getTopLevelLoops().size(), 1u);
  llvm::Loop *Cube = LI.getTopLevelLoops()[0];
  ASSERT_EQ(Cube->getSubLoops().size(), 2u);
  EXPECT_TRUE(Cube->getSubLoops()[0]->getSubLoops().empty());
  llvm::Loop *For = Cube->getSubLoops()[1];
  // The first unit loop (store %o[%u]) also has its twin without the
  // bounds check (LoopVersioning.h); the second does not (%j is not affine
  // in the unit).
  ASSERT_EQ(For->getSubLoops().size(), 3u);
  unsigned Twins = 0;
  for (llvm::Loop *L : For->getSubLoops())
    Twins += L->getHeader()->getName().ends_with(".inb");
  EXPECT_EQ(Twins, 1u);
  EXPECT_TRUE(For->getSubLoops()[0]->getSubLoops().empty());
  EXPECT_TRUE(For->getSubLoops()[1]->getSubLoops().empty());
  EXPECT_EQ(For->getSubLoops()[2]->getSubLoops().size(), 1u);
  // The cube-level induction variable is used by the unit loops directly.
  llvm::PHINode *T = &*For->getHeader()->phis().begin();
  EXPECT_EQ(T->getName().substr(0, 1), "k");
  unsigned UsesInUnitLoops = 0;
  for (llvm::User *U : T->users())
    if (auto *I = llvm::dyn_cast<llvm::Instruction>(U))
      UsesInUnitLoops += LI.getLoopDepth(I->getParent()) >= 3;
  EXPECT_GE(UsesInUnitLoops, 2u);
}

} // namespace
