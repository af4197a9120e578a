//===- KernelCacheKey.h - The key of a stored artifact ----------*- C++ -*-===//

#ifndef KILN_STORE_KERNELCACHEKEY_H
#define KILN_STORE_KERNELCACHEKEY_H

#include "kiln/Compile/ArtifactId.h"

#include <compare>
#include <cstdint>
#include <string>

namespace kiln {

/// A stable hash of the build that contains Kiln: the GNU build-id note of
/// the module holding this function (found with dladdr + dl_iterate_phdr),
/// or, when the module has none, a hash of Kiln's version and
/// LLVM_VERSION_STRING. Computed once per process.
uint64_t buildIdHash();

/// A hash of the Kiln build made when Kiln is built: its library sources,
/// the compiler and its flags, and LLVM_VERSION_STRING. Unlike buildIdHash
/// (the executable's note when Kiln is linked statically) it is the same in
/// every executable of one build, so kiln-compile can warm a store that
/// kiln-run or an embedding program loads; it changes whenever any library
/// source does. Falls back to buildIdHash when the build made no source id.
uint64_t sourceBuildIdHash();

/// The build id's bytes as hex, or "" when the module has no build-id note.
std::string buildIdText();

/// Key of an entry in the store. The kernel id alone does not describe the
/// code that compiled it; pairing it with the build id makes a rebuild of
/// Kiln (which may lower differently) miss instead of loading stale code.
struct KernelCacheKey {
  uint64_t Id = 0;      ///< hash of the kernel id (and variant)
  uint64_t BuildId = 0; ///< buildIdHash() of the writer

  /// The key of \p Kernel (no variant) for \p BuildId.
  static KernelCacheKey fromKernel(const KernelId &Kernel, uint64_t BuildId) {
    return {Kernel.stableHash(), BuildId};
  }
  /// The key of \p Id (kernel and variant) for \p BuildId.
  template <typename V>
  static KernelCacheKey fromArtifactId(const ArtifactId<V> &Id,
                                       uint64_t BuildId) {
    return {Id.stableHash(), BuildId};
  }

  /// 32 hex digits: the id's 16 then the build id's 16.
  std::string hex() const;

  friend auto operator<=>(const KernelCacheKey &,
                          const KernelCacheKey &) = default;
};

} // namespace kiln

#endif // KILN_STORE_KERNELCACHEKEY_H
