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

bool isMark(const MDOperand &Op) {
  auto *Node = dyn_cast_or_null<MDNode>(Op.get());
  if (!Node || Node->getNumOperands() != 1)
    return false;
  auto *Name = dyn_cast<MDString>(Node->getOperand(0));
  return Name && Name->getString() == MarkName;
}

/// \p L's loop ID without the mark, with \p Extra appended when given.
MDNode *rebuiltID(const Loop &L, Metadata *Extra) {
  MDNode *ID = L.getLoopID();
  LLVMContext &Ctx = L.getHeader()->getContext();
  SmallVector<Metadata *, 8> Ops{nullptr};
  if (ID)
    for (unsigned I = 1; I < ID->getNumOperands(); ++I)
      if (!isMark(ID->getOperand(I)))
        Ops.push_back(ID->getOperand(I));
  if (Extra)
    Ops.push_back(Extra);
  MDNode *New = MDNode::getDistinct(Ctx, Ops);
  New->replaceOperandWith(0, New); // the loop ID's self reference
  return New;
}

bool isMarked(const Loop &L) {
  MDNode *ID = L.getLoopID();
  return ID && any_of(drop_begin(ID->operands()), isMark);
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
    if (F.isDeclaration())
      continue;
    DominatorTree DT(F);
    LoopInfo LI(DT);
    for (Loop *L : LI.getLoopsInPreorder()) {
      if (!isMarked(*L))
        continue;
      Metadata *NoVectors = nullptr;
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
