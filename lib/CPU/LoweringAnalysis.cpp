//===- LoweringAnalysis.cpp - Segments, per-unit values and scratch layout
//-===//
//
// A pre-pass over the kernel that mirrors the segmentation the emitter uses
// (LowerControl.cpp): a block is cut at every split operation; each maximal
// run of other operations is one segment (one unit loop). A value used in a
// segment other than the one defining it (or at cube level) is kept in a
// per-unit slot of the scratch area; so is every plane operation's result.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace kiln;
using namespace kiln::lowering;

bool KernelLowering::isSplit(const Operation &Op) {
  switch (Op.opClass()) {
  case OpClass::Barrier:
  case OpClass::PlaneReduce:
  case OpClass::PlaneBool:
  case OpClass::PlaneLane:
  case OpClass::PlaneElect:
  case OpClass::PlaneBallot:
    return true;
  case OpClass::If:
  case OpClass::For:
  case OpClass::Loop:
  case OpClass::Switch:
    break;
  default:
    return false;
  }
  auto It = SplitMemo.find(&Op);
  if (It != SplitMemo.end())
    return It->second;
  bool Split = false;
  for (const Block &R : Op.Regions)
    for (const Operation &Inner : R.Ops)
      if (isSplit(Inner)) {
        Split = true;
        break;
      }
  SplitMemo[&Op] = Split;
  return Split;
}

void KernelLowering::noteDef(ValueId Id, int Seg) {
  if (Id < DefSeg.size())
    DefSeg[Id] = Seg;
}

void KernelLowering::noteUse(const Operand &O, int Seg) {
  if (O.isLiteral() || O.Value >= DefSeg.size())
    return;
  const ValueInfo &VI = K.value(O.Value);
  if (VI.isMemory()) {
    noteMemUse(O.Value, Seg);
    return;
  }
  int D = DefSeg[O.Value];
  if (D >= 0 && D != Seg && !RematOp[O.Value])
    NeedsSlot[O.Value] = 1;
}

void KernelLowering::noteMemUse(ValueId Mem, int Seg) {
  if (Mem < DefSeg.size() && DefSeg[Mem] != Seg)
    MemMultiSeg[Mem] = 1;
}

void KernelLowering::analyzeInSegment(const Operation &Op, int Seg) {
  for (const Operand &O : Op.Operands)
    noteUse(O, Seg);
  if (Op.Result != NoValue) {
    noteDef(Op.Result, Seg);
    if (Op.Result < DefOp.size())
      DefOp[Op.Result] = &Op;
    // Builtins, constants and short integer/bool chains over them (index
    // arithmetic, mostly) are cheaper to recompute than to keep per unit,
    // and recomputed they stay visible to the vectorisers.
    if (Op.Result < RematOp.size()) {
      unsigned Depth = rematDepth(Op);
      if (Depth <= 4) {
        RematOp[Op.Result] = &Op;
        RematDepth[Op.Result] = static_cast<uint8_t>(Depth);
      }
    }
  }
  for (const Block &R : Op.Regions)
    for (const Operation &Inner : R.Ops)
      analyzeInSegment(Inner, Seg);
}

/// Whether operations of \p Class compute their result from their operands
/// alone (no memory, no math library call, no per-unit or plane state).
static bool isPureArithmetic(OpClass Class) {
  switch (Class) {
  case OpClass::UnaryNumeric:
  case OpClass::BinaryNumeric:
  case OpClass::TernaryNumeric:
  case OpClass::BinaryInt:
  case OpClass::UnaryInt:
  case OpClass::Compare:
  case OpClass::BinaryBool:
  case OpClass::UnaryBool:
  case OpClass::Cast:
  case OpClass::Select:
    return true;
  default:
    return false;
  }
}

