//===- LowerTensor.cpp - Tensor metadata and tensor map copies ------------===//
//
// docs/LangRef.md §16 and §17 give the semantics. A launch hands the code a
// table of one TensorInfo per parameter (CubeABI.h); the metadata
// operations read it, and a tensor map copy walks its box, one element at a
// time, at once (like memcpy_async, LowerBarrier.cpp): a kernel cannot tell
// before its wait, and a store is complete before tma_wait_read could ask.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "kiln/CPU/CubeABI.h"

#include <algorithm>
#include <cstddef>
#include <functional>

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

namespace {
/// The two ends of a tensor map copy: the shared array from element Off on,
/// and the tensor's buffer; elements of Size bytes.
struct CopyEnds {
  Value *Off, *SmemBase, *SmemCount, *MapBase, *MapCount;
  uint64_t Size;
};

/// Copies one element: \p Linear is its index from Ends.Off in the shared
/// array, \p Global its element in the tensor, valid when \p InTensor.
void copyElement(LoweringContext &Cx, const CopyEnds &Ends, bool IsLoad,
                 Value *Linear, Value *Global, Value *InTensor) {
  llvm::IRBuilder<> &B = Cx.B;
  uint64_t Size = Ends.Size;
  Value *SI = B.CreateAdd(Ends.Off, Linear);
  Value *InSmem = B.CreateICmpULT(SI, Ends.SmemCount);
  Value *InBuffer =
      B.CreateAnd(InTensor, B.CreateICmpULT(Global, Ends.MapCount));
  Value *SmemPtr = B.CreateInBoundsGEP(Cx.I8, Ends.SmemBase,
                                       B.CreateMul(SI, B.getInt64(Size)));
  Value *GlobalPtr = B.CreateInBoundsGEP(Cx.I8, Ends.MapBase,
                                         B.CreateMul(Global, B.getInt64(Size)));
  BasicBlock *Copy = Cx.newBlock("tma.copy");
  BasicBlock *Next = Cx.newBlock("tma.next");
  if (IsLoad) {
    // An element outside the tensor (or its buffer) reads as 0; one
    // outside the shared array is dropped.
    BasicBlock *Write = Cx.newBlock("tma.write");
    BasicBlock *Zero = Cx.newBlock("tma.zero");
    B.CreateCondBr(InSmem, Write, Next);
    B.SetInsertPoint(Write);
    B.CreateCondBr(InBuffer, Copy, Zero);
    B.SetInsertPoint(Copy);
    B.CreateMemCpy(SmemPtr, llvm::MaybeAlign(1), GlobalPtr, llvm::MaybeAlign(1),
                   Size);
    B.CreateBr(Next);
    B.SetInsertPoint(Zero);
    B.CreateMemSet(SmemPtr, B.getInt8(0), Size, llvm::MaybeAlign(1));
    B.CreateBr(Next);
  } else {
    // An element outside the tensor (or its buffer) is not written.
    B.CreateCondBr(B.CreateAnd(InSmem, InBuffer), Copy, Next);
    B.SetInsertPoint(Copy);
    B.CreateMemCpy(GlobalPtr, llvm::MaybeAlign(1), SmemPtr, llvm::MaybeAlign(1),
                   Size);
    B.CreateBr(Next);
  }
  B.SetInsertPoint(Next);
}

/// Byte offsets of TensorInfo's fields (static_asserted in CubeABI.h).
constexpr uint64_t RankOffset = offsetof(TensorInfo, Rank);
constexpr uint64_t LenOffset = offsetof(TensorInfo, Len);
constexpr uint64_t ShapeOffset = offsetof(TensorInfo, Shape);
constexpr uint64_t StridesOffset = offsetof(TensorInfo, Strides);
constexpr uint64_t BoxOffset = offsetof(TensorInfo, Box);
} // namespace

std::vector<ParamTensorUse> kiln::lowering::findTensorUses(const IRKernel &K) {
  std::vector<ParamTensorUse> Uses(K.Params.size());
  auto ParamIndex = [&](ValueId V) -> int {
    for (size_t I = 0; I < K.Params.size(); ++I)
      if (K.Params[I] == V)
        return static_cast<int>(I);
    return -1;
  };
  for (size_t I = 0; I < K.Params.size(); ++I)
    if (K.Params[I] < K.Values.size() && K.value(K.Params[I]).IsTensorMap)
      Uses[I].ReadsTensorInfo = true; // its box is only in the table
  forEachOperation(K, [&](const Operation &Op, unsigned) {
    if (Op.opClass() == OpClass::TensorMeta && !Op.Operands.empty()) {
      if (int P = ParamIndex(Op.Operands[0].Value); P >= 0)
        Uses[P].ReadsTensorInfo = true;
    } else if (Op.opClass() == OpClass::TensorCopy) {
      size_t MapI = Op.Kind == OpKind::TmaStore ? 2 : 3;
      if (Op.Operands.size() <= MapI)
        return;
      // An im2col load gives rank coordinates and rank - 2 offsets.
      size_t Rank = Op.Operands.size() - MapI - 1;
      if (Op.Kind == OpKind::TmaLoadIm2col)
        Rank = (Rank + 2) / 2;
      if (int P = ParamIndex(Op.Operands[MapI].Value); P >= 0)
        Uses[P].MapRank = static_cast<uint8_t>(Rank);
    }
  });
  return Uses;
}

