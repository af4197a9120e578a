//===- Builder.h - Build kernels in C++ without text ------------*- C++ -*-===//
//
// A GPU runtime builds its kernels with KernelBuilder instead of printing and
// parsing text. The builder names values (%0, %1, ... unless a name is
// given), computes the result type each operation implies, and keeps track
// of nested control flow:
//
//   KernelBuilder B("vadd");
//   B.setCubeDim({256});
//   ValueId A = B.addBuffer("a", Type::scalar(ScalarKind::F32), AccessKind::Read);
//   ...
//   ValueId I = B.builtin(OpKind::AbsolutePos);
//   ValueId In = B.op(OpKind::Lt, {I, N});
//   B.beginIf(In);
//   ...
//   B.end();
//   Expected<Kernel> K = B.finish();
//
// Misuse (an id that names no value, end() with nothing open, an operation of
// the wrong class for the helper, a name used twice) is remembered and
// reported by finish() as an Error; calls after the first misuse are
// ignored. The builder does not type-check: run verifyKernel() on the result.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_BUILDER_H
#define KILN_IR_BUILDER_H

#include "kiln/IR/Kernel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// An operand for the builder: a value id or a literal.
struct Arg {
  Operand O;
  Arg(ValueId Id) : O(Operand::value(Id)) {}
  Arg(Literal L) : O(Operand::literal(L)) {}
};

/// Literal helpers: lit::u32(7), lit::f32(1.5f), lit::make(Type, bits).
namespace lit {
Literal make(ScalarKind Kind, uint64_t Bits);
Literal boolean(bool V);
Literal i32(int32_t V);
Literal i64(int64_t V);
Literal u32(uint32_t V);
Literal u64(uint64_t V);
Literal f32(float V);
Literal f64(double V);
/// \p V converted to the minifloat \p Kind as `cast` converts an f64
/// (round to nearest even, saturating; docs/LangRef.md §5.3.1). Not for
/// f4e2m1x2, whose literal is the byte: use make().
Literal minifloat(ScalarKind Kind, double V);
} // namespace lit

class KernelBuilder {
public:
  explicit KernelBuilder(std::string Name);
  ~KernelBuilder();
  KernelBuilder(KernelBuilder &&) noexcept;
  KernelBuilder &operator=(KernelBuilder &&) noexcept;

  /// cube_dim with 1 to 3 sizes; the count written is kept (CubeDimRank).
  void setCubeDim(std::initializer_list<uint32_t> Dims);
  void setPlaneDim(uint32_t N);
  /// cluster_dim with 1 to 3 sizes (docs/LangRef.md §15); the count written
  /// is kept (ClusterDimRank). Without it a kernel's clusters are 1x1x1.
  void setClusterDim(std::initializer_list<uint32_t> Dims);

  /// Parameters, in order. An empty \p Name asks for a generated one.
  ValueId addBuffer(std::string Name, Type Elem, AccessKind Access);
  /// A `tensor_map<Elem, Access>` parameter (docs/LangRef.md §17), or with
  /// \p Im2col a `tensor_map<Elem, Access, im2col>` one (§17.7).
  ValueId addTensorMap(std::string Name, Type Elem, AccessKind Access,
                       bool Im2col = false);
  ValueId addScalar(std::string Name, Type Ty);

  /// The next value-producing call names its result \p Name instead of a
  /// number.
  KernelBuilder &named(std::string Name);

  /// Any value-producing operation, result type implied by the operands (see
  /// impliedType). \p ResultType overrides it and is required where nothing
  /// implies it (cast, bitcast, splat) or to pick u32 for popcount/clz/ctz.
  ValueId op(OpKind Kind, llvm::ArrayRef<Arg> Operands,
             std::optional<Type> ResultType = std::nullopt);

  /// Shorthands for op() with one, two or three operands.
  ValueId unary(OpKind Kind, Arg X) { return op(Kind, {X}); }
  ValueId binary(OpKind Kind, Arg A, Arg B) { return op(Kind, {A, B}); }
  ValueId ternary(OpKind Kind, Arg A, Arg B, Arg C) {
    return op(Kind, {A, B, C});
  }

  /// A builtin; \p Component 1..3 selects .x/.y/.z (BuiltinXYZ only).
  ValueId builtin(OpKind Kind, uint8_t Component = 0);
  /// A scalar constant (one literal) or a line (one bit pattern per lane).
  ValueId constant(Type Ty, llvm::ArrayRef<uint64_t> Bits);
  ValueId cast(Arg X, Type To) { return op(OpKind::Cast, {X}, To); }
  ValueId bitcast(Arg X, Type To) { return op(OpKind::Bitcast, {X}, To); }
  ValueId splat(Arg X, unsigned Lanes);
  ValueId extract(Arg Line, Arg Index) { return op(OpKind::Extract, {Line, Index}); }
  ValueId insert(Arg Line, Arg Index, Arg Elem) {
    return op(OpKind::Insert, {Line, Index, Elem});
  }
  ValueId select(Arg Cond, Arg A, Arg B) { return op(OpKind::Select, {Cond, A, B}); }

