//===- HostInfo.h - The host CPU the JIT compiles for -----------*- C++ -*-===//

#ifndef KILN_CPU_HOSTINFO_H
#define KILN_CPU_HOSTINFO_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// What code generation targets on this machine: computed once per process
/// (the first call of hostInfo()) and immutable afterwards.
struct HostInfo {
  std::string Triple; ///< the process triple, "x86_64-pc-linux-gnu"
  std::string CPU;    ///< sys::getHostCPUName(), "znver3"
  /// Every feature LLVM reports for the host, sorted by name, each with its
  /// sign: {"+avx2", "+fma", "-avx512f", ...}.
  std::vector<std::string> Features;
  std::string LLVMVersion; ///< LLVM_VERSION_STRING
  /// What else the host's code depends on ("sve-vector-bits=256" on
  /// AArch64 with SVE), "" for nothing.
  std::string Details;

  /// Features joined with commas: the `-mattr` string of the host.
  std::string featureString() const;
  /// Whether the host has \p Name (without sign), "avx2" say.
  bool hasFeature(const std::string &Name) const;
  /// Whether \p Name (without sign) is among the features LLVM detects on a
  /// host, with either sign: an instruction-set feature ("avx512f"), not a
  /// tuning flag ("slow-3ops-lea") or a mode ("64bit-mode").
  bool knowsFeature(llvm::StringRef Name) const;
  /// The first "+feature" of the comma-separated list \p Required the host
  /// lacks, or "" when it has them all ("-feature" items ask for nothing).
  /// The check a CpuTarget installs on its store.
  std::string missingFeature(const std::string &Required) const;
  /// 16 hex digits hashing (triple, CPU, sorted features, LLVM version,
  /// details when there are any): the
  /// same on every run of one build on one machine, and different as soon as
  /// one of them differs. Used to name store namespaces.
  std::string fingerprint() const;
  /// The fingerprint as a number.
  uint64_t fingerprintHash() const;
  /// A readable multi-line description of what the fingerprint covers.
  std::string description() const;
};

/// The host, computed on the first call (thread-safe, std::call_once).
const HostInfo &hostInfo();

/// Initialises LLVM's native target, its assembly printer and parser, once
/// per process; thread-safe and cheap after the first call.
void initializeNativeTarget();

} // namespace kiln

#endif // KILN_CPU_HOSTINFO_H
