//===- kiln-bench.cpp - Kiln's side of the benchmark suite beside PoCL ---===//
//
// kiln-bench [--kernels DIR] [--iters N] [--gap-us US] [--unchecked]
//            [--mattr FEATURES] [--skip-many] [TAG]
//
// Loads the kernel suite (bench/kernels/*.kiln) with parseModule and
// verifyModule, compiles it through the runtime's Device and times each
// kernel against native C++ versions of it in the same process
// (bench/native/native-kernels.cpp: OpenMP, -O3 -march=native), on the same
// buffers (the Kiln buffers' memory) and the same number of threads as the
// device's launch arena. Kiln's launches and the native runs are
// interleaved, round by round, each after a pause longer than the device's
// keep-warm time (--gap-us), so that both start from sleeping threads and a
// change in the machine's load falls on both sides of a round alike. Per
// kernel it reports Kiln's median time and, per reference, the median and
// the 10th and 90th percentiles of the per-round ratio Kiln / reference.
// Element-wise kernels are also timed against an f32 triad of the same size
// (12 B an element, as vadd is counted). The inputs are made by the same
// generator, seed and order as bench/pocl/pocl-bench.cpp's, so both see the
// same data.
//
// The compile side: cold compile per kernel on a device with no store, warm
// load per kernel by a new device from a store the first one filled, launch
// latency of an empty kernel (64 cubes through the launch arena, and one
// cube, which runs inline on the caller), and 32 small kernels one after
// another and as one Device::getKernels batch (cold and warm).
//
// Every result, Kiln's and each native reference's, is checked against a
// reference computed here; a wrong result prints "FAIL ..." on stderr and
// the program exits 1 after the suite. Nothing here checks a timing.
//
// Output, one number per line:
//   RESULT <TAG> <kernel> <metric> <value>
// Times are milliseconds unless the metric says _us.
//
//===----------------------------------------------------------------------===//

#include "kiln/IR/Parser.h"
#include "kiln/IR/Verifier.h"
#include "kiln/Runtime/Buffer.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Runtime/Launch.h"

#include "llvm/ADT/STLExtras.h"
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
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#ifdef KILN_BENCH_NATIVE
#include "native-kernels.h"
#endif

using namespace llvm;
using kiln::ArgBinding;
using kiln::HostBuffer;
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
cl::opt<int> GapUs(
    "gap-us",
    cl::desc("Pause before each timed launch or native run, in microseconds "
             "(default: the device's keep-warm time + 1000, so that no "
             "thread still spins from the run before)"),
    cl::value_desc("US"), cl::init(-1), cl::cat(Category));
cl::opt<bool> Unchecked("unchecked",
                        cl::desc("Run the unchecked variant (no bounds "
                                 "checks) instead of the library's default"),
                        cl::cat(Category));
cl::opt<std::string>
    MAttr("mattr",
          cl::desc("Target features the device compiles for, on top of the "
                   "host's, as llc's -mattr (\"-avx512f\": AVX2 code on an "
                   "AVX-512 host); the native references are unchanged"),
          cl::value_desc("FEATURES"), cl::cat(Category));
cl::opt<bool> SkipMany("skip-many",
                       cl::desc("Skip the 32-kernel compile measurements"),
                       cl::cat(Category));
cl::list<std::string>
    Only("only",
         cl::desc("Run only these kernels' launch measurements (vadd, saxpy, "
                  "reduce_sum, reduce_plane, reduce_plane2, scan_plane, "
                  "matmul_tiled, matmul_cmma, matmul_cube_mma, softmax_rows, "
                  "hist, empty), "
                  "and no compile or store measurements"),
         cl::value_desc("K1,K2,..."), cl::CommaSeparated, cl::cat(Category));

/// Whether --only leaves \p Name in.
bool wanted(StringRef Name) {
  return Only.empty() || llvm::is_contained(Only, Name.str());
}

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

// The suite's input generator (a 32-bit LCG, seed 12345), shared with
// bench/pocl/pocl-bench.cpp and bench/native/native-bench.cpp.
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
HostBuffer makeBuffer(kiln::Type Ty, uint64_t Count) {
  HostBuffer B = check(HostBuffer::create(Ty, Count), "allocating a buffer");
  std::memset(B.data(), 0, B.sizeInBytes());
  return B;
}

/// The parsed and verified suite: every kernel of every .kiln file.
struct Suite {
  std::vector<std::unique_ptr<kiln::Module>> Modules;
  StringMap<const kiln::IRKernel *> Kernels;

  const kiln::IRKernel &get(StringRef Name) const {
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
  static const char *Files[] = {"init",         "vadd",       "saxpy",
                                "reduce_sum",   "reduce_plane", "matmul_tiled",
                                "softmax_rows", "hist_global",  "hist_local",
                                "empty",        "many32",       "scan_plane",
                                "matmul_cmma",  "reduce_plane2",
                                "matmul_cube_mma"};
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
    for (const kiln::IRKernel &K : Owned->Kernels)
      S.Kernels[K.Name] = &K;
    S.Modules.push_back(std::move(Owned));
  }
  return S;
}

