//===- CaseLabel.cpp - The label of a switch case -------------------------===//

#include "kiln/IR/CaseLabel.h"

#include "llvm/Support/raw_ostream.h"

using namespace kiln;

bool CaseLabel::fits(unsigned Width, bool Signed) const {
  if (Signed) {
    if (Width >= 64)
      return Negative || Bits < (uint64_t(1) << 63);
    int64_t Half = int64_t(1) << (Width - 1);
    int64_t Value = static_cast<int64_t>(Bits);
    return Negative ? Value >= -Half : Bits < uint64_t(Half);
  }
  return !Negative && (Width >= 64 || Bits < (uint64_t(1) << Width));
}

std::string CaseLabel::str() const {
  return Negative ? std::to_string(static_cast<int64_t>(Bits))
                  : std::to_string(Bits);
}

llvm::raw_ostream &kiln::operator<<(llvm::raw_ostream &OS, CaseLabel Label) {
  return OS << Label.str();
}
