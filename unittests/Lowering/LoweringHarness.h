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

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/CubeABI.h"
#include "kiln/CPU/Lowering.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

/// C = A x B for N x N matrices (N a multiple of 16): 16 x 16 tiles of A and
/// B in shared memory, two barriers per tile step, a var accumulator.
inline constexpr const char *TiledMatmulKernel = R"(
kernel @matmul cube_dim(16, 16) (%A: buffer<f32, read>, %B: buffer<f32, read>,
                                 %C: buffer<f32, write>, %N: u32) {
  %As = shared f32[256]
  %Bs = shared f32[256]
  %col = absolute_pos.x : u32
  %row = absolute_pos.y : u32
  %lc = unit_pos.x : u32
  %lr = unit_pos.y : u32
  %acc = var f32
  set %acc, 0.0:f32
  %tiles = shr %N, 4:u32 : u32
  %lrow = mul %lr, 16:u32 : u32
  %lidx = add %lrow, %lc : u32
  %rowN = mul %row, %N : u32
  for %t = 0:u32 to %tiles {
    %t16 = mul %t, 16:u32 : u32
    %ai0 = add %rowN, %t16 : u32
    %ai = add %ai0, %lc : u32
    %av = load %A[%ai] : f32
    store %As[%lidx], %av
    %brow = add %t16, %lr : u32
    %bi0 = mul %brow, %N : u32
    %bi = add %bi0, %col : u32
    %bv = load %B[%bi] : f32
    store %Bs[%lidx], %bv
    sync_cube
    for %k = 0:u32 to 16:u32 {
      %aidx = add %lrow, %k : u32
      %a = load %As[%aidx] : f32
      %k16 = mul %k, 16:u32 : u32
      %bidx = add %k16, %lc : u32
      %b = load %Bs[%bidx] : f32
      %old = get %acc : f32
      %new = fma %a, %b, %old : f32
      set %acc, %new
    }
    sync_cube
  }
  %ci = add %rowN, %col : u32
  %result = get %acc : f32
  store %C[%ci], %result
}
)";

/// A lowered and linked kernel.
struct JitKernel {
  std::unique_ptr<llvm::orc::LLJIT> JIT;
  CubeMetadata Metadata;
  CubeFunction Fn = nullptr;
  std::string LLVMIR; ///< the lowered module, before any optimisation
  std::string OptimizedIR; ///< after the O3 pipeline, when it ran
  /// The alignment the code assumes of every buffer (the variant's): a
  /// launch binds a buffer that is not aligned so through an aligned copy,
  /// as the runtime runs such code only on aligned bindings.
  uint32_t BufferAlignment = 64;

  /// Runs cubes [0, X*Y*Z) with \p Args; when \p OneCubePerCall, one call
  /// per cube (checks CubeBegin/CubeEnd handling).
  /// \p Tensors: LaunchArgs::Tensors (one TensorInfo per parameter, or
  /// null).
  void launch(std::vector<KernelArg> Args, std::array<uint32_t, 3> Count,
              bool OneCubePerCall = false,
              const TensorInfo *Tensors = nullptr) const;
};

/// Parses, verifies, lowers and links the first kernel of \p Text; records a
/// gtest failure and returns an empty kernel (Fn == nullptr) on any error.
/// With \p OptimizeO3 the module goes through LLVM's O3 pipeline for the host
/// (vectorisers on, as the runtime does) before it is linked; LLVMIR is the
/// module before optimisation either way. \p Target: the CPU and features
/// the O3 pipeline optimises for (the host's by default); the code is
/// generated for the host either way, so they must run on it. OptimizedIR
/// is the module after that pipeline.
JitKernel compile(llvm::StringRef Text, CpuVariant Variant = {},
                  DeviceLimits Limits = {}, bool OptimizeO3 = false,
                  const CodeGenOptions &Target = {});

/// Parses and verifies only, then lowers; the lowered module (verified).
LoweredModule lowerOnly(llvm::StringRef Text, llvm::LLVMContext &Ctx,
                        CpuVariant Variant = {}, DeviceLimits Limits = {});

template <class T> KernelArg buf(std::vector<T> &V) {
  return {V.data(), V.size()};
}
template <class T> KernelArg val(T &V) { return {&V, 1}; }

/// IEEE half / bfloat16 bit patterns from and to float (round to nearest even).
/// Defines the runtime functions compiled kernels call (debug_print's
/// kiln_debug_print) in \p JIT's main JITDylib.
llvm::Error defineRuntimeSymbols(llvm::orc::LLJIT &JIT);

uint16_t toHalf(float F);
float fromHalf(uint16_t H);
uint16_t toBF16(float F);
float fromBF16(uint16_t H);

} // namespace kiln::test

#endif
