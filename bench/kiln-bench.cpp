//===- kiln-bench.cpp - Kiln's side of the benchmark suite beside PoCL ---===//
//
// kiln-bench [--kernels DIR] [--iters N] [--unchecked] [--skip-many] [TAG]
//
// Loads the kernel suite (bench/kernels/*.kiln) with parseModule and
// verifyModule, compiles it through the runtime's Device, and measures it the
// way PoCL's anchor bench (bench.cpp, see docs/Performance.md) does: the first
// launch on its own, 3 warm-ups, then the median and minimum of N launches
// (launch + wait, std::chrono::steady_clock). Inputs are the anchor's: the
// same generator, seed and order, so both programs see the same data.
//
// The compile side: cold compile per kernel on a device with no store, warm
// load per kernel by a new device from a store the first one filled, empty
// launch + wait latency, and 32 small kernels one after another and as one
// Device::getKernels batch (cold and warm).
//
// Every result is checked against a reference computed here in C++; a wrong
// result prints "FAIL ..." on stderr and the program exits 1 after the
// suite. Nothing here checks a timing.
//
// Output, one number per line, as the anchor bench prints it:
//   RESULT <TAG> <kernel> <metric> <value>
// Times are milliseconds unless the metric says _us.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"
#include "kiln/Runtime/Buffer.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Runtime/Launch.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace llvm;
using kiln::ArgBinding;
using kiln::Buffer;
using kiln::LoadedKernel;

namespace {

cl::OptionCategory Category("kiln-bench options");
cl::opt<std::string> Tag(cl::Positional, cl::desc("[TAG]"), cl::init("kiln"),
                         cl::cat(Category));
cl::opt<std::string> KernelDir("kernels",
                               cl::desc("Folder of the suite's .kiln files"),
                               cl::value_desc("DIR"),
                               cl::init(KILN_BENCH_KERNEL_DIR),
                               cl::cat(Category));
cl::opt<int> Iters("iters",
                   cl::desc("Timed launches per kernel (default: BENCH_ITERS "
                            "or 30)"),
                   cl::value_desc("N"), cl::init(0), cl::cat(Category));
cl::opt<bool> Unchecked("unchecked",
                        cl::desc("Run the unchecked variant (no bounds "
                                 "checks) instead of the library's default"),
                        cl::cat(Category));
cl::opt<bool> SkipMany("skip-many",
                       cl::desc("Skip the 32-kernel compile measurements"),
                       cl::cat(Category));

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
}
double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

void result(StringRef Kernel, StringRef Metric, double Value) {
  std::printf("RESULT %s %s %s %.6g\n", Tag.c_str(), Kernel.str().c_str(),
              Metric.str().c_str(), Value);
  std::fflush(stdout);
}

/// \p V with 6 significant digits, for messages.
std::string num(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.6g", V);
  return Buf;
}

bool AnyFailure = false;
void failure(const Twine &What) {
  errs() << "FAIL " << What << "\n";
  AnyFailure = true;
}

/// Errors from the library end the program: the bench cannot go on without
/// its kernels or launches.
[[noreturn]] void fatal(const Twine &Context, Error E) {
  errs() << "kiln-bench: error: " << Context << ": " << toString(std::move(E))
         << "\n";
  std::exit(1);
}
template <typename T> T check(Expected<T> V, const Twine &Context) {
  if (!V)
    fatal(Context, V.takeError());
  return std::move(*V);
}

// The anchor's input generator (bench.cpp): same constants, same seed.
uint32_t LcgState = 12345u;
uint32_t lcg() {
  LcgState = LcgState * 1664525u + 1013904223u;
  return LcgState;
}
float frand() { return (lcg() >> 8) * (1.0f / 16777216.0f); }

kiln::Type f32Type() { return kiln::Type::scalar(kiln::ScalarKind::F32); }
kiln::Type u32Type() { return kiln::Type::scalar(kiln::ScalarKind::U32); }

