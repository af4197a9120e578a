//===- JITLinker.h - Link compiled kernel objects into the process -*- C++
//-*-===//
//
// One ORC ExecutionSession (in-process executor, in-place task dispatch: all
// linking runs on the calling thread), a JITLink ObjectLinkingLayer and the
// process's symbols (libm, libmvec loaded when present) behind every kernel.
//
// Each loaded object gets its own ResourceTracker; objects go into a small
// pool of JITDylibs: the first JITDylib where none of the object's symbols is
// already defined, a new one when all clash. Several variants of one kernel
// (same cube function name) can therefore be loaded at once, while the
// common case (distinct names) links into one JITDylib: a load into one
// shared JITDylib costs less than one into a fresh JITDylib per object
// (docs/Design.md §8); hence the pool.
//
// Ownership: every LoadedKernel holds the linker's state, so the session
// outlives every tracker (docs/Design.md §10.10) even if the JITLinker
// object goes first; the session ends when the last of them goes.
//
// Thread safety: NOT thread-safe by design. load() is meant for one thread
// (the server thread, docs/Design.md §1). Releasing the last copy of a
// LoadedKernel may happen on any thread: that path takes an internal lock.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CPU_JITLINKER_H
#define KILN_CPU_JITLINKER_H

#include "kiln/CPU/LoadedKernel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace kiln {

namespace detail {
struct LinkerState;
} // namespace detail

class JITLinker {
public:
  /// Creates a session. Fails if the host has no JIT support.
  static llvm::Expected<std::unique_ptr<JITLinker>> create();
  ~JITLinker();
  JITLinker(const JITLinker &) = delete;
  JITLinker &operator=(const JITLinker &) = delete;

  /// Links the relocatable object \p Object (copied: the caller's bytes may
  /// go away), resolves its external symbols against the process and looks
  /// up \p Metadata.Symbol. Errors say why: not an object, undefined symbol,
  /// missing entry symbol. On error nothing of the object stays linked.
  llvm::Expected<LoadedKernel> load(llvm::ArrayRef<char> Object,
                                    const CubeMetadata &Metadata);

  /// Objects currently linked (loaded and not yet released).
  size_t loadedCount() const;
  /// JITDylibs in the pool (grows when objects define clashing symbols).
  size_t dylibCount() const;
  /// Kernels whose code could not be removed from the JIT when their last
  /// LoadedKernel went (counted: nothing is printed).
  uint64_t releaseFailures() const;

private:
  explicit JITLinker(std::shared_ptr<detail::LinkerState> State);
  std::shared_ptr<detail::LinkerState> State;
};

} // namespace kiln

#endif // KILN_CPU_JITLINKER_H
