//===- kiln-batch-bench.cpp - Batch compilation against thread count ------===//
//
// kiln-batch-bench [--kernels N] [--threads 1,2,4,...] [--reps R]
//
// Generates N distinct kernels (element-wise kernels with different
// constants and operations, per-cube tree reductions with barriers, and
// 16x16 tile products: small, medium and large compile costs), then, for
// each thread count T, compiles the whole batch R times through a fresh
// Device with no store (so nothing is served from memory or disk) and reports
// the median wall time and the speed-up over the first thread count. Prints
// `RESULT batch <threads> ms <median>` lines and a table. A benchmark, not a
// test: it asserts nothing about time, only that every kernel compiled.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"
#include "kiln/Runtime/Device.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace llvm;

namespace {

cl::OptionCategory Category("kiln-batch-bench options");

cl::opt<unsigned> KernelCount("kernels", cl::desc("Distinct kernels (>= 3)"),
                              cl::init(96), cl::cat(Category));
cl::opt<std::string> ThreadList("threads",
                                cl::desc("Comma-separated thread counts"),
                                cl::init("1,2"), cl::cat(Category));
cl::opt<unsigned> Reps("reps", cl::desc("Repetitions per thread count"),
                       cl::init(3), cl::cat(Category));
cl::opt<bool> Phases("phases",
                     cl::desc("Also print the mean time of each compile phase "
                              "per kind of kernel (last repetition)"),
                     cl::cat(Category));

/// An element-wise kernel whose body depends on \p I.
std::string elementwise(unsigned I) {
  static const char *Ops[] = {"add", "mul", "sub", "max", "min"};
  return formatv(R"(kernel @ew{0} cube_dim(256) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                           %c: buffer<f32, write>, %n: u32) {{
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {{
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = {1} %x, %y : f32
    %t = fma %s, {2}.0:f32, %y : f32
    store %c[%i], %t
  }
}
)",
                 I, Ops[I % 5], I + 1)
      .str();
}

