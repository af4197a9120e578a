//===- Lowering.cpp - Lower a verified Kiln kernel to an LLVM cube function
//-===//
//
// The driver: builds the cube function of CubeABI.h (argument table, cube
// loop, cube_pos decomposition), sets up alias scopes, runs the analysis and
// the emitters, verifies the result and fills the CubeMetadata.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "kiln/CPU/CubeABI.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::lowering;

KernelLowering::KernelLowering(const Kernel &K, const CpuVariant &Variant,
                               const DeviceLimits &Limits,
                               llvm::LLVMContext &Ctx)
    : K(K), Variant(Variant), Limits(Limits), Ctx(Ctx), B(Ctx), Uniformity(K) {
  I1 = llvm::Type::getInt1Ty(Ctx);
  I8 = llvm::Type::getInt8Ty(Ctx);
  I32 = llvm::Type::getInt32Ty(Ctx);
  I64 = llvm::Type::getInt64Ty(Ctx);
  Ptr = llvm::PointerType::getUnqual(Ctx);
}

void KernelLowering::fail(SourceLoc Loc, const llvm::Twine &Msg) {
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

llvm::BasicBlock *KernelLowering::newBlock(const llvm::Twine &Name) {
  return llvm::BasicBlock::Create(Ctx, Name, F);
}

llvm::AllocaInst *KernelLowering::entryAlloca(llvm::Type *T,
                                              const llvm::Twine &Name) {
  llvm::IRBuilder<> AB(EntryBB, EntryBB->begin());
  return AB.CreateAlloca(T, nullptr, Name);
}

void KernelLowering::define(ValueId Id, llvm::Value *V) {
  if (!V)
    return;
  SegValues[Id] = V;
  if (Live[Id].NeedsSlot)
    storeSlot(Id, Unit, V);
}

llvm::Value *KernelLowering::value(const Operand &O, llvm::Value *AtUnit) {
  if (O.isLiteral())
    return literal(O.Lit);
  ValueId Id = O.Value;
  if (Id >= K.Values.size()) {
    fail(O.Loc, "operand names no value");
    return llvm::PoisonValue::get(I32);
  }
  if (!AtUnit) {
    auto It = SegValues.find(Id);
    if (It != SegValues.end())
      return It->second;
  }
  auto C = CubeValues.find(Id);
  if (C != CubeValues.end())
    return C->second;
  llvm::Value *U = AtUnit ? AtUnit : Unit;
  if (Live[Id].NeedsSlot && U)
    return loadSlot(Id, U);
  if (const Operation *Def = Live[Id].Remat) {
    // Recompute for unit U (unit 0 at cube level when no unit is given).
    llvm::Value *SavedUnit = Unit;
    llvm::Value *SavedXYZ[3] = {UnitXYZ[0], UnitXYZ[1], UnitXYZ[2]};
    if (AtUnit && AtUnit != Unit) {
      Unit = AtUnit;
      UnitXYZ[0] = UnitXYZ[1] = UnitXYZ[2] = nullptr;
    }
    llvm::Value *V = lowerValueOp(*Def);
    Unit = SavedUnit;
    std::copy(SavedXYZ, SavedXYZ + 3, UnitXYZ);
    return V;
  }
  fail(O.Loc,
       "value '%" + K.value(Id).Name + "' is used where it is not available");
  return llvm::PoisonValue::get(valueType(K.value(Id).Ty));
}

void KernelLowering::setupAliasScopes() {
  // docs/Design.md §10.3: without scopes the vectoriser adds runtime
  // overlap checks, and loads of shared arrays are not moved past stores
  // to per-unit vars.
  llvm::MDBuilder MDB(Ctx);
  llvm::MDNode *Domain = MDB.createAnonymousAliasScopeDomain("kiln");
  std::vector<std::pair<ValueId, llvm::MDNode *>> Scopes;
  // In the MayAlias variant the buffers share one scope: they may overlap
  // each other, but never scratch memory.
  llvm::MDNode *Buffers = Variant.MayAlias
                              ? MDB.createAnonymousAliasScope(Domain, "buffers")
                              : nullptr;
  for (ValueId P : K.Params) {
    const ValueInfo &VI = K.value(P);
    if (VI.Kind != ValueKind::Buffer)
      continue;
    llvm::MDNode *S = Buffers;
    if (!S)
      S = MDB.createAnonymousAliasScope(Domain, VI.Name);
    Scopes.push_back({P, S});
  }
  for (ValueId Id = 0; Id < K.Values.size(); ++Id) {
    const ValueInfo &VI = K.value(Id);
    bool InScratch =
        VI.Kind == ValueKind::Shared || VI.Kind == ValueKind::Local ||
        (VI.Kind == ValueKind::Var && Layout.inScratch(Id));
    if (InScratch)
      Scopes.push_back({Id, MDB.createAnonymousAliasScope(Domain, VI.Name)});
  }
  Scopes.push_back(
      {SlotScopeKey, MDB.createAnonymousAliasScope(Domain, "slots")});
  Scopes.push_back(
      {FlagScopeKey, MDB.createAnonymousAliasScope(Domain, "returned")});
  for (auto &[Key, S] : Scopes) {
    ScopeOf[Key] = llvm::MDNode::get(Ctx, {S});
    llvm::SetVector<llvm::Metadata *> Others;
    for (auto &[Q, T] : Scopes)
      if (T != S)
        Others.insert(T);
    NoAliasOf[Key] = llvm::MDNode::get(Ctx, Others.getArrayRef());
  }
}

void KernelLowering::tagScope(llvm::Instruction *I, ValueId Key) {
  if (llvm::MDNode *S = ScopeOf.lookup(Key)) {
    I->setMetadata(llvm::LLVMContext::MD_alias_scope, S);
    I->setMetadata(llvm::LLVMContext::MD_noalias, NoAliasOf.lookup(Key));
  }
}

llvm::Expected<LoweredModule> KernelLowering::run() {
  uint64_t UnitCount = K.unitsPerCube();
  if (UnitCount == 0 || UnitCount > (uint64_t(1) << 31))
    return llvm::createStringError("kernel '" + K.Name +
                                   "' has an invalid cube_dim");
  Units = static_cast<uint32_t>(UnitCount);
  PlaneDim = K.PlaneDim ? *K.PlaneDim : Limits.PlaneDim;
  if (PlaneDim == 0)
    return llvm::createStringError("plane_dim must be at least 1");

  size_t N = K.Values.size();
  for (ValueId P : K.Params)
    if (P >= N)
      return llvm::createStringError("kernel '" + K.Name +
                                     "' has a parameter that names no value");
  Seg.emplace(K, Uniformity);
  Live = analyzeLiveness(K, *Seg);
  auto L = layoutScratch(K, Units, Seg->needsReturnFlags(), Live);
  if (!L)
    return L.takeError();
  Layout = std::move(*L);

  M = std::make_unique<llvm::Module>("kiln." + K.Name, Ctx);
  auto *FT = llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx),
                                     {Ptr, I32, I32, Ptr}, false);
  F = llvm::Function::Create(FT, llvm::GlobalValue::ExternalLinkage,
                             cubeFunctionPrefix() + K.Name, M.get());
  F->setDoesNotThrow();
  F->addParamAttr(0, llvm::Attribute::NoAlias);
  F->addParamAttr(0, llvm::Attribute::NoCapture);
  F->addParamAttr(0, llvm::Attribute::ReadOnly);
  F->addParamAttr(3, llvm::Attribute::NoAlias);
  F->addParamAttr(3, llvm::Attribute::NoCapture);
  F->addParamAttr(3, llvm::Attribute::getWithAlignment(Ctx, llvm::Align(64)));
  llvm::Argument *LaunchArg = F->getArg(0);
  llvm::Argument *Begin = F->getArg(1);
  llvm::Argument *End = F->getArg(2);
  Scratch = F->getArg(3);
  LaunchArg->setName("args");
  Begin->setName("cube_begin");
  End->setName("cube_end");
  Scratch->setName("scratch");

  setupAliasScopes();

  EntryBB = newBlock("entry");
  B.SetInsertPoint(EntryBB);
  auto *ArgTable =
      B.CreateAlignedLoad(Ptr, LaunchArg, llvm::Align(8), "argtable");
  for (unsigned D = 0; D < 3; ++D) {
    llvm::Value *P = B.CreateConstInBoundsGEP1_64(I8, LaunchArg, 8 + 4 * D);
    llvm::Value *C = B.CreateAlignedLoad(I32, P, llvm::Align(4));
    // The ABI promises >= 1; a zero must not divide by zero below.
    CubeCount[D] =
        B.CreateBinaryIntrinsic(llvm::Intrinsic::umax, C, B.getInt32(1),
                                nullptr, std::string("cube_count.") + "xyz"[D]);
  }
  for (size_t I = 0; I < K.Params.size(); ++I) {
    ValueId P = K.Params[I];
    const ValueInfo &VI = K.value(P);
    llvm::Value *Slot = B.CreateConstInBoundsGEP1_64(I8, ArgTable, 16 * I);
    auto *Data =
        B.CreateAlignedLoad(Ptr, Slot, llvm::Align(8), VI.Name + ".data");
    if (VI.Kind == ValueKind::Buffer) {
      llvm::Value *CountP = B.CreateConstInBoundsGEP1_64(I8, Slot, 8);
      BufCount[P] =
          B.CreateAlignedLoad(I64, CountP, llvm::Align(8), VI.Name + ".count");
      if (Variant.BufferAlignment > 1 &&
          llvm::isPowerOf2_32(Variant.BufferAlignment))
        B.CreateAlignmentAssumption(M->getDataLayout(), Data,
                                    Variant.BufferAlignment);
      BufBase[P] = Data;
    } else if (VI.Kind == ValueKind::Plain) {
      unsigned Al = byteSize(VI.Ty.elementKind());
      llvm::Value *V =
          B.CreateAlignedLoad(memType(VI.Ty), Data, llvm::Align(Al));
      CubeValues[P] = fromMem(V, VI.Ty);
      CubeValues[P]->setName(VI.Name);
    } else {
      return llvm::createStringError("kernel '" + K.Name + "': parameter '%" +
                                     VI.Name +
                                     "' is neither a buffer nor a value");
    }
  }

  llvm::BasicBlock *CubeBody = newBlock("cube");
  llvm::BasicBlock *Exit = newBlock("exit");
  B.CreateCondBr(B.CreateICmpULT(Begin, End), CubeBody, Exit);
  B.SetInsertPoint(CubeBody);
  llvm::PHINode *C = B.CreatePHI(I32, 2, "c");
  C->addIncoming(Begin, EntryBB);
  CubeLinear = C;
  CubePos[0] = B.CreateURem(C, CubeCount[0], "cube_pos.x");
  llvm::Value *Q = B.CreateUDiv(C, CubeCount[0]);
  CubePos[1] = B.CreateURem(Q, CubeCount[1], "cube_pos.y");
  CubePos[2] = B.CreateUDiv(Q, CubeCount[1], "cube_pos.z");
  if (Layout.HasFlags)
    B.CreateMemSet(scratchPtr(Layout.FlagsOffset), B.getInt8(0), Units,
                   llvm::Align(64));

  lowerCubeBlock(K.Body);

  llvm::BasicBlock *Latch = newBlock("cube.latch");
  if (!terminated())
    B.CreateBr(Latch);
  B.SetInsertPoint(Latch);
  llvm::Value *Next = B.CreateAdd(C, B.getInt32(1), "c.next");
  C->addIncoming(Next, Latch);
  B.CreateCondBr(B.CreateICmpULT(Next, End), CubeBody, Exit);
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
  Exit->moveAfter(&F->back());

  if (Err)
    return std::move(Err);
  versionUnitLoops(*F, Guards, InnerUnitHeaders);
  std::string Problems;
  llvm::raw_string_ostream OS(Problems);
  if (llvm::verifyModule(*M, &OS))
    return llvm::createStringError("internal error: lowering kernel '" +
                                   K.Name +
                                   "' produced invalid LLVM IR: " + Problems);

  LoweredModule Out;
  Out.Module = std::move(M);
  CubeMetadata &MD = Out.Metadata;
  MD.KernelName = K.Name;
  MD.Symbol = cubeFunctionPrefix() + K.Name;
  MD.CubeDim = K.CubeDim;
  MD.PlaneDim = PlaneDim;
  MD.ScratchBytes = Layout.Bytes;
  for (ValueId P : K.Params) {
    const ValueInfo &VI = K.value(P);
    ParamMetadata PM;
    PM.Name = VI.Name;
    PM.IsBuffer = VI.Kind == ValueKind::Buffer;
    PM.Ty = VI.Ty;
    PM.Access = VI.Access;
    MD.Params.push_back(std::move(PM));
  }
  return Out;
}

llvm::Expected<LoweredModule> kiln::lowerKernel(const Kernel &K,
                                                const CpuVariant &Variant,
                                                const DeviceLimits &Limits,
                                                llvm::LLVMContext &Ctx) {
  KernelLowering L(K, Variant, Limits, Ctx);
  return L.run();
}
