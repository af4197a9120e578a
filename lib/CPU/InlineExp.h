//===- InlineExp.h - f32 exp as inline arithmetic ---------------*- C++ -*-===//
//
// `llvm.exp` on f32 (scalar or vector) becomes straight-line arithmetic
// before optimisation when the target has fused multiply-add: a Cody-Waite
// reduction x = n ln2 + r, a degree-5 polynomial for e^r - 1 and a scale by
// 2^n built in the exponent bits, with the overflow, underflow and
// subnormal cases taken by selects, not branches (docs/Lowering.md §11;
// measured error §10).
// Within 2 ulp everywhere (1.45 ulp for the polynomial, plus the final
// rounding); NaN gives NaN, +inf +inf, -inf +0.
//
// Why: a call to libmvec's `_ZGVdN8v_expf` clobbers every vector register
// and exists only 8 wide, so a 16-wide AVX-512 loop makes two calls and
// spills around both; inline, the vectoriser widens the arithmetic to the
// loop's width and keeps it in registers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_INLINEEXP_H
#define KILN_LIB_CPU_INLINEEXP_H

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln {

/// Whether \p TM's code has a native fused multiply-add (x86 with FMA,
/// AArch64): without it `llvm.fma` is a call to `fmaf`, and `llvm.exp`
/// stays as it is.
bool targetHasNativeFma(const llvm::TargetMachine &TM);

/// Replaces every call of `llvm.exp` on f32 or a vector of f32 in \p M by
/// the inline expansion above. Returns whether anything changed.
bool inlineExpF32(llvm::Module &M);

} // namespace kiln

#endif // KILN_LIB_CPU_INLINEEXP_H
