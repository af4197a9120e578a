//===- TextTest.cpp - The verifier on parsed and built kernels ------------===//
//
// Kernels from text (parseModule) and from kiln::KernelBuilder; device limits
// set by hand; determinism; and robustness: randomly damaged kernels never
// crash the verifier and always get the same diagnostics twice.
//
//===----------------------------------------------------------------------===//

#include "Support/Kernels.h"

#include "kiln/IR/Builder.h"
#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <random>

using namespace kiln;
using kiln::test::diagnosticTexts;
using testing::ElementsAre;
using testing::IsEmpty;

namespace {

/// Parses \p Text (which must parse) and verifies it against \p Limits.
std::vector<std::string> verifyText(llvm::StringRef Text,
                                    const DeviceLimits &Limits = {}) {
  llvm::Expected<Module> M = parseModule(Text, "x.kiln");
  if (!M)
    return {"parse error: " + llvm::toString(M.takeError())};
  return diagnosticTexts(verifyModule(*M, Limits));
}

const char *const Reduce =
    R"(kernel @reduce cube_dim(256) (%in: buffer<f32, read>, %out: buffer<f32, write>) {
  %sh = shared f32[256]
  %u = unit_pos : u32
  %x = load %in[%u] : f32
  store %sh[%u], %x
  sync_cube
  %s = var u32
  set %s, 128:u32
  loop {
    %cur = get %s : u32
    %done = eq %cur, 0:u32 : bool
    if %done {
      break
    }
    %active = lt %u, %cur : bool
    if %active {
      %j = add %u, %cur : u32
      %a = load %sh[%u] : f32
      %b = load %sh[%j] : f32
      %sum = add %a, %b : f32
      store %sh[%u], %sum
    }
    sync_cube
    %next = shr %cur, 1:u32 : u32
    set %s, %next
  }
  %first = eq %u, 0:u32 : bool
  if %first {
    %t = load %sh[0:u32] : f32
    %c = cube_pos : u32
    store %out[%c], %t
  }
}
)";

TEST(TextTest, ReductionVerifies) {
  EXPECT_THAT(verifyText(Reduce), IsEmpty());
}

TEST(TextTest, ShiftByUnitPosMakesTheLoopDivergent) {
  std::string Text = Reduce;
  size_t At = Text.find("shr %cur, 1:u32");
  ASSERT_NE(At, std::string::npos);
  Text.replace(At, 15, "shr %cur, %u   ");
  EXPECT_THAT(verifyText(Text),
              ElementsAre("x.kiln:23:5: error: sync_cube under divergent "
                          "control flow: the break at 13:7 leaves the loop at "
                          "9:3 under divergent control flow (the condition at "
                          "12:8 depends on unit_pos)"));
}

TEST(TextTest, DeviceLimitsSetByHand) {
  DeviceLimits Small;
  Small.MaxUnitsPerCube = 128;
  Small.MaxSharedBytes = 512;
  Small.PlaneDim = 8;
  Small.SupportsType[unsigned(ScalarKind::F32)] = false;
  EXPECT_THAT(
      verifyText(Reduce, Small),
      ElementsAre(
          "x.kiln:1:1: error: cube_dim(256, 1, 1) has 256 units per cube; "
          "the device allows at most 128",
          "x.kiln:1:31: error: parameter %in has element type 'f32', which "
          "the device does not support",
          "x.kiln:1:55: error: parameter %out has element type 'f32', which "
          "the device does not support",
          "x.kiln:2:9: error: shared %sh has element type 'f32', which the "
          "device does not support",
          "x.kiln:4:8: error: result %x of load has element type 'f32', which "
          "the device does not support",
          "x.kiln:18:12: error: result %a of load has element type 'f32', "
          "which the device does not support",
          "x.kiln:19:12: error: result %b of load has element type 'f32', "
          "which the device does not support",
          "x.kiln:20:14: error: result %sum of add has element type 'f32', "
          "which the device does not support",
          "x.kiln:29:10: error: result %t of load has element type 'f32', "
          "which the device does not support"));
  Small.SupportsType[unsigned(ScalarKind::F32)] = true;
  EXPECT_THAT(verifyText(Reduce, Small),
              ElementsAre("x.kiln:1:1: error: cube_dim(256, 1, 1) has 256 "
                          "units per cube; the device allows at most 128",
                          "x.kiln:2:9: error: shared memory reaches 1024 bytes "
                          "with %sh; the device allows at most 512 bytes per "
                          "cube"));
  std::string WithPlane = Reduce;
  WithPlane.replace(WithPlane.find("cube_dim(256)"), 13,
                    "cube_dim(256) plane_dim(8)");
  EXPECT_THAT(verifyText(WithPlane),
              ElementsAre("x.kiln:1:1: error: plane_dim(8) requested but the "
                          "device runs planes "
                          "of 32 units"));
  Small.MaxUnitsPerCube = 256;
  Small.MaxSharedBytes = 1024;
  EXPECT_THAT(verifyText(WithPlane, Small), IsEmpty());
}

TEST(TextTest, DiagnosticsAreDeterministicAndInSourceOrder) {
  const char *Text =
      R"(kernel @a cube_dim(64) (%x: f32, %r: buffer<u32, read>) {
  %u = unit_pos : u32
  %y = add %x, %x : i32
  %c = lt %u, 3:u32 : bool
  if %c {
    sync_cube
    continue
  }
  store %r[%u], %u
}
kernel @a cube_dim(64) () {
}
)";
  std::vector<std::string> First = verifyText(Text);
  EXPECT_THAT(First,
              ElementsAre("x.kiln:3:8: error: result type 'i32' does not "
                          "match the implied type 'f32' of add",
                          "x.kiln:6:5: error: sync_cube under divergent "
                          "control flow: the condition at 5:6 depends on "
                          "unit_pos",
                          "x.kiln:7:5: error: continue outside a for or loop",
                          "x.kiln:9:9: error: store writes to %r, a buffer "
                          "declared 'read'",
                          "x.kiln:11:1: error: kernel @a is already defined "
                          "at 1:1"));
  for (int I = 0; I < 5; ++I)
    EXPECT_EQ(First, verifyText(Text));
}

