//===- BuilderDiagnosticsTest.cpp - Diagnostics without locations ---------===//
//
// Kernels built with KernelBuilder have no source locations, so their
// diagnostics name the kernel and the operation instead:
//   <builder>: error: in kernel @K, operation #N (TEXT): MESSAGE
// N counts operations in a pre-order walk of the body from 0, nested blocks
// included; TEXT is printOperationSummary of the operation.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Builder.h"
#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace kiln;
using testing::ElementsAre;

namespace {

const Type F32 = Type::scalar(ScalarKind::F32);
const Type F64 = Type::scalar(ScalarKind::F64);
const Type I32 = Type::scalar(ScalarKind::I32);
const Type U32 = Type::scalar(ScalarKind::U32);

IRKernel finishOk(KernelBuilder &B) {
  llvm::Expected<IRKernel> K = B.finish();
  if (!K) {
    ADD_FAILURE() << llvm::toString(K.takeError());
    return IRKernel();
  }
  return std::move(*K);
}

/// The diagnostics of \p E (which must fail with a DiagnosticError).
std::vector<Diagnostic> takeDiagnostics(llvm::Error E) {
  std::vector<Diagnostic> Out;
  if (!E) {
    ADD_FAILURE() << "no diagnostics";
    return Out;
  }
  llvm::handleAllErrors(
      std::move(E),
      [&](const DiagnosticError &D) {
        Out.insert(Out.end(), D.diagnostics().begin(), D.diagnostics().end());
      },
      [&](const llvm::ErrorInfoBase &Other) {
        ADD_FAILURE() << "unexpected error: " << Other.message();
      });
  return Out;
}

std::vector<std::string> strs(const std::vector<Diagnostic> &Diags) {
  std::vector<std::string> Out;
  for (const Diagnostic &D : Diags)
    Out.push_back(D.str());
  return Out;
}

/// verifyKernel with the default limits and an empty file name, as an
/// embedder without a file would call it.
std::vector<std::string> diagnose(const IRKernel &K,
                                  const DeviceLimits &Limits = {}) {
  return strs(takeDiagnostics(verifyKernel(K, Limits, "")));
}

TEST(BuilderDiagnosticsTest, OperandTypesNameTheOperation) {
  KernelBuilder B("vadd");
  B.setCubeDim({256});
  ValueId A = B.addBuffer("a", F32, AccessKind::Read);
  ValueId N = B.addScalar("n", I32);
  ValueId I = B.builtin(OpKind::AbsolutePos);
  ValueId X = B.load(A, I);
  B.op(OpKind::Add, {X, N});
  EXPECT_THAT(diagnose(finishOk(B)),
              ElementsAre("<builder>: error: in kernel @vadd, operation #2 "
                          "(%2 = add %1, %n : f32): operand 2 of add has type "
                          "'i32', but operand 1 has type 'f32'"));
}

TEST(BuilderDiagnosticsTest, NestedBlocksAreCountedInPreOrder) {
  KernelBuilder B("nested");
  ValueId A = B.addBuffer("a", U32, AccessKind::Read);
  ValueId N = B.addScalar("n", U32);
  ValueId I = B.builtin(OpKind::UnitPos); // #0
  ValueId C = B.op(OpKind::Lt, {I, N});   // #1
  ValueId K = B.beginFor(lit::u32(0), N); // #2
  ValueId V = B.load(A, K);               // #3
  B.beginIf(C);                           // #4
  B.store(A, K, V);                       // #5
  B.syncCube();                           // #6
  B.end();                                // if
  B.end();                                // for
  B.store(A, I, I);                       // #7
  EXPECT_THAT(
      diagnose(finishOk(B)),
      ElementsAre("<builder>: error: in kernel @nested, operation #5 "
                  "(store %a[%2], %3): store writes to %a, a buffer declared "
                  "'read'",
                  "<builder>: error: in kernel @nested, operation #6 "
                  "(sync_cube): sync_cube under divergent control flow: the "
                  "condition at operation #4 depends on unit_pos",
                  "<builder>: error: in kernel @nested, operation #7 "
                  "(store %a[%0], %0): store writes to %a, a buffer declared "
                  "'read'"));
}

TEST(BuilderDiagnosticsTest, UniformityExplanationsUseNumbers) {
  KernelBuilder B("exit");
  ValueId M = B.addBuffer("m", U32, AccessKind::ReadWrite);
  // #0 loop { #1 atomic_add; #2 eq; #3 if { #4 break }; #5 sync_cube }
  B.beginLoop();
  ValueId Old = B.atomic(OpKind::AtomicAdd, M, lit::u32(0), lit::u32(1));
  ValueId C = B.op(OpKind::Eq, {Old, lit::u32(7)});
  B.beginIf(C);
  B.breakLoop();
  B.end();
  B.syncCube();
  B.end();
  EXPECT_THAT(
      diagnose(finishOk(B)),
      ElementsAre("<builder>: error: in kernel @exit, operation #5 "
                  "(sync_cube): sync_cube under divergent control flow: the "
                  "break at operation #4 leaves the loop at operation #0 "
                  "under divergent control flow (the condition at operation "
                  "#3 depends on the result of atomic_add at operation #1)"));
}

TEST(BuilderDiagnosticsTest, OperationsWithBlocksPrintTheirFirstLine) {
  KernelBuilder B("cond");
  ValueId N = B.addScalar("n", U32);
  B.beginIf(N);  // #0: a u32 condition
  B.beginLoop(); // #1
  B.breakLoop(); // #2
  B.end();
  B.beginElse();
  B.breakLoop(); // #3: outside any loop
  B.end();
  EXPECT_THAT(diagnose(finishOk(B)),
              ElementsAre("<builder>: error: in kernel @cond, operation #0 "
                          "(if %n { ... }): the condition of if has type "
                          "'u32', expected 'bool'",
                          "<builder>: error: in kernel @cond, operation #3 "
                          "(break): break outside a for or loop"));
}

TEST(BuilderDiagnosticsTest, LongOperationsAreCut) {
  KernelBuilder B("consts");
  B.constant(Type::line(ScalarKind::F64, 16),
             std::vector<uint64_t>(16, 0x3FB999999999999AULL)); // 0.1
  DeviceLimits Limits;
  Limits.SupportsType[static_cast<unsigned>(ScalarKind::F64)] = false;
  // The printed form is 107 characters: cut to 77 and "...".
  EXPECT_THAT(diagnose(finishOk(B), Limits),
              ElementsAre("<builder>: error: in kernel @consts, operation #0 "
                          "(%0 = const [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, "
                          "0.1, 0.1, 0.1, 0.1, 0.1, 0.1, ...): result %0 of "
                          "const has element type 'f64', which the device "
                          "does not support"));
}

TEST(BuilderDiagnosticsTest, KernelWideProblemsNameTheKernel) {
  KernelBuilder B("big");
  B.setCubeDim({2048});
  B.setPlaneDim(16);
  B.addScalar("x", F64);
  DeviceLimits Limits;
  Limits.SupportsType[static_cast<unsigned>(ScalarKind::F64)] = false;
  EXPECT_THAT(
      diagnose(finishOk(B), Limits),
      ElementsAre("<builder>: error: in kernel @big: cube_dim.x = 2048 "
                  "exceeds the device limit of 1024",
                  "<builder>: error: in kernel @big: cube_dim(2048, 1, 1) has "
                  "2048 units per cube; the device allows at most 1024",
                  "<builder>: error: in kernel @big: plane_dim(16) requested "
                  "but the device runs planes of 32 units",
                  "<builder>: error: in kernel @big: parameter %x has element "
                  "type 'f64', which the device does not support"));
}

TEST(BuilderDiagnosticsTest, DuplicateKernelsInAModule) {
  Module M; // FileName empty, as a module made in memory has it
  for (int I = 0; I < 2; ++I) {
    KernelBuilder B("k");
    M.Kernels.push_back(finishOk(B));
  }
  EXPECT_THAT(strs(takeDiagnostics(verifyModule(M, DeviceLimits()))),
              ElementsAre("<builder>: error: kernels #0 and #1 of the module "
                          "are both named @k"));
}

TEST(BuilderDiagnosticsTest, FieldsLeadBackToTheOperation) {
  KernelBuilder B("fields");
  ValueId N = B.addScalar("n", U32);
  B.beginFor(lit::u32(0), N);
  B.op(OpKind::Sqrt, {N}); // #1
  B.end();
  IRKernel K = finishOk(B);
  std::vector<Diagnostic> Diags =
      takeDiagnostics(verifyKernel(K, DeviceLimits(), "mem.kiln"));
  ASSERT_EQ(Diags.size(), 1u);
  const Diagnostic &D = Diags[0];
  EXPECT_FALSE(D.Loc.isValid());
  EXPECT_EQ(D.KernelName, "fields");
  ASSERT_TRUE(D.OpIndex.has_value());
  EXPECT_EQ(*D.OpIndex, 1u);
  EXPECT_EQ(operationAt(K, *D.OpIndex), &K.Body.Ops[0].Regions[0].Ops[0]);
  EXPECT_EQ(D.OpText, "%1 = sqrt %n : u32");
  // A file name given is kept.
  EXPECT_EQ(D.str(), "mem.kiln: error: in kernel @fields, operation #1 (%1 = "
                     "sqrt %n : u32): sqrt needs float operands, found 'u32'");
}

TEST(BuilderDiagnosticsTest, SaturatingAndInverseHyperbolicOps) {
  // op() implies the types of these operations and the verifier
  // keeps add_sat/sub_sat/find_first_set to integers, asinh/acosh/atanh and
  // rhypot to floats.
  KernelBuilder B("small");
  ValueId N = B.addScalar("n", U32);
  ValueId X = B.addScalar("x", F32);
  ValueId S = B.op(OpKind::AddSat, {N, N});
  B.op(OpKind::SubSat, {S, N});
  B.op(OpKind::FindFirstSet, {N});
  ValueId H = B.op(OpKind::Asinh, {X});
  B.op(OpKind::Acosh, {H});
  B.op(OpKind::Atanh, {X});
  B.op(OpKind::Rhypot, {X, H});
  B.op(OpKind::AddSat, {X, X}); // #7
  B.op(OpKind::Atanh, {N});     // #8
  IRKernel K = finishOk(B);
  std::vector<Diagnostic> Diags =
      takeDiagnostics(verifyKernel(K, DeviceLimits(), "small.kiln"));
  ASSERT_EQ(Diags.size(), 2u);
  EXPECT_EQ(Diags[0].OpText, "%7 = add_sat %x, %x : f32");
  EXPECT_EQ(Diags[0].Message, "add_sat needs integer operands, found 'f32'");
  EXPECT_EQ(Diags[1].OpText, "%8 = atanh %n : u32");
  EXPECT_EQ(Diags[1].Message, "atanh needs float operands, found 'u32'");
  EXPECT_NE(printKernel(K).find("%0 = add_sat %n, %n : u32\n"
                                "  %1 = sub_sat %0, %n : u32\n"
                                "  %2 = find_first_set %n : u32\n"
                                "  %3 = asinh %x : f32\n"
                                "  %4 = acosh %3 : f32\n"
                                "  %5 = atanh %x : f32\n"
                                "  %6 = rhypot %x, %3 : f32\n"),
            std::string::npos)
      << printKernel(K);
}

TEST(BuilderDiagnosticsTest, ParsedKernelsKeepTheirLocations) {
  llvm::Expected<Module> M = parseModule("kernel @k cube_dim(64) (%x: f32) {\n"
                                         "  %y = add %x, %x : i32\n"
                                         "}\n",
                                         "x.kiln");
  ASSERT_TRUE(static_cast<bool>(M)) << llvm::toString(M.takeError());
  std::vector<Diagnostic> Diags =
      takeDiagnostics(verifyModule(*M, DeviceLimits()));
  ASSERT_EQ(Diags.size(), 1u);
  EXPECT_EQ(Diags[0].str(), "x.kiln:2:8: error: result type 'i32' does not "
                            "match the implied type 'f32' of add");
  EXPECT_FALSE(Diags[0].KernelName.has_value());
  EXPECT_FALSE(Diags[0].OpIndex.has_value());
}

TEST(BuilderDiagnosticsTest, StrFormats) {
  Diagnostic D;
  D.Message = "bad";
  EXPECT_EQ(D.str(), "<builder>: error: bad");
  D.File = "f.kiln";
  EXPECT_EQ(D.str(), "f.kiln: error: bad");
  D.KernelName = "";
  EXPECT_EQ(D.str(), "f.kiln: error: in kernel <unnamed>: bad");
  D.KernelName = "k";
  D.OpIndex = 3;
  EXPECT_EQ(D.str(), "f.kiln: error: in kernel @k, operation #3: bad");
  D.OpText = "sync_cube";
  EXPECT_EQ(D.str(),
            "f.kiln: error: in kernel @k, operation #3 (sync_cube): bad");
  // A location wins: the located form is unchanged.
  D.Loc = {4, 5};
  EXPECT_EQ(D.str(), "f.kiln:4:5: error: bad");
}

TEST(BuilderDiagnosticsTest, OperationNumbers) {
  KernelBuilder B("walk");
  ValueId N = B.addScalar("n", U32);
  B.beginSwitch(N); // #0
  B.addCase(1);
  B.syncCube(); // #1
  B.addCase(2);
  B.beginLoop(); // #2
  B.breakLoop(); // #3
  B.end();
  B.addDefault();
  B.returnUnit(); // #4
  B.end();
  B.syncCube(); // #5
  IRKernel K = finishOk(B);
  std::vector<std::string> Seen;
  forEachOperation(K, [&](const Operation &Op, unsigned Number) {
    Seen.push_back(std::to_string(Number) + " " + opName(Op.Kind).str());
    EXPECT_EQ(operationAt(K, Number), &Op);
  });
  EXPECT_THAT(Seen, ElementsAre("0 switch", "1 sync_cube", "2 loop", "3 break",
                                "4 return", "5 sync_cube"));
  EXPECT_EQ(operationAt(K, 6), nullptr);
  EXPECT_EQ(printOperationSummary(K, K.Body.Ops[0]), "switch %n { ... }");
  EXPECT_EQ(printOperationSummary(K, K.Body.Ops[0], 10), "switch ...");
  EXPECT_EQ(printOperationSummary(K, K.Body.Ops[1]), "sync_cube");
}

TEST(BuilderDiagnosticsTest, ScalarLiteralsSplatInLineOperations) {
  KernelBuilder B("splat");
  Type F4 = Type::line(ScalarKind::F32, 4);
  ValueId X = B.addScalar("x", F4);
  Literal Half{Type::scalar(ScalarKind::F32), 0x3F000000}; // 0.5
  ValueId Y = B.op(OpKind::Mul, {X, Half});
  ValueId E = B.op(OpKind::Extract, {Y, Literal{U32, 2}});
  IRKernel K = finishOk(B);
  EXPECT_EQ(K.value(Y).Ty, F4);
  // The literal became the line; an index stays a scalar.
  const Operation &Mul = K.Body.Ops[0];
  EXPECT_EQ(Mul.Operands[1].Lit.Ty, F4);
  EXPECT_EQ(K.Body.Ops[1].Operands[1].Lit.Ty, U32);
  EXPECT_EQ(K.value(E).Ty, Type::scalar(ScalarKind::F32));
  // Printed as the scalar it was written as.
  EXPECT_EQ(printOperationSummary(K, Mul), "%0 = mul %x, 0.5:f32 : vec<4 x f32>");
}

TEST(BuilderDiagnosticsTest, SyncPlaneAndProductScans) {
  KernelBuilder B("scan");
  ValueId X = B.addScalar("x", U32);
  ValueId Inc = B.op(OpKind::PlaneInclusiveProd, {X});
  B.syncPlane();
  ValueId Exc = B.op(OpKind::PlaneExclusiveProd, {Inc});
  (void)Exc;
  IRKernel K = finishOk(B);
  std::vector<std::string> Seen;
  forEachOperation(K, [&](const Operation &Op, unsigned Number) {
    Seen.push_back(opName(Op.Kind).str());
  });
  EXPECT_THAT(Seen, ElementsAre("plane_inclusive_prod", "sync_plane",
                                "plane_exclusive_prod"));
  EXPECT_EQ(K.value(Inc).Ty, U32);
}

} // namespace