Value *MemoryEmitter::tensorField(ValueId Param, uint64_t Offset, Value *Index,
                                  Value *Default) {
  llvm::IRBuilder<> &B = Cx.B;
  const std::vector<ValueId> &Params = Cx.K.Params;
  size_t P = std::find(Params.begin(), Params.end(), Param) - Params.begin();
  if (!TensorTable || P == Params.size()) {
    Cx.fail({}, "internal error: no tensor information for a parameter");
    return Default;
  }
  // Without a table a zeroed entry is read instead, so the load needs no
  // branch; the select below then gives the default.
  llvm::GlobalVariable *None = Cx.M->getGlobalVariable("kiln.tensor_info.none",
                                                       /*AllowInternal=*/true);
  if (!None) {
    auto *Ty = llvm::ArrayType::get(Cx.I8, sizeof(TensorInfo));
    None = new llvm::GlobalVariable(*Cx.M, Ty, /*isConstant=*/true,
                                    llvm::GlobalValue::PrivateLinkage,
                                    llvm::ConstantAggregateZero::get(Ty),
                                    "kiln.tensor_info.none");
    None->setAlignment(llvm::Align(8));
  }
  Value *Has = B.CreateICmpNE(
      TensorTable,
      llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(Cx.Ctx)));
  Value *Given = B.CreateGEP(Cx.I8, TensorTable,
                             B.getInt64(uint64_t(P) * sizeof(TensorInfo)));
  Value *Entry = B.CreateSelect(Has, Given, None);
  Value *Ptr = B.CreateConstInBoundsGEP1_64(Cx.I8, Entry, Offset);
  if (Index)
    Ptr = B.CreateInBoundsGEP(Cx.I32, Ptr, B.CreateZExt(Index, Cx.I64));
  Value *V = B.CreateAlignedLoad(Cx.I32, Ptr, llvm::Align(4));
  return B.CreateSelect(Has, V, Default);
}

Value *MemoryEmitter::emitTensorMeta(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  bool TakesDim = Op.Kind == OpKind::Shape || Op.Kind == OpKind::Stride;
  if (Op.Operands.size() < (TakesDim ? 2u : 1u) || Op.Operands[0].isLiteral()) {
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' needs a tensor operand");
    return nullptr;
  }
  ValueId T = Op.Operands[0].Value;
  // The default binding (no table): rank 1, shape [len], strides [1].
  Value *Count = B.CreateTrunc(memCount(T), Cx.I32);
  Value *Rank = tensorField(T, RankOffset, nullptr, B.getInt32(1));
  switch (Op.Kind) {
  case OpKind::Rank:
    return Rank;
  case OpKind::TensorLen:
    return tensorField(T, LenOffset, nullptr, Count);
  case OpKind::Shape:
  case OpKind::Stride:
    break;
  default:
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' is not a tensor operation");
    return nullptr;
  }
  // A dimension at or past the rank reads shape 1 and stride 0.
  bool IsShape = Op.Kind == OpKind::Shape;
  Value *Dim = Values.operand(Op, 1);
  Value *InRank = B.CreateICmpULT(Dim, Rank);
  Value *Safe = B.CreateSelect(InRank, Dim, B.getInt32(0));
  Value *V = tensorField(T, IsShape ? ShapeOffset : StridesOffset, Safe,
                         IsShape ? Count : B.getInt32(1));
  return B.CreateSelect(InRank, V, B.getInt32(IsShape ? 1 : 0));
}

