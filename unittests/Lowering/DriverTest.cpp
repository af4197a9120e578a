//===- DriverTest.cpp - lowerKernel's errors, metadata and thread safety
//---===//

#include "LoweringHarness.h"

#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"

#include "llvm/IR/Verifier.h"

#include "gtest/gtest.h"

#include <thread>

using namespace kiln;
using namespace kiln::test;

namespace {

TEST(LoweringDriver, ScratchAreaTooLargeIsAnError) {
  const char *Text = R"(
kernel @huge cube_dim(1024) (%o: buffer<f32, write>) {
  %a = local_array f32[1073741824]
  %u = unit_pos : u32
  store %a[%u], 1.0:f32
  %x = load %a[%u] : f32
  store %o[%u], %x
}
)";
  auto Mod = parseModule(Text, "huge.kiln");
  ASSERT_TRUE(!!Mod) << llvm::toString(Mod.takeError());
  DeviceLimits L;
  L.MaxLocalBytesPerUnit = uint64_t(1) << 40;
  ASSERT_FALSE(verifyModule(*Mod, L));
  llvm::LLVMContext Ctx;
  auto R = lowerKernel(Mod->Kernels[0], {}, L, Ctx);
  ASSERT_FALSE(!!R);
  std::string Msg = llvm::toString(R.takeError());
  EXPECT_NE(Msg.find("scratch area larger than 4 GiB"), std::string::npos)
      << Msg;
}

TEST(LoweringDriver, MetadataAndScratchLayout) {
  const char *Text = R"(
kernel @meta cube_dim(8, 2) (%a: buffer<vec<4 x f16>, read>, %s: i64, %o: buffer<u8, read_write>) {
  %sh = shared f32[100]
  %u = unit_pos : u32
  %l = load %o[%u] : u8
  %x = cast %l : u32
  sync_cube
  %y = add %x, 1:u32 : u32
  %b = cast %y : u8
  store %o[%u], %b
}
)";
  llvm::LLVMContext Ctx;
  LoweredModule L = lowerOnly(Text, Ctx);
  ASSERT_TRUE(L.Module);
  const CubeMetadata &M = L.Metadata;
  EXPECT_EQ(M.KernelName, "meta");
  EXPECT_EQ(M.Symbol, "kiln_cube_meta");
  EXPECT_EQ(M.CubeDim, (std::array<uint32_t, 3>{8, 2, 1}));
  EXPECT_EQ(M.PlaneDim, 32u);
  ASSERT_EQ(M.Params.size(), 3u);
  EXPECT_EQ(M.Params[0].Name, "a");
  EXPECT_TRUE(M.Params[0].IsBuffer);
  EXPECT_EQ(M.Params[0].Ty, Type::line(ScalarKind::F16, 4));
  EXPECT_EQ(M.Params[0].Access, AccessKind::Read);
  EXPECT_FALSE(M.Params[1].IsBuffer);
  EXPECT_EQ(M.Params[1].Ty, Type::scalar(ScalarKind::I64));
  EXPECT_EQ(M.Params[2].Access, AccessKind::ReadWrite);
  // shared f32[100] (400 bytes, rounded to 448) + the slot of %x (16 x 4
  // bytes, rounded to 64): %x crosses the barrier, %y does not, and the
  // builtin %u is recomputed after the barrier rather than kept (%l too is
  // used in its own segment only).
  EXPECT_EQ(M.ScratchBytes, 448u + 64u);
  llvm::Function *F = L.Module->getFunction("kiln_cube_meta");
  ASSERT_TRUE(F);
  EXPECT_TRUE(F->doesNotThrow());
  EXPECT_FALSE(F->hasInternalLinkage());
  EXPECT_TRUE(L.Module->getTargetTriple().empty());
}

TEST(LoweringDriver, ConcurrentLoweringInDistinctContexts) {
  const char *Text = R"(
kernel @par cube_dim(64) (%a: buffer<f32, read_write>) {
  %s = shared f32[64]
  %u = unit_pos : u32
  %x = load %a[%u] : f32
  store %s[%u], %x
  sync_cube
  %v = sub 63:u32, %u : u32
  %y = load %s[%v] : f32
  %p = plane_sum %y : f32
  store %a[%u], %p
}
)";
  auto Mod = parseModule(Text, "par.kiln");
  ASSERT_TRUE(!!Mod);
  DeviceLimits Limits;
  ASSERT_FALSE(verifyModule(*Mod, Limits));
  std::string Reference;
  {
    llvm::LLVMContext Ctx;
    auto R = lowerKernel(Mod->Kernels[0], {}, Limits, Ctx);
    ASSERT_TRUE(!!R);
    llvm::raw_string_ostream OS(Reference);
    R->Module->print(OS, nullptr);
  }
  std::vector<std::string> Out(4);
  std::vector<std::thread> Threads;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      for (int I = 0; I < 20; ++I) {
        llvm::LLVMContext Ctx;
        auto R = lowerKernel(Mod->Kernels[0], {}, Limits, Ctx);
        if (!R) {
          Out[T] = llvm::toString(R.takeError());
          return;
        }
        std::string Text;
        llvm::raw_string_ostream OS(Text);
        R->Module->print(OS, nullptr);
        Out[T] = Text;
      }
    });
  for (auto &T : Threads)
    T.join();
  for (const std::string &S : Out)
    EXPECT_EQ(S, Reference); // deterministic and race-free
}

} // namespace
