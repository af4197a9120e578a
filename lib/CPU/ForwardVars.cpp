//===- ForwardVars.cpp - Reads of variables as the values they hold -------===//
//
// See ForwardVars.h and docs/Lowering.md §5.
//
//===----------------------------------------------------------------------===//

#include "ForwardVars.h"

#include "Rematerialization.h"
#include "Segmentation.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::lowering;

namespace {

/// What recomputing a value takes, as Rematerialization.h counts it.
struct ChainCost {
  unsigned Depth = 0;
  unsigned VaryingDepth = 0;
  bool Uniform = true;
};

/// The value a variable holds at a point of its block.
struct KnownValue {
  Operand Value;        ///< a literal, or a value visible where it is read
  bool Crossed = false; ///< a barrier or plane operation ran since
};
using KnownMap = llvm::DenseMap<ValueId, KnownValue>;

/// A barrier or plane operation: the unit loop ends there (Segmentation.h;
/// any wait on a barrier object counts, which may cut more than it does).
bool splitsAlone(const Operation &Op) {
  OpClass Class = Op.opClass();
  return isBarrierOrPlaneOp(Class) || Class == OpClass::BarrierWait ||
         Op.Kind == OpKind::BarrierCube;
}

bool containsSplit(const Operation &Op) {
  if (splitsAlone(Op))
    return true;
  for (const Block &R : Op.Regions)
    for (const Operation &I : R.Ops)
      if (containsSplit(I))
        return true;
  return false;
}

/// The variables set anywhere in \p Op.
void collectSets(const Operation &Op, llvm::DenseSet<ValueId> &Sets) {
  if (Op.Kind == OpKind::Set && !Op.Operands.empty())
    Sets.insert(Op.Operands[0].Value);
  for (const Block &R : Op.Regions)
    for (const Operation &I : R.Ops)
      collectSets(I, Sets);
}

/// The values defined anywhere in \p B.
void collectDefs(const Block &B, llvm::DenseSet<ValueId> &Defs) {
  for (const Operation &Op : B.Ops) {
    if (Op.Result != NoValue)
      Defs.insert(Op.Result);
    for (const Block &R : Op.Regions)
      collectDefs(R, Defs);
  }
}

bool sameOperand(const Operand &A, const Operand &B) {
  if (A.isLiteral() != B.isLiteral())
    return false;
  if (!A.isLiteral())
    return A.Value == B.Value;
  return A.Lit.Ty == B.Lit.Ty && A.Lit.Bits == B.Lit.Bits;
}

bool isBoolLiteral(const Operand &O, bool Want) {
  return O.isLiteral() && O.Lit.Ty.isBool() && !O.Lit.Ty.isLine() &&
         (O.Lit.Bits != 0) == Want;
}

class Forwarder {
public:
  explicit Forwarder(IRKernel &K) : K(K) {}

  /// Rewrites the kernel; whether any read was forwarded.
  bool run() {
    findUntracked(K.Body);
    for (ValueId P : K.Params)
      if (!K.value(P).isMemory())
        Chains[P] = ChainCost();
    KnownMap Known;
    walk(K.Body, Known);
    if (Replaced.empty())
      return false;
    dropUnusedSelects();
    return true;
  }

private:
  /// Variables that an operation other than get and set names: left alone.
  void findUntracked(const Block &B) {
    for (const Operation &Op : B.Ops) {
      for (size_t I = 0; I < Op.Operands.size(); ++I) {
        const Operand &O = Op.Operands[I];
        if (O.isLiteral() || O.Value >= K.Values.size() ||
            K.value(O.Value).Kind != ValueKind::Var)
          continue;
        bool Plain = I == 0 && (Op.Kind == OpKind::Get || Op.Kind == OpKind::Set);
        if (!Plain)
          Untracked.insert(O.Value);
      }
      for (const Block &R : Op.Regions)
        findUntracked(R);
    }
  }

  void rewriteOperands(Operation &Op) {
    for (Operand &O : Op.Operands)
      if (!O.isLiteral()) {
        auto It = Replaced.find(O.Value);
        if (It != Replaced.end())
          O.Value = It->second;
      }
  }

