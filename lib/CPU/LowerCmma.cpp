//===- LowerCmma.cpp - Cooperative matrix operations, once per plane ------===//
//
// A cmma operation is a split (Segmentation.h): it runs at cube level, once
// for every plane that has a unit still running, with the operands (index,
// stride, fill value) of that plane's first such unit; on cube fragments,
// once for the cube. A fragment is one f32 matrix per plane (per cube) in
// scratch, row-major over the fragment's own rows and columns (A: M x K,
// B: K x N, accumulator: M x N); every element is exactly a value of the
// fragment's element type, since f16 and bf16 widen to f32 exactly and
// every write rounds to the element type. A unit's own elements
// (cmma_get/cmma_set, docs/LangRef.md §5.6) are plain per-unit accesses to
// that matrix at the position the layout gives.
//
// cmma_mma computes each row of D (4 rows at a time, interleaved) as C's
// row plus, for k = 0 .. K-1 in order,
// A[i][k] * B[k][:], one fused multiply-add (one f32 rounding) per k, in
// <N x float> vectors that the backend maps to AVX-512 or AVX2 FMAs (or to
// fmaf calls on a host without FMA), then rounds once to D's element type.
// fp8/fp6/fp4 fragments hold their decoded values (exact in f32), so they
// multiply the same way. cmma_mma_scaled forms each scaled product in f64,
// where it is exact, rounds it to f32 and adds it (docs/LangRef.md §5.7).
// See docs/Lowering.md §14.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

Value *CmmaEmitter::fragmentPtr(ValueId F, Value *Plane) {
  llvm::IRBuilder<> &B = Cx.B;
  uint64_t Elements = Cx.K.value(F).Matrix.elements();
  Value *Off = B.CreateMul(B.CreateZExt(Plane, Cx.I64), B.getInt64(Elements));
  return B.CreateInBoundsGEP(B.getFloatTy(),
                             Memory.scratchPtr(Cx.Layout.Of[F].Offset), Off);
}

void CmmaEmitter::forEachActivePlane(
    bool Cube, llvm::function_ref<void(Value *Plane, Value *Unit)> Body) {
  llvm::IRBuilder<> &B = Cx.B;
  // A cube fragment: the whole cube is one "plane".
  uint32_t P = Cube ? std::max(Cx.Units, 1u) : Cx.PlaneDim;
  uint32_t Planes = static_cast<uint32_t>((uint64_t(Cx.Units) + P - 1) / P);
  Pos.emitCountedLoop(
      B.getInt32(0), B.getInt32(Planes),
      [&](Value *Plane) {
        Value *Base = B.CreateMul(Plane, B.getInt32(P));
        if (!Cx.Layout.HasFlags) {
          Body(Plane, Base);
          return;
        }
        // The plane's first unit that has not returned; none: skip it.
        Value *End = B.CreateBinaryIntrinsic(
            llvm::Intrinsic::umin, B.CreateAdd(Base, B.getInt32(P)),
            B.getInt32(Cx.Units));
        llvm::BasicBlock *Pre = B.GetInsertBlock();
        llvm::BasicBlock *Scan = Cx.newBlock("cmma.scan");
        llvm::BasicBlock *Check = Cx.newBlock("cmma.check");
        llvm::BasicBlock *Next = Cx.newBlock("cmma.next");
        llvm::BasicBlock *Found = Cx.newBlock("cmma.plane");
        llvm::BasicBlock *Done = Cx.newBlock("cmma.plane.end");
        B.CreateBr(Scan);
        B.SetInsertPoint(Scan);
        llvm::PHINode *U = B.CreatePHI(Cx.I32, 2, "cmma.unit");
        U->addIncoming(Base, Pre);
        B.CreateCondBr(B.CreateICmpULT(U, End), Check, Done);
        B.SetInsertPoint(Check);
        B.CreateCondBr(Pos.unitFinished(U), Next, Found);
        B.SetInsertPoint(Next);
        U->addIncoming(B.CreateAdd(U, B.getInt32(1)), Next);
        B.CreateBr(Scan);
        B.SetInsertPoint(Found);
        Body(Plane, U);
        B.CreateBr(Done);
        B.SetInsertPoint(Done);
      },
      "cmma.planes");
}

Value *CmmaEmitter::toF32(Value *V, ScalarKind Elem) {
  llvm::IRBuilder<> &B = Cx.B;
  switch (Elem) {
  case ScalarKind::F16:
    return B.CreateFPExt(V, V->getType()->getWithNewType(B.getFloatTy()));
  case ScalarKind::BF16:
    return Scalar.bf16ToF32(V);
  case ScalarKind::I8: // i8/u8 a and b fragments: exact in f32
    return B.CreateSIToFP(V, V->getType()->getWithNewType(B.getFloatTy()));
  case ScalarKind::U8:
    return B.CreateUIToFP(V, V->getType()->getWithNewType(B.getFloatTy()));
  case ScalarKind::I32: // i32 accumulators keep their bits
    return B.CreateBitCast(V, V->getType()->getWithNewType(B.getFloatTy()));
  default:
    // fp8/fp6/fp4 codes decode exactly.
    return isMinifloat(Elem) ? Scalar.minifloatToF32(V, Elem) : V;
  }
}

