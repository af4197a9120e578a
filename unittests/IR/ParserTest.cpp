//===- ParserTest.cpp - Parsing and printing the text form ----------------===//

#include "Support/Kernels.h"

#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"

#include "gtest/gtest.h"

using namespace kiln;

using kiln::test::parseError;
using kiln::test::parseOk;

namespace {

const char *VAdd = R"(// c[i] = a[i] + b[i]
kernel @vadd cube_dim(256) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                            %c: buffer<f32, write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = add %x, %y : f32
    store %c[%i], %s
  }
}
)";

TEST(ParserTest, FillsTheStructures) {
  Module M = parseOk(VAdd);
  ASSERT_EQ(M.Kernels.size(), 1u);
  const IRKernel &K = M.Kernels[0];
  EXPECT_EQ(K.Name, "vadd");
  EXPECT_EQ(K.CubeDimRank, 1);
  EXPECT_EQ(K.CubeDim[0], 256u);
  EXPECT_EQ(K.CubeDim[1], 1u);
  ASSERT_EQ(K.Params.size(), 4u);
  EXPECT_EQ(K.value(K.Params[0]).Kind, ValueKind::Buffer);
  EXPECT_EQ(K.value(K.Params[2]).Access, AccessKind::Write);
  EXPECT_EQ(K.value(K.Params[3]).Kind, ValueKind::Plain);
  EXPECT_EQ(K.value(K.Params[3]).Ty, Type::scalar(ScalarKind::U32));
  ASSERT_EQ(K.Body.Ops.size(), 3u);
  const Operation &If = K.Body.Ops[2];
  EXPECT_EQ(If.Kind, OpKind::If);
  EXPECT_FALSE(If.HasElse);
  ASSERT_EQ(If.Regions.size(), 1u);
  const Operation &Load = If.Regions[0].Ops[0];
  EXPECT_EQ(Load.Kind, OpKind::Load);
  ASSERT_EQ(Load.Operands.size(), 2u);
  EXPECT_EQ(Load.Operands[0].Value, K.Params[0]);
  EXPECT_EQ(Load.Loc.Line, 7u);
  EXPECT_EQ(Load.Loc.Col, 10u);
  EXPECT_EQ(K.value(Load.Result).Name, "x");
}

TEST(ParserTest, PrintIsAFixedPoint) {
  Module M = parseOk(VAdd);
  std::string Once = printModule(M);
  Module Again = parseOk(Once);
  EXPECT_EQ(printModule(Again), Once);
  EXPECT_NE(Once.find("kernel @vadd cube_dim(256) (%a: buffer<f32, read>, "
                      "%b: buffer<f32, read>, %c: buffer<f32, write>, "
                      "%n: u32) {\n  %i = absolute_pos : u32\n"),
            std::string::npos)
      << Once;
}

TEST(ParserTest, BuiltinsLiteralsAndIndices) {
  Module M = parseOk(R"(kernel @k cube_dim(8, 4) plane_dim(32) (%m: buffer<vec<4 x f16>, read_write>) {
  %x = unit_pos.y : u32
  %v = const [1.0, 2.0, 3.0, 4.0] : vec<4 x f16>
  %e = extract %v[2] : f16
  %y = mul %x, 2:u32 : u32
  %l = load %m[7] : vec<4 x f16>
  %t = load %m[7:i32] : vec<4 x f16>
})");
  ASSERT_EQ(M.Kernels.size(), 1u);
  const IRKernel &K = M.Kernels[0];
  EXPECT_EQ(K.CubeDimRank, 2);
  EXPECT_EQ(K.PlaneDim, 32u);
  EXPECT_EQ(K.value(K.Params[0]).Ty, Type::line(ScalarKind::F16, 4));
  EXPECT_EQ(K.Body.Ops[0].Component, 2);
  EXPECT_EQ(K.Body.Ops[1].ConstBits[0], 0x3c00u);
  const Operand &Index = K.Body.Ops[2].Operands[1];
  ASSERT_TRUE(Index.isLiteral());
  EXPECT_EQ(Index.Lit.Ty, Type::scalar(ScalarKind::U32));
  EXPECT_EQ(Index.Lit.Bits, 2u);
  EXPECT_EQ(K.Body.Ops[3].Operands[1].Lit.Bits, 2u);
  EXPECT_EQ(K.Body.Ops[5].Operands[1].Lit.Ty, Type::scalar(ScalarKind::I32));
  std::string Text = printKernel(K);
  EXPECT_NE(Text.find("%e = extract %v[2] : f16"), std::string::npos) << Text;
  EXPECT_NE(Text.find("%t = load %m[7:i32] : vec<4 x f16>"), std::string::npos)
      << Text;
  EXPECT_NE(Text.find("cube_dim(8, 4) plane_dim(32)"), std::string::npos);
}

