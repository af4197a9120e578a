//===- LoweringImpl.h - The emitter of the lowering -----------*- C++ -*-===//
//
// The lowering is a pipeline (docs/Lowering.md, "Structure"):
//   UniformityInfo (kiln/IR/Uniformity.h)  divergent values
//   Segmentation.h      splits, interchanged fors, return flags
//   SegmentLiveness.h   per value: defining segment, slot, remat
//   Rematerialization.h values recomputed instead of kept
//   ScratchLayout.h     offsets in the per-worker scratch area
//   the emitters        this header: classes that share a LoweringContext
//     KernelLowering  Lowering.cpp          driver: function, cube loop,
//                                           metadata
//     TypeLowering    LowerTypes.cpp        LLVM types and constants
//     AliasScopes     LowerAliasScopes.cpp  alias.scope / noalias lists
//     UnitLoops       LowerUnitLoops.cpp    unit loop nests, return flags,
//                                           builtins (the current position)
//     ValueTable      LowerValues.cpp       values of operands, per segment
//     ScalarEmitter   LowerOps.cpp          scalar and line operations
//                     LowerCast.cpp         casts
//                     LowerMath.cpp         math intrinsics and libm calls
//                     LowerBF16.cpp         bf16 by hand (values are i16 bits)
//                     LowerDebugPrint.cpp   debug_print: a runtime call
//                     LowerMinifloat.cpp    minifloat casts (values are i8 codes)
//     MemoryEmitter   LowerMemory.cpp       buffers, shared/local arrays,
//                                           vars, atomics, per-unit slots
//     PlaneEmitter    LowerPlane.cpp        plane operations at cube level:
//                                           the scalar form
//                     LowerPlaneVector.cpp  the vector form
//     BarrierEmitter  LowerBarrier.cpp      barrier objects, async copies
//                     LowerTensor.cpp       tensor metadata, tensor map copies
//     CmmaEmitter     LowerCmma.cpp         cmma fragment operations, once
//                                           per plane at cube level
//     ControlEmitter  LowerControl.cpp      cube blocks, constructs at either
//                                           Level, jumps
//                     LowerInterchange.cpp  interchanged `for` loops
//                     LowerUnitBox.cpp      segments narrowed to a box
//   LoopVersioning.h    twins of unit loops without provable checks
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_LOWERINGIMPL_H
#define KILN_LIB_CPU_LOWERINGIMPL_H

#include "LoopVersioning.h"
#include "ScratchLayout.h"
#include "SegmentLiveness.h"
#include "Segmentation.h"

#include "kiln/CPU/Lowering.h"
#include "kiln/CPU/Pipeline.h"
#include "kiln/IR/Uniformity.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

#include <functional>
#include <optional>
#include <vector>

namespace kiln::lowering {

/// Where code is emitted: inside a unit loop (per unit) or outside the unit
/// loops (once per cube; split constructs and plane operations).
enum class Level : uint8_t { Unit, Cube };

/// A break/continue target on the loop stack.
struct LoopTarget {
  bool Hoisted = false; ///< a cube-level loop (contains a split)
  llvm::BasicBlock *Break =
      nullptr; ///< where break goes (cube level if hoisted)
  llvm::BasicBlock *Continue = nullptr;
  llvm::AllocaInst *BreakFlag = nullptr;    ///< hoisted only
  llvm::AllocaInst *ContinueFlag = nullptr; ///< hoisted only
};

/// A resolved memory access: where, and whether it is in bounds.
struct MemAccess {
  llvm::Value *Ptr = nullptr;
  llvm::Value *InBounds = nullptr; ///< i1, or null when not checked
  ValueKind Kind = ValueKind::Buffer;
  ValueId Mem = NoValue;
  /// The element in the private copy of a privatisable buffer, else null.
  llvm::Value *PrivPtr = nullptr;
  /// What Ptr is computed from: the memory's first element and the index's
  /// 64-bit extension.
  llvm::Value *Base = nullptr, *Index64 = nullptr;
};

/// How a kernel uses a parameter's tensor information (LowerTensor.cpp).
struct ParamTensorUse {
  bool ReadsTensorInfo = false; ///< metadata read, or a tensor map
  uint8_t MapRank = 0;          ///< coordinates of its copies, 0 if none
};
/// One entry per parameter of \p K.
std::vector<ParamTensorUse> findTensorUses(const IRKernel &K);

class MemoryEmitter;
class ScalarEmitter;
class UnitLoops;

/// The smallest jump between what one round or step reads and what the
/// next one reads from which on Kiln prefetches: within a page the hardware
/// prefetchers follow the reads themselves (LowerInterchange.cpp,
/// LowerStepPrefetch.cpp).
constexpr uint64_t PrefetchMinJumpBytes = 4096;

/// A read prefetch of \p Addr into the data cache, at LLVM's \p Locality
/// (3: L1, prefetcht0; 2: L2, prefetcht1). A hint: an address outside any
/// buffer is never accessed.
inline void emitReadPrefetch(llvm::IRBuilder<> &B, llvm::Value *Addr,
                             unsigned Locality) {
  B.CreateIntrinsic(llvm::Intrinsic::prefetch, {Addr->getType()},
                    {Addr, B.getInt32(0), B.getInt32(Locality), B.getInt32(1)});
}

/// What every emitter shares: the kernel and its variant, the module being
/// built with its builder and common types, and the results of the passes.
struct LoweringContext {
  LoweringContext(const IRKernel &K, const CpuVariant &Variant,
                  const DeviceLimits &Limits, llvm::LLVMContext &Ctx);

  const IRKernel &K;
  CpuVariant Variant;
  DeviceLimits Limits;
  llvm::LLVMContext &Ctx;
  std::unique_ptr<llvm::Module> M;
  llvm::Function *F = nullptr; ///< the cube function
  llvm::BasicBlock *EntryBB = nullptr;
  llvm::IRBuilder<> B;
  llvm::Type *I1, *I8, *I32, *I64, *Ptr;
  uint32_t Units = 1;
  uint32_t PlaneDim = 32;
  /// Whether a debug_print was lowered (CubeMetadata::UsesDebugPrint).
  bool UsesDebugPrint = false;
  /// The first error (fail); the lowering returns it at the end.
  llvm::Error Err = llvm::Error::success();

  // ---- Results of the passes ----
  const UniformityInfo *Uniformity = nullptr; ///< set by the driver
  std::optional<Segmentation> Seg;
  Liveness Live;
  ScratchLayout Layout;

  /// The launch's stop flag (CubeABI.h; a constant zero when the caller
  /// gave none) and the block that returns when it is set.
  llvm::Value *StopFlag = nullptr;
  llvm::BasicBlock *StopExit = nullptr;