Value *CmmaEmitter::fromF32(Value *V, ScalarKind Elem) {
  llvm::IRBuilder<> &B = Cx.B;
  switch (Elem) {
  case ScalarKind::F16:
    return B.CreateFPTrunc(V, V->getType()->getWithNewType(B.getHalfTy()));
  case ScalarKind::BF16:
    return Scalar.f32ToBF16(V);
  case ScalarKind::I8: // every value held is one of the type's
    return B.CreateFPToSI(V, V->getType()->getWithNewType(Cx.I8));
  case ScalarKind::U8:
    return B.CreateFPToUI(V, V->getType()->getWithNewType(Cx.I8));
  case ScalarKind::I32:
    return B.CreateBitCast(V, V->getType()->getWithNewType(Cx.I32));
  default: {
    if (!isMinifloat(Elem))
      return V;
    // Exact for every decoded code; a NaN gives the format's NaN.
    Value *Code = Scalar.floatToMinifloat(V, Elem);
    if (Elem != ScalarKind::F8E5M2)
      return Code;
    // A cast saturates an infinity, but the element held is f8e5m2's own
    // infinity: give its code back (0x7c, 0xfc).
    llvm::Type *I32T = V->getType()->getWithNewType(Cx.I32);
    llvm::Type *I8T = V->getType()->getWithNewType(Cx.I8);
    Value *Bits = B.CreateBitCast(V, I32T);
    Value *IsInf = B.CreateICmpEQ(
        B.CreateAnd(Bits, llvm::ConstantInt::get(I32T, 0x7FFFFFFF)),
        llvm::ConstantInt::get(I32T, 0x7F800000));
    Value *Sign = B.CreateTrunc(B.CreateLShr(Bits, llvm::ConstantInt::get(I32T, 24)),
                                I8T);
    Value *Inf = B.CreateOr(B.CreateAnd(Sign, llvm::ConstantInt::get(I8T, 0x80)),
                            llvm::ConstantInt::get(I8T, 0x7C));
    return B.CreateSelect(IsInf, Inf, Code);
  }
  }
}

Value *CmmaEmitter::roundTo(Value *V, ScalarKind Elem) {
  if (Elem == ScalarKind::F32)
    return V;
  return toF32(fromF32(V, Elem), Elem);
}

void CmmaEmitter::emitFill(const Operation &Op, Value *Plane, Value *Unit) {
  llvm::IRBuilder<> &B = Cx.B;
  ValueId F = Op.Operands[0].Value;
  const MatrixType &T = Cx.K.value(F).Matrix;
  Value *X = toF32(Values.value(Op.Operands[1], Unit), T.Elem);
  unsigned Cols = T.cols();
  Value *Row = B.CreateVectorSplat(Cols, X);
  Value *Frag = fragmentPtr(F, Plane);
  for (unsigned R = 0; R < T.rows(); ++R)
    tag(B.CreateAlignedStore(
            Row, B.CreateConstInBoundsGEP1_64(B.getFloatTy(), Frag, R * Cols),
            llvm::Align(4)),
        F);
}

void CmmaEmitter::emitCast(const Operation &Op, Value *Plane) {
  llvm::IRBuilder<> &B = Cx.B;
  ValueId Dst = Op.Operands[0].Value, Src = Op.Operands[1].Value;
  const MatrixType &T = Cx.K.value(Dst).Matrix;
  unsigned Cols = T.cols();
  auto *RowTy = llvm::FixedVectorType::get(B.getFloatTy(), Cols);
  Value *S = fragmentPtr(Src, Plane), *D = fragmentPtr(Dst, Plane);
  for (unsigned R = 0; R < T.rows(); ++R) {
    auto *L = B.CreateAlignedLoad(
        RowTy, B.CreateConstInBoundsGEP1_64(B.getFloatTy(), S, R * Cols),
        llvm::Align(4));
    tag(L, Src);
    tag(B.CreateAlignedStore(
            roundTo(L, T.Elem),
            B.CreateConstInBoundsGEP1_64(B.getFloatTy(), D, R * Cols),
            llvm::Align(4)),
        Dst);
  }
}

void CmmaEmitter::emitMma(const Operation &Op, Value *Plane) {
  ValueId DId = Op.Operands[0].Value, AId = Op.Operands[1].Value,
          BId = Op.Operands[2].Value, CId = Op.Operands[3].Value;
  const MatrixType &DT = Cx.K.value(DId).Matrix;
  unsigned N = DT.N;
  Value *APtr = fragmentPtr(AId, Plane), *BPtr = fragmentPtr(BId, Plane),
        *CPtr = fragmentPtr(CId, Plane), *DPtr = fragmentPtr(DId, Plane);
  // Wide fragments (cube fragments, N up to 128) go in column strips of 16
  // (8 where 16 does not divide N), so that a strip's rows of B and the
  // accumulators fit in vector registers (32 of AVX-512's, as for a 16x16
  // plane fragment); each element's sum is the same, in the same order.
  // Plane fragments (N at most 32) keep one strip.
  if (DT.Elem == ScalarKind::I32)
    return emitIntMma(DT, APtr, BPtr, CPtr, DPtr, AId, BId, CId, DId);
  unsigned Strip = N <= 32 ? N : (N % 16 == 0 ? 16 : 8);
  for (unsigned Col0 = 0; Col0 < N; Col0 += Strip)
    emitMmaStrip(DT, APtr, BPtr, CPtr, DPtr, AId, BId, CId, DId, Col0, Strip);
}

void CmmaEmitter::emitIntMma(const MatrixType &DT, Value *APtr, Value *BPtr,
                             Value *CPtr, Value *DPtr, ValueId AId, ValueId BId,
                             ValueId CId, ValueId DId) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned M = DT.M, N = DT.N, K = DT.K;
  llvm::Type *F32 = B.getFloatTy();
  auto *RowTy = llvm::FixedVectorType::get(F32, N);
  auto *IntRowTy = llvm::FixedVectorType::get(Cx.I32, N);
  // A and B hold i8/u8 values as exact floats; C and D hold i32 bits. The
  // products fit i32 and the sum wraps modulo 2^32 (docs/LangRef.md §5.7).
  std::vector<Value *> BRows(K);
  for (unsigned Kk = 0; Kk < K; ++Kk) {
    auto *L = B.CreateAlignedLoad(
        RowTy, B.CreateConstInBoundsGEP1_64(F32, BPtr, uint64_t(Kk) * N),
        llvm::Align(4));
    tag(L, BId);
    BRows[Kk] = B.CreateFPToSI(L, IntRowTy);
  }
  Pos.emitCountedLoop(
      B.getInt32(0), B.getInt32(M),
      [&](Value *Row) {
        Value *Row64 = B.CreateZExt(Row, Cx.I64);
        auto *CRow = B.CreateAlignedLoad(
            IntRowTy,
            B.CreateInBoundsGEP(F32, CPtr, B.CreateMul(Row64, B.getInt64(N))),
            llvm::Align(4));
        tag(CRow, CId);
        Value *Acc = CRow;
        Value *ARow =
            B.CreateInBoundsGEP(F32, APtr, B.CreateMul(Row64, B.getInt64(K)));
        for (unsigned Kk = 0; Kk < K; ++Kk) {
          auto *A = B.CreateAlignedLoad(
              F32, B.CreateConstInBoundsGEP1_64(F32, ARow, Kk), llvm::Align(4));
          tag(A, AId);
          Value *AInt = B.CreateVectorSplat(N, B.CreateFPToSI(A, Cx.I32));
          Acc = B.CreateAdd(Acc, B.CreateMul(AInt, BRows[Kk]));
        }
        tag(B.CreateAlignedStore(
                Acc,
                B.CreateInBoundsGEP(F32, DPtr, B.CreateMul(Row64, B.getInt64(N))),
                llvm::Align(4)),
            DId);
      },
      "cmma.mma.int");
}