/// A buffer whose pages are all touched (as PoCL's CL_MEM_COPY_HOST_PTR
/// does), so that no launch pays first-touch page faults.
Buffer makeBuffer(kiln::Type Ty, uint64_t Count) {
  Buffer B = check(Buffer::create(Ty, Count), "allocating a buffer");
  std::memset(B.data(), 0, B.sizeInBytes());
  return B;
}

/// The parsed and verified suite: every kernel of every .kiln file.
struct Suite {
  std::vector<std::unique_ptr<kiln::Module>> Modules;
  StringMap<const kiln::Kernel *> Kernels;

  const kiln::Kernel &get(StringRef Name) const {
    auto It = Kernels.find(Name);
    if (It == Kernels.end()) {
      errs() << "kiln-bench: error: no kernel @" << Name << " in "
             << KernelDir << "\n";
      std::exit(1);
    }
    return *It->second;
  }
};

Suite loadSuite(const kiln::DeviceLimits &Limits) {
  static const char *Files[] = {"init",        "vadd",         "saxpy",
                                "reduce_sum",  "matmul_tiled", "softmax_rows",
                                "hist_global", "hist_local",   "empty",
                                "many32"};
  Suite S;
  for (const char *F : Files) {
    SmallString<256> Path(KernelDir);
    sys::path::append(Path, std::string(F) + ".kiln");
    auto T0 = Clock::now();
    auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
    if (!Buf) {
      errs() << "kiln-bench: error: " << Path << ": cannot read file: "
             << Buf.getError().message() << "\n";
      std::exit(1);
    }
    auto M = kiln::parseModule((*Buf)->getBuffer(), Path);
    if (!M)
      fatal("parsing the suite", M.takeError());
    if (Error E = kiln::verifyModule(*M, Limits))
      fatal("verifying the suite", std::move(E));
    result(F, "parse_verify_ms", msSince(T0));
    auto Owned = std::make_unique<kiln::Module>(std::move(*M));
    for (const kiln::Kernel &K : Owned->Kernels)
      S.Kernels[K.Name] = &K;
    S.Modules.push_back(std::move(Owned));
  }
  return S;
}

/// A Device, the variant the suite runs, and the launch/timing helpers.
class Bench {
public:
  Bench(std::unique_ptr<kiln::Device> D, kiln::CpuVariant V, int Iters)
      : Dev(std::move(D)), Variant(V), Iters(Iters) {}

  kiln::Device &device() { return *Dev; }
  const kiln::CpuVariant &variant() const { return Variant; }

  /// Compiles (or finds) \p K and reports its cost under \p Name when
  /// \p Report: cold_compile_ms and the phases.
  LoadedKernel compile(const kiln::Kernel &K, StringRef Name, bool Report,
                       double *Ms = nullptr) {
    kiln::KernelStats Stats;
    auto T0 = Clock::now();
    LoadedKernel L = check(Dev->getKernel(K, Variant, &Stats),
                           "compiling @" + K.Name);
    double T = msSince(T0);
    if (Ms)
      *Ms = T;
    if (Report) {
      if (!Stats.Compiled)
        errs() << "kiln-bench: note: @" << K.Name
               << " was not compiled by this call (memoised or stored)\n";
      result(Name, "cold_compile_ms", T);
      result(Name, "verify_ms", Stats.VerifySeconds * 1e3);
      result(Name, "lower_ms", Stats.LowerSeconds * 1e3);
      result(Name, "optimize_ms", Stats.OptimizeSeconds * 1e3);
      result(Name, "codegen_ms", Stats.CodegenSeconds * 1e3);
      result(Name, "link_ms", Stats.LinkSeconds * 1e3);
    }
    return L;
  }

  /// One launch and the wait for it, in ms.
  double launch(const LoadedKernel &K, std::array<uint32_t, 3> Cubes,
                ArrayRef<ArgBinding> Args) {
    auto T0 = Clock::now();
    if (Error E = Dev->launch(K, Cubes, Args))
      fatal("launching " + K.metadata().KernelName, std::move(E));
    return msSince(T0);
  }

