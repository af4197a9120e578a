//===- CubeMetadata.h - What a launch needs to know of a compiled kernel -*- C++ -*-===//

#ifndef KILN_CPU_CUBEMETADATA_H
#define KILN_CPU_CUBEMETADATA_H

#include "kiln/IR/Type.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// How the read-modify-write atomics on a buffer parameter can be
/// accumulated in a per-worker private copy and merged into the buffer at
/// the end of a launch (docs/Lowering.md, "Privatised atomics"); None when
/// they cannot. The value is the merge: Add also stands for atomic_sub (the
/// private copy then accumulates the negated sum).
enum class PrivateAtomic : uint8_t { None, Add, Min, Max, And, Or, Xor };

/// One kernel parameter as a launch must bind it.
struct ParamMetadata {
  std::string Name;  ///< without '%'
  bool IsBuffer = false;
  Type Ty;           ///< element type of a buffer, or the scalar/line type
  AccessKind Access = AccessKind::ReadWrite; ///< buffers only
  /// Buffers only: whether the launch may privatise its atomics (CubeABI.h,
  /// LaunchArgs::Reserved), and how copies merge.
  PrivateAtomic Private = PrivateAtomic::None;
  /// A tensor map parameter (docs/LangRef.md §17): bound with a box.
  bool IsTensorMap = false;
  /// The kernel reads the parameter's tensor metadata (§16, §17): a launch
  /// fills LaunchArgs::Tensors (CubeABI.h).
  bool ReadsTensorInfo = false;
  /// Tensor maps: the rank its copies use (their coordinate count), which
  /// the binding must have; 0 when no copy uses it.
  uint8_t TensorMapRank = 0;
  /// A tensor map in im2col mode (§17.7): bound with im2col parameters
  /// instead of a box. (Last, so that positional initialisers stay valid.)
  bool IsIm2col = false;
  friend bool operator==(const ParamMetadata &, const ParamMetadata &) = default;
};

/// Everything a launch needs besides the code: produced by the lowering,
/// stored beside the object in the store.
struct CubeMetadata {
  std::string KernelName;
  std::string Symbol;               ///< the cube function (CubeABI.h)
  std::array<uint32_t, 3> CubeDim = {1, 1, 1};
  uint32_t PlaneDim = 32;
  /// Cubes per cluster (docs/LangRef.md §15): a launch's cube count must be
  /// a multiple of it in each dimension.
  std::array<uint32_t, 3> ClusterDim = {1, 1, 1};
  /// The code calls the debug-print runtime (docs/LangRef.md §14): the
  /// launcher then collects its text; without it a launch does nothing more.
  bool UsesDebugPrint = false;
  uint64_t ScratchBytes = 0;        ///< per-worker arena the function needs
  std::vector<ParamMetadata> Params;
  friend bool operator==(const CubeMetadata &, const CubeMetadata &) = default;

  /// Whether a launch must fill LaunchArgs::Tensors.
  bool readsTensorInfo() const {
    for (const ParamMetadata &P : Params)
      if (P.ReadsTensorInfo)
        return true;
    return false;
  }

  /// A compact, platform-independent encoding (little-endian, versioned).
  std::vector<uint8_t> serialize() const;
  /// Decodes serialize()'s output; an error (never a crash) on anything else.
  static llvm::Expected<CubeMetadata> deserialize(llvm::ArrayRef<uint8_t> Bytes);
};

/// What a launch decides about the artifact that the kernel id does not
/// (docs/LangRef.md §9.2): bounds checking, the buffer alignment the code may
/// assume, and whether buffers may overlap. The library's default is
/// bounds-checked, with buffers that never overlap.
struct CpuVariant {
  bool BoundsChecked = true;
  uint32_t BufferAlignment = 64; ///< a power of two, at least 1
  /// The buffers bound to one launch may overlap each other (one memory
  /// bound to two parameters, overlapping views of one pool): each unit's
  /// accesses then keep their program order across buffers
  /// (docs/Lowering.md §7). Never the scratch area or the argument table.
  bool MayAlias = false;
  friend bool operator==(const CpuVariant &, const CpuVariant &) = default;
  /// "checked-a64", "unchecked-a16", "checked-a1-alias": stable, used in
  /// keys and listings (hashed through VariantTraits, so every field must
  /// show in it; the text without MayAlias is what it always was).
  std::string str() const {
    return std::string(BoundsChecked ? "checked" : "unchecked") + "-a" +
           std::to_string(BufferAlignment) + (MayAlias ? "-alias" : "");
  }
};

} // namespace kiln

#endif // KILN_CPU_CUBEMETADATA_H