  void fail(SourceLoc Loc, const llvm::Twine &Msg);
  /// At a loop's back edge or a cube's end: returns from the cube function
  /// when the launch is to stop (docs/Lowering.md, "Cancellation"), a
  /// relaxed load and a branch marked unlikely; continues in a new block.
  void emitStopPoll();
  llvm::BasicBlock *newBlock(const llvm::Twine &Name);
  llvm::AllocaInst *entryAlloca(llvm::Type *T, const llvm::Twine &Name);
  bool terminated() const { return B.GetInsertBlock()->getTerminator(); }
};

/// Kiln types and literals as LLVM types and constants (LowerTypes.cpp).
class TypeLowering {
public:
  explicit TypeLowering(LoweringContext &Cx) : Cx(Cx) {}
  llvm::Type *scalarType(ScalarKind K);
  llvm::Type *valueType(Type T);
  llvm::Type *memType(Type T); ///< bool as i8
  llvm::Constant *scalarConstant(ScalarKind K, uint64_t Bits);
  llvm::Constant *literal(const Literal &L);
  llvm::Value *toMem(llvm::Value *V, Type T);
  llvm::Value *fromMem(llvm::Value *V, Type T);

private:
  LoweringContext &Cx;
};

/// Alias scopes (docs/Design.md §10.3, LowerAliasScopes.cpp). Every buffer,
/// every shared/local array and scratch var, all value slots together, and
/// the return flags each have a scope of their own: none of them overlaps
/// another. In the MayAlias variant all buffers share one scope instead (they
/// may overlap each other, never scratch). Keyed by ValueId, or the two keys
/// below.
class AliasScopes {
public:
  static constexpr ValueId SlotKey = NoValue - 1;
  static constexpr ValueId FlagKey = NoValue - 2;

  explicit AliasScopes(LoweringContext &Cx) : Cx(Cx) {}
  /// Creates the scopes; needs the scratch layout.
  void setup();
  void tag(llvm::Instruction *I, ValueId Key);

private:
  LoweringContext &Cx;
  llvm::DenseMap<ValueId, llvm::MDNode *> ScopeOf;   ///< alias.scope list
  llvm::DenseMap<ValueId, llvm::MDNode *> NoAliasOf; ///< noalias list
};

/// The units a narrowed nest runs: [Begin[d], End[d]) along each dimension
/// d that has a range (i32, clamped to the dimension), all of it where
/// Begin[d] is null.
struct UnitBox {
  llvm::Value *Begin[3] = {}, *End[3] = {};
};

/// \p V (a wide signed integer) clamped to [0, Units], as i32.
llvm::Value *clampToUnits(llvm::IRBuilder<> &B, llvm::Value *V,
                          uint32_t Units);
/// The positions p in [0, Units) with `p Pred Edge` (Lt, Le, Gt, Ge or
/// Eq; Edge a wide signed integer, exact): sets Hi (Lt, Le), Lo (Gt, Ge)
/// or both (Eq) to the i32 bounds of that range; the other stays as given.
void unitsWhere(llvm::IRBuilder<> &B, OpKind Pred, llvm::Value *Edge,
                uint32_t Units, llvm::Value *&Lo, llvm::Value *&Hi);

/// Where code runs: the cube of the cube loop, the unit loop nests and the
/// current unit inside one, the units' "returned" flags, and the builtins
/// that read the position (LowerUnitLoops.cpp).
class UnitLoops {
public:
  UnitLoops(LoweringContext &Cx, AliasScopes &Scopes, MemoryEmitter &Memory)
      : Cx(Cx), Scopes(Scopes), Memory(Memory) {}
  /// Emits one unit loop nest whose body for the current unit is \p Body.
  /// With \p Begin and \p End (i32, Begin <= End <= Units not required:
  /// nothing runs when Begin >= End), a one-dimensional cube's unit loop
  /// runs over units [Begin, End) only (a narrowed segment, UnitRange.h),
  /// every \p Step-th unit from Begin (an i32 in [1, 2^31); null: 1).
  /// With \p Box, each dimension's loop runs over the box's range of that
  /// dimension (where it has one; UnitRange.h, UnitBoxCondition). With
  /// \p Cold, the nest is a fallback that practically never runs: kept
  /// scalar.
  void emitNest(llvm::function_ref<void()> Body, llvm::Value *Begin = nullptr,
                llvm::Value *End = nullptr, llvm::Value *Step = nullptr,
                const UnitBox *Box = nullptr, bool Cold = false);
  void emitCountedLoop(llvm::Value *Begin, llvm::Value *End,
                       llvm::function_ref<void(llvm::Value *)> Body,
                       const llvm::Twine &Name);
  llvm::Value *unitFinished(llvm::Value *Unit);
  /// `return` of the current unit: sets its flag and leaves its iteration.
  void markReturned();
  /// The first unit of the cube that has not returned (Units when none).
  llvm::Value *firstActiveUnit();
  /// The unit whose values stand for the cube's uniform ones before a
  /// segment: the first unit still running (unit 0 when none is: then no
  /// unit runs anyway), the first unit passing the guards inside a guarded
  /// `if`.
  llvm::Value *unitForUniforms();
  /// Branches to \p Skip when every unit has returned; returns the unit
  /// whose values stand for the cube.
  llvm::Value *firstActiveOrSkip(llvm::BasicBlock *Skip);
  /// At cube level, with return flags: branches to \p Exit when every unit
  /// has returned, else continues in a new block named \p Live.
  void exitWhenAllReturned(llvm::BasicBlock *Exit, const char *Live);
  /// unit_pos, cube_pos, cube_dim, ... (docs/Lowering.md §3).
  llvm::Value *emitBuiltin(const Operation &Op);
  /// What \p Emit emits with the current unit taken to be \p U (its x, y, z
  /// recomputed from it); the unit loop's own unit afterwards.
  llvm::Value *atUnit(llvm::Value *U, llvm::function_ref<llvm::Value *()> Emit);

