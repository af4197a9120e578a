//===- kiln-store-bench.cpp - Cold compile against warm load per kernel ---===//
//
// kiln-store-bench FILE.kiln... [--store DIR] [--also-opt-level N]
//
// For every kernel of the files (the conformance kernels, say): the time to
// compile it and keep it in a fresh store (a device with nothing in memory),
// then the time for a second, fresh device to load it from that store, and
// the bytes the store holds against the bytes before compression. Fails
// (exit 1) if the second device compiles anything. With --also-opt-level,
// a third device without a store then compiles every kernel at -ON (after
// the others: the process's first compilation is the -O3 device's). A
// benchmark, not a test: no timing is asserted.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Store/EntryFormat.h"
#include "kiln/Store/StoreScan.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

using namespace llvm;

namespace {

cl::OptionCategory Category("kiln-store-bench options");
cl::list<std::string> Files(cl::Positional, cl::desc("<FILE.kiln>..."),
                            cl::OneOrMore, cl::cat(Category));
cl::opt<std::string> StoreDir(
    "store", cl::desc("Store folder to use (default: a fresh temporary one)"),
    cl::value_desc("DIR"), cl::cat(Category));

cl::opt<int> AlsoOptLevel(
    "also-opt-level",
    cl::desc("Also compile every kernel cold at this level (0..3) on a "
             "device without a store, for comparison"),
    cl::value_desc("N"), cl::init(-1), cl::cat(Category));

double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Start)
      .count();
}

