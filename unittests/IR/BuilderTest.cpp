//===- BuilderTest.cpp - Building kernels in C++ --------------------------===//

#include "kiln/IR/Builder.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"

#include "gtest/gtest.h"

using namespace kiln;

namespace {

const Type F32 = Type::scalar(ScalarKind::F32);
const Type U32 = Type::scalar(ScalarKind::U32);

IRKernel finishOk(KernelBuilder &B) {
  llvm::Expected<IRKernel> K = B.finish();
  if (!K) {
    ADD_FAILURE() << llvm::toString(K.takeError());
    return IRKernel();
  }
  return std::move(*K);
}

std::string finishError(KernelBuilder &B) {
  llvm::Expected<IRKernel> K = B.finish();
  if (K) {
    ADD_FAILURE() << "built:\n" << printKernel(*K);
    return "";
  }
  return llvm::toString(K.takeError());
}

void expectSameBlock(const Block &A, const Block &B);

void expectSameOperand(const Operand &A, const Operand &B) {
  EXPECT_EQ(A.Value, B.Value);
  if (A.isLiteral() && B.isLiteral()) {
    EXPECT_EQ(A.Lit.Ty, B.Lit.Ty);
    EXPECT_EQ(A.Lit.Bits, B.Lit.Bits);
  }
}

void expectSameOperation(const Operation &A, const Operation &B) {
  SCOPED_TRACE(opName(A.Kind).str());
  EXPECT_EQ(A.Kind, B.Kind);
  EXPECT_EQ(A.Result, B.Result);
  if (A.Result != NoValue || A.opClass() == OpClass::Const) {
    EXPECT_EQ(A.ResultType, B.ResultType);
  }
  ASSERT_EQ(A.Operands.size(), B.Operands.size());
  for (size_t I = 0; I < A.Operands.size(); ++I)
    expectSameOperand(A.Operands[I], B.Operands[I]);
  EXPECT_EQ(A.Component, B.Component);
  EXPECT_EQ(A.ArraySize, B.ArraySize);
  EXPECT_EQ(A.ConstBits, B.ConstBits);
  EXPECT_EQ(A.CaseValues, B.CaseValues);
  EXPECT_EQ(A.CaseLabelCounts, B.CaseLabelCounts);
  EXPECT_EQ(A.HasElse, B.HasElse);
  EXPECT_EQ(A.HasDefault, B.HasDefault);
  ASSERT_EQ(A.Regions.size(), B.Regions.size());
  for (size_t I = 0; I < A.Regions.size(); ++I)
    expectSameBlock(A.Regions[I], B.Regions[I]);
}

void expectSameBlock(const Block &A, const Block &B) {
  ASSERT_EQ(A.Ops.size(), B.Ops.size());
  for (size_t I = 0; I < A.Ops.size(); ++I)
    expectSameOperation(A.Ops[I], B.Ops[I]);
}

/// parse(print(K)) is the same kernel, up to source locations.
void expectSameKernel(const IRKernel &A, const IRKernel &B) {
  EXPECT_EQ(A.Name, B.Name);
  EXPECT_EQ(A.CubeDim, B.CubeDim);
  EXPECT_EQ(A.CubeDimRank, B.CubeDimRank);
  EXPECT_EQ(A.PlaneDim, B.PlaneDim);
  EXPECT_EQ(A.Params, B.Params);
  ASSERT_EQ(A.Values.size(), B.Values.size());
  for (size_t I = 0; I < A.Values.size(); ++I) {
    SCOPED_TRACE("value " + std::to_string(I));
    EXPECT_EQ(A.Values[I].Name, B.Values[I].Name);
    EXPECT_EQ(A.Values[I].Kind, B.Values[I].Kind);
    EXPECT_EQ(A.Values[I].Ty, B.Values[I].Ty);
    EXPECT_EQ(A.Values[I].Count, B.Values[I].Count);
    if (A.Values[I].Kind == ValueKind::Buffer) {
      EXPECT_EQ(A.Values[I].Access, B.Values[I].Access);
    }
  }
  expectSameBlock(A.Body, B.Body);
}

void expectRoundTrip(const IRKernel &K) {
  std::string Text = printKernel(K);
  llvm::Expected<Module> M = parseModule(Text, "builder.kiln");
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError()) << "\n" << Text;
  ASSERT_EQ(M->Kernels.size(), 1u);
  EXPECT_EQ(printKernel(M->Kernels[0]), Text);
  expectSameKernel(K, M->Kernels[0]);
}

