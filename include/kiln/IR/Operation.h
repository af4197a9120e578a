//===- Operation.h - Operations, operands and blocks ------------*- C++ -*-===//
//
// The IR is structured: a kernel body is a Block, a list of Operations; the
// control-flow operations (if, for, loop, switch) own nested Blocks. Values are
// SSA: every ValueId is defined once, by a kernel parameter or an operation,
// and is named by its index in Kernel::Values.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_OPERATION_H
#define KILN_IR_OPERATION_H

#include "kiln/IR/CaseLabel.h"
#include "kiln/IR/Matrix.h"
#include "kiln/IR/Type.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// A kind per operation, generated from Ops.def.
enum class OpKind : uint16_t {
#define KILN_OP(Enum, Name, Class) Enum,
#include "kiln/IR/Ops.def"
};

/// The shape and typing rule of an operation; see Ops.def.
enum class OpClass : uint8_t {
  Builtin,        ///< nullary u32
  BuiltinXYZ,     ///< nullary u32, with an optional .x/.y/.z component
  Const,          ///< `const LIT : T` or `const [L, ...] : vec<N x T>`
  UnaryNumeric,   ///< T -> T, T integer or float
  BinaryNumeric,  ///< T, T -> T
  TernaryNumeric, ///< T, T, T -> T
  TernaryFloat,   ///< T, T, T -> T, T float
  BinaryInt,      ///< T, T -> T, T integer
  UnaryInt,       ///< T -> T, T integer
  BitCount,       ///< T -> T or u32 (same lanes), T integer
  UnaryFloat,     ///< T -> T, T float
  BinaryFloat,    ///< T, T -> T, T float
  PowI,           ///< T, i32 (same lanes) -> T, T float
  FloatPredicate, ///< T -> bool (same lanes), T float
  Dot,            ///< vec<N x T>, vec<N x T> -> T
  Magnitude,      ///< vec<N x T> -> T, T float
  LineReduce,     ///< vec<N x T> -> T: the lanes combined, lane 0 first
  Normalize,      ///< vec<N x T> -> vec<N x T>, T float
  Extract,        ///< %v[idx] -> T
  Insert,         ///< %v[idx], %e -> vec<N x T>
  Splat,          ///< T -> vec<N x T>
  Vector,         ///< N operands of T -> vec<N x T>
  Compare,        ///< T, T -> bool (same lanes)
  BinaryBool,     ///< bool, bool -> bool (or lines of bool)
  UnaryBool,      ///< bool -> bool
  Cast,           ///< numeric conversion, same lanes
  Bitcast,        ///< same total bit width
  Select,         ///< cond, T, T -> T
  Load,           ///< %m[idx] -> T
  Store,          ///< %m[idx], %v
  Len,            ///< %m -> u32
  VarDecl,        ///< `%v = var T`
  ArrayDecl,      ///< `%s = shared T[N]`, `%a = local_array T[N]`
  Get,            ///< %var -> T
  Set,            ///< %var, %x
  AtomicRMW,      ///< %m[idx], %x -> T (the old value)
  AtomicCas,      ///< %m[idx], %expected, %new -> T (the old value)
  AtomicLoad,     ///< %m[idx] -> T
  AtomicStore,    ///< %m[idx], %x
  Barrier,        ///< sync_cube
  PlaneReduce,    ///< T -> T over the plane
  PlaneBool,      ///< bool -> bool over the plane
  PlaneLane,      ///< T, u32 -> T (a value from another lane)
  PlaneElect,     ///< -> bool
  PlaneBallot,    ///< bool -> vec<4 x u32>
  BarrierDecl,     ///< `%b = barrier_unit`, `%b = barrier_cube %count`
  BarrierArrive,   ///< %bar[, %arrivals, %bytes] -> u32 (the phase token)
  BarrierExpectTx, ///< %bar, %bytes
  BarrierWait,     ///< %bar, %token (barrier_wait); %bar (arrive_and_wait)
  AsyncCopy,       ///< %bar, %src[%i], %dst[%j], %count
  MatrixDecl,     ///< `%f = fragment matrix<...>`
  Cmma,           ///< plane-collective fragment operations (no result)
  CmmaElem,       ///< a unit's fragment elements: %f[, %u][, %n] -> T
  CmmaSet,        ///< cmma_set %f, %n, %x: a unit writes its element
  DebugPrint,     ///< `debug_print "FORMAT", %a, ...` (no result)
  TensorMeta,     ///< %t[, %dim] -> u32: a tensor's shape, stride, rank, len
  TensorCopy,     ///< tma_load %bar, %smem, %off, %map, %c...; tma_store %smem, %off, %map, %c...
  TensorStoreGroup, ///< tma_commit; tma_wait_read %n; tma_wait %n
  If,
  For,
  Loop,
  Switch,
  Jump, ///< break, continue, return
};

/// The IR spelling of \p Kind ("add", "atomic_cas", "if").
llvm::StringRef opName(OpKind Kind);
OpClass opClass(OpKind Kind);
/// The operation spelled \p Name, or none.
std::optional<OpKind> parseOpName(llvm::StringRef Name);
/// Whether operations of \p Class define a result value.
bool producesValue(OpClass Class);
/// Whether the first operand is written `%m[idx]` (memory or line, then an
/// index): Load, Store, the atomics, Extract, Insert.
bool hasIndexedFirstOperand(OpClass Class);



/// Operations written with `%m[idx]` operands after the first one (the
/// asynchronous copies, docs/LangRef.md §13): for each operand as written,
/// how many indices follow it in brackets (0 for a plain operand). Null for
/// every other class. The operands are stored flattened: each memory
/// operand followed by its indices.
const std::vector<unsigned> *bracketedOperandShape(OpClass Class);