  /// The anchor's protocol: first launch (reported when \p ReportFirst),
  /// 3 warm-ups, then the launches asked for (at most 10 when the first one
  /// took more than \p SlowMs); \p Pre runs before each launch, outside the
  /// timing. Returns the median.
  double timeKernel(StringRef Name, const LoadedKernel &K,
                    std::array<uint32_t, 3> Cubes, ArrayRef<ArgBinding> Args,
                    const std::function<void()> &Pre, bool ReportFirst = true,
                    double SlowMs = 1e300) {
    Pre();
    double First = launch(K, Cubes, Args);
    if (ReportFirst)
      result(Name, "first_launch_ms", First);
    int N = First > SlowMs ? std::min(Iters, 10) : Iters;
    for (int I = 0; I < 3; ++I) {
      Pre();
      launch(K, Cubes, Args);
    }
    std::vector<double> T;
    for (int I = 0; I < N; ++I) {
      Pre();
      T.push_back(launch(K, Cubes, Args));
    }
    double Med = median(T);
    result(Name, "kernel_ms_median", Med);
    result(Name, "kernel_ms_min", *std::min_element(T.begin(), T.end()));
    result(Name, "iters", N);
    return Med;
  }

private:
  std::unique_ptr<kiln::Device> Dev;
  kiln::CpuVariant Variant;
  int Iters;
};

void nothing() {}

constexpr uint32_t N = 1u << 24;
constexpr uint32_t CubeDim = 256;

struct Inputs {
  std::vector<float> A, B;
};

void benchVadd(Bench &Bn, const Suite &S, const Inputs &In) {
  LoadedKernel K = Bn.compile(S.get("vadd"), "vadd", true);
  Buffer A = makeBuffer(f32Type(), N), B = makeBuffer(f32Type(), N),
         C = makeBuffer(f32Type(), N);
  std::memcpy(A.data(), In.A.data(), N * 4);
  std::memcpy(B.data(), In.B.data(), N * 4);
  ArgBinding Args[] = {ArgBinding::buffer(A, kiln::AccessKind::Read),
                       ArgBinding::buffer(B, kiln::AccessKind::Read),
                       ArgBinding::buffer(C), ArgBinding::u32(N)};
  double T = Bn.timeKernel("vadd", K, {N / CubeDim, 1, 1}, Args, nothing);
  result("vadd", "GBps", 3.0 * 4 * N / (T * 1e6));
  const float *Cp = C.as<float>();
  double MaxErr = 0;
  for (uint32_t I = 0; I < N; ++I)
    MaxErr = std::max(MaxErr, (double)std::fabs(Cp[I] - (In.A[I] + In.B[I])));
  result("vadd", "max_abs_err", MaxErr);
  result("vadd", "correct", MaxErr == 0.0);
  if (MaxErr != 0.0)
    failure("vadd: max abs error " + num(MaxErr));
}

void benchSaxpy(Bench &Bn, const Suite &S, const Inputs &In) {
  LoadedKernel K = Bn.compile(S.get("saxpy"), "saxpy", true);
  const float Alpha = 0.5f;
  Buffer X = makeBuffer(f32Type(), N), Y = makeBuffer(f32Type(), N);
  std::memcpy(X.data(), In.A.data(), N * 4);
  std::memcpy(Y.data(), In.B.data(), N * 4);
  ArgBinding Args[] = {ArgBinding::f32(Alpha),
                       ArgBinding::buffer(X, kiln::AccessKind::Read),
                       ArgBinding::buffer(Y), ArgBinding::u32(N)};
  // Correctness from the initial y: this is the first launch (as the anchor).
  result("saxpy", "first_launch_ms", Bn.launch(K, {N / CubeDim, 1, 1}, Args));
  const float *Yp = Y.as<float>();
  double MaxErr = 0;
  for (uint32_t I = 0; I < N; ++I)
    MaxErr = std::max(MaxErr,
                      (double)std::fabs(Yp[I] - (Alpha * In.A[I] + In.B[I])));
  result("saxpy", "max_abs_err", MaxErr);
  result("saxpy", "correct", MaxErr <= 1e-6);
  if (!(MaxErr <= 1e-6))
    failure("saxpy: max abs error " + num(MaxErr));
  double T = Bn.timeKernel("saxpy", K, {N / CubeDim, 1, 1}, Args, nothing,
                           /*ReportFirst=*/false);
  result("saxpy", "GBps", 3.0 * 4 * N / (T * 1e6));
}

