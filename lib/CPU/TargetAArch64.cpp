//===- TargetAArch64.cpp - AArch64 as Kiln generates code for it ----------===//
//
// NEON always (every AArch64 CPU that runs Linux has it: fp-armv8 and neon
// are required), SVE where the CPU has it: the lowering's fixed-length
// vectors then use SVE registers of the machine's length (every kernel
// function gets vscale_range(N, N)), so that code is built for one vector
// length, which the store's fingerprint records.
//
//===----------------------------------------------------------------------===//

#include "TargetArch.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Attributes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

#include <memory>

using namespace kiln;
using namespace llvm;

extern "C" {
void LLVMInitializeAArch64TargetInfo();
void LLVMInitializeAArch64Target();
void LLVMInitializeAArch64TargetMC();
void LLVMInitializeAArch64AsmPrinter();
void LLVMInitializeAArch64AsmParser();
}

namespace {

/// The features code for aarch64 cannot do without here: the floating
/// point and Advanced SIMD (NEON) registers that the ABI passes floats in
/// and the lowering's vectors use.
constexpr const char *AArch64Baseline[] = {"fp-armv8", "neon"};

/// Linux's HWCAP bits (asm/hwcap.h) and the LLVM features they stand for.
/// /proc/cpuinfo, which LLVM reads, is the emulator's host's under user-mode
/// emulation; the auxiliary vector is the emulated CPU's own.
struct HwcapBit {
  unsigned Word; // 1: AT_HWCAP, 2: AT_HWCAP2
  unsigned Bit;
  const char *Feature;
};
constexpr HwcapBit HwcapFeatures[] = {
    {1, 0, "fp-armv8"}, {1, 1, "neon"},      {1, 3, "aes"},
    {1, 6, "sha2"},     {1, 7, "crc"},       {1, 8, "lse"},
    {1, 10, "fullfp16"}, {1, 12, "rdm"},     {1, 13, "jsconv"},
    {1, 14, "complxnum"}, {1, 15, "rcpc"},   {1, 17, "sha3"},
    {1, 20, "dotprod"}, {1, 22, "sve"},      {1, 23, "fp16fml"},
    {2, 1, "sve2"},     {2, 10, "f32mm"},    {2, 11, "f64mm"},
    {2, 13, "i8mm"},    {2, 14, "bf16"},
};

/// The SVE vector length of this process in bits, 0 without SVE (or on
/// another architecture).
unsigned hostSVEBits() {
#if defined(__aarch64__) && defined(__linux__)
  if (!(getauxval(AT_HWCAP) & (1UL << 22)))
    return 0;
  int VL = prctl(51 /*PR_SVE_GET_VL*/);
  return VL < 0 ? 0 : (VL & 0xffff) * 8;
#else
  return 0;
#endif
}

/// The SVE vector length of CPU \p CPU in bits when it is known and fixed
/// (cross-compilation), 0 otherwise: fixed-length vectors then stay NEON,
/// which is right for every length.
unsigned knownSVEBits(StringRef CPU) {
  return StringSwitch<unsigned>(CPU)
      .Case("a64fx", 512)
      .Cases("neoverse-v1", "neoverse-512tvb", 256)
      .Default(0);
}

bool hostIsAArch64() {
  return Triple(sys::getProcessTriple()).isAArch64();
}

class AArch64TargetArch final : public TargetArch {
public:
  StringRef name() const override { return "aarch64"; }
  bool matches(const Triple &TT) const override {
    return TT.getArch() == Triple::aarch64;
  }

  void initializeLLVMTarget() const override {
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    LLVMInitializeAArch64AsmParser();
  }

  std::vector<std::string> probeHostFeatures() const override {
    std::vector<std::string> Features;
#if defined(__aarch64__) && defined(__linux__)
    unsigned long Words[3] = {0, getauxval(AT_HWCAP), getauxval(AT_HWCAP2)};
    for (const HwcapBit &B : HwcapFeatures)
      Features.push_back(((Words[B.Word] >> B.Bit) & 1 ? "+" : "-") +
                         std::string(B.Feature));
#else
    for (const auto &Entry : sys::getHostCPUFeatures())
      Features.push_back((Entry.second ? "+" : "-") + Entry.first().str());
#endif
    return Features;
  }

  std::string probeHostDetails() const override {
    unsigned Bits = hostSVEBits();
    return Bits ? "sve-vector-bits=" + std::to_string(Bits) : std::string();
  }

  Error completeRequest(TargetRequest &R) const override {
    std::unique_ptr<MCSubtargetInfo> STI(
        R.T->createMCSubtargetInfo(R.Triple, R.CPU, R.Features));
    std::vector<std::string> Missing;
    for (const char *F : AArch64Baseline)
      if (!STI->checkFeatures(std::string("+") + F))
        Missing.push_back(F);
    if (Missing.empty())
      return Error::success();
    return targetOptionError(
        (R.AskedCPU && R.AskedFeatures.empty()
             ? "CPU '" + R.CPU + "' lacks "
             : "target features '" + R.AskedFeatures + "' turn off ") +
        join(Missing, ", ") + ", which Kiln's code for " + R.Triple +
        " needs");
  }

  void addVectorLibrary(TargetLibraryInfoImpl &,
                        const TargetMachine &) const override {
    // Debian 12's glibc (2.36) has no AArch64 libmvec, and LLVM 19 knows
    // none there but ArmPL's and SLEEF's, which Debian does not package:
    // vector math is inline (exp) or calls the scalar function per lane.
  }
  StringRef vectorLibraryFile() const override { return ""; }

  bool inlinesExpF32(const TargetMachine &) const override { return true; }

  bool maskedStoresAreMicrocoded(const TargetMachine &,
                                 const Function &) const override {
    // NEON has no masked store (the vectoriser makes none); SVE's
    // predicated stores are single instructions.
    return false;
  }

  // fminnm, fmaxnm, fminnmv and fmaxnmv (NEON, SVE and scalar) return the
  // default quiet NaN when an operand is a signalling NaN.
  bool minMaxQuietsSignallingNaN() const override { return true; }

  bool leavesOutPass(StringRef) const override { return false; }

  void annotateModule(Module &M, const TargetMachine &TM) const override {
    if (!TM.getMCSubtargetInfo()->checkFeatures("+sve"))
      return;
    // Code that runs here is built for this machine's vector length
    // whatever CPU it names; a cross-compilation for the CPU's own.
    unsigned Bits = hostIsAArch64() ? hostSVEBits()
                                    : knownSVEBits(TM.getTargetCPU());
    // 128-bit SVE gains nothing over NEON for fixed-length vectors (LLVM
    // uses SVE for them from 256 bits on).
    if (Bits < 256)
      return;
    unsigned VScale = Bits / 128;
    for (Function &F : M)
      if (!F.isDeclaration())
        F.addFnAttr(Attribute::getWithVScaleRangeArgs(F.getContext(),
                                                      VScale, VScale));
  }
};

} // namespace

const TargetArch &kiln::aarch64TargetArch() {
  static const AArch64TargetArch Arch;
  return Arch;
}
