//===- kiln-demo.cpp - Kiln embedded as a GPU runtime would embed it ------===//
//
// kiln-demo FILE.kiln...
//
// Parses and verifies the files, compiles every kernel as ONE batch into the
// default store (KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
// ~/.cache/kiln), then launches the example kernels it knows (vadd, saxpy,
// tanh4, reduce_sum, histogram, matmul_tiled) on inputs it makes, checks each
// result against a C++ reference and prints the time of each phase. A second
// run loads everything from the store: it says so, and compares its start-up
// with the cold run's (kept in a small file in the store folder).
//
//===----------------------------------------------------------------------===//

#include "kiln/Compile/Logger.h"
#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"
#include "kiln/Runtime/Buffer.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Store/Environment.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point T) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T).count();
}

int fail(const Twine &Message) {
  errs() << "kiln-demo: error: " << Message << "\n";
  return 1;
}

/// A buffer of \p N elements of \p Ty, or an error.
Expected<kiln::HostBuffer> makeBuffer(kiln::Type Ty, uint64_t N) {
  return kiln::HostBuffer::create(Ty, N);
}

const kiln::Type F32 = kiln::Type::scalar(kiln::ScalarKind::F32);
const kiln::Type U32 = kiln::Type::scalar(kiln::ScalarKind::U32);

/// What running one example printed and whether its result was right.
struct Outcome {
  std::string Summary; ///< a few values of the result
  bool Ok = false;
  std::string Why;     ///< when not Ok: the first wrong element
};

/// Launches \p K on \p Cubes with \p Args, timing it into \p Ms.
Error launch(kiln::RuntimeDevice &D, const kiln::LoadedKernel &K,
             std::array<uint32_t, 3> Cubes, ArrayRef<kiln::ArgBinding> Args,
             double &Ms) {
  auto T = Clock::now();
  Error E = D.launch(K, Cubes, Args);
  Ms = msSince(T);
  return E;
}

bool close(double Got, double Want, double Tol) {
  return std::fabs(Got - Want) <= Tol * std::max(1.0, std::fabs(Want));
}

std::string wrong(size_t I, double Got, double Want) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "element " << I << " is " << Got << ", expected " << Want;
  return S;
}

std::string values(const float *P, std::initializer_list<size_t> Idx) {
  std::string S;
  raw_string_ostream OS(S);
  for (size_t I : Idx)
    OS << (S.empty() ? "" : ", ") << "[" << I << "]=" << format("%g", P[I]);
  return S;
}

using Runner = std::function<Expected<Outcome>(
    kiln::RuntimeDevice &, const kiln::LoadedKernel &, double &LaunchMs)>;

Expected<Outcome> runVadd(kiln::RuntimeDevice &D, const kiln::LoadedKernel &K,
                          double &Ms) {
  const uint32_t N = 1 << 20;
  auto A = makeBuffer(F32, N), B = makeBuffer(F32, N), C = makeBuffer(F32, N);
  if (!A || !B || !C)
    return joinErrors(joinErrors(A.takeError(), B.takeError()), C.takeError());
  for (uint32_t I = 0; I < N; ++I) {
    A->as<float>()[I] = float(I) * 0.5f;
    B->as<float>()[I] = float(N - I);
  }
  kiln::ArgBinding Args[] = {kiln::ArgBinding::buffer(*A),
                             kiln::ArgBinding::buffer(*B),
                             kiln::ArgBinding::buffer(*C),
                             kiln::ArgBinding::u32(N)};
  if (Error E = launch(D, K, {(N + 255) / 256, 1, 1}, Args, Ms))
    return E; // implicitly moved (C++20)
  Outcome O;
  O.Ok = true;
  for (uint32_t I = 0; I < N && O.Ok; ++I) {
    float Want = A->as<float>()[I] + B->as<float>()[I];
    if (C->as<float>()[I] != Want) {
      O.Ok = false;
      O.Why = wrong(I, C->as<float>()[I], Want);
    }
  }
  O.Summary = "c = a + b, n = 1048576: " + values(C->as<float>(), {0, 1, N - 1});
  return O;
}