void benchReduce(Bench &Bn, const Suite &S, const Inputs &In) {
  LoadedKernel K = Bn.compile(S.get("reduce_sum"), "reduce_sum", true);
  const uint32_t G = N / CubeDim;
  Buffer InB = makeBuffer(f32Type(), N), P = makeBuffer(f32Type(), G);
  std::memcpy(InB.data(), In.A.data(), N * 4);
  ArgBinding Args[] = {ArgBinding::buffer(InB, kiln::AccessKind::Read),
                       ArgBinding::buffer(P)};
  double T = Bn.timeKernel("reduce_sum", K, {G, 1, 1}, Args, nothing);
  result("reduce_sum", "GBps", 4.0 * N / (T * 1e6));
  auto T1 = Clock::now();
  double Sum = 0;
  for (uint32_t I = 0; I < G; ++I)
    Sum += P.as<float>()[I];
  result("reduce_sum", "host_sum_ms", msSince(T1));
  double Ref = 0;
  for (uint32_t I = 0; I < N; ++I)
    Ref += In.A[I];
  double Rel = std::fabs(Sum - Ref) / Ref;
  result("reduce_sum", "rel_err", Rel);
  result("reduce_sum", "correct", Rel < 1e-5);
  if (!(Rel < 1e-5))
    failure("reduce_sum: relative error " + num(Rel));
}

void benchMatmul(Bench &Bn, const Suite &S) {
  const uint32_t M = 1024;
  LoadedKernel K = Bn.compile(S.get("matmul_tiled"), "matmul_tiled", true);
  std::vector<float> A(M * M), B(M * M);
  for (float &V : A)
    V = frand() - 0.5f;
  for (float &V : B)
    V = frand() - 0.5f;
  Buffer dA = makeBuffer(f32Type(), M * M), dB = makeBuffer(f32Type(), M * M),
         dC = makeBuffer(f32Type(), M * M);
  std::memcpy(dA.data(), A.data(), M * M * 4);
  std::memcpy(dB.data(), B.data(), M * M * 4);
  ArgBinding Args[] = {ArgBinding::buffer(dA, kiln::AccessKind::Read),
                       ArgBinding::buffer(dB, kiln::AccessKind::Read),
                       ArgBinding::buffer(dC), ArgBinding::u32(M)};
  std::array<uint32_t, 3> Cubes = {M / 16, M / 16, 1};
  // Fewer launches when one takes long, to keep the suite's run time sane.
  double T = Bn.timeKernel("matmul_tiled", K, Cubes, Args, nothing, true,
                           /*SlowMs=*/300);
  result("matmul_tiled", "GFLOPs", 2.0 * M * M * M / (T * 1e6));
  // Reference: double accumulation, i-k-j order (the anchor's).
  std::vector<double> Ref(size_t(M) * M, 0.0);
  for (uint32_t I = 0; I < M; ++I)
    for (uint32_t Kk = 0; Kk < M; ++Kk) {
      double Av = A[I * M + Kk];
      const float *Br = &B[size_t(Kk) * M];
      double *Rr = &Ref[size_t(I) * M];
      for (uint32_t J = 0; J < M; ++J)
        Rr[J] += Av * Br[J];
    }
  const float *C = dC.as<float>();
  double MaxErr = 0;
  for (size_t I = 0; I < size_t(M) * M; ++I)
    MaxErr = std::max(MaxErr, std::fabs(C[I] - Ref[I]));
  result("matmul_tiled", "max_abs_err", MaxErr);
  result("matmul_tiled", "correct", MaxErr < 1e-3);
  if (!(MaxErr < 1e-3))
    failure("matmul_tiled: max abs error " + num(MaxErr));
}

