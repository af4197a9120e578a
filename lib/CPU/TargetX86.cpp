//===- TargetX86.cpp - x86-64 as Kiln generates code for it ---------------===//

#include "TargetArch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/Function.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCSchedule.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <memory>
#include <mutex>

using namespace kiln;
using namespace llvm;

extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86AsmPrinter();
void LLVMInitializeX86AsmParser();
}

namespace {

std::unique_ptr<MCSubtargetInfo> subtargetOf(const TargetRequest &R,
                                             StringRef CPU,
                                             StringRef Features) {
  return std::unique_ptr<MCSubtargetInfo>(
      R.T->createMCSubtargetInfo(R.Triple, CPU, Features));
}

/// The features LLVM cannot generate x86-64 code without: the
/// instruction-set features of x86-64's baseline that code generation
/// relies on, and the 64-bit mode the triple sets. Without them LLVM aborts
/// ("64-bit code requested on a subtarget that doesn't support it") or
/// cannot return a float ("SSE register return with SSE disabled"). Every
/// x86-64 CPU has them.
constexpr const char *X86_64Baseline[] = {"64bit", "64bit-mode", "cx8", "sse",
                                          "sse2"};

std::vector<std::string> lacking(const MCSubtargetInfo &STI) {
  std::vector<std::string> Missing;
  for (const char *F : X86_64Baseline)
    if (!STI.checkFeatures(std::string("+") + F))
      Missing.push_back(F);
  return Missing;
}

/// Micro-ops of a 256-bit `vmaskmovps` store on \p STI, 0 when unknown.
unsigned maskedStoreMicroOps(const MCSubtargetInfo &STI,
                             const MCInstrInfo &MII) {
  const MCSchedModel &SM = STI.getSchedModel();
  if (!SM.hasInstrSchedModel())
    return 0;
  // A linear search of some 20,000 names: done once per CPU and feature
  // string (maskedStoresAreMicrocoded caches the answer).
  unsigned Op = 0;
  for (unsigned I = 1, E = MII.getNumOpcodes(); I < E && !Op; ++I)
    if (MII.getName(I) == "VMASKMOVPSYmr")
      Op = I;
  if (!Op)
    return 0;
  const MCSchedClassDesc *SC =
      SM.getSchedClassDesc(MII.get(Op).getSchedClass());
  if (!SC || !SC->isValid() || SC->isVariant())
    return 0;
  return SC->NumMicroOps;
}

class X86TargetArch final : public TargetArch {
public:
  StringRef name() const override { return "x86-64"; }
  bool matches(const Triple &TT) const override {
    return TT.getArch() == Triple::x86_64;
  }

  void initializeLLVMTarget() const override {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeX86AsmParser();
  }

  std::vector<std::string> probeHostFeatures() const override {
    std::vector<std::string> Features;
    for (const auto &Entry : sys::getHostCPUFeatures())
      Features.push_back((Entry.second ? "+" : "-") + Entry.first().str());
    return Features;
  }

  std::string probeHostDetails() const override { return std::string(); }

  Error completeRequest(TargetRequest &R) const override;

  void addVectorLibrary(TargetLibraryInfoImpl &TLII,
                        const TargetMachine &TM) const override {
    // libmvec's AVX2 entry points (_ZGVdN8v_expf, ...) need AVX2 in the
    // code.
    if (TM.getMCSubtargetInfo()->checkFeatures("+avx2"))
      TLII.addVectorizableFunctionsFromVecLib(
          TargetLibraryInfoImpl::LIBMVEC_X86, TM.getTargetTriple());
  }
  StringRef vectorLibraryFile() const override { return "libmvec.so.1"; }

  bool inlinesExpF32(const TargetMachine &TM) const override {
    // With AVX2 but not AVX-512, libmvec's 8-wide call runs as fast as the
    // inline code and compiles in fewer instructions; with AVX-512 the
    // inline code runs 16 wide (InlineExp.h; docs/Lowering.md §11, "Inline
    // f32 `exp`").
    return TM.getMCSubtargetInfo()->checkFeatures("+fma,+avx512f");
  }