void BarrierEmitter::emitTensorCopy(const Operation &Op) {
  // tma_load %bar, %smem, %offset, %map, %c...
  // tma_store %smem, %offset, %map, %c...
  llvm::IRBuilder<> &B = Cx.B;
  bool IsLoad = Op.Kind == OpKind::TmaLoad;
  size_t SmemI = IsLoad ? 1 : 0, MapI = SmemI + 2;
  ValueId Smem = Op.Operands[SmemI].Value, Map = Op.Operands[MapI].Value;
  unsigned Rank = static_cast<unsigned>(Op.Operands.size() - MapI - 1);
  Type ElemTy = Cx.K.value(Map).Ty;
  uint64_t Size = ElemTy.storeSize();

  const Operand &OffOp = Op.Operands[SmemI + 1];
  Value *Off = Values.value(OffOp);
  Off = Values.operandType(OffOp).isSigned() ? B.CreateSExt(Off, Cx.I64)
                                             : B.CreateZExt(Off, Cx.I64);
  Value *SmemBase = arrayBase(Smem);
  Value *SmemCount = B.getInt64(Cx.K.value(Smem).Count);
  Value *MapBase = arrayBase(Map);
  Value *MapCount = Memory.BufCount.lookup(Map);
  Value *Count32 = B.CreateTrunc(MapCount, Cx.I32);

  std::vector<Value *> Coord(Rank), Shape(Rank), Stride(Rank), Box(Rank);
  for (unsigned D = 0; D < Rank; ++D) {
    Value *DimV = B.getInt32(D);
    Coord[D] = B.CreateSExt(Values.value(Op.Operands[MapI + 1 + D]), Cx.I64);
    Shape[D] = B.CreateZExt(
        Memory.tensorField(Map, ShapeOffset, DimV,
                           D == 0 ? Count32 : B.getInt32(1)),
        Cx.I64);
    Stride[D] = B.CreateZExt(
        Memory.tensorField(Map, StridesOffset, DimV,
                           B.getInt32(D == 0 ? 1 : 0)),
        Cx.I64);
    Box[D] = B.CreateZExt(Memory.tensorField(Map, BoxOffset,
                                             DimV, B.getInt32(0)),
                          Cx.I64);
  }

  CopyEnds Ends{Off, SmemBase, SmemCount, MapBase, MapCount, Size};

  // The box's dimensions, outermost first, as nested loops.
  std::function<void(unsigned, Value *, Value *, Value *)> Walk =
      [&](unsigned D, Value *Linear, Value *Global, Value *InTensor) {
        Pos.emitCountedLoop(
            B.getInt64(0), Box[D],
            [&](Value *I) {
              Value *C = B.CreateAdd(Coord[D], I);
              // A negative coordinate is a huge unsigned one: outside too.
              Value *In = B.CreateAnd(InTensor, B.CreateICmpULT(C, Shape[D]));
              Value *G = B.CreateAdd(Global, B.CreateMul(C, Stride[D]));
              Value *L = B.CreateAdd(B.CreateMul(Linear, Box[D]), I);
              if (D + 1 < Rank)
                Walk(D + 1, L, G, In);
              else
                copyElement(Cx, Ends, IsLoad, L, G, In);
            },
            "tma.dim" + llvm::Twine(D));
      };
  Walk(0, B.getInt64(0), B.getInt64(0), B.getTrue());

  if (IsLoad) {
    // The whole box counts, the zeros filled in included (as with TMA).
    Value *Bytes = B.getInt64(Size);
    for (Value *Dim : Box)
      Bytes = B.CreateMul(Bytes, Dim);
    update(statePtr(Op.Operands[0].Value), B.getInt32(0),
           B.CreateNeg(B.CreateTrunc(Bytes, Cx.I32)), Op);
  }
}

