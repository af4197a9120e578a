//===- VerifierTest.cpp - Types, definitions, jumps and access modes ------===//

#include "Support/RawKernelBuilder.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace kiln;
using namespace kiln::test;
using testing::ElementsAre;
using testing::IsEmpty;

namespace {

using KB = RawKernelBuilder;

TEST(VerifierTest, VectorAddPasses) {
  KB B("vadd", 256);
  ValueId A = B.buffer("a", F32, AccessKind::Read);
  ValueId Bb = B.buffer("b", F32, AccessKind::Read);
  ValueId C = B.buffer("c", F32, AccessKind::Write);
  ValueId N = B.param("n", U32);
  ValueId I = B.op(OpKind::AbsolutePos, U32);
  ValueId In = B.op(OpKind::Lt, Bool, {KB::v(I), KB::v(N)});
  B.ifThen(KB::v(In), [&] {
    ValueId X = B.op(OpKind::Load, F32, {KB::v(A), KB::v(I)});
    ValueId Y = B.op(OpKind::Load, F32, {KB::v(Bb), KB::v(I)});
    ValueId S = B.op(OpKind::Add, F32, {KB::v(X), KB::v(Y)});
    B.effect(OpKind::Store, {KB::v(C), KB::v(I), KB::v(S)});
  });
  EXPECT_THAT(diagnose(B.kernel()), IsEmpty());
}

TEST(VerifierTest, ResultTypeMustMatchImpliedType) {
  KB B;
  ValueId X = B.param("x", F32);
  B.op(OpKind::Add, I32, {KB::v(X), KB::v(X)});
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:2:3: error: result type 'i32' does not "
                          "match the implied type 'f32' of add"));
}

TEST(VerifierTest, OperandTypesMustAgree) {
  KB B;
  ValueId X = B.param("x", F32);
  B.op(OpKind::Mul, F32, {KB::v(X), KB::lit(F64, 0)});
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:2:30: error: operand 2 of mul has type "
                          "'f64', but operand 1 has type 'f32'"));
}

TEST(VerifierTest, FloatIntegerAndBoolOnlyOps) {
  KB B;
  ValueId X = B.param("x", I32);
  ValueId F = B.param("f", F32);
  B.op(OpKind::Sqrt, I32, {KB::v(X)});
  B.op(OpKind::Shl, F32, {KB::v(F), KB::v(F)});
  B.op(OpKind::And, I32, {KB::v(X), KB::v(X)});
  B.op(OpKind::Add, Bool, {KB::lit(Bool, 1), KB::lit(Bool, 0)});
  B.op(OpKind::Lt, Bool, {KB::lit(Bool, 1), KB::lit(Bool, 0)});
  B.op(OpKind::Eq, Bool, {KB::lit(Bool, 1), KB::lit(Bool, 0)});
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:2:20: error: sqrt needs float operands, found 'i32'",
          "t.kiln:3:20: error: shl needs integer operands, found 'f32'",
          "t.kiln:4:20: error: and needs bool operands, found 'i32'",
          "t.kiln:5:20: error: add needs integer or float operands, found "
          "'bool'",
          "t.kiln:6:20: error: lt needs integer or float operands, found "
          "'bool'"));
}

TEST(VerifierTest, ComparisonsGiveBoolLines) {
  KB B;
  Type V4 = Type::line(ScalarKind::F32, 4);
  ValueId V = B.param("v", V4);
  B.op(OpKind::Lt, Type::line(ScalarKind::Bool, 4), {KB::v(V), KB::v(V)});
  B.op(OpKind::Lt, Bool, {KB::v(V), KB::v(V)});
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:3:3: error: result type 'bool' does not "
                          "match the implied type 'vec<4 x bool>' of lt"));
}

TEST(VerifierTest, OperandCounts) {
  KB B;
  ValueId X = B.param("x", F32);
  B.op(OpKind::Add, F32, {KB::v(X)});
  B.op(OpKind::Neg, F32, {KB::v(X), KB::v(X)});
  B.effect(OpKind::SyncCube, {KB::v(X)});
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:2:3: error: add takes 2 operands, found 1",
                          "t.kiln:3:3: error: neg takes 1 operand, found 2",
                          "t.kiln:4:3: error: sync_cube takes 0 operands, "
                          "found 1"));
}

