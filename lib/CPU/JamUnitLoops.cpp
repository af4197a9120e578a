//===- JamUnitLoops.cpp - Several units per iteration, interleaved --------===//
//
// See JamUnitLoops.h.
//
//===----------------------------------------------------------------------===//

#include "JamUnitLoops.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/AliasAnalysis.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/MemoryLocation.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <array>
#include <optional>

using namespace llvm;
using namespace kiln;

namespace {

/// The most instructions the jammed body may hold (units times the body):
/// the copies cost compile time (their registers are counted apart). A
/// unit that keeps two tiles' accumulators (229 instructions with AVX2
/// code) still runs two units an iteration.
constexpr unsigned MaxJammedInstructions = 1024;
/// A longer body is left as it is, not even its loads sunk: the memory
/// check compares every pair of its accesses.
constexpr unsigned MaxBodyInstructions = MaxJammedInstructions;
/// The shortest floating-point chain worth jamming: shorter chains already
/// overlap within the core's scheduler.
constexpr unsigned MinChainLength = 8;

/// The access groups \p L's ID declares parallel.
SmallPtrSet<const MDNode *, 2> parallelGroups(const Loop &L) {
  SmallPtrSet<const MDNode *, 2> Groups;
  MDNode *ID = L.getLoopID();
  if (!ID)
    return Groups;
  for (const MDOperand &Op : drop_begin(ID->operands())) {
    auto *Node = dyn_cast<MDNode>(Op);
    if (!Node || Node->getNumOperands() < 1)
      continue;
    auto *Name = dyn_cast<MDString>(Node->getOperand(0));
    if (!Name || Name->getString() != "llvm.loop.parallel_accesses")
      continue;
    for (const MDOperand &G : drop_begin(Node->operands()))
      if (auto *Group = dyn_cast<MDNode>(G))
        Groups.insert(Group);
  }
  return Groups;
}

/// Whether \p I carries one of \p Groups as its access group.
bool inGroups(const Instruction &I,
              const SmallPtrSetImpl<const MDNode *> &Groups) {
  MDNode *Tag = I.getMetadata(LLVMContext::MD_access_group);
  if (!Tag)
    return false;
  if (Groups.count(Tag))
    return true;
  for (const MDOperand &Op : Tag->operands()) // a list of groups
    if (auto *G = dyn_cast<MDNode>(Op); G && Groups.count(G))
      return true;
  return false;
}

bool isFloatingArithmetic(const Instruction &I) {
  switch (I.getOpcode()) {
  case Instruction::FAdd:
  case Instruction::FSub:
  case Instruction::FMul:
    return true;
  default:
    break;
  }
  if (auto *II = dyn_cast<IntrinsicInst>(&I))
    return II->getIntrinsicID() == Intrinsic::fma ||
           II->getIntrinsicID() == Intrinsic::fmuladd;
  return false;
}

/// Each instruction's depth in its floating-point chain (1 for a chain's
/// first operation), 0 for the others.
SmallVector<unsigned, 64> chainDepths(ArrayRef<Instruction *> Body) {
  DenseMap<const Instruction *, unsigned> Depth;
  SmallVector<unsigned, 64> Out;
  for (Instruction *I : Body) {
    unsigned D = 0;
    if (isFloatingArithmetic(*I)) {
      for (Value *Op : I->operands())
        if (auto *OpI = dyn_cast<Instruction>(Op))
          D = std::max(D, Depth.lookup(OpI));
      Depth[I] = ++D;
    }
    Out.push_back(D);
  }
  return Out;
}

struct Access {
  Instruction *I;
  MemoryLocation Loc;
  uint64_t Bytes;
  bool Grouped;
  bool Writes;
};

/// Whether accesses \p A and \p B of two different units among \p Units
/// consecutive ones never overlap.
bool disjointAcrossUnits(const Access &A, const Access &B, const Loop &L,
                         unsigned Units, ScalarEvolution &SE,
                         BatchAAResults &CrossUnits) {
  if (A.Grouped && B.Grouped)
    return true; // the loop's parallel_accesses says so
  if (A.I != B.I) {
    // Unknown sizes, and CrossUnits in cross-iteration mode: a plain query
    // assumes both pointers come from one iteration (two selects on one
    // condition are compared arm by arm), which units of different
    // iterations are not.
    MemoryLocation LA = MemoryLocation::getBeforeOrAfter(A.Loc.Ptr, A.Loc.AATags);
    MemoryLocation LB = MemoryLocation::getBeforeOrAfter(B.Loc.Ptr, B.Loc.AATags);
    if (CrossUnits.alias(LA, LB) == AliasResult::NoAlias)
      return true;
  }
  auto *RA = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(const_cast<Value *>(A.Loc.Ptr)));
  auto *RB = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(const_cast<Value *>(B.Loc.Ptr)));
  if (!RA || !RB || RA->getLoop() != &L || RB->getLoop() != &L ||
      !RA->isAffine() || !RB->isAffine())
    return false;
  auto *StepA = dyn_cast<SCEVConstant>(RA->getStepRecurrence(SE));
  auto *StepB = dyn_cast<SCEVConstant>(RB->getStepRecurrence(SE));
  auto *Delta = dyn_cast<SCEVConstant>(
      SE.getMinusSCEV(RB->getStart(), RA->getStart()));
  if (!StepA || !StepB || !Delta || StepA->getAPInt() != StepB->getAPInt() ||
      StepA->getAPInt().getSignificantBits() > 32 ||
      Delta->getAPInt().getSignificantBits() > 32)
    return false;
  int64_t Step = StepA->getAPInt().getSExtValue();
  int64_t Diff = Delta->getAPInt().getSExtValue();
  // B of unit i + K starts at Diff + K * Step bytes from A of unit i.
  for (int64_t K = 1 - int64_t(Units); K < int64_t(Units); ++K) {
    if (K == 0)
      continue;
    int64_t Offset = Diff + K * Step;
    if (Offset < int64_t(A.Bytes) && Offset + int64_t(B.Bytes) > 0)
      return false;
  }
  return true;
}