Expected<Outcome> runSaxpy(kiln::RuntimeDevice &D, const kiln::LoadedKernel &K,
                           double &Ms) {
  const uint32_t N = 1000003; // not a multiple of the cube size
  const float Alpha = 2.5f;
  auto X = makeBuffer(F32, N), Y = makeBuffer(F32, N);
  if (!X || !Y)
    return joinErrors(X.takeError(), Y.takeError());
  std::vector<float> Want(N);
  for (uint32_t I = 0; I < N; ++I) {
    X->as<float>()[I] = float(I % 1000) * 0.001f;
    Y->as<float>()[I] = 1.0f;
    Want[I] = std::fma(Alpha, X->as<float>()[I], 1.0f);
  }
  kiln::ArgBinding Args[] = {kiln::ArgBinding::buffer(*X),
                             kiln::ArgBinding::buffer(*Y),
                             kiln::ArgBinding::f32(Alpha),
                             kiln::ArgBinding::u32(N)};
  if (Error E = launch(D, K, {(N + 255) / 256, 1, 1}, Args, Ms))
    return E; // implicitly moved (C++20)
  Outcome O;
  O.Ok = true;
  for (uint32_t I = 0; I < N && O.Ok; ++I)
    if (!close(Y->as<float>()[I], Want[I], 1e-6)) {
      O.Ok = false;
      O.Why = wrong(I, Y->as<float>()[I], Want[I]);
    }
  O.Summary = "y = 2.5 x + y, n = 1000003: " +
              values(Y->as<float>(), {0, 1, 999});
  return O;
}

Expected<Outcome> runTanh4(kiln::RuntimeDevice &D, const kiln::LoadedKernel &K,
                           double &Ms) {
  const uint32_t N = 65536; // lines of four floats
  kiln::Type Line = kiln::Type::line(kiln::ScalarKind::F32, 4);
  auto In = makeBuffer(Line, N), Out = makeBuffer(Line, N);
  if (!In || !Out)
    return joinErrors(In.takeError(), Out.takeError());
  for (uint32_t I = 0; I < 4 * N; ++I)
    In->as<float>()[I] = (float(I % 2000) - 1000.0f) / 250.0f;
  kiln::ArgBinding Args[] = {kiln::ArgBinding::buffer(*In),
                             kiln::ArgBinding::buffer(*Out)};
  if (Error E = launch(D, K, {N / 64, 1, 1}, Args, Ms))
    return E; // implicitly moved (C++20)
  Outcome O;
  O.Ok = true;
  for (uint32_t I = 0; I < 4 * N && O.Ok; ++I) {
    double Want = std::tanh(double(In->as<float>()[I]));
    if (!close(Out->as<float>()[I], Want, 1e-5)) {
      O.Ok = false;
      O.Why = wrong(I, Out->as<float>()[I], Want);
    }
  }
  O.Summary = "tanh of 262144 floats: " +
              values(Out->as<float>(), {0, 1000, 1500});
  return O;
}

