//===- CmmaTest.cpp - A cmma kernel built in C++ and run by a Device ------===//
//
// The C++ builder's cmma operations end to end: a 32 x 32 x 32 f32 product
// (f32 fragments, 16x16x8) over two planes per cube and two cubes, built
// with KernelBuilder, loaded by a Device and launched; every element is
// compared with the documented CPU result (docs/LangRef.md §5.4: C, then one
// f32 fma per k in order).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "kiln/IR/Builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;
using kiln::MatrixLayout;
using kiln::MatrixType;
using kiln::MatrixUse;
using kiln::OpKind;
using kiln::ValueId;

namespace {

MatrixType frag(MatrixUse Use, MatrixLayout Layout) {
  MatrixType T;
  T.Use = Use;
  T.M = 16;
  T.N = 16;
  T.K = 8;
  T.Elem = kiln::ScalarKind::F32;
  T.Layout = Layout;
  return T;
}

TEST(CmmaTest, BuiltMatmulRunsOnEveryPlane) {
  const uint32_t S = 32; // C (S x S) = A (S x S) x B^T, B given as S x S
  const kiln::Type F32 = kiln::Type::scalar(kiln::ScalarKind::F32);
  const kiln::Type U32 = kiln::Type::scalar(kiln::ScalarKind::U32);
  kiln::KernelBuilder B("built_mma");
  B.setCubeDim({64}); // two planes: plane p computes rows 16*cube .. +16,
                      // columns 16*p .. +16
  ValueId A = B.addBuffer("a", F32, kiln::AccessKind::Read);
  ValueId Bt = B.addBuffer("bt", F32, kiln::AccessKind::Read);
  ValueId C = B.addBuffer("c", F32, kiln::AccessKind::Write);
  ValueId N = B.addScalar("n", U32);
  ValueId Plane = B.builtin(OpKind::PlanePos);
  ValueId Cube = B.builtin(OpKind::CubePos);
  ValueId Row = B.op(OpKind::Mul, {Cube, kiln::lit::u32(16)});
  ValueId Col = B.op(OpKind::Mul, {Plane, kiln::lit::u32(16)});
  ValueId FA = B.fragment(frag(MatrixUse::A, MatrixLayout::Row));
  ValueId FB = B.fragment(frag(MatrixUse::B, MatrixLayout::Col));
  ValueId Acc = B.fragment(frag(MatrixUse::Accumulator, MatrixLayout::Row));
  B.cmmaFill(Acc, kiln::lit::f32(0.25f));
  ValueId RowBase = B.op(OpKind::Mul, {Row, N});
  ValueId ColBase = B.op(OpKind::Mul, {Col, N});
  ValueId K = B.beginFor(kiln::lit::u32(0), N, kiln::Arg(kiln::lit::u32(8)));
  ValueId IA = B.op(OpKind::Add, {RowBase, K});
  B.cmmaLoad(FA, A, IA, N);
  ValueId IB = B.op(OpKind::Add, {ColBase, K});
  B.cmmaLoad(FB, Bt, IB, N);
  B.cmmaMma(Acc, FA, FB, Acc);
  B.end();
  ValueId IC = B.op(OpKind::Add, {RowBase, Col});
  B.cmmaStore(C, IC, Acc, N); // the accumulator's own row layout
  llvm::Expected<kiln::IRKernel> Built = B.finish();
  ASSERT_TRUE(static_cast<bool>(Built)) << llvm::toString(Built.takeError());

  Device D = memoryDevice();
  Result<Kernel> H = D.loadKernel(*Built);
  ASSERT_TRUE(H.ok()) << H.status().str();
  std::vector<float> Av(S * S), Bv(S * S);
  for (uint32_t I = 0; I < S * S; ++I) {
    Av[I] = float(int(I * 37 % 101) - 50) / 16.0f;
    Bv[I] = float(int(I * 53 % 97) - 48) / 32.0f;
  }
  Buffer Ab = *Buffer::allocate(S * S * 4), Bb = *Buffer::allocate(S * S * 4),
         Cb = *Buffer::allocate(S * S * 4);
  std::memcpy(Ab.data(), Av.data(), S * S * 4);
  std::memcpy(Bb.data(), Bv.data(), S * S * 4);
  Status St = D.launch(*H, {S / 16, 1, 1},
                       {Arg::buffer(Ab.view(f32()), Access::Read),
                        Arg::buffer(Bb.view(f32()), Access::Read),
                        Arg::buffer(Cb.view(f32())), Arg::u32(S)});
  ASSERT_TRUE(St.ok()) << St.str();
  const float *Out = static_cast<const float *>(Cb.data());
  for (uint32_t I = 0; I < S; ++I)
    for (uint32_t J = 0; J < S; ++J) {
      float Want = 0.25f;
      for (uint32_t Kk = 0; Kk < S; ++Kk)
        Want = std::fma(Av[I * S + Kk], Bv[J * S + Kk], Want);
      ASSERT_EQ(Out[I * S + J], Want) << "c[" << I << "][" << J << "]";
    }
}

} // namespace
