//===- UnitLoopSwitches.cpp - Switches in unit loops as branches ----------===//
//
// See UnitLoopSwitches.h.
//
//===----------------------------------------------------------------------===//

#include "UnitLoopSwitches.h"

#include "UnitLoop.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/LowerSwitch.h"

using namespace llvm;

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
