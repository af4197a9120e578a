//===- Uniformity.cpp - Divergence analysis of a kernel -------------------===//
//
// See kiln/IR/Uniformity.h and docs/LangRef.md §2.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Uniformity.h"
#include "kiln/IR/Diagnostic.h"

#include <map>
#include <optional>

using namespace kiln;

namespace kiln {

/// One pass over the kernel; UniformityInfo runs passes until none changes
/// anything (divergence only ever grows, so this terminates).
class UniformityWalker {
public:
  UniformityWalker(const IRKernel &K, UniformityInfo &Info)
      : K(K), Info(Info) {}

  void run() {
    Info.RootOf.assign(K.Values.size(), -1);
    // Each pass that changes something marks at least one more value or
    // loop divergent, so the bound is never reached on well-formed input.
    size_t MaxPasses = K.Values.size() + 64;
    do {
      Changed = false;
      Info.Control.clear();
      Frames.clear();
      walkBlock(K.Body);
    } while (Changed && --MaxPasses);
  }

private:
  /// A construct enclosing the current operation.
  struct Frame {
    Frame(const Operation *Op, bool IsLoop) : Op(Op), IsLoop(IsLoop) {}
    const Operation *Op;
    bool IsLoop;
    int Root = -1;           ///< the root of its divergence, -1 if uniform
    std::string Explanation; ///< why its body runs under divergent control
  };

  const IRKernel &K;
  UniformityInfo &Info;
  std::vector<Frame> Frames;
  /// Loops that a jump leaves under divergent control flow: the root and the
  /// explanation.
  llvm::DenseMap<const Operation *, std::pair<int, std::string>> LoopExits;
  std::map<std::string, int> RootIndex;
  bool Changed = false;
  /// Operation numbers, computed when an explanation first needs one.
  llvm::DenseMap<const Operation *, unsigned> OpNumbers;

  /// Where \p Op (or its part at \p Loc) is, for explanations: "5:7", or
  /// "operation #3" in IR without locations.
  std::string where(const Operation &Op, SourceLoc Loc) {
    if (Loc.isValid())
      return formatLoc(Loc);
    if (OpNumbers.empty())
      forEachOperation(
          K, [&](const Operation &O, unsigned N) { OpNumbers[&O] = N; });
    return "operation #" + std::to_string(OpNumbers.lookup(&Op));
  }

  int addRoot(const std::string &Why) {
    auto [It, Inserted] =
        RootIndex.try_emplace(Why, static_cast<int>(Info.Roots.size()));
    if (Inserted)
      Info.Roots.push_back(Why);
    return It->second;
  }

  bool validId(ValueId Id) const { return Id < K.Values.size(); }

  void mark(ValueId Id, int Root) {
    if (Root < 0 || !validId(Id) || Info.RootOf[Id] >= 0)
      return;
    Info.RootOf[Id] = Root;
    Changed = true;
  }

  int rootOf(ValueId Id) const { return validId(Id) ? Info.RootOf[Id] : -1; }

  int operandRoot(const Operation &Op, size_t I) const {
    if (I >= Op.Operands.size() || Op.Operands[I].isLiteral())
      return -1;
    return rootOf(Op.Operands[I].Value);
  }

  ValueId operandId(const Operation &Op, size_t I) const {
    return I < Op.Operands.size() ? Op.Operands[I].Value : NoValue;
  }

  static SourceLoc operandLoc(const Operation &Op, size_t I) {
    if (I < Op.Operands.size() && Op.Operands[I].Loc.isValid())
      return Op.Operands[I].Loc;
    return Op.Loc;
  }

  static int firstOf(std::initializer_list<int> Roots) {
    for (int R : Roots)
      if (R >= 0)
        return R;
    return -1;
  }

  /// The outermost enclosing construct whose body runs divergently.
  const Frame *divergentFrame(size_t From = 0) const {
    for (size_t I = From; I < Frames.size(); ++I)
      if (Frames[I].Root >= 0)
        return &Frames[I];
    return nullptr;
  }

  int controlRoot() const {
    const Frame *F = divergentFrame();
    return F ? F->Root : -1;
  }

  static std::string builtinName(const Operation &Op) {
    std::string Name = opName(Op.Kind).str();
    if (Op.opClass() == OpClass::BuiltinXYZ && Op.Component >= 1 &&
        Op.Component <= 3)
      Name += std::string(".") + "xyz"[Op.Component - 1];
    return Name;
  }