  // Memory.
  ValueId load(Arg Mem, Arg Index) { return op(OpKind::Load, {Mem, Index}); }
  void store(Arg Mem, Arg Index, Arg Value);
  /// workgroup_uniform_load: a barrier, then a load of shared array \p Mem at
  /// a uniform \p Index whose result is uniform (docs/LangRef.md §12.2).
  ValueId workgroupUniformLoad(Arg Mem, Arg Index) {
    return op(OpKind::WorkgroupUniformLoad, {Mem, Index});
  }
  ValueId len(Arg Buffer) { return op(OpKind::Len, {Buffer}); }
  // Tensor metadata of a buffer or tensor map parameter (docs/LangRef.md
  // §16), each a u32.
  ValueId shape(Arg Tensor, Arg Dim) { return op(OpKind::Shape, {Tensor, Dim}); }
  ValueId stride(Arg Tensor, Arg Dim) {
    return op(OpKind::Stride, {Tensor, Dim});
  }
  ValueId rank(Arg Tensor) { return op(OpKind::Rank, {Tensor}); }
  ValueId tensorLen(Arg Tensor) { return op(OpKind::TensorLen, {Tensor}); }
  ValueId var(Type Ty);
  ValueId get(Arg Var) { return op(OpKind::Get, {Var}); }
  void set(Arg Var, Arg Value);
  ValueId shared(Type Elem, uint64_t Count);
  ValueId localArray(Type Elem, uint64_t Count);

  // Atomics (RMW kinds, atomic_cas, atomic_load) and atomic_store.
  ValueId atomic(OpKind Kind, Arg Mem, Arg Index, Arg Value) {
    return op(Kind, {Mem, Index, Value});
  }
  ValueId atomicCas(Arg Mem, Arg Index, Arg Expected, Arg New) {
    return op(OpKind::AtomicCas, {Mem, Index, Expected, New});
  }
  ValueId atomicLoad(Arg Mem, Arg Index) {
    return op(OpKind::AtomicLoad, {Mem, Index});
  }
  void atomicStore(Arg Mem, Arg Index, Arg Value);

  void syncCube();
  /// sync_plane: orders the memory operations of a plane's units (lowered
  /// as sync_cube, whose placement rules it shares).
  void syncPlane();
  /// Plane operations are value operations: op(OpKind::PlaneSum, {X}).

  // Barrier objects and asynchronous copies (docs/LangRef.md §13).
  /// `barrier_unit`: a barrier of the unit, expecting one arrival.
  ValueId barrierUnit();
  /// `barrier_cube %count`: one barrier per cube, in shared memory.
  ValueId barrierCube(Arg ArrivalCount);
  /// `barrier_arrive %bar : u32`: the token (phase) arrived at.
  ValueId barrierArrive(Arg Barrier) {
    return op(OpKind::BarrierArrive, {Barrier});
  }
  /// `barrier_arrive_tx %bar, %arrivals, %bytes : u32`.
  ValueId barrierArriveTx(Arg Barrier, Arg Arrivals, Arg Bytes) {
    return op(OpKind::BarrierArriveTx, {Barrier, Arrivals, Bytes});
  }
  void barrierExpectTx(Arg Barrier, Arg Bytes);
  /// `debug_print "FORMAT", ...` (docs/LangRef.md §14): \p Format is the
  /// text itself (no escapes); the verifier checks it against the operands.
  void debugPrint(std::string Format, llvm::ArrayRef<Arg> Operands = {});
  void barrierWait(Arg Barrier, Arg Token);
  void barrierArriveAndWait(Arg Barrier);
  /// `memcpy_async[_tx] %bar, %src[%srcOffset], %dst[%dstOffset], %count`
  /// (\p Kind MemcpyAsync or MemcpyAsyncTx).
  void memcpyAsync(OpKind Kind, Arg Barrier, Arg Src, Arg SrcOffset, Arg Dst,
                   Arg DstOffset, Arg Count);

  // Tensor maps (docs/LangRef.md §17): \p Coords are i32, outermost first.
  /// `tma_load %bar, %smem, %offset, %map, %c0, ...`.
  void tmaLoad(Arg Barrier, Arg Shared, Arg Offset, Arg Map,
               llvm::ArrayRef<Arg> Coords);
  /// `tma_store %smem, %offset, %map, %c0, ...`.
  void tmaStore(Arg Shared, Arg Offset, Arg Map, llvm::ArrayRef<Arg> Coords);
  /// `tma_load_im2col %bar, %smem, %offset, %map, %c0, ... offsets %o0,
  /// ...` (§17.7): \p Offsets (u16) has one entry per spatial dimension,
  /// two fewer than \p Coords.
  void tmaLoadIm2col(Arg Barrier, Arg Shared, Arg Offset, Arg Map,
                     llvm::ArrayRef<Arg> Coords, llvm::ArrayRef<Arg> Offsets);
  void tmaCommit();
  /// `tma_wait_read %n` or `tma_wait %n` (\p Kind TmaWaitRead or TmaWait).
  void tmaWait(OpKind Kind, Arg Groups);

