//===- TargetArch.cpp - The instruction sets Kiln generates code for ------===//

#include "TargetArch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Target/TargetMachine.h"

#include <iterator>

#include <mutex>

using namespace kiln;
using namespace llvm;

TargetArch::~TargetArch() = default;

/// The instruction sets this build generates code for (KILN_TARGETS), the
/// host's first: TargetArchs.def, which cmake/Targets.cmake writes, holds
/// one KILN_TARGET_ARCH(getter) a line.
static ArrayRef<const TargetArch *> builtArchs() {
  static const TargetArch *const Archs[] = {
#define KILN_TARGET_ARCH(Getter) &Getter(),
#include "TargetArchs.def"
#undef KILN_TARGET_ARCH
  };
  return Archs;
}

namespace {
/// Every instruction set Kiln knows, built or not: how a triple names it,
/// how errors name it, and its name in KILN_TARGETS.
struct KnownArch {
  Triple::ArchType Arch;
  const char *Name, *TriplePattern, *BuildName;
};
constexpr KnownArch KnownArchs[] = {
    {Triple::x86_64, "x86-64", "x86_64-*", "X86"},
    {Triple::aarch64, "aarch64", "aarch64-*", "AArch64"},
};
} // namespace

const TargetArch *kiln::targetArchFor(const Triple &TT) {
  for (const TargetArch *A : builtArchs())
    if (A->matches(TT))
      return A;
  return nullptr;
}

const TargetArch &kiln::targetArchOf(const TargetMachine &TM) {
  const TargetArch *A = targetArchFor(TM.getTargetTriple());
  // createTargetMachine refuses every other triple.
  assert(A && "a TargetMachine for an architecture Kiln does not support");
  return A ? *A : *builtArchs().front();
}

void kiln::initializeTargetOf(const TargetArch &Arch) {
  static std::once_flag Once[std::size(KnownArchs)];
  ArrayRef<const TargetArch *> Archs = builtArchs();
  size_t I = llvm::find(Archs, &Arch) - Archs.begin();
  assert(I < Archs.size() && "a TargetArch this build does not have");
  std::call_once(Once[I], [&] { Arch.initializeLLVMTarget(); });
}

std::string kiln::supportedArchitectures() {
  std::vector<std::string> Names;
  for (const KnownArch &K : KnownArchs)
    if (targetArchFor(Triple(Triple::getArchTypeName(K.Arch), "", "")))
      Names.push_back(std::string(K.Name) + " (" + K.TriplePattern + ")");
  std::string S;
  for (size_t I = 0; I < Names.size(); ++I)
    S += (I == 0 ? "" : I + 1 == Names.size() ? " and " : ", ") + Names[I];
  return S;
}

std::string kiln::targetLeftOutOfBuild(const Triple &TT) {
  if (targetArchFor(TT))
    return std::string();
  for (const KnownArch &K : KnownArchs)
    if (TT.getArch() == K.Arch)
      return K.BuildName;
  return std::string();
}

Error kiln::targetOptionError(const Twine &Msg) {
  return createStringError(std::make_error_code(std::errc::invalid_argument),
                           Msg);
}

std::string kiln::joinNames(ArrayRef<std::string> Names, size_t Max) {
  std::string S;
  for (size_t I = 0; I < Names.size() && I < Max; ++I)
    S += (I ? ", " : "") + Names[I];
  if (Names.size() > Max)
    S += " and " + std::to_string(Names.size() - Max) + " more";
  return S;
}
