//===- kiln-run.cpp - Run a Kiln kernel on given inputs (like lli) --------===//
//
// kiln-run FILE.kiln --kernel NAME --cubes X[,Y[,Z]] [--arg NAME=SPEC]...
//          [--out NAME=PATH]... [--print NAME]... [--store=DIR | --no-store]
//          [--bounds-check | --no-bounds-check] [--stats] [--repeat N]
//          [--timeout=SECONDS]
// kiln-run --plan=FILE [--out NAME=PATH]... [--print NAME]... [the same
//          other options]
//
// See docs/Tools.md §3; the SPEC forms are in tools/support/ArgSpec.h, the
// plans in tools/support/Plan.h. --print writes one element per line (the lanes
// of a line separated by spaces), buffers in the order of the --print options.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compile/Logger.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Diagnostic.h"
#include "kiln/IR/Hash.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Store/Environment.h"
#include "support/ArgSpec.h"
#include "support/Plan.h"
#include "support/RemoteOptions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <numeric>
#include <system_error>

using namespace llvm;

namespace {

cl::OptionCategory Category("kiln-run options");

// FILE.kiln, --kernel and --cubes are required without --plan, which
// excludes them: run() checks them.
cl::opt<std::string> InputFile(cl::Positional, cl::desc("<FILE.kiln>"),
                               cl::cat(Category));
cl::opt<std::string> KernelName("kernel",
                                cl::desc("The kernel to run (without '@')"),
                                cl::value_desc("NAME"), cl::cat(Category));
cl::opt<std::string> Cubes("cubes",
                           cl::desc("Cube count of the launch: X[,Y[,Z]]; a "
                                    "zero in any dimension runs nothing"),
                           cl::value_desc("X[,Y[,Z]]"), cl::cat(Category));
cl::opt<std::string> PlanFile(
    "plan",
    cl::desc("Run the plan in FILE: launches of kernels of .kiln files on "
             "shared buffers, with host loops (docs/Tools.md, \"Plans\"); "
             "excludes FILE.kiln, --kernel, --cubes and --arg"),
    cl::value_desc("FILE"), cl::cat(Category));
cl::list<std::string> Args(
    "arg",
    cl::desc("Bind parameter NAME: a buffer TYPE[COUNT]:zeros|fill=VALUE|"
             "iota|file=PATH[:shape=AxB..[:strides=AxB..]"
             "[:box=AxB..|:im2col=L/U/C/P]], or a literal of a value "
             "parameter's type (every parameter must be bound)"),
    cl::value_desc("NAME=SPEC"), cl::cat(Category));
cl::list<std::string> Outs(
    "out", cl::desc("After the launch (the plan), write buffer NAME to PATH "
                    "(raw, little-endian)"),
    cl::value_desc("NAME=PATH"), cl::cat(Category));
cl::list<std::string> Prints(
    "print", cl::desc("After the launch (the plan), print buffer NAME, one "
                      "element per line (lanes separated by spaces)"),
    cl::value_desc("NAME"), cl::cat(Category));
cl::opt<std::string> StoreDir("store",
                              cl::desc("Keep compiled kernels in the store "
                                       "at DIR (default: KILN_CACHE_DIR, else "
                                       "$XDG_CACHE_HOME/kiln, else "
                                       "~/.cache/kiln)"),
                              cl::value_desc("DIR"), cl::cat(Category));
cl::opt<bool> NoStore("no-store", cl::desc("Run without a persistent store"),
                      cl::cat(Category));
cl::opt<bool> BoundsCheck("bounds-check",
                          cl::desc("Run the bounds-checked variant (default)"),
                          cl::cat(Category));
cl::opt<bool> NoBoundsCheck("no-bounds-check",
                            cl::desc("Run the variant without bounds checks"),
                            cl::cat(Category));
/// --stats; created in main() once LLVM's own `-stats` is renamed (both
/// cannot be registered under one name).
cl::opt<bool> *StatsOpt = nullptr;
cl::opt<unsigned> Repeat("repeat", cl::desc("Launch (run the plan) N times "
                                          "(default 1)"),
                         cl::value_desc("N"), cl::init(1), cl::cat(Category));
cl::opt<char> OptLevel("O", cl::desc("Optimisation level: -O0 .. -O3 "
                                     "(default -O3)"),
                       cl::Prefix, cl::init('3'), cl::cat(Category));
cl::opt<unsigned> Threads("threads",
                          cl::desc("Launch threads, at most 4096 (default 0: "
                                   "all cores; more than the cores is capped "
                                   "to them)"),
                          cl::value_desc("N"), cl::init(0), cl::cat(Category));
// A list, as llc's: given more than once, the lists are joined and a later
// feature wins (a wrapper adding --mattr=-avx to a run that names
// --mattr=-avx512f itself: docs/Portability.md).
cl::list<std::string> MAttr("mattr",
                            cl::desc("Target features on top of the host's, "
                                     "e.g. -avx512f"),
                            cl::value_desc("FEATURES"), cl::CommaSeparated,
                            cl::cat(Category));

cl::opt<std::string> Timeout(
    "timeout",
    cl::desc("Stop a launch that runs longer than SECONDS (a positive "
             "decimal, e.g. 0.5) and fail; default: no limit"),
    cl::value_desc("SECONDS"), cl::cat(Category));

cl::opt<unsigned> PlaneDim(
    "plane-dim",
    cl::desc("Units per plane the device runs kernels with (default 32, "
             "1..1024); a kernel's plane_dim(N) request must match it"),
    cl::value_desc("N"), cl::init(32), cl::cat(Category));

cl::opt<uint64_t> DebugPrintLimit(
    "debug-print-limit",
    cl::desc("Most bytes of debug_print text one launch keeps (default "
             "1048576); the rest is dropped and counted in a last line"),
    cl::value_desc("BYTES"), cl::init(kiln::DefaultDebugPrintLimit),
    cl::cat(Category));

constexpr const char *Tool = "kiln-run";

int fail(const Twine &Message) {
  errs() << Tool << ": error: " << Message << "\n";
  return 1;
}

int fail(Error E) {
  std::string Msg = toString(std::move(E));
  // Located diagnostics come formatted already ("FILE:LINE:COL: error: ...").
  if (StringRef(Msg).contains(": error: ")) {
    errs() << Msg << "\n";
    return 1;
  }
  return fail(Msg);
}

/// A diagnostic about a whole input file, in the form kiln-compile uses:
/// "FILE: error: MESSAGE" (a diagnostic without a place in the file).
int failInFile(StringRef File, const Twine &Message) {
  return fail(kiln::makeDiagnostic(File, kiln::SourceLoc(), Message.str()));
}

/// --timeout's SECONDS as microseconds: a positive decimal of at most a
/// year (more is surely a mistake), at least a microsecond.
Expected<std::chrono::microseconds> parseTimeout(StringRef Text) {
  auto Bad = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(),
                             "--timeout=" + Text + ": " + Why);
  };
  double Seconds = 0;
  if (Text.empty() || Text.find_first_not_of("0123456789.") != StringRef::npos ||
      Text.count('.') > 1 || Text == "." || Text.getAsDouble(Seconds))
    return Bad("expected a positive number of seconds, such as 2 or 0.5");
  if (Seconds > 365.0 * 24 * 3600)
    return Bad("more than a year");
  auto Micros = static_cast<int64_t>(Seconds * 1e6);
  if (Micros < 1)
    return Bad("the limit must be at least one microsecond");
  return std::chrono::microseconds(Micros);
}