TEST(VerifierTest, PlainAndMemoryOperandKinds) {
  KB B;
  ValueId Buf = B.buffer("buf", F32, AccessKind::ReadWrite);
  ValueId X = B.param("x", F32);
  ValueId Acc = B.var("acc", F32);
  B.op(OpKind::Add, F32, {KB::v(X), KB::v(Buf)});
  B.op(OpKind::Load, F32, {KB::v(X), KB::u32(0)});
  B.op(OpKind::Load, F32, {KB::v(Acc), KB::u32(0)});
  B.op(OpKind::Get, F32, {KB::v(Buf)});
  B.op(OpKind::Load, F32, {KB::lit(F32, 0), KB::u32(0)});
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:3:30: error: operand 2 of add must be a value, but %buf is "
          "a buffer",
          "t.kiln:4:20: error: load needs a buffer, a shared array or a local "
          "array as operand 1, but %x is a value",
          "t.kiln:5:20: error: load needs a buffer, a shared array or a local "
          "array as operand 1, but %acc is a var",
          "t.kiln:6:20: error: get needs a var as operand 1, but %buf is a "
          "buffer",
          "t.kiln:7:20: error: load needs a buffer, a shared array or a local "
          "array as operand 1, found a literal"));
}

TEST(VerifierTest, MemoryTypes) {
  KB B;
  ValueId Buf = B.buffer("buf", I32, AccessKind::ReadWrite);
  B.op(OpKind::Load, F32, {KB::v(Buf), KB::u32(0)});
  B.op(OpKind::Load, I32, {KB::v(Buf), KB::lit(F32, 0)});
  B.effect(OpKind::Store, {KB::v(Buf), KB::u32(0), KB::lit(F32, 0)});
  B.op(OpKind::Len, U32, {KB::v(Buf)});
  B.op(OpKind::Len, I32, {KB::v(Buf)});
  ValueId Acc = B.var("acc", F32);
  B.effect(OpKind::Set, {KB::v(Acc), KB::lit(I32, 1)});
  B.op(OpKind::Get, F32, {KB::v(Acc)});
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:2:3: error: result type 'f32' does not match the implied "
          "type 'i32' of load",
          "t.kiln:3:30: error: the index of load must be a scalar integer, "
          "found 'f32'",
          "t.kiln:4:40: error: the value of store has type 'f32', expected "
          "'i32'",
          "t.kiln:6:3: error: result type 'i32' does not match the implied "
          "type 'u32' of len",
          "t.kiln:8:30: error: the value of set has type 'i32', expected "
          "'f32'"));
}

TEST(VerifierTest, AccessModes) {
  KB B;
  ValueId R = B.buffer("r", U32, AccessKind::Read);
  ValueId W = B.buffer("w", U32, AccessKind::Write);
  ValueId RW = B.buffer("rw", U32, AccessKind::ReadWrite);
  B.effect(OpKind::Store, {KB::v(R), KB::u32(0), KB::u32(1)});
  B.op(OpKind::Load, U32, {KB::v(W), KB::u32(0)});
  B.op(OpKind::AtomicAdd, U32, {KB::v(W), KB::u32(0), KB::u32(1)});
  B.op(OpKind::AtomicAdd, U32, {KB::v(R), KB::u32(0), KB::u32(1)});
  B.op(OpKind::AtomicLoad, U32, {KB::v(W), KB::u32(0)});
  B.effect(OpKind::AtomicStore, {KB::v(R), KB::u32(0), KB::u32(1)});
  // Allowed: reading read, writing write, anything on read_write.
  B.op(OpKind::Load, U32, {KB::v(R), KB::u32(0)});
  B.op(OpKind::AtomicLoad, U32, {KB::v(R), KB::u32(0)});
  B.effect(OpKind::Store, {KB::v(W), KB::u32(0), KB::u32(1)});
  B.effect(OpKind::AtomicStore, {KB::v(W), KB::u32(0), KB::u32(1)});
  B.op(OpKind::AtomicCas, U32, {KB::v(RW), KB::u32(0), KB::u32(1), KB::u32(2)});
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:2:20: error: store writes to %r, a buffer declared 'read'",
          "t.kiln:3:20: error: load reads from %w, a buffer declared 'write'",
          "t.kiln:4:20: error: atomic_add reads from %w, a buffer declared "
          "'write'",
          "t.kiln:5:20: error: atomic_add writes to %r, a buffer declared "
          "'read'",
          "t.kiln:6:20: error: atomic_load reads from %w, a buffer declared "
          "'write'",
          "t.kiln:7:20: error: atomic_store writes to %r, a buffer declared "
          "'read'"));
}

