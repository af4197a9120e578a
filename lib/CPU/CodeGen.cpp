//===- CodeGen.cpp - LLVM IR to host object code --------------------------===//

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/HostInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

using namespace kiln;
using namespace llvm;

static Error makeError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

Expected<std::unique_ptr<TargetMachine>>
kiln::createTargetMachine(const CodeGenOptions &Opts) {
  initializeNativeTarget();
  if (Opts.OptLevel > 3)
    return makeError("optimisation level " + Twine(Opts.OptLevel) +
                     " is out of range 0..3");
  const HostInfo &Host = hostInfo();
  std::string Err;
  const Target *T = TargetRegistry::lookupTarget(Host.Triple, Err);
  if (!T)
    return makeError("no target for " + Host.Triple + ": " + Err);

  // Unknown names would only give a warning on stderr and be ignored.
  std::unique_ptr<MCSubtargetInfo> STI(
      T->createMCSubtargetInfo(Host.Triple, "", ""));
  if (STI && !Opts.CPU.empty() && !STI->isCPUStringValid(Opts.CPU))
    return makeError("unknown CPU '" + Opts.CPU + "' for " + Host.Triple);
  if (STI && !Opts.Features.empty()) {
    SmallVector<StringRef, 16> Parts;
    StringRef(Opts.Features).split(Parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef F : Parts) {
      StringRef Name = F.trim();
      if (!Name.consume_front("+") && !Name.consume_front("-"))
        return makeError("target feature '" + F.trim() +
                         "' must start with '+' or '-'");
      if (!llvm::any_of(
              STI->getAllProcessorFeatures(),
              [&](const SubtargetFeatureKV &KV) { return Name == KV.Key; }))
        return makeError("unknown target feature '" + Name + "' for " +
                         Host.Triple);
    }
  }
  std::string CPU = Opts.CPU.empty() ? Host.CPU : Opts.CPU;
  std::string Features;
  if (Opts.CPU.empty()) {
    // Later entries win in a feature string: host first, overrides after.
    Features = Host.featureString();
    if (!Opts.Features.empty())
      Features += "," + Opts.Features;
  } else {
    Features = Opts.Features;
  }
  if (!T->hasTargetMachine())
    return makeError("target " + Host.Triple + " cannot generate code");

  TargetOptions TO;
  CodeGenOptLevel Level = Opts.OptLevel == 0   ? CodeGenOptLevel::None
                          : Opts.OptLevel == 1 ? CodeGenOptLevel::Less
                          : Opts.OptLevel == 2 ? CodeGenOptLevel::Default
                                               : CodeGenOptLevel::Aggressive;
  std::unique_ptr<TargetMachine> TM(T->createTargetMachine(
      Host.Triple, CPU, Features, TO, Reloc::PIC_, std::nullopt, Level,
      /*JIT=*/false));
  if (!TM)
    return makeError("cannot create a target machine for " + Host.Triple +
                     " cpu " + CPU);
  return TM;
}

void kiln::prepareModule(Module &M, TargetMachine &TM) {
  M.setTargetTriple(TM.getTargetTriple().str());
  M.setDataLayout(TM.createDataLayout());
}

static Error verifyOrError(Module &M, StringRef When) {
  std::string Msg;
  raw_string_ostream OS(Msg);
  if (verifyModule(M, &OS))
    return makeError("invalid LLVM module " + When + ": " + OS.str());
  return Error::success();
}

Error kiln::optimizeModule(Module &M, TargetMachine &TM, unsigned OptLevel) {
  if (OptLevel > 3)
    return makeError("optimisation level " + Twine(OptLevel) +
                     " is out of range 0..3");
  prepareModule(M, TM);
  if (Error E = verifyOrError(M, "before optimisation"))
    return E;

  // Explicit tuning options: buildPerModuleDefaultPipeline leaves SLP off
  // otherwise (docs/Design.md §10.2).
  PipelineTuningOptions PTO;
  PTO.LoopVectorization = OptLevel >= 2;
  PTO.SLPVectorization = OptLevel >= 2;
  PTO.LoopUnrolling = OptLevel >= 2;
  PTO.LoopInterleaving = OptLevel >= 2;

  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  // The TargetMachine gives TTI; without it nothing is vectorised
  // (docs/Design.md §10.1).
  PassBuilder PB(&TM, PTO);

  Triple TT(M.getTargetTriple());
  TargetLibraryInfoImpl TLII(TT);
  // libmvec's AVX2 entry points (_ZGVdN8v_expf, ...) need AVX2 in the code.
  if (TT.getArch() == Triple::x86_64 &&
      TM.getMCSubtargetInfo()->checkFeatures("+avx2"))
    TLII.addVectorizableFunctionsFromVecLib(TargetLibraryInfoImpl::LIBMVEC_X86,
                                            TT);
  FAM.registerPass([&] { return TargetLibraryAnalysis(TLII); });

  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);

  OptimizationLevel Level = OptLevel == 0   ? OptimizationLevel::O0
                            : OptLevel == 1 ? OptimizationLevel::O1
                            : OptLevel == 2 ? OptimizationLevel::O2
                                            : OptimizationLevel::O3;
  ModulePassManager MPM = OptLevel == 0
                              ? PB.buildO0DefaultPipeline(Level)
                              : PB.buildPerModuleDefaultPipeline(Level);
  MPM.run(M, MAM);
  return verifyOrError(M, "after optimisation");
}

static Error emit(Module &M, TargetMachine &TM, raw_pwrite_stream &OS,
                  CodeGenFileType Kind) {
  prepareModule(M, TM);
  legacy::PassManager PM;
  if (TM.addPassesToEmitFile(PM, OS, nullptr, Kind))
    return makeError("the target cannot emit this kind of file");
  PM.run(M);
  return Error::success();
}

Expected<SmallVector<char, 0>> kiln::emitObject(Module &M, TargetMachine &TM) {
  SmallVector<char, 0> Buf;
  raw_svector_ostream OS(Buf);
  if (Error E = emit(M, TM, OS, CodeGenFileType::ObjectFile))
    return E;
  return Buf;
}

Expected<std::string> kiln::emitAssembly(Module &M, TargetMachine &TM) {
  SmallVector<char, 0> Buf;
  raw_svector_ostream OS(Buf);
  if (Error E = emit(M, TM, OS, CodeGenFileType::AssemblyFile))
    return E;
  return std::string(Buf.begin(), Buf.end());
}