/// Milliseconds \p Fn takes.
template <typename F> double timeMs(F &&Fn) {
  auto T0 = Clock::now();
  Fn();
  return msSince(T0);
}

/// The \p Q quantile (0..1) of \p V, by linear interpolation.
double quantile(std::vector<double> V, double Q) {
  std::sort(V.begin(), V.end());
  double Pos = Q * (V.size() - 1);
  size_t Lo = size_t(Pos);
  size_t Hi = std::min(Lo + 1, V.size() - 1);
  return V[Lo] + (Pos - Lo) * (V[Hi] - V[Lo]);
}

/// A reference run beside a kernel's launches: a native loop (or OpenBLAS,
/// or the triad) on the same buffers and threads, timed like a launch.
struct Reference {
  std::string Name; ///< "native", "native_private", "openblas", "triad", ...
  std::function<void()> Run;
};

/// A Device, the variant the suite runs, and the launch/timing helpers.
class Bench {
public:
  Bench(std::unique_ptr<kiln::RuntimeDevice> D, kiln::CpuVariant V, int Iters,
        unsigned GapMicroseconds)
      : Dev(std::move(D)), Variant(V), Iters(Iters), GapUs(GapMicroseconds) {}

  kiln::RuntimeDevice &device() { return *Dev; }
  const kiln::CpuVariant &variant() const { return Variant; }
  int threads() const { return int(Dev->executor().concurrency()); }