TEST(VerifierTest, AtomicTypesAndMemory) {
  KB B;
  ValueId F = B.buffer("f", F32, AccessKind::ReadWrite);
  ValueId H =
      B.buffer("h", Type::scalar(ScalarKind::U16), AccessKind::ReadWrite);
  ValueId L = B.array(OpKind::LocalArray, "l", U32, 4);
  ValueId S = B.array(OpKind::Shared, "s", I32, 4);
  B.op(OpKind::AtomicAdd, F32, {KB::v(F), KB::u32(0), KB::lit(F32, 0)});
  B.op(OpKind::AtomicAnd, F32, {KB::v(F), KB::u32(0), KB::lit(F32, 0)});
  B.op(OpKind::AtomicOr, Type::scalar(ScalarKind::U16),
       {KB::v(H), KB::u32(0), KB::lit(Type::scalar(ScalarKind::U16), 1)});
  B.op(OpKind::AtomicMax, U32, {KB::v(L), KB::u32(0), KB::u32(1)});
  B.op(OpKind::AtomicMax, I32, {KB::v(S), KB::u32(0), KB::lit(I32, 1)});
  B.op(OpKind::AtomicCas, I32,
       {KB::v(S), KB::u32(0), KB::lit(I32, 1), KB::u32(2)});
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:5:20: error: atomic_and on %f of 'f32'; atomics work on "
          "'i32', 'u32', 'i64' and 'u64'",
          "t.kiln:6:20: error: atomic_or on %h of 'u16'; atomics work on "
          "'i32', 'u32', 'i64' and 'u64'",
          "t.kiln:7:20: error: atomic_max needs a buffer or a shared array as "
          "operand 1, but %l is a local array",
          "t.kiln:9:50: error: the new value of atomic_cas has type 'u32', "
          "expected 'i32'"));
}

TEST(VerifierTest, LineOperations) {
  KB B;
  Type V4 = Type::line(ScalarKind::F32, 4);
  Type I4 = Type::line(ScalarKind::I32, 4);
  ValueId V = B.param("v", V4);
  ValueId W = B.param("w", I4);
  ValueId X = B.param("x", F32);
  ValueId J = B.param("j", U32);
  ValueId SignedJ = B.param("sj", I32);
  B.op(OpKind::Dot, F32, {KB::v(V), KB::v(V)});
  B.op(OpKind::Dot, I32, {KB::v(W), KB::v(W)});
  B.op(OpKind::Magnitude, I32, {KB::v(W)}); // line 4
  B.op(OpKind::Normalize, F32, {KB::v(X)}); // line 5
  B.op(OpKind::Extract, F32, {KB::v(V), KB::u32(3)});
  B.op(OpKind::Extract, F32, {KB::v(V), KB::u32(4)}); // line 7
  B.op(OpKind::Extract, F32, {KB::v(V), KB::v(J)});
  B.op(OpKind::Extract, F32, {KB::v(V), KB::v(SignedJ)}); // line 9
  B.op(OpKind::Insert, V4, {KB::v(V), KB::u32(0), KB::v(X)});
  B.op(OpKind::Insert, V4, {KB::v(V), KB::u32(0), KB::v(J)}); // line 11
  B.op(OpKind::Splat, V4, {KB::v(X)});
  B.op(OpKind::Splat, Type::line(ScalarKind::F64, 2), {KB::v(X)}); // 13
  B.op(OpKind::Vector, V4, {KB::v(X), KB::v(X), KB::v(X), KB::v(X)});
  B.op(OpKind::Vector, V4, {KB::v(X), KB::v(X), KB::v(X)}); // line 15
  B.op(OpKind::Vector, V4,
       {KB::v(X), KB::v(X), KB::v(X), KB::v(X), KB::v(X)}); // line 16
  B.op(OpKind::Extract, F32, {KB::v(X), KB::u32(0)});       // line 17
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:4:20: error: magnitude needs float line operands, found "
          "'vec<4 x i32>'",
          "t.kiln:5:20: error: normalize needs float line operands, found "
          "'f32'",
          "t.kiln:7:30: error: lane index 4 of extract is out of range for "
          "'vec<4 x f32>'",
          "t.kiln:9:30: error: the lane index of extract must be 'u32', found "
          "'i32'",
          "t.kiln:11:40: error: the element of insert has type 'u32', "
          "expected 'f32'",
          "t.kiln:13:3: error: result type 'vec<2 x f64>' does not match the "
          "implied type 'vec<2 x f32>' of splat",
          "t.kiln:15:3: error: result type 'vec<4 x f32>' does not match the "
          "implied type 'vec<3 x f32>' of vector",
          "t.kiln:16:3: error: vector takes 1, 2, 3, 4, 8 or 16 operands, "
          "found 5",
          "t.kiln:17:20: error: extract needs a line as operand 1, found "
          "'f32'"));
}