double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Start)
      .count();
}

/// One line of --stats: "kiln-run: PHASE: 1.234 ms".
void stat(std::string_view Phase, double Ms) {
  fmt::print(stderr, "{}: {}: {:.3f} ms\n", Tool, Phase, Ms);
}

/// How --stats says the kernel was obtained.
const char *originText(const kiln::KernelStats &KS) {
  switch (KS.Origin) {
  case kiln::KernelProvenance::Store:
    return KS.RemoteHit ? "loaded from the store (remote hit)"
                        : "loaded from the store";
  case kiln::KernelProvenance::Compiled:
    return KS.Stored     ? "compiled, stored"
           : KS.HasStore ? "compiled, not stored"
                         : "compiled, not stored (no store)";
  case kiln::KernelProvenance::Memory:
    return "loaded from memory";
  case kiln::KernelProvenance::Failed:
    return "failed";
  }
  llvm_unreachable("unknown kernel origin");
}

/// The index of buffer parameter \p Name, or an error for \p Option.
Expected<size_t> bufferParam(ArrayRef<kiln::ParamMetadata> Params,
                             StringRef Name, StringRef Option) {
  Name.consume_front("%");
  for (size_t I = 0; I < Params.size(); ++I) {
    if (Params[I].Name != Name)
      continue;
    if (!Params[I].IsBuffer)
      return createStringError(inconvertibleErrorCode(),
                               "--" + Option + " " + Name + ": %" + Name +
                                   " is a value, not a buffer");
    return I;
  }
  return createStringError(inconvertibleErrorCode(),
                           "--" + Option + " " + Name +
                               ": the kernel has no parameter %" + Name);
}

