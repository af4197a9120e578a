//===- CodeGen.cpp - LLVM IR to host object code --------------------------===//

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/HostInfo.h"
#include "kiln/CPU/Pipeline.h"

#include "BlendScratchStores.h"
#include "ExpandBlockCopies.h"
#include "TargetArch.h"
#include "InlineExp.h"
#include "JamUnitLoops.h"
#include "ScalarFallbackLoops.h"
#include "SerialProductScans.h"
#include "SignallingNaNMinMax.h"
#include "StreamingUnroll.h"
#include "UniformGathers.h"
#include "UnitLoopSwitches.h"
#include "UnitLoopWidth.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <optional>

using namespace kiln;
using namespace llvm;

static Error makeError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

namespace {
/// What createTargetMachine builds from CodeGenOptions: the target, and the
/// CPU and feature string it hands LLVM.
struct ResolvedTarget {
  const Target *T = nullptr;
  const TargetArch *Arch = nullptr;
  std::string Triple;
  std::string CPU;
  std::string Features;
};

std::unique_ptr<MCSubtargetInfo> subtargetOf(const ResolvedTarget &R) {
  return std::unique_ptr<MCSubtargetInfo>(
      R.T->createMCSubtargetInfo(R.Triple, R.CPU, R.Features));
}

bool hasFeature(const MCSubtargetInfo &STI, const SubtargetFeatureKV &KV) {
  return STI.getFeatureBits().test(KV.Value);
}

Error optionError(const Twine &Msg) { return targetOptionError(Msg); }

/// The triple \p Opts asks for, normalised, with its TargetArch: the host's
/// when it names none.
Expected<std::pair<std::string, const TargetArch *>>
resolveTriple(const CodeGenOptions &Opts) {
  std::string Name = Opts.Triple.empty() ? hostInfo().Triple
                                         : Triple::normalize(Opts.Triple);
  Triple TT(Name);
  if (TT.getArch() == Triple::UnknownArch)
    return optionError("unknown target triple '" + Opts.Triple +
                       "': Kiln generates code for " +
                       supportedArchitectures());
  const TargetArch *Arch = targetArchFor(TT);
  std::string LeftOut = targetLeftOutOfBuild(TT);
  if (!Arch && !LeftOut.empty())
    return optionError("this Kiln was built without code generation for '" +
                       Name + "' (KILN_TARGETS leaves out " + LeftOut +
                       "): it generates code for " +
                       supportedArchitectures());
  if (!Arch)
    return optionError("Kiln cannot generate code for '" + Name +
                       "': it generates code for " +
                       supportedArchitectures());
  return std::make_pair(Name, Arch);
}

} // namespace

bool kiln::generatesCodeFor(StringRef TripleName) {
  return targetArchFor(Triple(Triple::normalize(TripleName))) != nullptr;
}