TEST(VerifierTest, BitCountMayGiveU32) {
  KB B;
  ValueId X = B.param("x", Type::scalar(ScalarKind::I64));
  B.op(OpKind::Popcount, Type::scalar(ScalarKind::I64), {KB::v(X)});
  B.op(OpKind::Clz, U32, {KB::v(X)});
  B.op(OpKind::Ctz, I32, {KB::v(X)});
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:4:3: error: result type 'i32' does not "
                          "match the implied type 'i64' (or 'u32') of ctz"));
}

TEST(VerifierTest, CastBitcastSelect) {
  KB B;
  Type V4 = Type::line(ScalarKind::F32, 4);
  ValueId V = B.param("v", V4);
  ValueId X = B.param("x", F32);
  ValueId C = B.param("c", Bool);
  B.op(OpKind::Cast, Type::line(ScalarKind::I32, 4), {KB::v(V)});
  B.op(OpKind::Cast, I32, {KB::v(V)}); // line 3
  B.op(OpKind::Bitcast, Type::line(ScalarKind::U16, 8), {KB::v(V)});
  B.op(OpKind::Bitcast, F64, {KB::v(X)}); // line 5
  B.op(OpKind::Select, F32, {KB::v(C), KB::v(X), KB::v(X)});
  B.op(OpKind::Select, V4, {KB::lit(Bool, 1), KB::v(V), KB::v(V)}); // fine
  B.op(OpKind::Select, F32, {KB::v(X), KB::v(X), KB::v(X)});        // line 8
  B.op(OpKind::Select, F32, {KB::v(C), KB::v(X), KB::lit(F64, 0)}); // line 9
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:3:3: error: cast from 'vec<4 x f32>' to 'i32' changes the "
          "number of lanes",
          "t.kiln:5:3: error: bitcast from 'f32' (32 bits) to 'f64' (64 bits) "
          "changes the size",
          "t.kiln:8:20: error: the condition of select must be 'bool', found "
          "'f32'",
          "t.kiln:9:40: error: operand 3 of select has type 'f64', but "
          "operand 2 has type 'f32'"));
}

TEST(VerifierTest, ConstantsAndLiterals) {
  KB B;
  Type V4 = Type::line(ScalarKind::F32, 4);
  B.constant(V4, {0, 0, 0, 0});
  B.constant(V4, {0, 0});                                    // line 3
  B.constant(U8, {256});                                     // line 4
  B.op(OpKind::Add, U8, {KB::lit(U8, 300), KB::lit(U8, 1)}); // line 5
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:3:3: error: const has 2 values but 'vec<4 x f32>' has 4 "
          "lanes",
          "t.kiln:4:3: error: const value 1 does not fit in 'u8'",
          "t.kiln:5:20: error: literal operand 1 of add does not fit in "
          "'u8'"));
}

