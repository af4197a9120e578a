//===- Lowering.cpp - A verified Kiln kernel to an LLVM cube function ----===//
//
// The driver: runs the lower stage's steps in the pipeline's order
// (kiln/CPU/Pipeline.h), builds the cube function of CubeABI.h
// (argument table, cube loop, cube_pos decomposition) around the emitters of
// LoweringImpl.h, versions the unit loops, verifies the result and fills the
// CubeMetadata.
//
//===----------------------------------------------------------------------===//

#include "AtomicPrivatization.h"
#include "BlendScratchStores.h"
#include "ExpandUniformLoads.h"
#include "ForwardVars.h"
#include "LoweringImpl.h"

#include "kiln/CPU/CubeABI.h"
#include "kiln/IR/Printer.h"

#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace kiln;
using namespace kiln::lowering;

LoweringContext::LoweringContext(const IRKernel &K, const CpuVariant &Variant,
                                 const DeviceLimits &Limits,
                                 llvm::LLVMContext &Ctx)
    : K(K), Variant(Variant), Limits(Limits), Ctx(Ctx), B(Ctx) {
  I1 = llvm::Type::getInt1Ty(Ctx);
  I8 = llvm::Type::getInt8Ty(Ctx);
  I32 = llvm::Type::getInt32Ty(Ctx);
  I64 = llvm::Type::getInt64Ty(Ctx);
  Ptr = llvm::PointerType::getUnqual(Ctx);
}

void LoweringContext::fail(SourceLoc Loc, const llvm::Twine &Msg) {
  if (Err)
    return;
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  OS << "kernel '" << K.Name << "'";
  if (Loc.isValid())
    OS << " at " << Loc.Line << ":" << Loc.Col;
  OS << ": " << Msg;
  Err = llvm::createStringError(Text);
}

void LoweringContext::emitStopPoll() {
  llvm::LoadInst *Flag =
      B.CreateAlignedLoad(I32, StopFlag, llvm::Align(4), "stop");
  Flag->setAtomic(llvm::AtomicOrdering::Monotonic);
  llvm::BasicBlock *Go = newBlock("go");
  B.CreateCondBr(B.CreateICmpNE(Flag, B.getInt32(0)), StopExit, Go,
                 llvm::MDBuilder(Ctx).createUnlikelyBranchWeights());
  B.SetInsertPoint(Go);
}

llvm::BasicBlock *LoweringContext::newBlock(const llvm::Twine &Name) {
  return llvm::BasicBlock::Create(Ctx, Name, F);
}

llvm::AllocaInst *LoweringContext::entryAlloca(llvm::Type *T,
                                               const llvm::Twine &Name) {
  llvm::IRBuilder<> AB(EntryBB, EntryBB->begin());
  return AB.CreateAlloca(T, nullptr, Name);
}

KernelLowering::KernelLowering(const IRKernel &K, const CpuVariant &Variant,
                               const DeviceLimits &Limits,
                               llvm::LLVMContext &Ctx)
    : Cx(K, Variant, Limits, Ctx), Types(Cx), Scopes(Cx),
      Pos(Cx, Scopes, Memory), Values(Cx, Types, Pos, Scalar, Memory),
      Scalar(Cx, Types, Values, Pos),
      Memory(Cx, Types, Scopes, Pos, Values, Scalar),
      Plane(Cx, Types, Pos, Values, Scalar, Memory),
      Barriers(Cx, Pos, Values, Memory),
      Cmma(Cx, Types, Scopes, Pos, Values, Scalar, Memory),
      Control(Cx, Pos, Values, Scalar, Memory, Plane, Barriers, Cmma) {}

llvm::Error KernelLowering::segment() {
  const IRKernel &K = Cx.K;
  uint64_t UnitCount = K.unitsPerCube();
  if (UnitCount == 0 || UnitCount > (uint64_t(1) << 31))
    return llvm::createStringError("kernel '" + K.Name +
                                   "' has an invalid cube_dim");
  Cx.Units = static_cast<uint32_t>(UnitCount);
  Cx.PlaneDim = K.PlaneDim ? *K.PlaneDim : Cx.Limits.PlaneDim;
  if (Cx.PlaneDim == 0)
    return llvm::createStringError("plane_dim must be at least 1");

  size_t N = K.Values.size();
  for (ValueId P : K.Params)
    if (P >= N)
      return llvm::createStringError("kernel '" + K.Name +
                                     "' has a parameter that names no value");
  Cx.Seg.emplace(K, *Uniformity, Cx.PlaneDim);
  return llvm::Error::success();
}