  /// Compiles (or finds) \p K and reports its cost under \p Name when
  /// \p Report: cold_compile_ms and the phases.
  LoadedKernel compile(const kiln::IRKernel &K, StringRef Name, bool Report,
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

  /// The pause between two timed runs (see --gap-us).
  void gap() const {
    if (GapUs)
      std::this_thread::sleep_for(std::chrono::microseconds(GapUs));
  }

  /// The interleaved protocol: the first launch (reported when
  /// \p ReportFirst), 3 warm-ups of the launch and of each reference, then
  /// rounds of one launch and one run of each reference, a pause (gap())
  /// before each, the launch first in even rounds and last in odd ones (at
  /// most 10 rounds when the first launch took more than \p SlowMs). \p Pre
  /// runs before each launch and each reference, outside the timing.
  /// Reports Kiln's median and spread and, per reference, its median and
  /// the median, 10th and 90th percentiles of the per-round ratio
  /// Kiln time / reference time. Returns Kiln's median.
  double timeKernel(StringRef Name, const LoadedKernel &K,
                    std::array<uint32_t, 3> Cubes, ArrayRef<ArgBinding> Args,
                    const std::function<void()> &Pre,
                    ArrayRef<Reference> Refs, bool ReportFirst = true,
                    double SlowMs = 1e300) {
    Pre();
    double First = launch(K, Cubes, Args);
    if (ReportFirst)
      result(Name, "first_launch_ms", First);
    int N = First > SlowMs ? std::min(Iters, 10) : Iters;
    for (int I = 0; I < 3; ++I) {
      Pre();
      launch(K, Cubes, Args);
      for (const Reference &R : Refs) {
        Pre();
        R.Run();
      }
    }
    std::vector<double> KT;
    std::vector<std::vector<double>> RT(Refs.size());
    auto runKiln = [&] {
      gap();
      Pre();
      KT.push_back(launch(K, Cubes, Args));
    };
    for (int I = 0; I < N; ++I) {
      if (I % 2 == 0)
        runKiln();
      for (size_t R = 0; R < Refs.size(); ++R) {
        gap();
        Pre();
        RT[R].push_back(timeMs(Refs[R].Run));
      }
      if (I % 2 == 1)
        runKiln();
    }
    double Med = median(KT);
    result(Name, "kernel_ms_median", Med);
    result(Name, "kernel_ms_min", *std::min_element(KT.begin(), KT.end()));
    result(Name, "kernel_ms_p10", quantile(KT, 0.1));
    result(Name, "kernel_ms_p90", quantile(KT, 0.9));
    result(Name, "iters", N);
    for (size_t R = 0; R < Refs.size(); ++R) {
      const std::string &RN = Refs[R].Name;
      std::vector<double> Ratio;
      for (int I = 0; I < N; ++I)
        Ratio.push_back(KT[I] / RT[R][I]);
      result(Name, RN + "_ms_median", median(RT[R]));
      result(Name, RN + "_ms_min",
             *std::min_element(RT[R].begin(), RT[R].end()));
      result(Name, "ratio_" + RN + "_median", median(Ratio));
      result(Name, "ratio_" + RN + "_p10", quantile(Ratio, 0.1));
      result(Name, "ratio_" + RN + "_p90", quantile(Ratio, 0.9));
      if (RN == "triad") {
        // Kiln's GB/s over the triad's, both counted as 12 B an element:
        // the triad's time over Kiln's, per round.
        std::vector<double> Frac;
        for (double X : Ratio)
          Frac.push_back(1.0 / X);
        result(Name, "triad_fraction_median", median(Frac));
        result(Name, "triad_fraction_p10", quantile(Frac, 0.1));
        result(Name, "triad_fraction_p90", quantile(Frac, 0.9));
      }
    }
    return Med;
  }

private:
  std::unique_ptr<kiln::RuntimeDevice> Dev;
  kiln::CpuVariant Variant;
  int Iters;
  unsigned GapUs;
};

void nothing() {}

constexpr uint32_t N = 1u << 24;
constexpr uint32_t CubeDim = 256;

struct Inputs {
  std::vector<float> A, B;
};

/// Reports whether a reference computed the right result (RESULT <kernel>
/// <ref>_correct), and fails the program when it did not: a wrong native
/// version would make its ratio meaningless.
void referenceCorrect(StringRef Kernel, StringRef Ref, bool Ok,
                      const Twine &Detail) {
  result(Kernel, Ref.str() + "_correct", Ok);
  if (!Ok)
    failure(Kernel + ": the " + Ref + " reference is wrong: " + Detail);
}

#ifdef KILN_BENCH_NATIVE
namespace nat = kiln_bench_native;
#endif

/// The f32 triad of vadd's size on buffers of its own, interleaved with an
/// element-wise kernel's launches.
struct Triad {
  HostBuffer A, B, C;
  Triad()
      : A(makeBuffer(f32Type(), N)), B(makeBuffer(f32Type(), N)),
        C(makeBuffer(f32Type(), N)) {
    std::fill_n(B.as<float>(), N, 2.0f);
    std::fill_n(C.as<float>(), N, 0.5f);
  }
  Reference reference(int Threads) {
#ifdef KILN_BENCH_NATIVE
    return {"triad", [this, Threads] {
              nat::triad(A.as<float>(), B.as<float>(), C.as<float>(), 3.0f, N,
                         Threads);
            }};
#else
    (void)Threads;
    return {};
#endif
  }
};

/// The references a kernel is timed against; empty without OpenMP.
std::vector<Reference> refs(std::initializer_list<Reference> L) {
  std::vector<Reference> V;
  for (const Reference &R : L)
    if (R.Run)
      V.push_back(R);
  return V;
}

double maxErrVadd(const float *C, const Inputs &In) {
  double MaxErr = 0;
  for (uint32_t I = 0; I < N; ++I)
    MaxErr = std::max(MaxErr, (double)std::fabs(C[I] - (In.A[I] + In.B[I])));
  return MaxErr;
}

void benchVadd(Bench &Bn, const Suite &S, const Inputs &In, Triad &Tr) {
  LoadedKernel K = Bn.compile(S.get("vadd"), "vadd", true);
  HostBuffer A = makeBuffer(f32Type(), N), B = makeBuffer(f32Type(), N),
             C = makeBuffer(f32Type(), N);
  std::memcpy(A.data(), In.A.data(), N * 4);
  std::memcpy(B.data(), In.B.data(), N * 4);
  ArgBinding Args[] = {ArgBinding::buffer(A, kiln::AccessKind::Read),
                       ArgBinding::buffer(B, kiln::AccessKind::Read),
                       ArgBinding::buffer(C), ArgBinding::u32(N)};
  const int T = Bn.threads();
  std::vector<Reference> Refs;
#ifdef KILN_BENCH_NATIVE
  float *Ap = A.as<float>(), *Bp = B.as<float>(), *Cp = C.as<float>();
  Refs = refs({{"native", [=] { nat::vadd(Ap, Bp, Cp, N, T); }},
               Tr.reference(T)});
  Refs[0].Run();
  double NErr = maxErrVadd(Cp, In);
  referenceCorrect("vadd", "native", NErr == 0.0, "max abs error " + num(NErr));
  std::memset(Cp, 0, N * 4);
#endif
  double Tm = Bn.timeKernel("vadd", K, {N / CubeDim, 1, 1}, Args, nothing, Refs);
  result("vadd", "GBps", 3.0 * 4 * N / (Tm * 1e6));
  std::memset(C.data(), 0, N * 4);
  Bn.launch(K, {N / CubeDim, 1, 1}, Args);
  double MaxErr = maxErrVadd(C.as<float>(), In);
  result("vadd", "max_abs_err", MaxErr);
  result("vadd", "correct", MaxErr == 0.0);
  if (MaxErr != 0.0)
    failure("vadd: max abs error " + num(MaxErr));
}

void benchSaxpy(Bench &Bn, const Suite &S, const Inputs &In, Triad &Tr) {
  LoadedKernel K = Bn.compile(S.get("saxpy"), "saxpy", true);
  const float Alpha = 0.5f;
  HostBuffer X = makeBuffer(f32Type(), N), Y = makeBuffer(f32Type(), N);
  std::memcpy(X.data(), In.A.data(), N * 4);
  std::memcpy(Y.data(), In.B.data(), N * 4);
  ArgBinding Args[] = {ArgBinding::f32(Alpha),
                       ArgBinding::buffer(X, kiln::AccessKind::Read),
                       ArgBinding::buffer(Y), ArgBinding::u32(N)};
  auto maxErr = [&] {
    const float *Yp = Y.as<float>();
    double MaxErr = 0;
    for (uint32_t I = 0; I < N; ++I)
      MaxErr = std::max(
          MaxErr, (double)std::fabs(Yp[I] - (Alpha * In.A[I] + In.B[I])));
    return MaxErr;
  };
  // Correctness from the initial y: this is the first launch.
  result("saxpy", "first_launch_ms", Bn.launch(K, {N / CubeDim, 1, 1}, Args));
  double MaxErr = maxErr();
  result("saxpy", "max_abs_err", MaxErr);
  result("saxpy", "correct", MaxErr <= 1e-6);
  if (!(MaxErr <= 1e-6))
    failure("saxpy: max abs error " + num(MaxErr));
  const int T = Bn.threads();
  std::vector<Reference> Refs;
#ifdef KILN_BENCH_NATIVE
  const float *Xp = X.as<float>();
  float *Yp = Y.as<float>();
  Refs = refs({{"native", [=] { nat::saxpy(Alpha, Xp, Yp, N, T); }},
               {"native_fma",
                [=] { nat::saxpyContracted(Alpha, Xp, Yp, N, T); }},
               Tr.reference(T)});
  // The native loop does the kernel's arithmetic: Kiln's result, bit for
  // bit. The contracted one is within an ulp.
  std::vector<float> KilnY(Yp, Yp + N);
  std::memcpy(Yp, In.B.data(), N * 4);
  Refs[0].Run();
  size_t Differ = 0;
  for (uint32_t I = 0; I < N; ++I)
    Differ += std::memcmp(&Yp[I], &KilnY[I], 4) != 0;
  referenceCorrect("saxpy", "native", Differ == 0,
                   num(Differ) + " elements differ from Kiln's");
  std::memcpy(Yp, In.B.data(), N * 4);
  Refs[1].Run();
  double FErr = maxErr();
  referenceCorrect("saxpy", "native_fma", FErr <= 1e-6,
                   "max abs error " + num(FErr));
#endif
  // y grows by 0.5 x a launch while timed: its values stay small.
  double Tm = Bn.timeKernel("saxpy", K, {N / CubeDim, 1, 1}, Args, nothing,
                            Refs, /*ReportFirst=*/false);
  result("saxpy", "GBps", 3.0 * 4 * N / (Tm * 1e6));
}

/// reduce_sum, reduce_plane and reduce_plane2: one partial sum per cube of
/// 256; the host adds the partials.
void benchReduce(Bench &Bn, const Suite &S, const Inputs &In,
                 StringRef Name) {
  LoadedKernel K = Bn.compile(S.get(Name), Name, true);
  const uint32_t G = N / CubeDim;
  HostBuffer InB = makeBuffer(f32Type(), N), P = makeBuffer(f32Type(), G);
  std::memcpy(InB.data(), In.A.data(), N * 4);
  ArgBinding Args[] = {ArgBinding::buffer(InB, kiln::AccessKind::Read),
                       ArgBinding::buffer(P)};
  double Ref = 0;
  for (uint32_t I = 0; I < N; ++I)
    Ref += In.A[I];
  auto relErr = [&] {
    double Sum = 0;
    for (uint32_t I = 0; I < G; ++I)
      Sum += P.as<float>()[I];
    return std::fabs(Sum - Ref) / Ref;
  };
  std::vector<Reference> Refs;
#ifdef KILN_BENCH_NATIVE
  const int T = Bn.threads();
  const float *Ip = InB.as<float>();
  float *Pp = P.as<float>();
  Refs = refs({{"native", [=] { nat::blockSums(Ip, Pp, G, CubeDim, T); }}});
  Refs[0].Run();
  double NRel = relErr();
  referenceCorrect(Name, "native", NRel < 1e-5, "relative error " + num(NRel));
  std::memset(Pp, 0, G * 4);
#endif
  double Tm = Bn.timeKernel(Name, K, {G, 1, 1}, Args, nothing, Refs);
  result(Name, "GBps", 4.0 * N / (Tm * 1e6));
  std::memset(P.data(), 0, G * 4);
  Bn.launch(K, {G, 1, 1}, Args);
  auto T1 = Clock::now();
  double Rel = relErr();
  result(Name, "host_sum_ms", msSince(T1));
  result(Name, "rel_err", Rel);
  result(Name, "correct", Rel < 1e-5);
  if (!(Rel < 1e-5))
    failure(Name + ": relative error " + num(Rel));
}

/// matmul_tiled (16 x 16 units per cube, a cube per 16 x 16 tile),
/// matmul_cmma (a plane per cube, a cube per 32 x 32 block) and
/// matmul_cube_mma (cube fragments, a cube per 64 x 64 block): the same
/// 1024 x 1024 f32 product. matmul_cmma and matmul_cube_mma are also timed
/// against matmul_tiled, launched by the same device in the same rounds
/// (reference "kiln_tiled"); matmul_cube_mma also against matmul_cmma
/// (reference "kiln_cmma": the same FLOPs, plane fragments).
void benchMatmul(Bench &Bn, const Suite &S, StringRef Name, uint32_t Block) {
  const uint32_t M = 1024;
  LoadedKernel K = Bn.compile(S.get(Name), Name, true);
  std::vector<float> A(M * M), B(M * M);
  for (float &V : A)
    V = frand() - 0.5f;
  for (float &V : B)
    V = frand() - 0.5f;
  HostBuffer dA = makeBuffer(f32Type(), M * M),
             dB = makeBuffer(f32Type(), M * M),
             dC = makeBuffer(f32Type(), M * M);
  std::memcpy(dA.data(), A.data(), M * M * 4);
  std::memcpy(dB.data(), B.data(), M * M * 4);
  ArgBinding Args[] = {ArgBinding::buffer(dA, kiln::AccessKind::Read),
                       ArgBinding::buffer(dB, kiln::AccessKind::Read),
                       ArgBinding::buffer(dC), ArgBinding::u32(M)};
  std::array<uint32_t, 3> Cubes = {M / Block, M / Block, 1};
  // Reference: double accumulation, i-k-j order.
  std::vector<double> Ref(size_t(M) * M, 0.0);
  for (uint32_t I = 0; I < M; ++I)
    for (uint32_t Kk = 0; Kk < M; ++Kk) {
      double Av = A[I * M + Kk];
      const float *Br = &B[size_t(Kk) * M];
      double *Rr = &Ref[size_t(I) * M];
      for (uint32_t J = 0; J < M; ++J)
        Rr[J] += Av * Br[J];
    }
  auto maxErr = [&] {
    const float *C = dC.as<float>();
    double MaxErr = 0;
    for (size_t I = 0; I < size_t(M) * M; ++I)
      MaxErr = std::max(MaxErr, std::fabs(C[I] - Ref[I]));
    return MaxErr;
  };
  std::vector<Reference> Refs;
#ifdef KILN_BENCH_NATIVE
  const int T = Bn.threads();
  const float *Ap = dA.as<float>(), *Bp = dB.as<float>();
  float *Cp = dC.as<float>();
  // matmul_tiled's native reference is its own algorithm written by hand;
  // the cache-blocked loops stay beside it (and are matmul_cmma's native).
  if (Name == "matmul_tiled")
    Refs = refs({{"native", [=] { nat::matmulTiled16(Ap, Bp, Cp, M, T); }},
                 {"native_blocked",
                  [=] { nat::matmulBlocked(Ap, Bp, Cp, M, T); }}});
  else
    Refs = refs({{"native", [=] { nat::matmulBlocked(Ap, Bp, Cp, M, T); }}});
  if (nat::haveBlas())
    Refs.push_back({"openblas", [=] { nat::sgemm(Ap, Bp, Cp, M, T); }});
#endif
  std::optional<LoadedKernel> Tiled, PlaneCmma;
  if (Name != "matmul_tiled") {
    Tiled.emplace(Bn.compile(S.get("matmul_tiled"), "matmul_tiled", false));
    Refs.push_back({"kiln_tiled", [&] {
                      Bn.launch(*Tiled, {M / 16, M / 16, 1}, Args);
                    }});
  }
  if (Name == "matmul_cube_mma") {
    PlaneCmma.emplace(Bn.compile(S.get("matmul_cmma"), "matmul_cmma", false));
    Refs.push_back({"kiln_cmma", [&] {
                      Bn.launch(*PlaneCmma, {M / 32, M / 32, 1}, Args);
                    }});
  }
  for (const Reference &R : Refs) {
    std::memset(dC.data(), 0, M * M * 4);
    R.Run();
    double E = maxErr();
    referenceCorrect(Name, R.Name, E < 1e-3, "max abs error " + num(E));
  }
  // Fewer rounds when one launch takes long, to keep the run time sane.
  double Tm = Bn.timeKernel(Name, K, Cubes, Args, nothing, Refs, true,
                            /*SlowMs=*/300);
  result(Name, "GFLOPs", 2.0 * M * M * M / (Tm * 1e6));
#ifdef KILN_BENCH_NATIVE
  if (Name == "matmul_tiled" && nat::haveBlas())
    std::printf("INFO %s blas %s\n", Tag.c_str(), nat::blasConfig().c_str());
#endif
  std::memset(dC.data(), 0, M * M * 4);
  Bn.launch(K, Cubes, Args);
  double MaxErr = maxErr();
  result(Name, "max_abs_err", MaxErr);
  result(Name, "correct", MaxErr < 1e-3);
  if (!(MaxErr < 1e-3))
    failure(Name + ": max abs error " + num(MaxErr));
#ifdef KILN_BENCH_NATIVE
  // matmul_tiled's native reference does the kernel's fmas in the kernel's
  // order: Kiln's result, bit for bit.
  auto Native = llvm::find_if(
      Refs, [](const Reference &R) { return R.Name == "native"; });
  if (Name == "matmul_tiled" && Native != Refs.end()) {
    std::vector<float> KilnC(dC.as<float>(), dC.as<float>() + size_t(M) * M);
    std::memset(dC.data(), 0, M * M * 4);
    Native->Run();
    size_t Differ = 0;
    for (size_t I = 0; I < size_t(M) * M; ++I)
      Differ += std::memcmp(&dC.as<float>()[I], &KilnC[I], 4) != 0;
    referenceCorrect(Name, "native_bitwise", Differ == 0,
                     num(Differ) + " elements differ from Kiln's");
  }
#endif
}

/// scan_plane: inclusive prefix sums of u32 within blocks of 256, checked
/// exactly (u32 wraps the same on both sides).
void benchScan(Bench &Bn, const Suite &S) {
  StringRef Name = "scan_plane";
  LoadedKernel K = Bn.compile(S.get(Name), Name, true);
  const uint32_t G = N / CubeDim;
  HostBuffer InB = makeBuffer(u32Type(), N), Out = makeBuffer(u32Type(), N);
  uint32_t *Ip = InB.as<uint32_t>();
  for (uint32_t I = 0; I < N; ++I)
    Ip[I] = lcg() >> 20;
  ArgBinding Args[] = {ArgBinding::buffer(InB, kiln::AccessKind::Read),
                       ArgBinding::buffer(Out)};
  auto firstWrong = [&]() -> int64_t {
    const uint32_t *O = Out.as<uint32_t>();
    for (uint32_t B = 0; B < G; ++B) {
      uint32_t Acc = 0;
      for (uint32_t I = B * CubeDim; I < (B + 1) * CubeDim; ++I) {
        Acc += Ip[I];
        if (O[I] != Acc)
          return I;
      }
    }
    return -1;
  };
  std::vector<Reference> Refs;
#ifdef KILN_BENCH_NATIVE
  const int T = Bn.threads();
  uint32_t *Op = Out.as<uint32_t>();
  Refs = refs({{"native", [=] { nat::blockScan(Ip, Op, G, CubeDim, T); }}});
  Refs[0].Run();
  int64_t NW = firstWrong();
  referenceCorrect(Name, "native", NW < 0, "wrong at " + num(double(NW)));
  std::memset(Op, 0, size_t(N) * 4);
#endif
  double Tm = Bn.timeKernel(Name, K, {G, 1, 1}, Args, nothing, Refs);
  result(Name, "GBps", 8.0 * N / (Tm * 1e6));
  std::memset(Out.data(), 0, size_t(N) * 4);
  Bn.launch(K, {G, 1, 1}, Args);
  int64_t W = firstWrong();
  result(Name, "correct", W < 0);
  if (W >= 0)
    failure(Name + ": wrong prefix sum at element " + num(double(W)));
}

void benchSoftmax(Bench &Bn, const Suite &S) {
  const uint32_t Rows = 4096, Cols = 1024;
  LoadedKernel K = Bn.compile(S.get("softmax_rows"), "softmax_rows", true);
  std::vector<float> X(size_t(Rows) * Cols);
  for (float &V : X)
    V = (frand() - 0.5f) * 8.0f;
  HostBuffer dX = makeBuffer(f32Type(), X.size()),
             dY = makeBuffer(f32Type(), X.size());
  std::memcpy(dX.data(), X.data(), X.size() * 4);
  ArgBinding Args[] = {ArgBinding::buffer(dX, kiln::AccessKind::Read),
                       ArgBinding::buffer(dY), ArgBinding::u32(Cols)};
  auto maxErr = [&] {
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
    return MaxErr;
  };
  std::vector<Reference> Refs;
#ifdef KILN_BENCH_NATIVE
  const int T = Bn.threads();
  const float *Xp = dX.as<float>();
  float *Yp = dY.as<float>();
  // "native": glibc's vector expf on the widest vectors (what a C++
  // programmer who cares would write); "native_scalar": plain -O3, scalar
  // expf.
  if (nat::softmaxRowsVector(Xp, Yp, Rows, Cols, T))
    Refs.push_back({"native", [=] {
                      nat::softmaxRowsVector(Xp, Yp, Rows, Cols, T);
                    }});
  else
    errs() << "kiln-bench: note: no vector expf (libmvec): softmax_rows has "
              "no vectorised native reference\n";
  Refs.push_back({"native_scalar", [=] {
                    nat::softmaxRowsScalar(Xp, Yp, Rows, Cols, T);
                  }});
  for (const Reference &R : Refs) {
    std::memset(Yp, 0, X.size() * 4);
    R.Run();
    double E = maxErr();
    referenceCorrect("softmax_rows", R.Name, E < 1e-6,
                     "max abs error " + num(E));
  }
  result("softmax_rows", "native_vector_expf", Refs.size() == 2);
#endif
  double Tm = Bn.timeKernel("softmax_rows", K, {Rows, 1, 1}, Args, nothing,
                            Refs);
  result("softmax_rows", "GBps", 2.0 * 4 * Rows * Cols / (Tm * 1e6));
  result("softmax_rows", "Gelem_per_s", 1.0 * Rows * Cols / (Tm * 1e6));
  std::memset(dY.data(), 0, X.size() * 4);
  Bn.launch(K, {Rows, 1, 1}, Args);
  double MaxErr = maxErr();
  result("softmax_rows", "max_abs_err", MaxErr);
  result("softmax_rows", "correct", MaxErr < 1e-6);
  if (!(MaxErr < 1e-6))
    failure("softmax_rows: max abs error " + num(MaxErr));
}

void benchHistograms(Bench &Bn, const Suite &S) {
  std::vector<uint32_t> Ref(256, 0);
  HostBuffer Data = makeBuffer(u32Type(), N), Bins = makeBuffer(u32Type(), 256);
  uint32_t *D = Data.as<uint32_t>();
  for (uint32_t I = 0; I < N; ++I) {
    D[I] = lcg() >> 24;
    Ref[D[I]]++;
  }
  auto Zero = [&] { std::memset(Bins.data(), 0, 256 * 4); };
  auto binsOk = [&] {
    return std::equal(Ref.begin(), Ref.end(), Bins.as<uint32_t>());
  };
  auto Check = [&](StringRef Name) {
    bool Ok = binsOk();
    result(Name, "correct", Ok);
    if (!Ok)
      failure(Name + ": bins differ from the reference");
  };
  ArgBinding Args[] = {ArgBinding::buffer(Data, kiln::AccessKind::Read),
                       ArgBinding::buffer(Bins), ArgBinding::u32(N)};
  std::vector<Reference> Global, Local;
#ifdef KILN_BENCH_NATIVE
  const int T = Bn.threads();
  uint32_t *Bp = Bins.as<uint32_t>();
  Reference Atomic{"native", [=] { nat::histAtomic(D, Bp, N, T); }};
  Reference Private{"native_private", [=] { nat::histPrivate(D, Bp, N, T); }};
  for (const Reference *R : {&Atomic, &Private}) {
    Zero();
    R->Run();
    referenceCorrect("hist_global", R->Name, binsOk(), "bins differ");
  }
  // hist_global: one atomic per element, as the kernel, and private bins;
  // hist_local: private bins (per cube in the kernel, per thread here).
  Global = {Atomic, Private};
  Local = {{"native", Private.Run}};
#endif
  {
    LoadedKernel K = Bn.compile(S.get("hist_global"), "hist_global", true);
    double Tm = Bn.timeKernel("hist_global", K, {N / CubeDim, 1, 1}, Args,
                              Zero, Global, true, /*SlowMs=*/300);
    result("hist_global", "GBps", 4.0 * N / (Tm * 1e6));
    Zero();
    Bn.launch(K, {N / CubeDim, 1, 1}, Args);
    Check("hist_global");
  }
  {
    LoadedKernel K = Bn.compile(S.get("hist_local"), "hist_local", true);
    double Tm = Bn.timeKernel("hist_local", K, {256, 1, 1}, Args, Zero, Local);
    result("hist_local", "GBps", 4.0 * N / (Tm * 1e6));
    Zero();
    Bn.launch(K, {256, 1, 1}, Args);
    Check("hist_local");
  }
}

/// Median, 10th and 90th percentiles of \p Count launch + wait of \p Cubes
/// empty cubes on \p Dev, after 20 warm-ups, reported as <Metric>_median etc.
/// in microseconds.
void emptyLaunches(kiln::RuntimeDevice &Dev, const LoadedKernel &K,
                   uint32_t Cubes, StringRef Metric, int Count = 1000) {
  auto one = [&] {
    auto T0 = Clock::now();
    if (Error E = Dev.launch(K, {Cubes, 1, 1}, {}))
      fatal("launching @empty", std::move(E));
    return msSince(T0) * 1e3;
  };
  for (int I = 0; I < 20; ++I)
    one();
  std::vector<double> T;
  for (int I = 0; I < Count; ++I)
    T.push_back(one());
  result("empty", Metric.str() + "_median", median(T));
  result("empty", Metric.str() + "_p10", quantile(T, 0.1));
  result("empty", Metric.str() + "_p90", quantile(T, 0.9));
  result("empty", Metric.str() + "_mean",
         std::accumulate(T.begin(), T.end(), 0.0) / T.size());
}

/// Launch latency, back to back: 64 cubes through the launch arena on a
/// device that spreads every launch over every thread
/// (MinWorkPerThreadMicroseconds = 0), and one cube, which always runs
/// inline on the calling thread; and the native side's empty parallel
/// region.
void benchEmpty(Bench &Bn, const Suite &S) {
  LoadedKernel K = Bn.compile(S.get("empty"), "empty", true);
  result("empty", "first_launch_ms", Bn.launch(K, {1, 1, 1}, {}));
  emptyLaunches(Bn.device(), K, 1, "launch_inline1_us");
  kiln::DeviceOptions O;
  O.StoreMode = kiln::DeviceStoreMode::Off;
  O.MinWorkPerThreadMicroseconds = 0;
  auto Arena =
      check(kiln::RuntimeDevice::create(std::move(O)), "creating a device");
  LoadedKernel KA = check(Arena->getKernel(S.get("empty"), Bn.variant()),
                          "compiling @empty");
  emptyLaunches(*Arena, KA, 64, "launch_arena64_us");
  result("empty", "arena_threads", Arena->executor().concurrency());
#ifdef KILN_BENCH_NATIVE
  const int T = Bn.threads();
  for (int I = 0; I < 20; ++I)
    nat::emptyRegion(T);
  std::vector<double> Ts;
  for (int I = 0; I < 1000; ++I)
    Ts.push_back(timeMs([&] { nat::emptyRegion(T); }) * 1e3);
  result("empty", "native_region_us_median", median(Ts));
  result("empty", "native_region_us_p10", quantile(Ts, 0.1));
  result("empty", "native_region_us_p90", quantile(Ts, 0.9));
#endif
}

/// The 32 vadd variants compiled and first launched one after another
/// (each a distinct kernel id, so each is compiled).
void benchMany(Bench &Bn, const Suite &S) {
  const int K = 32;
  const uint32_t Count = 4096;
  HostBuffer A = makeBuffer(f32Type(), Count), B = makeBuffer(f32Type(), Count),
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
std::unique_ptr<kiln::RuntimeDevice> makeDevice(StringRef Root) {
  kiln::DeviceOptions O;
  O.StoreMode =
      Root.empty() ? kiln::DeviceStoreMode::Off : kiln::DeviceStoreMode::ReadWrite;
  O.StoreDir = Root.str();
  O.Features = MAttr;
  return check(kiln::RuntimeDevice::create(std::move(O)), "creating a device");
}

/// One getKernels() batch of \p Names; fails the program on an error.
std::vector<LoadedKernel> getBatch(kiln::RuntimeDevice &Dev, const Suite &S,
                                   ArrayRef<std::string> Names,
                                   const kiln::CpuVariant &Variant,
                                   std::vector<kiln::KernelStats> &Stats,
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
bool checkVaddLike(kiln::RuntimeDevice &Dev, const LoadedKernel &K,
                   float Scale) {
  const uint32_t Count = 4096;
  HostBuffer A = makeBuffer(f32Type(), Count), B = makeBuffer(f32Type(), Count),
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
  auto checkAll = [&](kiln::RuntimeDevice &Dev, ArrayRef<LoadedKernel> Ks) {
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
                              "Kiln's benchmark suite beside native C++ in "
                              "the same process (RESULT lines)\n");
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
  std::unique_ptr<kiln::RuntimeDevice> Dev = makeDevice("");
  result("setup", "device_create_ms", msSince(T0));
  errs() << "kiln-bench: device threads " << Dev->executor().concurrency()
         << ", plane_dim " << Dev->options().Limits.PlaneDim << "\n";

  kiln::CpuVariant Variant;
  Variant.BoundsChecked = !Unchecked;
  errs() << "kiln-bench: variant " << Variant.str() << "\n";
  Suite S = loadSuite(Dev->options().Limits);
  unsigned Gap = GapUs >= 0 ? unsigned(int(GapUs))
                            : Dev->options().KeepWarmMicroseconds + 1000;
  result("setup", "threads", Dev->executor().concurrency());
  result("setup", "gap_us", Gap);
#ifdef KILN_BENCH_NATIVE
  result("setup", "native", 1);
  if (!std::getenv("OMP_WAIT_POLICY"))
    errs() << "kiln-bench: note: OMP_WAIT_POLICY is not set: OpenMP's "
              "threads may spin after a native run (bench/run.sh sets "
              "PASSIVE)\n";
#else
  result("setup", "native", 0);
  errs() << "kiln-bench: note: built without OpenMP: no native references\n";
#endif
  Bench Bn(std::move(Dev), Variant, NIters, Gap);

  // First kernel of the process: includes the one-time LLVM set-up.
  {
    LoadedKernel K = Bn.compile(S.get("init_k"), "init", true);
    HostBuffer P = makeBuffer(u32Type(), 1024);
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
  if (wanted("vadd") || wanted("saxpy")) {
    Triad Tr;
    if (wanted("vadd"))
      benchVadd(Bn, S, In, Tr);
    if (wanted("saxpy"))
      benchSaxpy(Bn, S, In, Tr);
  }
  for (const char *R : {"reduce_sum", "reduce_plane", "reduce_plane2"})
    if (wanted(R))
      benchReduce(Bn, S, In, R);
  if (wanted("scan_plane"))
    benchScan(Bn, S);
  if (wanted("matmul_tiled"))
    benchMatmul(Bn, S, "matmul_tiled", 16);
  if (wanted("matmul_cmma"))
    benchMatmul(Bn, S, "matmul_cmma", 32);
  if (wanted("matmul_cube_mma"))
    benchMatmul(Bn, S, "matmul_cube_mma", 64);
  if (wanted("softmax_rows"))
    benchSoftmax(Bn, S);
  if (wanted("hist"))
    benchHistograms(Bn, S);
  if (wanted("empty"))
    benchEmpty(Bn, S);
  if (!Only.empty())
    return AnyFailure ? 1 : 0;
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
