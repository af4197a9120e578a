//===- UnitLoopSwitches.cpp - Switches in unit loops as branches ----------===//
//
// See UnitLoopSwitches.h.
//
//===----------------------------------------------------------------------===//

#include "UnitLoopSwitches.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/LowerSwitch.h"

using namespace llvm;

namespace {

bool isUnitLoop(const Loop *L) {
  MDNode *ID = L->getLoopID();
  if (!ID)
    return false;
  for (const MDOperand &Op : ID->operands())
    if (auto *N = dyn_cast<MDNode>(Op.get()))
      if (N->getNumOperands() > 0)
        if (auto *S = dyn_cast<MDString>(N->getOperand(0)))
          if (S->getString() == "llvm.loop.parallel_accesses")
            return true;
  return false;
}

} // namespace

PreservedAnalyses kiln::UnitLoopSwitchesPass::run(Function &F,
                                                  FunctionAnalysisManager &AM) {
  LoopInfo &LI = AM.getResult<LoopAnalysis>(F);
  bool Any = false;
  for (BasicBlock &BB : F) {
    auto *SI = dyn_cast<SwitchInst>(BB.getTerminator());
    if (!SI || SI->getNumCases() == 0 ||
        SI->getNumCases() > MaxUnitLoopSwitchCases)
      continue;
    Loop *L = LI.getLoopFor(&BB);
    if (L && L->isInnermost() && isUnitLoop(L)) {
      Any = true;
      break;
    }
  }
  if (!Any)
    return PreservedAnalyses::all();
  return LowerSwitchPass().run(F, AM);
}
