//===- Pipeline.h - Every step from Kiln IR to object code ------*- C++ -*-===//
//
// The CPU backend's pipeline as data: one table of named steps, in the
// order they run, each with the one-line reason it is there. The drivers
// (lowerKernel, createTargetMachine, optimizeModule, emitObject and
// emitAssembly) run the steps of their stage by walking this table, so the
// order printed (`kiln-compile --print-pipeline`, docs/Lowering.md's table)
// is the order run. StepDumps prints the IR after named steps
// (`kiln-compile --print-after=STEP`, KILN_DUMP_AFTER).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CPU_PIPELINE_H
#define KILN_CPU_PIPELINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln {

/// The drivers, in the order a compilation calls them.
enum class PipelineStage {
  Lower,    ///< lowerKernel: Kiln IR to the cube function
  Target,   ///< createTargetMachine: the CPU and features code is for
  Optimize, ///< optimizeModule: Kiln's module steps and LLVM's pipeline
  CodeGen,  ///< emitObject / emitAssembly: machine code
};

/// Where inside LLVM's optimisation pipeline a Kiln pass hooks in.
enum class ExtensionPoint {
  None,            ///< a step of its own, not inside LLVM's pipeline
  VectorizerStart, ///< PassBuilder::registerVectorizerStartEPCallback
  OptimizerLast,   ///< PassBuilder::registerOptimizerLastEPCallback
};

enum class PipelineStepId {
  ExpandUniformLoads,
  ForwardVars,
  Uniformity,
  Segmentation,
  Liveness,
  ScratchLayout,
  AtomicPrivatization,
  Emission,
  LoopVersioning,
  TargetMachine,
  InlineExp,
  SerialProductScans,
  ScalarFallbackLoops,
  LLVMPipeline,
  UnitLoopSwitches,
  StreamingUnroll,
  UnitLoopWidth,
  JamUnitLoops,
  BlendScratchStores,
  ExpandBlockCopies,
  UniformGathers,
  SignallingNaNMinMax,
  CodeGenGate,
  LLVMCodeGen,
};

/// What a dump after the step shows.
enum class StepOutput {
  KernelIR, ///< the kernel's IR (docs/LangRef.md §8)
  LLVMIR,   ///< the LLVM module
  Target,   ///< the triple, CPU and features code is generated for
  Gate,     ///< the code generation passes left out, and where
  Assembly, ///< the assembly code generation produced
};

struct PipelineStep {
  PipelineStepId Id;
  /// The name --print-after and KILN_DUMP_AFTER take.
  const char *Name;
  PipelineStage Stage;
  /// Not None: a pass inside the llvm-pipeline step, at this point.
  ExtensionPoint Hook;
  /// The step runs from this optimisation level on (-O0..-O3).
  unsigned MinOptLevel;
  /// An analysis: the IR after it is the IR before it.
  bool Analysis;
  StepOutput Output;
  /// Where it is implemented (a header of lib/CPU, or a driver's file).
  const char *Where;
  /// Why the step is there, in one line.
  const char *Reason;
};

/// Every step from Kiln IR to object code, in the order they run.
llvm::ArrayRef<PipelineStep> cpuPipeline();

/// The step named \p Name, or null.
const PipelineStep *findPipelineStep(llvm::StringRef Name);

/// The step \p Id (every id has one).
const PipelineStep &pipelineStep(PipelineStepId Id);

/// The name of \p Stage ("lower", "target", "optimize", "codegen").
llvm::StringRef stageName(PipelineStage Stage);

/// The name of \p Hook ("vectorizer-start", "optimizer-last"; "" for None).
llvm::StringRef extensionPointName(ExtensionPoint Hook);

/// The table as text, one step a line: number, name (a pass inside LLVM's
/// pipeline indented, with its extension point), stage, lowest -O level
/// and reason.
void printPipeline(llvm::raw_ostream &OS);

/// Dumps the IR after chosen steps: each driver given one calls dump()
/// after every step it runs, and the text (a header line naming the step,
/// then the IR) goes to the sink for the steps chosen.
class StepDumps {
public:
  using Sink = std::function<void(const PipelineStep &, llvm::StringRef)>;

  /// Dumps after the steps named in \p Names, each a step's name or "all"
  /// (every step). An unknown name is an error that lists the names; \p What
  /// ("--print-after") starts it.
  static llvm::Expected<StepDumps> create(llvm::ArrayRef<std::string> Names,
                                          llvm::StringRef What, Sink Out);

  bool wants(PipelineStepId Id) const {
    return Wanted[static_cast<size_t>(Id)];
  }
  /// The last stage a chosen step belongs to.
  PipelineStage lastStage() const;
  /// The chosen steps, in pipeline order.
  std::vector<const PipelineStep *> chosen() const;

  /// When \p Id is chosen, gives the sink its header line and what \p Body
  /// writes.
  void dump(PipelineStepId Id,
            llvm::function_ref<void(llvm::raw_ostream &)> Body) const;

private:
  std::vector<bool> Wanted;
  Sink Out;
};

} // namespace kiln

#endif // KILN_CPU_PIPELINE_H
