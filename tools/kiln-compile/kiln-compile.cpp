//===- kiln-compile.cpp - Compile Kiln IR kernels (like llc) --------------===//
//
// kiln-compile FILE.kiln [--kernel NAME] --emit=ir|llvm|llvm-opt|asm|obj
//              [-O0|-O1|-O2|-O3] [--no-bounds-check] [--may-alias]
//              [-o OUT] [--print-id]
// kiln-compile FILE.kiln... --store=DIR [-j N] [--no-bounds-check]
//              [--may-alias]
// kiln-compile --print-pipeline
//
// See docs/Tools.md §2. --emit=llvm|llvm-opt|asm|obj lower the
// kernel for the host CPU (or --mcpu/--mattr) through the CPU backend.
// --store compiles every kernel of every file as one batch through a Device
// (KernelLoader<CpuTarget>) whose store is DIR: kiln-run --store=DIR then
// loads them without compiling. --print-pipeline prints the backend's
// steps (kiln/CPU/Pipeline.h); --print-after=STEP dumps the IR after them.
//
//===----------------------------------------------------------------------===//

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/Lowering.h"
#include "kiln/CPU/Pipeline.h"
#include "kiln/Compile/Logger.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Hash.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Store/Environment.h"
#include "support/ArgSpec.h"
#include "support/RemoteOptions.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PrintPasses.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <optional>
#include <set>

using namespace llvm;

