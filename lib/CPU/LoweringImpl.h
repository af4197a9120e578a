//===- LoweringImpl.h - The emitter of the lowering -----------*- C++ -*-===//
//
// The lowering is a pipeline (docs/Lowering.md, "Structure"):
//   UniformityInfo (kiln/IR/Uniformity.h)  divergent values
//   Segmentation.h      splits, interchanged fors, return flags
//   SegmentLiveness.h   per value: defining segment, slot, remat
//   Rematerialisation.h values recomputed instead of kept
//   ScratchLayout.h     offsets in the per-worker scratch area
//   KernelLowering      the emitter (this header), over these files:
//     Lowering.cpp          driver: function skeleton, cube loop, metadata
//     LowerUnitLoops.cpp    unit loop nests, return flags
//     LowerControl.cpp      cube blocks, constructs at either Level, jumps
//     LowerInterchange.cpp  interchanged `for` loops (LoopInterchange.h)
//     LowerOps.cpp          scalar and line operations, casts, builtins
//     LowerMath.cpp         math intrinsics and libm calls
//     LowerBF16.cpp         bf16 conversions by hand (values are i16 bits)
//     LowerMemory.cpp       buffers, shared/local arrays, vars, atomics, slots
//     LowerPlane.cpp        plane operations at cube level
//   LoopVersioning.h    twins of unit loops without provable checks
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_LOWERINGIMPL_H
#define KILN_LIB_CPU_LOWERINGIMPL_H

#include "LoopVersioning.h"
#include "ScratchLayout.h"
#include "Segmentation.h"
#include "SegmentLiveness.h"

#include "kiln/CPU/Lowering.h"
#include "kiln/IR/Uniformity.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/IR/IRBuilder.h"

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
};

class KernelLowering {
public:
  KernelLowering(const Kernel &K, const CpuVariant &Variant,
                 const DeviceLimits &Limits, llvm::LLVMContext &Ctx);
  llvm::Expected<LoweredModule> run();

  // ---- Types and constants (LowerOps.cpp) ----
  llvm::Type *valueType(Type T);
  llvm::Type *memType(Type T); ///< bool as i8
  llvm::Type *scalarType(ScalarKind K);
  llvm::Constant *literal(const Literal &L);
  llvm::Constant *scalarConstant(ScalarKind K, uint64_t Bits);
  llvm::Value *toMem(llvm::Value *V, Type T);
  llvm::Value *fromMem(llvm::Value *V, Type T);

  // ---- Value operations (LowerOps.cpp) ----
  llvm::Value *lowerValueOp(const Operation &Op);
  llvm::Value *emitBinary(OpKind Kind, Type T, llvm::Value *A, llvm::Value *B);
  llvm::Value *emitMinMax(bool IsMax, Type T, llvm::Value *A, llvm::Value *B);
  llvm::Value *emitUnary(OpKind Kind, Type T, llvm::Value *A);
  llvm::Value *emitMath(OpKind Kind, Type T,
                        llvm::ArrayRef<llvm::Value *> Args);
  llvm::Value *emitLibm(llvm::StringRef Name, Type T,
                        llvm::ArrayRef<llvm::Value *> Args);
  llvm::Value *emitCompare(OpKind Kind, Type T, llvm::Value *A, llvm::Value *B);
  llvm::Value *emitCast(llvm::Value *V, Type From, Type To);
  llvm::Value *emitBuiltin(const Operation &Op);
  llvm::Value *emitDot(Type T, llvm::Value *A, llvm::Value *B);
  // bf16 is computed by hand (LowerBF16.cpp): LLVM 19's x86 lowering
  // flushes bf16 subnormals and calls __truncdfbf2, absent at run time.
  llvm::Value *bf16ToF32(llvm::Value *V);
  llvm::Value *f32ToBF16(llvm::Value *V);
  llvm::Value *f64ToBF16(llvm::Value *V);
  llvm::Value *intToBF16(llvm::Value *V, Type From);
  /// a*b+c for f64 operands widened from f16/bf16 (so a*b is exact), as an
  /// f64 that rounds to the narrow type like the exact result: the f64 sum's
  /// rounding error (TwoSum) nudges it one ulp so that a tie cannot mislead
  /// the second rounding.
  llvm::Value *narrowFmaInF64(llvm::Value *A, llvm::Value *B, llvm::Value *C);

  // ---- Memory (LowerMemory.cpp) ----
  llvm::Value *lowerMemoryOp(const Operation &Op);
  MemAccess resolveAccess(ValueId Mem, const Operand &Index);
  llvm::Value *memCount(ValueId Mem);
  llvm::Value *guarded(llvm::Value *InBounds, Type ResultTy,
                       llvm::function_ref<llvm::Value *()> Emit);
  void tagAccess(llvm::Instruction *I, ValueKind Kind, ValueId Mem,
                 bool Parallel);
  llvm::Value *slotPtr(uint64_t Offset, uint64_t Stride, llvm::Value *Unit);
  llvm::Value *scratchPtr(uint64_t Offset);
  llvm::Value *loadSlot(ValueId Id, llvm::Value *Unit);
  void storeSlot(ValueId Id, llvm::Value *Unit, llvm::Value *V);
  llvm::Value *varPtr(ValueId Var);
  llvm::Value *emitAtomic(const Operation &Op);

  // ---- Values ----
  /// The value of \p O in the current context: a literal, a value of the
  /// current segment, a cube-level value, or the per-unit slot of \p Unit
  /// (the current unit when null).
  llvm::Value *value(const Operand &O, llvm::Value *Unit = nullptr);
  llvm::Value *operand(const Operation &Op, unsigned I) {
    return value(Op.Operands[I]);
  }
  Type operandType(const Operand &O) const {
    return O.isLiteral() ? O.Lit.Ty : K.value(O.Value).Ty;
  }
  void define(ValueId Id, llvm::Value *V);
  void fail(SourceLoc Loc, const llvm::Twine &Msg);