/// --timeout as a limit (zero: none).
Expected<std::chrono::microseconds> timeoutLimit() {
  if (!Timeout.getNumOccurrences())
    return std::chrono::microseconds(0);
  return parseTimeout(Timeout);
}

/// The device the options ask for, printing debug_print text on stderr.
Expected<std::unique_ptr<kiln::RuntimeDevice>>
makeDevice(kiln::DeviceOptions DO) {
  DO.OptLevel = OptLevel - '0';
  DO.Threads = Threads;
  DO.Features = llvm::join(MAttr, ",");
  // The library is silent: the tool prints the store's warnings, and each
  // kernel's log with KILN_LOG=1.
  DO.WarningSink = kiln::printWarningToStderr;
  if (kiln::compilationLoggingEnabled())
    DO.KernelLogSink = [](llvm::StringRef Line) {
      llvm::errs() << Line << '\n';
    };
  if (NoStore) {
    DO.StoreMode = kiln::DeviceStoreMode::Off;
  } else if (StoreDir.getNumOccurrences()) {
    // An explicit folder is used whatever KILN_CACHE_DIR says; KILN_CACHE
    // (off, read-only) still applies to it.
    DO.StoreDir = StoreDir;
  }
  Expected<std::optional<kiln::RemoteConfig>> Remote =
      kiln::tools::remoteConfigFromOptions();
  if (!Remote)
    return Remote.takeError();
  DO.Remote = std::move(*Remote);
  auto Dev = kiln::RuntimeDevice::create(DO);
  if (!Dev)
    return Dev.takeError();
  // debug_print text goes to stderr, whole launches at a time, so that
  // --print's lines on stdout stay parseable.
  (*Dev)->executor().setDebugPrintHandler([](std::string_view Text) {
    std::fwrite(Text.data(), 1, Text.size(), stderr);
    std::fflush(stderr);
  });
  (*Dev)->executor().setDebugPrintLimit(DebugPrintLimit);
  return Dev;
}

/// --stats' line on how kernel \p K was obtained.
void kernelStat(const kiln::IRKernel &K, const kiln::CpuVariant &Variant,
                const kiln::KernelStats &KS) {
  fmt::print(stderr, "{}: kernel {} ({}): {}\n", Tool, kiln::kernelIdFromIR(K),
             Variant.str(), originText(KS));
}

/// --stats' lines on the store, compile and link phases of a kernel.
void compileStats(const kiln::KernelStats &KS) {
  if (KS.HasStore)
    stat("store lookup/decompress", KS.LookupSeconds * 1e3);
  if (KS.Compiled) {
    stat("compile: verify", KS.VerifySeconds * 1e3);
    stat("compile: lower", KS.LowerSeconds * 1e3);
    stat("compile: optimize", KS.OptimizeSeconds * 1e3);
    stat("compile: codegen", KS.CodegenSeconds * 1e3);
  }
  stat("link", KS.LinkSeconds * 1e3);
  if (KS.Compiled && KS.HasStore)
    stat("store write", KS.StoreSeconds * 1e3);
}

/// The median of \p Ms (the mean of the middle two of an even count).
double median(std::vector<double> Ms) {
  if (Ms.empty())
    return 0;
  size_t Mid = Ms.size() / 2;
  std::nth_element(Ms.begin(), Ms.begin() + Mid, Ms.end());
  if (Ms.size() % 2)
    return Ms[Mid];
  double Upper = Ms[Mid];
  return (*std::max_element(Ms.begin(), Ms.begin() + Mid) + Upper) / 2;
}