void benchSoftmax(Bench &Bn, const Suite &S) {
  const uint32_t Rows = 4096, Cols = 1024;
  LoadedKernel K = Bn.compile(S.get("softmax_rows"), "softmax_rows", true);
  std::vector<float> X(size_t(Rows) * Cols);
  for (float &V : X)
    V = (frand() - 0.5f) * 8.0f;
  Buffer dX = makeBuffer(f32Type(), X.size()),
         dY = makeBuffer(f32Type(), X.size());
  std::memcpy(dX.data(), X.data(), X.size() * 4);
  ArgBinding Args[] = {ArgBinding::buffer(dX, kiln::AccessKind::Read),
                       ArgBinding::buffer(dY), ArgBinding::u32(Cols)};
  double T = Bn.timeKernel("softmax_rows", K, {Rows, 1, 1}, Args, nothing);
  result("softmax_rows", "GBps", 2.0 * 4 * Rows * Cols / (T * 1e6));
  result("softmax_rows", "Gelem_per_s", 1.0 * Rows * Cols / (T * 1e6));
  const float *Y = dY.as<float>();
  double MaxErr = 0;
  for (uint32_t R = 0; R < Rows; ++R) {
    const float *Xr = &X[size_t(R) * Cols];
    double Mx = -1e30, Sum = 0;
    for (uint32_t J = 0; J < Cols; ++J)
      Mx = std::max(Mx, (double)Xr[J]);
    for (uint32_t J = 0; J < Cols; ++J)
      Sum += std::exp(Xr[J] - Mx);
    for (uint32_t J = 0; J < Cols; ++J)
      MaxErr = std::max(MaxErr, std::fabs(Y[size_t(R) * Cols + J] -
                                          std::exp(Xr[J] - Mx) / Sum));
  }
  result("softmax_rows", "max_abs_err", MaxErr);
  result("softmax_rows", "correct", MaxErr < 1e-6);
  if (!(MaxErr < 1e-6))
    failure("softmax_rows: max abs error " + num(MaxErr));
}

void benchHistograms(Bench &Bn, const Suite &S) {
  std::vector<uint32_t> Ref(256, 0);
  Buffer Data = makeBuffer(u32Type(), N), Bins = makeBuffer(u32Type(), 256);
  uint32_t *D = Data.as<uint32_t>();
  for (uint32_t I = 0; I < N; ++I) {
    D[I] = lcg() >> 24;
    Ref[D[I]]++;
  }
  auto Zero = [&] { std::memset(Bins.data(), 0, 256 * 4); };
  auto Check = [&](StringRef Name) {
    bool Ok = std::equal(Ref.begin(), Ref.end(), Bins.as<uint32_t>());
    result(Name, "correct", Ok);
    if (!Ok)
      failure(Name + ": bins differ from the reference");
  };
  ArgBinding Args[] = {ArgBinding::buffer(Data, kiln::AccessKind::Read),
                       ArgBinding::buffer(Bins), ArgBinding::u32(N)};
  {
    LoadedKernel K = Bn.compile(S.get("hist_global"), "hist_global", true);
    double T = Bn.timeKernel("hist_global", K, {N / CubeDim, 1, 1}, Args, Zero);
    result("hist_global", "GBps", 4.0 * N / (T * 1e6));
    Check("hist_global");
  }
  {
    LoadedKernel K = Bn.compile(S.get("hist_local"), "hist_local", true);
    double T = Bn.timeKernel("hist_local", K, {256, 1, 1}, Args, Zero);
    result("hist_local", "GBps", 4.0 * N / (T * 1e6));
    Check("hist_local");
  }
}