TEST(BuilderTest, VAddPrintsAsWritten) {
  KernelBuilder B("vadd");
  B.setCubeDim({256});
  ValueId A = B.addBuffer("a", F32, AccessKind::Read);
  ValueId Bb = B.addBuffer("b", F32, AccessKind::Read);
  ValueId C = B.addBuffer("c", F32, AccessKind::Write);
  ValueId N = B.addScalar("n", U32);
  ValueId I = B.named("i").builtin(OpKind::AbsolutePos);
  ValueId In = B.op(OpKind::Lt, {I, N});
  B.beginIf(In);
  ValueId X = B.load(A, I);
  ValueId Y = B.load(Bb, I);
  ValueId S = B.op(OpKind::Add, {X, Y});
  B.store(C, I, S);
  B.end();
  IRKernel K = finishOk(B);
  EXPECT_EQ(printKernel(K),
            "kernel @vadd cube_dim(256) (%a: buffer<f32, read>, %b: "
            "buffer<f32, read>, %c: buffer<f32, write>, %n: u32) {\n"
            "  %i = absolute_pos : u32\n"
            "  %0 = lt %i, %n : bool\n"
            "  if %0 {\n"
            "    %1 = load %a[%i] : f32\n"
            "    %2 = load %b[%i] : f32\n"
            "    %3 = add %1, %2 : f32\n"
            "    store %c[%i], %3\n"
            "  }\n"
            "}\n");
  expectRoundTrip(K);
}

