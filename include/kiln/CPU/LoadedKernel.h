//===- LoadedKernel.h - A linked kernel, ready to launch --------*- C++ -*-===//
//
// What JITLinker::load returns: the entry point of a linked cube function,
// its launch metadata and a shared handle on the linked code. Copies are
// cheap (three pointers and two reference counts); the code stays mapped as
// long as one copy holds it, and the last copy to go (destroyed or reset)
// removes it from the JIT. Calling entry() after that is the caller's bug,
// as is using a function pointer obtained from entry() beyond the lifetime
// of every copy.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CPU_LOADEDKERNEL_H
#define KILN_CPU_LOADEDKERNEL_H

#include "kiln/CPU/CubeABI.h"
#include "kiln/CPU/CubeMetadata.h"

#include <memory>

namespace kiln {

class LoadedKernel {
public:
  /// An empty kernel: valid() is false.
  LoadedKernel() = default;
  /// \p Code is an opaque owner of the linked code (JITLinker.cpp).
  LoadedKernel(CubeFunction Entry, std::shared_ptr<const CubeMetadata> Metadata,
               std::shared_ptr<void> Code)
      : Entry(Entry), Metadata(std::move(Metadata)), Code(std::move(Code)) {}

  bool valid() const { return Entry != nullptr && Metadata != nullptr; }
  explicit operator bool() const { return valid(); }

  /// The cube function (CubeABI.h); null when !valid().
  CubeFunction entry() const { return Entry; }
  /// The launch metadata; only when valid().
  const CubeMetadata &metadata() const { return *Metadata; }
  const std::shared_ptr<const CubeMetadata> &metadataPtr() const {
    return Metadata;
  }
  /// The buffer alignment the code assumes (its variant's), checked by every
  /// launch; 1 when nothing is assumed.
  uint32_t bufferAlignment() const { return BufferAlignment; }
  void setBufferAlignment(uint32_t Bytes) { BufferAlignment = Bytes ? Bytes : 1; }
  /// How many LoadedKernel copies share this kernel's code (0 when empty).
  long useCount() const { return Code.use_count(); }

  /// Drops this copy's hold on the code: the kernel's code is removed from
  /// the JIT when no other copy holds it. Afterwards valid() is false.
  void reset() {
    Entry = nullptr;
    Metadata.reset();
    Code.reset();
    BufferAlignment = 1;
  }

private:
  CubeFunction Entry = nullptr;
  std::shared_ptr<const CubeMetadata> Metadata;
  std::shared_ptr<void> Code;
  uint32_t BufferAlignment = 1;
};

} // namespace kiln

#endif // KILN_CPU_LOADEDKERNEL_H