  /// Records what recomputing \p Op's result would take, when it can be.
  void noteChain(const Operation &Op) {
    if (Op.Result == NoValue)
      return;
    OpClass Class = Op.opClass();
    if (Class == OpClass::Builtin || Class == OpClass::BuiltinXYZ) {
      ChainCost C;
      C.Uniform = !isUnitVaryingBuiltin(Op.Kind);
      Chains[Op.Result] = C;
      return;
    }
    if (Class == OpClass::Const || Class == OpClass::For) {
      // A `for` around a read across a barrier holds the barrier: it runs at
      // cube level and its variable is the same for every unit.
      Chains[Op.Result] = ChainCost();
      return;
    }
    if (!isPureArithmetic(Class) || Op.ResultType.isFloat() ||
        Op.ResultType.isLine())
      return;
    ChainCost C;
    for (const Operand &O : Op.Operands) {
      if (O.isLiteral())
        continue;
      auto It = Chains.find(O.Value);
      if (It == Chains.end())
        return;
      C.Depth = std::max(C.Depth, It->second.Depth);
      C.VaryingDepth = std::max(C.VaryingDepth, It->second.VaryingDepth);
      C.Uniform &= It->second.Uniform;
    }
    C.Depth += 1;
    if (!C.Uniform && Class != OpClass::BinaryBool)
      C.VaryingDepth += 1;
    Chains[Op.Result] = C;
  }

  /// Whether later steps recompute \p V rather than keep it per unit.
  bool recomputable(ValueId V) const {
    auto It = Chains.find(V);
    return It != Chains.end() && It->second.Depth <= MaxUniformRematDepth &&
           It->second.VaryingDepth <= MaxRematDepth;
  }

  static void markCrossed(KnownMap &Known) {
    for (auto &Entry : Known)
      Entry.second.Crossed = true;
  }

  void walk(Block &B, KnownMap &Known) {
    std::vector<Operation> Out;
    Out.reserve(B.Ops.size());
    for (Operation &Op : B.Ops) {
      rewriteOperands(Op);
      switch (Op.Kind) {
      case OpKind::Get: {
        ValueId Var = Op.Operands[0].Value;
        auto It = Known.find(Var);
        if (It != Known.end() && It->second.Crossed &&
            !It->second.Value.isLiteral() &&
            recomputable(It->second.Value.Value) &&
            K.value(It->second.Value.Value).Ty == Op.ResultType) {
          Replaced[Op.Result] = It->second.Value.Value;
          continue; // the read is gone
        }
        break;
      }
      case OpKind::Set:
        if (!Untracked.contains(Op.Operands[0].Value))
          Known[Op.Operands[0].Value] = KnownValue{Op.Operands[1], false};
        break;
      case OpKind::Var:
        Known.erase(Op.Result);
        break;
      case OpKind::If:
        walkIf(Op, Known, Out);
        continue;
      default:
        if (!Op.Regions.empty()) {
          walkConstruct(Op, Known);
        } else if (splitsAlone(Op)) {
          markCrossed(Known);
        }
        break;
      }
      noteChain(Op);
      Out.push_back(std::move(Op));
    }
    B.Ops = std::move(Out);
  }

  /// A loop or a `switch`: what it sets is unknown after it (and, for a
  /// loop, inside it too, as an earlier iteration may have set it).
  void walkConstruct(Operation &Op, KnownMap &Known) {
    llvm::DenseSet<ValueId> Sets;
    collectSets(Op, Sets);
    bool Split = containsSplit(Op);
    bool Loop = Op.Kind != OpKind::Switch;
    if (Loop)
      for (ValueId V : Sets)
        Known.erase(V);
    if (Op.Kind == OpKind::For && Op.Result != NoValue)
      noteChain(Op); // the induction variable, before the body uses it
    for (Block &R : Op.Regions) {
      KnownMap Inner = Known;
      if (Loop && Split)
        markCrossed(Inner); // from the second iteration on
      walk(R, Inner);
    }
    for (ValueId V : Sets)
      Known.erase(V);
    if (Split)
      markCrossed(Known);
  }