llvm::Error KernelLowering::runStep(PipelineStepId Id) {
  const IRKernel &K = Cx.K;
  switch (Id) {
  case PipelineStepId::Uniformity:
    Uniformity.emplace(K);
    Cx.Uniformity = &*Uniformity;
    return llvm::Error::success();
  case PipelineStepId::Segmentation:
    return segment();
  case PipelineStepId::Liveness:
    Cx.Live = analyzeLiveness(K, *Cx.Seg);
    return llvm::Error::success();
  case PipelineStepId::ScratchLayout: {
    auto L = layoutScratch(K, Cx.Units, Cx.PlaneDim,
                           Cx.Seg->needsReturnFlags(), Cx.Live);
    if (!L)
      return L.takeError();
    Cx.Layout = std::move(*L);
    return llvm::Error::success();
  }
  case PipelineStepId::AtomicPrivatization:
    Memory.Private = findPrivatizableBuffers(K, Cx.Variant);
    return llvm::Error::success();
  case PipelineStepId::Emission:
    if (llvm::Error E = emitEntry())
      return E;
    emitCubeLoop();
    if (Cx.Err)
      return std::move(Cx.Err);
    return llvm::Error::success();
  case PipelineStepId::LoopVersioning:
    versionUnitLoops(*Cx.F, Memory.Guards, Pos.InnerUnitHeaders);
    return llvm::Error::success();
  default:
    llvm_unreachable("not a step of the lower stage");
  }
}

void KernelLowering::print(llvm::raw_ostream &OS) const {
  if (Cx.M)
    Cx.M->print(OS, nullptr);
  else
    OS << printKernel(Cx.K);
}

