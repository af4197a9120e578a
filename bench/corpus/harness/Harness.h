//===- Harness.h - kiln-corpus's systems: Kiln, OpenCL, native -----------===//
//
// What main.cpp sees of the three systems. A System is made once per process
// (Kiln's device, the OpenCL platform and context, the OpenMP thread count);
// it opens one backend per benchmark (Kiln loads the benchmark's kernels
// there, OpenCL builds its program). Backends report errors by throwing
// BackendError: the harness counts the benchmark as failed on that system and
// goes on with the others.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BENCH_CORPUS_HARNESS_HARNESS_H
#define KILN_BENCH_CORPUS_HARNESS_HARNESS_H

#include "Corpus.h"

#include <memory>
#include <stdexcept>
#include <string>

namespace corpus {

/// What went wrong in a backend: a kernel that does not compile, a launch
/// the kernel refuses, a missing native kernel.
struct BackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A backend the harness can reuse across repetitions.
class SystemBackend : public Backend {
public:
  /// Frees every buffer made so far (before the next Instance::setup makes
  /// them again). Waits for the work in flight first.
  virtual void releaseBuffers() = 0;
};

/// The settings shared by the systems.
struct Options {
  std::string CorpusDir;     // the folder of the benchmark folders
  unsigned Threads = 1;      // the same for every system
  std::string MAttr;         // Kiln's target features (--mattr)
  bool BoundsChecked = true; // Kiln's checked or unchecked variant
};

/// A system of the corpus: makes one backend per benchmark.
class System {
public:
  virtual ~System() = default;
  virtual const char *name() const = 0;
  /// One line on what runs the benchmarks (a version, the settings).
  virtual std::string describe() const = 0;
  /// A backend for benchmark Bench (its folder's name); throws BackendError.
  virtual std::unique_ptr<SystemBackend> open(const std::string &Bench) = 0;
};

/// The systems; each throws BackendError when it cannot start.
std::unique_ptr<System> makeKilnSystem(const Options &O);
std::unique_ptr<System> makeNativeSystem(const Options &O);
/// Whether this build has the OpenCL system.
bool haveOpenCL();
std::unique_ptr<System> makeOpenCLSystem(const Options &O);

/// The text of a file; throws BackendError when it cannot be read.
std::string readFile(const std::string &Path);

} // namespace corpus

#endif // KILN_BENCH_CORPUS_HARNESS_HARNESS_H
