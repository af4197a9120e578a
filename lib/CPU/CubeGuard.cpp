//===- CubeGuard.cpp - A condition without which a cube does nothing ------===//
//
// See CubeGuard.h and docs/Lowering.md §4.
//
//===----------------------------------------------------------------------===//

#include "CubeGuard.h"

#include "Segmentation.h"
#include "UnitRange.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace kiln;
using namespace kiln::lowering;

namespace {

using Conjuncts = llvm::SmallVector<ValueId, 8>;

class GuardFinder {
public:
  explicit GuardFinder(const IRKernel &K) : K(K) {}

  llvm::SmallVector<ValueId, 4> run() {
    if (K.ClusterDimRank > 0)
      return {};
    collect(K.Body, /*TopLevel=*/true);
    if (HasLoop)
      return {};
    // The flags first: what a bool variable set to true implies.
    Conjuncts Path;
    findFlags(K.Body, Path);
    for (auto &[Var, Implied] : FlagGuards)
      if (!NotFlag.contains(Var))
        Flags[Var] = Implied;
    // Then every effect's guards; the guard is in all of them.
    Path.clear();
    std::optional<llvm::DenseSet<ValueId>> Common;
    if (!findEffects(K.Body, Path, Common) || !Common)
      return {};
    llvm::SmallVector<ValueId, 4> Out;
    for (ValueId V : TopLevel)
      if (Common->contains(V))
        Out.push_back(V);
    return Out;
  }

private:
  void collect(const Block &B, bool TopLevel) {
    for (const Operation &Op : B.Ops) {
      if (Op.Kind == OpKind::Loop)
        HasLoop = true;
      if (Op.Result != NoValue) {
        Def[Op.Result] = &Op;
        if (TopLevel && Op.ResultType.isBool() && !Op.ResultType.isLine() &&
            isPureValueOp(Op.opClass()))
          this->TopLevel.insert(Op.Result);
      }
      for (const Block &R : Op.Regions)
        collect(R, false);
    }
  }

  /// The conjuncts of \p Cond: the operands of `and`s, at any depth, and
  /// what a flag among them implies.
  void conjunctsOf(const Operand &Cond, Conjuncts &Out, bool WithFlags,
                   unsigned Depth = 0) const {
    if (Cond.isLiteral() || Depth > 16)
      return;
    Out.push_back(Cond.Value);
    const Operation *D = Def.lookup(Cond.Value);
    if (!D)
      return;
    if (D->Kind == OpKind::And && !D->ResultType.isLine()) {
      for (const Operand &O : D->Operands)
        conjunctsOf(O, Out, WithFlags, Depth + 1);
      return;
    }
    if (WithFlags && D->Kind == OpKind::Get && !D->Operands.empty()) {
      auto It = Flags.find(D->Operands[0].Value);
      if (It != Flags.end())
        Out.append(It->second.begin(), It->second.end());
    }
  }

  static bool isLocal(const IRKernel &K, const Operand &O) {
    if (O.isLiteral() || O.Value >= K.Values.size())
      return false;
    ValueKind Kind = K.value(O.Value).Kind;
    return Kind == ValueKind::Shared || Kind == ValueKind::Local ||
           Kind == ValueKind::Var;
  }

  /// Whether \p Op may change what is seen outside the cube.
  bool hasOutsideEffect(const Operation &Op) const {
    OpClass Class = Op.opClass();
    if (isPureValueOp(Class))
      return false;
    // Barriers and plane operations stay inside the cube; matrix
    // operations may store to a buffer.
    if (isBarrierOrPlaneOp(Class))
      return Class == OpClass::Cmma;
    switch (Class) {
    case OpClass::Load:
    case OpClass::VarDecl:
    case OpClass::ArrayDecl:
    case OpClass::MatrixDecl:
    case OpClass::Get:
    case OpClass::Set:
    case OpClass::AtomicLoad:
    case OpClass::BarrierDecl:
    case OpClass::BarrierArrive:
    case OpClass::BarrierExpectTx:
    case OpClass::BarrierWait:
    case OpClass::CmmaElem:
    case OpClass::CmmaSet:
    case OpClass::TensorMeta:
    case OpClass::If:
    case OpClass::For:
    case OpClass::Switch:
    case OpClass::Jump:
      return false;
    case OpClass::Store:
    case OpClass::AtomicRMW:
    case OpClass::AtomicCas:
    case OpClass::AtomicStore:
      return Op.Operands.empty() || !isLocal(K, Op.Operands[0]);
    default: // copies, matrix stores, prints, tensor stores: assume so
      return true;
    }
  }

