//===- LowerUnitLoops.cpp - Unit loop nests and the "returned" flags ------===//
//
// A segment becomes one loop nest over the units of the cube, z outermost and
// x innermost, with parallel-access and unroll metadata (docs/Lowering.md §4,
// §13 fix 2). Units that returned are skipped through their flag in scratch.
// The builtins (§3) read the position: the cube loop's cube_pos and the unit
// loops' induction variables.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include <cassert>

/// How many times an innermost unit loop with an atomic on shared memory or
/// on a privatisable buffer is unrolled (docs/Lowering.md §4, §13).
static constexpr unsigned SerialUnrollCount = 4;

using namespace kiln;
using namespace kiln::lowering;
using llvm::BasicBlock;
using llvm::Value;

void UnitLoops::emitCountedLoop(Value *Begin, Value *End,
                                llvm::function_ref<void(Value *)> Body,
                                const llvm::Twine &Name) {
  llvm::IRBuilder<> &B = Cx.B;
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *Header = Cx.newBlock(Name + ".head");
  BasicBlock *BodyBB = Cx.newBlock(Name + ".body");
  BasicBlock *Exit = Cx.newBlock(Name + ".end");
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  llvm::PHINode *I = B.CreatePHI(Begin->getType(), 2, Name);
  I->addIncoming(Begin, Pre);
  B.CreateCondBr(B.CreateICmpULT(I, End), BodyBB, Exit);
  B.SetInsertPoint(BodyBB);
  Body(I);
  Value *Next = B.CreateAdd(I, llvm::ConstantInt::get(I->getType(), 1));
  I->addIncoming(Next, B.GetInsertBlock());
  B.CreateBr(Header);
  B.SetInsertPoint(Exit);
}

Value *UnitLoops::unitFinished(Value *U) {
  llvm::IRBuilder<> &B = Cx.B;
  auto *L = B.CreateAlignedLoad(
      Cx.I8,
      B.CreateInBoundsGEP(Cx.I8, Memory.scratchPtr(Cx.Layout.FlagsOffset),
                          B.CreateZExt(U, Cx.I64)),
      llvm::Align(1));
  Scopes.tag(L, AliasScopes::FlagKey);
  return B.CreateICmpNE(L, B.getInt8(0));
}

void UnitLoops::markReturned() {
  llvm::IRBuilder<> &B = Cx.B;
  if (Cx.Layout.HasFlags) {
    auto *S = B.CreateAlignedStore(
        B.getInt8(1),
        B.CreateInBoundsGEP(Cx.I8, Memory.scratchPtr(Cx.Layout.FlagsOffset),
                            B.CreateZExt(Unit, Cx.I64)),
        llvm::Align(1));
    Scopes.tag(S, AliasScopes::FlagKey);
  }
  B.CreateBr(UnitLatch);
}

Value *UnitLoops::firstActiveUnit() {
  llvm::IRBuilder<> &B = Cx.B;
  if (GuardFirst)
    return GuardFirst;
  if (!Cx.Layout.HasFlags)
    return B.getInt32(0);
  BasicBlock *Pre = B.GetInsertBlock();
  BasicBlock *Header = Cx.newBlock("active.scan");
  BasicBlock *Check = Cx.newBlock("active.check");
  BasicBlock *Next = Cx.newBlock("active.next");
  BasicBlock *Done = Cx.newBlock("active.done");
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  llvm::PHINode *I = B.CreatePHI(Cx.I32, 2, "first_active");
  I->addIncoming(B.getInt32(0), Pre);
  B.CreateCondBr(B.CreateICmpEQ(I, B.getInt32(Cx.Units)), Done, Check);
  B.SetInsertPoint(Check);
  B.CreateCondBr(unitFinished(I), Next, Done);
  B.SetInsertPoint(Next);
  I->addIncoming(B.CreateAdd(I, B.getInt32(1)), Next);
  B.CreateBr(Header);
  B.SetInsertPoint(Done);
  return I;
}

Value *UnitLoops::unitForUniforms() {
  llvm::IRBuilder<> &B = Cx.B;
  if (GuardFirst)
    return GuardFirst;
  if (!Cx.Layout.HasFlags)
    return B.getInt32(0);
  Value *First = firstActiveUnit();
  return B.CreateSelect(B.CreateICmpEQ(First, B.getInt32(Cx.Units)),
                        B.getInt32(0), First);
}

