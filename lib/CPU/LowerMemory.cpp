//===- LowerMemory.cpp - Buffers, shared/local arrays, vars, atomics, slots
//-===//
//
// Element i of a memory object is at byte i * storeSize (lines packed). In the
// bounds-checked variant an out-of-bounds load gives 0 and a store or atomic
// is dropped (an atomic then gives 0); a negative signed index is out of
// bounds. Buffer atomics are seq_cst LLVM atomics, one per lane on a buffer
// of lines; shared-memory atomics are plain read-modify-writes (the units of
// a cube run on one thread), of the whole line for lines. The
// atomics on a privatisable buffer (AtomicPrivatization.h) branch on the
// launch's choice: plain read-modify-writes on the worker's private copy, or
// the real atomic.
//
//===----------------------------------------------------------------------===//

#include "AtomicRMW.h"
#include "LoweringImpl.h"

#include "llvm/IR/Intrinsics.h"

#include <limits>

using namespace kiln;
using namespace kiln::lowering;
using llvm::Value;

Value *MemoryEmitter::scratchPtr(uint64_t Off) {
  return Cx.B.CreateConstInBoundsGEP1_64(Cx.I8, Scratch, Off);
}

Value *MemoryEmitter::slotPtr(uint64_t Off, uint64_t Stride, Value *U) {
  llvm::IRBuilder<> &B = Cx.B;
  Value *Idx = B.CreateMul(B.CreateZExt(U, Cx.I64), B.getInt64(Stride));
  return B.CreateInBoundsGEP(Cx.I8, scratchPtr(Off), Idx);
}

void MemoryEmitter::tagAccess(llvm::Instruction *I, ValueKind Kind, ValueId Mem,
                              bool Parallel) {
  Scopes.tag(I, Kind == ValueKind::Plain ? AliasScopes::SlotKey : Mem);
  // Units of one unit loop never depend on each other between barriers.
  // Not for buffers that may overlap (MayAlias): LoopAccessAnalysis skips
  // its dependence checks for a loop annotated parallel, and the
  // vectoriser's interleaved groups (written where their last member is)
  // then find no dependence to stop a unit's store to one buffer sinking
  // past its own later load of another. Without the group LLVM orders
  // buffer accesses itself: a runtime overlap check picks the vector loop
  // or, when the buffers do overlap, the scalar one.
  if (Kind == ValueKind::Buffer && Cx.Variant.MayAlias)
    Parallel = false;
  if (Parallel && Pos.Unit && Pos.AccessGroup)
    I->setMetadata(llvm::LLVMContext::MD_access_group, Pos.AccessGroup);
}

Value *MemoryEmitter::loadSlot(ValueId Id, Value *U) {
  Type T = Cx.K.value(Id).Ty;
  auto *L = Cx.B.CreateAlignedLoad(
      Types.memType(T), slotPtr(Cx.Layout.Of[Id].Offset, T.storeSize(), U),
      llvm::Align(byteSize(T.elementKind())));
  tagAccess(L, ValueKind::Plain, Id, U == Pos.Unit);
  return Types.fromMem(L, T);
}

Value *MemoryEmitter::loadSlotLane(ValueId Id, Value *U, unsigned Lane) {
  Type T = Cx.K.value(Id).Ty;
  Type E = T.elementType();
  unsigned ElemBytes = byteSize(E.elementKind());
  llvm::Type *ElemMem = Types.memType(E);
  // Lanes narrower than a byte are packed and have no address of their own.
  if (!T.isLine() || Lane >= T.lanes() ||
      Cx.M->getDataLayout().getTypeSizeInBits(ElemMem) != ElemBytes * 8)
    return nullptr;
  Value *Slot = slotPtr(Cx.Layout.Of[Id].Offset, T.storeSize(), U);
  auto *L = Cx.B.CreateAlignedLoad(
      ElemMem, Cx.B.CreateConstInBoundsGEP1_64(Cx.I8, Slot, Lane * ElemBytes),
      llvm::Align(ElemBytes));
  tagAccess(L, ValueKind::Plain, Id, U == Pos.Unit);
  return Types.fromMem(L, E);
}