namespace {
/// Whether \p R is for the host's architecture (its code may run here).
bool forHostArch(const ResolvedTarget &R) {
  return Triple(R.Triple).getArch() == Triple(hostInfo().Triple).getArch();
}

/// Checks \p Opts and resolves them into what LLVM is given. Everything LLVM
/// would only warn about (and ignore) or abort on is an error here.
Expected<ResolvedTarget> resolveTarget(const CodeGenOptions &Opts) {
  const HostInfo &Host = hostInfo();
  auto TripleAndArch = resolveTriple(Opts);
  if (!TripleAndArch)
    return TripleAndArch.takeError();
  ResolvedTarget R;
  R.Triple = TripleAndArch->first;
  R.Arch = TripleAndArch->second;
  initializeTargetOf(*R.Arch);
  std::string Err;
  R.T = TargetRegistry::lookupTarget(R.Triple, Err);
  if (!R.T)
    return makeError("no target for " + R.Triple + ": " + Err);

  std::unique_ptr<MCSubtargetInfo> Any(
      R.T->createMCSubtargetInfo(R.Triple, "", ""));
  if (!Any)
    return makeError("no subtarget information for " + R.Triple);
  if (!Opts.CPU.empty() && !Any->isCPUStringValid(Opts.CPU))
    return optionError("unknown CPU '" + Opts.CPU + "' for " + R.Triple);
  SmallVector<StringRef, 16> Parts;
  StringRef(Opts.Features).split(Parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef F : Parts) {
    StringRef Name = F.trim();
    if (!Name.consume_front("+") && !Name.consume_front("-"))
      return optionError("target feature '" + F.trim() +
                         "' must start with '+' or '-'");
    if (!llvm::any_of(
            Any->getAllProcessorFeatures(),
            [&](const SubtargetFeatureKV &KV) { return Name == KV.Key; }))
      return optionError("unknown target feature '" + Name + "' for " +
                         R.Triple);
  }

  // Another architecture's code starts from its generic CPU, not from
  // this host's.
  bool FromHost = Opts.CPU.empty() && forHostArch(R);
  R.CPU = !Opts.CPU.empty() ? Opts.CPU : FromHost ? Host.CPU : "generic";
  if (FromHost) {
    // Later entries win in a feature string: host first, overrides after.
    R.Features = Host.featureString();
    if (!Opts.Features.empty())
      R.Features += (R.Features.empty() ? "" : ",") + Opts.Features;
  } else {
    R.Features = Opts.Features;
  }

  TargetRequest Req;
  Req.T = R.T;
  Req.Triple = R.Triple;
  Req.CPU = R.CPU;
  Req.Features = R.Features;
  Req.AskedFeatures = Opts.Features;
  Req.AskedCPU = !Opts.CPU.empty();
  if (Error E = R.Arch->completeRequest(Req))
    return E;
  R.Features = std::move(Req.Features);
  return R;
}
} // namespace

Error kiln::checkTargetOptions(const CodeGenOptions &Opts) {
  if (Opts.OptLevel > 3)
    return optionError("optimisation level " + Twine(Opts.OptLevel) +
                       " is out of range 0..3");
  Expected<ResolvedTarget> R = resolveTarget(Opts);
  return R ? Error::success() : R.takeError();
}

Error kiln::checkRunsOnHost(const CodeGenOptions &Opts) {
  if (Opts.OptLevel > 3)
    return optionError("optimisation level " + Twine(Opts.OptLevel) +
                       " is out of range 0..3");
  Expected<ResolvedTarget> R = resolveTarget(Opts);
  if (!R)
    return R.takeError();
  const HostInfo &Host = hostInfo();
  if (!forHostArch(*R))
    return optionError("code for " + R->Triple + " cannot run on this " +
                       Host.Triple + " host");
  if (Opts.CPU.empty() && Opts.Features.empty())
    return Error::success(); // the host's own
  std::unique_ptr<MCSubtargetInfo> STI = subtargetOf(*R);
  // Instruction-set features only: a tuning flag (slow-3ops-lea) changes
  // no instruction the host could lack.
  std::vector<std::string> Lacks;
  for (const SubtargetFeatureKV &KV : STI->getAllProcessorFeatures())
    if (hasFeature(*STI, KV) && Host.knowsFeature(KV.Key) &&
        !Host.hasFeature(KV.Key))
      Lacks.push_back(std::string("+") + KV.Key);
  if (Lacks.empty())
    return Error::success();
  // Name what was asked for when it is among them, not all it implies.
  std::vector<std::string> Asked;
  SmallVector<StringRef, 16> Parts;
  StringRef(Opts.Features).split(Parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef F : Parts)
    if (llvm::is_contained(Lacks, F.trim().str()) &&
        !llvm::is_contained(Asked, F.trim().str()))
      Asked.push_back(F.trim().str());
  std::string What = joinNames(Asked.empty() ? Lacks : Asked);
  if (Asked.empty() && !Opts.CPU.empty())
    What += " (of CPU '" + Opts.CPU + "')";
  return optionError("the host lacks " + What +
                     ": code compiled for it could not run here");
}