void CmmaEmitter::emitMmaStrip(const MatrixType &DT, Value *APtr, Value *BPtr,
                               Value *CPtr, Value *DPtr, ValueId AId,
                               ValueId BId, ValueId CId, ValueId DId,
                               unsigned Col0, unsigned Width) {
  llvm::IRBuilder<> &B = Cx.B;
  unsigned M = DT.M, N = DT.N, K = DT.K;
  llvm::Type *F32 = B.getFloatTy();
  auto *RowTy = llvm::FixedVectorType::get(F32, Width);
  // B's rows (this strip of them) stay in vector registers across the rows
  // of A.
  std::vector<Value *> BRows(K);
  for (unsigned Kk = 0; Kk < K; ++Kk) {
    auto *L = B.CreateAlignedLoad(
        RowTy, B.CreateConstInBoundsGEP1_64(F32, BPtr, Kk * N + Col0),
        llvm::Align(4));
    tag(L, BId);
    BRows[Kk] = L;
  }
  llvm::Function *Fma = llvm::Intrinsic::getDeclaration(
      Cx.M.get(), llvm::Intrinsic::fma, {RowTy});
  // Rows go in groups of 4 (M is a multiple of 8): the four accumulators'
  // FMA chains are independent, so they overlap instead of waiting for each
  // other's latency.
  constexpr unsigned Group = 4;
  Pos.emitCountedLoop(
      B.getInt32(0), B.getInt32(M / Group),
      [&](Value *G) {
        Value *Row0 = B.CreateMul(B.CreateZExt(G, Cx.I64), B.getInt64(Group));
        Value *Acc[Group], *ARow[Group];
        for (unsigned R = 0; R < Group; ++R) {
          Value *I64 = B.CreateAdd(Row0, B.getInt64(R));
          auto *CRow = B.CreateAlignedLoad(
              RowTy,
              B.CreateInBoundsGEP(F32, CPtr,
                                  B.CreateAdd(B.CreateMul(I64, B.getInt64(N)),
                                              B.getInt64(Col0))),
              llvm::Align(4));
          tag(CRow, CId);
          Acc[R] = CRow;
          ARow[R] = B.CreateInBoundsGEP(F32, APtr,
                                        B.CreateMul(I64, B.getInt64(K)));
        }
        for (unsigned Kk = 0; Kk < K; ++Kk)
          for (unsigned R = 0; R < Group; ++R) {
            auto *A = B.CreateAlignedLoad(
                F32, B.CreateConstInBoundsGEP1_64(F32, ARow[R], Kk),
                llvm::Align(4));
            tag(A, AId);
            Acc[R] = B.CreateCall(
                Fma, {B.CreateVectorSplat(Width, A), BRows[Kk], Acc[R]});
          }
        for (unsigned R = 0; R < Group; ++R) {
          Value *I64 = B.CreateAdd(Row0, B.getInt64(R));
          tag(B.CreateAlignedStore(
                  roundTo(Acc[R], DT.Elem),
                  B.CreateInBoundsGEP(
                      F32, DPtr,
                      B.CreateAdd(B.CreateMul(I64, B.getInt64(N)),
                                  B.getInt64(Col0))),
                  llvm::Align(4)),
              DId);
        }
      },
      "cmma.mma");
}

Value *CmmaEmitter::emitScale(const Operand &Scales, Value *PlaneBase,
                               Value *Lane, unsigned Lanes, unsigned L) {
  llvm::IRBuilder<> &B = Cx.B;
  Value *U = B.CreateAdd(PlaneBase, Lane);
  // A unit past the cube or that returned supplies 2^0 (code 127).
  Value *Live = B.CreateICmpULT(U, B.getInt32(Cx.Units));
  Value *SlotUnit =
      B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, U, B.getInt32(Cx.Units - 1));
  if (Cx.Layout.HasFlags)
    Live = B.CreateAnd(Live, B.CreateNot(Pos.unitFinished(SlotUnit)));
  Value *Code = Values.value(Scales, SlotUnit);
  if (Code->getType()->isVectorTy())
    Code = B.CreateExtractElement(Code, L < Lanes ? L : 0);
  Code = B.CreateSelect(Live, Code, B.getInt8(127));
  // 2^(code - 127) (0xff: NaN), exact in f32 and in f64.
  return B.CreateFPExt(Scalar.minifloatToF32(Code, ScalarKind::UE8M0),
                       B.getDoubleTy());
}