TEST(TextTest, BuilderKernelsVerify) {
  KernelBuilder B("saxpy");
  B.setCubeDim({128});
  ValueId X = B.addBuffer("x", Type::scalar(ScalarKind::F32), AccessKind::Read);
  ValueId Y =
      B.addBuffer("y", Type::scalar(ScalarKind::F32), AccessKind::ReadWrite);
  ValueId A = B.addScalar("a", Type::scalar(ScalarKind::F32));
  ValueId I = B.builtin(OpKind::AbsolutePos);
  ValueId Xi = B.load(X, I);
  ValueId Yi = B.load(Y, I);
  ValueId R = B.op(OpKind::Fma, {A, Xi, Yi});
  B.store(Y, I, R);
  ValueId C = B.op(OpKind::Eq, {I, Literal{Type::scalar(ScalarKind::U32), 0}});
  B.beginIf(C);
  B.syncCube();
  B.end();
  llvm::Expected<IRKernel> K = B.finish();
  ASSERT_TRUE(static_cast<bool>(K)) << llvm::toString(K.takeError());
  EXPECT_THAT(diagnosticTexts(verifyKernel(*K, DeviceLimits(), "<builder>")),
              ElementsAre("<builder>: error: in kernel @saxpy, operation #7 "
                          "(sync_cube): sync_cube under divergent control "
                          "flow: the condition at operation #6 depends on "
                          "absolute_pos"));
}

/// Damages one random part of \p K: an operand's value or literal, an
/// operation's kind, result, result type, regions or operands, a value's
/// kind or type, the cube shape.
void damage(IRKernel &K, std::mt19937 &Rng) {
  std::vector<Operation *> Ops;
  std::vector<Block *> Blocks{&K.Body};
  for (size_t B = 0; B < Blocks.size(); ++B)
    for (Operation &Op : Blocks[B]->Ops) {
      Ops.push_back(&Op);
      for (Block &R : Op.Regions)
        Blocks.push_back(&R);
    }
  auto Pick = [&](size_t N) {
    return std::uniform_int_distribution<size_t>(0, N - 1)(Rng);
  };
  auto RandomType = [&] {
    // One past the last kind on purpose.
    unsigned Kind = Pick(unsigned(LastScalarKind) + 2);
    unsigned Lanes =
        std::array<unsigned, 8>{0, 1, 2, 3, 4, 5, 16, 255}[Pick(8)];
    return Type::line(static_cast<ScalarKind>(Kind), Lanes);
  };
  Operation &Op = *Ops[Pick(Ops.size())];
  switch (Pick(10)) {
  case 0:
    if (!Op.Operands.empty())
      Op.Operands[Pick(Op.Operands.size())].Value =
          static_cast<ValueId>(Pick(K.Values.size() + 3));
    break;
  case 1:
    if (!Op.Operands.empty())
      Op.Operands[Pick(Op.Operands.size())] =
          Operand::literal({RandomType(), Rng()});
    break;
  case 2:
    Op.Kind = static_cast<OpKind>(Pick(size_t(OpKind::Return) + 1));
    break;
  case 3:
    Op.Result = static_cast<ValueId>(Pick(K.Values.size() + 3));
    break;
  case 4:
    Op.ResultType = RandomType();
    break;
  case 5:
    if (!Op.Regions.empty())
      Op.Regions.pop_back();
    else
      Op.Regions.emplace_back();
    break;
  case 6:
    if (!Op.Operands.empty())
      Op.Operands.pop_back();
    else
      Op.Operands.push_back(Operand::value(0));
    break;
  case 7:
    K.Values[Pick(K.Values.size())].Kind = static_cast<ValueKind>(Pick(5));
    break;
  case 8:
    K.Values[Pick(K.Values.size())].Ty = RandomType();
    break;
  case 9:
    K.CubeDim[Pick(3)] = static_cast<uint32_t>(Rng());
    Op.ArraySize = Rng();
    Op.ConstBits.push_back(Rng());
    break;
  }
}

TEST(TextTest, DamagedKernelsNeverCrashAndStayDeterministic) {
  llvm::Expected<Module> M = parseModule(Reduce, "x.kiln");
  ASSERT_TRUE(static_cast<bool>(M)) << llvm::toString(M.takeError());
  std::mt19937 Rng(1234);
  unsigned Rejected = 0;
  for (int Round = 0; Round < 3000; ++Round) {
    IRKernel K = M->Kernels[0];
    for (int D = 0, N = 1 + Round % 4; D < N; ++D)
      damage(K, Rng);
    std::vector<std::string> First =
        diagnosticTexts(verifyKernel(K, DeviceLimits(), "x.kiln"));
    ASSERT_EQ(First, diagnosticTexts(verifyKernel(K, DeviceLimits(), "x.kiln")));
    for (const std::string &D : First)
      ASSERT_EQ(D.rfind("x.kiln:", 0), 0u) << D;
    Rejected += !First.empty();
  }
  // Most damage is caught; some (a type swapped for itself, say) is not.
  EXPECT_GT(Rejected, 2000u);
}

} // namespace