namespace {

enum class EmitKind { IR, LLVM, LLVMOpt, Asm, Obj };

cl::OptionCategory Category("kiln-compile options");

cl::list<std::string> InputFiles(cl::Positional, cl::desc("<FILE.kiln>..."),
                                 cl::ZeroOrMore, cl::cat(Category));

cl::opt<std::string> KernelName(
    "kernel", cl::desc("Compile only the kernel named NAME (without '@')"),
    cl::value_desc("NAME"), cl::cat(Category));

cl::opt<EmitKind> Emit(
    "emit", cl::desc("What to write"), cl::init(EmitKind::IR),
    cl::values(
        clEnumValN(EmitKind::IR, "ir",
                   "the verified kernel IR in canonical form (default)"),
        clEnumValN(EmitKind::LLVM, "llvm",
                   "the LLVM IR the lowering produced"),
        clEnumValN(EmitKind::LLVMOpt, "llvm-opt",
                   "the LLVM IR after optimisation"),
        clEnumValN(EmitKind::Asm, "asm", "the host assembly"),
        clEnumValN(EmitKind::Obj, "obj", "the object file")),
    cl::cat(Category));

cl::opt<char> OptLevel("O",
                       cl::desc("Optimisation level: -O0, -O1, -O2 or -O3 "
                                "(default -O3, as the runtime compiles)"),
                       cl::Prefix, cl::init('3'), cl::cat(Category));

cl::opt<std::string>
    MTriple("mtriple",
            cl::desc("Target triple for --emit=llvm-opt|asm|obj, x86-64 or "
                     "AArch64 (\"aarch64-linux-gnu\"; default: the host's)"),
            cl::value_desc("TRIPLE"), cl::cat(Category));

cl::opt<std::string> MCPU("mcpu",
                          cl::desc("Target CPU for --emit=llvm-opt|asm|obj "
                                   "(default: the host CPU)"),
                          cl::value_desc("CPU"), cl::cat(Category));

cl::opt<std::string>
    MAttr("mattr",
          cl::desc("Target features, as llc's -mattr (\"+avx2,-avx512f\"); "
                   "default: the host's"),
          cl::value_desc("FEATURES"), cl::cat(Category));

cl::opt<unsigned> PlaneDim(
    "plane-dim",
    cl::desc("Units per plane the device runs kernels with (default 32, "
             "1..1024); a kernel's plane_dim(N) request must match it"),
    cl::value_desc("N"), cl::init(32), cl::cat(Category));

/// The device limits the options describe.
kiln::DeviceLimits deviceLimits() {
  kiln::DeviceLimits Limits;
  Limits.PlaneDim = PlaneDim;
  return Limits;
}

cl::opt<bool> NoBoundsCheck(
    "no-bounds-check",
    cl::desc("Compile the unchecked variant (default: bounds-checked)"),
    cl::cat(Category));

cl::opt<bool> MayAlias(
    "may-alias",
    cl::desc("Compile the variant whose buffers may overlap each other "
             "(one memory bound to several parameters)"),
    cl::cat(Category));

cl::opt<unsigned> BufferAlignment(
    "buffer-alignment",
    cl::desc("The alignment in bytes the code may assume of every buffer, a "
             "power of two up to 4096 (default 64, as Kiln allocates them; 1: only each "
             "element's own, as for views at any offset of a pool)"),
    cl::value_desc("BYTES"), cl::init(64), cl::cat(Category));

/// The variant the options ask for.
kiln::CpuVariant cpuVariant() {
  kiln::CpuVariant Variant;
  Variant.BoundsChecked = !NoBoundsCheck;
  Variant.MayAlias = MayAlias;
  Variant.BufferAlignment = BufferAlignment;
  return Variant;
}

cl::opt<std::string> OutputFile("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("OUT"), cl::init("-"),
                                cl::cat(Category));

cl::opt<std::string>
    StoreDir("store",
             cl::desc("Compile every kernel of every file into the store "
                      "at DIR"),
             cl::value_desc("DIR"), cl::cat(Category));

cl::opt<unsigned> Jobs("j",
                       cl::desc("Threads for --store, at most 4096 (default "
                                "0: all cores)"),
                       cl::value_desc("N"), cl::init(0), cl::cat(Category));

cl::opt<bool> PrintId("print-id",
                      cl::desc("Print the id of each kernel (NAME-HASH, from "
                               "its canonical IR) instead of the IR"),
                      cl::cat(Category));

cl::opt<bool> PrintPipeline(
    "print-pipeline",
    cl::desc("Print the backend's steps, Kiln IR to object code, in the "
             "order they run, and exit"),
    cl::cat(Category));

/// --print-after: LLVM registers an option of that name (for its own
/// passes) in every program linked with it, and an option cannot be
/// registered twice, so kiln-compile gives LLVM's option its own meaning,
/// the backend's steps, and reads it through llvm::printAfterPasses().
void adoptPrintAfter() {
  StringMap<cl::Option *> &Options = cl::getRegisteredOptions();
  auto It = Options.find("print-after");
  if (It == Options.end())
    return;
  cl::Option *O = It->second;
  O->setDescription("Print the IR after each step named (see "
                    "--print-pipeline; 'all': every step) on standard error");
  O->setValueStr("STEP");
  O->setHiddenFlag(cl::NotHidden);
  O->addCategory(Category);
}

/// What --print-after asks for, once checked.
std::optional<kiln::StepDumps> Dumps;

/// Prints "PREFIX: error: MESSAGE" to stderr and returns 1.
int fail(StringRef Prefix, const Twine &Message) {
  errs() << Prefix << ": error: " << Message << "\n";
  return 1;
}

/// Lowers \p K and runs the backend as far as --emit (when \p Write; its
/// output goes to \p OS) and --print-after need.
int emitBackend(StringRef Name, const kiln::IRKernel &K, raw_pwrite_stream &OS,
                bool Write) {
  using Stage = kiln::PipelineStage;
  Stage Last = !Write                     ? Stage::Lower
               : Emit == EmitKind::LLVM    ? Stage::Lower
               : Emit == EmitKind::LLVMOpt ? Stage::Optimize
                                           : Stage::CodeGen;
  const kiln::StepDumps *D = Dumps ? &*Dumps : nullptr;
  if (D)
    Last = std::max(Last, D->lastStage());

  kiln::CpuVariant Variant = cpuVariant();
  LLVMContext Ctx;
  Expected<kiln::LoweredModule> Lowered =
      kiln::lowerKernel(K, Variant, deviceLimits(), Ctx, D);
  if (!Lowered)
    return fail(Name, toString(Lowered.takeError()));
  Module &M = *Lowered->Module;
  if (Write && Emit == EmitKind::LLVM)
    M.print(OS, nullptr);
  if (Last == Stage::Lower)
    return 0;
  kiln::CodeGenOptions Opts;
  Opts.OptLevel = OptLevel - '0';
  Opts.Triple = MTriple;
  Opts.CPU = MCPU;
  Opts.Features = MAttr;
  auto TM = kiln::createTargetMachine(Opts, D);
  if (!TM)
    return fail(Name, toString(TM.takeError()));
  if (Last == Stage::Target)
    return 0;
  if (Error Err = kiln::optimizeModule(M, **TM, Opts.OptLevel, D))
    return fail(Name, toString(std::move(Err)));
  if (Write && Emit == EmitKind::LLVMOpt)
    M.print(OS, nullptr);
  if (Last == Stage::Optimize)
    return 0;
  if (Write && Emit == EmitKind::Asm) {
    Expected<std::string> Asm = kiln::emitAssembly(M, **TM, D);
    if (!Asm)
      return fail(Name, toString(Asm.takeError()));
    OS << *Asm;
    return 0;
  }
  auto Obj = kiln::emitObject(M, **TM, D);
  if (!Obj)
    return fail(Name, toString(Obj.takeError()));
  if (Write && Emit == EmitKind::Obj)
    OS.write(Obj->data(), Obj->size());
  return 0;
}

/// Parses and verifies FILE, then writes what the options ask for.
int compileFile(StringRef File) {
  StringRef Name = File == "-" ? StringRef("<stdin>") : File;
  Expected<std::string> Text = kiln::readInputFile(File);
  if (!Text)
    return fail(Name, toString(Text.takeError()));

  Expected<kiln::Module> M = kiln::parseModule(*Text, Name);
  if (!M) {
    errs() << toString(M.takeError()) << "\n";
    return 1;
  }
  if (Error Err = kiln::verifyModule(*M, deviceLimits())) {
    errs() << toString(std::move(Err)) << "\n";
    return 1;
  }

  std::vector<const kiln::IRKernel *> Selected;
  if (KernelName.getNumOccurrences()) {
    const kiln::IRKernel *K = M->findKernel(KernelName);
    if (!K)
      return fail(Name, "no kernel named '" + KernelName + "'");
    Selected.push_back(K);
  } else {
    for (const kiln::IRKernel &K : M->Kernels)
      Selected.push_back(&K);
  }

  if (Emit == EmitKind::Obj && !PrintId && Selected.size() != 1)
    return fail(Name, "--emit=obj writes one kernel: choose it with --kernel "
                      "(the file has " +
                          Twine(Selected.size()) + ")");

  // A kernel that fails has printed its diagnostics: the file is not kept.
  int RC = 0;
  Error Written = kiln::writeOutputFile(
      OutputFile, Emit == EmitKind::Obj, [&](raw_pwrite_stream &OS) -> Error {
        for (size_t I = 0; I < Selected.size(); ++I) {
          bool Backend = !PrintId && Emit != EmitKind::IR;
          if (PrintId) {
            OS << kiln::kernelIdFromIR(*Selected[I]) << "\n";
          } else if (!Backend) {
            if (I)
              OS << "\n";
            OS << kiln::printKernel(*Selected[I]);
          }
          // --print-after runs the backend whatever is written.
          if (Backend || Dumps)
            if ((RC = emitBackend(Name, *Selected[I], OS, Backend)))
              return createStringError(inconvertibleErrorCode(),
                                       "reported already");
        }
        return Error::success();
      });
  if (RC) {
    consumeError(std::move(Written));
    return RC;
  }
  if (Written)
    return fail("kiln-compile", "-o: " + toString(std::move(Written)));
  return 0;
}

/// Writes \p Message (an error's text) as a diagnostic about kernel \p Name
/// of \p File: as it is when it is located already ("FILE:LINE:COL: error:").
void printFailure(StringRef File, StringRef Name, const std::string &Message) {
  if (StringRef(Message).contains(": error: "))
    errs() << Message << "\n";
  else
    errs() << File << ": error: @" << Name << ": " << Message << "\n";
}

/// kiln-compile FILE... --store=DIR [-j N]: every kernel of every file
/// compiled as one batch into the store at DIR.
int compileIntoStore() {
  StringRef Tool = "kiln-compile";
  if (StoreDir.empty())
    return fail(Tool, "--store: empty folder name");
  if (Emit.getNumOccurrences() || OutputFile.getNumOccurrences() ||
      PrintId || KernelName.getNumOccurrences())
    return fail(Tool, "--store compiles every kernel of every file: it "
                      "takes no --emit, -o, --print-id or --kernel");
  if (!printAfterPasses().empty())
    return fail(Tool, "--print-after does not apply to --store "
                      "(KILN_DUMP with KILN_DUMP_AFTER dumps its steps)");
  if (InputFiles.empty())
    return fail(Tool, "--store needs at least one input file");

  // What the batch reports, in order: a file that did not parse or a kernel
  // defined twice (its diagnostic), or the index of a request.
  struct Item {
    std::string Diagnostic;
    std::optional<size_t> Request;
  };
  std::vector<Item> Items;
  std::vector<std::unique_ptr<kiln::Module>> Modules;
  std::vector<kiln::KernelRequest> Requests;
  kiln::CpuVariant Variant = cpuVariant();
  for (const std::string &File : InputFiles) {
    StringRef Name = File == "-" ? StringRef("<stdin>") : StringRef(File);
    Expected<std::string> Text = kiln::readInputFile(File);
    if (!Text) {
      Items.push_back({(Name + ": error: " + toString(Text.takeError())).str(),
                       std::nullopt});
      continue;
    }
    Expected<kiln::Module> M = kiln::parseModule(*Text, Name);
    if (!M) {
      Items.push_back({toString(M.takeError()), std::nullopt});
      continue;
    }
    Modules.push_back(std::make_unique<kiln::Module>(std::move(*M)));
    const kiln::Module &Mod = *Modules.back();
    std::map<std::string, kiln::SourceLoc> Names;
    for (const kiln::IRKernel &K : Mod.Kernels) {
      // Each kernel is verified by the compilation, so that a bad kernel
      // fails alone; only the module's own rule is checked here, worded as
      // the verifier words it.
      auto [First, New] = Names.emplace(K.Name, K.Loc);
      if (!New) {
        Items.push_back({toString(kiln::makeDiagnostic(
                             Mod.FileName, K.Loc,
                             "kernel @" + K.Name + " is already defined at " +
                                 kiln::formatLoc(First->second))),
                         std::nullopt});
        continue;
      }
      kiln::KernelRequest R;
      R.K = &K;
      R.Variant = Variant;
      R.FileName = Mod.FileName;
      Items.push_back({std::string(), Requests.size()});
      Requests.push_back(std::move(R));
    }
  }

  kiln::DeviceOptions DO;
  DO.Limits = deviceLimits();
  DO.OptLevel = OptLevel - '0';
  DO.CPU = MCPU;
  DO.Features = MAttr;
  DO.StoreDir = StoreDir;
  // Writing the store is the whole point: KILN_CACHE does not switch it off.
  DO.StoreMode = kiln::DeviceStoreMode::ReadWrite;
  DO.BatchThreads = Jobs;
  DO.Threads = 1;
  Expected<std::optional<kiln::RemoteConfig>> Remote =
      kiln::tools::remoteConfigFromOptions();
  if (!Remote)
    return fail(Tool, toString(Remote.takeError()));
  DO.Remote = std::move(*Remote);
  // The library is silent: the tool prints the store's warnings, and each
  // kernel's log with KILN_LOG=1.
  DO.WarningSink = kiln::printWarningToStderr;
  if (kiln::compilationLoggingEnabled())
    DO.KernelLogSink = [](StringRef Line) { errs() << Line << '\n'; };
  auto Dev = kiln::RuntimeDevice::create(DO);
  if (!Dev)
    return fail(Tool, toString(Dev.takeError()));

  auto Start = std::chrono::steady_clock::now();
  kiln::KernelBatchOptions BO;
  bool Terminal = sys::Process::StandardErrIsDisplayed();
  if (Terminal)
    BO.Progress = [&](size_t Done, size_t Total) {
      double S = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - Start)
                     .count();
      errs() << "\r[" << Done << "/" << Total << "] " << format("%.1f s", S);
      errs().flush();
    };
  std::vector<kiln::KernelStats> Stats;
  std::vector<Expected<kiln::LoadedKernel>> Results =
      (*Dev)->getKernels(Requests, BO, &Stats);
  if (Terminal && !Requests.empty())
    errs() << "\n";

