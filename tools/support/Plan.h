//===- Plan.h - Multi-launch plans for kiln-run -----------------*- C++ -*-===//
//
// Part of the tools' support library (KilnToolSupport), not of libkiln.a.
//
// A plan is a text file that kiln-run runs with --plan: a sequence of
// launches of kernels from .kiln files on shared buffers, with host loops
// and integer host variables, host writes of single elements and loops on
// a flag element, and the host side of a runtime: several devices and
// streams, events, copies, indirect launches, read-backs and all-reduce
// (docs/Tools.md §3.6, §3.7):
//
//   kernel step = stencil.kiln:jacobi
//   buffer a = f32[1024]:iota
//   buffer b = f32[1024]:zeros
//   let n = 1024
//   for t = 0 to 10 {
//     launch step cubes=(n + 255) / 256 in=a out=b n=n
//     swap a b
//   }
//
// Plan::parse reads the text and resolves every name; the caller loads the
// kernels (Plan::kernels) and hands their parameters to Plan::bind, which
// checks every launch statement's bindings. Plan::run then executes the
// plan, calling back for each launch; Plan::check, a run that launches
// nothing, creates the buffers and checks every value the plan computes
// before anything runs. Every error is located:
// "PLAN:LINE:COL: error: MESSAGE".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_SUPPORT_PLAN_H
#define KILN_TOOLS_SUPPORT_PLAN_H

#include "support/ArgSpec.h"

#include "kiln/IR/Operation.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// The most statements (each loop iteration counted too) one run of a plan
/// may execute: beyond it the plan is refused as a runaway loop.
constexpr uint64_t MaxPlanSteps = 100'000'000;

/// A `kernel NAME = PATH[:KERNEL]` statement.
struct PlanKernel {
  std::string Name;   ///< the plan's name for it
  std::string Path;   ///< as written
  std::string File;   ///< Path resolved against the plan's folder
  std::string Kernel; ///< the kernel's name in File, without '@'
  SourceLoc Loc;      ///< of the statement
  SourceLoc PathLoc;  ///< of PATH
};

/// One launch as Plan::run hands it to its callback.
struct PlanLaunch {
  unsigned Statement; ///< index of the launch statement (launchLoc)
  unsigned Kernel;    ///< index into Plan::kernels()
  std::array<uint32_t, 3> CubeCount;
  llvm::ArrayRef<ArgBinding> Args; ///< one per parameter, in order
  /// The plan's device it runs on (launchDevice(Statement)).
  unsigned Device = 0;
};

/// A `read` of the plan's last runs: the buffer's name as the statement
/// wrote it, and what it held when its stream reached the statement.
struct PlanRead {
  std::string Name;
  const HostBuffer *Contents = nullptr;
};

class Plan {
public:
  /// Parses \p Text, the contents of the plan file \p Path ("<stdin>" for
  /// standard input, whose relative paths are then taken from the working
  /// folder), and resolves every name in it.
  static llvm::Expected<Plan> parse(llvm::StringRef Text, llvm::StringRef Path);

  Plan(Plan &&);
  Plan &operator=(Plan &&);
  ~Plan();

  /// The plan's file name, as diagnostics show it.
  llvm::StringRef fileName() const;
  const std::vector<PlanKernel> &kernels() const;

  /// Checks every launch statement against the parameters of the kernels
  /// (\p Params[i] for kernels()[i]): each parameter bound exactly once, a
  /// buffer of the parameter's element type (and binding form) to a buffer
  /// parameter, a value that fits to a value parameter.
  llvm::Error bind(llvm::ArrayRef<std::vector<ParamMetadata>> Params);

  /// Runs the plan once. The first run creates the buffers (reading their
  /// files), later runs keep them and their contents; every run starts with
  /// each buffer name naming its own buffer (`swap` exchanges them) and
  /// fresh variables. \p Launch is called for each launch; its error ends
  /// the run (return a located one with launchError()). Launches on the
  /// plan's own stream call it on this thread; those on a `stream` of the
  /// plan, on that stream's thread, at the same time as others. The run
  /// returns once every stream has run its work.
  llvm::Error run(llvm::function_ref<llvm::Error(const PlanLaunch &)> Launch);

  /// The check run: the plan run once without launching, creating the
  /// buffers and evaluating every value; `set` writes nothing and a `while`
  /// body runs once (its flag is not read). Call it before run().
  llvm::Error check();

  /// The number of launch statements and the location of each.
  unsigned launchCount() const;
  SourceLoc launchLoc(unsigned Statement) const;
  /// The plan's name of launch statement \p Statement's kernel.
  llvm::StringRef launchKernelName(unsigned Statement) const;
  /// \p Message located at launch statement \p Statement.
  llvm::Error launchError(unsigned Statement, const llvm::Twine &Message) const;

  /// The plan's devices: the first, which kiln-run always has, and one per
  /// `device` statement; and the device launch statement \p Statement runs
  /// on (that of its stream), and its kernel (an index into kernels()).
  unsigned deviceCount() const;
  unsigned launchDevice(unsigned Statement) const;
  unsigned launchKernel(unsigned Statement) const;
  /// The `read` statements' read-backs of every run so far, in the order
  /// the statements ran.
  std::vector<PlanRead> reads() const;

  /// Whether \p Name is a buffer of the plan.
  bool hasBuffer(llvm::StringRef Name) const;
  /// The buffer that \p Name names after the last run (after its swaps);
  /// null before the first run or for a name that is not a buffer.
  const HostBuffer *buffer(llvm::StringRef Name) const;

private:
  struct Impl;
  explicit Plan(std::unique_ptr<Impl> P);
  std::unique_ptr<Impl> P;
};

} // namespace kiln

#endif // KILN_TOOLS_SUPPORT_PLAN_H