void MemoryEmitter::storeSlot(ValueId Id, Value *U, Value *V) {
  if (!U) {
    Cx.fail({}, "internal error: a per-unit value is stored outside a "
                "unit loop");
    return;
  }
  Type T = Cx.K.value(Id).Ty;
  auto *S = Cx.B.CreateAlignedStore(
      Types.toMem(V, T), slotPtr(Cx.Layout.Of[Id].Offset, T.storeSize(), U),
      llvm::Align(byteSize(T.elementKind())));
  tagAccess(S, ValueKind::Plain, Id, U == Pos.Unit);
}

Value *MemoryEmitter::loadVector(llvm::FixedVectorType *VT, Value *Ptr,
                                llvm::Align Al, unsigned N, unsigned Len,
                                Value *PassThru, ValueId Key) {
  llvm::IRBuilder<> &B = Cx.B;
  if (!PassThru)
    PassThru = llvm::Constant::getNullValue(VT);
  llvm::Instruction *L;
  if (Len >= N) {
    L = B.CreateAlignedLoad(VT, Ptr, Al);
  } else {
    unsigned PerUnit = VT->getNumElements() / N;
    llvm::SmallVector<llvm::Constant *, 64> Mask;
    for (unsigned I = 0; I < VT->getNumElements(); ++I)
      Mask.push_back(B.getInt1(I / PerUnit < Len));
    L = B.CreateMaskedLoad(VT, Ptr, Al, llvm::ConstantVector::get(Mask),
                           PassThru);
  }
  Scopes.tag(L, Key);
  return L;
}

/// The alignment of the slots of the units from a multiple of \p N on:
/// regions are 64-byte aligned.
static llvm::Align planeAlign(unsigned N, unsigned Stride) {
  return llvm::commonAlignment(llvm::Align(64), uint64_t(N) * Stride);
}

Value *MemoryEmitter::loadSlotVector(ValueId Id, Value *First, unsigned N,
                                     unsigned Len, Value *PassThru) {
  Type T = Cx.K.value(Id).Ty;
  auto *VT = llvm::FixedVectorType::get(Types.memType(T.elementType()),
                                        N * T.lanes());
  return loadVector(VT, slotPtr(Cx.Layout.Of[Id].Offset, T.storeSize(), First),
                    planeAlign(N, T.storeSize()), N, Len, PassThru,
                    AliasScopes::SlotKey);
}

void MemoryEmitter::storeSlotVector(ValueId Id, Value *First, Value *V,
                                    unsigned Len) {
  llvm::IRBuilder<> &B = Cx.B;
  Type T = Cx.K.value(Id).Ty;
  auto *VT = llvm::cast<llvm::FixedVectorType>(V->getType());
  unsigned N = VT->getNumElements() / T.lanes();
  Value *Ptr = slotPtr(Cx.Layout.Of[Id].Offset, T.storeSize(), First);
  llvm::Align Al = planeAlign(N, T.storeSize());
  llvm::Instruction *S;
  if (Len >= N) {
    S = B.CreateAlignedStore(V, Ptr, Al);
  } else {
    llvm::SmallVector<llvm::Constant *, 64> Mask;
    for (unsigned I = 0; I < VT->getNumElements(); ++I)
      Mask.push_back(B.getInt1(I / T.lanes() < Len));
    S = B.CreateMaskedStore(V, Ptr, Al, llvm::ConstantVector::get(Mask));
  }
  Scopes.tag(S, AliasScopes::SlotKey);
}

Value *MemoryEmitter::loadFlagVector(Value *First, unsigned N, unsigned Len) {
  llvm::IRBuilder<> &B = Cx.B;
  auto *VT = llvm::FixedVectorType::get(Cx.I8, N);
  Value *Ptr = B.CreateInBoundsGEP(Cx.I8, scratchPtr(Cx.Layout.FlagsOffset),
                                   B.CreateZExt(First, Cx.I64));
  return loadVector(VT, Ptr, planeAlign(N, 1), N, Len,
                    llvm::ConstantInt::get(VT, 1), AliasScopes::FlagKey);
}

Value *MemoryEmitter::varPtr(ValueId Var) {
  Type T = Cx.K.value(Var).Ty;
  if (!Cx.Layout.inScratch(Var)) {
    llvm::AllocaInst *&A = VarAllocas[Var];
    if (!A)
      A = Cx.entryAlloca(Types.memType(T), Cx.K.value(Var).Name);
    return A;
  }
  return slotPtr(Cx.Layout.Of[Var].Offset, T.storeSize(), Pos.Unit);
}

