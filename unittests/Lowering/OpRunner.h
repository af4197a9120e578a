//===- OpRunner.h - Run one operation element-wise over test vectors -*- C++
//-*-===//

#ifndef KILN_UNITTESTS_LOWERING_OPRUNNER_H
#define KILN_UNITTESTS_LOWERING_OPRUNNER_H

#include "LoweringHarness.h"

#include "gtest/gtest.h"

namespace kiln::test {

/// out[i] = OP a[i] (, b[i]) : R for every i, through a real kernel with a
/// tail (cube_dim 32, n not a multiple of it unless the input is).
template <class R, class T>
std::vector<R> runOp(llvm::StringRef Op, llvm::StringRef TyName,
                     llvm::StringRef RName, std::vector<T> A,
                     std::vector<T> Bv = {}, CpuVariant Variant = {},
                     bool OptimizeO3 = false) {
  bool Binary = !Bv.empty();
  std::string Text = "kernel @op cube_dim(32) (%a: buffer<" + TyName.str() +
                     ", read>, %b: buffer<" + TyName.str() +
                     ", read>, %o: buffer<" + RName.str() +
                     ", write>, %n: u32) {\n"
                     "  %i = absolute_pos : u32\n"
                     "  %in = lt %i, %n : bool\n"
                     "  if %in {\n"
                     "    %x = load %a[%i] : " +
                     TyName.str() +
                     "\n"
                     "    %y = load %b[%i] : " +
                     TyName.str() +
                     "\n"
                     "    %r = " +
                     Op.str() + " %x" + (Binary ? ", %y" : "") + " : " +
                     RName.str() +
                     "\n"
                     "    store %o[%i], %r\n"
                     "  }\n"
                     "}\n";
  if (!Binary)
    Bv = A;
  std::vector<R> Out(A.size());
  JitKernel K = compile(Text, Variant, {}, OptimizeO3);
  if (!K.Fn)
    return Out;
  uint32_t N = static_cast<uint32_t>(A.size());
  K.launch({buf(A), buf(Bv), buf(Out), val(N)}, {(N + 31) / 32, 1, 1});
  return Out;
}

} // namespace kiln::test

#endif