  // Duplicates (same id and variant) were compiled once: count them once.
  unsigned Compiled = 0, NotStored = 0, Stored = 0, FromRemote = 0, Failed = 0;
  std::set<std::string> Seen;
  for (const Item &I : Items) {
    if (!I.Request) {
      errs() << I.Diagnostic << "\n";
      ++Failed;
      continue;
    }
    size_t R = *I.Request;
    bool First = Seen.insert(kiln::kernelIdFromIR(*Requests[R].K)).second;
    if (!Results[R]) {
      std::string Message = toString(Results[R].takeError());
      if (First) {
        printFailure(Requests[R].FileName, Requests[R].K->Name, Message);
        ++Failed;
      }
      continue;
    }
    if (!First)
      continue;
    if (Stats[R].RemoteHit)
      ++FromRemote;
    else if (Stats[R].Origin == kiln::KernelProvenance::Store)
      ++Stored;
    else {
      ++Compiled;
      // The store refused or failed the write (read-only, full, over a
      // limit): the warning said why; the batch did not do its job. (One
      // another process kept first is in the store all the same.)
      if (!Stats[R].InStore)
        ++NotStored;
    }
  }
  errs() << Tool << ": " << Compiled << " compiled";
  if (NotStored)
    errs() << " (" << NotStored << " not stored)";
  errs() << ", " << Stored << " already stored, ";
  if (FromRemote)
    errs() << FromRemote << " from the remote tier, ";
  errs() << Failed << " failed\n";
  return Failed || NotStored ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  // A reader that goes away (`| head`) makes a write fail with EPIPE, which
  // the tool reports as any failed write (exit status 1), instead of a
  // SIGPIPE death or LLVM's silent exit 74.
  InitLLVM X(argc, argv, /*InstallPipeSignalExitHandler=*/false);
  kiln::survivePipeReadersGoingAway();
  kiln::installFatalErrorHandlers("kiln-compile");
  // Over a file size limit a write must fail (EFBIG) and the store warn,
  // not kill the process: InitLLVM made SIGXFSZ a crash.
  std::signal(SIGXFSZ, SIG_IGN);
  adoptPrintAfter();
  cl::HideUnrelatedOptions(
      {&Category, &kiln::tools::remoteOptionCategory()});
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln kernel compiler: parse, verify and "
                              "compile .kiln files\n");
  StringRef Tool = "kiln-compile";
  if (PrintPipeline) {
    if (!InputFiles.empty())
      return fail(Tool, "--print-pipeline takes no input file");
    kiln::printPipeline(outs());
    outs().flush();
    if (outs().has_error()) {
      std::error_code EC = outs().error();
      outs().clear_error();
      return fail(Tool, "cannot write standard output: " + EC.message());
    }
    return 0;
  }
  if (OptLevel < '0' || OptLevel > '3')
    return fail(Tool, Twine("invalid optimisation level -O") +
                          Twine(static_cast<char>(OptLevel)) +
                          ": expected -O0, -O1, -O2 or -O3");
  if (PlaneDim == 0 || PlaneDim > 1024)
    return fail(Tool, "--plane-dim must be between 1 and 1024");
  if (BufferAlignment == 0 || BufferAlignment > 4096 ||
      (BufferAlignment & (BufferAlignment - 1)))
    return fail(Tool, "--buffer-alignment must be a power of two from 1 to "
                      "4096");
  if (Jobs > kiln::Executor::MaxThreads)
    return fail(Tool, "-j must be at most " +
                          Twine(kiln::Executor::MaxThreads) +
                          " (0: all cores)");
  // Target options LLVM would ignore or abort on are refused whatever is
  // emitted; what --store compiles must also run here (checked by the
  // device), while --emit may cross-compile for another CPU or, with
  // --mtriple, another architecture.
  kiln::CodeGenOptions Target;
  Target.OptLevel = OptLevel - '0';
  Target.Triple = MTriple;
  Target.CPU = MCPU;
  Target.Features = MAttr;
  if (Error E = kiln::checkTargetOptions(Target))
    return fail(Tool, toString(std::move(E)));
  std::vector<std::string> PrintAfter = printAfterPasses();
  if (!PrintAfter.empty()) {
    Expected<kiln::StepDumps> D = kiln::StepDumps::create(
        PrintAfter, "--print-after",
        [](const kiln::PipelineStep &, StringRef Text) { errs() << Text; });
    if (!D)
      return fail(Tool, toString(D.takeError()));
    // A step named alone that this level leaves out would print nothing.
    for (const std::string &Name : PrintAfter)
      if (const kiln::PipelineStep *S = kiln::findPipelineStep(Name))
        if (S->MinOptLevel > unsigned(Target.OptLevel))
          return fail(Tool, "--print-after: step '" + Name + "' runs from -O" +
                                Twine(S->MinOptLevel) + " on, not at -O" +
                                Twine(Target.OptLevel));
    Dumps = std::move(*D);
  }
  if (StoreDir.getNumOccurrences() && !MTriple.empty())
    if (Error E = kiln::checkRunsOnHost(Target))
      return fail(Tool, "--store compiles for this machine: " +
                            toString(std::move(E)));
  if (StoreDir.getNumOccurrences())
    return compileIntoStore();
  if (Jobs.getNumOccurrences())
    return fail(Tool, "-j applies to --store only");
  if (InputFiles.size() != 1)
    return fail(Tool, "expected one input file without --store, found " +
                          Twine(InputFiles.size()));
  return compileFile(InputFiles.front());
}
