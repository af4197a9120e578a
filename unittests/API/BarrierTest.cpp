//===- BarrierTest.cpp - Barrier objects and async copies through the API -===//
//
// docs/LangRef.md §13 through the public C++ API: a kernel built with the
// KernelBuilder (its printed form parses back to the same kernel) runs and
// gives the copied data; misuse that only running shows fails the launch
// with ErrorCode::KernelFault, from a device and from a stream, naming the
// operation.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "kiln/IR/Builder.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include <gtest/gtest.h>

#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;
using kiln::AccessKind;
using kiln::KernelBuilder;
using kiln::OpKind;
using kiln::ScalarKind;
using kiln::ValueId;
namespace lit = kiln::lit;

namespace {

/// Each cube of 8 units: unit u copies src[cube*8 + u] into a shared tile
/// with memcpy_async_tx on a cube barrier (unit 0 expecting the tile's 32
/// bytes), every unit arrives and waits, then writes the tile reversed.
kiln::IRKernel buildReverse(uint32_t ArrivalCount) {
  KernelBuilder B("reverse");
  B.setCubeDim({8});
  kiln::Type I32 = kiln::Type::scalar(ScalarKind::I32);
  ValueId Src = B.addBuffer("src", I32, AccessKind::Read);
  ValueId Dst = B.addBuffer("dst", I32, AccessKind::Write);
  ValueId Tile = B.named("tile").shared(I32, 8);
  ValueId Bar = B.named("bar").barrierCube(lit::u32(ArrivalCount));
  ValueId U = B.named("u").builtin(OpKind::UnitPos);
  ValueId C = B.named("c").builtin(OpKind::CubePos);
  ValueId Base = B.named("base").binary(OpKind::Mul, C, lit::u32(8));
  ValueId At = B.named("at").binary(OpKind::Add, Base, U);
  B.memcpyAsync(OpKind::MemcpyAsyncTx, Bar, Src, At, Tile, U, lit::u32(1));
  ValueId First = B.named("first").binary(OpKind::Eq, U, lit::u32(0));
  ValueId Bytes =
      B.named("bytes").select(First, lit::u32(32), lit::u32(0));
  ValueId Token =
      B.named("t").barrierArriveTx(Bar, lit::u32(1), Bytes);
  B.barrierWait(Bar, Token);
  ValueId Mirror = B.named("m").binary(OpKind::Sub, lit::u32(7), U);
  ValueId V = B.named("v").load(Tile, Mirror);
  B.store(Dst, At, V);
  return finishOrFail(B);
}

TEST(BarrierTest, BuiltKernelPrintsParsesAndRuns) {
  kiln::IRKernel K = buildReverse(8);
  ASSERT_FALSE(llvm::errorToBool(kiln::verifyKernel(K, kiln::DeviceLimits(), "<builder>")));
  std::string Text = kiln::printKernel(K);
  EXPECT_NE(Text.find("  %bar = barrier_cube 8:u32\n"), std::string::npos)
      << Text;
  EXPECT_NE(Text.find("  memcpy_async_tx %bar, %src[%at], %tile[%u], 1:u32\n"),
            std::string::npos)
      << Text;
  llvm::Expected<kiln::Module> M = kiln::parseModule(Text, "reverse.kiln");
  ASSERT_TRUE(static_cast<bool>(M)) << llvm::toString(M.takeError());
  ASSERT_EQ(M->Kernels.size(), 1u);
  EXPECT_EQ(kiln::printKernel(M->Kernels[0]), Text);

  Device D = memoryDevice();
  Result<Kernel> Loaded = D.loadKernel(K);
  ASSERT_TRUE(Loaded.ok()) << Loaded.status().str();
  const uint32_t Cubes = 5, N = Cubes * 8;
  ElementType I32 = ElementType::scalar(ScalarType::I32);
  Buffer Src = *Buffer::allocate(N * 4), Dst = *Buffer::allocate(N * 4);
  for (uint32_t I = 0; I < N; ++I)
    static_cast<int32_t *>(Src.data())[I] = int32_t(I * 7) - 100;
  Status S = D.launch(*Loaded, {Cubes, 1, 1},
                      {Arg::buffer(Src.view(I32), Access::Read),
                       Arg::buffer(Dst.view(I32))});
  ASSERT_TRUE(S.ok()) << S.str();
  for (uint32_t C = 0; C < Cubes; ++C)
    for (uint32_t U = 0; U < 8; ++U)
      EXPECT_EQ(static_cast<int32_t *>(Dst.data())[C * 8 + U],
                int32_t((C * 8 + 7 - U) * 7) - 100)
          << C << " " << U;
}

TEST(BarrierTest, MissingArrivalIsAKernelFault) {
  // Nine arrivals expected, eight units: the wait can never complete.
  kiln::IRKernel K = buildReverse(9);
  Device D = memoryDevice();
  Result<Kernel> Loaded = D.loadKernel(K);
  ASSERT_TRUE(Loaded.ok()) << Loaded.status().str();
  ElementType I32 = ElementType::scalar(ScalarType::I32);
  Buffer Src = *Buffer::allocate(64 * 4), Dst = *Buffer::allocate(64 * 4);
  std::vector<Arg> Args = {Arg::buffer(Src.view(I32), Access::Read),
                           Arg::buffer(Dst.view(I32))};
  Status S = D.launch(*Loaded, {8, 1, 1}, Args);
  ASSERT_EQ(S.code(), ErrorCode::KernelFault) << S.str();
  EXPECT_STREQ(errorCodeName(S.code()), "kernel fault");
  // Named as built kernels are: by operation number (no location).
  EXPECT_NE(S.message().find("kernel fault: barrier_wait %bar (operation #10) "
                             "can never complete"),
            std::string::npos)
      << S.message();
  EXPECT_NE(S.message().find("still expects 1 arrival(s) and 0 transaction "
                             "byte(s)"),
            std::string::npos)
      << S.message();

  // The same launch through a stream fails the stream with the fault.
  Result<Stream> St = D.createStream();
  ASSERT_TRUE(St.ok()) << St.status().str();
  ASSERT_TRUE(St->launch(*Loaded, {8, 1, 1}, Args).ok());
  Status Sync = St->synchronize();
  EXPECT_EQ(Sync.code(), ErrorCode::KernelFault) << Sync.str();

  // A correct launch on the device still works afterwards.
  Result<Kernel> Good = D.loadKernel(buildReverse(8));
  ASSERT_TRUE(Good.ok()) << Good.status().str();
  EXPECT_TRUE(D.launch(*Good, {8, 1, 1}, Args).ok());
}

} // namespace