/// Writes buffer \p B to \p Path (--out).
Error writeBuffer(const kiln::HostBuffer &B, StringRef Path) {
  return kiln::writeOutputFile(
      Path, /*Binary=*/true, [&](raw_pwrite_stream &OS) {
        OS.write(static_cast<const char *>(B.data()), B.sizeInBytes());
        return Error::success();
      });
}

/// Prints buffer \p B on standard output (--print).
void printBuffer(const kiln::HostBuffer &B) {
  const char *Data = static_cast<const char *>(B.data());
  unsigned Size = B.elementType().storeSize();
  for (uint64_t E = 0; E < B.count() && !outs().has_error(); ++E)
    outs() << kiln::formatElement(Data + E * Size, B.elementType()) << "\n";
}

int runPlan();

int run() {
  using Clock = std::chrono::steady_clock;
  bool Stats = *StatsOpt;
  if (OptLevel < '0' || OptLevel > '3')
    return fail(Twine("invalid optimisation level -O") + Twine(char(OptLevel)) +
                ": expected -O0, -O1, -O2 or -O3");
  if (BoundsCheck && NoBoundsCheck)
    return fail("--bounds-check and --no-bounds-check exclude each other");
  if (StoreDir.getNumOccurrences() && NoStore)
    return fail("--store and --no-store exclude each other");
  if (StoreDir.getNumOccurrences() && StoreDir.empty())
    return fail("--store: empty folder name");
  if (Repeat == 0)
    return fail("--repeat must be at least 1");
  if (PlaneDim == 0 || PlaneDim > 1024)
    return fail("--plane-dim must be between 1 and 1024");
  if (Threads > kiln::Executor::MaxThreads)
    return fail("--threads must be at most " +
                Twine(kiln::Executor::MaxThreads) + " (0: all cores)");
  if (PlanFile.getNumOccurrences())
    return runPlan();
  // Without --plan these are required, and worded as cl::Required words it.
  if (!InputFile.getNumOccurrences() || !KernelName.getNumOccurrences() ||
      !Cubes.getNumOccurrences()) {
    if (!InputFile.getNumOccurrences())
      errs() << Tool << ": Not enough positional command line arguments "
             << "specified!\nMust specify at least 1 positional argument: "
             << "See: " << Tool << " --help\n";
    for (auto *Missing : {&KernelName, &Cubes})
      if (!Missing->getNumOccurrences())
        errs() << Tool << ": for the --" << Missing->ArgStr
               << " option: must be specified at least once!\n";
    return 1;
  }
  auto CubeCount = kiln::parseCubeCount(Cubes);
  if (!CubeCount)
    return fail(CubeCount.takeError());
  auto Limit = timeoutLimit();
  if (!Limit)
    return fail(Limit.takeError());

  auto Start = Clock::now();
  StringRef FileName = InputFile == "-" ? StringRef("<stdin>") : InputFile;
  Expected<std::string> Text = kiln::readInputFile(InputFile);
  if (!Text)
    return failInFile(FileName, toString(Text.takeError()));
  Expected<kiln::Module> M = kiln::parseModule(*Text, FileName);
  if (!M)
    return fail(M.takeError());
  double ParseMs = msSince(Start);

  Start = Clock::now();
  kiln::DeviceOptions DO;
  DO.Limits.PlaneDim = PlaneDim;
  if (Error E = kiln::verifyModule(*M, DO.Limits))
    return fail(std::move(E));
  double VerifyMs = msSince(Start);

  const kiln::IRKernel *K = M->findKernel(StringRef(KernelName).ltrim('@'));
  if (!K) {
    std::string Known;
    for (const kiln::IRKernel &Each : M->Kernels)
      Known += (Known.empty() ? "@" : ", @") + Each.Name;
    return failInFile(
        FileName, "no kernel named '" + KernelName +
                      "' (kernels: " + (Known.empty() ? "none" : Known) + ")");
  }

  // Every argument is checked, and every input read, before compiling.
  std::vector<kiln::ParamMetadata> Params = kiln::paramsOf(*K);
  auto Inputs = kiln::bindArguments(Params, Args);
  if (!Inputs)
    return fail(Inputs.takeError());
  std::vector<std::pair<size_t, std::string>> OutFiles;
  for (const std::string &O : Outs) {
    auto NV = kiln::splitNameValue(O, "out");
    if (!NV)
      return fail(NV.takeError());
    auto I = bufferParam(Params, NV->first, "out");
    if (!I)
      return fail(I.takeError());
    if (NV->second.empty())
      return fail("--out " + NV->first + ": empty file name");
    // Refused now, not after the launch with other outputs already written.
    if (Error E = kiln::checkOutputPath(NV->second))
      return fail("--out " + NV->first + ": " + toString(std::move(E)));
    OutFiles.emplace_back(*I, NV->second);
  }
  std::vector<size_t> PrintIdx;
  for (const std::string &P : Prints) {
    auto I = bufferParam(Params, P, "print");
    if (!I)
      return fail(I.takeError());
    PrintIdx.push_back(*I);
  }

  auto Dev = makeDevice(DO);
  if (!Dev)
    return fail(Dev.takeError());
  kiln::CpuVariant Variant;
  Variant.BoundsChecked = !NoBoundsCheck;
  kiln::KernelStats KS;
  auto Loaded = (*Dev)->getKernel(*K, Variant, &KS);
  if (!Loaded)
    return fail(Loaded.takeError());

  if (Stats) {
    kernelStat(*K, Variant, KS);
    stat("parse", ParseMs);
    stat("verify", VerifyMs);
    compileStats(KS);
  }
  for (unsigned R = 0; R < Repeat; ++R) {
    Start = Clock::now();
    // A kernel that never ends is stopped at its next loop iteration or
    // cube (docs/Lowering.md, "Cancellation").
    kiln::LaunchStop Stop;
    Error E = Error::success();
    {
      kiln::Watchdog::Scope Deadline((*Dev)->executor().watchdog(), Stop,
                                     *Limit);
      E = (*Dev)->launch(*Loaded, *CubeCount, Inputs->Bindings, &Stop);
    }
    if (E && Stop.reason() == kiln::LaunchStop::Reason::TimedOut) {
      consumeError(std::move(E));
      return fail("--timeout=" + Timeout + ": launch " +
                  (Repeat == 1 ? "" : Twine(R + 1) + " ") + "of kernel '" +
                  K->Name + "' ran longer than " + Timeout +
                  " s and was stopped (nothing written)");
    }
    if (E)
      return fail(std::move(E));
    if (Stats)
      stat(Repeat == 1 ? "launch" : fmt::format("launch {}", R + 1),
           msSince(Start));
  }

  for (const auto &[I, Path] : OutFiles)
    if (Error E = writeBuffer(Inputs->Buffers[I], Path))
      return fail("--out " + Params[I].Name + ": " + toString(std::move(E)));
  for (size_t I : PrintIdx)
    printBuffer(Inputs->Buffers[I]);
  if (Error E = kiln::flushOrError(outs(), "standard output"))
    return fail("--print: " + toString(std::move(E)));
  return 0;
}