  void walkIf(Operation &Op, KnownMap &Known, std::vector<Operation> &Out) {
    llvm::DenseSet<ValueId> Sets;
    collectSets(Op, Sets);
    bool Split = containsSplit(Op);
    KnownMap ThenKnown = Known, ElseKnown = Known;
    walk(Op.Regions[0], ThenKnown);
    if (Op.HasElse && Op.Regions.size() > 1)
      walk(Op.Regions[1], ElseKnown);
    llvm::DenseSet<ValueId> ThenDefs, ElseDefs;
    collectDefs(Op.Regions[0], ThenDefs);
    if (Op.HasElse && Op.Regions.size() > 1)
      collectDefs(Op.Regions[1], ElseDefs);
    Operand Cond = Op.Operands[0];
    SourceLoc Loc = Op.Loc;
    Out.push_back(std::move(Op));

    for (ValueId V : Sets) {
      Known.erase(V);
      if (Untracked.contains(V) || Cond.isLiteral())
        continue;
      auto T = ThenKnown.find(V), E = ElseKnown.find(V);
      if (T == ThenKnown.end() || E == ElseKnown.end())
        continue;
      const Operand &TV = T->second.Value, &EV = E->second.Value;
      if ((!TV.isLiteral() && ThenDefs.contains(TV.Value)) ||
          (!EV.isLiteral() && ElseDefs.contains(EV.Value)))
        continue; // defined inside a branch: not visible after the `if`
      if (sameOperand(TV, EV)) {
        Known[V] = KnownValue{TV, Split};
      } else if (isBoolLiteral(TV, true) && isBoolLiteral(EV, false)) {
        Known[V] = KnownValue{Cond, Split};
      } else {
        Operation Sel;
        Sel.Kind = OpKind::Select;
        Sel.Loc = Loc;
        Sel.ResultType = K.value(V).Ty;
        ValueInfo Info;
        Info.Name = K.value(V).Name + ".if" + std::to_string(K.Values.size());
        Info.Ty = Sel.ResultType;
        Info.Loc = Loc;
        Sel.Result = K.addValue(std::move(Info));
        Sel.Operands = {Cond, TV, EV};
        noteChain(Sel);
        Inserted.insert(Sel.Result);
        Known[V] = KnownValue{Operand::value(Sel.Result, Loc), Split};
        Out.push_back(std::move(Sel));
      }
    }
    if (Split)
      markCrossed(Known);
  }

  /// Selects made for variables whose reads were not forwarded go again.
  void dropUnusedSelects() {
    for (bool Changed = true; Changed;) {
      llvm::DenseSet<ValueId> Used;
      countUses(K.Body, Used);
      Changed = eraseUnused(K.Body, Used);
    }
  }
  void countUses(const Block &B, llvm::DenseSet<ValueId> &Used) const {
    for (const Operation &Op : B.Ops) {
      for (const Operand &O : Op.Operands)
        if (!O.isLiteral())
          Used.insert(O.Value);
      for (const Block &R : Op.Regions)
        countUses(R, Used);
    }
  }
  bool eraseUnused(Block &B, const llvm::DenseSet<ValueId> &Used) {
    bool Changed = false;
    std::vector<Operation> Out;
    Out.reserve(B.Ops.size());
    for (Operation &Op : B.Ops) {
      for (Block &R : Op.Regions)
        Changed |= eraseUnused(R, Used);
      if (Op.Result != NoValue && Inserted.contains(Op.Result) &&
          !Used.contains(Op.Result)) {
        Changed = true;
        continue;
      }
      Out.push_back(std::move(Op));
    }
    B.Ops = std::move(Out);
    return Changed;
  }

  IRKernel &K;
  llvm::DenseSet<ValueId> Untracked;
  llvm::DenseMap<ValueId, ValueId> Replaced;
  llvm::DenseMap<ValueId, ChainCost> Chains;
  llvm::DenseSet<ValueId> Inserted;
};

} // namespace

/// Whether \p B (nested blocks too) reads a variable.
static bool readsVar(const Block &B) {
  for (const Operation &Op : B.Ops) {
    if (Op.Kind == OpKind::Get)
      return true;
    for (const Block &R : Op.Regions)
      if (readsVar(R))
        return true;
  }
  return false;
}

std::optional<IRKernel> kiln::lowering::forwardVars(const IRKernel &K) {
  // Most kernels read no variable: no copy for them.
  if (!readsVar(K.Body))
    return std::nullopt;
  IRKernel Copy = K;
  if (!Forwarder(Copy).run())
    return std::nullopt;
  return Copy;
}
