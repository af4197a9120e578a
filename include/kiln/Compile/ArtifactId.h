//===- ArtifactId.h - Which artifact a launch needs -------------*- C++ -*-===//
//
// An artifact is keyed by its kernel and by its variant: what the launch
// decides about the artifact that the kernel id does not (on the CPU, bounds
// checking and buffer alignment; docs/LangRef.md §9.2).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_ARTIFACTID_H
#define KILN_COMPILE_ARTIFACTID_H

#include "kiln/Compile/KernelId.h"

#include "llvm/Support/Endian.h"

#include <concepts>
#include <string>

namespace kiln {

/// The variant of a backend whose kernel id says everything.
struct NoVariant {
  friend bool operator==(NoVariant, NoVariant) { return true; }
  friend bool operator<(NoVariant, NoVariant) { return false; }
  std::string str() const { return std::string(); }
};

/// The customisation point through which a variant is named and hashed.
/// The default uses the variant's `str()`, which must be stable across
/// processes, runs and machines (it feeds the store's key and `kiln-store
/// list`). Specialise it for a variant type without `str()`.
template <typename V> struct VariantTraits {
  static std::string str(const V &Var) requires requires {
    { Var.str() } -> std::convertible_to<std::string>;
  }
  { return Var.str(); }
  static uint64_t stableHash(const V &Var) {
    return llvm::xxh3_64bits(VariantTraits<V>::str(Var));
  }
};

/// What a variant must provide: equality, a copy, and a stable name.
template <typename V>
concept ArtifactVariant = std::copyable<V> && std::equality_comparable<V> &&
    requires(const V &Var) {
  { VariantTraits<V>::str(Var) } -> std::convertible_to<std::string>;
  { VariantTraits<V>::stableHash(Var) } -> std::convertible_to<uint64_t>;
};

/// Which artifact a launch needs: its kernel, and what the launch adds to it.
template <ArtifactVariant Variant> struct ArtifactId {
  KernelId Kernel;
  Variant Var{};

  /// A stable hash of the kernel's hash and the variant's.
  uint64_t stableHash() const {
    uint8_t Parts[16];
    llvm::support::endian::write64le(Parts, Kernel.stableHash());
    llvm::support::endian::write64le(Parts + 8,
                                     VariantTraits<Variant>::stableHash(Var));
    return llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(Parts));
  }
  /// "KERNEL" or "KERNEL [VARIANT]", for logs and diagnostics.
  std::string str() const {
    std::string V = VariantTraits<Variant>::str(Var);
    return V.empty() ? Kernel.str() : Kernel.str() + " [" + V + "]";
  }

  friend bool operator==(const ArtifactId &A, const ArtifactId &B) {
    return A.Kernel == B.Kernel && A.Var == B.Var;
  }
  /// Orders by kernel text, then variant name: deterministic, never by address.
  friend bool operator<(const ArtifactId &A, const ArtifactId &B) {
    if (auto C = A.Kernel <=> B.Kernel; C != 0)
      return C < 0;
    return VariantTraits<Variant>::str(A.Var) <
           VariantTraits<Variant>::str(B.Var);
  }
};

} // namespace kiln

template <typename V> struct std::hash<kiln::ArtifactId<V>> {
  size_t operator()(const kiln::ArtifactId<V> &Id) const noexcept {
    return static_cast<size_t>(Id.stableHash());
  }
};

#endif // KILN_COMPILE_ARTIFACTID_H