void BarrierEmitter::emitIm2colLoad(const Operation &Op) {
  // tma_load_im2col %bar, %smem, %offset, %map, %n, %s..., %c offsets %o...
  // (docs/LangRef.md §17.7): pixel k of the column is position p0 + k of
  // the images' pixel boxes laid end to end, W fastest, then H, D, N.
  llvm::IRBuilder<> &B = Cx.B;
  constexpr size_t SmemI = 1, MapI = 3;
  ValueId Smem = Op.Operands[SmemI].Value, Map = Op.Operands[MapI].Value;
  unsigned Rank = static_cast<unsigned>((Op.Operands.size() - MapI + 1) / 2);
  unsigned Spatial = Rank - 2;
  uint64_t Size = Cx.K.value(Map).Ty.storeSize();

  const Operand &OffOp = Op.Operands[SmemI + 1];
  Value *Off = Values.value(OffOp);
  Off = Values.operandType(OffOp).isSigned() ? B.CreateSExt(Off, Cx.I64)
                                             : B.CreateZExt(Off, Cx.I64);
  Value *MapCount = Memory.BufCount.lookup(Map);
  CopyEnds Ends{Off,
                arrayBase(Smem),
                B.getInt64(Cx.K.value(Smem).Count),
                arrayBase(Map),
                MapCount,
                Size};

  // The table always exists for a tensor map; the defaults only keep the
  // code well defined without one (no pixels, no channels).
  Value *Count32 = B.CreateTrunc(MapCount, Cx.I32);
  auto Field = [&](uint64_t Offset, unsigned I, Value *Default) {
    return Memory.tensorField(Map, Offset, B.getInt32(I), Default);
  };
  std::vector<Value *> Shape(Rank), Stride(Rank);
  for (unsigned D = 0; D < Rank; ++D) {
    Shape[D] = B.CreateZExt(
        Field(ShapeOffset, D, D == 0 ? Count32 : B.getInt32(1)), Cx.I64);
    Stride[D] = B.CreateZExt(
        Field(StridesOffset, D, B.getInt32(D == 0 ? 1 : 0)), Cx.I64);
  }
  Value *Pixels =
      B.CreateZExt(Field(BoxOffset, Im2colPixelsSlot, B.getInt32(0)), Cx.I64);
  Value *Channels =
      B.CreateZExt(Field(BoxOffset, Im2colChannelsSlot, B.getInt32(0)), Cx.I64);

  auto Coord = [&](unsigned D) {
    return B.CreateSExt(Values.value(Op.Operands[MapI + 1 + D]), Cx.I64);
  };
  // Per spatial dimension: the pixel box [lower, shape - 1 + upper], its
  // extent (at least 1 at launch; clamped so a division never traps), and
  // the start's position in it.
  std::vector<Value *> Lower(Spatial), Extent(Spatial), Offset(Spatial);
  Value *StartIn = B.getTrue();
  Value *PerImage = B.getInt64(1), *SpatialPos = B.getInt64(0);
  for (unsigned S = 0; S < Spatial; ++S) {
    Lower[S] = B.CreateSExt(
        Field(BoxOffset, Im2colLowerSlot + S, B.getInt32(0)), Cx.I64);
    Value *Upper = B.CreateSExt(
        Field(BoxOffset, Im2colUpperSlot + S, B.getInt32(0)), Cx.I64);
    Value *Ext = B.CreateSub(B.CreateAdd(Shape[1 + S], Upper), Lower[S]);
    Extent[S] =
        B.CreateSelect(B.CreateICmpSLT(Ext, B.getInt64(1)), B.getInt64(1), Ext);
    Offset[S] =
        B.CreateZExt(Values.value(Op.Operands[MapI + 1 + Rank + S]), Cx.I64);
    // A negative position is a huge unsigned one: outside too.
    Value *Rel = B.CreateSub(Coord(1 + S), Lower[S]);
    StartIn = B.CreateAnd(StartIn, B.CreateICmpULT(Rel, Extent[S]));
    SpatialPos = B.CreateAdd(B.CreateMul(SpatialPos, Extent[S]), Rel);
    PerImage = B.CreateMul(PerImage, Extent[S]);
  }
  // |n| < 2^31 and PerImage < 2^32 (checked at launch): no overflow.
  Value *Start =
      B.CreateAdd(B.CreateMul(Coord(0), PerImage), SpatialPos, "im2col.start");
  Value *Channel0 = Coord(Rank - 1);

  Pos.emitCountedLoop(
      B.getInt64(0), Pixels,
      [&](Value *K) {
        // Split position p into the image and the spatial positions.
        Value *P = B.CreateAdd(Start, K);
        Value *In = B.CreateAnd(StartIn, B.CreateICmpSGE(P, B.getInt64(0)));
        Value *Rest = B.CreateSelect(In, P, B.getInt64(0));
        std::vector<Value *> Position(Spatial);
        for (unsigned S = Spatial; S-- > 0;) {
          Position[S] = B.CreateURem(Rest, Extent[S]);
          Rest = B.CreateUDiv(Rest, Extent[S]);
        }
        In = B.CreateAnd(In, B.CreateICmpULT(Rest, Shape[0]));
        Value *Global = B.CreateMul(Rest, Stride[0]);
        for (unsigned S = 0; S < Spatial; ++S) {
          Value *X = B.CreateAdd(B.CreateAdd(Position[S], Lower[S]), Offset[S]);
          In = B.CreateAnd(In, B.CreateICmpULT(X, Shape[1 + S]));
          Global = B.CreateAdd(Global, B.CreateMul(X, Stride[1 + S]));
        }
        Pos.emitCountedLoop(
            B.getInt64(0), Channels,
            [&](Value *J) {
              Value *C = B.CreateAdd(Channel0, J);
              Value *CIn = B.CreateAnd(In, B.CreateICmpULT(C, Shape[Rank - 1]));
              Value *G = B.CreateAdd(Global, B.CreateMul(C, Stride[Rank - 1]));
              Value *L = B.CreateAdd(B.CreateMul(K, Channels), J);
              copyElement(Cx, Ends, /*IsLoad=*/true, L, G, CIn);
            },
            "im2col.channel");
      },
      "im2col.pixel");

  // The whole column counts, the zeros filled in included (as with TMA).
  Value *Bytes = B.CreateMul(B.CreateMul(Pixels, Channels), B.getInt64(Size));
  update(statePtr(Op.Operands[0].Value), B.getInt32(0),
         B.CreateNeg(B.CreateTrunc(Bytes, Cx.I32)), Op);
}
