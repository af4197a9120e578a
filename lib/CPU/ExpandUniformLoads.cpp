//===- ExpandUniformLoads.cpp - workgroup_uniform_load as barriers --------===//

#include "ExpandUniformLoads.h"

using namespace kiln;

static bool hasUniformLoad(const Block &B) {
  for (const Operation &Op : B.Ops) {
    if (Op.Kind == OpKind::WorkgroupUniformLoad)
      return true;
    for (const Block &R : Op.Regions)
      if (hasUniformLoad(R))
        return true;
  }
  return false;
}

static void expandBlock(Block &B) {
  std::vector<Operation> Out;
  Out.reserve(B.Ops.size());
  for (Operation &Op : B.Ops) {
    for (Block &R : Op.Regions)
      expandBlock(R);
    if (Op.Kind != OpKind::WorkgroupUniformLoad) {
      Out.push_back(std::move(Op));
      continue;
    }
    Operation Barrier;
    Barrier.Kind = OpKind::SyncCube;
    Barrier.Loc = Op.Loc;
    Out.push_back(Barrier);
    Op.Kind = OpKind::Load;
    Out.push_back(std::move(Op));
    Out.push_back(Barrier);
  }
  B.Ops = std::move(Out);
}

std::optional<IRKernel> kiln::lowering::expandUniformLoads(const IRKernel &K) {
  if (!hasUniformLoad(K.Body))
    return std::nullopt;
  IRKernel Copy = K;
  expandBlock(Copy.Body);
  return Copy;
}
