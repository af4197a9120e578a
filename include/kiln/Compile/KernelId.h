//===- KernelId.h - The id of a kernel and its stable hash ------*- C++ -*-===//
//
// A kernel is identified by a string (docs/LangRef.md §9.1): its name plus
// everything the runtime decided when it built it. The tools derive it from
// the IR with kernelIdFromIR (kiln/IR/Hash.h); a GPU runtime may pass its own.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_KERNELID_H
#define KILN_COMPILE_KERNELID_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/xxhash.h"

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace kiln {

/// A kernel's id: its text and a stable 64-bit hash of that text (xxh3; the
/// same in every process, run and machine).
///
/// \c IRHash is not part of the identity (equality and hashing ignore it):
/// it is the hash of the kernel's IR when the caller knows it (hashKernel),
/// and lets the store treat an entry kept for another IR under the same id as
/// stale instead of serving it.
class KernelId {
public:
  KernelId() : Hash(llvm::xxh3_64bits(llvm::StringRef())) {}
  explicit KernelId(std::string Text, std::optional<uint64_t> IRHash = {})
      : Text(std::move(Text)), Hash(llvm::xxh3_64bits(this->Text)),
        IRHash(IRHash) {}

  /// The id's text, e.g. "add-0123456789abcdef".
  const std::string &str() const { return Text; }
  /// The stable hash of str().
  uint64_t stableHash() const { return Hash; }
  /// The hash of the kernel's IR, when known.
  std::optional<uint64_t> irHash() const { return IRHash; }
  void setIRHash(std::optional<uint64_t> H) { IRHash = H; }

  friend bool operator==(const KernelId &A, const KernelId &B) {
    return A.Hash == B.Hash && A.Text == B.Text;
  }
  friend std::strong_ordering operator<=>(const KernelId &A,
                                          const KernelId &B) {
    return A.Text <=> B.Text;
  }

private:
  std::string Text;
  uint64_t Hash;
  std::optional<uint64_t> IRHash;
};

} // namespace kiln

template <> struct std::hash<kiln::KernelId> {
  size_t operator()(const kiln::KernelId &Id) const noexcept {
    return static_cast<size_t>(Id.stableHash());
  }
};

#endif // KILN_COMPILE_KERNELID_H