  // ---- The cube (set by the driver's cube loop) ----
  llvm::Value *CubeLinear = nullptr, *CubePos[3] = {}, *CubeCount[3] = {};
  // ---- The current unit ----
  llvm::Value *Unit = nullptr; ///< (i32), null at cube level
  /// unit_pos.x/.y/.z of the current unit: the induction variables of the
  /// nested unit loops (a constant 0 for a dimension of size 1).
  llvm::Value *UnitXYZ[3] = {};
  llvm::BasicBlock *UnitLatch = nullptr;
  llvm::MDNode *AccessGroup = nullptr;
  /// Set while a nest is emitted when its body has an atomic on shared
  /// memory or on a privatisable buffer (a plain read-modify-write at a
  /// loaded index, or a real atomic): the vectoriser keeps such a loop
  /// scalar, so its innermost loop is unrolled by a fixed count instead
  /// (§13).
  bool ScalarRMW = false;
  /// Set while a nest is emitted when its body holds a flattened `if`
  /// (ControlEmitter::lowerFlattenedIf): its innermost loop is marked for
  /// vectorisation.
  bool FlattenedIf = false;
  /// Set while an interchanged loop's rounds are emitted: absolute_pos is
  /// then computed with nuw (UnitLoops::emitBuiltin, §13 fix 6).
  bool NoWrapPositions = false;
  /// Headers of the innermost unit loops, in emission order (for
  /// LoopVersioning.h).
  std::vector<llvm::BasicBlock *> InnerUnitHeaders;
  /// Set while the body of a guarded `if` whose condition is a unit range
  /// is lowered at cube level (i32): every unit loop runs over units
  /// [RangeBegin, RangeEnd) only (a one-dimensional cube).
  llvm::Value *RangeBegin = nullptr, *RangeEnd = nullptr;
  /// The dimension whose loop is the innermost of the next nest (0: x),
  /// chosen per segment by AccessPatterns::innermostDim.
  unsigned InnerDim = 0;
  /// The conditions of the guarded ifs whose bodies are being lowered at
  /// cube level, outermost first, each for unit \p U (null: the current
  /// unit); a unit loop skips the units where one does not hold.
  std::vector<std::function<llvm::Value *(llvm::Value *U)>> Guards;
  /// While Guards is not empty: the first unit for which all hold, which
  /// stands for the cube where a cube-level construct reads a uniform value
  /// (a kernel with guarded ifs has no `return`).
  llvm::Value *GuardFirst = nullptr;

private:
  LoweringContext &Cx;
  AliasScopes &Scopes;
  MemoryEmitter &Memory;
};

/// The LLVM values of the kernel's values (LowerValues.cpp): cube-level
/// values, those of the current segment, per-unit slots and recomputation.
class ValueTable {
public:
  ValueTable(LoweringContext &Cx, TypeLowering &Types, UnitLoops &Pos,
             ScalarEmitter &Scalar, MemoryEmitter &Memory)
      : Cx(Cx), Types(Types), Pos(Pos), Scalar(Scalar), Memory(Memory) {}
  /// The value of \p O in the current context: a literal, a value of the
  /// current segment, a cube-level value, or the per-unit slot of \p Unit
  /// (the current unit when null).
  llvm::Value *value(const Operand &O, llvm::Value *Unit = nullptr);
  llvm::Value *operand(const Operation &Op, unsigned I) {
    return value(Op.Operands[I]);
  }
  /// Lane \p Lane of the line \p O where value() would load the whole
  /// line from its per-unit slot: a load of that one element, tagged as a
  /// slot access. Null elsewhere (the caller extracts from value()). LLVM
  /// 19's VectorCombine turns a line load feeding one extract into such a
  /// load itself, but drops its alias scopes, and the vectoriser then
  /// guards the unit loop with a runtime overlap check and a scalar copy
  /// (docs/Lowering.md §5).
  llvm::Value *slotLane(const Operand &O, unsigned Lane);
  Type operandType(const Operand &O) const {
    return O.isLiteral() ? O.Lit.Ty : Cx.K.value(O.Value).Ty;
  }
  /// A value of the current segment (kept in its slot when it needs one).
  void define(ValueId Id, llvm::Value *V);

  llvm::DenseMap<ValueId, llvm::Value *> CubeValues; ///< params, hoisted IVs
  llvm::DenseMap<ValueId, llvm::Value *> SegValues;  ///< current segment
  /// Comparisons whose value the current nest knows (split unit loops,
  /// LowerUnitBox.cpp): lowered, or recomputed, as that constant.
  llvm::DenseMap<const Operation *, bool> Known;

private:
  LoweringContext &Cx;
  TypeLowering &Types;
  UnitLoops &Pos;
  ScalarEmitter &Scalar;
  MemoryEmitter &Memory;
};

/// Scalar and line operations with the exact semantics of docs/LangRef.md
/// §5: LowerOps.cpp, LowerCast.cpp, LowerMath.cpp, LowerBF16.cpp.
class ScalarEmitter {
public:
  ScalarEmitter(LoweringContext &Cx, TypeLowering &Types, ValueTable &Values,
                UnitLoops &Pos)
      : Cx(Cx), Types(Types), Values(Values), Pos(Pos) {}
  llvm::Value *lowerValueOp(const Operation &Op);
  /// debug_print: a call of the runtime (LowerDebugPrint.cpp).
  void lowerDebugPrint(const Operation &Op);
  llvm::Value *emitBinary(OpKind Kind, Type T, llvm::Value *A, llvm::Value *B);
  llvm::Value *emitMinMax(bool IsMax, Type T, llvm::Value *A, llvm::Value *B);
  llvm::Value *emitUnary(OpKind Kind, Type T, llvm::Value *A);
  llvm::Value *emitCompare(OpKind Kind, Type T, llvm::Value *A, llvm::Value *B);
  llvm::Value *emitDot(Type T, llvm::Value *A, llvm::Value *B);
  llvm::Value *emitCast(llvm::Value *V, Type From, Type To);
  llvm::Value *emitMath(OpKind Kind, Type T,
                        llvm::ArrayRef<llvm::Value *> Args);
  llvm::Value *emitLibm(llvm::StringRef Name, Type T,
                        llvm::ArrayRef<llvm::Value *> Args);
  // bf16 is computed by hand (LowerBF16.cpp): LLVM 19's x86 lowering
  // flushes bf16 subnormals and calls __truncdfbf2, absent at run time.
  llvm::Value *bf16ToF32(llvm::Value *V);
  llvm::Value *f32ToBF16(llvm::Value *V);
  llvm::Value *f64ToBF16(llvm::Value *V);
  llvm::Value *intToBF16(llvm::Value *V, Type From);
  /// A 64-bit integer as an f64 that any later rounding to 32 significant
  /// bits or fewer rounds like the integer itself (a sticky bit).
  llvm::Value *intToF64Sticky(llvm::Value *V, Type From);
  // Minifloats are i8 codes; casts decode to f32 and encode from f32/f64
  // by hand (LowerMinifloat.cpp).
  llvm::Value *emitMinifloatCast(llvm::Value *V, Type From, Type To);
  llvm::Value *encodeMinifloat(llvm::Value *V, Type From, Type To);
  llvm::Value *minifloatToF32(llvm::Value *Code, ScalarKind Kind);
  llvm::Value *floatToMinifloat(llvm::Value *V, ScalarKind Kind);
  llvm::Value *floatToUE8M0(llvm::Value *V);
  llvm::Value *unpackPairs(llvm::Value *V);
  llvm::Value *packPairs(llvm::Value *Codes, bool Scalar);
  /// a*b+c for f64 operands widened from f16/bf16 (so a*b is exact), as an
  /// f64 that rounds to the narrow type like the exact result: the f64 sum's
  /// rounding error (TwoSum) nudges it one ulp so that a tie cannot mislead
  /// the second rounding.
  llvm::Value *narrowFmaInF64(llvm::Value *A, llvm::Value *B, llvm::Value *C);

private:
  LoweringContext &Cx;
  TypeLowering &Types;
  ValueTable &Values;
  UnitLoops &Pos;
};

/// Buffers, shared/local arrays, vars, atomics and per-unit slots in the
/// scratch area (LowerMemory.cpp).
class MemoryEmitter {
public:
  MemoryEmitter(LoweringContext &Cx, TypeLowering &Types, AliasScopes &Scopes,
                UnitLoops &Pos, ValueTable &Values, ScalarEmitter &Scalar)
      : Cx(Cx), Types(Types), Scopes(Scopes), Pos(Pos), Values(Values),
        Scalar(Scalar) {}
  llvm::Value *lowerMemoryOp(const Operation &Op);
  /// shape, stride, rank, tensor_len (LowerTensor.cpp, docs/LangRef.md §16).
  llvm::Value *emitTensorMeta(const Operation &Op);
  /// The u32 at byte \p Offset + 4 * \p Index (i32, null: 0) of parameter
  /// \p Param's TensorInfo (CubeABI.h); \p Default (i32) when the launch
  /// gave no table.
  llvm::Value *tensorField(ValueId Param, uint64_t Offset, llvm::Value *Index,
                           llvm::Value *Default);
  llvm::Value *memCount(ValueId Mem);
  llvm::Value *scratchPtr(uint64_t Offset);
  llvm::Value *loadSlot(ValueId Id, llvm::Value *Unit);
  /// Lane \p Lane of the line in \p Id's slot for \p Unit, alone; null
  /// when the line's lanes are narrower than a byte.
  llvm::Value *loadSlotLane(ValueId Id, llvm::Value *Unit, unsigned Lane);
  void storeSlot(ValueId Id, llvm::Value *Unit, llvm::Value *V);
  /// The slots of \p Id for units [First, First + N) as one vector of
  /// memory values (<N x memType>, <N*L x elem> for lines of L lanes), for
  /// the plane operations' vector form (LowerPlaneVector.cpp). Only the
  /// first \p Len units are read (a masked load when Len < N); the lanes of
  /// the others are \p PassThru's (zero when null).
  llvm::Value *loadSlotVector(ValueId Id, llvm::Value *First, unsigned N,
                              unsigned Len, llvm::Value *PassThru = nullptr);
  /// Stores \p V (as loadSlotVector gives it) to the slots of the first
  /// \p Len of the units from \p First.
  void storeSlotVector(ValueId Id, llvm::Value *First, llvm::Value *V,
                       unsigned Len);
  /// The return flags (u8, non-zero: returned) of units [First, First + N)
  /// as <N x i8>; units from \p Len on read as returned.
  llvm::Value *loadFlagVector(llvm::Value *First, unsigned N, unsigned Len);

