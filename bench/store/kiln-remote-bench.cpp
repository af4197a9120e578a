//===- kiln-remote-bench.cpp - Remote hit against local hit and compile ---===//
//
// kiln-remote-bench FILE.kiln... --remote URL --remote-key FILE [--rounds N]
//
// For every kernel of the files: a first device with an empty store compiles
// it and publishes it to the remote tier; then, in each of N rounds, a fresh
// device with a fresh empty store loads every kernel (a remote hit: the
// fetch over the connection, the tag and entry checks, decompression, the
// local write and the JIT link), and another fresh device over that store
// loads them again (a local hit), interleaved kernel by kernel so that both
// see the same machine. Medians with the 10th-90th percentile spread, per
// kernel and over all. The first fetch of a device also opens its
// connection: reported separately. A benchmark, not a test: it fails (exit
// 1) only when a load is not served the way it should be.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"
#include "kiln/Runtime/Device.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

using namespace llvm;

namespace {

cl::OptionCategory Category("kiln-remote-bench options");
cl::list<std::string> Files(cl::Positional, cl::desc("<FILE.kiln>..."),
                            cl::OneOrMore, cl::cat(Category));
cl::opt<std::string> Url("remote", cl::desc("The Redis server"),
                         cl::value_desc("URL"), cl::Required, cl::cat(Category));
cl::opt<std::string> KeyFile("remote-key", cl::desc("The fleet key file"),
                             cl::value_desc("FILE"), cl::Required,
                             cl::cat(Category));
cl::opt<unsigned> Rounds("rounds", cl::desc("Fresh devices to measure (default 5)"),
                         cl::init(5), cl::cat(Category));

double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Start)
      .count();
}

double quantile(std::vector<double> V, double Q) {
  if (V.empty())
    return 0;
  std::sort(V.begin(), V.end());
  return V[std::min(V.size() - 1, size_t(Q * double(V.size())))];
}

struct Folder {
  SmallString<128> Path;
  Folder() { sys::fs::createUniqueDirectory("kiln-remote-bench", Path); }
  ~Folder() { sys::fs::remove_directories(Path); }
};

Expected<std::unique_ptr<kiln::RuntimeDevice>> makeDevice(StringRef Dir) {
  kiln::DeviceOptions Opts;
  Opts.StoreDir = Dir.str();
  Opts.StoreMode = kiln::DeviceStoreMode::ReadWrite;
  kiln::RemoteConfig R;
  R.Url = Url;
  R.KeyFile = KeyFile;
  Opts.Remote = R;
  Opts.WarningSink = [](StringRef W) { errs() << "warning: " << W << "\n"; };
  return kiln::RuntimeDevice::create(Opts);
}