void benchEmpty(Bench &Bn, const Suite &S) {
  LoadedKernel K = Bn.compile(S.get("empty"), "empty", true);
  result("empty", "first_launch_ms", Bn.launch(K, {1, 1, 1}, {}));
  for (int I = 0; I < 20; ++I)
    Bn.launch(K, {1, 1, 1}, {});
  std::vector<double> T;
  auto T0 = Clock::now();
  for (int I = 0; I < 1000; ++I)
    T.push_back(Bn.launch(K, {1, 1, 1}, {}));
  double Total = msSince(T0);
  result("empty", "launch_us_median", median(T) * 1e3);
  result("empty", "launch_us_mean", Total); // ms for 1000 == mean in us
  result("empty", "launch_us_min", *std::min_element(T.begin(), T.end()) * 1e3);
  // Device::launch returns when the cubes are done: there is no asynchronous
  // launch to batch, so "1000 launches then one wait" is not measured.
  errs() << "kiln-bench: note: no asynchronous launch in the Device API: "
            "batched_us_per_launch not measured\n";
}

/// The 32 vadd variants compiled and first launched one after another
/// (each a distinct kernel id, so each is compiled).
void benchMany(Bench &Bn, const Suite &S) {
  const int K = 32;
  const uint32_t Count = 4096;
  Buffer A = makeBuffer(f32Type(), Count), B = makeBuffer(f32Type(), Count),
         C = makeBuffer(f32Type(), Count);
  std::fill_n(A.as<float>(), Count, 1.0f);
  std::fill_n(B.as<float>(), Count, 2.0f);
  ArgBinding Args[] = {ArgBinding::buffer(A, kiln::AccessKind::Read),
                       ArgBinding::buffer(B, kiln::AccessKind::Read),
                       ArgBinding::buffer(C), ArgBinding::u32(Count)};
  double Compile = 0, First = 0;
  bool Ok = true;
  auto TAll = Clock::now();
  for (int I = 0; I < K; ++I) {
    std::string Name = "vadd_k" + std::to_string(I);
    double Ms = 0;
    LoadedKernel L = Bn.compile(S.get(Name), Name, false, &Ms);
    Compile += Ms;
    First += Bn.launch(L, {Count / CubeDim, 1, 1}, Args);
    float Kc = 0.25f * (I + 1);
    for (uint32_t J = 0; J < Count; J += 511)
      Ok = Ok && C.as<float>()[J] == 1.0f + 2.0f * Kc;
  }
  result("many32", "total_ms", msSince(TAll));
  result("many32", "compile_ms_per_kernel", Compile / K);
  result("many32", "first_launch_ms_per_kernel", First / K);
  result("many32", "correct", Ok);
  if (!Ok)
    failure("many32: a vadd variant computed a wrong value");
}

// init_k first: it bears the store's and the linker's one-time costs in the
// new device, as it bears LLVM's on the cold side.
const char *const WarmKernels[] = {"init_k",       "vadd",
                                   "saxpy",        "reduce_sum",
                                   "matmul_tiled", "softmax_rows",
                                   "hist_global",  "hist_local",
                                   "empty"};

/// A device with the store at \p Root (empty: no store at all).
std::unique_ptr<kiln::Device> makeDevice(StringRef Root) {
  kiln::DeviceOptions O;
  O.StoreMode =
      Root.empty() ? kiln::DeviceStoreMode::Off : kiln::DeviceStoreMode::ReadWrite;
  O.StoreDir = Root.str();
  return check(kiln::Device::create(std::move(O)), "creating a device");
}

/// One getKernels() batch of \p Names; fails the program on an error.
std::vector<LoadedKernel>
getBatch(kiln::Device &Dev, const Suite &S, ArrayRef<std::string> Names,
         const kiln::CpuVariant &Variant, std::vector<kiln::KernelStats> &Stats,
         double &Ms) {
  std::vector<kiln::KernelRequest> Requests;
  for (const std::string &Name : Names) {
    kiln::KernelRequest R;
    R.K = &S.get(Name);
    R.Variant = Variant;
    R.FileName = Name + ".kiln";
    Requests.push_back(std::move(R));
  }
  auto T0 = Clock::now();
  auto Results = Dev.getKernels(Requests, {}, &Stats);
  Ms = msSince(T0);
  std::vector<LoadedKernel> Out;
  for (size_t I = 0; I < Results.size(); ++I)
    Out.push_back(check(std::move(Results[I]), "compiling @" + Names[I]));
  return Out;
}