  // ---- Set by the driver ----
  llvm::Value *Scratch = nullptr; ///< the cube function's scratch argument
  /// LaunchArgs::Tensors, when the kernel reads tensor information.
  llvm::Value *TensorTable = nullptr;
  llvm::DenseMap<ValueId, llvm::Value *> BufBase, BufCount;
  /// Index values whose 64-bit extension is known as another value (the
  /// interchanged loop's variable: its 64-bit round sum; LowerInterchange.cpp),
  /// and whether that is the sign-extension. An operand of the other
  /// signedness can be the same LLVM value (a cast from i8 to u8 is no
  /// instruction), so it is looked up with its signedness too.
  struct WideIndexEntry {
    llvm::Value *Wide = nullptr;
    bool Signed = false;
  };
  llvm::DenseMap<llvm::Value *, WideIndexEntry> WideIndex;
  /// Privatisable buffers (AtomicPrivatization.h): whether this launch
  /// privatises them (i1) and their private copy's base (CubeABI.h).
  llvm::DenseMap<ValueId, llvm::Value *> PrivOn, PrivBase;
  /// Per parameter: findPrivatizableBuffers, for the metadata.
  std::vector<PrivateAtomic> Private;
  /// The bounds checks emitted, for LoopVersioning.h.
  std::vector<BoundsGuard> Guards;
  /// Set while the body of a flattened `if` is lowered (i1: the unit's path
  /// takes it): a `set` keeps the variable's value where it is false, and a
  /// `load` reads element 0, or a zero cell, where its index is out of
  /// bounds, so that it can run for any unit (ControlEmitter::
  /// lowerFlattenedIf).
  llvm::Value *Predicate = nullptr;

private:
  /// \p Mem's element at \p Index. \p AlwaysCheck: InBounds is computed
  /// in the unchecked variant too, and kept out of Guards.
  MemAccess resolveAccess(ValueId Mem, const Operand &Index,
                          bool AlwaysCheck = false);
  /// A load that is safe for any index (lowerFlattenedIf): the index is
  /// replaced by 0 where it is out of bounds, and a buffer of no elements
  /// by a cell of zeros; the checked variant's result is 0 there.
  llvm::Value *emitSpeculatedLoad(const Operation &Op);
  /// A constant global of 256 zero bytes, 64-byte aligned: one element of
  /// any type a flattened `if` reads (flattensIf refuses larger ones).
  llvm::Value *zeroCell();
  llvm::Value *guarded(llvm::Value *InBounds, Type ResultTy,
                       llvm::function_ref<llvm::Value *()> Emit);
  void tagAccess(llvm::Instruction *I, ValueKind Kind, ValueId Mem,
                 bool Parallel);
  llvm::Value *slotPtr(uint64_t Offset, uint64_t Stride, llvm::Value *Unit);
  /// A load of \p N elements of \p VT's element type from \p Ptr, aligned
  /// to \p Al, masked to the first \p Len units' elements; tagged \p Key.
  llvm::Value *loadVector(llvm::FixedVectorType *VT, llvm::Value *Ptr,
                          llvm::Align Al, unsigned N, unsigned Len,
                          llvm::Value *PassThru, ValueId Key);
  llvm::Value *varPtr(ValueId Var);
  llvm::Value *emitAtomic(const Operation &Op);
  /// An atomic on a buffer of lines: one atomic per lane (LangRef §12.3).
  llvm::Value *emitLineAtomic(const Operation &Op, llvm::Value *Ptr);