TEST(BuilderTest, EveryConstructRoundTrips) {
  KernelBuilder B("all");
  B.setCubeDim({8, 8, 2});
  B.setPlaneDim(32);
  ValueId Out = B.addBuffer("out", Type::line(ScalarKind::F32, 4),
                            AccessKind::ReadWrite);
  ValueId Cnt = B.addBuffer("cnt", U32, AccessKind::ReadWrite);
  ValueId Sel = B.addScalar("sel", Type::scalar(ScalarKind::I32));
  ValueId Ux = B.builtin(OpKind::UnitPos, 1);
  ValueId Lane = B.builtin(OpKind::UnitPosPlane);
  ValueId V = B.constant(Type::line(ScalarKind::F32, 4),
                         {0x3f800000, 0x80000000, 0x7f800000, 0x7fc00001});
  ValueId E = B.extract(V, lit::u32(2));
  ValueId W = B.insert(V, Ux, E);
  ValueId Sp = B.splat(E, 4);
  ValueId Dot = B.op(OpKind::Dot, {W, Sp});
  ValueId Sum = B.op(OpKind::PlaneSum, {Dot});
  ValueId Bal = B.op(OpKind::PlaneBallot, {B.op(OpKind::PlaneElect, {})});
  ValueId Pc = B.op(OpKind::Popcount, {Ux}, U32);
  ValueId Cl = B.ternary(OpKind::Clamp, Pc, lit::u32(1), lit::u32(9));
  B.binary(OpKind::Shl, Cl, lit::u32(2));
  B.unary(OpKind::Sqrt, lit::f32(2.0f));
  ValueId Cv = B.cast(Pc, F32);
  ValueId Bc = B.bitcast(Cv, U32);
  ValueId Old = B.atomic(OpKind::AtomicAdd, Cnt, lit::u32(0), lit::u32(1));
  B.atomicCas(Cnt, lit::u32(1), Old, Bc);
  B.atomicStore(Cnt, lit::u32(2), lit::u32(7));
  ValueId Acc = B.var(F32);
  B.set(Acc, lit::f32(0.0f));
  ValueId Sh = B.shared(F32, 256);
  ValueId Loc = B.localArray(U32, 16);
  B.store(Sh, Ux, Sum);
  B.store(Loc, lit::u32(3), Pc);
  B.syncCube();
  ValueId K0 = B.beginFor(lit::u32(0), lit::u32(16), lit::u32(2));
  B.store(Loc, K0, K0);
  B.end();
  B.beginLoop();
  ValueId G = B.get(Acc);
  ValueId Big = B.op(OpKind::Gt, {G, lit::f32(10.0f)});
  B.beginIf(Big);
  B.breakLoop();
  B.beginElse();
  B.set(Acc, B.op(OpKind::Add, {G, lit::f32(1.5f)}));
  B.continueLoop();
  B.end();
  B.end();
  B.beginSwitch(Sel);
  B.addCase(-2);
  B.returnUnit();
  B.addCase(5);
  B.addDefault();
  B.store(Out, Lane, W);
  B.end();
  ValueId Ln = B.len(Out);
  B.select(B.op(OpKind::Eq, {Ln, Bal}), Ln, Ln);
  IRKernel K = finishOk(B);
  EXPECT_EQ(K.Values[Bal].Ty, Type::line(ScalarKind::U32, 4));
  EXPECT_EQ(K.Values[Dot].Ty, F32);
  EXPECT_EQ(K.Values[E].Ty, F32);
  expectRoundTrip(K);
  std::string Text = printKernel(K);
  EXPECT_NE(Text.find("const [1.0, -0.0, inf, 0x7fc00001] : vec<4 x f32>"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("    case -2 {\n      return\n    }\n"),
            std::string::npos)
      << Text;
}

TEST(BuilderTest, MisuseIsAnError) {
  {
    KernelBuilder B("k");
    B.end();
    EXPECT_EQ(finishError(B),
              "kernel 'k': end() without an open if, for, loop or switch");
  }
  {
    KernelBuilder B("k");
    B.op(OpKind::Add, {ValueId(7), ValueId(8)});
    EXPECT_EQ(finishError(B), "kernel 'k': operand %7 names no value of "
                              "kernel 'k'");
  }
  {
    KernelBuilder B("k");
    B.beginLoop();
    EXPECT_EQ(finishError(B), "kernel 'k': 1 control-flow construct(s) still "
                              "open at finish()");
  }
  {
    KernelBuilder B("k");
    B.addScalar("x", U32);
    B.addScalar("x", U32);
    EXPECT_EQ(finishError(B), "kernel 'k': redefinition of '%x'");
  }
  {
    KernelBuilder B("k");
    ValueId X = B.addScalar("x", U32);
    B.op(OpKind::Cast, {X});
    EXPECT_EQ(finishError(B),
              "kernel 'k': 'cast' needs an explicit result type");
  }
  {
    KernelBuilder B("k");
    B.op(OpKind::Store, {});
    EXPECT_EQ(finishError(B),
              "kernel 'k': 'store' produces no value: use its builder method");
  }
  {
    KernelBuilder B("k");
    ValueId S = B.addScalar("s", U32);
    B.beginSwitch(S);
    B.syncCube();
    B.end();
    EXPECT_EQ(finishError(B), "kernel 'k': add a case or default to the "
                              "switch before its operations");
  }
}

TEST(BuilderTest, SwitchCasesWithSeveralLabels) {
  KernelBuilder B("orpat");
  ValueId Out = B.addBuffer("out", U32, AccessKind::Write);
  ValueId Sel = B.addScalar("sel", Type::scalar(ScalarKind::I32));
  B.beginSwitch(Sel);
  B.addCase({1, 3, -5});
  B.store(Out, lit::u32(0), lit::u32(1));
  B.addCase(2);
  B.store(Out, lit::u32(0), lit::u32(2));
  B.addDefault();
  B.end();
  IRKernel K = finishOk(B);
  const Operation &Sw = K.Body.Ops[0];
  EXPECT_EQ(Sw.CaseValues, (std::vector<CaseLabel>{1, 3, -5, 2}));
  EXPECT_EQ(Sw.CaseLabelCounts, (std::vector<uint32_t>{3, 1}));
  ASSERT_EQ(switchCaseCount(Sw), 2u);
  EXPECT_EQ(switchCaseLabels(Sw, 0).vec(), (std::vector<CaseLabel>{1, 3, -5}));
  EXPECT_EQ(switchCaseLabels(Sw, 1).vec(), (std::vector<CaseLabel>{2}));
  expectRoundTrip(K);
  EXPECT_NE(printKernel(K).find("  case 1, 3, -5 {\n"), std::string::npos)
      << printKernel(K);

  // One label per case keeps the original in-memory form.
  KernelBuilder One("one");
  ValueId S1 = One.addScalar("s", U32);
  One.beginSwitch(S1);
  One.addCase(llvm::ArrayRef<int64_t>{7});
  One.addCase(8);
  One.end();
  IRKernel K1 = finishOk(One);
  EXPECT_TRUE(K1.Body.Ops[0].CaseLabelCounts.empty());
  EXPECT_EQ(K1.Body.Ops[0].CaseValues, (std::vector<CaseLabel>{7, 8}));

  // A label repeated within a case or across cases is a misuse.
  for (bool Across : {false, true}) {
    KernelBuilder D("dup");
    ValueId S = D.addScalar("s", U32);
    D.beginSwitch(S);
    if (Across) {
      D.addCase(4);
      D.addCase({5, 4});
    } else {
      D.addCase({4, 5, 4});
    }
    D.end();
    EXPECT_EQ(finishError(D), "kernel 'dup': duplicate case value 4");
  }
  KernelBuilder E("empty");
  E.beginSwitch(E.addScalar("s", U32));
  E.addCase(llvm::ArrayRef<int64_t>{});
  E.end();
  EXPECT_EQ(finishError(E), "kernel 'empty': addCase() needs at least one label");
}

TEST(BuilderTest, SwitchLabelsAboveInt64) {
  KernelBuilder B("wide");
  ValueId Sel = B.addScalar("sel", Type::scalar(ScalarKind::U64));
  CaseLabel Max = CaseLabel::fromUnsigned(~uint64_t(0));
  B.beginSwitch(Sel);
  B.addCase(Max);
  B.addCase(-1); // not the same label as 2^64 - 1
  B.addCaseLabels({CaseLabel::fromUnsigned(uint64_t(1) << 63), CaseLabel(3)});
  B.end();
  IRKernel K = finishOk(B);
  const Operation &Sw = K.Body.Ops[0];
  EXPECT_EQ(Sw.CaseValues,
            (std::vector<CaseLabel>{Max, -1,
                                    CaseLabel::fromUnsigned(uint64_t(1) << 63),
                                    3}));
  std::string Text = printKernel(K);
  EXPECT_NE(Text.find("  case 18446744073709551615 {\n"), std::string::npos)
      << Text;
  EXPECT_NE(Text.find("  case 9223372036854775808, 3 {\n"), std::string::npos)
      << Text;
  expectRoundTrip(K);

  KernelBuilder D("dup");
  D.beginSwitch(D.addScalar("s", Type::scalar(ScalarKind::U64)));
  D.addCase(Max);
  D.addCaseLabels({CaseLabel(5), Max});
  D.end();
  EXPECT_EQ(finishError(D),
            "kernel 'dup': duplicate case value 18446744073709551615");
}

TEST(BuilderTest, GeneratedNamesSkipGivenOnes) {
  KernelBuilder B("k");
  B.addScalar("0", U32);
  ValueId X = B.builtin(OpKind::PlaneDim);
  IRKernel K = finishOk(B);
  EXPECT_EQ(K.Values[X].Name, "1");
}

} // namespace

