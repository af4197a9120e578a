//===- ArtifactStore.h - Where a backend keeps what it compiled -*- C++ -*-===//
//
// The compiled artifacts of one backend and CPU, kept between runs by kernel
// and, for a backend that opts in, by the source each was finalized from
// (ArtifactCompiler's optional `source`). Follows the seed's store.rs: same
// names, same semantics, same two tests (unittests/Store).
//
// An ArtifactStore is used from the server thread only (it is not locked;
// the FileStores under it are).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STORE_ARTIFACTSTORE_H
#define KILN_STORE_ARTIFACTSTORE_H

#include "kiln/Compile/ArtifactId.h"
#include "kiln/Store/FileStore.h"
#include "kiln/Store/KernelCacheKey.h"

#include "llvm/Support/Endian.h"

#include <concepts>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// How an artifact type is kept on disk: specialise it for each artifact.
///
///   static std::vector<uint8_t> encode(const A &);
///   static llvm::Expected<A> decode(llvm::ArrayRef<uint8_t>);
///   // optional:
///   static std::string features(const A &);   // "+avx2,+fma": CPU features
///                                             // the code needs
///   static uint64_t irHash(const A &);        // the kernel's IR hash
///
/// decode must reject anything encode did not produce with an error (the
/// store checks a checksum first, so that is a codec mismatch, an old
/// payload layout, or a bug), never crash on it.
template <typename A> struct ArtifactCodec;

template <typename A>
concept StorableArtifact = std::movable<A> &&
    requires(const A &Art, llvm::ArrayRef<uint8_t> Bytes) {
  { ArtifactCodec<A>::encode(Art) } -> std::same_as<std::vector<uint8_t>>;
  { ArtifactCodec<A>::decode(Bytes) } -> std::same_as<llvm::Expected<A>>;
};

/// Names of the two namespaces an ArtifactStore keeps, as compilationStore
/// takes a backend's name.
struct StoreNames {
  /// The map from kernel to artifact.
  llvm::StringRef Kernels;
  /// The map from source to the kernel that first finalized it.
  llvm::StringRef Sources;
};

/// A store for \p Backend's compiled artifacts under \p Env, or null when
/// \p Env has no store (mode Off, setuid, no root). \p Fingerprint names
/// what the artifacts were built for (target triple, CPU, features, LLVM
/// version) and becomes the namespace, so compiled code is never served to
/// another CPU.
std::unique_ptr<FileStore> compilationStore(const StoreEnvironment &Env,
                                            llvm::StringRef Backend,
                                            llvm::StringRef Fingerprint);

/// Stores \p Payload under \p Key, logging a refusal as a warning of
/// \p Store rather than failing (a quiet refusal, e.g. another process wrote the key first,
/// is not logged), and says whether the store took it.
bool storeCompiled(FileStore &Store, const KernelCacheKey &Key,
                   llvm::ArrayRef<uint8_t> Payload, const EntryInfo &Info);

