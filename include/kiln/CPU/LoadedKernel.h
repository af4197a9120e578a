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

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

namespace kiln {

/// What launches learned about a kernel's speed, shared by every copy of
/// its LoadedKernel: the measured cost of one cube, so that a launch can
/// spread cubes over as many threads as the work is worth (Executor).
struct LaunchProfile {
  /// Picoseconds of one cube's work (smoothed); 0 until first measured.
  std::atomic<uint64_t> PicosPerCube{0};
  void record(uint64_t Picos) {
    uint64_t Old = PicosPerCube.load(std::memory_order_relaxed);
    PicosPerCube.store(Old ? (Old + Picos) / 2 : std::max<uint64_t>(Picos, 1),
                       std::memory_order_relaxed);
  }
};

class LoadedKernel {
public:
  /// An empty kernel: valid() is false.
  LoadedKernel() = default;
  /// \p Code is an opaque owner of the linked code (JITLinker.cpp).
  LoadedKernel(CubeFunction Entry, std::shared_ptr<const CubeMetadata> Metadata,
               std::shared_ptr<void> Code)
      : Entry(Entry), Metadata(std::move(Metadata)), Code(std::move(Code)),
        Profile(std::make_shared<LaunchProfile>()) {}

  bool valid() const { return Entry != nullptr && Metadata != nullptr; }
  explicit operator bool() const { return valid(); }

  /// The cube function (CubeABI.h); null when !valid().
  CubeFunction entry() const { return Entry; }
  /// The launch metadata; only when valid().
  const CubeMetadata &metadata() const { return *Metadata; }
  const std::shared_ptr<const CubeMetadata> &metadataPtr() const {
    return Metadata;
  }
  /// The launches' measurements (null when !valid()).
  LaunchProfile *profile() const { return Profile.get(); }
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
    Profile.reset();
    BufferAlignment = 1;
  }

private:
  CubeFunction Entry = nullptr;
  std::shared_ptr<const CubeMetadata> Metadata;
  std::shared_ptr<void> Code;
  std::shared_ptr<LaunchProfile> Profile;
  uint32_t BufferAlignment = 1;
};

} // namespace kiln

#endif // KILN_CPU_LOADEDKERNEL_H
