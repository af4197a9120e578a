//===- AtomicPrivatization.cpp - Buffers whose atomics can be private ----===//

#include "AtomicPrivatization.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace kiln;
using namespace kiln::lowering;

/// The merge of atomic operation \p Kind on elements of \p T, or None when
/// it cannot be privatised.
static PrivateAtomic privateAtomicOf(OpKind Kind, Type T) {
  if (T.isLine())
    return PrivateAtomic::None;
  switch (T.elementKind()) {
  case ScalarKind::I32:
  case ScalarKind::U32:
  case ScalarKind::I64:
  case ScalarKind::U64:
    break;
  case ScalarKind::F32:
    return Kind == OpKind::AtomicAdd ? PrivateAtomic::Add
                                     : PrivateAtomic::None;
  default:
    return PrivateAtomic::None;
  }
  switch (Kind) {
  case OpKind::AtomicAdd:
  case OpKind::AtomicSub:
    return PrivateAtomic::Add;
  case OpKind::AtomicMin:
    return PrivateAtomic::Min;
  case OpKind::AtomicMax:
    return PrivateAtomic::Max;
  case OpKind::AtomicAnd:
    return PrivateAtomic::And;
  case OpKind::AtomicOr:
    return PrivateAtomic::Or;
  case OpKind::AtomicXor:
    return PrivateAtomic::Xor;
  default:
    return PrivateAtomic::None;
  }
}

std::vector<PrivateAtomic>
kiln::lowering::findPrivatizableBuffers(const IRKernel &K,
                                        const CpuVariant &Variant) {
  std::vector<PrivateAtomic> Out(K.Params.size(), PrivateAtomic::None);
  if (Variant.MayAlias)
    return Out;
  // Per buffer: the merge of its atomics so far (None before the first),
  // or disqualified.
  llvm::DenseMap<ValueId, PrivateAtomic> Merge;
  llvm::DenseSet<ValueId> Disqualified, UsedValues;
  llvm::SmallVector<const Operation *, 16> Atomics;
  for (ValueId P : K.Params)
    if (P < K.Values.size() && K.value(P).Kind == ValueKind::Buffer)
      Merge[P] = PrivateAtomic::None;
  forEachOperation(K, [&](const Operation &Op, unsigned) {
    for (size_t I = 0; I < Op.Operands.size(); ++I) {
      const Operand &O = Op.Operands[I];
      if (O.isLiteral())
        continue;
      UsedValues.insert(O.Value);
      auto It = Merge.find(O.Value);
      if (It == Merge.end())
        continue;
      if (I == 0 && (Op.opClass() == OpClass::Len ||
                     Op.opClass() == OpClass::TensorMeta))
        continue;
      if (I != 0 || Op.opClass() != OpClass::AtomicRMW) {
        Disqualified.insert(O.Value);
        continue;
      }
      PrivateAtomic PA = privateAtomicOf(Op.Kind, K.value(O.Value).Ty);
      if (PA == PrivateAtomic::None ||
          (It->second != PrivateAtomic::None && It->second != PA)) {
        Disqualified.insert(O.Value);
        continue;
      }
      It->second = PA;
      Atomics.push_back(&Op);
    }
  });
  // An atomic whose old value is used somewhere disqualifies its buffer.
  for (const Operation *Op : Atomics)
    if (Op->Result != NoValue && UsedValues.contains(Op->Result))
      Disqualified.insert(Op->Operands[0].Value);
  unsigned Count = 0;
  for (size_t I = 0; I < K.Params.size() && Count < MaxPrivatized; ++I) {
    auto It = Merge.find(K.Params[I]);
    if (It == Merge.end() || It->second == PrivateAtomic::None ||
        Disqualified.contains(K.Params[I]))
      continue;
    Out[I] = It->second;
    ++Count;
  }
  return Out;
}
