//===- Handles.h - The C API's handle tables --------------------*- C++ -*-===//
//
// A C handle is a 64-bit value, never a pointer to memory:
//
//   bits 63..56  the handle's kind (HandleKind), so that a stream passed as an
//                event is named as such
//   bits 55..24  the generation of its slot when it was made (odd: live)
//   bits 23..0   its slot's index + 1 (so that no valid handle is 0)
//
// Each kind has a Registry: slots in chunks that are allocated once and never
// freed, so that looking a handle up never reads freed memory, whatever the
// value. A slot holds a copy of the C++ API's handle (a shared reference) and
// its generation, both guarded by the slot's spin lock: a lookup copies the
// C++ handle out under the lock, destroying moves it out and bumps the
// generation under the lock (and drops it after). So a destroyed handle, a
// handle whose slot was reused, a handle of another kind and a made-up value
// are all told apart from a live handle, soundly, even when a destroy races
// with a use. Freed slots are reused first in, first out, and only once
// more than QuarantineSlots of them wait (or every slot has been made): a
// slot's generation grows slowly.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CAPI_HANDLES_H
#define KILN_LIB_CAPI_HANDLES_H

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace kiln::capi {

static_assert(sizeof(void *) == 8, "Kiln's C handles are 64-bit values");

enum class HandleKind : uint8_t {
  Device = 1,
  Kernel = 2,
  Buffer = 3,
  Stream = 4,
  Event = 5,
};

/// "kiln_device", ...; null for a value that is no kind.
inline const char *handleKindName(unsigned Kind) {
  switch (Kind) {
  case unsigned(HandleKind::Device):
    return "kiln_device";
  case unsigned(HandleKind::Kernel):
    return "kiln_kernel";
  case unsigned(HandleKind::Buffer):
    return "kiln_buffer";
  case unsigned(HandleKind::Stream):
    return "kiln_stream";
  case unsigned(HandleKind::Event):
    return "kiln_event";
  }
  return nullptr;
}

/// The kind bits of handle \p H.
inline unsigned handleKindOf(uint64_t H) { return unsigned(H >> 56); }

/// What a lookup found.
enum class LookupResult {
  Ok,
  Null,      ///< the handle is 0
  WrongKind, ///< a handle of another kind (or garbage in the kind bits)
  Invalid,   ///< never made: no such slot, or a generation never issued
  Destroyed, ///< made, then destroyed
};

/// A lock held for a few instructions (a shared_ptr copy or move).
class SpinLock {
public:
  void lock() {
    while (Locked.exchange(true, std::memory_order_acquire))
      while (Locked.load(std::memory_order_relaxed))
        std::this_thread::yield();
  }
  void unlock() { Locked.store(false, std::memory_order_release); }

private:
  std::atomic<bool> Locked{false};
};

/// The table of one kind of handle; \p T is what a slot holds (a copyable
/// C++ API handle).
template <typename T> class Registry {
public:
  static constexpr unsigned IndexBits = 24;
  static constexpr unsigned ChunkBits = 12;
  static constexpr uint32_t ChunkSize = 1u << ChunkBits;
  static constexpr uint32_t MaxChunks = 1u << (IndexBits - ChunkBits);
  /// Slots: index + 1 must fit the index bits.
  static constexpr uint32_t MaxSlots = (1u << IndexBits) - 1;
  /// Freed slots waiting before the oldest is reused.
  static constexpr size_t QuarantineSlots = 64;

  explicit Registry(HandleKind Kind) : Kind(Kind) {}
  Registry(const Registry &) = delete;
  Registry &operator=(const Registry &) = delete;

  HandleKind kind() const { return Kind; }

  /// A new handle holding \p Value; 0 when the table is full. Throws
  /// std::bad_alloc when a chunk cannot be had.
  uint64_t insert(T Value) {
    std::lock_guard<std::mutex> G(M);
    uint32_t Index;
    if (Free.size() > QuarantineSlots ||
        (NumSlots == MaxSlots && !Free.empty())) {
      Index = Free.front();
      Free.pop_front();
    } else if (NumSlots < MaxSlots) {
      Index = NumSlots;
      uint32_t C = Index >> ChunkBits;
      if (!Chunks[C].load(std::memory_order_relaxed))
        Chunks[C].store(new Slot[ChunkSize], std::memory_order_release);
      ++NumSlots;
    } else {
      return 0;
    }
    Slot &S = slot(Index);
    std::lock_guard<SpinLock> SG(S.Lock);
    ++S.Gen; // odd: live
    S.Value.emplace(std::move(Value));
    return (uint64_t(Kind) << 56) | (uint64_t(S.Gen) << IndexBits) |
           (uint64_t(Index) + 1);
  }

  /// Copies what live handle \p H holds into \p Out.
  LookupResult get(uint64_t H, T &Out) {
    Slot *S = nullptr;
    uint32_t Gen = 0;
    if (LookupResult R = find(H, S, Gen); R != LookupResult::Ok)
      return R;
    std::lock_guard<SpinLock> SG(S->Lock);
    if (S->Gen != Gen)
      return staleness(S->Gen, Gen);
    Out = *S->Value;
    return LookupResult::Ok;
  }

  /// Destroys live handle \p H: its value is moved into \p Out (for the
  /// caller to drop outside every lock) and its slot freed.
  LookupResult take(uint64_t H, std::optional<T> &Out) {
    Slot *S = nullptr;
    uint32_t Gen = 0;
    if (LookupResult R = find(H, S, Gen); R != LookupResult::Ok)
      return R;
    uint32_t Index = uint32_t(H & ((1u << IndexBits) - 1)) - 1;
    {
      std::lock_guard<SpinLock> SG(S->Lock);
      if (S->Gen != Gen)
        return staleness(S->Gen, Gen);
      ++S->Gen; // even: dead
      Out = std::move(S->Value);
      S->Value.reset();
    }
    std::lock_guard<std::mutex> G(M);
    Free.push_back(Index);
    return LookupResult::Ok;
  }

private:
  struct Slot {
    SpinLock Lock;
    uint32_t Gen = 0; ///< odd while live
    std::optional<T> Value;
  };

  Slot &slot(uint32_t Index) {
    return Chunks[Index >> ChunkBits].load(
        std::memory_order_acquire)[Index & (ChunkSize - 1)];
  }

  /// The slot and generation \p H names, if it can name one.
  LookupResult find(uint64_t H, Slot *&S, uint32_t &Gen) {
    if (H == 0)
      return LookupResult::Null;
    if (handleKindOf(H) != unsigned(Kind))
      return LookupResult::WrongKind;
    uint32_t IndexPlusOne = uint32_t(H & ((1u << IndexBits) - 1));
    Gen = uint32_t(H >> IndexBits);
    if (IndexPlusOne == 0 || Gen % 2 == 0)
      return LookupResult::Invalid;
    uint32_t Index = IndexPlusOne - 1;
    Slot *Chunk = Chunks[Index >> ChunkBits].load(std::memory_order_acquire);
    if (!Chunk)
      return LookupResult::Invalid;
    S = &Chunk[Index & (ChunkSize - 1)];
    return LookupResult::Ok;
  }

  /// Why a slot now at generation \p Now does not match \p Gen: a later
  /// generation means destroyed, anything else was never issued.
  static LookupResult staleness(uint32_t Now, uint32_t Gen) {
    uint32_t Ahead = Now - Gen; // wraps
    return Ahead != 0 && Ahead < (1u << 31) ? LookupResult::Destroyed
                                            : LookupResult::Invalid;
  }

  const HandleKind Kind;
  std::atomic<Slot *> Chunks[MaxChunks] = {};
  std::mutex M; ///< guards NumSlots, Free and chunk creation
  uint32_t NumSlots = 0;
  std::deque<uint32_t> Free;
};

} // namespace kiln::capi

#endif // KILN_LIB_CAPI_HANDLES_H