Expected<std::unique_ptr<TargetMachine>>
kiln::createTargetMachine(const CodeGenOptions &Opts, const StepDumps *Dumps) {
  if (Opts.OptLevel > 3)
    return makeError("optimisation level " + Twine(Opts.OptLevel) +
                     " is out of range 0..3");
  Expected<ResolvedTarget> R = resolveTarget(Opts);
  if (!R)
    return R.takeError();
  if (!R->T->hasTargetMachine())
    return makeError("target " + R->Triple + " cannot generate code");

  TargetOptions TO;
  CodeGenOptLevel Level = Opts.OptLevel == 0   ? CodeGenOptLevel::None
                          : Opts.OptLevel == 1 ? CodeGenOptLevel::Less
                          : Opts.OptLevel == 2 ? CodeGenOptLevel::Default
                                               : CodeGenOptLevel::Aggressive;
  std::unique_ptr<TargetMachine> TM(R->T->createTargetMachine(
      R->Triple, R->CPU, R->Features, TO, Reloc::PIC_, std::nullopt, Level,
      /*JIT=*/false));
  if (!TM)
    return makeError("cannot create a target machine for " + R->Triple +
                     " cpu " + R->CPU);
  if (Dumps)
    Dumps->dump(PipelineStepId::TargetMachine, [&](raw_ostream &OS) {
      OS << "; triple: " << R->Triple << "\n; cpu: " << R->CPU
         << "\n; features: " << R->Features << "\n; -O" << Opts.OptLevel
         << ", position-independent code\n";
    });
  return TM;
}

void kiln::prepareModule(Module &M, TargetMachine &TM) {
  M.setTargetTriple(TM.getTargetTriple().str());
  M.setDataLayout(TM.createDataLayout());
  targetArchOf(TM).annotateModule(M, TM);
}

namespace {
/// Collects the error diagnostics of a context while it lives, and drops
/// the others: LLVMContext's own handler prints them and, for an error,
/// exits the process ("SSE register return with SSE disabled"), which a
/// library inside someone else's process must never do.
class DiagnosticScope {
public:
  explicit DiagnosticScope(LLVMContext &Ctx)
      : Ctx(Ctx), Saved(Ctx.getDiagnosticHandler()) {
    Ctx.setDiagnosticHandler(std::make_unique<Collector>(Errors));
  }
  ~DiagnosticScope() { Ctx.setDiagnosticHandler(std::move(Saved)); }
  DiagnosticScope(const DiagnosticScope &) = delete;
  DiagnosticScope &operator=(const DiagnosticScope &) = delete;

  /// The errors met so far, as one Error; success when none.
  Error take(StringRef When) {
    if (Errors.empty())
      return Error::success();
    std::string Msg = "LLVM reported an error " + When.str() + ": " + Errors;
    Errors.clear();
    return makeError(Msg);
  }

private:
  struct Collector : DiagnosticHandler {
    explicit Collector(std::string &Errors) : Errors(Errors) {}
    bool handleDiagnostics(const DiagnosticInfo &DI) override {
      if (DI.getSeverity() != DS_Error)
        return true;
      raw_string_ostream OS(Errors);
      if (!Errors.empty())
        OS << "; ";
      DiagnosticPrinterRawOStream DP(OS);
      DI.print(DP);
      return true;
    }
    std::string &Errors;
  };

  LLVMContext &Ctx;
  std::unique_ptr<DiagnosticHandler> Saved;
  std::string Errors;
};
} // namespace

static Error verifyOrError(Module &M, StringRef When) {
  std::string Msg;
  raw_string_ostream OS(Msg);
  if (verifyModule(M, &OS))
    return makeError("invalid LLVM module " + When + ": " + OS.str());
  return Error::success();
}