TEST(VerifierTest, PlaneOperandTypes) {
  KB B;
  ValueId X = B.param("x", F32);
  B.op(OpKind::PlaneBallot, Type::line(ScalarKind::U32, 4), {KB::lit(Bool, 1)});
  B.op(OpKind::PlaneBallot, U32, {KB::lit(Bool, 1)});           // line 3
  B.op(OpKind::PlaneShuffle, F32, {KB::v(X), KB::lit(I32, 1)}); // line 4
  B.op(OpKind::PlaneAll, Bool, {KB::v(X)});                     // line 5
  B.op(OpKind::PlaneSum, F32, {KB::v(X)});
  B.op(OpKind::PlaneElect, Bool);
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:3:3: error: result type 'u32' does not match the implied "
          "type 'vec<4 x u32>' of plane_ballot",
          "t.kiln:4:30: error: the lane of plane_shuffle has type 'i32', "
          "expected 'u32'",
          "t.kiln:5:20: error: plane_all needs bool operands, found 'f32'"));
}

TEST(VerifierTest, DefinitionsAndScopes) {
  KB B;
  ValueId C = B.param("c", Bool);
  ValueId Inner = NoValue;
  B.ifThen(KB::v(C), [&] { Inner = B.op(OpKind::UnitPos, U32); });
  B.op(OpKind::Add, U32, {KB::v(Inner), KB::u32(1)}); // line 4: out of scope
  // A use of a value defined later.
  ValueId Later = static_cast<ValueId>(B.kernel().Values.size() + 1);
  B.op(OpKind::Add, U32, {KB::v(Later), KB::u32(1)}); // line 5
  B.op(OpKind::Neg, U32, {KB::u32(7)});               // line 6, defines Later
  B.op(OpKind::Add, U32, {KB::v(999), KB::u32(1)});   // line 7
  // Defining a value twice.
  B.op(OpKind::Neg, U32, {KB::u32(7)}); // line 8
  B.last().Result = Later;
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:4:20: error: use of %v1 outside the block that defines it",
          "t.kiln:5:20: error: use of %v4 before its definition",
          "t.kiln:7:20: error: operand 1 of add names no value (id 999)",
          "t.kiln:8:3: error: value %v4 is defined twice"));
}

TEST(VerifierTest, ForInductionVariableIsScopedToItsBody) {
  KB B;
  ValueId Iv = NoValue;
  B.forLoop(U32, {KB::u32(0), KB::u32(8)}, [&](ValueId I) {
    Iv = I;
    B.op(OpKind::Add, U32, {KB::v(I), KB::u32(1)});
  });
  B.op(OpKind::Add, U32, {KB::v(Iv), KB::u32(1)}); // line 4
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:4:20: error: use of %i0 outside the block "
                          "that defines it"));
}

TEST(VerifierTest, ForBounds) {
  KB B;
  ValueId N = B.param("n", I32);
  B.forLoop(I32, {KB::lit(I32, 0), KB::v(N)}, [&](ValueId) {});
  B.forLoop(U32, {KB::u32(0), KB::v(N)}, [&](ValueId) {});             // line 3
  B.forLoop(F32, {KB::lit(F32, 0), KB::lit(F32, 0)}, [&](ValueId) {}); // 4
  B.forLoop(I32, {KB::lit(I32, 0), KB::v(N), KB::lit(I32, uint32_t(-2))},
            [&](ValueId) {}); // line 5
  B.forLoop(I32, {KB::lit(I32, 0), KB::v(N), KB::lit(I32, 3)}, [&](ValueId) {});
  B.forLoop(U32, {KB::u32(0), KB::u32(4), KB::u32(0)}, [&](ValueId) {}); // 7
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:3:30: error: the upper bound of for has type 'i32', "
          "expected 'u32'",
          "t.kiln:4:20: error: the lower bound of for must be a scalar "
          "integer, found 'f32'",
          "t.kiln:4:30: error: the upper bound of for must be a scalar "
          "integer, found 'f32'",
          "t.kiln:5:40: error: the step of for must be positive, found -2",
          "t.kiln:7:40: error: the step of for must be positive, found 0"));
}