void CmmaEmitter::emitScaledMma(const Operation &Op, Value *Plane) {
  llvm::IRBuilder<> &B = Cx.B;
  ValueId DId = Op.Operands[0].Value, AId = Op.Operands[1].Value,
          BId = Op.Operands[2].Value, CId = Op.Operands[3].Value;
  const Operand &ScalesA = Op.Operands[4], &ScalesB = Op.Operands[5];
  const MatrixType &DT = Cx.K.value(DId).Matrix;
  unsigned M = DT.M, N = DT.N, K = DT.K;
  unsigned Scales = Values.operandType(ScalesA).lanes();
  unsigned BlockK = K / std::max(Scales, 1u);
  llvm::Type *F32 = B.getFloatTy(), *F64 = B.getDoubleTy();
  auto *RowTy = llvm::FixedVectorType::get(F32, N);
  auto *WideTy = llvm::FixedVectorType::get(F64, N);
  Value *APtr = fragmentPtr(AId, Plane), *BPtr = fragmentPtr(BId, Plane),
        *CPtr = fragmentPtr(CId, Plane), *DPtr = fragmentPtr(DId, Plane);
  Value *PlaneBase = B.CreateMul(Plane, B.getInt32(Cx.PlaneDim));

  // Column j of B takes its scales from unit 4j of the plane (LangRef §5.7).
  std::vector<Value *> ScaleB(Scales);
  for (unsigned S = 0; S < Scales; ++S) {
    Value *V = llvm::PoisonValue::get(WideTy);
    for (unsigned J = 0; J < N; ++J)
      V = B.CreateInsertElement(
          V, emitScale(ScalesB, PlaneBase, B.getInt32(4 * J), Scales, S), J);
    ScaleB[S] = V;
  }
  // B's rows, widened to f64 (exact), stay live across the rows of A.
  std::vector<Value *> BRows(K);
  for (unsigned Kk = 0; Kk < K; ++Kk) {
    auto *L = B.CreateAlignedLoad(
        RowTy, B.CreateConstInBoundsGEP1_64(F32, BPtr, uint64_t(Kk) * N),
        llvm::Align(4));
    tag(L, BId);
    BRows[Kk] = B.CreateFPExt(L, WideTy);
  }
  Pos.emitCountedLoop(
      B.getInt32(0), B.getInt32(M),
      [&](Value *Row) {
        Value *Row64 = B.CreateZExt(Row, Cx.I64);
        auto *CRow = B.CreateAlignedLoad(
            RowTy, B.CreateInBoundsGEP(F32, CPtr, B.CreateMul(Row64, B.getInt64(N))),
            llvm::Align(4));
        tag(CRow, CId);
        Value *Acc = CRow;
        Value *ARow = B.CreateInBoundsGEP(F32, APtr, B.CreateMul(Row64, B.getInt64(K)));
        // Row i of A takes its scales from unit 4 (i mod 8) + i div 8.
        Value *Lane = B.CreateAdd(B.CreateShl(B.CreateAnd(Row, 7), 2),
                                  B.CreateLShr(Row, 3));
        for (unsigned S = 0; S < Scales; ++S) {
          Value *Scale = B.CreateFMul(
              B.CreateVectorSplat(N, emitScale(ScalesA, PlaneBase, Lane, Scales, S)),
              ScaleB[S]);
          for (unsigned Kk = S * BlockK; Kk < (S + 1) * BlockK; ++Kk) {
            auto *A = B.CreateAlignedLoad(
                F32, B.CreateConstInBoundsGEP1_64(F32, ARow, Kk), llvm::Align(4));
            tag(A, AId);
            // a * b and its scaling are exact in f64; one rounding to f32,
            // then one for the sum.
            Value *Product = B.CreateFMul(
                B.CreateFMul(B.CreateVectorSplat(N, B.CreateFPExt(A, F64)),
                             BRows[Kk]),
                Scale);
            Acc = B.CreateFAdd(Acc, B.CreateFPTrunc(Product, RowTy));
          }
        }
        tag(B.CreateAlignedStore(
                Acc,
                B.CreateInBoundsGEP(F32, DPtr, B.CreateMul(Row64, B.getInt64(N))),
                llvm::Align(4)),
            DId);
      },
      "cmma.mma.scaled");
}