namespace {
/// Hands the module to Dumps after a Kiln pass inside LLVM's pipeline (once
/// for each function the pass ran on: a cube module defines one).
class DumpAfterStepPass : public PassInfoMixin<DumpAfterStepPass> {
public:
  DumpAfterStepPass(PipelineStepId Id, const StepDumps &Dumps)
      : Id(Id), Dumps(Dumps) {}
  PreservedAnalyses run(Function &F, FunctionAnalysisManager &) {
    Dumps.dump(Id, [&](raw_ostream &OS) { F.getParent()->print(OS, nullptr); });
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }

private:
  PipelineStepId Id;
  const StepDumps &Dumps;
};

/// Adds the Kiln passes of the pipeline that hook in at \p At to \p FPM, in
/// the table's order, those that run at \p Level.
void addKilnPasses(FunctionPassManager &FPM, ExtensionPoint At,
                   OptimizationLevel Level, TargetMachine &TM,
                   const StepDumps *Dumps) {
  for (const PipelineStep &S : cpuPipeline()) {
    if (S.Hook != At || unsigned(Level.getSpeedupLevel()) < S.MinOptLevel)
      continue;
    switch (S.Id) {
    case PipelineStepId::UnitLoopSwitches:
      FPM.addPass(UnitLoopSwitchesPass());
      break;
    case PipelineStepId::StreamingUnroll:
      FPM.addPass(StreamingUnrollPass());
      break;
    case PipelineStepId::UnitLoopWidth:
      FPM.addPass(UnitLoopWidthPass());
      break;
    case PipelineStepId::JamUnitLoops:
      FPM.addPass(JamUnitLoopsPass());
      break;
    case PipelineStepId::BlendScratchStores:
      FPM.addPass(BlendScratchStoresPass(TM));
      break;
    case PipelineStepId::ExpandBlockCopies:
      FPM.addPass(ExpandBlockCopiesPass());
      break;
    case PipelineStepId::UniformGathers:
      FPM.addPass(UniformGathersPass());
      break;
    case PipelineStepId::SignallingNaNMinMax:
      FPM.addPass(SignallingNaNMinMaxPass(TM));
      break;
    default:
      llvm_unreachable("not a pass inside LLVM's pipeline");
    }
    if (Dumps && Dumps->wants(S.Id))
      FPM.addPass(DumpAfterStepPass(S.Id, *Dumps));
  }
}
} // namespace

/// LLVM's default pipeline at \p OptLevel, with Kiln's passes at their
/// extension points.
static void runLLVMPipeline(Module &M, TargetMachine &TM, unsigned OptLevel,
                            const StepDumps *Dumps) {
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
  // `-time-passes` (kiln-compile and kiln-run take LLVM's options) times
  // the optimisation passes too, not only code generation's.
  PassInstrumentationCallbacks PIC;
  std::optional<TimePassesHandler> PassTimes;
  if (TimePassesIsEnabled) {
    PassTimes.emplace(/*Enabled=*/true);
    PassTimes->registerCallbacks(PIC);
  }
  PassBuilder PB(&TM, PTO, std::nullopt, &PIC);

  Triple TT(M.getTargetTriple());
  TargetLibraryInfoImpl TLII(TT);
  targetArchOf(TM).addVectorLibrary(TLII, TM);
  FAM.registerPass([&] { return TargetLibraryAnalysis(TLII); });

  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);

  // Kiln's passes inside LLVM's pipeline: those of the vectorizer-start
  // and optimizer-last points of cpuPipeline(), in its order (Pipeline.h
  // says why each is there).
  PB.registerVectorizerStartEPCallback(
      [&TM, Dumps](FunctionPassManager &FPM, OptimizationLevel Level) {
        addKilnPasses(FPM, ExtensionPoint::VectorizerStart, Level, TM, Dumps);
      });
  PB.registerOptimizerLastEPCallback(
      [&TM, Dumps](ModulePassManager &MPM, OptimizationLevel Level) {
        FunctionPassManager FPM;
        addKilnPasses(FPM, ExtensionPoint::OptimizerLast, Level, TM, Dumps);
        MPM.addPass(createModuleToFunctionPassAdaptor(std::move(FPM)));
      });

  OptimizationLevel Level = OptLevel == 0   ? OptimizationLevel::O0
                            : OptLevel == 1 ? OptimizationLevel::O1
                            : OptLevel == 2 ? OptimizationLevel::O2
                                            : OptimizationLevel::O3;
  ModulePassManager MPM = OptLevel == 0
                              ? PB.buildO0DefaultPipeline(Level)
                              : PB.buildPerModuleDefaultPipeline(Level);
  MPM.run(M, MAM);
}

