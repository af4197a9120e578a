//===- SwitchCases.cpp - The labels of switch cases -----------------------===//
//
// A switch case may carry several labels (`case 1, 3, 5 { ... }`). The
// labels of all cases are kept in one list, Operation::CaseValues; the
// number each case takes is in Operation::CaseLabelCounts, left empty while
// every case has a single label so that kernels built before multi-label
// cases keep their in-memory form.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Operation.h"

using namespace kiln;

bool kiln::switchLabelsWellFormed(const Operation &Op) {
  if (Op.CaseLabelCounts.empty())
    return true;
  uint64_t Total = 0;
  for (uint32_t N : Op.CaseLabelCounts) {
    if (N == 0)
      return false;
    Total += N;
  }
  return Total == Op.CaseValues.size();
}

size_t kiln::switchCaseCount(const Operation &Op) {
  if (!switchLabelsWellFormed(Op))
    return 0;
  return Op.CaseLabelCounts.empty() ? Op.CaseValues.size()
                                    : Op.CaseLabelCounts.size();
}

llvm::ArrayRef<CaseLabel> kiln::switchCaseLabels(const Operation &Op,
                                                 size_t Case) {
  if (Case >= switchCaseCount(Op))
    return {};
  llvm::ArrayRef<CaseLabel> All(Op.CaseValues);
  if (Op.CaseLabelCounts.empty())
    return All.slice(Case, 1);
  size_t First = 0;
  for (size_t I = 0; I < Case; ++I)
    First += Op.CaseLabelCounts[I];
  return All.slice(First, Op.CaseLabelCounts[Case]);
}

void kiln::addSwitchCase(Operation &Op, llvm::ArrayRef<CaseLabel> Labels) {
  bool Counted = !Op.CaseLabelCounts.empty() || Labels.size() != 1;
  if (Counted) {
    // The cases so far had one label each (CaseValues.size() of them).
    if (Op.CaseLabelCounts.empty())
      Op.CaseLabelCounts.assign(Op.CaseValues.size(), 1);
    Op.CaseLabelCounts.push_back(static_cast<uint32_t>(Labels.size()));
  }
  Op.CaseValues.insert(Op.CaseValues.end(), Labels.begin(), Labels.end());
  Op.Regions.emplace_back();
}