/// Launches the vadd-shaped \p K on 4096 elements (a = 1, b = 2) and
/// checks c = a + Scale * b.
bool checkVaddLike(kiln::Device &Dev, const LoadedKernel &K, float Scale) {
  const uint32_t Count = 4096;
  Buffer A = makeBuffer(f32Type(), Count), B = makeBuffer(f32Type(), Count),
         C = makeBuffer(f32Type(), Count);
  std::fill_n(A.as<float>(), Count, 1.0f);
  std::fill_n(B.as<float>(), Count, 2.0f);
  ArgBinding Args[] = {ArgBinding::buffer(A, kiln::AccessKind::Read),
                       ArgBinding::buffer(B, kiln::AccessKind::Read),
                       ArgBinding::buffer(C), ArgBinding::u32(Count)};
  if (Error E = Dev.launch(K, {Count / CubeDim, 1, 1}, Args))
    fatal("launching " + K.metadata().KernelName, std::move(E));
  for (uint32_t J = 0; J < Count; ++J)
    if (C.as<float>()[J] != 1.0f + 2.0f * Scale)
      return false;
  return true;
}

/// Warm load: a first device compiles the suite into the store at \p Root;
/// a second one, with nothing in memory, gets each kernel from the store.
void benchWarm(const Suite &S, const kiln::CpuVariant &Variant, StringRef Root) {
  std::vector<std::string> Names(std::begin(WarmKernels), std::end(WarmKernels));
  {
    auto Dev = makeDevice(Root);
    std::vector<kiln::KernelStats> Stats;
    double Ms = 0;
    getBatch(*Dev, S, Names, Variant, Stats, Ms);
    for (size_t I = 0; I < Names.size(); ++I)
      if (!Stats[I].Stored)
        errs() << "kiln-bench: note: the store did not take @" << Names[I]
               << "\n";
  }
  auto Dev = makeDevice(Root);
  for (const std::string &Name : Names) {
    kiln::KernelStats Stats;
    auto T0 = Clock::now();
    LoadedKernel L = check(Dev->getKernel(S.get(Name), Variant, &Stats),
                           "loading @" + Name);
    double T = msSince(T0);
    if (!Stats.StoreHit) {
      errs() << "kiln-bench: note: @" << Name
             << " did not come from the store: no warm_load_ms\n";
      continue;
    }
    StringRef Tag = Name == "init_k" ? StringRef("init") : StringRef(Name);
    result(Tag, "warm_load_ms", T);
    result(Tag, "warm_lookup_ms", Stats.LookupSeconds * 1e3);
    result(Tag, "warm_link_ms", Stats.LinkSeconds * 1e3);
    if (Name == "vadd") {
      bool Ok = checkVaddLike(*Dev, L, 1.0f);
      result("warm", "correct", Ok);
      if (!Ok)
        failure("the vadd loaded from the store computed a wrong value");
    }
  }
}