  /// Records, for each bool variable, the conjuncts common to every `set`
  /// of `true`; a variable set to anything but literals true and false is
  /// no flag.
  void findFlags(const Block &B, Conjuncts &Path) {
    for (const Operation &Op : B.Ops) {
      if (Op.Kind == OpKind::Set && Op.Operands.size() == 2) {
        ValueId Var = Op.Operands[0].Value;
        const Operand &V = Op.Operands[1];
        bool IsBool = Var < K.Values.size() && K.value(Var).Ty.isBool() &&
                      !K.value(Var).Ty.isLine();
        if (!IsBool || !V.isLiteral()) {
          NotFlag.insert(Var);
        } else if (V.Lit.Bits != 0) {
          llvm::DenseSet<ValueId> Here(Path.begin(), Path.end());
          auto [It, New] = FlagGuards.try_emplace(Var);
          if (New) {
            It->second.assign(Path.begin(), Path.end());
          } else {
            llvm::erase_if(It->second,
                           [&](ValueId C) { return !Here.contains(C); });
          }
        }
      }
      for (const Operand &O : Op.Operands)
        if (!O.isLiteral() && O.Value < K.Values.size() &&
            K.value(O.Value).Kind == ValueKind::Var &&
            !((Op.Kind == OpKind::Get || Op.Kind == OpKind::Set) &&
              &O == &Op.Operands[0]))
          NotFlag.insert(O.Value);
      for (size_t R = 0; R < Op.Regions.size(); ++R) {
        size_t Mark = Path.size();
        if (Op.Kind == OpKind::If && R == 0 && !Op.Operands.empty())
          conjunctsOf(Op.Operands[0], Path, /*WithFlags=*/false);
        findFlags(Op.Regions[R], Path);
        Path.resize(Mark);
      }
    }
  }

  /// Intersects \p Common with the guards of every effect; false when an
  /// effect has no guard at all.
  bool findEffects(const Block &B, Conjuncts &Path,
                   std::optional<llvm::DenseSet<ValueId>> &Common) {
    for (const Operation &Op : B.Ops) {
      if (hasOutsideEffect(Op)) {
        llvm::DenseSet<ValueId> Here(Path.begin(), Path.end());
        if (Common) {
          llvm::DenseSet<ValueId> Both;
          for (ValueId C : *Common)
            if (Here.contains(C))
              Both.insert(C);
          Here = std::move(Both);
        }
        Common = std::move(Here);
        if (Common->empty())
          return false;
      }
      for (size_t R = 0; R < Op.Regions.size(); ++R) {
        size_t Mark = Path.size();
        if (Op.Kind == OpKind::If && R == 0 && !Op.Operands.empty())
          conjunctsOf(Op.Operands[0], Path, /*WithFlags=*/true);
        if (!findEffects(Op.Regions[R], Path, Common))
          return false;
        Path.resize(Mark);
      }
    }
    return true;
  }

  const IRKernel &K;
  bool HasLoop = false;
  llvm::DenseMap<ValueId, const Operation *> Def;
  llvm::SetVector<ValueId> TopLevel;
  llvm::DenseMap<ValueId, Conjuncts> FlagGuards;
  llvm::DenseSet<ValueId> NotFlag;
  llvm::DenseMap<ValueId, Conjuncts> Flags;
};

} // namespace

llvm::SmallVector<ValueId, 4>
kiln::lowering::findCubeGuards(const IRKernel &K) {
  return GuardFinder(K).run();
}