llvm::Error KernelLowering::emitEntry() {
  const IRKernel &K = Cx.K;
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Type *Ptr = Cx.Ptr, *I8 = Cx.I8, *I32 = Cx.I32, *I64 = Cx.I64;
  Cx.M = std::make_unique<llvm::Module>("kiln." + K.Name, Cx.Ctx);
  auto *FT = llvm::FunctionType::get(llvm::Type::getVoidTy(Cx.Ctx),
                                     {Ptr, I32, I32, Ptr}, false);
  llvm::Function *F =
      llvm::Function::Create(FT, llvm::GlobalValue::ExternalLinkage,
                             cubeFunctionPrefix() + K.Name, Cx.M.get());
  Cx.F = F;
  F->setDoesNotThrow();
  F->addParamAttr(0, llvm::Attribute::NoAlias);
  F->addParamAttr(0, llvm::Attribute::NoCapture);
  F->addParamAttr(0, llvm::Attribute::ReadOnly);
  F->addParamAttr(3, llvm::Attribute::NoAlias);
  F->addParamAttr(3, llvm::Attribute::NoCapture);
  F->addParamAttr(3,
                  llvm::Attribute::getWithAlignment(Cx.Ctx, llvm::Align(64)));
  // No library calls for overlapping copies: LoopIdiomRecognize would turn
  // a unit loop moving a block within shared memory into a call of memmove
  // for every cube. Copies and fills stay allowed: ExpandBlockCopies.h
  // makes them vector loops after optimisation.
  F->addFnAttr("no-builtin-memmove");
  // The area only this cube's thread uses (BlendScratchStores.h).
  if (Cx.Layout.Bytes)
    F->addFnAttr(ScratchBytesAttr, std::to_string(Cx.Layout.Bytes));
  llvm::Argument *LaunchArg = F->getArg(0);
  Memory.Scratch = F->getArg(3);
  LaunchArg->setName("args");
  F->getArg(1)->setName("cube_begin");
  F->getArg(2)->setName("cube_end");
  Memory.Scratch->setName("scratch");

  Scopes.setup();

  Cx.EntryBB = Cx.newBlock("entry");
  B.SetInsertPoint(Cx.EntryBB);
  auto *ArgTable =
      B.CreateAlignedLoad(Ptr, LaunchArg, llvm::Align(8), "argtable");
  for (unsigned D = 0; D < 3; ++D) {
    llvm::Value *P = B.CreateConstInBoundsGEP1_64(I8, LaunchArg, 8 + 4 * D);
    llvm::Value *C = B.CreateAlignedLoad(I32, P, llvm::Align(4));
    // The ABI promises >= 1; a zero must not divide by zero below.
    Pos.CubeCount[D] =
        B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, C, B.getInt32(1),
                                nullptr, std::string("cube_count.") + "xyz"[D]);
  }
  // The stop flag (CubeABI.h): a caller that gives none gets a constant
  // zero, so that the polls need no null test.
  {
    llvm::Value *Given = B.CreateAlignedLoad(
        Ptr, B.CreateConstInBoundsGEP1_64(I8, LaunchArg, 24), llvm::Align(8),
        "stop.given");
    auto *Never = new llvm::GlobalVariable(
        *Cx.M, I32, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
        B.getInt32(0), "kiln.never_stop");
    Never->setAlignment(llvm::Align(4));
    Cx.StopFlag = B.CreateSelect(
        B.CreateICmpEQ(Given, llvm::ConstantPointerNull::get(
                                  llvm::PointerType::getUnqual(Cx.Ctx))),
        Never, Given, "stop.flag");
    llvm::BasicBlock *Here = B.GetInsertBlock();
    Cx.StopExit = Cx.newBlock("stopped");
    B.SetInsertPoint(Cx.StopExit);
    B.CreateRetVoid();
    B.SetInsertPoint(Here);
  }
  // Where faults go (CubeABI.h), only for kernels that can fault.
  bool HasBarriers = false;
  for (const ValueInfo &VI : K.Values)
    HasBarriers |= VI.IsBarrier;
  if (HasBarriers)
    Barriers.FaultSlot =
        B.CreateAlignedLoad(Ptr, B.CreateConstInBoundsGEP1_64(I8, LaunchArg, 32),
                            llvm::Align(8), "fault");
  // The tensor table (CubeABI.h), only for kernels that read it.
  bool ReadsTensors = false;
  for (const ParamTensorUse &U : findTensorUses(K))
    ReadsTensors |= U.ReadsTensorInfo;
  if (ReadsTensors)
    Memory.TensorTable = B.CreateAlignedLoad(
        Ptr, B.CreateConstInBoundsGEP1_64(I8, LaunchArg, 40), llvm::Align(8),
        "tensors");
  for (size_t I = 0; I < K.Params.size(); ++I) {
    ValueId P = K.Params[I];
    const ValueInfo &VI = K.value(P);
    llvm::Value *Slot = B.CreateConstInBoundsGEP1_64(I8, ArgTable, 16 * I);
    auto *Data =
        B.CreateAlignedLoad(Ptr, Slot, llvm::Align(8), VI.Name + ".data");
    if (VI.Kind == ValueKind::Buffer) {
      llvm::Value *CountP = B.CreateConstInBoundsGEP1_64(I8, Slot, 8);
      Memory.BufCount[P] =
          B.CreateAlignedLoad(I64, CountP, llvm::Align(8), VI.Name + ".count");
      if (Cx.Variant.BufferAlignment > 1 &&
          llvm::isPowerOf2_32(Cx.Variant.BufferAlignment))
        B.CreateAlignmentAssumption(Cx.M->getDataLayout(), Data,
                                    Cx.Variant.BufferAlignment);
      Memory.BufBase[P] = Data;
    } else if (VI.Kind == ValueKind::Plain) {
      unsigned Al = byteSize(VI.Ty.elementKind());
      llvm::Value *V =
          B.CreateAlignedLoad(Types.memType(VI.Ty), Data, llvm::Align(Al));
      llvm::Value *&CV = Values.CubeValues[P];
      CV = Types.fromMem(V, VI.Ty);
      CV->setName(VI.Name);
    } else {
      return llvm::createStringError("kernel '" + K.Name + "': parameter '%" +
                                     VI.Name +
                                     "' is neither a buffer nor a value");
    }
  }
  // Privatisable buffers (the atomic-privatization step; CubeABI.h): bit k
  // of LaunchArgs::Reserved, and then the private copy's address in the
  // scratch area. The address is loaded from the launch arguments when the
  // bit is clear, so that a caller whose scratch area has no table is never
  // read past.
  llvm::Value *Reserved = nullptr;
  unsigned Bit = 0;
  for (size_t I = 0; I < K.Params.size(); ++I) {
    if (Memory.Private[I] == PrivateAtomic::None)
      continue;
    ValueId P = K.Params[I];
    const std::string &Name = K.value(P).Name;
    if (!Reserved)
      Reserved = B.CreateAlignedLoad(
          I32, B.CreateConstInBoundsGEP1_64(I8, LaunchArg, 20), llvm::Align(4),
          "privatised");
    llvm::Value *On = B.CreateICmpNE(
        B.CreateAnd(Reserved, B.getInt32(1u << Bit)), B.getInt32(0),
        Name + ".private");
    llvm::Value *Entry = Memory.scratchPtr(
        privateCopyTableOffset(Cx.Layout.Bytes) + 8 * uint64_t(Bit));
    llvm::Value *From = B.CreateSelect(On, Entry, LaunchArg);
    Memory.PrivOn[P] = On;
    Memory.PrivBase[P] =
        B.CreateAlignedLoad(Ptr, From, llvm::Align(8), Name + ".copy");
    ++Bit;
  }
  return llvm::Error::success();
}