TEST(VerifierTest, JumpsOnlyInsideLoops) {
  KB B;
  ValueId S = B.param("s", U32);
  B.effect(OpKind::Break);
  B.loop([&] {
    B.switchOn(KB::v(S), {{1, [&] { B.effect(OpKind::Break); }}},
               [&] { B.effect(OpKind::Continue); });
  });
  B.switchOn(KB::v(S), {{1, [&] { B.effect(OpKind::Continue); }}}); // 7, 8
  B.effect(OpKind::Return);
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:2:3: error: break outside a for or loop",
                          "t.kiln:8:3: error: continue outside a for or "
                          "loop"));
}

TEST(VerifierTest, SwitchSelectorAndCases) {
  KB B;
  ValueId F = B.param("f", F32);
  ValueId S = B.param("s", U8);
  B.switchOn(KB::v(F), {});
  // Labels outside the selector's range are never taken, and legal.
  B.switchOn(KB::v(S), {{1, [] {}}, {300, [] {}}, {1, [] {}}, {-1, [] {}}});
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre("t.kiln:2:20: error: the selector of switch must be a scalar "
                  "integer, found 'f32'",
                  "t.kiln:3:3: error: case 1 appears twice"));
}

TEST(VerifierTest, SwitchCasesWithSeveralLabels) {
  KB B;
  ValueId S = B.param("s", U8);
  B.switchOn(KB::v(S), {{1, [] {}}, {2, [] {}}, {2, [] {}}});
  B.kernel().Body.Ops[0].CaseLabelCounts = {2, 1}; // case 1, 2 { } case 2 { }
  B.kernel().Body.Ops[0].Regions.resize(2);
  B.switchOn(KB::v(S), {{1, [] {}}, {2, [] {}}, {3, [] {}}});
  B.kernel().Body.Ops[1].CaseLabelCounts = {2, 2}; // 4 labels claimed, 3 given
  B.switchOn(KB::v(S), {{1, [] {}}, {2, [] {}}});
  B.kernel().Body.Ops[2].CaseLabelCounts = {0, 2}; // a case without a label
  B.switchOn(KB::v(S), {{7, [] {}}, {8, [] {}}, {300, [] {}}});
  B.kernel().Body.Ops[3].CaseLabelCounts = {1, 2}; // case 7 { } case 8, 300 { }
  B.kernel().Body.Ops[3].Regions.resize(2);
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre("t.kiln:2:3: error: case 2 appears twice",
                  "t.kiln:3:3: error: switch case label counts do not match "
                  "its 3 labels (every case needs at least one)",
                  "t.kiln:4:3: error: switch case label counts do not match "
                  "its 2 labels (every case needs at least one)"));
}

TEST(VerifierTest, IfConditionIsBool) {
  KB B;
  ValueId X = B.param("x", U32);
  B.ifThen(KB::v(X), [] {});
  EXPECT_THAT(diagnose(B.kernel()),
              ElementsAre("t.kiln:2:20: error: the condition of if has type "
                          "'u32', expected 'bool'"));
}

