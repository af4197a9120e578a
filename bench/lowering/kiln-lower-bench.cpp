//===- kiln-lower-bench.cpp - The lowering's time per kernel and operation ===//
//
// kiln-lower-bench [FILE.kiln...] [--generate N,...] [--reps R]
//
// Times lowerKernel (Kiln IR to a verified LLVM module, nothing optimised)
// for every kernel of the files and for generated straight-line kernels of
// N operations: the first lowering in the process, then the median, the
// quartiles and the minimum of R more, each into a fresh LLVMContext (as a
// compilation does; making the context is not timed), and the median per
// operation. A benchmark, not a test: no timing is asserted.
//
//===----------------------------------------------------------------------===//

#include "kiln/CPU/Lowering.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

using namespace llvm;

namespace {

cl::OptionCategory Category("kiln-lower-bench options");
cl::list<std::string> Files(cl::Positional, cl::desc("<FILE.kiln>..."),
                            cl::cat(Category));
cl::list<unsigned> Generate(
    "generate",
    cl::desc("Also time generated straight-line kernels of N operations"),
    cl::value_desc("N,..."), cl::CommaSeparated, cl::cat(Category));
cl::opt<unsigned> Reps("reps", cl::desc("Timed lowerings per kernel"),
                       cl::init(21), cl::cat(Category));

cl::opt<bool> Wall("wall",
                   cl::desc("Time with the wall clock instead of the "
                            "thread's CPU time"),
                   cl::cat(Category));

/// Operations in \p B, nested regions included.
size_t countOps(const kiln::Block &B) {
  size_t N = 0;
  for (const kiln::Operation &Op : B.Ops) {
    ++N;
    for (const kiln::Block &R : Op.Regions)
      N += countOps(R);
  }
  return N;
}

/// A kernel of about \p N element-wise operations on two loaded values,
/// each using the two before it, ending in one store.
std::string generatedKernel(unsigned N) {
  static const char *Ops[] = {"add", "mul", "sub", "max", "min"};
  std::string S = "kernel @chain" + std::to_string(N) +
                  " cube_dim(256) (%x: buffer<f32, read>, "
                  "%o: buffer<f32, write>) {\n"
                  "  %i = absolute_pos : u32\n"
                  "  %v0 = load %x[%i] : f32\n"
                  "  %v1 = add %v0, 1.0:f32 : f32\n";
  for (unsigned I = 2; I + 3 < N; ++I)
    S += "  %v" + std::to_string(I) + " = " + Ops[I % 5] + " %v" +
         std::to_string(I - 1) + ", %v" + std::to_string(I - 2) + " : f32\n";
  S += "  store %o[%i], %v" + std::to_string(N > 5 ? N - 4 : 1) + "\n}\n";
  return S;
}

double msOf(std::chrono::steady_clock::duration D) {
  return std::chrono::duration<double, std::milli>(D).count();
}

/// The calling thread's CPU time in milliseconds: on a loaded machine the
/// wall clock also counts the time other processes ran.
double threadCpuMs() {
  timespec T;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return T.tv_sec * 1e3 + T.tv_nsec / 1e6;
}

/// Lowers \p K once into a fresh context; the milliseconds it took (the
/// thread's CPU time, or the wall clock with --wall).
Expected<double> lowerOnce(const kiln::IRKernel &K) {
  LLVMContext Ctx;
  auto Start = std::chrono::steady_clock::now();
  double Cpu = threadCpuMs();
  Expected<kiln::LoweredModule> M =
      kiln::lowerKernel(K, kiln::CpuVariant{}, kiln::DeviceLimits{}, Ctx);
  double Ms = Wall ? msOf(std::chrono::steady_clock::now() - Start)
                   : threadCpuMs() - Cpu;
  if (!M)
    return M.takeError();
  return Ms;
}

bool report(const std::string &Name, const kiln::IRKernel &K) {
  size_t Ops = countOps(K.Body);
  Expected<double> First = lowerOnce(K);
  if (!First) {
    errs() << Name << ": error: " << toString(First.takeError()) << "\n";
    return false;
  }
  std::vector<double> T;
  for (unsigned R = 0; R < std::max(1u, unsigned(Reps)); ++R) {
    Expected<double> Ms = lowerOnce(K);
    if (!Ms) {
      errs() << Name << ": error: " << toString(Ms.takeError()) << "\n";
      return false;
    }
    T.push_back(*Ms);
  }
  std::sort(T.begin(), T.end());
  double Median = T[T.size() / 2];
  outs() << format("%-44s %6zu ops  first %8.3f ms  median %8.3f ms "
                   "[q1 %.3f q3 %.3f min %.3f]  %6.2f us/op\n",
                   Name.c_str(), Ops, *First, Median, T[T.size() / 4],
                   T[T.size() * 3 / 4], T.front(), 1000 * Median / Ops);
  return true;
}

bool runSource(const std::string &Name, StringRef Text) {
  auto M = kiln::parseModule(Text, Name);
  if (!M) {
    errs() << toString(M.takeError()) << "\n";
    return false;
  }
  if (Error E = kiln::verifyModule(*M, kiln::DeviceLimits{})) {
    errs() << toString(std::move(E)) << "\n";
    return false;
  }
  bool Ok = true;
  for (const kiln::IRKernel &K : M->Kernels)
    Ok &= report(Name + ":@" + K.Name, K);
  return Ok;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln lowering benchmark: Kiln IR to LLVM IR "
                              "per kernel and per operation\n");
  bool Ok = true;
  for (const std::string &File : Files) {
    auto Buffer = MemoryBuffer::getFile(File, /*IsText=*/true);
    if (!Buffer) {
      errs() << File << ": error: cannot read file: "
             << Buffer.getError().message() << "\n";
      return 1;
    }
    Ok &= runSource(File, (*Buffer)->getBuffer());
  }
  for (unsigned N : Generate)
    Ok &= runSource("generated-" + std::to_string(N), generatedKernel(N));
  return Ok ? 0 : 1;
}
