//===- PassTestUtil.h - Kernels for the tests of single lowering passes ---===//
//
// The analyses of lib/CPU (Segmentation.h, SegmentLiveness.h, ...) take a
// verified kernel; these helpers parse and verify one from text and find its
// operations and values by name, so that each pass can be tested alone.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_LOWERING_PASSTESTUTIL_H
#define KILN_UNITTESTS_LOWERING_PASSTESTUTIL_H

#include "kiln/IR/Kernel.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"

#include "gtest/gtest.h"

#include <string>

namespace kiln::test {

/// The first kernel of \p Text, parsed and verified (a test failure and an
/// empty kernel otherwise).
inline Module parseVerified(const std::string &Text) {
  auto M = parseModule(Text, "pass.kiln");
  if (!M) {
    ADD_FAILURE() << "parse: " << llvm::toString(M.takeError());
    return Module();
  }
  if (llvm::Error E = verifyModule(*M, DeviceLimits()))
    ADD_FAILURE() << "verify: " << llvm::toString(std::move(E));
  return std::move(*M);
}

/// The value named \p Name (without '%'), or NoValue.
inline ValueId valueNamed(const IRKernel &K, llvm::StringRef Name) {
  for (ValueId Id = 0; Id < K.Values.size(); ++Id)
    if (K.value(Id).Name == Name)
      return Id;
  ADD_FAILURE() << "no value %" << Name.str();
  return NoValue;
}

/// The operation defining \p Name, or the \p Nth operation of kind \p Kind
/// (pre-order, from 0).
inline const Operation *opDefining(const IRKernel &K, llvm::StringRef Name) {
  ValueId Id = valueNamed(K, Name);
  const Operation *Found = nullptr;
  forEachOperation(K, [&](const Operation &Op, unsigned) {
    if (Op.Result == Id && !Found)
      Found = &Op;
  });
  return Found;
}
inline const Operation *nthOp(const IRKernel &K, OpKind Kind,
                              unsigned Nth = 0) {
  const Operation *Found = nullptr;
  forEachOperation(K, [&](const Operation &Op, unsigned) {
    if (Op.Kind == Kind && !Found && Nth-- == 0)
      Found = &Op;
  });
  return Found;
}

} // namespace kiln::test

#endif // KILN_UNITTESTS_LOWERING_PASSTESTUTIL_H
