//===- Compiler.h - The two halves of a backend's compilation ---*- C++ -*-===//
//
// What a backend contributes to compiling a kernel, split by where each half
// may run: an ArtifactCompiler on any thread, so several kernels compile at
// once; a CompilationTarget only on the server thread, since it holds the
// artifact store and loads what was compiled.
//
// Both are C++20 concepts, not abstract bases: each backend has its own
// associated types (Variant, Lowered, Artifact, Loaded) that move by value
// through the loader, and the loader is a template over the target anyway, so
// a concept checks the shape at compile time with no virtual calls and no
// type erasure. The seed's default methods (source, storedForSource) are
// optional members, detected with `requires`: see loweredSource and
// storedForSourceOf.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_COMPILER_H
#define KILN_COMPILE_COMPILER_H

#include "kiln/Compile/ArtifactId.h"
#include "kiln/Compile/Logger.h"
#include "kiln/Compile/Recording.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <concepts>
#include <optional>

namespace kiln {

/// The half of compilation that may run on any thread. A model provides:
///
///   using Source   = ...; // what it compiles; the integrator's choice, e.g.
///                         // struct { const Kernel &K; StringRef FileName; }
///   using Variant  = ...; // see ArtifactId; NoVariant when the id says all
///   using Lowered  = ...; // lowered, not finalized (movable)
///   using Artifact = ...; // what the device loads and the store keeps
///
///   Expected<Lowered> lower(const Source &, const ArtifactId<Variant> &,
///                           CompilationRecording &, CompilationLogger &)
///                           const;
///   Expected<Artifact> finalize(const ArtifactId<Variant> &, Lowered) const;
///   // optional:
///   static std::optional<StringRef> source(const Lowered &);
///
/// lower validates the kernel and lowers it, telling the recording its texts
/// and the logger its phases; finalize turns the lowered kernel into the
/// artifact. source names the text an artifact finalized from \p Lowered can
/// be reused by (a slow finalization of a source two ids share); absent or
/// nullopt means finalize every time (the CPU backend: lowering already made
/// the object). All three are const and must be safe to call from many
/// threads at once, each call with its own recording and logger.
template <typename C>
concept ArtifactCompiler = requires {
  typename C::Source;
  typename C::Variant;
  typename C::Lowered;
  typename C::Artifact;
}
&&ArtifactVariant<typename C::Variant> &&std::movable<typename C::Lowered> &&
    std::movable<typename C::Artifact> &&requires(
        const C &Comp, const typename C::Source &Src,
        const ArtifactId<typename C::Variant> &Id, CompilationRecording &Rec,
        CompilationLogger &Log, typename C::Lowered Low) {
  {
    Comp.lower(Src, Id, Rec, Log)
    } -> std::same_as<llvm::Expected<typename C::Lowered>>;
  {
    Comp.finalize(Id, std::move(Low))
    } -> std::same_as<llvm::Expected<typename C::Artifact>>;
};

/// The source \p L can be reused by, or nullopt when the compiler has no
/// `source` member (the seed's default).
template <ArtifactCompiler C>
std::optional<llvm::StringRef> loweredSource(const typename C::Lowered &L) {
  if constexpr (requires {
                  {
                    C::source(L)
                    } -> std::convertible_to<std::optional<llvm::StringRef>>;
                })
    return C::source(L);
  else
    return std::nullopt;
}

template <typename T> using CompilerOf = typename T::Compiler;
template <typename T> using VariantOf = typename CompilerOf<T>::Variant;
template <typename T> using ArtifactOf = typename CompilerOf<T>::Artifact;
template <typename T> using SourceOf = typename CompilerOf<T>::Source;
template <typename T> using IdOf = ArtifactId<VariantOf<T>>;

/// The half of compilation that runs only on the server thread. A model
/// provides:
///
///   using Compiler = ...;   // an ArtifactCompiler
///   using Loaded   = ...;   // what a launch dispatches: cheap to copy
///
///   const Compiler &compiler() const;
///   bool persists() const;  // artifacts kept between runs: binds loaded
///                           // kernels to the store's environment
///   std::optional<Artifact> stored(const Id &);     // store hit, or nullopt
///   Expected<Loaded> load(const Id &, const Artifact &);
///   bool store(const Id &, Artifact, std::optional<StringRef> Source);
///   // optional:
///   std::optional<Artifact> storedForSource(StringRef Source);
///   void discard(const Id &); // a stored artifact failed to load: purge it
///
/// store is called after load, so an artifact the device refused is never
/// kept; it answers whether the store took it (false with no store).
template <typename T>
concept CompilationTarget = requires {
  typename T::Compiler;
  typename T::Loaded;
}
&&ArtifactCompiler<typename T::Compiler> &&std::copyable<typename T::Loaded>
    &&requires(T &Tg, const T &CT, const IdOf<T> &Id, const ArtifactOf<T> &A,
               ArtifactOf<T> AV, std::optional<llvm::StringRef> Src) {
  { CT.compiler() } -> std::same_as<const typename T::Compiler &>;
  { CT.persists() } -> std::convertible_to<bool>;
  { Tg.stored(Id) } -> std::same_as<std::optional<ArtifactOf<T>>>;
  { Tg.load(Id, A) } -> std::same_as<llvm::Expected<typename T::Loaded>>;
  { Tg.store(Id, std::move(AV), Src) } -> std::convertible_to<bool>;
};

/// Target.storedForSource(Source), or nullopt when the target has none.
template <CompilationTarget T>
std::optional<ArtifactOf<T>> storedForSourceOf(T &Target,
                                               llvm::StringRef Source) {
  if constexpr (requires {
                  {
                    Target.storedForSource(Source)
                    } -> std::same_as<std::optional<ArtifactOf<T>>>;
                })
    return Target.storedForSource(Source);
  else
    return std::nullopt;
}

/// Target.discard(Id) when the target has it.
template <CompilationTarget T>
void discardStored(T &Target, const IdOf<T> &Id) {
  if constexpr (requires { Target.discard(Id); })
    Target.discard(Id);
}

} // namespace kiln

#endif // KILN_COMPILE_COMPILER_H
