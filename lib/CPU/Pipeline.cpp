//===- Pipeline.cpp - Every step from Kiln IR to object code --------------===//

#include "kiln/CPU/Pipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <iterator>

using namespace kiln;
using namespace llvm;

namespace {
using Id = PipelineStepId;
using Stage = PipelineStage;
using EP = ExtensionPoint;
using Shows = StepOutput;

// The pipeline. The drivers walk it: a step's place here is its place in
// every compilation. docs/Lowering.md's table lists the same steps in the
// same order (test/Pipeline/lowering-doc-table.test checks it).
constexpr PipelineStep Steps[] = {
    // lowerKernel (Lowering.cpp)
    {Id::ExpandUniformLoads, "expand-uniform-loads", Stage::Lower, EP::None, 0,
     false, Shows::KernelIR, "ExpandUniformLoads.h",
     "workgroup_uniform_load becomes barrier, load, barrier: the steps after "
     "it know barriers and loads only"},
    {Id::ForwardVars, "forward-vars", Stage::Lower, EP::None, 0, false,
     Shows::KernelIR, "ForwardVars.h",
     "a variable read across a barrier becomes the value set before it, "
     "when that is a short integer or bool chain: a unit range, not a flag"},
    {Id::Uniformity, "uniformity", Stage::Lower, EP::None, 0, true,
     Shows::KernelIR, "kiln/IR/Uniformity.h",
     "which values differ from unit to unit: what may run once per cube"},
    {Id::Segmentation, "segmentation", Stage::Lower, EP::None, 0, true,
     Shows::KernelIR, "Segmentation.h",
     "cuts the body at barriers and plane operations into unit loops; picks "
     "interchanged loops and loops across units (AccessPattern.h, "
     "LoopInterchange.h)"},
    {Id::Liveness, "liveness", Stage::Lower, EP::None, 0, true, Shows::KernelIR,
     "SegmentLiveness.h",
     "which values cross from one unit loop to another: kept per unit or "
     "recomputed (Rematerialization.h)"},
    {Id::ScratchLayout, "scratch-layout", Stage::Lower, EP::None, 0, true,
     Shows::KernelIR, "ScratchLayout.h",
     "places every kept value and the flags in the cube's scratch area and "
     "sizes it"},
    {Id::AtomicPrivatization, "atomic-privatization", Stage::Lower, EP::None,
     0, true, Shows::KernelIR, "AtomicPrivatization.h",
     "buffers whose atomics may go to per-worker private copies, merged "
     "after the launch"},
    {Id::Emission, "emission", Stage::Lower, EP::None, 0, false, Shows::LLVMIR,
     "LoweringImpl.h",
     "emits the cube function: the argument table, the cube loop and each "
     "segment as a unit loop nest"},
    {Id::LoopVersioning, "loop-versioning", Stage::Lower, EP::None, 0, false,
     Shows::LLVMIR, "LoopVersioning.h",
     "a twin of each innermost unit loop without the checks it can prove, "
     "which the vectoriser can widen"},
    // createTargetMachine (CodeGen.cpp)
    {Id::TargetMachine, "target-machine", Stage::Target, EP::None, 0, false,
     Shows::Target, "CodeGen.cpp",
     "the host's CPU and features (or --mcpu/--mattr); AVX-512 with 512-bit "
     "vectors, which Intel cores with VBMI prefer too"},
    // optimizeModule (CodeGen.cpp)
    {Id::InlineExp, "inline-exp", Stage::Optimize, EP::None, 0, false,
     Shows::LLVMIR, "InlineExp.h",
     "f32 exp as inline arithmetic on AVX-512 and AArch64, at every level: "
     "the same bits in scalar and vector loops"},
    {Id::SerialProductScans, "serial-product-scans", Stage::Optimize,
     EP::None, 0, false, Shows::LLVMIR, "SerialProductScans.h",
     "64-bit product scans as a loop over the lanes where the target has no "
     "vector 64-bit multiply"},
    {Id::ScalarFallbackLoops, "scalar-fallback-loops", Stage::Optimize,
     EP::None, 0, false, Shows::LLVMIR, "ScalarFallbackLoops.h",
     "guarded twins of versioned loops stay scalar unless their math would "
     "round differently; after inline-exp"},
    {Id::LLVMPipeline, "llvm-pipeline", Stage::Optimize, EP::None, 0, false,
     Shows::LLVMIR, "CodeGen.cpp",
     "LLVM's default pipeline at the level asked for (-O3), with loop and "
     "SLP vectorisation from -O2 and libmvec with AVX2"},
    {Id::UnitLoopSwitches, "unit-loop-switches", Stage::Optimize,
     EP::VectorizerStart, 2, false, Shows::LLVMIR, "UnitLoopSwitches.h",
     "switches in innermost unit loops become compare trees, which the "
     "vectoriser if-converts"},
    {Id::StreamingUnroll, "streaming-unroll", Stage::Optimize,
     EP::VectorizerStart, 0, false, Shows::LLVMIR, "StreamingUnroll.h",
     "unit loops that only stream buffers are unrolled to 8 vectors an "
     "iteration, not fully"},
    {Id::UnitLoopWidth, "unit-loop-width", Stage::Optimize,
     EP::VectorizerStart, 2, false, Shows::LLVMIR, "UnitLoopWidth.h",
     "unit loops whose vector width is certain are given it: no vector "
     "epilogue"},
    {Id::JamUnitLoops, "jam-unit-loops", Stage::Optimize, EP::OptimizerLast,
     2, false, Shows::LLVMIR, "JamUnitLoops.h",
     "unit loops that are one long floating-point chain run several units "
     "an iteration, interleaved"},
    {Id::BlendScratchStores, "blend-scratch-stores", Stage::Optimize,
     EP::OptimizerLast, 0, false, Shows::LLVMIR, "BlendScratchStores.h",
     "masked stores into the scratch area as blends where the target's "
     "masked stores are microcoded"},
    {Id::ExpandBlockCopies, "expand-block-copies", Stage::Optimize,
     EP::OptimizerLast, 0, false, Shows::LLVMIR, "ExpandBlockCopies.h",
     "block copies and fills as vector loops, never calls of the C library"},
    {Id::UniformGathers, "uniform-gathers", Stage::Optimize, EP::OptimizerLast,
     2, false, Shows::LLVMIR, "UniformGathers.h",
     "masked gathers from one address as one scalar load, broadcast; "
     "scatters to one address as one store"},
    {Id::SignallingNaNMinMax, "signalling-nan-min-max", Stage::Optimize,
     EP::OptimizerLast, 0, false, Shows::LLVMIR, "SignallingNaNMinMax.h",
     "where the target's minNum instructions quiet a signalling NaN "
     "(AArch64): a NaN operand of min/max is the other operand first"},
    // emitObject / emitAssembly (CodeGen.cpp)
    {Id::CodeGenGate, "codegen-gate", Stage::CodeGen, EP::None, 0, false,
     Shows::Gate, "CodeGen.cpp",
     "no loop strength reduction, no X86 domain reassignment, no post-RA "
     "scheduling in large functions: compile time"},
    {Id::LLVMCodeGen, "llvm-codegen", Stage::CodeGen, EP::None, 0, false,
     Shows::Assembly, "CodeGen.cpp",
     "LLVM's code generation: instruction selection, register allocation, "
     "the object file or the assembly"},
};

// The drivers index the table by id.
constexpr bool idsInOrder() {
  for (size_t I = 0; I < std::size(Steps); ++I)
    if (static_cast<size_t>(Steps[I].Id) != I)
      return false;
  return true;
}
static_assert(static_cast<size_t>(Id::LLVMCodeGen) + 1 == std::size(Steps),
              "every step id has one entry in the table");
} // namespace