/// The loop's shape, when it is one the pass jams.
struct JamPlan {
  BasicBlock *Block = nullptr;
  PHINode *IV = nullptr;
  BinaryOperator *Next = nullptr; // IV + Step
  ICmpInst *Exit = nullptr;       // Next against the bound, equality
  SmallVector<Instruction *, 64> Body; // all but the IV and the branch
  /// Loads of the preheader to move into the body and share between the
  /// units of an iteration, so that the jammed body fits the registers.
  SmallVector<LoadInst *, 16> Sink;
  /// Units per iteration of the jammed loop.
  unsigned Units = 0;
};

/// Vector registers a value of type \p Ty takes (scalars count as one).
unsigned registersFor(Type *Ty, unsigned VectorBits) {
  if (!Ty->isVectorTy())
    return 1;
  uint64_t Bits = Ty->getPrimitiveSizeInBits().getKnownMinValue();
  return unsigned(std::max<uint64_t>(1, divideCeil(Bits, VectorBits)));
}

/// Whether \p Load, a load of \p L's preheader used only in the loop, may
/// move into the body: nothing after it in the preheader and no store of
/// the body may change what it reads.
bool canSinkIntoBody(LoadInst &Load, const Loop &L,
                     ArrayRef<Instruction *> Body, AAResults &AA) {
  if (!Load.isSimple() || Load.getParent() != L.getLoopPreheader())
    return false;
  for (const User *U : Load.users())
    if (cast<Instruction>(U)->getParent() != L.getHeader())
      return false;
  for (const Instruction *I = Load.getNextNode(); I; I = I->getNextNode())
    if (I->mayWriteToMemory())
      return false;
  MemoryLocation Loc = MemoryLocation::get(&Load);
  for (Instruction *I : Body)
    if (isa<StoreInst>(I) && isModSet(AA.getModRefInfo(I, Loc)))
      return false;
  return true;
}