void KernelLowering::emitCubeLoop() {
  llvm::IRBuilder<> &B = Cx.B;
  llvm::Argument *Begin = Cx.F->getArg(1);
  llvm::Argument *End = Cx.F->getArg(2);
  llvm::BasicBlock *Entry = Cx.newBlock("cube.first");
  llvm::BasicBlock *CubeBody = Cx.newBlock("cube");
  llvm::BasicBlock *Exit = Cx.newBlock("exit");
  B.CreateCondBr(B.CreateICmpULT(Begin, End), Entry, Exit);
  // The order in which a range's cubes are walked: the grid dimension the
  // kernel's unit loops run innermost (AccessPatterns::innermostDim: the one
  // along which most memory indices move by one element) varies fastest, so
  // a thread's next cube continues the rows its last cube touched (a GPU
  // mapping whose x walks the rows of a row-major matrix walks y first);
  // then the others, x before y before z. Cubes are unordered (no barrier
  // between them), so any order is one the kernel must allow.
  unsigned Walk[3] = {0, 1, 2};
  {
    std::vector<const Operation *> Top;
    for (const Operation &Op : Cx.K.Body.Ops)
      Top.push_back(&Op);
    unsigned Fastest = Cx.Seg->patterns().innermostDim(Top);
    for (unsigned I = Fastest; I > 0; --I)
      Walk[I] = Walk[I - 1];
    Walk[0] = Fastest;
  }
  // cube_pos: decomposed from the range's first cube once (the grid has
  // cubes: the divisions are safe), then counted along with the linear
  // position in walk order, instead of two divisions and two remainders for
  // every cube; unused counters fold away.
  B.SetInsertPoint(Entry);
  llvm::Value *FirstPos[3];
  FirstPos[Walk[0]] = B.CreateURem(Begin, Pos.CubeCount[Walk[0]]);
  llvm::Value *Q0 = B.CreateUDiv(Begin, Pos.CubeCount[Walk[0]]);
  FirstPos[Walk[1]] = B.CreateURem(Q0, Pos.CubeCount[Walk[1]]);
  FirstPos[Walk[2]] = B.CreateUDiv(Q0, Pos.CubeCount[Walk[1]]);
  B.CreateBr(CubeBody);
  B.SetInsertPoint(CubeBody);
  llvm::PHINode *C = B.CreatePHI(Cx.I32, 2, "c");
  C->addIncoming(Begin, Entry);
  static const char *PosNames[] = {"cube_pos.x", "cube_pos.y", "cube_pos.z"};
  llvm::PHINode *PosPhi[3];
  for (unsigned D = 0; D < 3; ++D) {
    PosPhi[D] = B.CreatePHI(Cx.I32, 2, PosNames[D]);
    PosPhi[D]->addIncoming(FirstPos[D], Entry);
    Pos.CubePos[D] = PosPhi[D];
  }
  // The linear cube_pos counts x fastest whatever the walk.
  Pos.CubeLinear =
      Walk[0] == 0
          ? static_cast<llvm::Value *>(C)
          : B.CreateAdd(PosPhi[0],
                        B.CreateMul(Pos.CubeCount[0],
                                    B.CreateAdd(PosPhi[1],
                                                B.CreateMul(Pos.CubeCount[1],
                                                            PosPhi[2]))),
                        "cube_pos.linear");
  if (Cx.Layout.HasFlags)
    B.CreateMemSet(Memory.scratchPtr(Cx.Layout.FlagsOffset), B.getInt8(0),
                   Cx.Units, llvm::Align(64));

  // A cube where the kernel's guard holds for no unit has nothing to do;
  // where none of the cubes left in its row of the walk has either, the
  // walk goes on from the row's last cube (RowEnd).
  llvm::BasicBlock *Latch = nullptr, *RowEnd = nullptr;
  if (const UnitBoxCondition *Guard = Cx.Seg->cubeGuardBox()) {
    Latch = Cx.newBlock("cube.latch");
    RowEnd = Cx.newBlock("cube.row.end");
    Control.skipCubeOutside(*Guard, Latch, RowEnd, Walk[0]);
  }

  Control.lowerCubeBlock(Cx.K.Body);

  if (!Latch)
    Latch = Cx.newBlock("cube.latch");
  else
    Latch->moveAfter(&Cx.F->back());
  if (!Cx.terminated())
    B.CreateBr(Latch);
  // The cube the walk goes on from: this one, or the last of its row.
  llvm::Value *At = C;
  llvm::Value *AtPos[3] = {PosPhi[0], PosPhi[1], PosPhi[2]};
  if (RowEnd && RowEnd->hasNPredecessorsOrMore(1)) {
    B.SetInsertPoint(RowEnd);
    llvm::Value *Last = B.CreateSub(Pos.CubeCount[Walk[0]], B.getInt32(1));
    llvm::Value *Ahead = B.CreateAdd(C, B.CreateSub(Last, PosPhi[Walk[0]]),
                                     "c.row.end");
    B.CreateBr(Latch);
    RowEnd->moveBefore(Latch);
    B.SetInsertPoint(Latch, Latch->begin());
    llvm::PHINode *AtPhi = B.CreatePHI(Cx.I32, 2, "c.at");
    llvm::PHINode *PosAt = B.CreatePHI(Cx.I32, 2, "cube_pos.at");
    for (llvm::BasicBlock *Pred : llvm::predecessors(Latch)) {
      bool FromRowEnd = Pred == RowEnd;
      AtPhi->addIncoming(FromRowEnd ? Ahead : C, Pred);
      PosAt->addIncoming(FromRowEnd ? Last : PosPhi[Walk[0]], Pred);
    }
    At = AtPhi;
    AtPos[Walk[0]] = PosAt;
  } else if (RowEnd) {
    RowEnd->eraseFromParent();
  }
  B.SetInsertPoint(Latch);
  // A cube without loops still stops the range at its end.
  Cx.emitStopPoll();
  Latch = B.GetInsertBlock();
  llvm::Value *Next = B.CreateAdd(At, B.getInt32(1), "c.next");
  C->addIncoming(Next, Latch);
  // The next cube's position: one step along the walk's first dimension,
  // carried into the second and then the third at the grid's edge (the
  // third never wraps: the range ends inside the grid).
  llvm::Value *P1 = B.CreateAdd(AtPos[Walk[0]], B.getInt32(1));
  llvm::Value *Wrap1 = B.CreateICmpEQ(P1, Pos.CubeCount[Walk[0]]);
  llvm::Value *P2 =
      B.CreateAdd(AtPos[Walk[1]], B.CreateZExt(Wrap1, Cx.I32));
  llvm::Value *Wrap2 = B.CreateICmpEQ(P2, Pos.CubeCount[Walk[1]]);
  PosPhi[Walk[0]]->addIncoming(B.CreateSelect(Wrap1, B.getInt32(0), P1),
                               Latch);
  PosPhi[Walk[1]]->addIncoming(B.CreateSelect(Wrap2, B.getInt32(0), P2),
                               Latch);
  PosPhi[Walk[2]]->addIncoming(
      B.CreateAdd(AtPos[Walk[2]], B.CreateZExt(Wrap2, Cx.I32)), Latch);
  B.CreateCondBr(B.CreateICmpULT(Next, End), CubeBody, Exit);
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
  Exit->moveAfter(&Cx.F->back());
  Cx.StopExit->moveAfter(Exit);
}