  LoweringContext &Cx;
  TypeLowering &Types;
  AliasScopes &Scopes;
  UnitLoops &Pos;
  ValueTable &Values;
  ScalarEmitter &Scalar;
  llvm::DenseMap<ValueId, llvm::AllocaInst *> VarAllocas;
};

/// The lanes [Lo, Hi) of one plane whose result slots a plane operation of
/// the vector form stores; none (Lo >= Hi): the plane's operation is not
/// computed (LowerPlaneVector.cpp).
struct PlaneLanes {
  unsigned Lo = 0, Hi = 0;
  bool empty() const { return Lo >= Hi; }
  bool operator==(const PlaneLanes &O) const {
    return Lo == O.Lo && Hi == O.Hi;
  }
};

/// Plane operations, computed at cube level over every unit's slot
/// (LowerPlane.cpp).
class PlaneEmitter {
public:
  PlaneEmitter(LoweringContext &Cx, TypeLowering &Types, UnitLoops &Pos,
               ValueTable &Values, ScalarEmitter &Scalar, MemoryEmitter &Memory)
      : Cx(Cx), Types(Types), Pos(Pos), Values(Values), Scalar(Scalar),
        Memory(Memory) {}
  /// One plane operation in the scalar form: per plane, a loop over its
  /// lanes (the fallback of the vector form; reports malformed operations).
  void lowerPlaneOp(const Operation &Op);
  /// Consecutive plane operations, in order: each run of those with a
  /// vector form shares one loop over planes (planes are independent, so
  /// running them plane by plane gives the same results).
  void lowerPlaneOps(llvm::ArrayRef<const Operation *> Ops);

private:
  /// Reports a malformed plane operation; false if \p Op is one.
  bool checkOperands(const Operation &Op);
  /// The neutral element of a plane reduction over \p T.
  llvm::Constant *identity(OpKind Kind, Type T);
  /// Acc op X; also on vectors of T (the vector form).
  llvm::Value *combine(OpKind Kind, Type T, llvm::Value *Acc, llvm::Value *X);
  /// Keeps the loop over planes ending at \p Exit a loop (LowerPlane.cpp).
  static void keepLoopOverPlanesEndingAt(llvm::BasicBlock *Exit);

  // ---- The vector form (LowerPlaneVector.cpp, docs/Lowering.md §6) ----
  /// Whether \p Op runs as <P x T> operations on whole planes.
  bool vectorFormApplies(const Operation &Op) const;
  void lowerAsVectors(llvm::ArrayRef<const Operation *> Ops);
  /// \p Op on the plane of units [Base, Base + Len), Len <= P, its results
  /// stored for the lanes \p Stored only.
  void emitVectorPlane(const Operation &Op, llvm::Value *Base, unsigned Len,
                       PlaneLanes Stored);
  /// Stores the lanes \p S of \p V (a plane's results as memory values,
  /// as loadSlotVector gives them) to their slots of \p R.
  void storeLanes(ValueId R, llvm::Value *Base, llvm::Value *V, unsigned Len,
                  PlaneLanes S);
  /// \p O for the units [Base, Base + P) as <P x memType> (lanes from Len
  /// on unspecified).
  llvm::Value *laneVector(const Operand &O, llvm::Value *Base, unsigned Len);
  /// <P x i1>: the lanes below \p Len that have not returned; null when
  /// that is every lane.
  llvm::Value *activeLanes(llvm::Value *Base, unsigned Len);
  llvm::Value *vectorReduce(OpKind Kind, Type T, llvm::Value *V);
  llvm::Value *vectorScan(OpKind Kind, Type T, llvm::Value *V);
  llvm::Value *vectorLaneOp(const Operation &Op, llvm::Value *V,
                            llvm::Value *Base, unsigned Len);
  /// The lane operand \p O as one i32 for the whole plane when it is the
  /// same for every unit and can be had without a slot; else null.
  llvm::Value *uniformLane(const Operand &O, llvm::Value *Base);
  /// A lane operation whose operand \p Arg (i32) is the same for every
  /// lane: constant shufflevectors selected by Arg's bits.
  llvm::Value *uniformLaneOp(OpKind Kind, llvm::Value *V, llvm::Value *Arg,
                             unsigned Len);
  /// What an inactive lane contributes to a vector reduction or scan.
  llvm::Constant *vectorNeutral(OpKind Kind, Type T);

  LoweringContext &Cx;
  TypeLowering &Types;
  UnitLoops &Pos;
  ValueTable &Values;
  ScalarEmitter &Scalar;
  MemoryEmitter &Memory;
};

/// Barrier objects and asynchronous copies (LowerBarrier.cpp,
/// docs/Lowering.md "Barrier objects"). A barrier's state is four u32
/// words (pending arrivals, expected arrivals, completed phases, pending
/// transaction bytes), updated by small internal functions of the module;
/// copies run at once, element by element. A cube's barrier is declared and
/// waited on at cube level (they are splits); everything else runs per unit.
class BarrierEmitter {
public:
  BarrierEmitter(LoweringContext &Cx, UnitLoops &Pos, ValueTable &Values,
                 MemoryEmitter &Memory)
      : Cx(Cx), Pos(Pos), Values(Values), Memory(Memory) {}
  /// An operation inside a unit loop; the token of an arrival, else null.
  llvm::Value *lowerUnitOp(const Operation &Op);
  /// barrier_cube, and waits on a cube's barrier, between unit loops.
  void lowerCubeOp(const Operation &Op);

  /// KernelFault * of the launch, possibly null (set by the driver).
  llvm::Value *FaultSlot = nullptr;

private:
  /// The state of barrier \p Bar: the cube's, or the current unit's.
  llvm::Value *statePtr(ValueId Bar);
  /// "barrier_wait %bar at 3:5 (operation #7)" as a constant string.
  llvm::Value *siteOf(const Operation &Op);
  /// Arrivals and transaction bytes (i32, \p TxDelta signed) on \p State;
  /// returns the token (the phase arrived at).
  llvm::Value *update(llvm::Value *State, llvm::Value *Arrivals,
                      llvm::Value *TxDelta, const Operation &Op);
  /// Faults unless the phase \p Token of \p State has completed.
  void checkCompleted(llvm::Value *State, llvm::Value *Token,
                      const Operation &Op);
  void init(llvm::Value *State, llvm::Value *Count);
  void emitCopy(const Operation &Op);
  /// tma_load and tma_store (LowerTensor.cpp, docs/LangRef.md §17).
  void emitTensorCopy(const Operation &Op);
  /// tma_load_im2col (LowerTensor.cpp, docs/LangRef.md §17.7).
  void emitIm2colLoad(const Operation &Op);
  /// Base address of array \p Mem for the current unit.
  llvm::Value *arrayBase(ValueId Mem);
  llvm::Value *operandI32(const Operand &O, llvm::Value *Unit = nullptr);
  llvm::Function *updateFunction();
  llvm::Function *faultFunction();