/// Picks how many units an iteration of \p Plan's loop runs, the most that
/// fit the vector registers: the values the body uses from outside the
/// loop, an accumulator per chain and unit, an operand per unit (a
/// broadcast) and two temporaries. Preheader loads move into the body
/// (Plan.Sink), where the jammed units share each one, when that lets more
/// units run: matmul_tiled's 16 rows of B take all 16 registers of AVX2 as
/// 256-bit halves, and jammed with them held the body spills every
/// broadcast. When no factor fits but the values held from outside the
/// loop are more than the registers and sinking the loads among them makes
/// one unit fit, the plan is one unit an iteration with those loads sunk:
/// no copies, but no value spilled across the loop and reloaded for every
/// use. Returns false when neither fits.
bool chooseFactor(JamPlan &Plan, const Loop &L, unsigned TripCount,
                  const TargetTransformInfo &TTI, AAResults &AA) {
  unsigned Budget =
      TTI.getNumberOfRegisters(TTI.getRegisterClassForType(/*Vector=*/true));
  unsigned VectorBits =
      TTI.getRegisterBitWidth(TargetTransformInfo::RGK_FixedWidthVector)
          .getFixedValue();
  if (!Budget || !VectorBits)
    return false;
  // Registers of the chains' ends: operations no other one continues.
  unsigned ChainRegisters = 0;
  // In the body's order, so that the sunk loads (and the code) do not
  // depend on where values happen to be allocated.
  SmallSetVector<Value *, 32> LiveIn;
  for (Instruction *I : Plan.Body) {
    if (isFloatingArithmetic(*I) &&
        none_of(I->users(), [&](const User *U) {
          auto *UI = cast<Instruction>(U);
          return UI->getParent() == Plan.Block && isFloatingArithmetic(*UI);
        }))
      ChainRegisters += registersFor(I->getType(), VectorBits);
    for (Value *Op : I->operands())
      if ((isa<Instruction>(Op) && !L.contains(cast<Instruction>(Op))) ||
          isa<Argument>(Op))
        if (Op->getType()->isFPOrFPVectorTy() || Op->getType()->isVectorTy())
          LiveIn.insert(Op);
  }
  unsigned Held = 0, Sinkable = 0;
  SmallVector<LoadInst *, 16> Loads;
  for (Value *V : LiveIn) {
    unsigned Regs = registersFor(V->getType(), VectorBits);
    Held += Regs;
    if (auto *Load = dyn_cast<LoadInst>(V);
        Load && canSinkIntoBody(*Load, L, Plan.Body, AA)) {
      Loads.push_back(Load);
      Sinkable += Regs;
    }
  }
  // The registers \p Units units take besides the values held.
  auto Working = [&](unsigned Units) {
    return Units * ChainRegisters + Units + 2;
  };
  for (unsigned Units : {8u, 4u, 2u}) {
    if (TripCount < 2 * Units || TripCount % Units ||
        Units * Plan.Body.size() > MaxJammedInstructions)
      continue;
    if (Held + Working(Units) <= Budget) {
      Plan.Units = Units;
      return true;
    }
    if (Held - Sinkable + Working(Units) <= Budget) {
      Plan.Units = Units;
      Plan.Sink.assign(Loads.begin(), Loads.end());
      return true;
    }
  }
  if (Held > Budget && !Loads.empty() &&
      Held - Sinkable + Working(1) <= Budget) {
    Plan.Units = 1;
    Plan.Sink.assign(Loads.begin(), Loads.end());
    return true;
  }
  return false;
}