/// Index of a value in Kernel::Values.
using ValueId = uint32_t;
constexpr ValueId NoValue = ~ValueId(0);

/// A position in the text the IR was parsed from; line 0 when the IR was
/// built through the Builder.
struct SourceLoc {
  uint32_t Line = 0;
  uint32_t Col = 0;
  bool isValid() const { return Line != 0; }
};

/// A scalar literal: its type and its bit pattern, zero-extended to 64 bits
/// (integers two's complement in their width, floats their IEEE encoding,
/// bool 0 or 1).
struct Literal {
  Type Ty;
  uint64_t Bits = 0;
};

/// An operand: a value, or an inline literal (`2.0:f32`).
struct Operand {
  ValueId Value = NoValue; ///< NoValue when this is a literal
  Literal Lit;             ///< meaningful when Value == NoValue
  SourceLoc Loc;

  static Operand value(ValueId Id, SourceLoc Loc = {}) {
    Operand O;
    O.Value = Id;
    O.Loc = Loc;
    return O;
  }
  static Operand literal(Literal L, SourceLoc Loc = {}) {
    Operand O;
    O.Lit = L;
    O.Loc = Loc;
    return O;
  }
  bool isLiteral() const { return Value == NoValue; }
};

struct Operation;

/// A list of operations, run in order.
struct Block {
  std::vector<Operation> Ops;
};

/// One operation. Which fields are meaningful depends on opClass(Kind):
/// - Result/ResultType: operations that produce a value; also the declared
///   object of var/shared/local_array and the induction variable of `for`
///   (ResultType is then the declared element type, resp. the bound type).
/// - Operands: in source order; for indexed operations the memory (or line)
///   and the index come first.
/// - Component: BuiltinXYZ only: 0 for the linear index, 1..3 for .x/.y/.z.
/// - ArraySize: ArrayDecl only: the number of elements.
/// - ConstBits: Const only: one bit pattern per lane (one for a scalar).
/// - Regions: If: then[, else]; For/Loop: body; Switch: one per case, then
///   the default when HasDefault.
/// - CaseValues: Switch only: the labels of the case regions, in order.
/// - CaseLabelCounts: Switch only: how many consecutive labels of CaseValues
///   each case region has (`case 1, 3, 5 {` has 3); empty when every case
///   has exactly one label, so that CaseValues[I] labels region I. Use
///   switchCaseCount/switchCaseLabels rather than reading both directly.
/// - Matrix: MatrixDecl only: the fragment's type (ResultType is then its
///   element type).
/// - Layout: cmma_load and cmma_store: the memory layout written after the
///   stride, Undefined when none is (the fragment's own).
/// - Transpose: cmma_ldmatrix only: `, trans` was written.
/// - Text: DebugPrint only: the format string, escapes decoded.
/// The operands of the cmma operations, in order: cmma_fill: fragment,
/// value; cmma_load: fragment, memory, index, stride; cmma_store: memory,
/// index, fragment, stride; cmma_mma: D, A, B, C; cmma_mma_scaled: D, A,
/// B, C, A's scales, B's scales; cmma_cast: destination,
/// source; cmma_ldmatrix: fragment, memory, index; cmma_count: fragment;
/// cmma_row, cmma_col: fragment, unit, element number; cmma_get: fragment,
/// element number; cmma_set: fragment, element number, value.
struct Operation {
  OpKind Kind = OpKind::Return;
  SourceLoc Loc;
  ValueId Result = NoValue;
  Type ResultType;
  std::vector<Operand> Operands;
  uint8_t Component = 0;
  uint64_t ArraySize = 0;
  std::vector<uint64_t> ConstBits;
  std::vector<Block> Regions;
  std::vector<CaseLabel> CaseValues;
  std::vector<uint32_t> CaseLabelCounts;
  bool HasElse = false;    ///< If: Regions[1] is the else block
  bool HasDefault = false; ///< Switch: the last region is the default
  MatrixType Matrix = {};
  MatrixLayout Layout = MatrixLayout::Undefined;
  bool Transpose = false;
  std::string Text;

  OpClass opClass() const { return kiln::opClass(Kind); }
};

/// Switch cases with several labels (`case 1, 3, 5 { ... }`):
/// the number of case regions of switch \p Op (the default not counted),
/// and the labels of case \p Case. A malformed operation (counts that do
/// not add up to CaseValues.size()) has no cases here; the verifier
/// reports it.
size_t switchCaseCount(const Operation &Op);
llvm::ArrayRef<CaseLabel> switchCaseLabels(const Operation &Op, size_t Case);
/// Whether switch \p Op's CaseLabelCounts and CaseValues agree.
bool switchLabelsWellFormed(const Operation &Op);
/// Appends a case region labelled \p Labels (at least one) to switch \p Op,
/// keeping CaseLabelCounts empty while every case has one label.
void addSwitchCase(Operation &Op, llvm::ArrayRef<CaseLabel> Labels);

/// A scalar literal operand of a lane-wise operation whose other data
/// operands are lines of the literal's type stands for that line with the
/// literal in every lane (docs/LangRef.md §5.2): retypes such literals of
/// \p Op to the line type. \p TypeOfValue gives a value operand's type.
/// The parser and the builder apply it to every operation they make; the
/// printer writes such a literal in its scalar form again.
/// Whether operand \p OperandIndex of an operation of \p Class takes a
/// splatted scalar literal (splatScalarLiterals).
bool splatsScalarLiterals(OpClass Class, size_t OperandIndex);
void splatScalarLiterals(Operation &Op,
                         llvm::function_ref<std::optional<Type>(ValueId)>
                             TypeOfValue);

} // namespace kiln

#endif // KILN_IR_OPERATION_H
