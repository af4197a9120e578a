//===- ScalarFallbackLoops.cpp - Guarded unit loops left scalar -----------===//
//
// See ScalarFallbackLoops.h.
//
//===----------------------------------------------------------------------===//

#include "ScalarFallbackLoops.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Metadata.h"

using namespace llvm;
using namespace kiln;

namespace {

constexpr StringLiteral MarkName = "kiln.loop.scalar_fallback";

/// \p L's loop ID without the mark, with \p Extra appended when given.
MDNode *rebuiltID(const Loop &L, MDNode *Extra) {
  SmallVector<MDNode *, 1> Add;
  if (Extra)
    Add.push_back(Extra);
  return makePostTransformationMetadata(L.getHeader()->getContext(),
                                        L.getLoopID(), {MarkName}, Add);
}

bool isMarked(const Loop &L) {
  return findOptionMDForLoopID(L.getLoopID(), MarkName) != nullptr;
}

} // namespace

void kiln::markScalarFallback(Loop &L) {
  LLVMContext &Ctx = L.getHeader()->getContext();
  L.setLoopID(rebuiltID(L, MDNode::get(Ctx, {MDString::get(Ctx, MarkName)})));
}

bool kiln::callsInexactMath(const Loop &L) {
  for (BasicBlock *BB : L.blocks())
    for (Instruction &I : *BB) {
      auto *Call = dyn_cast<CallBase>(&I);
      if (!Call)
        continue;
      auto *Intrinsic = dyn_cast<IntrinsicInst>(Call);
      if (!Intrinsic)
        return true;
      switch (Intrinsic->getIntrinsicID()) {
      case Intrinsic::fma:
      case Intrinsic::fmuladd:
      case Intrinsic::sqrt:
      case Intrinsic::fabs:
      case Intrinsic::copysign:
      case Intrinsic::minnum:
      case Intrinsic::maxnum:
      case Intrinsic::minimum:
      case Intrinsic::maximum:
      case Intrinsic::floor:
      case Intrinsic::ceil:
      case Intrinsic::trunc:
      case Intrinsic::rint:
      case Intrinsic::nearbyint:
      case Intrinsic::round:
      case Intrinsic::roundeven:
      case Intrinsic::smin:
      case Intrinsic::smax:
      case Intrinsic::umin:
      case Intrinsic::umax:
      case Intrinsic::abs:
      case Intrinsic::ctpop:
      case Intrinsic::ctlz:
      case Intrinsic::cttz:
      case Intrinsic::bswap:
      case Intrinsic::bitreverse:
      case Intrinsic::fshl:
      case Intrinsic::fshr:
      case Intrinsic::sadd_sat:
      case Intrinsic::uadd_sat:
      case Intrinsic::ssub_sat:
      case Intrinsic::usub_sat:
      case Intrinsic::assume:
      case Intrinsic::lifetime_start:
      case Intrinsic::lifetime_end:
        continue;
      default:
        return true;
      }
    }
  return false;
}

unsigned kiln::settleScalarFallbackLoops(Module &M) {
  unsigned Scalar = 0;
  for (Function &F : M) {
    // The loop forest only for a function with a mark on some latch.
    bool AnyMark = any_of(F, [](const BasicBlock &BB) {
      const Instruction *T = BB.getTerminator();
      MDNode *ID = T ? T->getMetadata(LLVMContext::MD_loop) : nullptr;
      return ID && findOptionMDForLoopID(ID, MarkName);
    });
    if (!AnyMark)
      continue;
    DominatorTree DT(F);
    LoopInfo LI(DT);
    for (Loop *L : LI.getLoopsInPreorder()) {
      if (!isMarked(*L))
        continue;
      MDNode *NoVectors = nullptr;
      if (!callsInexactMath(*L)) {
        LLVMContext &Ctx = F.getContext();
        NoVectors = MDNode::get(
            Ctx, {MDString::get(Ctx, "llvm.loop.vectorize.enable"),
                  ConstantAsMetadata::get(ConstantInt::getFalse(Ctx))});
        ++Scalar;
      }
      L->setLoopID(rebuiltID(*L, NoVectors));
    }
  }
  return Scalar;
}
