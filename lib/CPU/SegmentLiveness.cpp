//===- SegmentLiveness.cpp - Which values live across segments ------------===//
//
// See SegmentLiveness.h and docs/Lowering.md §5.
//
//===----------------------------------------------------------------------===//

#include "SegmentLiveness.h"

#include "Rematerialization.h"
#include "Segmentation.h"

using namespace kiln;
using namespace kiln::lowering;

namespace {

/// No segment open yet.
constexpr int NoSegment = -2;

class LivenessWalker {
public:
  LivenessWalker(const IRKernel &K, const Segmentation &Seg, Liveness &Out)
      : K(K), Seg(Seg), Out(Out), V(Out.Values) {
    V.assign(K.Values.size(), ValuePlan());
  }

  void walkCubeBlock(const Block &Blk);

private:
  void walkInSegment(const Operation &Op, int S);
  void def(ValueId Id, int S) {
    if (Id < V.size())
      V[Id].DefSeg = S;
  }
  void use(const Operand &O, int S);
  int newSegment() { return static_cast<int>(Out.Segments++); }

  const IRKernel &K;
  const Segmentation &Seg;
  Liveness &Out;
  std::vector<ValuePlan> &V;
};

} // namespace

void LivenessWalker::use(const Operand &O, int S) {
  if (O.isLiteral() || O.Value >= V.size())
    return;
  ValuePlan &P = V[O.Value];
  if (K.value(O.Value).isMemory()) {
    if (P.DefSeg != S)
      P.MultiSegment = true;
    return;
  }
  if (P.DefSeg >= 0 && P.DefSeg != S && !P.Remat)
    P.NeedsSlot = true;
}

void LivenessWalker::walkInSegment(const Operation &Op, int S) {
  for (const Operand &O : Op.Operands)
    use(O, S);
  if (const UnitBoxCondition *Box = Seg.unitBox(Op))
    // A narrowed segment reads the box's bounds and offsets at cube level,
    // wherever the comparisons were computed.
    for (const UnitIndexBound &Bd : Box->Bounds) {
      use(Bd.Bound, S);
      for (const UniformTerm &T : Bd.Index.Terms)
        use(T.Value, S);
    }
  if (Op.Result < V.size()) {
    ValuePlan &P = V[Op.Result];
    P.DefSeg = S;
    P.Def = &Op;
    std::optional<RematCost> Cost = rematCost(Op, K, V);
    if (Cost && Cost->fits()) {
      P.Remat = &Op;
      P.RematDepth = static_cast<uint8_t>(Cost->Depth);
      P.RematVaryingDepth = static_cast<uint8_t>(Cost->VaryingDepth);
      P.RematUniform = Cost->Uniform;
    }
  }
  for (const Block &R : Op.Regions)
    for (const Operation &Inner : R.Ops)
      walkInSegment(Inner, S);
}

void LivenessWalker::walkCubeBlock(const Block &Blk) {
  int S = NoSegment;
  for (const Operation &Op : Blk.Ops) {
    if (!Seg.isCut(Op)) {
      if (S == NoSegment)
        S = newSegment();
      walkInSegment(Op, S);
      continue;
    }
    S = NoSegment;
    if (Seg.isInterchanged(Op)) {
      // The body is a segment of its own: a unit loop per round. A per-unit
      // lower bound is read per unit there; the uniform bounds and the step
      // at cube level.
      int Body = newSegment();
      bool ByUpper = Seg.roundsByUpperBound(Op) != nullptr;
      for (size_t I = 0; I < Op.Operands.size(); ++I) {
        // Rounds by the upper bound never read it: the units in range
        // follow from its form (unit + c or plane_pos).
        if (ByUpper && I == 1)
          continue;
        use(Op.Operands[I], I == 0 && !ByUpper ? Body : CubeSegment);
      }
      def(Op.Result, Body);
      for (const Operation &Inner : Op.Regions[0].Ops)
        walkInSegment(Inner, Body);
      continue;
    }
    if (Seg.isGuardedIf(Op)) {
      // Every unit loop of the body reads the condition of its unit, and a
      // unit range is computed at cube level from the guard's bound.
      use(Op.Operands[0], CubeSegment);
      if (const UnitRangeGuard *G = Seg.unitRangeGuard(Op)) {
        use(G->Bound, CubeSegment);
        if (G->UniformModulus)
          use(G->ModulusValue, CubeSegment);
      }
      for (const Block &R : Op.Regions)
        walkCubeBlock(R);
      continue;
    }
    // Split operations (and loops across the units) read their operands at
    // cube level.
    for (const Operand &O : Op.Operands)
      use(O, CubeSegment);
    switch (Op.opClass()) {
    case OpClass::Barrier:
    case OpClass::BarrierWait:
      break;
    case OpClass::BarrierDecl:
      // A cube's barrier object: shared memory, set up at cube level.
      def(Op.Result, CubeSegment);
      break;
    case OpClass::If:
    case OpClass::Loop:
    case OpClass::Switch:
      for (const Block &R : Op.Regions)
        walkCubeBlock(R);
      break;
    case OpClass::For:
      // A hoisted induction variable is a cube-level value.
      def(Op.Result, CubeSegment);
      for (const Block &R : Op.Regions)
        walkCubeBlock(R);
      break;
    default:
      // Plane operations: computed at cube level into a per-unit array.
      if (Op.Result < V.size()) {
        def(Op.Result, CubeSegment);
        V[Op.Result].NeedsSlot = true;
      }
      break;
    }
  }
}

Liveness kiln::lowering::analyzeLiveness(const IRKernel &K,
                                         const Segmentation &Seg) {
  Liveness Out;
  LivenessWalker(K, Seg, Out).walkCubeBlock(K.Body);
  return Out;
}