Error kiln::optimizeModule(Module &M, TargetMachine &TM, unsigned OptLevel,
                           const StepDumps *Dumps) {
  if (OptLevel > 3)
    return makeError("optimisation level " + Twine(OptLevel) +
                     " is out of range 0..3");
  prepareModule(M, TM);
  if (Error E = verifyOrError(M, "before optimisation"))
    return E;
  DiagnosticScope Diags(M.getContext());
  // The optimize stage's own steps, in the pipeline's order; the passes
  // inside llvm-pipeline are added by runLLVMPipeline.
  for (const PipelineStep &S : cpuPipeline()) {
    if (S.Stage != PipelineStage::Optimize || S.Hook != ExtensionPoint::None)
      continue;
    switch (S.Id) {
    case PipelineStepId::InlineExp:
      // At every level, so that exp gives the same bits at -O0 and -O3, in
      // scalar and in vectorised loops (InlineExp.h).
      if (shouldInlineExp(TM))
        inlineExpF32(M);
      break;
    case PipelineStepId::SerialProductScans:
      // At every level too: the choice follows the target, not the level.
      serializeProductScans(M, TM);
      break;
    case PipelineStepId::ScalarFallbackLoops:
      // After inline-exp: whether a guarded loop may be scalar depends on
      // the math left in it as calls (ScalarFallbackLoops.h).
      settleScalarFallbackLoops(M);
      break;
    case PipelineStepId::LLVMPipeline:
      runLLVMPipeline(M, TM, OptLevel, Dumps);
      break;
    default:
      llvm_unreachable("not a step of the optimize stage");
    }
    if (Dumps)
      Dumps->dump(S.Id, [&](raw_ostream &OS) { M.print(OS, nullptr); });
  }
  if (Error E = Diags.take("in optimisation"))
    return E;
  return verifyOrError(M, "after optimisation");
}

namespace {
/// Leaves three passes out of code generation while it lives; the gate is the
/// context's only then, and the one installed before (-opt-bisect-limit)
/// still decides every other pass (docs/Design.md §10.13: no process-wide
/// -disable-lsr or -post-RA-scheduler from a library).
///  - Loop strength reduction, everywhere. On the unit loops' nested
///    address recurrences it spends a large share of a larger kernel's
///    code generation in SCEV, and the kernels run as fast without it: x86
///    addressing modes take the scaled indices it would rewrite
///    (docs/Lowering.md §16, "Code generation without LSR").
///  - Post-RA list scheduling, in functions of more than
///    PostRASchedulingLimit IR instructions. Its dependence graph adds a
///    chain edge between every pair of memory operations in a region that
///    may alias, so its cost grows with the square of a region's memory
///    operations, while on out-of-order x86 cores the reordering it makes
///    is worth a few percent either way (of the x86 tunings, AMD's Zen
///    models are the ones that ask for it). Small kernels keep it: their
///    graphs are cheap and their code stays the same (docs/Lowering.md
///    §16, "Post-RA scheduling in large functions").
///  - The passes the target leaves out (TargetArch::leavesOutPass): on
///    x86-64 domain reassignment, which with AVX-512 costs compile time and
///    changes no kernel of bench/kernels, test/ or examples/ (docs/Lowering.md
///    §16, "X86 domain reassignment").
class CodeGenerationGate final : public OptPassGate {
public:
  CodeGenerationGate(Module &M, const TargetArch &Arch)
      : Ctx(M.getContext()), Previous(Ctx.getOptPassGate()), Arch(Arch) {
    for (const Function &F : M)
      if (!F.isDeclaration() &&
          F.getInstructionCount() > PostRASchedulingLimit)
        // FunctionPass::skipFunction describes a function this way.
        LargeFunctions.insert("function (" + F.getName().str() + ")");
    Ctx.setOptPassGate(*this);
  }
  ~CodeGenerationGate() override { Ctx.setOptPassGate(Previous); }
  /// What the gate leaves out, one comment line each.
  void print(raw_ostream &OS) const {
    OS << "; Loop Strength Reduction: everywhere\n"
       << "; X86 Domain Reassignment Pass: everywhere\n"
       << "; Post RA top-down list latency scheduler: in functions of more "
          "than "
       << PostRASchedulingLimit << " IR instructions";
    std::vector<StringRef> Names;
    for (const auto &F : LargeFunctions) {
      StringRef Name = F.getKey();
      Name.consume_front("function (");
      Name.consume_back(")");
      Names.push_back(Name);
    }
    llvm::sort(Names);
    OS << (Names.empty() ? " (none here)" : ":");
    for (StringRef N : Names)
      OS << " " << N;
    OS << "\n";
  }
  CodeGenerationGate(const CodeGenerationGate &) = delete;
  CodeGenerationGate &operator=(const CodeGenerationGate &) = delete;

