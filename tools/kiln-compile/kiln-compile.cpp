//===- kiln-compile.cpp - Compile Kiln IR kernels (like llc) --------------===//
//
// kiln-compile FILE.kiln [--kernel NAME] --emit=ir|llvm|llvm-opt|asm|obj
//              [-O0|-O1|-O2|-O3] [-o OUT] [--print-id]
// kiln-compile FILE.kiln... --store=DIR [-j N]
//
// See /work/shared/design/TOOLS.md. --emit=llvm|llvm-opt|asm|obj lower the
// kernel for the host CPU (or --mcpu/--mattr) through the CPU backend.
//
//===----------------------------------------------------------------------===//

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/Lowering.h"
#include "kiln/IR/DeviceLimits.h"
#include "kiln/IR/Hash.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

enum class EmitKind { IR, LLVM, LLVMOpt, Asm, Obj };

cl::OptionCategory Category("kiln-compile options");

cl::list<std::string> InputFiles(cl::Positional, cl::desc("<FILE.kiln>..."),
                                 cl::OneOrMore, cl::cat(Category));

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

cl::opt<std::string> MCPU("mcpu",
                          cl::desc("Target CPU for --emit=llvm-opt|asm|obj "
                                   "(default: the host CPU)"),
                          cl::value_desc("CPU"), cl::cat(Category));

cl::opt<std::string>
    MAttr("mattr",
          cl::desc("Target features, as llc's -mattr (\"+avx2,-avx512f\"); "
                   "default: the host's"),
          cl::value_desc("FEATURES"), cl::cat(Category));

cl::opt<bool> NoBoundsCheck(
    "no-bounds-check",
    cl::desc("Compile the unchecked variant (default: bounds-checked)"),
    cl::cat(Category));

cl::opt<std::string> OutputFile("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("OUT"), cl::init("-"),
                                cl::cat(Category));

cl::opt<std::string>
    StoreDir("store",
             cl::desc("Compile every kernel of every file into the store "
                      "at DIR"),
             cl::value_desc("DIR"), cl::cat(Category));

cl::opt<unsigned> Jobs("j",
                       cl::desc("Threads for --store (default 0: all cores)"),
                       cl::value_desc("N"), cl::init(0), cl::cat(Category));

cl::opt<bool> PrintId("print-id",
                      cl::desc("Print the id of each kernel (NAME-HASH, from "
                               "its canonical IR) instead of the IR"),
                      cl::cat(Category));

/// Prints "PREFIX: error: MESSAGE" to stderr and returns 1.
int fail(StringRef Prefix, const Twine &Message) {
  errs() << Prefix << ": error: " << Message << "\n";
  return 1;
}

/// Lowers \p K and writes the backend output --emit asks for to \p OS.
int emitBackend(StringRef Name, const kiln::Kernel &K, raw_pwrite_stream &OS) {
  kiln::CpuVariant Variant;
  Variant.BoundsChecked = !NoBoundsCheck;
  LLVMContext Ctx;
  Expected<kiln::LoweredModule> Lowered =
      kiln::lowerKernel(K, Variant, kiln::DeviceLimits{}, Ctx);
  if (!Lowered)
    return fail(Name, toString(Lowered.takeError()));
  Module &M = *Lowered->Module;
  if (Emit == EmitKind::LLVM) {
    M.print(OS, nullptr);
    return 0;
  }
  kiln::CodeGenOptions Opts;
  Opts.OptLevel = OptLevel - '0';
  Opts.CPU = MCPU;
  Opts.Features = MAttr;
  auto TM = kiln::createTargetMachine(Opts);
  if (!TM)
    return fail(Name, toString(TM.takeError()));
  if (Error Err = kiln::optimizeModule(M, **TM, Opts.OptLevel))
    return fail(Name, toString(std::move(Err)));
  switch (Emit) {
  case EmitKind::LLVMOpt:
    M.print(OS, nullptr);
    return 0;
  case EmitKind::Asm: {
    Expected<std::string> Asm = kiln::emitAssembly(M, **TM);
    if (!Asm)
      return fail(Name, toString(Asm.takeError()));
    OS << *Asm;
    return 0;
  }
  case EmitKind::Obj: {
    auto Obj = kiln::emitObject(M, **TM);
    if (!Obj)
      return fail(Name, toString(Obj.takeError()));
    OS.write(Obj->data(), Obj->size());
    return 0;
  }
  default:
    return fail(Name, "unexpected --emit");
  }
}

/// Parses and verifies FILE, then writes what the options ask for.
int compileFile(StringRef File) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer =
      MemoryBuffer::getFileOrSTDIN(File, /*IsText=*/true);
  if (!Buffer)
    return fail(File, "cannot read file: " + Buffer.getError().message());
  StringRef Name = File == "-" ? StringRef("<stdin>") : File;

  Expected<kiln::Module> M = kiln::parseModule((*Buffer)->getBuffer(), Name);
  if (!M) {
    errs() << toString(M.takeError()) << "\n";
    return 1;
  }
  if (Error Err = kiln::verifyModule(*M, kiln::DeviceLimits{})) {
    errs() << toString(std::move(Err)) << "\n";
    return 1;
  }

  std::vector<const kiln::Kernel *> Selected;
  if (KernelName.getNumOccurrences()) {
    const kiln::Kernel *K = M->findKernel(KernelName);
    if (!K)
      return fail(Name, "no kernel named '" + KernelName + "'");
    Selected.push_back(K);
  } else {
    for (const kiln::Kernel &K : M->Kernels)
      Selected.push_back(&K);
  }

  if (Emit == EmitKind::Obj && !PrintId && Selected.size() != 1)
    return fail(Name, "--emit=obj writes one kernel: choose it with --kernel "
                      "(the file has " +
                          Twine(Selected.size()) + ")");

  std::error_code EC;
  ToolOutputFile Out(OutputFile, EC,
                     Emit == EmitKind::Obj ? sys::fs::OF_None
                                           : sys::fs::OF_TextWithCRLF);
  if (EC)
    return fail(OutputFile, "cannot open output file: " + EC.message());
  for (size_t I = 0; I < Selected.size(); ++I) {
    if (PrintId) {
      Out.os() << kiln::kernelIdFromIR(*Selected[I]) << "\n";
    } else if (Emit != EmitKind::IR) {
      if (int RC = emitBackend(Name, *Selected[I], Out.os()))
        return RC;
    } else {
      if (I)
        Out.os() << "\n";
      Out.os() << kiln::printKernel(*Selected[I]);
    }
  }
  Out.keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln kernel compiler: parse, verify and "
                              "compile .kiln files\n");
  StringRef Tool = "kiln-compile";
  if (OptLevel < '0' || OptLevel > '3')
    return fail(Tool, Twine("invalid optimisation level -O") +
                          Twine(static_cast<char>(OptLevel)) +
                          ": expected -O0, -O1, -O2 or -O3");
  if (StoreDir.getNumOccurrences())
    return fail(Tool, "--store is not available in this build");
  if (InputFiles.size() != 1)
    return fail(Tool, "expected one input file without --store, found " +
                          Twine(InputFiles.size()));
  return compileFile(InputFiles.front());
}
