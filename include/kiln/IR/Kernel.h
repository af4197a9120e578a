//===- Kernel.h - Kernels and modules of the Kiln IR ------------*- C++ -*-===//
//
// A Kernel owns its values (parameters, operation results, declared memory)
// and its body. A Module is what one `.kiln` file holds: kernels in order.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_KERNEL_H
#define KILN_IR_KERNEL_H

#include "kiln/IR/Operation.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// What a ValueId names.
enum class ValueKind : uint8_t {
  Plain,  ///< an immutable scalar or line value (SSA)
  Buffer, ///< a buffer parameter: global memory
  Shared, ///< per-cube shared array
  Local,  ///< per-unit array
  Var,    ///< per-unit mutable variable
  Fragment, ///< a cmma fragment, owned by each plane (docs/LangRef.md §5.4)
};

/// One named value of a kernel.
struct ValueInfo {
  std::string Name;                     ///< without the '%'
  ValueKind Kind = ValueKind::Plain;
  Type Ty;                              ///< the value type, or the element type of memory
  AccessKind Access = AccessKind::ReadWrite; ///< buffers only
  uint64_t Count = 0;                   ///< Shared and Local: elements
  SourceLoc Loc;                        ///< where it is defined
  /// A barrier object (docs/LangRef.md §13): Kind Shared for barrier_cube
  /// (one per cube, in shared memory), Local for barrier_unit (one per
  /// unit); Ty u32 and Count BarrierStateWords, its state. Plain memory
  /// operations do not take it.
  bool IsBarrier = false;
  /// A tensor map parameter (docs/LangRef.md §17): Kind Buffer, bound with a
  /// shape, strides and a box; only the tensor metadata and tensor map
  /// operations take it.
  bool IsTensorMap = false;
  /// A tensor map in im2col mode (`tensor_map<T, ACCESS, im2col>`, §17.7):
  /// bound with im2col parameters instead of a box; only tma_load_im2col
  /// copies it.
  bool IsIm2col = false;
  MatrixType Matrix = {};               ///< Fragment only: its type (Ty is the element)
  bool isMemory() const { return Kind != ValueKind::Plain; }
};

/// The u32 words of a barrier object's state (docs/Lowering.md, "Barrier
/// objects"): pending arrivals, expected arrivals, completed phases,
/// pending transaction bytes.
constexpr uint64_t BarrierStateWords = 4;

/// A kernel parameter: a buffer or a scalar/line passed by value.
struct Param {
  ValueId Value = NoValue;
};

/// A compute kernel: its name, cube shape, parameters and body.
struct IRKernel {
  std::string Name;                      ///< without the '@'
  std::array<uint32_t, 3> CubeDim = {1, 1, 1};
  uint8_t CubeDimRank = 1;               ///< how many dimensions were written (1..3)
  std::optional<uint32_t> PlaneDim;      ///< `plane_dim(N)` when requested
  /// Cubes per cluster (`cluster_dim(X[, Y[, Z]])`, docs/LangRef.md §15);
  /// {1, 1, 1} and rank 0 when not written.
  std::array<uint32_t, 3> ClusterDim = {1, 1, 1};
  uint8_t ClusterDimRank = 0;            ///< how many dimensions were written (0..3)
  std::vector<ValueId> Params;           ///< in declaration order
  std::vector<ValueInfo> Values;         ///< every value, indexed by ValueId
  Block Body;
  SourceLoc Loc;                         ///< of the `kernel` keyword

  /// Units per cube: the product of CubeDim, saturated at UINT64_MAX.
  uint64_t unitsPerCube() const { return saturatingProduct(CubeDim); }
  /// Cubes per cluster: the product of ClusterDim, saturated at UINT64_MAX.
  uint64_t cubesPerCluster() const { return saturatingProduct(ClusterDim); }
  /// The product of three 32-bit sizes, which can need more than 64 bits,
  /// saturated at UINT64_MAX (so that no product wraps below a limit).
  static uint64_t saturatingProduct(const std::array<uint32_t, 3> &Dims);
  /// The same product, exactly, in decimal: for diagnostics.
  static std::string productText(const std::array<uint32_t, 3> &Dims);
  const ValueInfo &value(ValueId Id) const { return Values[Id]; }
  ValueInfo &value(ValueId Id) { return Values[Id]; }
  /// Adds a value and returns its id.
  ValueId addValue(ValueInfo Info) {
    Values.push_back(std::move(Info));
    return static_cast<ValueId>(Values.size() - 1);
  }
};

/// The name docs/LangRef.md §10 gives the builder's kernel. Kiln's own code
/// says IRKernel, since kiln::api::Kernel (kiln/kiln.h) is the handle of a
/// loaded kernel and one name for both reads ambiguously.
using Kernel [[deprecated("kiln::Kernel is kiln::IRKernel")]] = IRKernel;

/// Most cubes one cluster may hold (the product of cluster_dim): CUDA's
/// portable limit (docs/LangRef.md §15).
constexpr uint32_t MaxClusterCubes = 8;

/// Operation numbers. An operation's number is its position, counting from
/// 0, in a pre-order walk of the kernel body: each operation comes before the
/// operations of its blocks, blocks in the order of Operation::Regions (then,
/// else; each case, then the default). Diagnostics name an operation without
/// a source location by this number.
///
/// Calls \p Fn on every operation of \p K in that order, with its number.
void forEachOperation(
    const IRKernel &K,
    llvm::function_ref<void(const Operation &Op, unsigned Number)> Fn);
/// The operation numbered \p Number, or null when there are fewer.
const Operation *operationAt(const IRKernel &K, unsigned Number);

/// What one `.kiln` file holds.
struct Module {
  std::string FileName; ///< used in diagnostics; "<builder>" when built in C++
  std::vector<IRKernel> Kernels;

  /// The kernel named \p Name, or null.
  const IRKernel *findKernel(llvm::StringRef Name) const;
};

} // namespace kiln

#endif // KILN_IR_KERNEL_H