Value *UnitLoops::firstActiveOrSkip(BasicBlock *Skip) {
  llvm::IRBuilder<> &B = Cx.B;
  if (GuardFirst)
    return GuardFirst; // some unit passes the guards (lowerGuardedIf)
  if (!Cx.Layout.HasFlags)
    return B.getInt32(0);
  Value *First = firstActiveUnit();
  BasicBlock *Cont = Cx.newBlock("active");
  B.CreateCondBr(B.CreateICmpEQ(First, B.getInt32(Cx.Units)), Skip, Cont);
  B.SetInsertPoint(Cont);
  return First;
}

void UnitLoops::emitNest(llvm::function_ref<void()> Body, Value *Begin,
                         Value *End, Value *Step, const UnitBox *Box,
                         bool Cold) {
  llvm::IRBuilder<> &B = Cx.B;
  // A range only for the single loop of a one-dimensional cube.
  assert((!Begin || (Cx.K.CubeDim[1] <= 1 && Cx.K.CubeDim[2] <= 1)) &&
         "a narrowed unit loop needs a one-dimensional cube");
  if (RangeBegin) {
    // Inside a guarded `if` on a unit range: only its units run. A narrowed
    // segment's own range is intersected with it, keeping its step.
    if (!Begin) {
      Begin = RangeBegin;
      End = RangeEnd;
    } else {
      if (!Step) {
        Begin =
            B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, Begin, RangeBegin);
      } else {
        // The first unit at or past RangeBegin of Begin, Begin + Step, ...
        // (all below 2^31: the sum cannot wrap).
        Value *Gap = B.CreateSub(
            RangeBegin,
            B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Begin, RangeBegin));
        Value *Steps = B.CreateUDiv(
            B.CreateAdd(Gap, B.CreateSub(Step, B.getInt32(1))), Step);
        Begin = B.CreateAdd(Begin, B.CreateMul(Steps, Step));
      }
      End = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, End, RangeEnd);
    }
  }
  // The range of each dimension's loop: [Lo, Hi), the whole dimension
  // where null. A box (a narrowed segment in a cube of any shape) is
  // intersected with the range of dimension 0 (step 1 then).
  Value *Lo[3] = {Begin, nullptr, nullptr}, *Hi[3] = {End, nullptr, nullptr};
  if (Box)
    for (unsigned D = 0; D < 3; ++D) {
      if (!Box->Begin[D])
        continue;
      assert((D != 0 || !Step) && "a box has no step");
      Lo[D] = Lo[D] ? B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, Lo[D],
                                              Box->Begin[D])
                    : Box->Begin[D];
      Hi[D] = Hi[D] ? B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Hi[D],
                                              Box->End[D])
                    : Box->End[D];
    }
  // No unit when a range is empty: the nest is skipped as a whole, and
  // each loop runs from its Lo at least once.
  BasicBlock *Skip = nullptr;
  Value *NonEmpty = nullptr;
  for (unsigned D = 0; D < 3; ++D)
    if (Lo[D]) {
      Value *C = B.CreateICmpULT(Lo[D], Hi[D]);
      NonEmpty = NonEmpty ? B.CreateAnd(NonEmpty, C) : C;
    }
  if (NonEmpty) {
    // A preheader of its own, which LoopVersioning needs for the twin.
    BasicBlock *PH = Cx.newBlock("unit.ph");
    Skip = Cx.newBlock("unit.skip");
    B.CreateCondBr(NonEmpty, PH, Skip);
    B.SetInsertPoint(PH);
  }
  AccessGroup = llvm::MDNode::getDistinct(Cx.Ctx, {});
  ScalarRMW = false;
  // One loop per dimension of size > 1, z outermost and x innermost unless
  // InnerDim says otherwise, so that the loop the vectoriser sees runs over
  // consecutive unit positions of one dimension with no division in the way.
  struct Level {
    unsigned Dim;
    llvm::PHINode *IV;
    BasicBlock *Body, *Latch, *Exit;
  };
  std::vector<Level> Levels;
  // z, y, x from the outside in, with InnerDim moved innermost (a dimension
  // along which the segment's indices are consecutive, AccessPattern.h).
  unsigned Inner = InnerDim < 3 && Cx.K.CubeDim[InnerDim] > 1 ? InnerDim : 0;
  int Order[3] = {2, 1, 0};
  if (Inner != 0)
    Order[0] = Inner == 2 ? 1 : 2, Order[1] = 0, Order[2] = int(Inner);
  for (int D : Order) {
    if (Cx.K.CubeDim[D] <= 1 && !(D == int(Inner) && Levels.empty())) {
      UnitXYZ[D] = B.getInt32(0);
      continue;
    }
    BasicBlock *Pre = B.GetInsertBlock();
    Level L{unsigned(D), nullptr, Cx.newBlock("unit"),
            Cx.newBlock("unit.latch"), Cx.newBlock("unit.end")};
    B.CreateBr(L.Body);
    B.SetInsertPoint(L.Body);
    L.IV = B.CreatePHI(Cx.I32, 2, std::string("unit.") + "xyz"[D]);
    L.IV->addIncoming(Lo[D] ? Lo[D] : B.getInt32(0), Pre);
    UnitXYZ[D] = L.IV;
    Levels.push_back(L);
  }
  uint32_t DX = Cx.K.CubeDim[0], DXY = Cx.K.CubeDim[0] * Cx.K.CubeDim[1];
  // Every unit index is below 2^31, so none of this wraps.
  Value *U = UnitXYZ[0];
  if (Cx.K.CubeDim[1] > 1)
    U = B.CreateAdd(U, B.CreateMul(UnitXYZ[1], B.getInt32(DX), "", true, true),
                    "", true, true);
  if (Cx.K.CubeDim[2] > 1)
    U = B.CreateAdd(U, B.CreateMul(UnitXYZ[2], B.getInt32(DXY), "", true, true),
                    "", true, true);
  if (llvm::isa<llvm::Instruction>(U))
    U->setName("u");
  Unit = U;
  UnitLatch = Levels.back().Latch;
  if (!Cold) // a fallback gets no twin without checks (LoopVersioning.h)
    InnerUnitHeaders.push_back(Levels.back().Body);
  if (Cx.Layout.HasFlags) {
    // Units that returned skip the rest of the kernel.
    BasicBlock *Work = Cx.newBlock("unit.active");
    B.CreateCondBr(unitFinished(U), UnitLatch, Work);
    B.SetInsertPoint(Work);
  }
  for (auto &Guard : Guards) {
    // Inside a guarded `if`: the units whose condition fails skip the body.
    BasicBlock *Pass = Cx.newBlock("unit.pass");
    B.CreateCondBr(Guard(nullptr), Pass, UnitLatch);
    B.SetInsertPoint(Pass);
  }
  Body();

  // The units of a segment are independent: vectorise without checks. No
  // llvm.loop.vectorize.enable: it vectorises no bench kernel's loop more
  // but makes LLVM print a warning to stderr for every unit loop it cannot
  // vectorise (atomics, libm calls), from inside a library.
  llvm::MDNode *Parallel = llvm::MDNode::get(
      Cx.Ctx, {llvm::MDString::get(Cx.Ctx, "llvm.loop.parallel_accesses"),
               AccessGroup});
  llvm::MDNode *Progress = llvm::MDNode::get(
      Cx.Ctx, {llvm::MDString::get(Cx.Ctx, "llvm.loop.mustprogress")});
  // No unrolling of a unit loop before the vectoriser has seen it: full
  // unrolling runs first and would turn short unit loops (matmul's 16-unit
  // rows) into straight-line scalar code with a branch per bounds check,
  // neither vectorised nor cheap to compile. The vectorised loop gets a
  // fresh loop ID (followup) that allows unrolling again: fully unrolling it
  // after vectorisation is what drops reduce_sum's all-false masked
  // iterations. docs/Lowering.md §13, fix 2, has the figures.
  llvm::MDNode *NoUnroll = llvm::MDNode::get(
      Cx.Ctx, {llvm::MDString::get(Cx.Ctx, "llvm.loop.unroll.disable")});
  llvm::MDNode *AfterVectorizing = llvm::MDNode::get(
      Cx.Ctx,
      {llvm::MDString::get(Cx.Ctx, "llvm.loop.vectorize.followup_vectorized"),
       Progress});
  llvm::MDNode *UnrollBy = llvm::MDNode::get(
      Cx.Ctx, {llvm::MDString::get(Cx.Ctx, "llvm.loop.unroll.count"),
               llvm::ConstantAsMetadata::get(B.getInt32(SerialUnrollCount))});
  for (auto It = Levels.rbegin(); It != Levels.rend(); ++It) {
    bool Serial = ScalarRMW && It == Levels.rbegin();
    if (!Cx.terminated())
      B.CreateBr(It->Latch);
    B.SetInsertPoint(It->Latch);
    // Units stay below 2^31 and Step < 2^31: unit + Step does not wrap
    // unsigned (it may pass 2^31 when stepping, so no nsw then).
    bool Stepped = Begin && It->Dim == 0 && Step;
    Value *Next = B.CreateAdd(It->IV, Stepped ? Step : B.getInt32(1), "",
                              true, !Stepped);
    It->IV->addIncoming(Next, It->Latch);
    Value *Limit =
        Hi[It->Dim] ? Hi[It->Dim] : B.getInt32(Cx.K.CubeDim[It->Dim]);
    auto *Br = B.CreateCondBr(B.CreateICmpULT(Next, Limit), It->Body, It->Exit);
    llvm::TempMDTuple Tmp = llvm::MDNode::getTemporary(Cx.Ctx, {});
    llvm::SmallVector<llvm::Metadata *, 6> Props = {
        Tmp.get(), Parallel, Progress, Serial ? UnrollBy : NoUnroll,
        AfterVectorizing};
    // A loop whose body holds a flattened `if` is vectorised whatever the
    // cost model's estimate: the flattening made its gathers unconditional
    // for that, and LLVM's cost for the ones it emulates (znver3) priced
    // cfd's flux loop scalar, 1.6x slower (docs/Lowering.md §11,
    // "Branch-free ifs"). The width stays LLVM's choice.
    if (FlattenedIf && !Serial && !Cold && It == Levels.rbegin())
      Props.push_back(llvm::MDNode::get(
          Cx.Ctx, {llvm::MDString::get(Cx.Ctx, "llvm.loop.vectorize.enable"),
                   llvm::ConstantAsMetadata::get(B.getTrue())}));
    if (Cold) // a fallback that (practically) never runs: kept scalar
      Props.push_back(llvm::MDNode::get(
          Cx.Ctx, {llvm::MDString::get(Cx.Ctx, "llvm.loop.vectorize.width"),
                   llvm::ConstantAsMetadata::get(B.getInt32(1))}));
    llvm::MDNode *LoopID = llvm::MDNode::getDistinct(Cx.Ctx, Props);
    LoopID->replaceOperandWith(0, LoopID);
    Br->setMetadata(llvm::LLVMContext::MD_loop, LoopID);
    B.SetInsertPoint(It->Exit);
  }
  if (Skip) {
    B.CreateBr(Skip);
    B.SetInsertPoint(Skip);
  }

  Unit = nullptr;
  UnitLatch = nullptr;
  AccessGroup = nullptr;
  ScalarRMW = false;
  FlattenedIf = false;
  UnitXYZ[0] = UnitXYZ[1] = UnitXYZ[2] = nullptr;
}