Expected<Outcome> runReduce(kiln::RuntimeDevice &D, const kiln::LoadedKernel &K,
                            double &Ms) {
  const uint32_t N = 1000000, Cubes = (N + 255) / 256;
  auto In = makeBuffer(F32, N), Partial = makeBuffer(F32, Cubes);
  if (!In || !Partial)
    return joinErrors(In.takeError(), Partial.takeError());
  for (uint32_t I = 0; I < N; ++I)
    In->as<float>()[I] = float(I % 7) * 0.25f; // exact in binary
  kiln::ArgBinding Args[] = {kiln::ArgBinding::buffer(*In),
                             kiln::ArgBinding::buffer(*Partial),
                             kiln::ArgBinding::u32(N)};
  if (Error E = launch(D, K, {Cubes, 1, 1}, Args, Ms))
    return E; // implicitly moved (C++20)
  Outcome O;
  O.Ok = true;
  double Total = 0, WantTotal = 0;
  for (uint32_t C = 0; C < Cubes; ++C) {
    double Want = 0;
    for (uint32_t I = C * 256; I < std::min(N, C * 256 + 256); ++I)
      Want += In->as<float>()[I];
    WantTotal += Want;
    Total += Partial->as<float>()[C];
    if (O.Ok && Partial->as<float>()[C] != Want) {
      O.Ok = false;
      O.Why = "partial " + std::to_string(C) + ": " +
              wrong(C, Partial->as<float>()[C], Want);
    }
  }
  std::string S;
  raw_string_ostream OS(S);
  OS << "sum of 1000000 floats in " << Cubes << " cubes: " << Total
     << " (expected " << WantTotal << ")";
  O.Summary = S;
  return O;
}

Expected<Outcome> runHistogram(kiln::RuntimeDevice &D,
                               const kiln::LoadedKernel &K, double &Ms) {
  const uint32_t N = 1 << 20;
  auto Data = makeBuffer(U32, N), Bins = makeBuffer(U32, 256);
  if (!Data || !Bins)
    return joinErrors(Data.takeError(), Bins.takeError());
  std::vector<uint32_t> Want(256, 0);
  uint32_t X = 12345;
  for (uint32_t I = 0; I < N; ++I) {
    X = X * 1664525u + 1013904223u;
    uint32_t V = (X >> 8) ^ (X >> 19); // the LCG's low bits cycle quickly
    Data->as<uint32_t>()[I] = V;
    ++Want[V & 255];
  }
  std::fill_n(Bins->as<uint32_t>(), 256, 0u);
  kiln::ArgBinding Args[] = {kiln::ArgBinding::buffer(*Data),
                             kiln::ArgBinding::buffer(*Bins),
                             kiln::ArgBinding::u32(N)};
  if (Error E = launch(D, K, {64, 1, 1}, Args, Ms))
    return E; // implicitly moved (C++20)
  Outcome O;
  O.Ok = true;
  uint64_t Sum = 0;
  for (uint32_t B = 0; B < 256; ++B) {
    Sum += Bins->as<uint32_t>()[B];
    if (O.Ok && Bins->as<uint32_t>()[B] != Want[B]) {
      O.Ok = false;
      O.Why = wrong(B, Bins->as<uint32_t>()[B], Want[B]);
    }
  }
  std::string S;
  raw_string_ostream OS(S);
  OS << "256 bins of 1048576 values: bin[0]=" << Bins->as<uint32_t>()[0]
     << ", bin[255]=" << Bins->as<uint32_t>()[255] << ", total " << Sum;
  O.Summary = S;
  return O;
}

Expected<Outcome> runMatmul(kiln::RuntimeDevice &D, const kiln::LoadedKernel &K,
                            double &Ms) {
  const uint32_t N = 256;
  auto A = makeBuffer(F32, N * N), B = makeBuffer(F32, N * N),
       C = makeBuffer(F32, N * N);
  if (!A || !B || !C)
    return joinErrors(joinErrors(A.takeError(), B.takeError()), C.takeError());
  for (uint32_t I = 0; I < N * N; ++I) {
    A->as<float>()[I] = float((I * 7) % 13) - 6.0f;
    B->as<float>()[I] = float((I * 5) % 11) * 0.5f;
  }
  kiln::ArgBinding Args[] = {kiln::ArgBinding::buffer(*A),
                             kiln::ArgBinding::buffer(*B),
                             kiln::ArgBinding::buffer(*C),
                             kiln::ArgBinding::u32(N)};
  if (Error E = launch(D, K, {N / 16, N / 16, 1}, Args, Ms))
    return E; // implicitly moved (C++20)
  Outcome O;
  O.Ok = true;
  // Small integers and halves: every partial sum is exact in f32.
  for (uint32_t R = 0; R < N && O.Ok; ++R)
    for (uint32_t Col = 0; Col < N && O.Ok; ++Col) {
      double Want = 0;
      for (uint32_t I = 0; I < N; ++I)
        Want += double(A->as<float>()[R * N + I]) * B->as<float>()[I * N + Col];
      float Got = C->as<float>()[R * N + Col];
      if (Got != Want) {
        O.Ok = false;
        O.Why = wrong(R * N + Col, Got, Want);
      }
    }
  O.Summary = "C = A x B, 256 x 256: " +
              values(C->as<float>(), {0, 257, N * N - 1});
  return O;
}