std::optional<JamPlan> planJam(Loop &L, ScalarEvolution &SE, AAResults &AA,
                               const TargetTransformInfo &TTI) {
  auto Groups = parallelGroups(L);
  if (Groups.empty() || L.getNumBlocks() != 1)
    return std::nullopt;
  BasicBlock *BB = L.getHeader();
  if (L.getLoopLatch() != BB || L.getExitingBlock() != BB ||
      !L.getLoopPreheader())
    return std::nullopt;
  auto *Br = dyn_cast<BranchInst>(BB->getTerminator());
  if (!Br || !Br->isConditional())
    return std::nullopt;
  unsigned TripCount = SE.getSmallConstantTripCount(&L);
  if (TripCount < 4)
    return std::nullopt;

  JamPlan Plan;
  Plan.Block = BB;
  for (PHINode &Phi : BB->phis()) {
    if (Plan.IV)
      return std::nullopt; // only the unit index crosses iterations
    Plan.IV = &Phi;
  }
  if (!Plan.IV)
    return std::nullopt;
  Plan.Next = dyn_cast<BinaryOperator>(Plan.IV->getIncomingValueForBlock(BB));
  if (!Plan.Next || Plan.Next->getOpcode() != Instruction::Add ||
      Plan.Next->getOperand(0) != Plan.IV ||
      !isa<ConstantInt>(Plan.Next->getOperand(1)))
    return std::nullopt;
  Plan.Exit = dyn_cast<ICmpInst>(Br->getCondition());
  if (!Plan.Exit || !Plan.Exit->isEquality() ||
      Plan.Exit->getOperand(0) != Plan.Next ||
      !isa<ConstantInt>(Plan.Exit->getOperand(1)))
    return std::nullopt;

  SmallVector<Access, 32> Accesses;
  const DataLayout &DL = BB->getDataLayout();
  for (Instruction &I : *BB) {
    if (isa<PHINode>(I) || &I == Br)
      continue;
    Plan.Body.push_back(&I);
    if (!I.mayReadOrWriteMemory()) {
      if (I.mayHaveSideEffects())
        return std::nullopt;
      continue;
    }
    Type *Ty;
    if (auto *Ld = dyn_cast<LoadInst>(&I)) {
      if (!Ld->isSimple())
        return std::nullopt;
      Ty = Ld->getType();
    } else if (auto *St = dyn_cast<StoreInst>(&I)) {
      if (!St->isSimple())
        return std::nullopt;
      Ty = St->getValueOperand()->getType();
    } else {
      return std::nullopt; // calls, atomics, masked and other intrinsics
    }
    Accesses.push_back({&I, MemoryLocation::get(&I),
                        DL.getTypeStoreSize(Ty).getFixedValue(),
                        inGroups(I, Groups), isa<StoreInst>(I)});
  }
  if (Plan.Body.size() > MaxBodyInstructions ||
      *max_element(chainDepths(Plan.Body)) < MinChainLength)
    return std::nullopt;
  // An FMA without hardware FMA (x86-64-v2) is a libm call that clobbers
  // every vector register: the chains gain nothing from jamming. The cost
  // model prices it at 10 a lane there, against about twice a multiply's
  // cost where FMA is an instruction.
  for (Instruction *I : Plan.Body)
    if (auto *II = dyn_cast<IntrinsicInst>(I); II && isFloatingArithmetic(*II)) {
      constexpr auto Kind = TargetTransformInfo::TCK_RecipThroughput;
      InstructionCost Fma = TTI.getIntrinsicInstrCost(
          IntrinsicCostAttributes(II->getIntrinsicID(), *II), Kind);
      InstructionCost Mul =
          TTI.getArithmeticInstrCost(Instruction::FMul, II->getType(), Kind);
      if (!Fma.isValid() || !Mul.isValid() || Fma > Mul * 4)
        return std::nullopt;
    }
  BatchAAResults CrossUnits(AA);
  CrossUnits.enableCrossIterationMode();
  for (size_t A = 0; A < Accesses.size(); ++A)
    for (size_t B = A; B < Accesses.size(); ++B)
      if ((Accesses[A].Writes || Accesses[B].Writes) &&
          !disjointAcrossUnits(Accesses[A], Accesses[B], L, MaxJamFactor,
                               SE, CrossUnits))
        return std::nullopt;
  if (!chooseFactor(Plan, L, TripCount, TTI, AA))
    return std::nullopt;
  return Plan;
}