Value *MemoryEmitter::memCount(ValueId Mem) {
  const ValueInfo &VI = Cx.K.value(Mem);
  if (VI.Kind == ValueKind::Buffer)
    return BufCount.lookup(Mem);
  return Cx.B.getInt64(VI.Count);
}

MemAccess MemoryEmitter::resolveAccess(ValueId Mem, const Operand &Index,
                                       bool AlwaysCheck) {
  llvm::IRBuilder<> &B = Cx.B;
  MemAccess A;
  A.Mem = Mem;
  const ValueInfo &VI = Cx.K.value(Mem);
  A.Kind = VI.Kind;
  Type T = VI.Ty;
  Value *Idx = Values.value(Index);
  Type IT = Values.operandType(Index);
  Value *Idx64 = nullptr;
  auto Wide = WideIndex.find(Idx);
  if (Wide != WideIndex.end() && Wide->second.Signed == IT.isSigned())
    Idx64 = Wide->second.Wide;
  if (!Idx64)
    Idx64 = Idx->getType() == Cx.I64 ? Idx
            : IT.isSigned()          ? B.CreateSExt(Idx, Cx.I64)
                                     : B.CreateZExt(Idx, Cx.I64);
  Value *Base = nullptr;
  switch (VI.Kind) {
  case ValueKind::Buffer:
    Base = BufBase.lookup(Mem);
    break;
  case ValueKind::Shared:
    Base = scratchPtr(Cx.Layout.Of[Mem].Offset);
    break;
  case ValueKind::Local:
    Base =
        slotPtr(Cx.Layout.Of[Mem].Offset, VI.Count * T.storeSize(), Pos.Unit);
    break;
  default:
    Cx.fail(Index.Loc, "'%" + VI.Name + "' is not indexable memory");
    Base = scratchPtr(0);
    break;
  }
  llvm::Type *Elem = Types.memType(T.elementType());
  Value *Scaled =
      T.lanes() == 1 ? Idx64 : B.CreateMul(Idx64, B.getInt64(T.lanes()));
  A.Ptr = B.CreateInBoundsGEP(Elem, Base, Scaled);
  A.Base = Base;
  A.Index64 = Idx64;
  if (VI.Kind == ValueKind::Buffer)
    if (Value *PB = PrivBase.lookup(Mem))
      A.PrivPtr = B.CreateInBoundsGEP(Elem, PB, Scaled);
  if (!Cx.Variant.BoundsChecked && !AlwaysCheck)
    return A;
  bool Record = Cx.Variant.BoundsChecked;
  Value *Count = memCount(Mem);
  if (Idx->getType()->getIntegerBitWidth() == 64) {
    A.InBounds = B.CreateICmpULT(Idx64, Count);
    return A;
  }
  // Indices of 32 bits or fewer are compared in 32 bits against a
  // loop-invariant limit: 64-bit lane compares make the vectoriser's cost
  // model give up on AVX2 hosts.
  if (IT.isSigned()) {
    // Valid signed indices are below 2^31; a negative one is >= 2^31 as u32.
    Value *Idx32 = B.CreateSExtOrTrunc(Idx, Cx.I32);
    Value *Lim =
        B.CreateTrunc(B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Count,
                                              B.getInt64(1ull << 31)),
                      Cx.I32);
    A.InBounds = B.CreateICmpULT(Idx32, Lim);
    if (auto *I = llvm::dyn_cast<llvm::Instruction>(A.InBounds); I && Record)
      Guards.push_back({I, Idx32, Count, true});
    return A;
  }
  Value *Idx32 = B.CreateZExtOrTrunc(Idx, Cx.I32);
  Value *Lim =
      B.CreateTrunc(B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Count,
                                            B.getInt64(0xFFFFFFFFull)),
                    Cx.I32);
  // With Count above 2^32-1 every u32 index is in bounds, 2^32-1 included:
  // halving the index then keeps it below Lim. Not `cmp || Count > 2^32-1`:
  // O3's non-trivial unswitching clones the unit loop for every invariant
  // operand of such an `or` (7 vectorised copies of vadd's loop, for three
  // buffers), which doubled the compile time.
  Value *Shift =
      B.CreateZExt(B.CreateICmpUGT(Count, B.getInt64(0xFFFFFFFFull)), Cx.I32);
  A.InBounds = B.CreateICmpULT(B.CreateLShr(Idx32, Shift), Lim);
  if (auto *I = llvm::dyn_cast<llvm::Instruction>(A.InBounds); I && Record)
    Guards.push_back({I, Idx32, Count, false});
  return A;
}