  // Cooperative matrix operations (docs/LangRef.md §5.4): a fragment is
  // declared, then filled, loaded, multiplied, cast and stored by the plane.
  ValueId fragment(const MatrixType &T);
  void cmmaFill(Arg Fragment, Arg Value);
  /// \p Layout: the memory layout of an accumulator's load (Undefined: the
  /// fragment's own).
  void cmmaLoad(Arg Fragment, Arg Mem, Arg Index, Arg Stride,
                MatrixLayout Layout = MatrixLayout::Undefined);
  void cmmaStore(Arg Mem, Arg Index, Arg Fragment, Arg Stride,
                 MatrixLayout Layout = MatrixLayout::Undefined);
  /// D = A x B + C.
  void cmmaMma(Arg D, Arg A, Arg B, Arg C);
  /// D = A x B + C with block scales (docs/LangRef.md §5.7): \p ScalesA and
  /// \p ScalesB are each unit's ue8m0 (or line of them).
  void cmmaMmaScaled(Arg D, Arg A, Arg B, Arg C, Arg ScalesA, Arg ScalesB);
  void cmmaCast(Arg Destination, Arg Source);
  /// The ldmatrix-style load (docs/LangRef.md §5.6): every unit of the plane
  /// names a row of \p Mem at \p Index; \p Transpose is `, trans`.
  void cmmaLdmatrix(Arg Fragment, Arg Mem, Arg Index, bool Transpose = false);
  /// A unit writes its element \p Nth of \p Fragment (§5.6). cmma_count,
  /// cmma_row, cmma_col and cmma_get produce values: build them with op().
  void cmmaSet(Arg Fragment, Arg Nth, Arg Value);

  // Control flow: every begin* is closed by end().
  void beginIf(Arg Cond);
  /// Switches the innermost open `if` to its else block.
  void beginElse();
  /// Opens `for %k = Lo to Hi [step Step]`; returns %k (typed as \p Lo).
  ValueId beginFor(Arg Lo, Arg Hi, std::optional<Arg> Step = std::nullopt);
  void beginLoop();
  /// Opens a switch; add its blocks with addCase/addDefault, then end().
  void beginSwitch(Arg Selector);
  /// Starts the block of `case Value` of the innermost open switch.
  void addCase(int64_t Value);
  /// The same for any label, u64 values from 2^63 up included
  /// (`addCase(CaseLabel::fromUnsigned(~0ull))`).
  void addCase(CaseLabel Value);
  /// Starts the block of a case with several labels, `case 1, 3, 5`: it runs
  /// when the selector equals any of them.
  void addCase(llvm::ArrayRef<int64_t> Labels);
  /// The same for labels of any value (a distinct name: `addCase({1, 2})`
  /// must stay unambiguous).
  void addCaseLabels(llvm::ArrayRef<CaseLabel> Labels);
  /// Starts the default block (last) of the innermost open switch.
  void addDefault();
  void end();
  void breakLoop() { jump(OpKind::Break); }
  void continueLoop() { jump(OpKind::Continue); }
  void returnUnit() { jump(OpKind::Return); }

  /// The type \p Kind implies for \p Operands, or none when nothing implies
  /// it (cast/bitcast/splat) or an operand is not a value of this kernel.
  std::optional<Type> impliedType(OpKind Kind,
                                  llvm::ArrayRef<Operand> Operands) const;

  /// The kernel, or the first misuse. Fails with constructs still open.
  llvm::Expected<IRKernel> finish();

private:
  struct Frame;
  bool fail(const llvm::Twine &Message);
  bool checkArgs(llvm::ArrayRef<Arg> Args);
  ValueId define(ValueInfo Info);
  /// Appends a var/shared/local_array declaration (Count 0 for a var).
  ValueId declareMemory(OpKind Kind, ValueKind Memory, Type Elem,
                        uint64_t Count);
  Block &currentBlock();
  void append(Operation Op);
  void jump(OpKind Kind);
  void cmma(OpKind Kind, llvm::ArrayRef<Arg> Operands,
            MatrixLayout Layout = MatrixLayout::Undefined);

  IRKernel K;
  std::vector<std::unique_ptr<Frame>> Open;
  llvm::StringSet<> Names; ///< every name given out, kernel-wide
  std::string PendingName;
  unsigned NextNumber = 0;
  std::optional<std::string> Error;
  bool Finished = false;
};

} // namespace kiln

#endif // KILN_IR_BUILDER_H
