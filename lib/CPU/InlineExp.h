//===- InlineExp.h - f32 exp as inline arithmetic ---------------*- C++ -*-===//
//
// `llvm.exp` on f32 (scalar or vector) becomes straight-line arithmetic
// before optimisation on AVX-512 and AArch64 targets: a Cody-Waite
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

/// Whether `exp` is inlined for \p TM: AArch64, and x86 with AVX-512 (and
/// FMA). Without a native fused multiply-add `llvm.fma` would be a call to
/// `fmaf`; with AVX2 alone libmvec's 8-wide entry point is as fast. Where
/// it is not inlined, `llvm.exp` stays as it is (libm, libmvec). The target
/// decides (TargetArch::inlinesExpF32).
bool shouldInlineExp(const llvm::TargetMachine &TM);

/// Replaces every call of `llvm.exp` on f32 or a vector of f32 in \p M by
/// the inline expansion above. Returns whether anything changed.
bool inlineExpF32(llvm::Module &M);

} // namespace kiln

#endif // KILN_LIB_CPU_INLINEEXP_H