  LoweringContext &Cx;
  UnitLoops &Pos;
  ValueTable &Values;
  MemoryEmitter &Memory;
  llvm::Function *UpdateFn = nullptr, *FaultFn = nullptr;
  llvm::DenseMap<const Operation *, unsigned> OpNumbers;
};

/// Cooperative matrix operations (LowerCmma.cpp, docs/Lowering.md §14): at
/// cube level, once per plane that has a unit still running, with the
/// operands of the plane's first such unit. A fragment is one f32 matrix per
/// plane in scratch, row-major, every element exactly a value of the
/// fragment's element type.
class CmmaEmitter {
public:
  CmmaEmitter(LoweringContext &Cx, TypeLowering &Types, AliasScopes &Scopes,
              UnitLoops &Pos, ValueTable &Values, ScalarEmitter &Scalar,
              MemoryEmitter &Memory)
      : Cx(Cx), Types(Types), Scopes(Scopes), Pos(Pos), Values(Values),
        Scalar(Scalar), Memory(Memory) {}
  void lowerCmmaOp(const Operation &Op);
  /// cmma_count, cmma_row, cmma_col, cmma_get (their value) and cmma_set
  /// (null), for the current unit inside a unit loop.
  llvm::Value *lowerUnitOp(const Operation &Op);

private:
  /// Runs \p Body for each plane with a unit that has not returned, given
  /// the plane (i32) and that unit (i32); with \p Cube, once for the cube
  /// (plane 0) if a unit has not returned.
  void forEachActivePlane(
      bool Cube,
      llvm::function_ref<void(llvm::Value *Plane, llvm::Value *Unit)> Body);
  /// The plane's copy of fragment \p F (f32 elements, row-major).
  llvm::Value *fragmentPtr(ValueId F, llvm::Value *Plane);
  void emitFill(const Operation &Op, llvm::Value *Plane, llvm::Value *Unit);
  /// cmma_load (\p Store false) or cmma_store.
  void emitTransfer(const Operation &Op, llvm::Value *Plane, llvm::Value *Unit,
                    bool Store);
  void emitMma(const Operation &Op, llvm::Value *Plane);
  /// Columns [Col0, Col0 + Width) of D = A x B + C.
  void emitMmaStrip(const MatrixType &DT, llvm::Value *APtr,
                    llvm::Value *BPtr, llvm::Value *CPtr, llvm::Value *DPtr,
                    ValueId AId, ValueId BId, ValueId CId, ValueId DId,
                    unsigned Col0, unsigned Width);
  /// cmma_load of an f4e2m1 fragment from packed f4e2m1x2 memory.
  void emitPackedFp4Load(const Operation &Op, llvm::Value *Plane,
                         llvm::Value *Unit);
  /// D = A x B + C on i8/u8 fragments with i32 accumulators.
  void emitIntMma(const MatrixType &DT, llvm::Value *APtr, llvm::Value *BPtr,
                  llvm::Value *CPtr, llvm::Value *DPtr, ValueId AId,
                  ValueId BId, ValueId CId, ValueId DId);
  /// cmma_mma_scaled (docs/LangRef.md §5.7) for the plane \p Plane.
  void emitScaledMma(const Operation &Op, llvm::Value *Plane);
  /// Lane \p L of the scales \p Scales (a ue8m0 or a line of \p Lanes of
  /// them) that unit \p Lane (i32) of the plane starting at unit
  /// \p PlaneBase supplies, as the f64 2^(e - 127); 1 for a unit that has
  /// returned or that the cube lacks.
  llvm::Value *emitScale(const Operand &Scales, llvm::Value *PlaneBase,
                         llvm::Value *Lane, unsigned Lanes, unsigned L);
  /// cmma_ldmatrix for the plane \p Plane: a row from each of its units.
  void emitLdmatrix(const Operation &Op, llvm::Value *Plane);
  /// The row and column (i32) of element \p Nth (i32) of unit \p Lane
  /// (i32, its position in the plane or cube) of fragment type \p T.
  std::pair<llvm::Value *, llvm::Value *>
  emitElementPosition(const MatrixType &T, llvm::Value *Lane,
                      llvm::Value *Nth);
  void emitCast(const Operation &Op, llvm::Value *Plane);
  /// f32 lanes (scalar or vector) rounded to \p Elem and widened back.
  llvm::Value *roundTo(llvm::Value *V, ScalarKind Elem);
  /// Memory values of \p Elem widened to f32, and back (rounding).
  llvm::Value *toF32(llvm::Value *V, ScalarKind Elem);
  llvm::Value *fromF32(llvm::Value *V, ScalarKind Elem);
  void tag(llvm::Instruction *I, ValueId Key) { Scopes.tag(I, Key); }