Expected<std::unique_ptr<kiln::RuntimeDevice>> makeDevice(StringRef Dir) {
  kiln::DeviceOptions Opts;
  Opts.StoreDir = Dir.str();
  Opts.StoreMode = kiln::DeviceStoreMode::ReadWrite;
  return kiln::RuntimeDevice::create(Opts);
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln store benchmark: cold compile against "
                              "warm load per kernel\n");
  std::vector<kiln::Module> Modules;
  for (const std::string &File : Files) {
    auto Buffer = MemoryBuffer::getFile(File, /*IsText=*/true);
    if (!Buffer) {
      errs() << File << ": error: cannot read file: "
             << Buffer.getError().message() << "\n";
      return 1;
    }
    auto M = kiln::parseModule((*Buffer)->getBuffer(), File);
    if (!M) {
      errs() << toString(M.takeError()) << "\n";
      return 1;
    }
    if (Error E = kiln::verifyModule(*M, kiln::DeviceLimits{})) {
      errs() << toString(std::move(E)) << "\n";
      return 1;
    }
    Modules.push_back(std::move(*M));
  }

  SmallString<128> Dir(StoreDir);
  if (Dir.empty()) {
    if (std::error_code EC =
            sys::fs::createUniqueDirectory("kiln-store-bench", Dir)) {
      errs() << "kiln-store-bench: error: cannot create a store folder: "
             << EC.message() << "\n";
      return 1;
    }
  }

  auto Cold = makeDevice(Dir);
  if (!Cold) {
    errs() << "kiln-store-bench: error: " << toString(Cold.takeError()) << "\n";
    return 1;
  }
  struct Row {
    std::string Name;
    double ColdMs = 0, WarmMs = 0, OtherLevelMs = 0;
  };
  std::vector<Row> Rows;
  for (const kiln::Module &M : Modules)
    for (const kiln::IRKernel &K : M.Kernels) {
      auto Start = std::chrono::steady_clock::now();
      auto Loaded = (*Cold)->getKernel(K);
      double Ms = msSince(Start);
      if (!Loaded) {
        errs() << "kiln-store-bench: FAIL: " << toString(Loaded.takeError())
               << "\n";
        return 1;
      }
      Rows.push_back({M.FileName + ":@" + K.Name, Ms, 0});
    }

  // A second device: nothing in memory, everything in the store.
  auto Warm = makeDevice(Dir);
  if (!Warm) {
    errs() << "kiln-store-bench: error: " << toString(Warm.takeError()) << "\n";
    return 1;
  }
  size_t RowIndex = 0, Compiled = 0;
  for (const kiln::Module &M : Modules)
    for (const kiln::IRKernel &K : M.Kernels) {
      kiln::KernelStats Stats;
      auto Start = std::chrono::steady_clock::now();
      auto Loaded = (*Warm)->getKernel(K, kiln::CpuVariant{}, &Stats);
      Rows[RowIndex++].WarmMs = msSince(Start);
      if (!Loaded) {
        errs() << "kiln-store-bench: FAIL: " << toString(Loaded.takeError())
               << "\n";
        return 1;
      }
      Compiled += Stats.Compiled;
    }

  // The same kernels compiled cold at another level, on a device that
  // keeps nothing: what a shorter pipeline costs for the same first result.
  if (AlsoOptLevel >= 0) {
    kiln::DeviceOptions Opts;
    Opts.StoreMode = kiln::DeviceStoreMode::Off;
    Opts.OptLevel = static_cast<unsigned>(AlsoOptLevel);
    auto Other = kiln::RuntimeDevice::create(Opts);
    if (!Other) {
      errs() << "kiln-store-bench: error: " << toString(Other.takeError())
             << "\n";
      return 1;
    }
    RowIndex = 0;
    for (const kiln::Module &M : Modules)
      for (const kiln::IRKernel &K : M.Kernels) {
        auto Start = std::chrono::steady_clock::now();
        auto Loaded = (*Other)->getKernel(K);
        Rows[RowIndex++].OtherLevelMs = msSince(Start);
        if (!Loaded) {
          errs() << "kiln-store-bench: FAIL: " << toString(Loaded.takeError())
                 << "\n";
          return 1;
        }
      }
  }

  uint64_t Stored = 0, Uncompressed = 0, Entries = 0;
  for (const kiln::NamespaceDir &NS : kiln::scanStore(Dir))
    for (const kiln::EntryFile &E : NS.Entries) {
      auto Bytes = MemoryBuffer::getFile(E.Path, /*IsText=*/false);
      if (!Bytes)
        continue;
      auto Header = kiln::parseEntryHeader(ArrayRef<uint8_t>(
          reinterpret_cast<const uint8_t *>((*Bytes)->getBufferStart()),
          (*Bytes)->getBufferSize()));
      if (!Header) {
        consumeError(Header.takeError());
        continue;
      }
      Stored += E.Size;
      Uncompressed += Header->UncompressedSize;
      ++Entries;
    }

  bool Other = AlsoOptLevel >= 0;
  outs() << "| kernel | cold compile (ms) | warm load (ms) | cold / warm |";
  if (Other)
    outs() << formatv(" cold compile -O{0} (ms) |", int(AlsoOptLevel));
  outs() << "\n| --- | --- | --- | --- |" << (Other ? " --- |" : "") << "\n";
  std::vector<double> ColdAll, WarmAll, OtherAll;
  for (const Row &R : Rows) {
    outs() << formatv("| {0} | {1:F2} | {2:F3} | {3:F0}x |", R.Name,
                      R.ColdMs, R.WarmMs, R.ColdMs / R.WarmMs);
    if (Other)
      outs() << formatv(" {0:F2} |", R.OtherLevelMs);
    outs() << "\n";
    ColdAll.push_back(R.ColdMs);
    WarmAll.push_back(R.WarmMs);
    OtherAll.push_back(R.OtherLevelMs);
  }
  if (Other)
    outs() << formatv("RESULT store cold_compile_O{0}_ms_median {1:F3}\n",
                      int(AlsoOptLevel), median(OtherAll));
  outs() << formatv("\n{0} kernels: median cold compile {1:F2} ms, median "
                    "warm load {2:F3} ms\n",
                    Rows.size(), median(ColdAll), median(WarmAll));
  outs() << formatv("RESULT store cold_compile_ms_median {0:F3}\n",
                    median(ColdAll));
  outs() << formatv("RESULT store warm_load_ms_median {0:F4}\n",
                    median(WarmAll));
  outs() << formatv("store: {0} entries, {1} bytes on disk, {2} bytes before "
                    "compression (ratio {3:F2})\n",
                    Entries, Stored, Uncompressed,
                    Stored ? double(Uncompressed) / Stored : 0.0);
  if (Compiled) {
    errs() << "kiln-store-bench: FAIL: the warm device compiled " << Compiled
           << " kernels\n";
    return 1;
  }
  outs() << "the warm device compiled nothing\n";
  if (StoreDir.empty())
    sys::fs::remove_directories(Dir);
  return 0;
}