void CmmaEmitter::emitTransfer(const Operation &Op, Value *Plane, Value *Unit,
                               bool Store) {
  llvm::IRBuilder<> &B = Cx.B;
  // cmma_load: fragment, memory, index, stride; cmma_store: memory, index,
  // fragment, stride.
  const Operand &FragO = Op.Operands[Store ? 2 : 0];
  const Operand &MemO = Op.Operands[Store ? 0 : 1];
  const Operand &IndexO = Op.Operands[Store ? 1 : 2];
  ValueId F = FragO.Value, Mem = MemO.Value;
  const MatrixType &T = Cx.K.value(F).Matrix;
  const ValueInfo &MI = Cx.K.value(Mem);
  if (!Store && MI.Ty.isPackedPair())
    return emitPackedFp4Load(Op, Plane, Unit);
  MatrixLayout Layout =
      Op.Layout != MatrixLayout::Undefined ? Op.Layout : T.Layout;
  bool RowMajor = Layout != MatrixLayout::Col;
  unsigned Rows = T.rows(), Cols = T.cols();
  // A memory line is a fragment row (row layout) or column (col layout).
  unsigned Lines = RowMajor ? Rows : Cols, LineLen = RowMajor ? Cols : Rows;
  llvm::Type *F32 = B.getFloatTy();
  llvm::Type *ElemTy = Types.memType(Type::scalar(T.Elem));
  llvm::Align ElemAlign(byteSize(T.Elem));

  // The memory, viewed as scalars: the index counts its elements (lines of
  // a line-typed buffer), the stride counts scalars.
  Value *Idx = Values.value(IndexO, Unit);
  Value *Idx64 = Values.operandType(IndexO).isSigned()
                     ? B.CreateSExtOrTrunc(Idx, Cx.I64)
                     : B.CreateZExtOrTrunc(Idx, Cx.I64);
  Value *Stride = B.CreateZExt(Values.value(Op.Operands[3], Unit), Cx.I64);
  uint64_t Lanes = MI.Ty.lanes();
  Value *First = B.CreateMul(Idx64, B.getInt64(Lanes));
  Value *Base = MI.Kind == ValueKind::Buffer
                    ? Memory.BufBase.lookup(Mem)
                    : Memory.scratchPtr(Cx.Layout.Of[Mem].Offset);
  Value *Frag = fragmentPtr(F, Plane);

  // Fast path: each memory line is one vector load or store.
  auto EmitLines = [&] {
    auto *LineTy = llvm::FixedVectorType::get(ElemTy, LineLen);
    for (unsigned L = 0; L < Lines; ++L) {
      Value *Off = B.CreateAdd(First, B.CreateMul(B.getInt64(L), Stride));
      Value *MemPtr = B.CreateInBoundsGEP(ElemTy, Base, Off);
      // The fragment's elements of this line: consecutive for row layout,
      // every Cols-th for col layout.
      auto FragAt = [&](unsigned J) {
        unsigned E = RowMajor ? L * Cols + J : J * Cols + L;
        return B.CreateConstInBoundsGEP1_64(F32, Frag, E);
      };
      if (!Store) {
        auto *V = B.CreateAlignedLoad(LineTy, MemPtr, ElemAlign);
        tag(V, Mem);
        Value *W = toF32(V, T.Elem);
        if (RowMajor) {
          tag(B.CreateAlignedStore(W, FragAt(0), llvm::Align(4)), F);
        } else {
          for (unsigned J = 0; J < LineLen; ++J)
            tag(B.CreateAlignedStore(B.CreateExtractElement(W, J), FragAt(J),
                                     llvm::Align(4)),
                F);
        }
        continue;
      }
      Value *W;
      if (RowMajor) {
        auto *V = B.CreateAlignedLoad(llvm::FixedVectorType::get(F32, LineLen),
                                      FragAt(0), llvm::Align(4));
        tag(V, F);
        W = V;
      } else {
        W = llvm::PoisonValue::get(llvm::FixedVectorType::get(F32, LineLen));
        for (unsigned J = 0; J < LineLen; ++J) {
          auto *X = B.CreateAlignedLoad(F32, FragAt(J), llvm::Align(4));
          tag(X, F);
          W = B.CreateInsertElement(W, X, J);
        }
      }
      tag(B.CreateAlignedStore(fromF32(W, T.Elem), MemPtr, ElemAlign), Mem);
    }
  };
  if (!Cx.Variant.BoundsChecked) {
    EmitLines();
    return;
  }

  // Bounds-checked: the whole fragment in bounds takes the fast path;
  // otherwise every element is checked (a load out of bounds gives 0, a
  // store out of bounds is dropped). Idx < count first, so that the scalar
  // offsets below cannot wrap.
  Value *Count = MI.Kind == ValueKind::Buffer ? Memory.BufCount.lookup(Mem)
                                              : B.getInt64(MI.Count);
  Value *Scalars = B.CreateMul(Count, B.getInt64(Lanes));
  Value *Last = B.CreateAdd(
      First, B.CreateAdd(B.CreateMul(B.getInt64(Lines - 1), Stride),
                         B.getInt64(LineLen - 1)));
  Value *AllIn = B.CreateAnd(B.CreateICmpULT(Idx64, Count),
                             B.CreateICmpULT(Last, Scalars));
  llvm::BasicBlock *Fast = Cx.newBlock("cmma.inbounds");
  llvm::BasicBlock *Slow = Cx.newBlock("cmma.checked");
  llvm::BasicBlock *Join = Cx.newBlock("cmma.transfer.end");
  B.CreateCondBr(AllIn, Fast, Slow);
  B.SetInsertPoint(Fast);
  EmitLines();
  B.CreateBr(Join);

  B.SetInsertPoint(Slow);
  Value *IdxIn = B.CreateICmpULT(Idx64, Count);
  Pos.emitCountedLoop(
      B.getInt32(0), B.getInt32(Rows),
      [&](Value *R) {
        Pos.emitCountedLoop(
            B.getInt32(0), B.getInt32(Cols),
            [&](Value *C) {
              Value *R64 = B.CreateZExt(R, Cx.I64), *C64 = B.CreateZExt(C, Cx.I64);
              Value *Off = RowMajor
                               ? B.CreateAdd(B.CreateMul(R64, Stride), C64)
                               : B.CreateAdd(B.CreateMul(C64, Stride), R64);
              Off = B.CreateAdd(First, Off);
              Value *In = B.CreateAnd(IdxIn, B.CreateICmpULT(Off, Scalars));
              Value *FragPtr = B.CreateInBoundsGEP(
                  F32, Frag, B.CreateAdd(B.CreateMul(R64, B.getInt64(Cols)), C64));
              llvm::BasicBlock *Do = Cx.newBlock("cmma.elem");
              llvm::BasicBlock *Skip = Cx.newBlock("cmma.elem.out");
              llvm::BasicBlock *Next = Cx.newBlock("cmma.elem.next");
              B.CreateCondBr(In, Do, Skip);
              B.SetInsertPoint(Do);
              Value *MemPtr = B.CreateInBoundsGEP(ElemTy, Base, Off);
              if (Store) {
                auto *X = B.CreateAlignedLoad(F32, FragPtr, llvm::Align(4));
                tag(X, F);
                tag(B.CreateAlignedStore(fromF32(X, T.Elem), MemPtr, ElemAlign),
                    Mem);
              } else {
                auto *X = B.CreateAlignedLoad(ElemTy, MemPtr, ElemAlign);
                tag(X, Mem);
                tag(B.CreateAlignedStore(toF32(X, T.Elem), FragPtr,
                                         llvm::Align(4)),
                    F);
              }
              B.CreateBr(Next);
              B.SetInsertPoint(Skip);
              if (!Store)
                tag(B.CreateAlignedStore(llvm::ConstantFP::get(F32, 0.0),
                                         FragPtr, llvm::Align(4)),
                    F);
              B.CreateBr(Next);
              B.SetInsertPoint(Next);
            },
            "cmma.col");
      },
      "cmma.row");
  B.CreateBr(Join);
  B.SetInsertPoint(Join);
}