Value *MemoryEmitter::zeroCell() {
  auto *Ty = llvm::ArrayType::get(Cx.I8, 256);
  auto *G = llvm::cast<llvm::GlobalVariable>(
      Cx.M->getOrInsertGlobal("kiln.zero_cell", Ty));
  if (!G->hasInitializer()) {
    G->setInitializer(llvm::ConstantAggregateZero::get(Ty));
    G->setConstant(true);
    G->setLinkage(llvm::GlobalValue::PrivateLinkage);
    G->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    G->setAlignment(llvm::Align(64));
  }
  return G;
}

Value *MemoryEmitter::emitSpeculatedLoad(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  ValueId Mem = Op.Operands[0].Value;
  const ValueInfo &VI = Cx.K.value(Mem);
  Type T = VI.Ty;
  MemAccess A = resolveAccess(Mem, Op.Operands[1], /*AlwaysCheck=*/true);
  // The index where it is in bounds, else 0: one select of the index keeps
  // a gather's base-plus-index form (vgatherdps takes 32-bit indices). A
  // buffer of no elements has no element 0: its base becomes a zero cell
  // (an invariant select, hoisted out of the unit loop).
  Value *Base = A.Base;
  if (VI.Kind == ValueKind::Buffer)
    Base = B.CreateSelect(B.CreateICmpNE(memCount(Mem), B.getInt64(0)), Base,
                          zeroCell());
  Value *Idx = A.InBounds ? B.CreateSelect(A.InBounds, A.Index64,
                                           B.getInt64(0))
                          : A.Index64;
  if (T.lanes() != 1)
    Idx = B.CreateMul(Idx, B.getInt64(T.lanes()));
  llvm::Align Al(byteSize(T.elementKind()));
  auto *L = B.CreateAlignedLoad(
      Types.memType(T),
      B.CreateInBoundsGEP(Types.memType(T.elementType()), Base, Idx), Al);
  tagAccess(L, VI.Kind, Mem, true);
  Value *V = Types.fromMem(L, T);
  if (Cx.Variant.BoundsChecked && A.InBounds)
    V = B.CreateSelect(A.InBounds, V, llvm::Constant::getNullValue(V->getType()));
  return V;
}

Value *MemoryEmitter::guarded(Value *InBounds, Type ResultTy,
                              llvm::function_ref<Value *()> Emit) {
  llvm::IRBuilder<> &B = Cx.B;
  if (!InBounds)
    return Emit();
  llvm::BasicBlock *From = B.GetInsertBlock();
  llvm::BasicBlock *Then = Cx.newBlock("inbounds");
  llvm::BasicBlock *Merge = Cx.newBlock("inbounds.end");
  B.CreateCondBr(InBounds, Then, Merge);
  B.SetInsertPoint(Then);
  Value *V = Emit();
  llvm::BasicBlock *ThenEnd = B.GetInsertBlock();
  B.CreateBr(Merge);
  B.SetInsertPoint(Merge);
  if (!V)
    return nullptr;
  llvm::PHINode *Phi = B.CreatePHI(V->getType(), 2);
  Phi->addIncoming(V, ThenEnd);
  Phi->addIncoming(llvm::Constant::getNullValue(V->getType()), From);
  return Phi;
}

/// rmwBinOp of \p Op, or a located error (and Xchg, which is never run:
/// the lowering fails).
static llvm::AtomicRMWInst::BinOp rmwBinOpOrFail(LoweringContext &Cx,
                                                 const Operation &Op, Type T) {
  if (std::optional<llvm::AtomicRMWInst::BinOp> Bin = rmwBinOp(Op.Kind, T))
    return *Bin;
  Cx.fail(Op.Loc, "operation '" + opName(Op.Kind) +
                      "' is not a read-modify-write atomic");
  return llvm::AtomicRMWInst::Xchg;
}

