//===- UnitLoop.h - Whether an LLVM loop is a unit loop ----------*- C++ -*-===//
//
// The lowering marks every unit loop (the loop over a segment's units, the
// one the vectoriser widens across the units) with a loop ID that declares
// its access group parallel: `llvm.loop.parallel_accesses` (docs/Lowering.md
// §4). The passes that act on unit loops only recognise them by it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_UNITLOOP_H
#define KILN_LIB_CPU_UNITLOOP_H

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Metadata.h"

namespace kiln {

/// Whether \p L's loop ID declares an access group parallel.
inline bool isUnitLoop(const llvm::Loop *L) {
  llvm::MDNode *ID = L->getLoopID();
  if (!ID)
    return false;
  for (const llvm::MDOperand &Op : ID->operands())
    if (auto *N = llvm::dyn_cast<llvm::MDNode>(Op.get()))
      if (N->getNumOperands() > 0)
        if (auto *S = llvm::dyn_cast<llvm::MDString>(N->getOperand(0)))
          if (S->getString() == "llvm.loop.parallel_accesses")
            return true;
  return false;
}

} // namespace kiln

#endif // KILN_LIB_CPU_UNITLOOP_H
