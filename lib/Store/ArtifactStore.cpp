//===- ArtifactStore.cpp - compilationStore and storeCompiled ------------===//

#include "kiln/Store/ArtifactStore.h"

using namespace llvm;

namespace kiln {

std::unique_ptr<FileStore> compilationStore(const StoreEnvironment &Env,
                                            StringRef Backend,
                                            StringRef Fingerprint) {
  return FileStore::open(Backend, Fingerprint, Env);
}

bool storeCompiled(FileStore &Store, const KernelCacheKey &Key,
                   ArrayRef<uint8_t> Payload, const EntryInfo &Info) {
  Error E = Store.write(Key, Payload, Info);
  if (!E)
    return true;
  // A refused write is routine, not exceptional: the whole cost is
  // compiling the kernel again next run.
  handleAllErrors(
      std::move(E),
      [&](const StoreRefusal &R) {
        if (!R.quiet())
          Store.warnings().warn("unable to keep the compiled kernel " + Info.KernelId +
                       ": " + R.reason());
      },
      [&](const ErrorInfoBase &Other) {
        Store.warnings().warn("unable to keep the compiled kernel " + Info.KernelId +
                     ": " + Other.message());
      });
  return false;
}

} // namespace kiln