/// The example kernels the demo knows inputs and a reference for.
const std::map<std::string, Runner> &runners() {
  static const std::map<std::string, Runner> R = {
      {"vadd", runVadd},         {"saxpy", runSaxpy},
      {"tanh4", runTanh4},       {"reduce_sum", runReduce},
      {"histogram", runHistogram}, {"matmul_tiled", runMatmul}};
  return R;
}

/// The cold run's start-up time kept beside the store's entries.
std::string coldFile(StringRef Folder) {
  SmallString<256> P(Folder);
  sys::path::append(P, "kiln-demo-cold-startup-ms");
  return std::string(P);
}

std::optional<double> readCold(StringRef Folder) {
  auto B = MemoryBuffer::getFile(coldFile(Folder));
  if (!B)
    return std::nullopt;
  double V;
  if (StringRef((*B)->getBuffer()).trim().getAsDouble(V))
    return std::nullopt;
  return V;
}

void writeCold(StringRef Folder, double Ms) {
  std::error_code EC;
  raw_fd_ostream OS(coldFile(Folder), EC);
  if (EC)
    return; // only a comparison is lost
  OS << format("%.3f", Ms) << "\n";
  OS.close();
  if (OS.has_error())
    OS.clear_error();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    errs() << "usage: kiln-demo FILE.kiln...\n"
              "Compiles every kernel of the files as one batch into the "
              "default store, runs the\nexample kernels it knows and checks "
              "them; run it twice to see the warm start-up.\n";
    return 1;
  }
  auto Start = Clock::now();

  // 1. Parse and verify, file by file.
  std::vector<std::unique_ptr<kiln::Module>> Modules;
  kiln::DeviceOptions Opts;
  for (int I = 1; I < argc; ++I) {
    auto Text = MemoryBuffer::getFile(argv[I], /*IsText=*/true);
    if (!Text)
      return fail(Twine(argv[I]) + ": cannot read file: " +
                  Text.getError().message());
    auto M = kiln::parseModule((*Text)->getBuffer(), argv[I]);
    if (!M) {
      errs() << toString(M.takeError()) << "\n";
      return 1;
    }
    if (Error E = kiln::verifyModule(*M, Opts.Limits)) {
      errs() << toString(std::move(E)) << "\n";
      return 1;
    }
    Modules.push_back(std::make_unique<kiln::Module>(std::move(*M)));
  }
  double ParseMs = msSince(Start);

  // The library is silent: the demo prints the store's warnings, and each
  // kernel's log with KILN_LOG=1.
  Opts.WarningSink = kiln::printWarningToStderr;
  if (kiln::compilationLoggingEnabled())
    Opts.KernelLogSink = [](StringRef Line) { errs() << Line << '\n'; };
  auto Dev = kiln::RuntimeDevice::create(Opts);
  if (!Dev)
    return fail(toString(Dev.takeError()));
  kiln::RuntimeDevice &D = **Dev;
  std::string Folder = D.storeFolder();

  // 2. Every kernel of every file as one batch.
  std::vector<kiln::KernelRequest> Requests;
  for (const auto &M : Modules)
    for (const kiln::IRKernel &K : M->Kernels)
      Requests.push_back({&K, kiln::CpuVariant{}, M->FileName, "", {}});
  outs() << "kiln-demo: " << Requests.size() << " kernels in " << Modules.size()
         << " files, parsed and verified in " << format("%.1f", ParseMs)
         << " ms\n";
  outs() << "kiln-demo: store: "
         << (Folder.empty() ? std::string("none (KILN_CACHE=0 or no home)")
                            : Folder)
         << "\n";
  outs().flush();
  kiln::KernelBatchOptions BO;
  bool Terminal = sys::Process::StandardErrIsDisplayed();
  auto BatchStart = Clock::now();
  if (Terminal)
    BO.Progress = [&](size_t Done, size_t Total) {
      errs() << "\r[" << Done << "/" << Total << "] "
             << format("%.1f s", msSince(BatchStart) / 1e3);
      errs().flush();
    };
  std::vector<kiln::KernelStats> Stats;
  auto Loaded = D.getKernels(Requests, BO, &Stats);
  double BatchMs = msSince(BatchStart);
  if (Terminal)
    errs() << "\n";
  unsigned Compiled = 0, FromStore = 0, Failed = 0;
  for (size_t I = 0; I < Loaded.size(); ++I) {
    if (!Loaded[I]) {
      errs() << toString(Loaded[I].takeError()) << "\n";
      ++Failed;
      continue;
    }
    if (Stats[I].Origin == kiln::KernelProvenance::Store)
      ++FromStore;
    else
      ++Compiled;
  }
  double StartupMs = msSince(Start);
  outs() << "kiln-demo: batch compile/load: " << format("%.1f", BatchMs)
         << " ms (" << Compiled << " compiled, " << FromStore
         << " loaded from the store" << (Failed ? ", " : "")
         << (Failed ? std::to_string(Failed) + " failed" : "") << ")\n";
  if (Failed)
    return fail(Twine(Failed) + " kernels failed to compile");

  // 3. Run the examples and check them.
  unsigned Ran = 0, Wrong = 0;
  for (size_t I = 0; I < Requests.size(); ++I) {
    const std::string &Name = Requests[I].K->Name;
    auto R = runners().find(Name);
    if (R == runners().end()) {
      outs() << "  @" << Name << ": compiled; no demo inputs for it\n";
      continue;
    }
    double LaunchMs = 0;
    Expected<Outcome> O = R->second(D, *Loaded[I], LaunchMs);
    if (!O)
      return fail("@" + Name + ": " + toString(O.takeError()));
    ++Ran;
    outs() << "  @" << Name << ": " << O->Summary << ": "
           << (O->Ok ? "ok" : "WRONG (" + O->Why + ")") << " (launch "
           << format("%.2f", LaunchMs) << " ms)\n";
    Wrong += !O->Ok;
  }

  // 4. Summary: how the kernels were obtained, and the start-up time.
  outs() << "kiln-demo: " << Ran << " kernels run, "
         << (Wrong ? std::to_string(Wrong) + " WRONG" : std::string("all ok"))
         << "\n";
  outs() << "kiln-demo: start-up (parse, verify, compile/load): "
         << format("%.1f", StartupMs) << " ms, ";
  if (Compiled == 0 && !Folder.empty()) {
    outs() << "all " << FromStore << " kernels from the store, 0 compiled";
    if (std::optional<double> Cold = readCold(Folder))
      outs() << " (the cold run took " << format("%.1f", *Cold) << " ms: "
             << format("%.0f", *Cold / std::max(StartupMs, 0.001))
             << "x faster)";
  } else {
    outs() << Compiled << " compiled, " << FromStore << " from the store";
    if (Folder.empty())
      outs() << " (no store: every run compiles)";
    else
      writeCold(Folder, StartupMs);
  }
  outs() << "\n";
  return Wrong ? 1 : 0;
}