Value *UnitLoops::atUnit(Value *U, llvm::function_ref<Value *()> Emit) {
  Value *SavedUnit = Unit;
  Value *SavedXYZ[3] = {UnitXYZ[0], UnitXYZ[1], UnitXYZ[2]};
  Unit = U;
  UnitXYZ[0] = UnitXYZ[1] = UnitXYZ[2] = nullptr;
  Value *V = Emit();
  Unit = SavedUnit;
  std::copy(SavedXYZ, SavedXYZ + 3, UnitXYZ);
  return V;
}

void UnitLoops::exitWhenAllReturned(BasicBlock *Exit, const char *LiveName) {
  llvm::IRBuilder<> &B = Cx.B;
  if (!Cx.Layout.HasFlags)
    return;
  BasicBlock *LiveBB = Cx.newBlock(LiveName);
  B.CreateCondBr(B.CreateICmpEQ(firstActiveUnit(), B.getInt32(Cx.Units)), Exit,
                 LiveBB);
  B.SetInsertPoint(LiveBB);
}

Value *UnitLoops::emitBuiltin(const Operation &Op) {
  llvm::IRBuilder<> &B = Cx.B;
  auto C32 = [&](uint64_t V) { return B.getInt32(static_cast<uint32_t>(V)); };
  uint32_t D[3] = {Cx.K.CubeDim[0], Cx.K.CubeDim[1], Cx.K.CubeDim[2]};
  Value *U = Unit ? Unit : B.getInt32(0);
  auto UnitComp = [&](unsigned C) -> Value * {
    if (UnitXYZ[C]) // inside a unit loop: its induction variables
      return UnitXYZ[C];
    if (C == 0)
      return B.CreateURem(U, C32(D[0]));
    if (C == 1)
      return B.CreateURem(B.CreateUDiv(U, C32(D[0])), C32(D[1]));
    return B.CreateUDiv(U, C32(uint64_t(D[0]) * D[1]));
  };
  unsigned Comp = Op.Component;
  switch (Op.Kind) {
  case OpKind::UnitPos:
    return Comp == 0 ? U : UnitComp(Comp - 1);
  case OpKind::CubePos:
    return Comp == 0 ? CubeLinear : CubePos[Comp - 1];
  case OpKind::CubeDim:
    return Comp == 0 ? C32(uint64_t(D[0]) * D[1] * D[2]) : C32(D[Comp - 1]);
  case OpKind::CubeCount:
    if (Comp != 0)
      return CubeCount[Comp - 1];
    return B.CreateMul(B.CreateMul(CubeCount[0], CubeCount[1]), CubeCount[2]);
  case OpKind::AbsolutePos: {
    // A launch has cube_count.d * cube_dim.d <= 2^32 and at most 2^32 units
    // (docs/LangRef.md §2), so no position wraps. Inside an interchanged
    // loop's rounds nuw says so, and an index zext(absolute_pos + k) becomes
    // a 64-bit sum, a pointer the unit loop steps (§13, fix 6). (Only there:
    // elsewhere nuw stops O3 fully unrolling some vectorised unit loops, and
    // reduce_sum runs slower.) RowX and RowX * RowY may wrap to 0 (a
    // grid of exactly 2^32 units in x, or in x and y), but then the y (and
    // z) positions are 0, and so are the products.
    bool NW = NoWrapPositions;
    auto Abs = [&](unsigned C) {
      return B.CreateAdd(B.CreateMul(CubePos[C], C32(D[C]), "", NW),
                         UnitComp(C), "", NW);
    };
    if (Comp != 0)
      return Abs(Comp - 1);
    Value *RowX = B.CreateMul(CubeCount[0], C32(D[0]));
    Value *RowY = B.CreateMul(CubeCount[1], C32(D[1]));
    Value *A0 = Abs(0);
    Value *A1 = Abs(1);
    Value *Lin = B.CreateAdd(A0, B.CreateMul(A1, RowX, "", NW), "", NW);
    Value *A2 = Abs(2);
    Value *Plane = B.CreateMul(RowX, RowY);
    return B.CreateAdd(Lin, B.CreateMul(A2, Plane, "", NW), "", NW);
  }
  case OpKind::ClusterDim: {
    const auto &CD = Cx.K.ClusterDim;
    return Comp == 0 ? C32(Cx.K.cubesPerCluster()) : C32(CD[Comp - 1]);
  }
  case OpKind::CubePosCluster: {
    // The cube's rank in its cluster: x + y * dim.x + z * dim.x * dim.y
    // (docs/LangRef.md §15). The sizes are constants, so these fold.
    const auto &CD = Cx.K.ClusterDim;
    auto Rank = [&](unsigned C) -> Value * {
      return CD[C] == 1 ? C32(0) : B.CreateURem(CubePos[C], C32(CD[C]));
    };
    if (Comp != 0)
      return Rank(Comp - 1);
    Value *Lin = B.CreateAdd(Rank(0), B.CreateMul(Rank(1), C32(CD[0])));
    return B.CreateAdd(Lin,
                       B.CreateMul(Rank(2), C32(uint64_t(CD[0]) * CD[1])));
  }
  case OpKind::ClusterPos: {
    // Which cluster: cube_pos / cluster_dim in each dimension, linearised
    // over the clusters of the grid (cube_count / cluster_dim).
    const auto &CD = Cx.K.ClusterDim;
    auto Along = [&](unsigned C) -> Value * {
      return CD[C] == 1 ? CubePos[C] : B.CreateUDiv(CubePos[C], C32(CD[C]));
    };
    if (Comp != 0)
      return Along(Comp - 1);
    Value *RowX = B.CreateUDiv(CubeCount[0], C32(CD[0]));
    Value *RowY = B.CreateUDiv(CubeCount[1], C32(CD[1]));
    Value *Lin = B.CreateAdd(Along(0), B.CreateMul(Along(1), RowX));
    return B.CreateAdd(Lin, B.CreateMul(Along(2), B.CreateMul(RowX, RowY)));
  }
  case OpKind::PlaneDim:
    return C32(Cx.PlaneDim);
  case OpKind::UnitPosPlane:
    return B.CreateURem(U, C32(Cx.PlaneDim));
  case OpKind::PlanePos:
    return B.CreateUDiv(U, C32(Cx.PlaneDim));
  default:
    return nullptr;
  }
}