int fail(const Twine &Why) {
  errs() << "kiln-remote-bench: FAIL: " << Why << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln remote tier benchmark: remote hit "
                              "against local hit and cold compile\n");
  std::vector<kiln::Module> Modules;
  for (const std::string &File : Files) {
    auto Buffer = MemoryBuffer::getFile(File, /*IsText=*/true);
    if (!Buffer)
      return fail(File + ": cannot read: " + Buffer.getError().message());
    auto M = kiln::parseModule((*Buffer)->getBuffer(), File);
    if (!M)
      return fail(toString(M.takeError()));
    if (Error E = kiln::verifyModule(*M, kiln::DeviceLimits{}))
      return fail(toString(std::move(E)));
    Modules.push_back(std::move(*M));
  }
  std::vector<const kiln::IRKernel *> Kernels;
  std::vector<std::string> Names;
  for (const kiln::Module &M : Modules)
    for (const kiln::IRKernel &K : M.Kernels) {
      Kernels.push_back(&K);
      Names.push_back("@" + K.Name);
    }

  // The publisher: compiles everything once. Destroying it publishes what
  // it queued.
  std::vector<double> ColdMs;
  {
    Folder F;
    auto Dev = makeDevice(F.Path);
    if (!Dev)
      return fail(toString(Dev.takeError()));
    std::vector<const kiln::IRKernel *> Distinct;
    std::vector<std::string> DistinctNames;
    for (size_t I = 0; I < Kernels.size(); ++I) {
      kiln::KernelStats S;
      auto Start = std::chrono::steady_clock::now();
      auto L = (*Dev)->getKernel(*Kernels[I], kiln::CpuVariant{}, &S);
      double Ms = msSince(Start);
      if (!L)
        return fail(toString(L.takeError()));
      if (S.Memoized)
        continue; // the same kernel in two files
      if (!S.Compiled)
        return fail(Names[I] + " was not compiled by the first device: is "
                               "the server empty? (FLUSHDB it)");
      Distinct.push_back(Kernels[I]);
      DistinctNames.push_back(Names[I]);
      ColdMs.push_back(Ms);
    }
    Kernels = std::move(Distinct);
    Names = std::move(DistinctNames);
  }

  std::vector<std::vector<double>> RemoteMs(Kernels.size()),
      LocalMs(Kernels.size());
  std::vector<double> FirstFetchMs;
  // Phases of the remote hits: the store read (fetch, checks, local write,
  // decompression) and the JIT link.
  std::vector<double> RemoteLookupMs, RemoteLinkMs, LocalLookupMs;
  for (unsigned R = 0; R < Rounds; ++R) {
    Folder F;
    auto Remote = makeDevice(F.Path);
    if (!Remote)
      return fail(toString(Remote.takeError()));
    for (size_t I = 0; I < Kernels.size(); ++I) {
      kiln::KernelStats S;
      auto Start = std::chrono::steady_clock::now();
      auto L = (*Remote)->getKernel(*Kernels[I], kiln::CpuVariant{}, &S);
      double Ms = msSince(Start);
      if (!L)
        return fail(toString(L.takeError()));
      if (!S.RemoteHit)
        return fail(Names[I] + " was not a remote hit");
      (I == 0 ? FirstFetchMs : RemoteMs[I]).push_back(Ms);
      if (I != 0) {
        RemoteLookupMs.push_back(S.LookupSeconds * 1e3);
        RemoteLinkMs.push_back(S.LinkSeconds * 1e3);
      }
      // The same kernel from the local store just written, on a fresh
      // device (nothing in memory), right after.
      auto Local = makeDevice(F.Path);
      if (!Local)
        return fail(toString(Local.takeError()));
      kiln::KernelStats LS;
      Start = std::chrono::steady_clock::now();
      auto LL = (*Local)->getKernel(*Kernels[I], kiln::CpuVariant{}, &LS);
      LocalMs[I].push_back(msSince(Start));
      if (!LL)
        return fail(toString(LL.takeError()));
      if (!LS.StoreHit || LS.RemoteHit)
        return fail(Names[I] + " was not a local hit");
      LocalLookupMs.push_back(LS.LookupSeconds * 1e3);
    }
  }

  outs() << "| kernel | cold compile (ms) | remote hit (ms, median [p10, "
            "p90]) | local hit (ms) | remote / local |\n"
            "| --- | --- | --- | --- | --- |\n";
  std::vector<double> AllRemote, AllLocal;
  for (size_t I = 1; I < Kernels.size(); ++I) {
    double Rm = quantile(RemoteMs[I], 0.5), Lm = quantile(LocalMs[I], 0.5);
    outs() << formatv("| {0} | {1:F2} | {2:F3} [{3:F3}, {4:F3}] | {5:F3} | "
                      "{6:F2}x |\n",
                      Names[I], ColdMs[I], Rm, quantile(RemoteMs[I], 0.1),
                      quantile(RemoteMs[I], 0.9), Lm, Rm / Lm);
    AllRemote.insert(AllRemote.end(), RemoteMs[I].begin(), RemoteMs[I].end());
    AllLocal.insert(AllLocal.end(), LocalMs[I].begin(), LocalMs[I].end());
  }
  outs() << formatv("\nfirst kernel of a device (opens the connection): "
                    "median {0:F3} ms\n",
                    quantile(FirstFetchMs, 0.5));
  outs() << formatv("{0} kernels x {1} rounds: remote hit median {2:F3} ms "
                    "[p10 {3:F3}, p90 {4:F3}], local hit median {5:F3} ms, "
                    "cold compile median {6:F2} ms\n",
                    Kernels.size() - 1, unsigned(Rounds),
                    quantile(AllRemote, 0.5), quantile(AllRemote, 0.1),
                    quantile(AllRemote, 0.9), quantile(AllLocal, 0.5),
                    quantile(ColdMs, 0.5));
  outs() << formatv("phases (medians): remote hit: store read {0:F3} ms "
                    "(fetch, tag, checks, decompression, local write), link "
                    "{1:F3} ms; local hit: store read {2:F3} ms\n",
                    quantile(RemoteLookupMs, 0.5), quantile(RemoteLinkMs, 0.5),
                    quantile(LocalLookupMs, 0.5));
  outs() << formatv("RESULT remote hit_ms_median {0:F4}\n",
                    quantile(AllRemote, 0.5));
  outs() << formatv("RESULT remote local_hit_ms_median {0:F4}\n",
                    quantile(AllLocal, 0.5));
  return 0;
}