/// Reorders one unit's \p Body (and the block) so that its independent
/// floating-point chains advance side by side: each chain operation is keyed
/// by its depth in the chain, every other instruction by the first
/// operation that uses it (or, unused in the body, the last it uses), and a
/// list schedule takes the ready instruction with the smallest key. Data
/// dependences and the order of memory accesses that may overlap are kept.
/// With AVX2 code matmul_tiled's row of 16 units is two 8-lane chains
/// sharing each broadcast of A; one after the other, every broadcast lives
/// across the whole body, and jammed four times they spill.
void interleaveChains(SmallVectorImpl<Instruction *> &Body, AAResults &AA) {
  size_t N = Body.size();
  if (!N)
    return;
  Instruction *Terminator = Body.front()->getParent()->getTerminator();
  DenseMap<const Instruction *, size_t> Index;
  for (size_t I = 0; I < N; ++I)
    Index[Body[I]] = I;
  constexpr unsigned Unkeyed = ~0u;
  SmallVector<unsigned, 64> Key = chainDepths(Body);
  for (unsigned &K : Key)
    if (!K)
      K = Unkeyed;
  for (size_t I = N; I-- > 0;) // as late as the first user
    if (Key[I] == Unkeyed)
      for (User *U : Body[I]->users())
        if (auto It = Index.find(cast<Instruction>(U)); It != Index.end())
          Key[I] = std::min(Key[I], Key[It->second]);
  for (size_t I = 0; I < N; ++I) // unused in the body: after its operands
    if (Key[I] == Unkeyed) {
      Key[I] = 0;
      for (Value *Op : Body[I]->operands())
        if (auto It = Index.find(dyn_cast<Instruction>(Op)); It != Index.end())
          Key[I] = std::max(Key[I], Key[It->second]);
    }

  // Predecessors: operands, and earlier accesses that may overlap.
  SmallVector<SmallVector<size_t, 4>, 64> Preds(N);
  for (size_t I = 0; I < N; ++I) {
    for (Value *Op : Body[I]->operands())
      if (auto It = Index.find(dyn_cast<Instruction>(Op)); It != Index.end())
        Preds[I].push_back(It->second);
    if (!Body[I]->mayReadOrWriteMemory())
      continue;
    for (size_t J = 0; J < I; ++J)
      if (Body[J]->mayReadOrWriteMemory() &&
          (Body[I]->mayWriteToMemory() || Body[J]->mayWriteToMemory()) &&
          !AA.isNoAlias(MemoryLocation::get(Body[J]),
                        MemoryLocation::get(Body[I])))
        Preds[I].push_back(J);
  }
  SmallVector<bool, 64> Done(N, false);
  SmallVector<Instruction *, 64> Order;
  while (Order.size() < N) {
    size_t Best = N;
    for (size_t I = 0; I < N; ++I) {
      if (Done[I] || !all_of(Preds[I], [&](size_t P) { return Done[P]; }))
        continue;
      if (Best == N || Key[I] < Key[Best])
        Best = I;
    }
    if (Best == N)
      return; // cannot happen in one block's order; keep it as it is
    Done[Best] = true;
    Order.push_back(Body[Best]);
  }
  for (Instruction *I : Order)
    I->moveBefore(Terminator);
  Body.assign(Order.begin(), Order.end());
}