  bool maskedStoresAreMicrocoded(const TargetMachine &TM,
                                 const Function &F) const override {
    const TargetSubtargetInfo *ST = TM.getSubtargetImpl(F);
    const MCInstrInfo *MII = TM.getMCInstrInfo();
    // Without AVX the vectoriser makes no masked store (none is legal).
    if (!ST || !MII || ST->checkFeatures("+avx512f") ||
        !ST->checkFeatures("+avx"))
      return false;
    // The answer depends only on the CPU and features: cached, as compiles
    // run on many threads.
    static std::mutex Lock;
    static StringMap<bool> Known;
    std::string Key = (ST->getCPU() + "|" + ST->getFeatureString()).str();
    std::lock_guard<std::mutex> L(Lock);
    auto It = Known.find(Key);
    if (It != Known.end())
      return It->second;
    bool Expensive = maskedStoreMicroOps(*ST, *MII) > 4;
    Known[Key] = Expensive;
    return Expensive;
  }

  // x86 has no minNum instruction: LLVM expands llvm.minnum into minps and
  // a select on the first operand being NaN, and minps returns its second
  // operand whenever either is a NaN, signalling or quiet.
  bool minMaxQuietsSignallingNaN() const override { return false; }

  bool leavesOutPass(StringRef PassName) const override {
    // With AVX-512 domain reassignment looks for integer logic it could
    // move into mask registers, which costs compile time, while the
    // lowering builds masks from vector compares, which select to mask
    // registers directly (docs/Lowering.md §16, "X86 domain
    // reassignment").
    return PassName == "X86 Domain Reassignment Pass";
  }

  void annotateModule(Module &, const TargetMachine &) const override {}
};

Error X86TargetArch::completeRequest(TargetRequest &R) const {
  bool NamesEvex512 = false, NamesPrefer256 = false;
  SmallVector<StringRef, 16> Parts;
  StringRef(R.AskedFeatures).split(Parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef F : Parts) {
    StringRef Name = F.trim().drop_front();
    NamesEvex512 |= Name == "evex512";
    NamesPrefer256 |= Name == "prefer-256-bit";
  }

  std::unique_ptr<MCSubtargetInfo> STI = subtargetOf(R, R.CPU, R.Features);
  // AVX-512 asked of a CPU without it (or on top of a host without it, whose
  // feature string says -evex512) has no 512-bit vectors in code generation,
  // which then cannot select AVX-512's masked operations on 256-bit ones
  // without avx512vl ("Cannot select: masked_store"). (The MC layer, asked
  // here, adds evex512 by itself for any CPU; X86Subtarget only for generic
  // ones: so the string decides, not STI.) Unless told otherwise, AVX-512
  // comes with 512-bit vectors, as clang has it.
  if (STI->checkFeatures("+avx512f")) {
    if (!NamesEvex512) {
      R.Features += R.Features.empty() ? "+evex512" : ",+evex512";
      STI = subtargetOf(R, R.CPU, R.Features);
    } else if (!STI->checkFeatures("+evex512") &&
               !STI->checkFeatures("+avx512vl")) {
      return targetOptionError("target features '" + R.AskedFeatures +
                               "': AVX-512 without evex512 needs +avx512vl");
    }
  }

  // LLVM tunes every Intel AVX-512 CPU for 256-bit vectors (Skylake-SP
  // lowers its clock under 512-bit code); Ice Lake and later cores, which
  // have AVX512-VBMI, hardly do, and Kiln's unit loops run faster with
  // 512-bit vectors there (docs/Lowering.md §16, "512-bit vectors on
  // Intel"). Zen 4 and 5 are tuned for them already. A feature list that
  // names prefer-256-bit decides for itself.
  if (!NamesPrefer256 && STI->checkFeatures("+avx512f,+avx512vbmi,+evex512") &&
      STI->checkFeatures("+prefer-256-bit")) {
    R.Features += ",-prefer-256-bit";
    STI = subtargetOf(R, R.CPU, R.Features);
  }

  std::vector<std::string> Missing = lacking(*STI);
  if (Missing.empty())
    return Error::success();
  if (R.AskedCPU) {
    std::vector<std::string> CPULacks = lacking(*subtargetOf(R, R.CPU, ""));
    if (!CPULacks.empty())
      return targetOptionError("CPU '" + R.CPU + "' is not an x86-64 CPU: " +
                               "it lacks " + joinNames(CPULacks) +
                               ", which code for " + R.Triple + " needs");
  }
  return targetOptionError("target features '" + R.AskedFeatures +
                           "' turn off " + joinNames(Missing) +
                           ", which code for " + R.Triple +
                           " needs (every x86-64 CPU has " +
                           (Missing.size() == 1 ? "it" : "them") + ")");
}

} // namespace

const TargetArch &kiln::x86TargetArch() {
  static const X86TargetArch Arch;
  return Arch;
}