TEST(VerifierTest, MalformedStructureFromCpp) {
  // Problems the parser cannot produce but a C++ producer can.
  KB B("");
  B.kernel().CubeDimRank = 4;
  ValueId X = B.param("x", F32);
  B.kernel().Params.push_back(X);
  ValueId Acc = B.var("acc", F32);
  B.kernel().Params.push_back(Acc);
  B.kernel().Params.push_back(77);
  ValueId Y = B.op(OpKind::Neg, F32, {KB::v(X)}); // line 3
  B.kernel().Values[Y].Kind = ValueKind::Var;
  ValueId Z = B.op(OpKind::Neg, F32, {KB::v(X)}); // line 4
  B.kernel().Values[Z].Ty = I32;
  B.op(OpKind::Neg, F32, {KB::v(X)}); // line 5
  B.last().Result = NoValue;
  B.op(OpKind::UnitPos, U32, {}, 4);    // line 6
  B.op(OpKind::PlaneDim, U32, {}, 1);   // line 7
  B.array(OpKind::Shared, "s", F32, 4); // line 8
  B.kernel().Values.back().Kind = ValueKind::Local;
  B.kernel().Values.back().Count = 5;
  B.effect(OpKind::SyncCube).Regions.resize(1); // line 9
  B.ifThen(KB::lit(Bool, 1), [] {});            // line 10
  B.last().Regions.clear();
  B.forLoop(U32, {KB::u32(0), KB::u32(4)}, [](ValueId) {}); // line 11
  B.last().ResultType = I32;
  EXPECT_THAT(
      diagnose(B.kernel()),
      ElementsAre(
          "t.kiln:1:1: error: kernel has no name",
          "t.kiln:1:1: error: cube_dim has 4 dimensions; it takes 1 to 3",
          "t.kiln:1:10: error: parameter %x is listed twice",
          "t.kiln:2:3: error: parameter %acc is a var; parameters are "
          "buffers or values",
          "t.kiln:1:1: error: parameter names no value (id 77)",
          "t.kiln:2:3: error: value %acc is defined twice",
          "t.kiln:3:3: error: result %v2 of neg is a var, expected a value",
          "t.kiln:4:3: error: result %v3 of neg is recorded as 'i32' but "
          "written 'f32'",
          "t.kiln:5:3: error: neg has no result value",
          "t.kiln:6:3: error: unit_pos has no component 4",
          "t.kiln:7:3: error: plane_dim has no component 1",
          "t.kiln:8:3: error: shared declares %s as a local array, expected "
          "a shared array",
          "t.kiln:8:3: error: shared %s declares 4 elements but is recorded "
          "with 5",
          "t.kiln:9:3: error: sync_cube has 1 region, expected 0",
          "t.kiln:10:3: error: if has 0 regions, expected 1",
          "t.kiln:11:3: error: the induction variable of for is written "
          "'i32' but the bounds are 'u32'",
          "t.kiln:11:3: error: the induction variable %i8 is recorded as a "
          "value of 'u32', expected a value of 'i32'"));
}

TEST(VerifierTest, AllProblemsInSourceOrderAndDeterministic) {
  KB B;
  ValueId X = B.param("x", F32);
  ValueId R = B.buffer("r", F32, AccessKind::Read);
  B.op(OpKind::Add, I32, {KB::v(X), KB::v(X)});
  B.effect(OpKind::Break);
  ValueId U = B.op(OpKind::UnitPos, U32);
  ValueId C = B.op(OpKind::Eq, Bool, {KB::v(U), KB::u32(0)});
  B.ifThen(KB::v(C), [&] { B.effect(OpKind::SyncCube); });
  B.effect(OpKind::Store, {KB::v(R), KB::u32(0), KB::v(X)});
  std::vector<std::string> First = diagnose(B.kernel());
  EXPECT_THAT(
      First,
      ElementsAre(
          "t.kiln:2:3: error: result type 'i32' does not match the implied "
          "type 'f32' of add",
          "t.kiln:3:3: error: break outside a for or loop",
          "t.kiln:7:3: error: sync_cube under divergent control flow: the "
          "condition at 6:20 depends on unit_pos",
          "t.kiln:8:20: error: store writes to %r, a buffer declared 'read'"));
  EXPECT_EQ(First, diagnose(B.kernel()));
}

TEST(VerifierTest, ModuleChecksNamesAndUsesItsFileName) {
  Module M;
  M.FileName = "m.kiln";
  KB A("same"), Bk("same"), C("other");
  A.op(OpKind::Add, I32, {KB::lit(F32, 0), KB::lit(F32, 0)});
  M.Kernels = {A.kernel(), Bk.kernel(), C.kernel()};
  M.Kernels[1].Loc = {20, 1};
  std::vector<std::string> Out;
  llvm::handleAllErrors(verifyModule(M, DeviceLimits()),
                        [&](const DiagnosticError &D) {
                          for (const Diagnostic &X : D.diagnostics())
                            Out.push_back(X.str());
                        });
  EXPECT_THAT(Out, ElementsAre("m.kiln:2:3: error: result type 'i32' does "
                               "not match the implied type 'f32' of add",
                               "m.kiln:20:1: error: kernel @same is already "
                               "defined at 1:1"));
  M.Kernels.erase(M.Kernels.begin());
  EXPECT_FALSE(llvm::errorToBool(verifyModule(M, DeviceLimits())));
}

} // namespace