namespace {

MatrixType matrix(MatrixUse Use, ScalarKind Elem, MatrixLayout Layout) {
  MatrixType T;
  T.Use = Use;
  T.M = T.N = T.K = 16;
  T.Elem = Elem;
  T.Layout = Layout;
  return T;
}

} // namespace

TEST(BuilderTest, CmmaOperationsRoundTrip) {
  KernelBuilder B("mma");
  B.setCubeDim({32});
  const Type F16 = Type::scalar(ScalarKind::F16);
  ValueId A = B.addBuffer("a", F16, AccessKind::Read);
  ValueId Bt = B.addBuffer("b", F16, AccessKind::Read);
  ValueId C = B.addBuffer("c", F32, AccessKind::Write);
  ValueId Stride = B.addScalar("stride", U32);
  ValueId FA = B.named("fa").fragment(
      matrix(MatrixUse::A, ScalarKind::F16, MatrixLayout::Row));
  ValueId FB = B.named("fb").fragment(
      matrix(MatrixUse::B, ScalarKind::F16, MatrixLayout::Col));
  ValueId Acc = B.named("acc").fragment(
      matrix(MatrixUse::Accumulator, ScalarKind::F32, MatrixLayout::Undefined));
  ValueId Half = B.named("half").fragment(
      matrix(MatrixUse::Accumulator, ScalarKind::F16, MatrixLayout::Row));
  B.cmmaFill(Acc, lit::f32(0.5f));
  B.cmmaLoad(FA, A, lit::u32(3), Stride);
  B.cmmaLoad(FB, Bt, lit::u32(0), lit::u32(16));
  B.cmmaMma(Acc, FA, FB, Acc);
  B.cmmaCast(Half, Acc);
  B.cmmaStore(C, lit::u32(0), Acc, Stride, MatrixLayout::Col);
  IRKernel K = finishOk(B);
  EXPECT_EQ(printKernel(K),
            "kernel @mma cube_dim(32) (%a: buffer<f16, read>, %b: buffer<f16, "
            "read>, %c: buffer<f32, write>, %stride: u32) {\n"
            "  %fa = fragment matrix<a, 16x16x16, f16, row>\n"
            "  %fb = fragment matrix<b, 16x16x16, f16, col>\n"
            "  %acc = fragment matrix<accumulator, 16x16x16, f32>\n"
            "  %half = fragment matrix<accumulator, 16x16x16, f16, row>\n"
            "  cmma_fill %acc, 0.5:f32\n"
            "  cmma_load %fa, %a[3], %stride\n"
            "  cmma_load %fb, %b[0], 16:u32\n"
            "  cmma_mma %acc, %fa, %fb, %acc\n"
            "  cmma_cast %half, %acc\n"
            "  cmma_store %c[0], %acc, %stride, col\n"
            "}\n");
  expectRoundTrip(K);
  // The fragment types and the store's layout survive the round trip too
  // (expectSameKernel does not look at them).
  llvm::Expected<Module> M = parseModule(printKernel(K), "builder.kiln");
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  const IRKernel &P = M->Kernels[0];
  for (ValueId Id : {FA, FB, Acc, Half}) {
    EXPECT_EQ(P.value(Id).Kind, ValueKind::Fragment);
    EXPECT_EQ(P.value(Id).Matrix, K.value(Id).Matrix);
  }
  EXPECT_EQ(P.value(FB).Matrix.Layout, MatrixLayout::Col);
  EXPECT_EQ(P.value(Acc).Matrix.Layout, MatrixLayout::Undefined);
  EXPECT_EQ(P.Body.Ops.back().Kind, OpKind::CmmaStore);
  EXPECT_EQ(P.Body.Ops.back().Layout, MatrixLayout::Col);
  EXPECT_EQ(P.Body.Ops[5].Layout, MatrixLayout::Undefined);
}