ArrayRef<PipelineStep> kiln::cpuPipeline() { return Steps; }

const PipelineStep &kiln::pipelineStep(PipelineStepId StepId) {
  static_assert(idsInOrder(), "the table is in the order of the ids");
  return Steps[static_cast<size_t>(StepId)];
}

const PipelineStep *kiln::findPipelineStep(StringRef Name) {
  for (const PipelineStep &S : Steps)
    if (Name == S.Name)
      return &S;
  return nullptr;
}

StringRef kiln::stageName(PipelineStage S) {
  switch (S) {
  case Stage::Lower:
    return "lower";
  case Stage::Target:
    return "target";
  case Stage::Optimize:
    return "optimize";
  case Stage::CodeGen:
    return "codegen";
  }
  llvm_unreachable("unknown pipeline stage");
}

StringRef kiln::extensionPointName(ExtensionPoint Hook) {
  switch (Hook) {
  case EP::None:
    return "";
  case EP::VectorizerStart:
    return "vectorizer-start";
  case EP::OptimizerLast:
    return "optimizer-last";
  }
  llvm_unreachable("unknown extension point");
}

void kiln::printPipeline(raw_ostream &OS) {
  OS << "# The CPU pipeline, Kiln IR to object code, in the order it runs.\n"
        "# step: a name --print-after takes; an indented step is a pass "
        "inside llvm-pipeline,\n"
        "# at its extension point. from: the lowest -O level it runs at.\n";
  const char *Head[] = {"#", "step", "stage", "from", "why"};
  OS << format("%-3s %-24s %-9s %-5s %s\n", Head[0], Head[1], Head[2], Head[3],
               Head[4]);
  unsigned N = 0;
  for (const PipelineStep &S : Steps) {
    std::string Name = S.Hook == EP::None ? std::string(S.Name)
                                          : "  " + std::string(S.Name);
    std::string Why = S.Reason;
    if (S.Hook != EP::None)
      Why = "[" + extensionPointName(S.Hook).str() + "] " + Why;
    OS << format("%-3u %-24s %-9s -O%-3u %s\n", ++N, Name.c_str(),
                 stageName(S.Stage).str().c_str(), S.MinOptLevel, Why.c_str());
  }
}