llvm::Expected<LoweredModule> KernelLowering::finish() {
  const IRKernel &K = Cx.K;
  std::string Problems;
  llvm::raw_string_ostream OS(Problems);
  if (llvm::verifyModule(*Cx.M, &OS))
    return llvm::createStringError("internal error: lowering kernel '" +
                                   K.Name +
                                   "' produced invalid LLVM IR: " + Problems);
  LoweredModule Out;
  Out.Module = std::move(Cx.M);
  CubeMetadata &MD = Out.Metadata;
  MD.KernelName = K.Name;
  MD.Symbol = cubeFunctionPrefix() + K.Name;
  MD.CubeDim = K.CubeDim;
  MD.PlaneDim = Cx.PlaneDim;
  MD.ClusterDim = K.ClusterDim;
  MD.UsesDebugPrint = Cx.UsesDebugPrint;
  MD.ScratchBytes = Cx.Layout.Bytes;
  std::vector<ParamTensorUse> Uses = findTensorUses(K);
  for (ValueId P : K.Params) {
    const ValueInfo &VI = K.value(P);
    ParamMetadata PM;
    PM.Name = VI.Name;
    PM.IsBuffer = VI.Kind == ValueKind::Buffer;
    PM.Ty = VI.Ty;
    PM.Access = VI.Access;
    if (MD.Params.size() < Memory.Private.size())
      PM.Private = Memory.Private[MD.Params.size()];
    PM.IsTensorMap = VI.IsTensorMap;
    PM.IsIm2col = VI.IsIm2col;
    if (MD.Params.size() < Uses.size()) {
      PM.ReadsTensorInfo = Uses[MD.Params.size()].ReadsTensorInfo;
      PM.TensorMapRank = Uses[MD.Params.size()].MapRank;
    }
    MD.Params.push_back(std::move(PM));
  }
  return Out;
}