Value *MemoryEmitter::emitLineAtomic(const Operation &Op, Value *Ptr) {
  llvm::IRBuilder<> &B = Cx.B;
  ValueId Mem = Op.Operands[0].Value;
  Type T = Cx.K.value(Mem).Ty;
  Type E = T.elementType();
  llvm::Type *ET = Types.memType(E);
  llvm::Align Al(byteSize(E.elementKind()));
  auto Order = llvm::AtomicOrdering::SequentiallyConsistent;
  bool Stores = Op.opClass() == OpClass::AtomicStore;
  Value *X = Op.opClass() == OpClass::AtomicLoad ? nullptr
                                                 : Values.operand(Op, 2);
  Value *Old = llvm::PoisonValue::get(Types.memType(T));
  // Lane by lane, in lane order; each lane is its own atomic, the line as a
  // whole is not.
  for (unsigned L = 0; L < T.lanes(); ++L) {
    Value *LanePtr = B.CreateConstInBoundsGEP1_64(ET, Ptr, L);
    llvm::Instruction *I;
    if (Op.opClass() == OpClass::AtomicLoad) {
      auto *Ld = B.CreateAlignedLoad(ET, LanePtr, Al);
      Ld->setAtomic(Order);
      I = Ld;
    } else if (Stores) {
      auto *St = B.CreateAlignedStore(B.CreateExtractElement(X, L), LanePtr, Al);
      St->setAtomic(Order);
      I = St;
    } else {
      I = B.CreateAtomicRMW(rmwBinOpOrFail(Cx, Op, E), LanePtr,
                            B.CreateExtractElement(X, L), Al, Order);
    }
    tagAccess(I, ValueKind::Buffer, Mem, false);
    if (!Stores)
      Old = B.CreateInsertElement(Old, I, L);
  }
  return Stores ? nullptr : Old;
}

