//===- HostInfo.cpp - The host CPU the JIT compiles for -------------------===//

#include "kiln/CPU/HostInfo.h"

#include "TargetArch.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cstdio>
#include <mutex>

using namespace kiln;

std::string HostInfo::featureString() const {
  std::string S;
  for (const std::string &F : Features) {
    if (!S.empty())
      S += ',';
    S += F;
  }
  return S;
}

bool HostInfo::hasFeature(const std::string &Name) const {
  return std::find(Features.begin(), Features.end(), "+" + Name) !=
         Features.end();
}

bool HostInfo::knowsFeature(llvm::StringRef Name) const {
  return std::any_of(Features.begin(), Features.end(),
                     [&](const std::string &F) {
                       return llvm::StringRef(F).drop_front() == Name;
                     });
}

std::string HostInfo::missingFeature(const std::string &Required) const {
  llvm::SmallVector<llvm::StringRef, 16> Parts;
  llvm::StringRef(Required).split(Parts, ',', -1, false);
  for (llvm::StringRef F : Parts) {
    F = F.trim();
    if (!F.consume_front("+"))
      continue; // "-feature": the code avoids it, any host will do
    if (!hasFeature(F.str()))
      return "+" + F.str();
  }
  return std::string();
}

uint64_t HostInfo::fingerprintHash() const {
  // Fields separated by a byte that none of them contains, so that moving a
  // character from one field to the next changes the hash.
  std::string Key =
      Triple + '\n' + CPU + '\n' + featureString() + '\n' + LLVMVersion;
  if (!Details.empty())
    Key += '\n' + Details;
  return llvm::xxh3_64bits(llvm::StringRef(Key));
}

std::string HostInfo::fingerprint() const {
  char Buf[17];
  std::snprintf(Buf, sizeof(Buf), "%016llx",
                static_cast<unsigned long long>(fingerprintHash()));
  return Buf;
}

std::string HostInfo::description() const {
  return "triple: " + Triple + "\ncpu: " + CPU + "\nllvm: " + LLVMVersion +
         "\nfeatures: " + featureString() +
         (Details.empty() ? "" : "\ndetails: " + Details) +
         "\nfingerprint: " + fingerprint() + "\n";
}

static HostInfo computeHostInfo() {
  HostInfo H;
  H.Triple = llvm::sys::getProcessTriple();
  H.CPU = llvm::sys::getHostCPUName().str();
  // The architecture's own probe (TargetArch.h); LLVM's where Kiln knows
  // none. LLVM 19 gives a StringMap in arbitrary order: sort (docs/Design.md
  // §10.6).
  if (const TargetArch *Arch = targetArchFor(llvm::Triple(H.Triple))) {
    H.Features = Arch->probeHostFeatures();
    H.Details = Arch->probeHostDetails();
  } else {
    for (const auto &Entry : llvm::sys::getHostCPUFeatures())
      H.Features.push_back((Entry.second ? "+" : "-") + Entry.first().str());
  }
  std::sort(H.Features.begin(), H.Features.end(),
            [](const std::string &A, const std::string &B) {
              return llvm::StringRef(A).drop_front() <
                     llvm::StringRef(B).drop_front();
            });
  H.LLVMVersion = LLVM_VERSION_STRING;
  return H;
}

const HostInfo &kiln::hostInfo() {
  static std::once_flag Once;
  static HostInfo Info;
  std::call_once(Once, [] { Info = computeHostInfo(); });
  return Info;
}

void kiln::initializeNativeTarget() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    if (const TargetArch *Arch = targetArchFor(llvm::Triple(hostInfo().Triple)))
      return initializeTargetOf(*Arch);
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}