  /// Records that the loop of \p LoopFrame is left by \p Jump under the
  /// divergent construct \p Cause.
  void markLoopExit(const Frame &LoopFrame, const Operation &Jump,
                    const Frame &Cause) {
    if (LoopExits.count(LoopFrame.Op))
      return;
    std::string Why =
        "the " + opName(Jump.Kind).str() + " at " + where(Jump, Jump.Loc) +
        " leaves the " + opName(LoopFrame.Op->Kind).str() + " at " +
        where(*LoopFrame.Op, LoopFrame.Op->Loc) +
        " under divergent control flow (" + Cause.Explanation + ")";
    LoopExits.try_emplace(LoopFrame.Op, Cause.Root, std::move(Why));
    Changed = true;
  }

  void walkJump(const Operation &Op) {
    if (Op.Kind == OpKind::Return) {
      // A return leaves every enclosing loop.
      for (size_t I = 0; I < Frames.size(); ++I)
        if (Frames[I].IsLoop)
          if (const Frame *Cause = divergentFrame(I + 1))
            markLoopExit(Frames[I], Op, *Cause);
      return;
    }
    // break and continue leave (an iteration of) the innermost loop.
    for (size_t I = Frames.size(); I-- > 0;) {
      if (!Frames[I].IsLoop)
        continue;
      if (const Frame *Cause = divergentFrame(I + 1))
        markLoopExit(Frames[I], Op, *Cause);
      return;
    }
  }

  void walkRegions(const Operation &Op, Frame F) {
    Frames.push_back(std::move(F));
    for (const Block &B : Op.Regions)
      walkBlock(B);
    Frames.pop_back();
  }

  void walkBlock(const Block &B) {
    for (const Operation &Op : B.Ops)
      walkOp(Op);
  }