TEST(ParserTest, Diagnostics) {
  EXPECT_EQ(parseError("kernel @k cube_dim(1) () {\n  %e = extract %v[2] : f16\n}"),
            "t.kiln:2:16: error: use of undefined value '%v'");
  EXPECT_EQ(parseError("kernel @k cube_dim(1) (%a: u32, %a: u32) {}"),
            "t.kiln:1:33: error: redefinition of '%a'");
  EXPECT_EQ(parseError("kernel @k cube_dim(1) () {\n  if true:bool {\n    %t = const 1 : u32\n  }\n  %u = add %t, %t : u32\n}"),
            "t.kiln:5:12: error: use of undefined value '%t'");
  EXPECT_EQ(parseError("kernel @k cube_dim(1) () {\n  %x = frob : u32\n}"),
            "t.kiln:2:8: error: unknown operation 'frob'");
  EXPECT_EQ(parseError("kernel @k cube_dim(1) () {\n  %x = const 1 : vec<5 x f32>\n}"),
            "t.kiln:2:22: error: invalid line width 5: expected 1, 2, 3, 4, 8 or 16");
  EXPECT_EQ(parseError("kernel @k cube_dim(1) () {\n  %x = const 300 : u8\n}"),
            "t.kiln:2:14: error: integer literal '300' out of range for 'u8'");
  EXPECT_EQ(parseError("kernel @k cube_dim(1) () {"),
            "t.kiln:1:27: error: expected '}' before end of file");
  EXPECT_EQ(parseError(llvm::StringRef("kernel\0", 7)),
            "t.kiln:1:7: error: unexpected character '\\x00'");
}

TEST(ParserTest, ScopesEndWithTheirBlock) {
  Module M = parseOk(R"(kernel @k cube_dim(1) () {
  for %i = 0:u32 to 4:u32 {
    %t = add %i, 1:u32 : u32
  }
  for %i = 0:u32 to 4:u32 step 2:u32 {
    %t = add %i, 1:u32 : u32
  }
})");
  ASSERT_EQ(M.Kernels.size(), 1u);
  const Operation &For = M.Kernels[0].Body.Ops[1];
  EXPECT_EQ(For.Operands.size(), 3u);
  EXPECT_EQ(For.ResultType, Type::scalar(ScalarKind::U32));
  EXPECT_EQ(parseError("kernel @k cube_dim(1) () {\n  for %i = 0:u32 to 4:u32 {\n  }\n  %t = add %i, 1:u32 : u32\n}"),
            "t.kiln:4:12: error: use of undefined value '%i'");
}

TEST(ParserTest, SwitchAndConstants) {
  Module M = parseOk(R"(kernel @k cube_dim(1) (%s: i32) {
  switch %s {
    case 1 {
    }
    case -2 {
      return
    }
    default {
      %v = const [1.0, -0.0, inf, nan] : vec<4 x f32>
    }
  }
})");
  ASSERT_EQ(M.Kernels.size(), 1u);
  const Operation &Sw = M.Kernels[0].Body.Ops[0];
  EXPECT_EQ(Sw.CaseValues, (std::vector<CaseLabel>{1, -2}));
  EXPECT_TRUE(Sw.HasDefault);
  ASSERT_EQ(Sw.Regions.size(), 3u);
  const Operation &C = Sw.Regions[2].Ops[0];
  EXPECT_EQ(C.ConstBits,
            (std::vector<uint64_t>{0x3f800000, 0x80000000, 0x7f800000,
                                   0x7fc00000}));
}

TEST(ParserTest, SwitchCaseWithSeveralLabels) {
  Module M = parseOk(R"(kernel @k cube_dim(1) (%s: i32) {
  switch %s {
    case 1, -3 , 0x10 {
    }
    case 2 {
    }
  }
})");
  const Operation &Sw = M.Kernels[0].Body.Ops[0];
  EXPECT_EQ(Sw.CaseValues, (std::vector<CaseLabel>{1, -3, 16, 2}));
  EXPECT_EQ(Sw.CaseLabelCounts, (std::vector<uint32_t>{2 + 1, 1}));
  EXPECT_EQ(Sw.Regions.size(), 2u);
  EXPECT_EQ(parseError("kernel @k cube_dim(1) (%s: i32) {\n  switch %s {\n"
                       "    case 1, 2, 1 {\n    }\n  }\n}"),
            "t.kiln:3:16: error: duplicate case value 1");
  EXPECT_EQ(parseError("kernel @k cube_dim(1) (%s: i32) {\n  switch %s {\n"
                       "    case 2 {\n    }\n    case 1, 2 {\n    }\n  }\n}"),
            "t.kiln:5:13: error: duplicate case value 2");
  EXPECT_EQ(parseError("kernel @k cube_dim(1) (%s: i32) {\n  switch %s {\n"
                       "    case 1, {\n    }\n  }\n}"),
            "t.kiln:3:13: error: expected a case value, found '{'");
}

TEST(ParserTest, DeepNestingIsAnError) {
  std::string Text = "kernel @k cube_dim(1) () {\n";
  for (int I = 0; I < 100000; ++I)
    Text += "loop {";
  std::string Err = parseError(Text);
  EXPECT_NE(Err.find("error: blocks nested deeper than 256 levels"),
            std::string::npos)
      << Err;
}

} // namespace