Value *MemoryEmitter::emitAtomic(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  ValueId Mem = Op.Operands[0].Value;
  const ValueInfo &VI = Cx.K.value(Mem);
  Type T = VI.Ty;
  MemAccess A = resolveAccess(Mem, Op.Operands[1]);
  // The element's alignment: a line (vec<3 x f32>: 12 bytes) is aligned as
  // its lanes.
  llvm::Align Al(byteSize(T.elementKind()));
  bool Global = VI.Kind == ValueKind::Buffer;
  // A read-modify-write that one thread may own (shared memory, or a
  // privatisable buffer's private copy) keeps its unit loop scalar.
  if ((VI.Kind == ValueKind::Shared || (Global && A.PrivPtr)) && Pos.Unit)
    Pos.ScalarRMW = true;
  if (Global && T.isLine() && Op.opClass() != OpClass::AtomicCas)
    return guarded(A.InBounds,
                   Op.opClass() != OpClass::AtomicStore ? Op.ResultType : T,
                   [&] { return emitLineAtomic(Op, A.Ptr); });
  auto Order = llvm::AtomicOrdering::SequentiallyConsistent;
  bool ReturnsValue = Op.opClass() != OpClass::AtomicStore;
  llvm::Type *MT = Types.memType(T);

  auto Emit = [&]() -> Value * {
    switch (Op.opClass()) {
    case OpClass::AtomicLoad: {
      auto *L = B.CreateAlignedLoad(MT, A.Ptr, Al);
      if (Global)
        L->setAtomic(Order);
      tagAccess(L, VI.Kind, Mem, false);
      return Types.fromMem(L, T);
    }
    case OpClass::AtomicStore: {
      auto *S = B.CreateAlignedStore(Types.toMem(Values.operand(Op, 2), T),
                                     A.Ptr, Al);
      if (Global)
        S->setAtomic(Order);
      tagAccess(S, VI.Kind, Mem, false);
      return nullptr;
    }
    case OpClass::AtomicCas: {
      Value *Expected = Values.operand(Op, 2), *New = Values.operand(Op, 3);
      if (Global) {
        // cmpxchg takes integers: floats compare by bit pattern.
        llvm::Type *IT = B.getIntNTy(T.storeSize() * 8);
        bool Fl = T.isFloat();
        if (Fl) {
          Expected = B.CreateBitCast(Expected, IT);
          New = B.CreateBitCast(New, IT);
        }
        auto *X = B.CreateAtomicCmpXchg(A.Ptr, Expected, New, Al, Order, Order);
        tagAccess(X, VI.Kind, Mem, false);
        Value *Old = B.CreateExtractValue(X, 0);
        return Fl ? B.CreateBitCast(Old, MT) : Old;
      }
      auto *Old = B.CreateAlignedLoad(MT, A.Ptr, Al);
      tagAccess(Old, VI.Kind, Mem, false);
      // Floats compare by bit pattern, as cmpxchg does for a buffer.
      llvm::Type *IT = B.getIntNTy(T.storeSize() * 8);
      Value *Eq = Old->getType()->isFloatingPointTy()
                      ? B.CreateICmpEQ(B.CreateBitCast(Old, IT),
                                       B.CreateBitCast(Expected, IT))
                      : B.CreateICmpEQ(Old, Expected);
      auto *S = B.CreateAlignedStore(B.CreateSelect(Eq, New, Old), A.Ptr, Al);
      tagAccess(S, VI.Kind, Mem, false);
      return Old;
    }
    default:
      break;
    }
    // Read-modify-write.
    Value *X = Values.operand(Op, 2);
    // One thread owns the element: a plain load, operation and store.
    auto PlainRMW = [&](Value *Ptr) -> Value * {
      auto *Old = B.CreateAlignedLoad(MT, Ptr, Al);
      tagAccess(Old, VI.Kind, Mem, false);
      Value *New;
      switch (Op.Kind) {
      case OpKind::AtomicAdd:
        New = Scalar.emitBinary(OpKind::Add, T, Old, X);
        break;
      case OpKind::AtomicSub:
        New = Scalar.emitBinary(OpKind::Sub, T, Old, X);
        break;
      case OpKind::AtomicMin:
        New = Scalar.emitMinMax(false, T, Old, X);
        break;
      case OpKind::AtomicMax:
        New = Scalar.emitMinMax(true, T, Old, X);
        break;
      case OpKind::AtomicAnd:
        New = B.CreateAnd(Old, X);
        break;
      case OpKind::AtomicOr:
        New = B.CreateOr(Old, X);
        break;
      case OpKind::AtomicXor:
        New = B.CreateXor(Old, X);
        break;
      case OpKind::AtomicExchange:
        New = X;
        break;
      default: // not a read-modify-write atomic
        Cx.fail(Op.Loc, "operation '" + opName(Op.Kind) +
                            "' is not a read-modify-write atomic");
        New = X;
        break;
      }
      auto *S = B.CreateAlignedStore(New, Ptr, Al);
      tagAccess(S, VI.Kind, Mem, false);
      return Old;
    };
    if (Global) {
      llvm::AtomicRMWInst::BinOp Bin = rmwBinOpOrFail(Cx, Op, T);
      auto RealRMW = [&]() -> Value * {
        auto *R = B.CreateAtomicRMW(Bin, A.Ptr, X, Al, Order);
        tagAccess(R, VI.Kind, Mem, false);
        return R;
      };
      if (!A.PrivPtr)
        return RealRMW();
      // A privatisable buffer (AtomicPrivatization.h): the launch says
      // whether this worker's private copy takes the atomic (CubeABI.h).
      llvm::BasicBlock *Priv = Cx.newBlock("atomic.private");
      llvm::BasicBlock *Real = Cx.newBlock("atomic.real");
      llvm::BasicBlock *Join = Cx.newBlock("atomic.end");
      B.CreateCondBr(PrivOn.lookup(Mem), Priv, Real);
      B.SetInsertPoint(Priv);
      Value *PrivOld = PlainRMW(A.PrivPtr);
      B.CreateBr(Join);
      B.SetInsertPoint(Real);
      Value *RealOld = RealRMW();
      B.CreateBr(Join);
      B.SetInsertPoint(Join);
      llvm::PHINode *Old = B.CreatePHI(MT, 2);
      Old->addIncoming(PrivOld, Priv);
      Old->addIncoming(RealOld, Real);
      return Old;
    }
    return PlainRMW(A.Ptr);
  };
  return guarded(A.InBounds, ReturnsValue ? Op.ResultType : T, Emit);
}