Expected<StepDumps> StepDumps::create(ArrayRef<std::string> Names,
                                      StringRef What, Sink Out) {
  StepDumps D;
  D.Wanted.assign(std::size(Steps), false);
  D.Out = std::move(Out);
  for (const std::string &Name : Names) {
    if (Name == "all") {
      D.Wanted.assign(std::size(Steps), true);
      continue;
    }
    if (const PipelineStep *S = findPipelineStep(Name)) {
      D.Wanted[static_cast<size_t>(S->Id)] = true;
      continue;
    }
    std::string Valid;
    for (const PipelineStep &S : Steps)
      Valid += std::string(Valid.empty() ? "" : ", ") + S.Name;
    return createStringError(std::make_error_code(std::errc::invalid_argument),
                             What + ": unknown step '" + Name +
                                 "'; the steps are: " + Valid +
                                 " (or all)");
  }
  return D;
}

PipelineStage StepDumps::lastStage() const {
  PipelineStage Last = Stage::Lower;
  for (const PipelineStep &S : Steps)
    if (wants(S.Id))
      Last = std::max(Last, S.Stage);
  return Last;
}

std::vector<const PipelineStep *> StepDumps::chosen() const {
  std::vector<const PipelineStep *> C;
  for (const PipelineStep &S : Steps)
    if (wants(S.Id))
      C.push_back(&S);
  return C;
}

void StepDumps::dump(PipelineStepId StepId,
                     function_ref<void(raw_ostream &)> Body) const {
  if (!wants(StepId))
    return;
  const PipelineStep &S = pipelineStep(StepId);
  // The header is a comment of the text that follows it.
  StringRef Comment = S.Output == Shows::KernelIR   ? "//"
                      : S.Output == Shows::Assembly ? "#"
                                                  : ";";
  StringRef What;
  switch (S.Output) {
  case Shows::KernelIR:
    What = S.Analysis ? "the kernel IR (an analysis: unchanged)"
                      : "the kernel IR";
    break;
  case Shows::LLVMIR:
    What = "LLVM IR";
    break;
  case Shows::Target:
    What = "the target";
    break;
  case Shows::Gate:
    What = "the passes left out of code generation";
    break;
  case Shows::Assembly:
    What = "assembly";
    break;
  }
  std::string Text;
  raw_string_ostream OS(Text);
  OS << Comment << " *** after step " << (static_cast<size_t>(StepId) + 1)
     << "/" << std::size(Steps) << " " << S.Name << ": " << What << " ***\n";
  Body(OS);
  Out(S, Text);
}