template <StorableArtifact A> class ArtifactStore {
public:
  /// A store holding nothing: every take misses, every keep refuses.
  ArtifactStore() : BuildId(buildIdHash()) {}
  /// Over the given namespaces (either may be null).
  explicit ArtifactStore(std::unique_ptr<FileStore> ByKernel,
                         std::unique_ptr<FileStore> BySource = nullptr,
                         uint64_t BuildId = buildIdHash())
      : ByKernel(std::move(ByKernel)),
        BySource(this->ByKernel ? std::move(BySource) : nullptr),
        BuildId(BuildId) {}

  /// The artifacts \p Backend compiled for \p Fingerprint under \p Env,
  /// kept by kernel only.
  static ArtifactStore create(const StoreEnvironment &Env,
                              llvm::StringRef Backend,
                              llvm::StringRef Fingerprint) {
    return ArtifactStore(compilationStore(Env, Backend, Fingerprint));
  }
  /// Kept by kernel and by source, each namespace under its name in \p Names.
  static ArtifactStore withSources(const StoreEnvironment &Env,
                                   StoreNames Names,
                                   llvm::StringRef Fingerprint) {
    auto K = compilationStore(Env, Names.Kernels, Fingerprint);
    auto S = K ? compilationStore(Env, Names.Sources, Fingerprint) : nullptr;
    return ArtifactStore(std::move(K), std::move(S));
  }

  /// Whether anything is kept between runs.
  bool persists() const { return ByKernel != nullptr; }
  /// Whether the store is enabled for this backend.
  bool isEnabled() const { return ByKernel != nullptr; }

  /// The artifact kept for \p Kernel (no variant), to be loaded. As with the
  /// seed's lazy store, taking reads the entry without deleting it: the file
  /// stays for the next run (no copy is kept in memory). A bad or stale entry
  /// (an IR hash other than Kernel.irHash()) is a miss.
  std::optional<A> take(const KernelId &Kernel) {
    return readArtifact(KernelCacheKey::fromKernel(Kernel, BuildId),
                        Kernel.irHash());
  }
  /// The artifact kept for \p Id (kernel and variant).
  template <typename V> std::optional<A> takeVariant(const ArtifactId<V> &Id) {
    return readArtifact(KernelCacheKey::fromArtifactId(Id, BuildId),
                        Id.Kernel.irHash());
  }
  /// Keeps \p Artifact under \p Id (kernel and variant).
  template <typename V>
  bool storeVariant(const ArtifactId<V> &Id, const A &Artifact) {
    return keepVariant(Id, Artifact, std::nullopt);
  }
  /// Deletes the entry of \p Kernel (a corrupt or invalid one).
  void purge(const KernelId &Kernel) {
    if (ByKernel)
      ByKernel->purge(KernelCacheKey::fromKernel(Kernel, BuildId));
  }
  /// Deletes the entry of \p Id (kernel and variant).
  template <typename V> void purgeVariant(const ArtifactId<V> &Id) {
    if (ByKernel)
      ByKernel->purge(KernelCacheKey::fromArtifactId(Id, BuildId));
  }

  /// The artifact another kernel finalized from \p Source, for keep to put
  /// under the kernel asking. A kernel of this build keeps its own entry: it
  /// is as live as the one asking, and two kernel ids of one build that
  /// expand to one source each keep theirs. One of an earlier build is
  /// moved: deleted under its key, since nothing will ask for that key again.
  std::optional<A> takeBySource(llvm::StringRef Source) {
    if (!ByKernel || !BySource)
      return std::nullopt;
    KernelCacheKey SourceKey = sourceKey(Source);
    std::optional<std::vector<uint8_t>> Bytes = BySource->read(SourceKey);
    if (!Bytes)
      return std::nullopt;
    if (Bytes->size() != 16) {
      BySource->purgeCorrupt(SourceKey, "a source entry holds 16 bytes");
      return std::nullopt;
    }
    KernelCacheKey Key{llvm::support::endian::read64le(Bytes->data()),
                       llvm::support::endian::read64le(Bytes->data() + 8)};
    std::optional<A> Artifact = readArtifact(Key, std::nullopt);
    if (!Artifact || Key.BuildId != BuildId) {
      // An earlier build's artifact moves to the kernel asking; a dangling
      // source entry is dropped.
      BySource->purge(SourceKey);
      ByKernel->purge(Key);
    }
    return Artifact;
  }

  /// Keeps \p Artifact under \p Kernel and, when given, under the \p Source
  /// it was finalized from. Whether the store took it: false with nothing to
  /// keep it in, or when the write was refused (logged, never fatal).
  bool keep(const KernelId &Kernel, const A &Artifact,
            std::optional<llvm::StringRef> Source) {
    return keepAt(KernelCacheKey::fromKernel(Kernel, BuildId), Kernel, "",
                  Artifact, Source);
  }
  /// keep, for \p Id's kernel and variant.
  template <typename V>
  bool keepVariant(const ArtifactId<V> &Id, const A &Artifact,
                   std::optional<llvm::StringRef> Source) {
    return keepAt(KernelCacheKey::fromArtifactId(Id, BuildId), Id.Kernel,
                  VariantTraits<V>::str(Id.Var), Artifact, Source);
  }

  /// The build id keys are made with: buildIdHash() unless set (tests).
  uint64_t buildId() const { return BuildId; }
  void setBuildId(uint64_t B) { BuildId = B; }
  FileStore *kernels() { return ByKernel.get(); }
  FileStore *sources() { return BySource.get(); }

private:
  static KernelCacheKey sourceKey(llvm::StringRef Source) {
    return {llvm::xxh3_64bits(Source), 0};
  }

  std::optional<A> readArtifact(const KernelCacheKey &Key,
                                std::optional<uint64_t> IRHash) {
    if (!ByKernel)
      return std::nullopt;
    std::optional<std::vector<uint8_t>> Bytes = ByKernel->read(Key, IRHash);
    if (!Bytes)
      return std::nullopt;
    llvm::Expected<A> Artifact = ArtifactCodec<A>::decode(*Bytes);
    if (!Artifact) {
      ByKernel->purgeCorrupt(Key, llvm::toString(Artifact.takeError()));
      return std::nullopt;
    }
    return std::move(*Artifact);
  }

  bool keepAt(const KernelCacheKey &Key, const KernelId &Kernel,
              std::string Variant, const A &Artifact,
              std::optional<llvm::StringRef> Source) {
    if (!ByKernel)
      return false;
    EntryInfo Info;
    Info.KernelId = Kernel.str();
    Info.Variant = std::move(Variant);
    if constexpr (requires {
                    {
                      ArtifactCodec<A>::features(Artifact)
                      } -> std::convertible_to<std::string>;
                  })
      Info.Features = ArtifactCodec<A>::features(Artifact);
    if constexpr (requires {
                    {
                      ArtifactCodec<A>::irHash(Artifact)
                      } -> std::convertible_to<uint64_t>;
                  })
      Info.IRHash = ArtifactCodec<A>::irHash(Artifact);
    else
      Info.IRHash = Kernel.irHash().value_or(0);
    bool Stored =
        storeCompiled(*ByKernel, Key, ArtifactCodec<A>::encode(Artifact), Info);
    if (Source && BySource) {
      uint8_t Bytes[16];
      llvm::support::endian::write64le(Bytes, Key.Id);
      llvm::support::endian::write64le(Bytes + 8, Key.BuildId);
      EntryInfo SourceInfo;
      SourceInfo.KernelId = Kernel.str();
      SourceInfo.Variant = "source";
      storeCompiled(*BySource, sourceKey(*Source), Bytes, SourceInfo);
    }
    return Stored;
  }

  std::unique_ptr<FileStore> ByKernel;
  /// Maps a source's hash to the key of the kernel that first finalized it.
  std::unique_ptr<FileStore> BySource;
  uint64_t BuildId;
};

} // namespace kiln

#endif // KILN_STORE_ARTIFACTSTORE_H