llvm::Expected<LoweredModule> kiln::lowerKernel(const IRKernel &K,
                                                const CpuVariant &Variant,
                                                const DeviceLimits &Limits,
                                                llvm::LLVMContext &Ctx,
                                                const StepDumps *Dumps) {
  // The lower stage of the pipeline, in its order. The first two steps may
  // replace the kernel; the lowering is built on the one they leave.
  std::optional<IRKernel> Rewritten;
  auto Current = [&]() -> const IRKernel & {
    return Rewritten ? *Rewritten : K;
  };
  std::optional<KernelLowering> L;
  for (const PipelineStep &S : cpuPipeline()) {
    if (S.Stage != PipelineStage::Lower)
      continue;
    if (S.Id == PipelineStepId::ExpandUniformLoads ||
        S.Id == PipelineStepId::ForwardVars) {
      std::optional<IRKernel> Next =
          S.Id == PipelineStepId::ExpandUniformLoads
              ? lowering::expandUniformLoads(Current())
              : lowering::forwardVars(Current());
      if (Next)
        Rewritten = std::move(Next);
    } else {
      if (!L)
        L.emplace(Current(), Variant, Limits, Ctx);
      if (llvm::Error E = L->runStep(S.Id))
        return E;
    }
    if (Dumps)
      Dumps->dump(S.Id, [&](llvm::raw_ostream &OS) {
        if (L)
          L->print(OS);
        else
          OS << printKernel(Current());
      });
  }
  return L->finish();
}