/// A per-cube tree reduction with barriers in a uniform loop.
std::string reduction(unsigned I) {
  return formatv(R"(kernel @red{0} cube_dim(256) (%in: buffer<f32, read>, %out: buffer<f32, write>) {{
  %tile = shared f32[256]
  %u = unit_pos : u32
  %i = absolute_pos : u32
  %v = load %in[%i] : f32
  %w = mul %v, {1}.0:f32 : f32
  store %tile[%u], %w
  sync_cube
  for %k = 0:u32 to 8:u32 {{
    %s = shr 128:u32, %k : u32
    %act = lt %u, %s : bool
    if %act {{
      %j = add %u, %s : u32
      %p = load %tile[%u] : f32
      %q = load %tile[%j] : f32
      %r = add %p, %q : f32
      store %tile[%u], %r
    }
    sync_cube
  }
  %first = eq %u, 0:u32 : bool
  if %first {{
    %t = load %tile[0] : f32
    %cp = cube_pos : u32
    store %out[%cp], %t
  }
}
)",
                 I, I + 2)
      .str();
}

/// A 16x16 tile product with two barriers per tile step.
std::string tileProduct(unsigned I) {
  return formatv(R"(kernel @mm{0} cube_dim(16, 16) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                                 %c: buffer<f32, write>, %n: u32) {{
  %ta = shared f32[256]
  %tb = shared f32[256]
  %tx = unit_pos.x : u32
  %ty = unit_pos.y : u32
  %col = absolute_pos.x : u32
  %row = absolute_pos.y : u32
  %acc = var f32
  set %acc, {1}.0:f32
  %sr = mul %ty, 16:u32 : u32
  %slot = add %sr, %tx : u32
  %tiles = div %n, 16:u32 : u32
  for %t = 0:u32 to %tiles {{
    %t16 = mul %t, 16:u32 : u32
    %ar = mul %row, %n : u32
    %ac = add %t16, %tx : u32
    %ai = add %ar, %ac : u32
    %av = load %a[%ai] : f32
    store %ta[%slot], %av
    %br = add %t16, %ty : u32
    %brn = mul %br, %n : u32
    %bi = add %brn, %col : u32
    %bv = load %b[%bi] : f32
    store %tb[%slot], %bv
    sync_cube
    for %k = 0:u32 to 16:u32 {{
      %ak = add %sr, %k : u32
      %x = load %ta[%ak] : f32
      %k16 = mul %k, 16:u32 : u32
      %bk = add %k16, %tx : u32
      %y = load %tb[%bk] : f32
      %cur = get %acc : f32
      %nx = fma %x, %y, %cur : f32
      set %acc, %nx
    }
    sync_cube
  }
  %cr = mul %row, %n : u32
  %ci = add %cr, %col : u32
  %res = get %acc : f32
  store %c[%ci], %res
}
)",
                 I, I)
      .str();
}

/// Mean verify/lower/optimise/codegen/link milliseconds per kind of kernel
/// (the name's letters before its number).
void printPhases(const std::vector<kiln::KernelRequest> &Requests,
                 const std::vector<kiln::KernelStats> &Stats) {
  for (StringRef Kind : {"ew", "red", "mm"}) {
    double Sum[5] = {0, 0, 0, 0, 0};
    unsigned Count = 0;
    for (size_t I = 0; I < Requests.size() && I < Stats.size(); ++I) {
      StringRef Name = Requests[I].K->Name;
      if (Name.rtrim("0123456789") != Kind)
        continue;
      const kiln::KernelStats &S = Stats[I];
      double Phase[5] = {S.VerifySeconds, S.LowerSeconds, S.OptimizeSeconds,
                         S.CodegenSeconds, S.LinkSeconds};
      for (int P = 0; P < 5; ++P)
        Sum[P] += Phase[P] * 1e3;
      ++Count;
    }
    if (Count)
      outs() << formatv("  {0,-4} verify {1:F2} lower {2:F2} optimise {3:F2} "
                        "codegen {4:F2} link {5:F2} (ms, mean of {6})\n",
                        Kind, Sum[0] / Count, Sum[1] / Count, Sum[2] / Count,
                        Sum[3] / Count, Sum[4] / Count, Count);
  }
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(argc, argv, "Kiln batch compilation benchmark\n");
  if (KernelCount < 3 || Reps == 0) {
    errs() << "kiln-batch-bench: error: need --kernels >= 3 and --reps >= 1\n";
    return 1;
  }
  std::vector<unsigned> Threads;
  for (StringRef Part : split(ThreadList, ',')) {
    unsigned T;
    if (Part.trim().getAsInteger(10, T) || T == 0) {
      errs() << "kiln-batch-bench: error: bad thread count '" << Part << "'\n";
      return 1;
    }
    Threads.push_back(T);
  }

  std::string Text;
  for (unsigned I = 0; I < KernelCount; ++I)
    Text += I % 3 == 0 ? elementwise(I) : I % 3 == 1 ? reduction(I)
                                                     : tileProduct(I);
  Expected<kiln::Module> M = kiln::parseModule(Text, "<batch>");
  if (!M) {
    errs() << toString(M.takeError()) << "\n";
    return 1;
  }
  if (Error E = kiln::verifyModule(*M, kiln::DeviceLimits{})) {
    errs() << toString(std::move(E)) << "\n";
    return 1;
  }
  std::vector<kiln::KernelRequest> Requests;
  for (const kiln::IRKernel &K : M->Kernels) {
    kiln::KernelRequest R;
    R.K = &K;
    R.FileName = "<batch>";
    Requests.push_back(std::move(R));
  }

  outs() << "kiln-batch-bench: " << Requests.size() << " distinct kernels, "
         << std::thread::hardware_concurrency() << " hardware threads\n";
  std::vector<double> Medians;
  for (unsigned T : Threads) {
    std::vector<double> Times;
    for (unsigned Rep = 0; Rep < Reps; ++Rep) {
      kiln::DeviceOptions Opts;
      Opts.StoreMode = kiln::DeviceStoreMode::Off;
      Opts.BatchThreads = T;
      auto Dev = kiln::RuntimeDevice::create(Opts);
      if (!Dev) {
        errs() << "kiln-batch-bench: error: " << toString(Dev.takeError())
               << "\n";
        return 1;
      }
      kiln::KernelBatchOptions BO;
      BO.Threads = T;
      auto Start = std::chrono::steady_clock::now();
      std::vector<kiln::KernelStats> Stats;
      auto Results = (*Dev)->getKernels(Requests, BO, &Stats);
      double Ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - Start)
                      .count();
      for (auto &R : Results)
        if (!R) {
          errs() << "kiln-batch-bench: FAIL: " << toString(R.takeError())
                 << "\n";
          return 1;
        }
      Times.push_back(Ms);
      if (Phases && Rep + 1 == Reps)
        printPhases(Requests, Stats);
    }
    double Med = median(Times);
    Medians.push_back(Med);
    outs() << formatv("RESULT batch {0} ms {1:F1}\n", T, Med);
  }
  outs() << "\n| threads | batch of " << Requests.size()
         << " (ms, median) | per kernel (ms) | speed-up |\n| --- | --- | --- | --- |\n";
  for (size_t I = 0; I < Threads.size(); ++I)
    outs() << formatv("| {0} | {1:F1} | {2:F2} | {3:F2}x |\n", Threads[I],
                      Medians[I], Medians[I] / Requests.size(),
                      Medians[0] / Medians[I]);
  return 0;
}