void CmmaEmitter::emitPackedFp4Load(const Operation &Op, Value *Plane,
                                    Value *Unit) {
  llvm::IRBuilder<> &B = Cx.B;
  ValueId F = Op.Operands[0].Value, Mem = Op.Operands[1].Value;
  const Operand &IndexO = Op.Operands[2];
  const MatrixType &T = Cx.K.value(F).Matrix;
  const ValueInfo &MI = Cx.K.value(Mem);
  bool RowMajor = T.Layout != MatrixLayout::Col;
  llvm::Type *F32 = B.getFloatTy();
  // Scalar s of the memory is the fp4 value in nibble s mod 2 (low first)
  // of byte s div 2; the index counts elements (lines) of two-value bytes.
  uint64_t PerElement = 2 * MI.Ty.lanes();
  Value *Idx = Values.value(IndexO, Unit);
  Value *Idx64 = Values.operandType(IndexO).isSigned()
                     ? B.CreateSExtOrTrunc(Idx, Cx.I64)
                     : B.CreateZExtOrTrunc(Idx, Cx.I64);
  Value *Stride = B.CreateZExt(Values.value(Op.Operands[3], Unit), Cx.I64);
  Value *First = B.CreateMul(Idx64, B.getInt64(PerElement));
  Value *Base = MI.Kind == ValueKind::Buffer
                    ? Memory.BufBase.lookup(Mem)
                    : Memory.scratchPtr(Cx.Layout.Of[Mem].Offset);
  Value *Frag = fragmentPtr(F, Plane);
  Value *InBounds = nullptr, *Scalars = nullptr;
  if (Cx.Variant.BoundsChecked) {
    Value *Count = MI.Kind == ValueKind::Buffer ? Memory.BufCount.lookup(Mem)
                                                : B.getInt64(MI.Count);
    Scalars = B.CreateMul(Count, B.getInt64(PerElement));
    InBounds = B.CreateICmpULT(Idx64, Count);
  }
  // One value at a time: rows start on either nibble (odd strides).
  Pos.emitCountedLoop(
      B.getInt32(0), B.getInt32(T.rows()),
      [&](Value *R) {
        Pos.emitCountedLoop(
            B.getInt32(0), B.getInt32(T.cols()),
            [&](Value *C) {
              Value *R64 = B.CreateZExt(R, Cx.I64), *C64 = B.CreateZExt(C, Cx.I64);
              Value *Off = RowMajor ? B.CreateAdd(B.CreateMul(R64, Stride), C64)
                                    : B.CreateAdd(B.CreateMul(C64, Stride), R64);
              Off = B.CreateAdd(First, Off);
              Value *FragPtr = B.CreateInBoundsGEP(
                  F32, Frag,
                  B.CreateAdd(B.CreateMul(R64, B.getInt64(T.cols())), C64));
              auto LoadValue = [&] {
                auto *Byte = B.CreateAlignedLoad(
                    Cx.I8, B.CreateInBoundsGEP(Cx.I8, Base, B.CreateLShr(Off, 1)),
                    llvm::Align(1));
                tag(Byte, Mem);
                Value *Shift = B.CreateTrunc(
                    B.CreateShl(B.CreateAnd(Off, 1), 2), Cx.I8);
                Value *Code = B.CreateLShr(Byte, Shift);
                tag(B.CreateAlignedStore(
                        Scalar.minifloatToF32(Code, ScalarKind::F4E2M1), FragPtr,
                        llvm::Align(4)),
                    F);
              };
              if (!InBounds) {
                LoadValue();
                return;
              }
              // Checked: a value outside the memory loads as 0, and no
              // address outside it is formed.
              Value *In = B.CreateAnd(InBounds, B.CreateICmpULT(Off, Scalars));
              llvm::BasicBlock *Do = Cx.newBlock("cmma.fp4");
              llvm::BasicBlock *Skip = Cx.newBlock("cmma.fp4.out");
              llvm::BasicBlock *Next = Cx.newBlock("cmma.fp4.next");
              B.CreateCondBr(In, Do, Skip);
              B.SetInsertPoint(Do);
              LoadValue();
              B.CreateBr(Next);
              B.SetInsertPoint(Skip);
              tag(B.CreateAlignedStore(llvm::ConstantFP::get(F32, 0.0), FragPtr,
                                       llvm::Align(4)),
                  F);
              B.CreateBr(Next);
              B.SetInsertPoint(Next);
            },
            "cmma.fp4.col");
      },
      "cmma.fp4.row");
}

void CmmaEmitter::lowerCmmaOp(const Operation &Op) {
  // The verifier guarantees the operand shapes; a malformed kernel that
  // reaches here is an error, never invalid IR.
  std::vector<size_t> FragOperands;
  switch (Op.Kind) {
  case OpKind::CmmaFill:
  case OpKind::CmmaLoad:
    FragOperands = {0};
    break;
  case OpKind::CmmaStore:
    FragOperands = {2};
    break;
  case OpKind::CmmaMma:
  case OpKind::CmmaMmaScaled:
    FragOperands = {0, 1, 2, 3};
    break;
  case OpKind::CmmaCast:
    FragOperands = {0, 1};
    break;
  case OpKind::CmmaLdmatrix:
    FragOperands = {0};
    break;
  default:
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' is not a cmma operation");
    return;
  }
  size_t Want = (Op.Kind == OpKind::CmmaFill || Op.Kind == OpKind::CmmaCast)
                    ? 2
                : Op.Kind == OpKind::CmmaLdmatrix  ? 3
                : Op.Kind == OpKind::CmmaMmaScaled ? 6
                                                   : 4;
  if (Op.Operands.size() != Want) {
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' needs " + llvm::Twine(Want) +
                        " operands");
    return;
  }
  for (size_t I : FragOperands) {
    const Operand &O = Op.Operands[I];
    if (O.isLiteral() || O.Value >= Cx.K.Values.size() ||
        Cx.K.value(O.Value).Kind != ValueKind::Fragment) {
      Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' needs a fragment as operand " +
                          llvm::Twine(I + 1));
      return;
    }
  }
  bool Cube = Cx.K.value(Op.Operands[FragOperands[0]].Value).Matrix.isCube();
  forEachActivePlane(Cube, [&](Value *Plane, Value *Unit) {
    switch (Op.Kind) {
    case OpKind::CmmaFill:
      return emitFill(Op, Plane, Unit);
    case OpKind::CmmaLoad:
      return emitTransfer(Op, Plane, Unit, /*Store=*/false);
    case OpKind::CmmaStore:
      return emitTransfer(Op, Plane, Unit, /*Store=*/true);
    case OpKind::CmmaMma:
      return emitMma(Op, Plane);
    case OpKind::CmmaMmaScaled:
      return emitScaledMma(Op, Plane);
    case OpKind::CmmaCast:
      return emitCast(Op, Plane);
    case OpKind::CmmaLdmatrix:
      return emitLdmatrix(Op, Plane);
    default: // refused above: not a cmma operation
      return;
    }
  });
}

