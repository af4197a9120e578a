//===- Buffer.h - Host memory a launch binds to buffer parameters -*- C++
//-*-===//

#ifndef KILN_RUNTIME_BUFFER_H
#define KILN_RUNTIME_BUFFER_H

#include "kiln/IR/Type.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace kiln {

/// Owning, zero-initialised, 64-byte aligned host memory holding Count
/// elements of one IR type (a scalar or a line; lines are packed, so a
/// `vec<3 x f32>` element is 12 bytes). Move-only; a moved-from buffer is
/// empty (null data, count 0).
class HostBuffer {
public:
  static constexpr size_t Alignment = 64;

  /// Allocates \p Count elements of \p ElementType, all bytes zero. A count
  /// of 0 gives a valid buffer with no elements (and a non-null address).
  /// Fails, without allocating, when the size overflows, exceeds the host's
  /// physical memory, or the memory cannot be had.
  static llvm::Expected<HostBuffer> create(Type ElementType, uint64_t Count);

  HostBuffer() = default;
  HostBuffer(HostBuffer &&Other) noexcept;
  HostBuffer &operator=(HostBuffer &&Other) noexcept;
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  ~HostBuffer();

  Type elementType() const { return ElemTy; }
  uint64_t count() const { return Count; }
  uint64_t sizeInBytes() const { return Count * ElemTy.storeSize(); }
  void *data() { return Data; }
  const void *data() const { return Data; }
  template <typename T> T *as() { return static_cast<T *>(Data); }
  template <typename T> const T *as() const {
    return static_cast<const T *>(Data);
  }

private:
  void release();
  void *Data = nullptr;
  size_t Allocated = 0; ///< bytes actually mapped/allocated
  bool Mapped = false;  ///< from mmap (large) rather than the heap
  Type ElemTy;
  uint64_t Count = 0;
};

} // namespace kiln

#endif // KILN_RUNTIME_BUFFER_H
