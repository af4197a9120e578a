//===- LoweringHarness.h - Lower, verify and JIT kernels in unit tests -*- C++
//-*-===//
//
// Parses a kernel from text, verifies it, lowers it, checks the LLVM module
// with llvm::verifyModule, JITs it with its own LLJIT and calls the cube
// function over all cubes with hand-built LaunchArgs and a 64-byte aligned
// scratch arena filled with junk (so that nothing relies on zeroed scratch).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_LOWERING_HARNESS_H
#define KILN_UNITTESTS_LOWERING_HARNESS_H

#include "kiln/CPU/CubeABI.h"
#include "kiln/CPU/Lowering.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

/// A lowered and linked kernel.
struct JitKernel {
  std::unique_ptr<llvm::orc::LLJIT> JIT;
  CubeMetadata Metadata;
  CubeFunction Fn = nullptr;
  std::string LLVMIR; ///< the lowered module, before any optimisation

  /// Runs cubes [0, X*Y*Z) with \p Args; when \p OneCubePerCall, one call
  /// per cube (checks CubeBegin/CubeEnd handling).
  void launch(std::vector<KernelArg> Args, std::array<uint32_t, 3> Count,
              bool OneCubePerCall = false) const;
};

/// Parses, verifies, lowers and links the first kernel of \p Text; records a
/// gtest failure and returns an empty kernel (Fn == nullptr) on any error.
/// With \p OptimiseO3 the module goes through LLVM's O3 pipeline for the host
/// (vectorisers on, as the runtime does) before it is linked; LLVMIR is the
/// module before optimisation either way.
JitKernel compile(llvm::StringRef Text, CpuVariant Variant = {},
                  DeviceLimits Limits = {}, bool OptimiseO3 = false);

/// Parses and verifies only, then lowers; the lowered module (verified).
LoweredModule lowerOnly(llvm::StringRef Text, llvm::LLVMContext &Ctx,
                        CpuVariant Variant = {}, DeviceLimits Limits = {});

template <class T> KernelArg buf(std::vector<T> &V) {
  return {V.data(), V.size()};
}
template <class T> KernelArg val(T &V) { return {&V, 1}; }

/// IEEE half / bfloat16 bit patterns from and to float (round to nearest even).
uint16_t toHalf(float F);
float fromHalf(uint16_t H);
uint16_t toBF16(float F);
float fromBF16(uint16_t H);

} // namespace kiln::test

#endif