TEST(BuilderTest, CubeFragmentsAndElementOperationsRoundTrip) {
  KernelBuilder B("elems");
  B.setCubeDim({64});
  const Type F16 = Type::scalar(ScalarKind::F16);
  ValueId M = B.addBuffer("m", F16, AccessKind::Read);
  MatrixType CubeAcc =
      matrix(MatrixUse::Accumulator, ScalarKind::F32, MatrixLayout::Undefined);
  CubeAcc.M = 32;
  CubeAcc.Scope = MatrixScope::Cube;
  ValueId C = B.named("c").fragment(CubeAcc);
  MatrixType PlaneA = matrix(MatrixUse::A, ScalarKind::F16, MatrixLayout::Row);
  PlaneA.N = 8;
  ValueId FA = B.named("fa").fragment(PlaneA);
  B.cmmaLdmatrix(FA, M, lit::u32(2), /*Transpose=*/true);
  ValueId N = B.named("n").op(OpKind::CmmaCount, {C});
  ValueId R = B.named("r").op(OpKind::CmmaRow, {C, lit::u32(1), N});
  ValueId X = B.named("x").op(OpKind::CmmaGet, {FA, R});
  B.cmmaSet(FA, lit::u32(0), X);
  IRKernel K = finishOk(B);
  EXPECT_EQ(printKernel(K),
            "kernel @elems cube_dim(64) (%m: buffer<f16, read>) {\n"
            "  %c = fragment matrix<accumulator, 32x16x16, f32, cube>\n"
            "  %fa = fragment matrix<a, 16x8x16, f16, row>\n"
            "  cmma_ldmatrix %fa, %m[2], trans\n"
            "  %n = cmma_count %c : u32\n"
            "  %r = cmma_row %c, 1:u32, %n : u32\n"
            "  %x = cmma_get %fa, %r : f16\n"
            "  cmma_set %fa, 0:u32, %x\n"
            "}\n");
  expectRoundTrip(K);
  llvm::Expected<Module> P = parseModule(printKernel(K), "builder.kiln");
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(P->Kernels[0].value(C).Matrix, CubeAcc);
  EXPECT_TRUE(P->Kernels[0].Body.Ops[2].Transpose);
}