unsigned KernelLowering::rematDepth(const Operation &Op) const {
  constexpr unsigned No = ~0u;
  OpClass Class = Op.opClass();
  if (Class == OpClass::Builtin || Class == OpClass::BuiltinXYZ ||
      Class == OpClass::Const)
    return 0;
  if (!isPureArithmetic(Class))
    return No;
  if (Op.ResultType.isFloat() || Op.ResultType.isLine())
    return No;
  unsigned Depth = 1;
  for (const Operand &O : Op.Operands) {
    if (O.isLiteral())
      continue;
    if (O.Value >= K.Values.size() || K.value(O.Value).isMemory())
      return No;
    if (RematOp[O.Value]) {
      Depth = std::max(Depth, RematDepth[O.Value] + 1u);
      continue;
    }
    // Parameters and cube-level induction variables are available anywhere
    // their uses are; plane results and other per-unit values are not.
    if (DefSeg[O.Value] == CubeSegment && !NeedsSlot[O.Value] &&
        !DefOp[O.Value])
      continue;
    return No;
  }
  return Depth;
}

bool KernelLowering::isUniform(const Operand &O) const {
  if (O.isLiteral())
    return true;
  if (O.Value >= K.Values.size() || K.value(O.Value).isMemory())
    return false;
  const Operation *Def = DefOp[O.Value];
  // Parameters and cube-level induction variables; plane results have a slot.
  if (!Def)
    return DefSeg[O.Value] == CubeSegment && !NeedsSlot[O.Value];
  switch (Def->opClass()) {
  case OpClass::Builtin:
  case OpClass::BuiltinXYZ:
    return Def->Kind == OpKind::CubePos || Def->Kind == OpKind::CubeDim ||
           Def->Kind == OpKind::CubeCount || Def->Kind == OpKind::PlaneDim;
  case OpClass::Const:
    return true;
  default:
    if (!isPureArithmetic(Def->opClass()))
      return false;
    // Operands are defined before their user, so this recursion ends.
    return llvm::all_of(Def->Operands,
                        [&](const Operand &In) { return isUniform(In); });
  }
}

/// Whether \p Blk, the body of a loop \p Depth loops inside the candidate
/// `for`, holds a jump that leaves the candidate (a break or continue of it
/// or of an outer loop); `return` is excluded kernel-wide by the caller.
static bool jumpsOut(const Block &Blk, unsigned Depth) {
  for (const Operation &Op : Blk.Ops) {
    if ((Op.Kind == OpKind::Break || Op.Kind == OpKind::Continue) && Depth == 0)
      return true;
    bool IsLoop = Op.opClass() == OpClass::For || Op.opClass() == OpClass::Loop;
    for (const Block &R : Op.Regions)
      if (jumpsOut(R, IsLoop ? Depth + 1 : Depth))
        return true;
  }
  return false;
}

bool KernelLowering::isInterchangeable(const Operation &Op) const {
  Type T = Op.ResultType;
  if (Op.opClass() != OpClass::For || KernelReturns || Op.Operands.size() < 2 ||
      Op.Regions.empty() || !T.isInteger() || T.isLine() ||
      bitWidth(T.elementKind()) > 64)
    return false;
  // A uniform lower bound gives every unit the same trip (matmul's k loop):
  // running it per unit keeps its state in registers, which measured far
  // faster than rounds with the state in scratch (docs/Lowering.md §4).
  if (isUniform(Op.Operands[0]) || !isUniform(Op.Operands[1]) ||
      (Op.Operands.size() > 2 && !isUniform(Op.Operands[2])))
    return false;
  return !jumpsOut(Op.Regions[0], 0);
}