/// Runs Plan.Units units per iteration: each body instruction is
/// followed by its copies for the next units, the IV advances by that many
/// steps and the loop leaves on the last copy's compare.
void jam(JamPlan &Plan, AAResults &AA) {
  const unsigned R = Plan.Units;
  BasicBlock *BB = Plan.Block;
  // Each sunk load goes just before its first use; the units share it.
  SmallPtrSet<Instruction *, 16> Shared;
  for (LoadInst *Load : Plan.Sink) {
    Instruction *First = nullptr;
    for (Instruction *I : Plan.Body)
      if (is_contained(I->operands(), Load)) {
        First = I;
        break;
      }
    Load->moveBefore(First);
    Shared.insert(Load);
  }
  if (!Plan.Sink.empty()) {
    Plan.Body.clear();
    for (Instruction &I : *BB)
      if (!isa<PHINode>(I) && !I.isTerminator())
        Plan.Body.push_back(&I);
  }
  interleaveChains(Plan.Body, AA);
  if (R == 1)
    return; // the loads sunk, nothing to copy
  auto *Step = cast<ConstantInt>(Plan.Next->getOperand(1));
  std::array<ValueToValueMapTy, MaxJamFactor> Copies;
  Instruction *Front = &*BB->getFirstNonPHIIt();
  for (unsigned C = 1; C < R; ++C) {
    auto *Unit = BinaryOperator::CreateAdd(
        Plan.IV, ConstantInt::get(Step->getType(), Step->getValue() * C),
        Plan.IV->getName() + ".jam" + Twine(C), Front);
    Unit->setHasNoUnsignedWrap(Plan.Next->hasNoUnsignedWrap());
    Unit->setHasNoSignedWrap(Plan.Next->hasNoSignedWrap());
    Copies[C][Plan.IV] = Unit;
  }
  for (Instruction *I : Plan.Body) {
    if (Shared.count(I)) {
      for (unsigned C = 1; C < R; ++C)
        Copies[C][I] = I;
      continue;
    }
    Instruction *After = I;
    for (unsigned C = 1; C < R; ++C) {
      Instruction *Copy = I->clone();
      if (I->hasName())
        Copy->setName(I->getName() + ".jam" + Twine(C));
      Copy->insertAfter(After);
      RemapInstruction(Copy, Copies[C],
                       RF_NoModuleLevelChanges | RF_IgnoreMissingLocals);
      Copies[C][I] = Copy;
      After = Copy;
    }
  }
  ValueToValueMapTy &Last = Copies[R - 1];
  // Code after the loop sees the last unit's values.
  SmallVector<Instruction *, 64> Defs(Plan.Body.begin(), Plan.Body.end());
  Defs.push_back(Plan.IV);
  for (Instruction *Def : Defs) {
    Value *LastDef = Last[Def];
    Def->replaceUsesWithIf(LastDef, [BB](Use &U) {
      return cast<Instruction>(U.getUser())->getParent() != BB;
    });
  }
  Plan.IV->setIncomingValueForBlock(BB, Last[Plan.Next]);
  cast<BranchInst>(BB->getTerminator())->setCondition(Last[Plan.Exit]);
  // The earlier units' compares and increments are dead now.
  SmallVector<WeakTrackingVH, 8> Dead;
  for (unsigned C = 0; C + 1 < R; ++C) {
    Value *Cmp = C ? Copies[C][Plan.Exit] : Plan.Exit;
    Dead.push_back(Cmp);
  }
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(Dead);
}

} // namespace

PreservedAnalyses JamUnitLoopsPass::run(Function &F,
                                        FunctionAnalysisManager &AM) {
  auto &LI = AM.getResult<LoopAnalysis>(F);
  auto &SE = AM.getResult<ScalarEvolutionAnalysis>(F);
  auto &AA = AM.getResult<AAManager>(F);
  auto &TTI = AM.getResult<TargetIRAnalysis>(F);
  SmallVector<JamPlan, 4> Plans;
  for (Loop *L : LI.getLoopsInPreorder())
    if (L->isInnermost())
      if (std::optional<JamPlan> Plan = planJam(*L, SE, AA, TTI))
        Plans.push_back(std::move(*Plan));
  if (Plans.empty())
    return PreservedAnalyses::all();
  for (JamPlan &Plan : Plans)
    jam(Plan, AA);
  PreservedAnalyses PA;
  PA.preserveSet<CFGAnalyses>();
  return PA;
}