/// kiln-run --plan=FILE: reads the plan and every .kiln file it names,
/// checks the plan's bindings, runs it once without launching (which
/// creates the buffers and evaluates every value), compiles the kernels,
/// then runs it --repeat times.
int runPlan() {
  using Clock = std::chrono::steady_clock;
  bool Stats = *StatsOpt;
  if (InputFile.getNumOccurrences() || KernelName.getNumOccurrences() ||
      Cubes.getNumOccurrences() || Args.getNumOccurrences())
    return fail("--plan excludes FILE.kiln, --kernel, --cubes and --arg: "
                "the plan names its kernels, cube counts and arguments");
  if (PlanFile.empty())
    return fail("--plan: empty file name");
  auto Limit = timeoutLimit();
  if (!Limit)
    return fail(Limit.takeError());

  auto Start = Clock::now();
  StringRef PlanName = PlanFile == "-" ? StringRef("<stdin>") : PlanFile;
  Expected<std::string> PlanText = kiln::readInputFile(PlanFile);
  if (!PlanText)
    return failInFile(PlanName, toString(PlanText.takeError()));
  auto P = kiln::Plan::parse(*PlanText, PlanName);
  if (!P)
    return fail(P.takeError());

  // Each .kiln file is read, parsed and verified once, however many kernel
  // statements name it.
  kiln::DeviceOptions DO;
  DO.Limits.PlaneDim = PlaneDim;
  std::map<std::string, std::unique_ptr<kiln::Module>> Modules;
  std::vector<const kiln::IRKernel *> Kernels;
  std::vector<std::vector<kiln::ParamMetadata>> Params;
  double VerifyMs = 0;
  for (const kiln::PlanKernel &PK : P->kernels()) {
    std::unique_ptr<kiln::Module> &M = Modules[PK.File];
    if (!M) {
      Expected<std::string> Text = kiln::readInputFile(PK.File);
      if (!Text)
        return fail(kiln::makeDiagnostic(
            PlanName, PK.PathLoc,
            "'" + PK.Path + "': " + toString(Text.takeError())));
      Expected<kiln::Module> Parsed = kiln::parseModule(*Text, PK.File);
      if (!Parsed)
        return fail(Parsed.takeError());
      auto VerifyStart = Clock::now();
      if (Error E = kiln::verifyModule(*Parsed, DO.Limits))
        return fail(std::move(E));
      VerifyMs += msSince(VerifyStart);
      M = std::make_unique<kiln::Module>(std::move(*Parsed));
    }
    const kiln::IRKernel *K = M->findKernel(PK.Kernel);
    if (!K) {
      std::string Known;
      for (const kiln::IRKernel &Each : M->Kernels)
        Known += (Known.empty() ? "@" : ", @") + Each.Name;
      return fail(kiln::makeDiagnostic(
          PlanName, PK.PathLoc,
          "'" + PK.Path + "' has no kernel named '" + PK.Kernel +
              "' (kernels: " + (Known.empty() ? "none" : Known) + ")"));
    }
    Kernels.push_back(K);
    Params.push_back(kiln::paramsOf(*K));
  }
  double ParseMs = msSince(Start) - VerifyMs;
  if (Error E = P->bind(Params))
    return fail(std::move(E));

  std::vector<std::string> PrintNames;
  for (const std::string &Name : Prints) {
    if (!P->hasBuffer(Name))
      return fail("--print " + Name + ": the plan has no buffer '" + Name +
                  "'");
    PrintNames.push_back(Name);
  }
  std::vector<std::pair<std::string, std::string>> OutFiles;
  for (const std::string &O : Outs) {
    auto NV = kiln::splitNameValue(O, "out");
    if (!NV)
      return fail(NV.takeError());
    if (!P->hasBuffer(NV->first))
      return fail("--out " + NV->first + ": the plan has no buffer '" +
                  NV->first + "'");
    if (NV->second.empty())
      return fail("--out " + NV->first + ": empty file name");
    if (Error E = kiln::checkOutputPath(NV->second))
      return fail("--out " + NV->first + ": " + toString(std::move(E)));
    OutFiles.push_back(std::move(*NV));
  }

  // The check run: buffers are created and every value the plan computes
  // is checked, before anything is compiled or launched.
  Start = Clock::now();
  if (Error E = P->check())
    return fail(std::move(E));
  double CheckMs = msSince(Start);

  // The plan's devices: the first, and one per `device` statement, each
  // made as the options say.
  std::vector<std::unique_ptr<kiln::RuntimeDevice>> Devs;
  for (unsigned D = 0; D < P->deviceCount(); ++D) {
    auto Dev = makeDevice(DO);
    if (!Dev)
      return fail(Dev.takeError());
    Devs.push_back(std::move(*Dev));
  }
  kiln::CpuVariant Variant;
  Variant.BoundsChecked = !NoBoundsCheck;
  if (Stats) {
    stat("parse", ParseMs);
    stat("verify", VerifyMs);
    stat("plan check", CheckMs);
  }
  // Every kernel on the first device, as before; on another device the
  // kernels its streams launch.
  std::vector<std::vector<std::optional<kiln::LoadedKernel>>> Loaded(
      Devs.size(),
      std::vector<std::optional<kiln::LoadedKernel>>(Kernels.size()));
  auto Load = [&](unsigned D, unsigned I) -> Error {
    if (Loaded[D][I])
      return Error::success();
    kiln::KernelStats KS;
    auto L = Devs[D]->getKernel(*Kernels[I], Variant, &KS);
    if (!L)
      return L.takeError();
    Loaded[D][I] = std::move(*L);
    if (Stats) {
      kernelStat(*Kernels[I], Variant, KS);
      compileStats(KS);
    }
    return Error::success();
  };
  for (unsigned I = 0; I < Kernels.size(); ++I)
    if (Error E = Load(0, I))
      return fail(std::move(E));
  for (unsigned S = 0; S < P->launchCount(); ++S)
    if (Error E = Load(P->launchDevice(S), P->launchKernel(S)))
      return fail(std::move(E));

  // Milliseconds of each launch, by launch statement (launches on the
  // plan's streams run on their threads).
  std::vector<std::vector<double>> LaunchMs(P->launchCount());
  std::mutex LaunchMsLock;
  std::vector<double> PlanMs;
  for (unsigned R = 0; R < Repeat; ++R) {
    Start = Clock::now();
    Error E = P->run([&](const kiln::PlanLaunch &L) -> Error {
      auto LaunchStart = Clock::now();
      kiln::LaunchStop Stop;
      Error LE = Error::success();
      kiln::RuntimeDevice &Dev = *Devs[L.Device];
      {
        kiln::Watchdog::Scope Deadline(Dev.executor().watchdog(), Stop,
                                       *Limit);
        LE = Dev.launch(*Loaded[L.Device][L.Kernel], L.CubeCount, L.Args,
                        &Stop);
      }
      if (LE && Stop.reason() == kiln::LaunchStop::Reason::TimedOut) {
        consumeError(std::move(LE));
        return P->launchError(
            L.Statement, "--timeout=" + Timeout + ": launch of kernel '" +
                             Kernels[L.Kernel]->Name + "' ran longer than " +
                             Timeout + " s and was stopped (nothing written)");
      }
      if (LE)
        return P->launchError(L.Statement, toString(std::move(LE)));
      if (Stats) {
        std::lock_guard<std::mutex> Guard(LaunchMsLock);
        LaunchMs[L.Statement].push_back(msSince(LaunchStart));
      }
      return Error::success();
    });
    if (E)
      return fail(std::move(E));
    PlanMs.push_back(msSince(Start));
  }

  if (Stats) {
    for (unsigned S = 0; S < P->launchCount(); ++S) {
      const std::vector<double> &Ms = LaunchMs[S];
      std::string What = fmt::format(
          "{}: line {}: launch {}: {} launch{}", Tool, P->launchLoc(S).Line,
          P->launchKernelName(S).str(), Ms.size(), Ms.size() == 1 ? "" : "es");
      if (Ms.empty())
        fmt::print(stderr, "{}\n", What);
      else
        fmt::print(stderr, "{}, total {:.4f} ms, median {:.4f} ms\n", What,
                   std::accumulate(Ms.begin(), Ms.end(), 0.0), median(Ms));
    }
    if (Repeat == 1) {
      stat("plan", PlanMs[0]);
    } else {
      for (unsigned R = 0; R < Repeat; ++R)
        stat(fmt::format("plan {}", R + 1), PlanMs[R]);
      stat("plan median", median(PlanMs));
    }
  }

  for (const auto &[Name, Path] : OutFiles)
    if (Error E = writeBuffer(*P->buffer(Name), Path))
      return fail("--out " + Name + ": " + toString(std::move(E)));
  // What the plan's `read` statements read back, in the order they ran,
  // then the --print buffers.
  for (const kiln::PlanRead &R : P->reads())
    printBuffer(*R.Contents);
  for (const std::string &Name : PrintNames)
    printBuffer(*P->buffer(Name));
  if (Error E = kiln::flushOrError(outs(), "standard output"))
    return fail("--print: " + toString(std::move(E)));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // A reader that goes away (`| head`) makes a write fail with EPIPE, which
  // the tool reports as any failed write (exit status 1), instead of a
  // SIGPIPE death or LLVM's silent exit 74.
  InitLLVM X(argc, argv, /*InstallPipeSignalExitHandler=*/false);
  kiln::survivePipeReadersGoingAway();
  kiln::installFatalErrorHandlers(Tool);
  // Over a file size limit a write must fail (EFBIG) and the store warn,
  // not kill the process: InitLLVM made SIGXFSZ a crash.
  std::signal(SIGXFSZ, SIG_IGN);
  // LLVM registers a `-stats` of its own (pass statistics), which would clash
  // with the contract's --stats: rename and hide it.
  if (cl::Option *LLVMStats = cl::getRegisteredOptions().lookup("stats")) {
    LLVMStats->setArgStr("llvm-stats");
    LLVMStats->setHiddenFlag(cl::ReallyHidden);
  }
  static cl::opt<bool> StatsFlag(
      "stats",
      cl::desc("Print on stderr how the kernel was obtained and the time of "
               "each phase"),
      cl::cat(Category));
  StatsOpt = &StatsFlag;
  cl::HideUnrelatedOptions(
      {&Category, &kiln::tools::remoteOptionCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Kiln kernel runner: compile a kernel of a .kiln file for this CPU and "
      "launch it\n\n"
      "  Buffer SPEC: TYPE[COUNT]:zeros | fill=VALUE | iota | file=PATH\n"
      "    TYPE is the parameter's element type, lines included\n"
      "    (\"vec<4 x f32>[256]:iota\": quote the '<'). iota stores i*N+j in\n"
      "    lane j of element i (N lanes; N = 1 for scalars), converted to\n"
      "    TYPE (integers wrap). file= reads exactly COUNT raw little-endian\n"
      "    elements (a file of another size is an error). A line VALUE is\n"
      "    one literal for every lane or one per lane, comma-separated.\n"
      "    A tensor binding adds :shape=AxBx... and optionally\n"
      "    :strides=AxBx... (elements, outermost first; default contiguous\n"
      "    row-major): f32[12]:zeros:shape=2x3x2:strides=6x2x1. A\n"
      "    tensor_map parameter also needs :box=AxB... (one per dimension):\n"
      "    f32[4096]:iota:shape=64x64:box=16x32. An im2col tensor_map\n"
      "    needs :im2col=LOWER/UPPER/CHANNELS/PIXELS instead: the pixel box\n"
      "    corners (signed, one per spatial dimension, 'x'-separated),\n"
      "    channels per pixel and pixels per column:\n"
      "    f32[72]:iota:shape=1x3x3x8:im2col=-1x-1/0x0/8/16.\n"
      "  Value SPEC: a literal of the parameter's type: 2.5, 7, -3, true,\n"
      "    0x3f800000 (a float's bit pattern).\n"
      "  --print writes one element per line, lanes separated by spaces,\n"
      "    integers in decimal, bools as true/false and floats as the\n"
      "    shortest text that reads back to the same value; several --print\n"
      "    follow each other in the order given.\n"
      "  debug_print text of the kernel goes to standard error, each\n"
      "    launch's text whole once it has completed (--debug-print-limit).\n"
      "  --plan=FILE runs a plan, one statement per line ('#' comments):\n"
      "    kernel K = PATH.kiln[:NAME]      buffer B = SPEC (COUNT may be\n"
      "    an expression)      let V = EXPR      swap B1 B2\n"
      "    for V = FROM to TO [step S] {  ...  }      repeat N {  ...  }\n"
      "    set B[INDEX] = VALUE      while B[INDEX] != 0 max N {  ...  }\n"
      "    launch K cubes=X[,Y[,Z]] PARAM=VALUE ...  (a buffer's name, an\n"
      "    integer expression with + - * / % min() max(), or a literal)\n"
      "    Host side: device D      stream S [= D]      event E\n"
      "    on S {  ...  }      record E      wait E      sync\n"
      "    copy INTO = FROM      read B      allreduce sum|max|min S=B ...\n"
      "    cubes=indirect(B[, INDEX]) (three u32 read when it runs)\n"
      "    Paths are relative to the plan's folder; --out and --print name\n"
      "    the plan's buffers (docs/Tools.md §3.6).\n");
  try {
    return run();
  } catch (const std::system_error &E) { // fmt's report of a failed write
    return fail("cannot write standard error: " + E.code().message());
  }
}