  bool shouldRunPass(StringRef PassName, StringRef IRDescription) override {
    if (PassName == "Loop Strength Reduction" || Arch.leavesOutPass(PassName))
      return false;
    if (PassName == "Post RA top-down list latency scheduler" &&
        LargeFunctions.contains(IRDescription))
      return false;
    return !Previous.isEnabled() ||
           Previous.shouldRunPass(PassName, IRDescription);
  }
  bool isEnabled() const override { return true; }

private:
  LLVMContext &Ctx;
  OptPassGate &Previous;
  const TargetArch &Arch;
  StringSet<> LargeFunctions;
};
} // namespace

/// The codegen stage: its steps in the pipeline's order, into \p Buf.
static Error emit(Module &M, TargetMachine &TM, SmallVector<char, 0> &Buf,
                  CodeGenFileType Kind, const StepDumps *Dumps) {
  prepareModule(M, TM);
  // An object's dump is the assembly of the same module: code generation
  // changes the module, so it is taken from a copy made before.
  std::unique_ptr<Module> ForDump;
  if (Dumps && Dumps->wants(PipelineStepId::LLVMCodeGen) &&
      Kind == CodeGenFileType::ObjectFile)
    ForDump = CloneModule(M);
  {
    DiagnosticScope Diags(M.getContext());
    raw_svector_ostream OS(Buf);
    legacy::PassManager PM;
    if (TM.addPassesToEmitFile(PM, OS, nullptr, Kind))
      return makeError("the target cannot emit this kind of file");
    std::optional<CodeGenerationGate> Gate;
    for (const PipelineStep &S : cpuPipeline()) {
      if (S.Stage != PipelineStage::CodeGen)
        continue;
      switch (S.Id) {
      case PipelineStepId::CodeGenGate:
        Gate.emplace(M, targetArchOf(TM));
        if (Dumps)
          Dumps->dump(S.Id, [&](raw_ostream &DOS) { Gate->print(DOS); });
        break;
      case PipelineStepId::LLVMCodeGen:
        PM.run(M);
        Gate.reset();
        break;
      default:
        llvm_unreachable("not a step of the codegen stage");
      }
    }
    if (Error E = Diags.take("in code generation"))
      return E;
  }
  if (!Dumps || !Dumps->wants(PipelineStepId::LLVMCodeGen))
    return Error::success();
  SmallVector<char, 0> Asm;
  if (ForDump) {
    if (Error E = emit(*ForDump, TM, Asm, CodeGenFileType::AssemblyFile,
                       /*Dumps=*/nullptr))
      return E;
  }
  StringRef Text = ForDump ? StringRef(Asm.data(), Asm.size())
                           : StringRef(Buf.data(), Buf.size());
  Dumps->dump(PipelineStepId::LLVMCodeGen,
              [&](raw_ostream &DOS) { DOS << Text; });
  return Error::success();
}

Expected<SmallVector<char, 0>> kiln::emitObject(Module &M, TargetMachine &TM,
                                                const StepDumps *Dumps) {
  SmallVector<char, 0> Buf;
  if (Error E = emit(M, TM, Buf, CodeGenFileType::ObjectFile, Dumps))
    return E;
  return Buf;
}

Expected<std::string> kiln::emitAssembly(Module &M, TargetMachine &TM,
                                         const StepDumps *Dumps) {
  SmallVector<char, 0> Buf;
  if (Error E = emit(M, TM, Buf, CodeGenFileType::AssemblyFile, Dumps))
    return E;
  return std::string(Buf.begin(), Buf.end());
}