TEST(BuilderTest, FragmentLayoutIsCudaMma16x8x16) {
  // PTX's mma.m16n8k16 register tables: group g = lane / 4, t = lane % 4.
  MatrixType A = matrix(MatrixUse::A, ScalarKind::F16, MatrixLayout::Row);
  A.N = 8;
  MatrixType Bf = A, C = A;
  Bf.Use = MatrixUse::B;
  C.Use = MatrixUse::Accumulator;
  C.Elem = ScalarKind::F32;
  EXPECT_EQ(matrixElementsPerUnit(A, 32), 8u);
  EXPECT_EQ(matrixElementsPerUnit(Bf, 32), 4u);
  EXPECT_EQ(matrixElementsPerUnit(C, 32), 4u);
  for (uint32_t Lane = 0; Lane < 32; ++Lane) {
    uint32_t G = Lane / 4, T = Lane % 4;
    for (uint32_t I = 0; I < 8; ++I) {
      uint32_t Row = (I < 2 || (I >= 4 && I < 6)) ? G : G + 8;
      uint32_t Col = T * 2 + (I & 1) + (I >= 4 ? 8 : 0);
      EXPECT_EQ(matrixElementPosition(A, 32, Lane, I),
                std::make_pair(Row, Col));
    }
    for (uint32_t I = 0; I < 4; ++I) {
      EXPECT_EQ(matrixElementPosition(Bf, 32, Lane, I),
                std::make_pair(T * 2 + (I & 1) + (I >= 2 ? 8 : 0), G));
      EXPECT_EQ(matrixElementPosition(C, 32, Lane, I),
                std::make_pair(I < 2 ? G : G + 8, T * 2 + (I & 1)));
    }
  }
  // A cube fragment: row-major element n * units + u.
  MatrixType Cube = C;
  Cube.Scope = MatrixScope::Cube;
  EXPECT_EQ(matrixElementsPerUnit(Cube, 48), 3u);
  EXPECT_EQ(matrixElementPosition(Cube, 48, 5, 2), std::make_pair(12u, 5u));
}

