//===- IRFeaturesTest.cpp - cubecl's IR additions through the C++ API ----===//
//
// Kernels built with KernelBuilder (no text), loaded and launched through
// the public API: switch cases with several labels, workgroup_uniform_load
// guarding barriers, atomics on lines (docs/LangRef.md §12.1-§12.3).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "kiln/IR/Builder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;
using kiln::OpKind;
using kiln::lit::u32;

namespace {

const kiln::Type U32 = kiln::Type::scalar(kiln::ScalarKind::U32);

Kernel load(Device &D, kiln::KernelBuilder &B) {
  llvm::Expected<kiln::IRKernel> K = B.finish();
  if (!K) {
    ADD_FAILURE() << llvm::toString(K.takeError());
    return Kernel();
  }
  Result<Kernel> H = D.loadKernel(*K);
  if (!H.ok()) {
    ADD_FAILURE() << H.status().str();
    return Kernel();
  }
  return *H;
}

TEST(IRFeaturesTest, SwitchCaseWithSeveralLabels) {
  kiln::KernelBuilder B("orpat");
  B.setCubeDim({16});
  kiln::ValueId Out = B.addBuffer("out", U32, kiln::AccessKind::Write);
  kiln::ValueId I = B.builtin(OpKind::AbsolutePos);
  B.beginSwitch(I);
  B.addCase({1, 3, 5, 40});
  B.store(Out, I, u32(1));
  B.addCase(2);
  B.store(Out, I, u32(2));
  B.addDefault();
  B.store(Out, I, u32(0));
  B.end();
  Device D = memoryDevice();
  Kernel K = load(D, B);
  Buffer O = *Buffer::allocate(48 * 4);
  ASSERT_TRUE(D.launch(K, {3, 1, 1},
                       {Arg::buffer(O.view(ElementType::scalar(ScalarType::U32)))})
                  .ok());
  for (uint32_t J = 0; J < 48; ++J) {
    uint32_t Want = (J == 1 || J == 3 || J == 5 || J == 40) ? 1 : J == 2 ? 2 : 0;
    EXPECT_EQ(static_cast<uint32_t *>(O.data())[J], Want) << J;
  }
}

TEST(IRFeaturesTest, WorkgroupUniformLoadGuardsBarriers) {
  // Unit 0 writes the count; every unit reads it with
  // workgroup_uniform_load and runs count barriers, then writes it.
  kiln::KernelBuilder B("gate");
  B.setCubeDim({32, 2});
  kiln::ValueId Out = B.addBuffer("out", U32, kiln::AccessKind::Write);
  kiln::ValueId U = B.builtin(OpKind::UnitPos);
  kiln::ValueId Count = B.shared(U32, 1);
  B.beginIf(B.op(OpKind::Eq, {U, u32(0)}));
  B.store(Count, u32(0), u32(3));
  B.end();
  kiln::ValueId N = B.workgroupUniformLoad(Count, u32(0));
  kiln::ValueId Acc = B.var(U32);
  B.set(Acc, u32(0));
  B.beginFor(u32(0), N);
  B.syncCube();
  B.set(Acc, B.op(OpKind::Add, {B.get(Acc), u32(1)}));
  B.end();
  B.store(Out, B.builtin(OpKind::AbsolutePos), B.get(Acc));
  Device D = memoryDevice();
  Kernel K = load(D, B);
  Buffer O = *Buffer::allocate(128 * 4);
  ASSERT_TRUE(D.launch(K, {2, 1, 1},
                       {Arg::buffer(O.view(ElementType::scalar(ScalarType::U32)))})
                  .ok());
  for (uint32_t J = 0; J < 128; ++J)
    EXPECT_EQ(static_cast<uint32_t *>(O.data())[J], 3u) << J;
}

TEST(IRFeaturesTest, LineAtomics) {
  // 4 cubes of 64 units add (u, 1, 2u, 3) to one vec<4 x u32> and take the
  // maximum of (u, -u) into one vec<2 x f32>.
  kiln::KernelBuilder B("lines");
  B.setCubeDim({64});
  kiln::Type L4 = kiln::Type::line(kiln::ScalarKind::U32, 4);
  kiln::Type F2 = kiln::Type::line(kiln::ScalarKind::F32, 2);
  kiln::ValueId Sum = B.addBuffer("sum", L4, kiln::AccessKind::ReadWrite);
  kiln::ValueId Max = B.addBuffer("max", F2, kiln::AccessKind::ReadWrite);
  kiln::ValueId G = B.builtin(OpKind::AbsolutePos);
  kiln::ValueId V = B.op(OpKind::Vector, {G, u32(1), B.op(OpKind::Mul, {G, u32(2)}),
                                          u32(3)});
  B.atomic(OpKind::AtomicAdd, Sum, u32(0), V);
  kiln::ValueId Gf = B.cast(G, kiln::Type::scalar(kiln::ScalarKind::F32));
  kiln::ValueId W = B.op(OpKind::Vector, {Gf, B.unary(OpKind::Neg, Gf)});
  B.atomic(OpKind::AtomicMax, Max, u32(0), W);
  Device D = memoryDevice();
  Kernel K = load(D, B);
  Buffer S = *Buffer::allocate(16);
  Buffer M = *Buffer::allocate(8);
  float Init[2] = {-1.0f, -1000.0f};
  std::memcpy(M.data(), Init, 8);
  ASSERT_TRUE(D.launch(K, {4, 1, 1},
                       {Arg::buffer(S.view(ElementType::line(ScalarType::U32, 4))),
                        Arg::buffer(M.view(ElementType::line(ScalarType::F32, 2)))})
                  .ok());
  const uint32_t *SV = static_cast<uint32_t *>(S.data());
  uint32_t Total = 255 * 256 / 2;
  EXPECT_EQ(SV[0], Total);
  EXPECT_EQ(SV[1], 256u);
  EXPECT_EQ(SV[2], 2 * Total);
  EXPECT_EQ(SV[3], 3u * 256);
  const float *MV = static_cast<float *>(M.data());
  EXPECT_EQ(MV[0], 255.0f);
  EXPECT_EQ(MV[1], 0.0f);
}

} // namespace