/// The 32 vadd variants as one getKernels() batch: compiled in parallel with
/// no store (batch_*), then into the store at \p Root and served to a new
/// device from it (warm_total_ms). Every kernel is launched and checked.
void benchManyBatch(const Suite &S, const kiln::CpuVariant &Variant,
                    StringRef Root) {
  std::vector<std::string> Names;
  for (int I = 0; I < 32; ++I)
    Names.push_back("vadd_k" + std::to_string(I));
  auto checkAll = [&](kiln::Device &Dev, ArrayRef<LoadedKernel> Ks) {
    bool Ok = true;
    for (size_t I = 0; I < Ks.size(); ++I)
      Ok = checkVaddLike(Dev, Ks[I], 0.25f * (I + 1)) && Ok;
    return Ok;
  };
  std::vector<kiln::KernelStats> Stats;
  double Ms = 0;
  {
    auto Dev = makeDevice("");
    auto Ks = getBatch(*Dev, S, Names, Variant, Stats, Ms);
    result("many32", "batch_total_ms", Ms);
    result("many32", "batch_ms_per_kernel", Ms / Names.size());
    bool Ok = checkAll(*Dev, Ks);
    result("many32", "batch_correct", Ok);
    if (!Ok)
      failure("many32: a batch-compiled vadd variant computed a wrong value");
  }
  {
    auto Dev = makeDevice(Root);
    getBatch(*Dev, S, Names, Variant, Stats, Ms);
    result("many32", "batch_store_total_ms", Ms);
  }
  auto Dev = makeDevice(Root);
  auto Ks = getBatch(*Dev, S, Names, Variant, Stats, Ms);
  unsigned Hits = 0;
  for (const kiln::KernelStats &St : Stats)
    Hits += St.StoreHit;
  if (Hits != Names.size()) {
    errs() << "kiln-bench: note: only " << Hits
           << " of 32 kernels came from the store: no warm_total_ms\n";
  } else {
    result("many32", "warm_total_ms", Ms);
    result("many32", "warm_ms_per_kernel", Ms / Names.size());
  }
  bool Ok = checkAll(*Dev, Ks);
  result("many32", "warm_correct", Ok);
  if (!Ok)
    failure("many32: a vadd variant loaded from the store computed a wrong "
            "value");
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Kiln's benchmark suite (RESULT lines as "
                              "PoCL's anchor bench prints them)\n");
  int NIters = Iters;
  if (NIters <= 0) {
    const char *E = std::getenv("BENCH_ITERS");
    NIters = E ? std::atoi(E) : 30;
  }
  if (NIters <= 0) {
    errs() << "kiln-bench: error: the number of launches must be positive\n";
    return 1;
  }

  // The suite's device has no store: every first getKernel compiles.
  auto T0 = Clock::now();
  std::unique_ptr<kiln::Device> Dev = makeDevice("");
  result("setup", "device_create_ms", msSince(T0));
  errs() << "kiln-bench: device threads " << Dev->executor().concurrency()
         << ", plane_dim " << Dev->options().Limits.PlaneDim << "\n";

  kiln::CpuVariant Variant;
  Variant.BoundsChecked = !Unchecked;
  errs() << "kiln-bench: variant " << Variant.str() << "\n";
  Suite S = loadSuite(Dev->options().Limits);
  Bench Bn(std::move(Dev), Variant, NIters);

  // First kernel of the process: includes the one-time LLVM set-up.
  {
    LoadedKernel K = Bn.compile(S.get("init_k"), "init", true);
    Buffer P = makeBuffer(u32Type(), 1024);
    ArgBinding Args[] = {ArgBinding::buffer(P)};
    result("init", "first_launch_ms", Bn.launch(K, {16, 1, 1}, Args));
    if (P.as<uint32_t>()[1023] != 1)
      failure("init: the first kernel did not write its buffer");
  }

  Inputs In;
  In.A.resize(N);
  In.B.resize(N);
  for (uint32_t I = 0; I < N; ++I) {
    In.A[I] = frand();
    In.B[I] = frand();
  }
  benchVadd(Bn, S, In);
  benchSaxpy(Bn, S, In);
  benchReduce(Bn, S, In);
  benchMatmul(Bn, S);
  benchSoftmax(Bn, S);
  benchHistograms(Bn, S);
  benchEmpty(Bn, S);
  if (!SkipMany)
    benchMany(Bn, S);

  // The warm measurements use a store of their own, removed at the end.
  static SmallString<256> Root;
  if (std::error_code EC =
          sys::fs::createUniqueDirectory("kiln-bench-store", Root)) {
    errs() << "kiln-bench: error: cannot make a store folder: " << EC.message()
           << "\n";
    return 1;
  }
  std::atexit([] { sys::fs::remove_directories(Root); });
  benchWarm(S, Variant, Root);
  if (!SkipMany)
    benchManyBatch(S, Variant, Root);
  return AnyFailure ? 1 : 0;
}
