//===- Buffer.cpp - Host memory for buffer parameters ---------------------===//

#include "kiln/Runtime/Buffer.h"

#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

using namespace kiln;

/// From this size on, memory comes zeroed and lazily from mmap instead of
/// being zeroed by hand.
static constexpr size_t MapThreshold = 256 * 1024;

llvm::Expected<HostBuffer> HostBuffer::create(Type ElementType,
                                              uint64_t Count) {
  uint64_t Elem = ElementType.storeSize();
  if (Count != 0 && Elem > UINT64_MAX / Count)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "buffer of %llu elements of %s overflows the address space",
        static_cast<unsigned long long>(Count), ElementType.str().c_str());
  uint64_t Bytes = Count * Elem;
  // Round up to the alignment; at least one block so data() is never null.
  uint64_t Rounded = Bytes == 0
                         ? Alignment
                         : (Bytes + Alignment - 1) & ~uint64_t(Alignment - 1);
  if (Rounded < Bytes || Rounded > SIZE_MAX / 2)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "buffer of %llu bytes is too large for this host",
        static_cast<unsigned long long>(Bytes));
  // Lazily mapped memory would only fail when touched (or summon the OOM
  // killer): refuse up front what the machine cannot hold at all.
  long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
  if (Pages > 0 && PageSize > 0 &&
      Rounded / uint64_t(PageSize) > uint64_t(Pages))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "cannot allocate a buffer of %llu bytes (%llu elements of %s): the "
        "host has %llu bytes of memory",
        static_cast<unsigned long long>(Bytes),
        static_cast<unsigned long long>(Count), ElementType.str().c_str(),
        static_cast<unsigned long long>(Pages) * PageSize);
  HostBuffer B;
  if (Rounded >= MapThreshold) {
    void *P = mmap(nullptr, Rounded, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (P == MAP_FAILED)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "cannot allocate a buffer of %llu bytes (%llu elements of %s)",
          static_cast<unsigned long long>(Bytes),
          static_cast<unsigned long long>(Count), ElementType.str().c_str());
    B.Data = P; // page aligned, zero filled
    B.Mapped = true;
  } else {
    void *P = std::aligned_alloc(Alignment, Rounded);
    if (!P)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot allocate a buffer of %llu bytes",
                                     static_cast<unsigned long long>(Bytes));
    std::memset(P, 0, Rounded);
    B.Data = P;
  }
  B.Allocated = Rounded;
  B.ElemTy = ElementType;
  B.Count = Count;
  return B;
}

HostBuffer::HostBuffer(HostBuffer &&Other) noexcept
    : Data(std::exchange(Other.Data, nullptr)),
      Allocated(std::exchange(Other.Allocated, 0)),
      Mapped(std::exchange(Other.Mapped, false)), ElemTy(Other.ElemTy),
      Count(std::exchange(Other.Count, 0)) {}

HostBuffer &HostBuffer::operator=(HostBuffer &&Other) noexcept {
  if (this != &Other) {
    release();
    Data = std::exchange(Other.Data, nullptr);
    Allocated = std::exchange(Other.Allocated, 0);
    Mapped = std::exchange(Other.Mapped, false);
    ElemTy = Other.ElemTy;
    Count = std::exchange(Other.Count, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() { release(); }

void HostBuffer::release() {
  if (!Data)
    return;
  if (Mapped)
    munmap(Data, Allocated);
  else
    std::free(Data);
  Data = nullptr;
  Allocated = 0;
  Count = 0;
}
