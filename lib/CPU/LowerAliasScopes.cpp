//===- LowerAliasScopes.cpp - alias.scope and noalias metadata ------------===//
//
// docs/Design.md §10.3: without scopes the vectoriser adds runtime overlap
// checks, and loads of shared arrays are not moved past stores to per-unit
// vars.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/IR/MDBuilder.h"

using namespace kiln;
using namespace kiln::lowering;

void AliasScopes::setup() {
  const IRKernel &K = Cx.K;
  llvm::MDBuilder MDB(Cx.Ctx);
  llvm::MDNode *Domain = MDB.createAnonymousAliasScopeDomain("kiln");
  std::vector<std::pair<ValueId, llvm::MDNode *>> Scopes;
  // In the MayAlias variant the buffers share one scope: they may overlap
  // each other, but never scratch memory.
  llvm::MDNode *Buffers = Cx.Variant.MayAlias
                              ? MDB.createAnonymousAliasScope(Domain, "buffers")
                              : nullptr;
  for (ValueId P : K.Params) {
    const ValueInfo &VI = K.value(P);
    if (VI.Kind != ValueKind::Buffer)
      continue;
    llvm::MDNode *S = Buffers;
    if (!S)
      S = MDB.createAnonymousAliasScope(Domain, VI.Name);
    Scopes.push_back({P, S});
  }
  for (ValueId Id = 0; Id < K.Values.size(); ++Id) {
    const ValueInfo &VI = K.value(Id);
    bool InScratch = VI.Kind == ValueKind::Shared ||
                     VI.Kind == ValueKind::Local ||
                     VI.Kind == ValueKind::Fragment ||
                     (VI.Kind == ValueKind::Var && Cx.Layout.inScratch(Id));
    if (InScratch)
      Scopes.push_back({Id, MDB.createAnonymousAliasScope(Domain, VI.Name)});
  }
  Scopes.push_back({SlotKey, MDB.createAnonymousAliasScope(Domain, "slots")});
  Scopes.push_back(
      {FlagKey, MDB.createAnonymousAliasScope(Domain, "returned")});
  for (auto &[Key, S] : Scopes) {
    ScopeOf[Key] = llvm::MDNode::get(Cx.Ctx, {S});
    llvm::SetVector<llvm::Metadata *> Others;
    for (auto &[Q, T] : Scopes)
      if (T != S)
        Others.insert(T);
    NoAliasOf[Key] = llvm::MDNode::get(Cx.Ctx, Others.getArrayRef());
  }
}

void AliasScopes::tag(llvm::Instruction *I, ValueId Key) {
  if (llvm::MDNode *S = ScopeOf.lookup(Key)) {
    I->setMetadata(llvm::LLVMContext::MD_alias_scope, S);
    I->setMetadata(llvm::LLVMContext::MD_noalias, NoAliasOf.lookup(Key));
  }
}