TEST(BuilderTest, MinifloatFragmentLayoutIsCudaMma16x8x32And16x8x64) {
  // PTX's mma.m16n8k32 (f8f6f4, one code per byte) and m16n8k64 (mxf4,
  // packed fp4) register tables: group g = lane / 4, t = lane % 4; a
  // register holds R = 4 or 8 codes.
  for (uint32_t K : {32u, 64u}) {
    uint32_t R = K / 8;
    MatrixType A = matrix(MatrixUse::A, ScalarKind::F4E2M1, MatrixLayout::Row);
    A.N = 8;
    A.K = K;
    MatrixType Bf = A;
    Bf.Use = MatrixUse::B;
    EXPECT_EQ(matrixUnitRun(A), R);
    EXPECT_EQ(matrixElementsPerUnit(A, 32), 4 * R);
    EXPECT_EQ(matrixElementsPerUnit(Bf, 32), 2 * R);
    for (uint32_t Lane = 0; Lane < 32; ++Lane) {
      uint32_t G = Lane / 4, T = Lane % 4;
      for (uint32_t I = 0; I < 4 * R; ++I) {
        uint32_t Reg = I / R;
        EXPECT_EQ(matrixElementPosition(A, 32, Lane, I),
                  std::make_pair(G + 8 * (Reg % 2), T * R + I % R + 4 * R * (Reg / 2)))
            << K << " lane " << Lane << " a" << I;
      }
      for (uint32_t I = 0; I < 2 * R; ++I)
        EXPECT_EQ(matrixElementPosition(Bf, 32, Lane, I),
                  std::make_pair(T * R + I % R + 4 * R * (I / R), G))
            << K << " lane " << Lane << " b" << I;
    }
  }
  MatrixType Fp8 = matrix(MatrixUse::A, ScalarKind::F8E5M2, MatrixLayout::Row);
  Fp8.N = 8;
  Fp8.K = 32;
  EXPECT_EQ(matrixUnitRun(Fp8), 4u);
  EXPECT_EQ(scaledMmaScaleCounts(Fp8).size(), 1u);
  Fp8.K = 64; // not an fp8 shape
  EXPECT_TRUE(unsupportedMatrixReason(Fp8).has_value());
}

TEST(BuilderTest, ScaledMmaPrintsAndParses) {
  KernelBuilder B("scaled");
  B.setCubeDim({32});
  ValueId S = B.addScalar("s", Type::scalar(ScalarKind::UE8M0));
  MatrixType TA = matrix(MatrixUse::A, ScalarKind::F8E4M3, MatrixLayout::Row);
  TA.N = 8;
  TA.K = 32;
  MatrixType TB = TA, TC = TA;
  TB.Use = MatrixUse::B;
  TB.Elem = ScalarKind::F6E3M2;
  TB.Layout = MatrixLayout::Col;
  TC.Use = MatrixUse::Accumulator;
  TC.Elem = ScalarKind::F32;
  TC.Layout = MatrixLayout::Undefined;
  ValueId FA = B.named("a").fragment(TA);
  ValueId FB = B.named("b").fragment(TB);
  ValueId FC = B.named("c").fragment(TC);
  B.cmmaMmaScaled(FC, FA, FB, FC, S, S);
  IRKernel K = finishOk(B);
  EXPECT_EQ(printKernel(K),
            "kernel @scaled cube_dim(32) (%s: ue8m0) {\n"
            "  %a = fragment matrix<a, 16x8x32, f8e4m3, row>\n"
            "  %b = fragment matrix<b, 16x8x32, f6e3m2, col>\n"
            "  %c = fragment matrix<accumulator, 16x8x32, f32>\n"
            "  cmma_mma_scaled %c, %a, %b, %c, %s, %s\n"
            "}\n");
  expectRoundTrip(K);
}

TEST(BuilderTest, CmmaMisuseIsAnError) {
  KernelBuilder B("bad");
  ValueId F = B.fragment(
      matrix(MatrixUse::Accumulator, ScalarKind::F32, MatrixLayout::Row));
  B.cmmaMma(F, F, F, ValueId(99));
  EXPECT_NE(finishError(B).find("names no value"), std::string::npos);
  KernelBuilder D("decl");
  D.op(OpKind::Fragment, {});
  EXPECT_NE(finishError(D).find("own builder method"), std::string::npos);
}
