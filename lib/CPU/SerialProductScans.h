//===- SerialProductScans.h - 64-bit product scans as loops -----*- C++ -*-===//
//
// The vector form of a plane's inclusive product scan (docs/Lowering.md §6)
// is log2(P) Hillis-Steele steps over <P x i64>. Without a vector 64-bit
// multiply (AVX2, SSE, NEON) each step's multiplies are a dozen
// instructions per register: a long instruction selection for code that
// runs no faster than the P - 1 dependent scalar multiplies of the scan
// written as a loop (docs/Lowering.md §6, "64-bit product scans without a
// vector multiply"). The
// lowering tags the scan's last multiply; before the optimisation pipeline,
// where the target is known, this rewrite replaces each tagged scan by that
// loop when the target's cost model says the steps cost more than the
// loop. Integer products wrap, so the order does not change any lane.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_SERIALPRODUCTSCANS_H
#define KILN_LIB_CPU_SERIALPRODUCTSCANS_H

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln {

/// The metadata kind on the last multiply of a lowered 64-bit integer
/// product scan: mul(shuffle(V, fill, shift), V), log2(P) times over.
inline constexpr const char *ProductScanTag = "kiln.product.scan";

/// Replaces each tagged scan of \p M by a loop over its lanes where \p TM's
/// cost model prices the vector steps' multiplies above the loop's chain of
/// scalar multiplies (their latency). Returns the number replaced.
unsigned serializeProductScans(llvm::Module &M, llvm::TargetMachine &TM);

} // namespace kiln

#endif // KILN_LIB_CPU_SERIALPRODUCTSCANS_H