Value *MemoryEmitter::lowerMemoryOp(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  auto MemOperand = [&](unsigned I) -> ValueId {
    if (Op.Operands.size() <= I || Op.Operands[I].isLiteral() ||
        Op.Operands[I].Value >= Cx.K.Values.size() ||
        !Cx.K.value(Op.Operands[I].Value).isMemory()) {
      Cx.fail(Op.Loc,
              "'" + opName(Op.Kind) + "' needs a memory operand");
      return NoValue;
    }
    return Op.Operands[I].Value;
  };
  switch (Op.opClass()) {
  case OpClass::VarDecl:
  case OpClass::ArrayDecl:
    return nullptr; // storage was laid out by the analysis
  case OpClass::Len: {
    ValueId Mem = MemOperand(0);
    if (Mem == NoValue)
      return nullptr;
    // A buffer of 2^32 elements or more has len 2^32 - 1, not its count
    // modulo 2^32: every u32 index below it is in bounds (docs/LangRef.md
    // §5.2).
    Value *Count = B.CreateIntrinsic(
        llvm::Intrinsic::umin, {Cx.I64},
        {memCount(Mem), B.getInt64(std::numeric_limits<uint32_t>::max())});
    return B.CreateTrunc(Count, Cx.I32);
  }
  case OpClass::Get:
  case OpClass::Set: {
    ValueId Var = MemOperand(0);
    if (Var == NoValue)
      return nullptr;
    Type T = Cx.K.value(Var).Ty;
    llvm::Align Al(byteSize(T.elementKind()));
    bool InScratch = Cx.Layout.inScratch(Var);
    if (Op.opClass() == OpClass::Get) {
      auto *L = B.CreateAlignedLoad(Types.memType(T), varPtr(Var), Al);
      if (InScratch)
        tagAccess(L, ValueKind::Var, Var, true);
      return Types.fromMem(L, T);
    }
    if (Op.Operands.size() < 2) {
      Cx.fail(Op.Loc, "'set' needs a value");
      return nullptr;
    }
    Value *New = Types.toMem(Values.operand(Op, 1), T);
    if (Predicate) {
      // Inside a flattened `if`: the value stays where the path is not
      // taken.
      auto *Old = B.CreateAlignedLoad(New->getType(), varPtr(Var), Al);
      if (InScratch)
        tagAccess(Old, ValueKind::Var, Var, true);
      New = B.CreateSelect(Predicate, New, Old);
    }
    auto *S = B.CreateAlignedStore(New, varPtr(Var), Al);
    if (InScratch)
      tagAccess(S, ValueKind::Var, Var, true);
    return nullptr;
  }
  default:
    break;
  }
  ValueId Mem = MemOperand(0);
  if (Mem == NoValue)
    return nullptr;
  size_t Needed =
      Op.opClass() == OpClass::Load || Op.opClass() == OpClass::AtomicLoad ? 2
      : Op.opClass() == OpClass::AtomicCas                                 ? 4
                                                                           : 3;
  if (Op.Operands.size() < Needed) {
    Cx.fail(Op.Loc, "'" + opName(Op.Kind) + "' has too few operands");
    return nullptr;
  }
  const ValueInfo &VI = Cx.K.value(Mem);
  Type T = VI.Ty;
  llvm::Align Al(byteSize(T.elementKind()));
  switch (Op.opClass()) {
  case OpClass::Load: {
    if (Predicate)
      return emitSpeculatedLoad(Op);
    MemAccess A = resolveAccess(Mem, Op.Operands[1]);
    return guarded(A.InBounds, T, [&]() -> Value * {
      auto *L = B.CreateAlignedLoad(Types.memType(T), A.Ptr, Al);
      tagAccess(L, VI.Kind, Mem, true);
      return Types.fromMem(L, T);
    });
  }
  case OpClass::Store: {
    MemAccess A = resolveAccess(Mem, Op.Operands[1]);
    Value *V = Types.toMem(Values.operand(Op, 2), T);
    guarded(A.InBounds, T, [&]() -> Value * {
      auto *S = B.CreateAlignedStore(V, A.Ptr, Al);
      tagAccess(S, VI.Kind, Mem, true);
      return nullptr;
    });
    return nullptr;
  }
  case OpClass::AtomicRMW:
  case OpClass::AtomicCas:
  case OpClass::AtomicLoad:
  case OpClass::AtomicStore:
    return emitAtomic(Op);
  default:
    Cx.fail(Op.Loc,
            "operation '" + opName(Op.Kind) + "' is not a memory operation");
    return nullptr;
  }
}
