//===- MinifloatTest.cpp - Minifloat casts lowered and run -----------------===//
//
// A kernel built with KernelBuilder (printed, then compiled as the runtime
// compiles text) converts f32 lines to f8e4m3, f8e5m2, ue8m0 and packed
// f4e2m1x2 and back, in both variants, against the host codec of
// Minifloat.h; and the lowered casts call no function, so that they
// vectorise on any CPU.
//
//===----------------------------------------------------------------------===//

#include "LoweringHarness.h"

#include "kiln/IR/Builder.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Minifloat.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>

using namespace kiln;
using namespace kiln::test;

namespace {

/// out_k[i] = cast(cast(in[i] : vec<8 x K>) : vec<8 x f32>) for the kinds,
/// and codes_k[i] the codes.
std::string buildKernel() {
  KernelBuilder B("minifloats");
  B.setCubeDim({16});
  ValueId In =
      B.addBuffer("in", Type::line(ScalarKind::F32, 8), AccessKind::Read);
  const ScalarKind Kinds[] = {ScalarKind::F8E4M3, ScalarKind::F8E5M2,
                              ScalarKind::UE8M0, ScalarKind::F6E3M2};
  std::vector<ValueId> Codes, Backs;
  for (ScalarKind K : Kinds) {
    Codes.push_back(B.addBuffer("", Type::line(K, 8), AccessKind::Write));
    Backs.push_back(B.addBuffer("", Type::line(ScalarKind::F32, 8),
                                AccessKind::Write));
  }
  ValueId Pairs = B.addBuffer("pairs", Type::line(ScalarKind::F4E2M1X2, 4),
                              AccessKind::Write);
  ValueId N = B.addScalar("n", Type::scalar(ScalarKind::U32));
  ValueId I = B.builtin(OpKind::AbsolutePos);
  B.beginIf(B.op(OpKind::Lt, {I, N}));
  ValueId X = B.load(In, I);
  for (size_t J = 0; J < std::size(Kinds); ++J) {
    ValueId C = B.cast(X, Type::line(Kinds[J], 8));
    B.store(Codes[J], I, C);
    B.store(Backs[J], I, B.cast(C, Type::line(ScalarKind::F32, 8)));
  }
  B.store(Pairs, I, B.cast(X, Type::line(ScalarKind::F4E2M1X2, 4)));
  B.end();
  llvm::Expected<IRKernel> K = B.finish();
  if (!K) {
    ADD_FAILURE() << llvm::toString(K.takeError());
    return "";
  }
  if (llvm::Error E = verifyKernel(*K, DeviceLimits(), "")) {
    ADD_FAILURE() << llvm::toString(std::move(E));
    return "";
  }
  return printKernel(*K);
}

float bitsFloat(uint32_t U) { return std::bit_cast<float>(U); }

TEST(LoweringMinifloat, BuiltKernelMatchesTheHostCodec) {
  std::string Text = buildKernel();
  ASSERT_FALSE(Text.empty());
  // Every f32 exponent, and mantissas around the rounding points.
  std::vector<float> In;
  for (uint32_t E = 0; E < 256; ++E)
    for (uint32_t M : {0u, 1u, 0x80000u, 0xFFFFFu, 0x100000u, 0x100001u,
                       0x3FFFFFu, 0x400000u, 0x400001u, 0x7FFFFFu})
      for (uint32_t S : {0u, 0x80000000u})
        In.push_back(bitsFloat(S | E << 23 | M));
  while (In.size() % 8)
    In.push_back(0.0f);
  uint32_t Lines = uint32_t(In.size() / 8);
  const ScalarKind Kinds[] = {ScalarKind::F8E4M3, ScalarKind::F8E5M2,
                              ScalarKind::UE8M0, ScalarKind::F6E3M2};
  for (bool Checked : {true, false}) {
    SCOPED_TRACE(Checked ? "bounds-checked" : "unchecked");
    // std::vector's storage is not 64-byte aligned: say so.
    JitKernel K = compile(Text, CpuVariant{Checked, 1}, {}, true);
    ASSERT_TRUE(K.Fn);
    std::vector<std::vector<uint8_t>> Codes(4, std::vector<uint8_t>(In.size()));
    std::vector<std::vector<float>> Backs(4, std::vector<float>(In.size()));
    std::vector<uint8_t> Pairs(In.size() / 2);
    // Buffers of lines: Count is in lines.
    auto Lined = [&](auto &V) { return KernelArg{V.data(), Lines}; };
    K.launch({Lined(In), Lined(Codes[0]), Lined(Backs[0]), Lined(Codes[1]),
              Lined(Backs[1]), Lined(Codes[2]), Lined(Backs[2]),
              Lined(Codes[3]), Lined(Backs[3]), Lined(Pairs), val(Lines)},
             {(Lines + 15) / 16, 1, 1});
    for (size_t J = 0; J < 4; ++J) {
      for (size_t I = 0; I < In.size(); ++I) {
        uint8_t Want = encodeMinifloat(In[I], Kinds[J]);
        ASSERT_EQ(Codes[J][I], Want)
            << scalarName(Kinds[J]).str() << " of " << In[I] << " (0x"
            << std::hex << std::bit_cast<uint32_t>(In[I]) << ")";
        float Back = float(decodeMinifloat(Want, Kinds[J]));
        if (std::isnan(Back))
          EXPECT_TRUE(std::isnan(Backs[J][I]));
        else
          EXPECT_EQ(std::bit_cast<uint32_t>(Backs[J][I]),
                    std::bit_cast<uint32_t>(Back));
      }
    }
    for (size_t I = 0; I < Pairs.size(); ++I)
      ASSERT_EQ(Pairs[I],
                encodeMinifloat(In[2 * I], ScalarKind::F4E2M1) |
                    encodeMinifloat(In[2 * I + 1], ScalarKind::F4E2M1) << 4)
          << "pair " << I;
  }
}

TEST(LoweringMinifloat, CastsCallNoFunction) {
  std::string Text = buildKernel();
  ASSERT_FALSE(Text.empty());
  llvm::LLVMContext Ctx;
  LoweredModule M = lowerOnly(Text, Ctx);
  ASSERT_TRUE(M.Module);
  for (llvm::Function &F : *M.Module)
    if (F.isDeclaration() && !F.isIntrinsic())
      for (llvm::User *U : F.users())
        if (auto *Call = llvm::dyn_cast<llvm::CallBase>(U))
          ADD_FAILURE() << "calls " << F.getName().str() << " in "
                        << Call->getFunction()->getName().str();
}

} // namespace