  LoweringContext &Cx;
  TypeLowering &Types;
  AliasScopes &Scopes;
  UnitLoops &Pos;
  ValueTable &Values;
  ScalarEmitter &Scalar;
  MemoryEmitter &Memory;
};

/// Blocks and control flow: a block lowered at cube level is cut into unit
/// loops and split operations; each control construct has one emitter for
/// both levels (LowerControl.cpp, LowerInterchange.cpp).
/// A comparison a split unit loop knows, with its one bound.
struct SplitComparison {
  const Operation *Op;
  UnitBoxCondition Box;
};

class ControlEmitter {
public:
  ControlEmitter(LoweringContext &Cx, UnitLoops &Pos, ValueTable &Values,
                 ScalarEmitter &Scalar, MemoryEmitter &Memory,
                 PlaneEmitter &Plane, BarrierEmitter &Barriers,
                 CmmaEmitter &Cmma)
      : Cx(Cx), Pos(Pos), Values(Values), Scalar(Scalar), Memory(Memory),
        Plane(Plane), Barriers(Barriers), Cmma(Cmma) {}
  void lowerCubeBlock(const Block &Blk);
  /// At the start of a cube: branches to \p Skip when the box of \p Box is
  /// empty, exactly, for this cube (the kernel's cube guard, CubeGuard.h:
  /// then no unit has anything to do that is seen outside the cube), and to
  /// \p SkipRow when it is empty for every cube that follows this one along
  /// the grid dimension \p WalkDim up to the grid's edge too (past an upper
  /// bound along it, or empty along another dimension that is the same for
  /// those cubes). Emits nothing when a bound is not available there, or
  /// in a kernel of one segment when no row can be skipped.
  void skipCubeOutside(const UnitBoxCondition &Box, llvm::BasicBlock *Skip,
                       llvm::BasicBlock *SkipRow, unsigned WalkDim);

private:
  /// The ranges of \p Box for this cube, its bounds evaluated for unit \p At
  /// (Pos.unitForUniforms() when null) with \p Prefix; \p Exact: whether
  /// every index is exact for every unit of the cube.
  UnitBox boxSpan(const UnitBoxCondition &Box,
                  llvm::ArrayRef<const Operation *> Prefix,
                  llvm::Value *&Exact, llvm::Value *At = nullptr);
  /// In a cube of two or three dimensions, whether \p Span is the whole
  /// cube (an i1 computed at the insertion point); null for a
  /// one-dimensional cube or a box that bounds no dimension.
  llvm::Value *wholeCube(const UnitBox &Span);
  /// Whether \p O can be computed before the cube's first segment: a
  /// literal, a parameter, or recomputed from those.
  bool availableAtCubeStart(const Operand &O, unsigned Depth = 0);
  /// Whether \p O is the same for every cube of a launch: a literal, a
  /// parameter, cube_dim, cube_count or plane_dim, or pure operations of
  /// those.
  bool launchInvariant(const Operand &O, unsigned Depth = 0);
  /// One unit loop nest (a segment) running \p Ops.
  void emitSegment(llvm::ArrayRef<const Operation *> Ops);
  /// A segment with a comparison of the box form (UnitBoxCondition) on one
  /// dimension that a `select` of the segment reads: the dimension's loop
  /// split where the comparison changes (emitSplitNests). False (nothing
  /// emitted) where no such comparison is found.
  bool emitSplitSegment(llvm::ArrayRef<const Operation *> Ops);
  /// The comparisons a split of the unit loops of \p Ops would know
  /// (docs/Lowering.md §4, "Split unit loops"): the conditions of the
  /// selects they run, computed in the segment or recomputed in it, of the
  /// box form on one dimension; empty when \p Ops may not be split.
  llvm::SmallVector<SplitComparison, 4>
  splitComparisons(llvm::ArrayRef<const Operation *> Ops);
  /// One unit loop nest over \p Span (the cube when null) running \p Body,
  /// its loop along the comparisons' dimension split where they change:
  /// one comparison: [lo, hi) where it holds and the two ranges around it;
  /// several (each one bound, not `eq`): the range where none holds and the
  /// two around it, tested per unit. Plain when \p Cmps is empty or a
  /// bound is not exact.
  void emitSplitNests(llvm::function_ref<void()> Body, const UnitBox *Span,
                      llvm::ArrayRef<SplitComparison> Cmps);
  /// One unit loop nest whose body for the current unit is \p Body, then
  /// the break/continue of a cube-level loop its units asked for.
  void emitSegmentWith(llvm::function_ref<void()> Body,
                       llvm::Value *Begin = nullptr, llvm::Value *End = nullptr,
                       llvm::Value *Step = nullptr, const UnitBox *Box = nullptr,
                       bool Cold = false);
  /// A segment that is pure operations then an `if` whose condition has
  /// conjuncts of the box form (UnitBoxCondition): runs each dimension's
  /// loop over the box only, and tests the other conjuncts (if any) per
  /// unit inside it. Where the box's indices are not exact for every unit
  /// of the cube (a check at run time, per cube), a scalar copy of the
  /// whole segment runs instead. False (nothing emitted) otherwise.
  /// \p Outer: the box of an enclosing boxed `if` whose body this `if`
  /// ends (its ranges are intersected with this one's).
  bool emitBoxedSegment(const Operation &If,
                        llvm::ArrayRef<const Operation *> Prefix,
                        const UnitBox *Outer = nullptr);
  /// Whether the operations \p Before of a segment can run for every unit
  /// in a loop of their own ahead of the narrowed `if` \p If (a box or a
  /// modular guard; see emitSplitNarrowedSegment); \p Recomputed gets the
  /// operations of them the `if` needs, to evaluate again in its own loop:
  /// pure ones, and reads of variables kept per unit that \p Before does
  /// not set.
  bool splitBeforeNarrowedIf(
      const Operation &If, llvm::ArrayRef<const Operation *> Before,
      llvm::SmallVectorImpl<const Operation *> &Recomputed);
  /// A segment whose operations before such an `if` have effects (a `set`
  /// of a variable kept per unit, a store, control flow with a uniform
  /// `break`) or values kept per unit: those run for every unit in a unit
  /// loop of their own, then the `if` as a boxed or stepped segment,
  /// recomputing what it needs. The units of a segment are unordered, so
  /// running each unit's operations before the `if` first changes nothing
  /// a kernel may rely on. False (nothing emitted) when the `if` needs a
  /// value of another operation with effects, a variable kept for the
  /// segment only is set, or the prefix may `return`.
  bool emitSplitNarrowedSegment(const Operation &If,
                                llvm::ArrayRef<const Operation *> Prefix);
  /// The segment \p Prefix then `if` \p If on the modular guard \p G:
  /// a loop over every m-th unit, without the `if`.
  void emitSteppedSegment(const Operation &If, const UnitRangeGuard &G,
                          llvm::ArrayRef<const Operation *> Prefix);
  /// The cube-uniform \p Wanted evaluated for unit \p At, with the pure
  /// operations of \p Prefix they are computed from.
  void uniformsAt(llvm::Value *At, llvm::ArrayRef<const Operation *> Prefix,
                  llvm::ArrayRef<Operand> Wanted,
                  llvm::SmallVectorImpl<llvm::Value *> &Out);
  /// A segment that is pure operations then an `if` on `unit + c OP
  /// uniform` (UnitRange.h): runs the unit loop over the units where the
  /// condition holds, without the `if`. False (nothing emitted) otherwise.
  bool emitNarrowedSegment(llvm::ArrayRef<const Operation *> Ops);
  /// The units [Lo, Hi) of a one-dimensional cube for which the range
  /// guard \p G holds (Lo, Hi i32 in [0, units]; Step the modulus, an i32
  /// in [1, units], or null for 1),
  /// its bound read for unit \p At; \p Prefix: pure operations the bound
  /// may be computed from, evaluated at cube level.
  void unitRangeOf(const UnitRangeGuard &G, llvm::Value *At,
                   llvm::ArrayRef<const Operation *> Prefix, llvm::Value *&Lo,
                   llvm::Value *&Hi, llvm::Value *&Step);
  /// A guarded `if` (Segmentation::isGuardedIf): its body at cube level,
  /// every unit loop running the units whose condition holds (narrowed to
  /// their range when it is one); nothing when no unit's does.
  void lowerGuardedIf(const Operation &Op);
  /// Runs an interchanged `for` (isInterchangeable) as rounds r = 0, 1, ...
  /// with a unit loop inside each: unit u runs its iteration
  /// k = lo_u + r*step when k < hi; the rounds end once no unit ran one.
  void lowerInterchangedFor(const Operation &Op);
  /// Prefetches what the next step of cube-level `for` \p Op loads in its
  /// first segment, a page or more away from this step's
  /// (LowerStepPrefetch.cpp); emitted after the body's first barrier.
  void emitStepPrefetch(const Operation &Op, llvm::Value *IV, llvm::Value *Step,
                        llvm::Value *Hi);
  /// Operand \p O for unit \p Unit with loop variable \p Iv at \p IvAt,
  /// recomputed from integer arithmetic and builtins; null otherwise.
  llvm::Value *indexAt(const Operand &O, uint32_t Unit, ValueId Iv,
                       llvm::Value *IvAt, bool &UsesIv, unsigned Depth);
  /// The cube-level `for` whose step prefetch waits for the first barrier
  /// of its body (lowerFor, lowerCubeBlock).
  struct PendingStepPrefetch {
    const Operation *Op = nullptr;
    llvm::Value *IV = nullptr, *Step = nullptr, *Hi = nullptr;
  } PendingPrefetch;
  /// Prefetches the elements that a later round of interchanged loop \p Op
  /// loads from buffers at the loop variable itself (LowerInterchange.cpp).
  void emitRoundPrefetch(const Operation &Op, llvm::Value *Round,
                         llvm::Value *Min, llvm::Value *Max, llvm::Value *HiW,
                         llvm::Value *StepW);
  /// The rounds of an interchanged `for` whose lower bound is `unit + C`
  /// (Segmentation::unitStrideLowerBound): each a unit loop over the prefix
  /// of units in range. \p Ty is the loop's LLVM type, \p WideTy the one
  /// its iterations are computed in.
  void lowerUnitStrideRounds(const Operation &Op, int64_t C, llvm::Type *Ty,
                             llvm::Type *WideTy, llvm::Value *HiW,
                             llvm::Value *StepW, llvm::BasicBlock *Exit);
  /// Branches to \p Exit when the rounds' \p Step (of a type signed as
  /// \p Signed says) is not positive; leaves the builder where they start.
  void skipUnlessStepPositive(llvm::Value *Step, bool Signed,
                              llvm::BasicBlock *Exit);
  /// The rounds of an interchanged `for` by its upper bound
  /// (Segmentation::roundsByUpperBound): round r runs k = lo + r*step, the
  /// same for every unit, in a unit loop over the units with k < hi_u; the
  /// rounds end once k reaches the largest upper bound. \p First is the
  /// first active unit, where the uniform lower bound and step are read.
  void lowerUpperBoundRounds(const Operation &Op, llvm::Value *First,
                             llvm::BasicBlock *Exit);
  /// The round loop of an interchanged `for`: round r (from 0), its offset
  /// r * step, and the lowest index of the round, \p FirstLo + r * step.
  struct Rounds {
    llvm::BasicBlock *Header;
    llvm::PHINode *R;
    llvm::Value *Offs;
    llvm::Value *First;
  };
  /// Opens round r: the builder is left in a block reached while the
  /// round's lowest index is below \p HiW; after the last round, \p Exit.
  /// (All wide values, no wrap: see lowerInterchangedFor.)
  Rounds beginRounds(llvm::Value *FirstLo, llvm::Value *HiW, llvm::Value *StepW,
                     llvm::BasicBlock *Exit);
  /// Closes the round opened by beginRounds: a stop poll, r + 1, back to the
  /// header; the builder is left in \p Exit.
  void endRound(const Rounds &Rs, llvm::BasicBlock *Exit);
  void lowerUnitOp(const Operation &Op);
  void lowerJump(const Operation &Op);
  /// Lowers \p Blk at unit level (inside a unit loop) or at cube level
  /// (cut into unit loops and split operations).
  void lowerBlock(const Block &Blk, Level L);
  void lowerIf(const Operation &Op, Level L);
  /// Whether the unit-level `if` \p If is lowered without branches
  /// (FlattenIfs.cpp, docs/Lowering.md §11 "Branch-free ifs"): a divergent
  /// condition, bodies of pure operations, variable reads and writes,
  /// nested such ifs and reads of memory, at least one of them gathered
  /// (its index not affine along the unit loop), none contiguous.
  bool flattensIf(const Operation &If);
  /// \p If's bodies, both of them, for every unit: their variable writes
  /// take effect where the path's condition holds, their reads of memory
  /// are made safe to perform anywhere (MemoryEmitter::Predicate).
  void lowerFlattenedIf(const Operation &If);
  void lowerFor(const Operation &Op, Level L);
  /// A unit's own `for` of step 1 with a stop poll per chunk of
  /// iterations rather than per iteration (LowerControl.cpp).
  void lowerChunkedFor(const Operation &Op, llvm::Value *Lo, llvm::Value *Hi,
                       LoopTarget Target);
  void lowerLoop(const Operation &Op, Level L);
  void lowerSwitch(const Operation &Op, Level L);
  /// The break/continue target of a loop at \p L (flags at cube level).
  LoopTarget loopTarget(Level L, llvm::BasicBlock *Break,
                        llvm::BasicBlock *Continue);
  /// Starts a fresh block after a jump so that dead operations have a home.
  void startDeadBlock();

