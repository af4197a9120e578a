//===- TargetArch.cpp - The instruction sets Kiln generates code for ------===//

#include "TargetArch.h"

#include "llvm/Target/TargetMachine.h"

#include <mutex>

using namespace kiln;
using namespace llvm;

TargetArch::~TargetArch() = default;

static const TargetArch *const *allArchs() {
  static const TargetArch *const Archs[] = {&x86TargetArch(),
                                            &aarch64TargetArch(), nullptr};
  return Archs;
}

const TargetArch *kiln::targetArchFor(const Triple &TT) {
  for (const TargetArch *const *A = allArchs(); *A; ++A)
    if ((*A)->matches(TT))
      return *A;
  return nullptr;
}

const TargetArch &kiln::targetArchOf(const TargetMachine &TM) {
  const TargetArch *A = targetArchFor(TM.getTargetTriple());
  // createTargetMachine refuses every other triple.
  assert(A && "a TargetMachine for an architecture Kiln does not support");
  return A ? *A : x86TargetArch();
}

void kiln::initializeTargetOf(const TargetArch &Arch) {
  static std::once_flag X86Once, AArch64Once;
  std::call_once(&Arch == &x86TargetArch() ? X86Once : AArch64Once,
                 [&] { Arch.initializeLLVMTarget(); });
}

std::string kiln::supportedArchitectures() {
  return "x86-64 (x86_64-*) and aarch64 (aarch64-*)";
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