  // ---- Control (LowerControl.cpp) ----
  void lowerCubeBlock(const Block &Blk);
  void emitUnitLoop(llvm::ArrayRef<const Operation *> Ops);
  /// Emits one unit loop nest whose body for the current unit is \p Body.
  void emitUnitLoopWith(llvm::function_ref<void()> Body);
  /// Runs an interchanged `for` (isInterchangeable) as rounds r = 0, 1, ...
  /// with a unit loop inside each: unit u runs its iteration
  /// k = lo_u + r*step when k < hi; the rounds end once no unit ran one.
  void lowerInterchangedFor(const Operation &Op);
  void lowerUnitOp(const Operation &Op);
  void lowerJump(const Operation &Op);
  /// Lowers \p Blk at unit level (inside a unit loop) or at cube level
  /// (cut into unit loops and split operations).
  void lowerBlock(const Block &Blk, Level L);
  // The control constructs at either level (LowerControl.cpp).
  void lowerIf(const Operation &Op, Level L);
  void lowerFor(const Operation &Op, Level L);
  void lowerLoop(const Operation &Op, Level L);
  void lowerSwitch(const Operation &Op, Level L);
  /// The break/continue target of a loop at \p L (flags at cube level).
  LoopTarget loopTarget(Level L, llvm::BasicBlock *Break,
                        llvm::BasicBlock *Continue);
  /// At cube level, with return flags: branches to \p Exit when every unit
  /// has returned, else continues in a new block named \p Live.
  void exitWhenAllReturned(llvm::BasicBlock *Exit, const char *Live);
  /// The first unit of the cube that has not returned (Units when none).
  llvm::Value *firstActiveUnit();
  /// Branches to \p Skip when every unit has returned; returns the unit
  /// whose values stand for the cube.
  llvm::Value *firstActiveOrSkip(llvm::BasicBlock *Skip);
  llvm::Value *unitFinished(llvm::Value *Unit);
  void emitCountedLoop(llvm::Value *Begin, llvm::Value *End,
                       llvm::function_ref<void(llvm::Value *)> Body,
                       const llvm::Twine &Name);
  /// Starts a fresh block after a jump so that dead operations have a home.
  void startDeadBlock();
  bool terminated() const { return B.GetInsertBlock()->getTerminator(); }
  llvm::BasicBlock *newBlock(const llvm::Twine &Name);
  llvm::AllocaInst *entryAlloca(llvm::Type *T, const llvm::Twine &Name);

  // ---- Plane operations (LowerPlane.cpp) ----
  void lowerPlaneOp(const Operation &Op);

  // ---- Collected for LoopVersioning.h ----
  std::vector<BoundsGuard> Guards;
  /// Headers of the innermost unit loops, in emission order.
  std::vector<llvm::BasicBlock *> InnerUnitHeaders;

  // ---- Inputs ----
  const Kernel &K;
  CpuVariant Variant;
  DeviceLimits Limits;
  llvm::LLVMContext &Ctx;
  std::unique_ptr<llvm::Module> M;
  llvm::Function *F = nullptr;
  llvm::IRBuilder<> B;
  llvm::Type *I1, *I8, *I32, *I64, *Ptr;
  uint32_t Units = 1;
  uint32_t PlaneDim = 32;
  llvm::Error Err = llvm::Error::success();
  UniformityInfo Uniformity;

  // ---- Analysis results ----
  std::optional<Segmentation> Seg;
  Liveness Live;
  ScratchLayout Layout;

  // ---- Emission state ----
  llvm::BasicBlock *EntryBB = nullptr;
  llvm::Value *Scratch = nullptr;
  llvm::DenseMap<ValueId, llvm::Value *> BufBase, BufCount;
  llvm::DenseMap<ValueId, llvm::Value *> CubeValues; ///< params, hoisted IVs
  llvm::DenseMap<ValueId, llvm::Value *> SegValues;  ///< current segment
  llvm::DenseMap<ValueId, llvm::AllocaInst *> VarAllocas;
  llvm::Value *CubeLinear = nullptr, *CubePos[3] = {}, *CubeCount[3] = {};
  llvm::Value *Unit = nullptr; ///< current unit (i32), null at cube level
  /// unit_pos.x/.y/.z of the current unit: the induction variables of the
  /// nested unit loops (a constant 0 for a dimension of size 1).
  llvm::Value *UnitXYZ[3] = {};
  llvm::BasicBlock *UnitLatch = nullptr;
  llvm::MDNode *AccessGroup = nullptr;
  std::vector<LoopTarget> Loops;
  bool SegmentHoistedJump = false;

  // ---- Alias scopes (docs/Design.md §10.3) ----
  /// Every buffer, every shared/local array and scratch var, all value
  /// slots together, and the return flags each have a scope of their own:
  /// none of them overlaps another. In the MayAlias variant all buffers
  /// share one scope instead (they may overlap each other, never scratch).
  /// Keyed by ValueId, or the two keys below.
  static constexpr ValueId SlotScopeKey = NoValue - 1;
  static constexpr ValueId FlagScopeKey = NoValue - 2;
  llvm::DenseMap<ValueId, llvm::MDNode *> ScopeOf;   ///< alias.scope list
  llvm::DenseMap<ValueId, llvm::MDNode *> NoAliasOf; ///< noalias list
  void setupAliasScopes();
  void tagScope(llvm::Instruction *I, ValueId Key);
};

} // namespace kiln::lowering

#endif // KILN_LIB_CPU_LOWERINGIMPL_H