void KernelLowering::analyzeBlock(const Block &Blk) {
  int Seg = NoSegment;
  for (const Operation &Op : Blk.Ops) {
    if (!isSplit(Op) && isInterchangeable(Op))
      Interchanged.insert(&Op);
    if (!isCut(Op)) {
      if (Seg == NoSegment)
        Seg = NextSegment++;
      analyzeInSegment(Op, Seg);
      continue;
    }
    Seg = NoSegment;
    if (Interchanged.contains(&Op)) {
      // The body is a segment of its own: a unit loop per round. The lower
      // bound is read per unit there; the upper bound and step at cube level.
      int BodySeg = NextSegment++;
      noteUse(Op.Operands[0], BodySeg);
      for (size_t I = 1; I < Op.Operands.size(); ++I)
        noteUse(Op.Operands[I], CubeSegment);
      noteDef(Op.Result, BodySeg);
      for (const Operation &Inner : Op.Regions[0].Ops)
        analyzeInSegment(Inner, BodySeg);
      continue;
    }
    // Split operations read their operands at cube level.
    for (const Operand &O : Op.Operands)
      noteUse(O, CubeSegment);
    switch (Op.opClass()) {
    case OpClass::Barrier:
      break;
    case OpClass::If:
    case OpClass::Loop:
    case OpClass::Switch:
      for (const Block &R : Op.Regions)
        analyzeBlock(R);
      break;
    case OpClass::For:
      // A hoisted induction variable is a cube-level value.
      noteDef(Op.Result, CubeSegment);
      for (const Block &R : Op.Regions)
        analyzeBlock(R);
      break;
    default:
      // Plane operations: computed at cube level into a per-unit array.
      if (Op.Result != NoValue && Op.Result < NeedsSlot.size()) {
        noteDef(Op.Result, CubeSegment);
        NeedsSlot[Op.Result] = 1;
      }
      break;
    }
  }
}

bool KernelLowering::kernelHasReturn(const Block &Blk) const {
  for (const Operation &Op : Blk.Ops) {
    if (Op.Kind == OpKind::Return)
      return true;
    for (const Block &R : Op.Regions)
      if (kernelHasReturn(R))
        return true;
  }
  return false;
}

llvm::Error KernelLowering::layoutScratch() {
  // The arena is addressed with 64-bit offsets, but anything beyond 4 GiB per
  // worker is a kernel the host cannot run.
  constexpr uint64_t MaxScratch = uint64_t(1) << 32;
  uint64_t Size = 0;
  bool Overflow = false;
  auto Reserve = [&](uint64_t Bytes) -> uint64_t {
    uint64_t Start = llvm::alignTo(Size, 64);
    if (Bytes > MaxScratch || Start + Bytes > MaxScratch)
      Overflow = true;
    Size = Start + std::min(Bytes, MaxScratch);
    return Start;
  };
  auto PerUnit = [&](uint64_t Bytes) -> uint64_t {
    if (Bytes != 0 && Units > MaxScratch / Bytes) {
      Overflow = true;
      return MaxScratch;
    }
    return Bytes * Units;
  };

  bool AnySplit = false;
  for (const Operation &Op : K.Body.Ops)
    AnySplit |= isSplit(Op);
  HasFlags = AnySplit && kernelHasReturn(K.Body);
  if (HasFlags)
    FlagsOffset = Reserve(Units);

  for (ValueId Id = 0; Id < K.Values.size(); ++Id) {
    const ValueInfo &VI = K.value(Id);
    uint64_t Elem = VI.Ty.storeSize();
    switch (VI.Kind) {
    case ValueKind::Buffer:
      break;
    case ValueKind::Shared: {
      uint64_t Bytes = VI.Count > MaxScratch / std::max<uint64_t>(Elem, 1)
                           ? MaxScratch
                           : VI.Count * Elem;
      Storage[Id] = StorageKind::ScratchCube;
      Offset[Id] = Reserve(Bytes);
      break;
    }
    case ValueKind::Local: {
      uint64_t Row = VI.Count > MaxScratch / std::max<uint64_t>(Elem, 1)
                         ? MaxScratch
                         : VI.Count * Elem;
      Storage[Id] = StorageKind::ScratchUnit;
      Offset[Id] = Reserve(PerUnit(Row));
      break;
    }
    case ValueKind::Var:
      if (MemMultiSeg[Id]) {
        Storage[Id] = StorageKind::ScratchUnit;
        Offset[Id] = Reserve(PerUnit(Elem));
      } else {
        Storage[Id] = StorageKind::Alloca;
      }
      break;
    case ValueKind::Plain:
      if (NeedsSlot[Id])
        Offset[Id] = Reserve(PerUnit(Elem));
      break;
    }
  }
  if (Overflow)
    return llvm::createStringError("kernel '" + K.Name +
                                   "' needs a scratch area larger than 4 GiB");
  ScratchBytes = llvm::alignTo(Size, 64);
  return llvm::Error::success();
}