  void walkOp(const Operation &Op) {
    OpClass Class = Op.opClass();
    switch (Class) {
    case OpClass::Builtin:
    case OpClass::BuiltinXYZ:
      switch (Op.Kind) {
      case OpKind::UnitPos:
      case OpKind::AbsolutePos:
      case OpKind::UnitPosPlane:
      case OpKind::PlanePos:
        mark(Op.Result, addRoot(builtinName(Op)));
        break;
      default:
        break;
      }
      return;
    case OpClass::Const:
    case OpClass::Len:
    case OpClass::VarDecl:
    case OpClass::ArrayDecl:
    case OpClass::MatrixDecl:
      return;
    case OpClass::Get:
      mark(Op.Result, operandRoot(Op, 0));
      return;
    case OpClass::Load: {
      if (Op.Kind == OpKind::WorkgroupUniformLoad) {
        // A barrier whose result every unit sees the same (§12.2): uniform
        // whatever its index (the verifier requires a uniform one).
        recordControl(Op);
        return;
      }
      int Root = operandRoot(Op, 1);
      ValueId Mem = operandId(Op, 0);
      // Shared memory and buffers follow the contract's rule: a load at a
      // uniform index is uniform. A local array is per unit.
      if (Root < 0 && validId(Mem) && K.Values[Mem].Kind == ValueKind::Local)
        Root = rootOf(Mem);
      mark(Op.Result, Root);
      return;
    }
    case OpClass::Store: {
      ValueId Mem = operandId(Op, 0);
      if (validId(Mem) && K.Values[Mem].Kind == ValueKind::Local)
        mark(Mem,
             firstOf({operandRoot(Op, 2), operandRoot(Op, 1), controlRoot()}));
      return;
    }
    case OpClass::Set:
      mark(operandId(Op, 0), firstOf({operandRoot(Op, 1), controlRoot()}));
      return;
    case OpClass::AtomicRMW:
    case OpClass::AtomicCas:
    case OpClass::AtomicLoad:
    case OpClass::PlaneReduce:
    case OpClass::PlaneBool:
    case OpClass::PlaneLane:
    case OpClass::PlaneElect:
    case OpClass::PlaneBallot:
      mark(Op.Result, addRoot("the result of " + opName(Op.Kind).str() +
                              " at " + where(Op, Op.Loc)));
      if (Class == OpClass::AtomicRMW || Class == OpClass::AtomicCas ||
          Class == OpClass::AtomicLoad)
        return;
      recordControl(Op);
      return;
    case OpClass::AtomicStore:
    case OpClass::DebugPrint: // no result; may stand in divergent code
      return;
    case OpClass::Barrier:
    case OpClass::Cmma: // plane-collective, like plane operations
      recordControl(Op);
      return;
    // A unit's own fragment elements (§5.6): cmma_count is the same for
    // every unit, a position follows its operands, an element read differs
    // from unit to unit; cmma_set writes the unit's own element.
    case OpClass::CmmaElem:
      if (Op.Kind == OpKind::CmmaRow || Op.Kind == OpKind::CmmaCol)
        mark(Op.Result, firstOf({operandRoot(Op, 1), operandRoot(Op, 2)}));
      else if (Op.Kind == OpKind::CmmaGet)
        mark(Op.Result, addRoot("the result of " + opName(Op.Kind).str() +
                                " at " + where(Op, Op.Loc)));
      return;
    case OpClass::CmmaSet:
      return;
    // Barrier objects (docs/LangRef.md §13): a cube's barrier is declared
    // and waited on by all its units together; tokens may differ per unit.
    case OpClass::BarrierDecl:
      if (Op.Kind == OpKind::BarrierCube)
        recordControl(Op);
      return;
    case OpClass::BarrierArrive:
      mark(Op.Result, addRoot("the result of " + opName(Op.Kind).str() +
                              " at " + where(Op, Op.Loc)));
      return;
    case OpClass::BarrierExpectTx:
    // Tensor map copies (docs/LangRef.md §17) write shared memory and
    // buffers, whose loads are judged by their index (§2.4).
    case OpClass::TensorCopy:
    case OpClass::TensorStoreGroup:
      return;
    case OpClass::BarrierWait: {
      ValueId Bar = operandId(Op, 0);
      if (validId(Bar) && K.Values[Bar].Kind == ValueKind::Shared)
        recordControl(Op);
      return;
    }
    case OpClass::AsyncCopy: {
      // %bar, %src, %srcOffset, %dst, %dstOffset, %count: a copy into a
      // local array is a store of every element it copies.
      ValueId Src = operandId(Op, 1), Dst = operandId(Op, 3);
      if (!validId(Dst) || K.Values[Dst].Kind != ValueKind::Local)
        return;
      int SrcRoot = validId(Src) && K.Values[Src].Kind == ValueKind::Local
                        ? rootOf(Src)
                        : -1;
      mark(Dst, firstOf({SrcRoot, operandRoot(Op, 2), operandRoot(Op, 4),
                         operandRoot(Op, 5), controlRoot()}));
      return;
    }
    case OpClass::If:
    case OpClass::Switch: {
      Frame F(&Op, /*IsLoop=*/false);
      F.Root = operandRoot(Op, 0);
      if (F.Root >= 0)
        F.Explanation = std::string("the ") +
                        (Class == OpClass::If ? "condition" : "selector") +
                        " at " + where(Op, operandLoc(Op, 0)) + " depends on " +
                        Info.Roots[F.Root];
      walkRegions(Op, std::move(F));
      return;
    }
    case OpClass::For: {
      int Root = -1;
      size_t Divergent = 0; // the first divergent operand: lo, hi or step
      for (size_t I = 0; I < Op.Operands.size() && Root < 0; ++I) {
        Root = operandRoot(Op, I);
        Divergent = I;
      }
      mark(Op.Result, Root);
      Frame F(&Op, /*IsLoop=*/true);
      if (Root >= 0) {
        F.Root = Root;
        bool Step = Divergent == 2;
        F.Explanation = (Step ? "the step of the for at "
                              : "the bounds of the for at ") +
                        where(Op, Op.Loc) +
                        (Step ? " depends on " : " depend on ") +
                        Info.Roots[Root];
      } else {
        applyLoopExit(F);
      }
      walkRegions(Op, std::move(F));
      return;
    }
    case OpClass::Loop: {
      Frame F(&Op, /*IsLoop=*/true);
      applyLoopExit(F);
      walkRegions(Op, std::move(F));
      return;
    }
    case OpClass::Jump:
      walkJump(Op);
      return;
    default: {
      // Pure operations: divergent when an operand is.
      int Root = -1;
      for (size_t I = 0; I < Op.Operands.size() && Root < 0; ++I)
        Root = operandRoot(Op, I);
      mark(Op.Result, Root);
      return;
    }
    }
  }

  void applyLoopExit(Frame &F) {
    auto It = LoopExits.find(F.Op);
    if (It == LoopExits.end())
      return;
    F.Root = It->second.first;
    F.Explanation = It->second.second;
  }

  void recordControl(const Operation &Op) {
    if (const Frame *F = divergentFrame())
      Info.Control[&Op] = F->Explanation;
  }
};

} // namespace kiln

UniformityInfo::UniformityInfo(const IRKernel &K) {
  UniformityWalker(K, *this).run();
}

const std::string *UniformityInfo::divergenceRoot(ValueId Id) const {
  if (Id >= RootOf.size() || RootOf[Id] < 0)
    return nullptr;
  return &Roots[RootOf[Id]];
}

const std::string *
UniformityInfo::controlDivergence(const Operation &Op) const {
  auto It = Control.find(&Op);
  return It == Control.end() ? nullptr : &It->second;
}