  LoweringContext &Cx;
  UnitLoops &Pos;
  ValueTable &Values;
  ScalarEmitter &Scalar;
  MemoryEmitter &Memory;
  PlaneEmitter &Plane;
  BarrierEmitter &Barriers;
  CmmaEmitter &Cmma;
  std::vector<LoopTarget> Loops;
  /// A unit of the current segment took a break/continue of a cube-level
  /// loop.
  bool SegmentHoistedJump = false;
  /// flattensIf's answers.
  llvm::DenseMap<const Operation *, bool> Flattens;
};

/// The driver (Lowering.cpp): runs the passes, builds the cube function of
/// CubeABI.h around the emitters, versions its unit loops, verifies it and
/// fills the CubeMetadata.
class KernelLowering {
public:
  KernelLowering(const IRKernel &K, const CpuVariant &Variant,
                 const DeviceLimits &Limits, llvm::LLVMContext &Ctx);
  /// Runs step \p Id of the lower stage (Pipeline.h); lowerKernel calls
  /// them in the table's order.
  llvm::Error runStep(PipelineStepId Id);
  /// Writes the IR as it stands: the kernel's until emission, then the
  /// module.
  void print(llvm::raw_ostream &OS) const;
  /// Verifies the module and fills the CubeMetadata.
  llvm::Expected<LoweredModule> finish();

private:
  /// The checks of what the verifier cannot know, then the segmentation.
  llvm::Error segment();
  /// The cube function and its entry block: argument table, buffers, scalar
  /// parameters.
  llvm::Error emitEntry();
  /// The loop over [CubeBegin, CubeEnd) around the kernel's body.
  void emitCubeLoop();

  std::optional<UniformityInfo> Uniformity;
  LoweringContext Cx;
  TypeLowering Types;
  AliasScopes Scopes;
  UnitLoops Pos;
  ValueTable Values;
  ScalarEmitter Scalar;
  MemoryEmitter Memory;
  PlaneEmitter Plane;
  BarrierEmitter Barriers;
  CmmaEmitter Cmma;
  ControlEmitter Control;
};

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_LOWERINGIMPL_H