void CmmaEmitter::emitLdmatrix(const Operation &Op, Value *Plane) {
  llvm::IRBuilder<> &B = Cx.B;
  ValueId F = Op.Operands[0].Value, Mem = Op.Operands[1].Value;
  const Operand &IndexO = Op.Operands[2];
  const MatrixType &T = Cx.K.value(F).Matrix;
  const ValueInfo &MI = Cx.K.value(Mem);
  llvm::Type *F32 = B.getFloatTy();
  llvm::Type *ElemTy = Types.memType(Type::scalar(T.Elem));
  auto *RowTy = llvm::FixedVectorType::get(ElemTy, 8);
  llvm::Align ElemAlign(byteSize(T.Elem));
  uint64_t Lanes = MI.Ty.lanes();
  Value *Base = MI.Kind == ValueKind::Buffer
                    ? Memory.BufBase.lookup(Mem)
                    : Memory.scratchPtr(Cx.Layout.Of[Mem].Offset);
  Value *Count = MI.Kind == ValueKind::Buffer ? Memory.BufCount.lookup(Mem)
                                              : B.getInt64(MI.Count);
  Value *Scalars = B.CreateMul(Count, B.getInt64(Lanes));
  Value *Frag = fragmentPtr(F, Plane);
  Value *PlaneBase = B.CreateMul(Plane, B.getInt32(Cx.PlaneDim));
  Value *Zero = llvm::Constant::getNullValue(RowTy);
  unsigned Blocks = static_cast<unsigned>(T.elements() / 64);
  // Unit 8i + q of the plane names row q of block i. Without `trans`, its
  // element e is unit (4q + e/2)'s element 2i + e%2; with `trans`, unit
  // (4e + q/2)'s element 2i + q%2 (docs/LangRef.md §5.6).
  for (unsigned Src = 0; Src < 8 * Blocks; ++Src) {
    Value *U = B.CreateAdd(PlaneBase, B.getInt32(Src));
    // A unit past the cube or that returned names no row: it reads as 0.
    Value *Live = B.CreateICmpULT(U, B.getInt32(Cx.Units));
    Value *SlotUnit = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, U,
                                              B.getInt32(Cx.Units - 1));
    if (Cx.Layout.HasFlags)
      Live = B.CreateAnd(Live, B.CreateNot(Pos.unitFinished(SlotUnit)));
    Value *Idx = Values.value(IndexO, SlotUnit);
    Value *Idx64 = Values.operandType(IndexO).isSigned()
                       ? B.CreateSExtOrTrunc(Idx, Cx.I64)
                       : B.CreateZExtOrTrunc(Idx, Cx.I64);
    Value *First = B.CreateMul(Idx64, B.getInt64(Lanes));
    // A masked load: a unit that names no row touches no memory (its
    // address is the memory's start), and in the bounds-checked variant
    // each element is in bounds when the index is and the element's scalar
    // is before the end.
    Value *In = Live, *Mask;
    if (Cx.Variant.BoundsChecked) {
      In = B.CreateAnd(Live, B.CreateICmpULT(Idx64, Count));
      llvm::SmallVector<llvm::Constant *, 8> Steps;
      for (unsigned E = 0; E < 8; ++E)
        Steps.push_back(B.getInt64(E));
      Value *Offs = B.CreateAdd(B.CreateVectorSplat(8, First),
                                llvm::ConstantVector::get(Steps));
      Mask = B.CreateAnd(B.CreateVectorSplat(8, In),
                         B.CreateICmpULT(Offs, B.CreateVectorSplat(8, Scalars)));
    } else {
      Mask = B.CreateVectorSplat(8, In);
    }
    Value *Off = B.CreateSelect(In, First, B.getInt64(0));
    auto *Row = B.CreateMaskedLoad(
        RowTy, B.CreateInBoundsGEP(ElemTy, Base, Off), ElemAlign, Mask, Zero);
    tag(Row, Mem);
    Value *Wide = toF32(Row, T.Elem);
    unsigned Block = Src / 8, Q = Src % 8;
    for (unsigned E = 0; E < 8; ++E) {
      unsigned Unit = Op.Transpose ? 4 * E + Q / 2 : 4 * Q + E / 2;
      unsigned Nth = 2 * Block + (Op.Transpose ? Q % 2 : E % 2);
      auto [R, C] = matrixElementPosition(T, Cx.Units, Unit, Nth);
      tag(B.CreateAlignedStore(B.CreateExtractElement(Wide, E),
                               B.CreateConstInBoundsGEP1_64(
                                   F32, Frag, uint64_t(R) * T.cols() + C),
                               llvm::Align(4)),
          F);
    }
  }
}

std::pair<Value *, Value *>
CmmaEmitter::emitElementPosition(const MatrixType &T, Value *Lane,
                                 Value *Nth) {
  llvm::IRBuilder<> &B = Cx.B;
  if (T.isCube()) {
    // Element n of unit u is the row-major element n * units + u.
    Value *E = B.CreateAdd(
        B.CreateMul(B.CreateZExt(Nth, Cx.I64),
                    B.getInt64(matrixUnits(T, Cx.Units))),
        B.CreateZExt(Lane, Cx.I64));
    Value *Cols = B.getInt64(T.cols());
    return {B.CreateTrunc(B.CreateUDiv(E, Cols), Cx.I32),
            B.CreateTrunc(B.CreateURem(E, Cols), Cx.I32)};
  }
  // Blocks of 8 rows x 4E columns (b: 4E x 8) numbered down the columns of
  // blocks; E neighbours of each block per unit (matrixElementPosition).
  uint32_t Run = matrixUnitRun(T);
  bool IsB = T.Use == MatrixUse::B;
  uint32_t BlockH = IsB ? 4 * Run : 8, BlockW = IsB ? 8 : 4 * Run;
  Value *Block = B.CreateUDiv(Nth, B.getInt32(Run));
  Value *J = B.CreateURem(Nth, B.getInt32(Run));
  Value *BlockRows = B.getInt32(T.rows() / BlockH);
  Value *R0 = B.CreateMul(B.CreateURem(Block, BlockRows), B.getInt32(BlockH));
  Value *C0 = B.CreateMul(B.CreateUDiv(Block, BlockRows), B.getInt32(BlockW));
  Value *Group = B.CreateLShr(Lane, 2);
  Value *InRun = B.CreateAdd(
      B.CreateMul(B.CreateAnd(Lane, 3), B.getInt32(Run)), J);
  if (IsB)
    return {B.CreateAdd(R0, InRun), B.CreateAdd(C0, Group)};
  return {B.CreateAdd(R0, Group), B.CreateAdd(C0, InRun)};
}

Value *CmmaEmitter::lowerUnitOp(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  const Operand &FO = Op.Operands.empty() ? Operand() : Op.Operands[0];
  if (FO.isLiteral() || FO.Value >= Cx.K.Values.size() ||
      Cx.K.value(FO.Value).Kind != ValueKind::Fragment) {
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' needs a fragment as operand 1");
    return nullptr;
  }
  ValueId F = FO.Value;
  const MatrixType &T = Cx.K.value(F).Matrix;
  uint32_t PerUnit = matrixElementsPerUnit(T, Cx.Units);
  uint32_t Units = matrixUnits(T, Cx.Units);
  if (Op.Kind == OpKind::CmmaCount)
    return B.getInt32(PerUnit);
  size_t NthAt = (Op.Kind == OpKind::CmmaRow || Op.Kind == OpKind::CmmaCol) ? 2 : 1;
  if (Op.Operands.size() <= NthAt) {
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' lacks its element number");
    return nullptr;
  }
  Value *Nth = Values.value(Op.Operands[NthAt]);
  Value *Valid = B.CreateICmpULT(Nth, B.getInt32(PerUnit));
  if (Op.Kind == OpKind::CmmaRow || Op.Kind == OpKind::CmmaCol) {
    // Outside the layout (unit or element number out of range): the row
    // and column counts, a position past the fragment.
    Value *Lane = Values.value(Op.Operands[1]);
    Valid = B.CreateAnd(Valid, B.CreateICmpULT(Lane, B.getInt32(Units)));
    Value *SafeLane = B.CreateSelect(Valid, Lane, B.getInt32(0));
    Value *SafeNth = B.CreateSelect(Valid, Nth, B.getInt32(0));
    auto [R, C] = emitElementPosition(T, SafeLane, SafeNth);
    return Op.Kind == OpKind::CmmaRow
               ? B.CreateSelect(Valid, R, B.getInt32(T.rows()))
               : B.CreateSelect(Valid, C, B.getInt32(T.cols()));
  }
  // cmma_get / cmma_set: the current unit's own element.
  Value *Unit = Pos.Unit;
  Value *Plane = B.getInt32(0), *Lane = Unit;
  if (!T.isCube()) {
    Plane = B.CreateUDiv(Unit, B.getInt32(Cx.PlaneDim));
    Lane = B.CreateURem(Unit, B.getInt32(Cx.PlaneDim));
  }
  Value *SafeNth = B.CreateSelect(Valid, Nth, B.getInt32(0));
  auto [R, C] = emitElementPosition(T, Lane, SafeNth);
  // A cube fragment whose elements do not divide among its units: the
  // last element numbers of some units lie past the fragment.
  if (T.isCube() && T.elements() % Units != 0)
    Valid = B.CreateAnd(Valid, B.CreateICmpULT(R, B.getInt32(T.rows())));
  Value *Off = B.CreateAdd(B.CreateMul(B.CreateZExt(R, Cx.I64),
                                       B.getInt64(T.cols())),
                           B.CreateZExt(C, Cx.I64));
  Off = B.CreateSelect(Valid, Off, B.getInt64(0));
  Value *Ptr = B.CreateInBoundsGEP(B.getFloatTy(), fragmentPtr(F, Plane), Off);
  if (Op.Kind == OpKind::CmmaGet) {
    auto *X = B.CreateAlignedLoad(B.getFloatTy(), Ptr, llvm::Align(4));
    tag(X, F);
    Value *Zero = llvm::ConstantFP::get(B.getFloatTy(), 0.0);
    return fromF32(B.CreateSelect(Valid, X, Zero), T.Elem);
  }
  // cmma_set: an element number outside the unit's elements writes nothing.
  Value *X = toF32(Values.value(Op.Operands[2]), T.Elem);
  llvm::BasicBlock *Do = Cx.newBlock("cmma.set");
  llvm::BasicBlock *Done = Cx.newBlock("cmma.set.end");
  B.CreateCondBr(Valid, Do, Done);
  B.SetInsertPoint(Do);
  tag(B.CreateAlignedStore(X, Ptr, llvm::Align(4)), F);
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  return nullptr;
}
