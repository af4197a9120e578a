//===- kiln-launch-bench.cpp - Launch, queue and lookup costs -------------===//
//
// What a GPU runtime pays per dispatch, on the public API (kiln/kiln.h):
//   sync       Device::launch of 64 cubes of 64 units (through the arena,
//              not the inline one-cube path), back to back
//   sync_idle  the same after the device sat idle for 1 ms
//   stream     Stream::launch + Stream::synchronize, back to back and idle
//   queued     1000 Stream::launch calls (submit cost each), then one wait
//   lookup     Device::findKernel / loadKernel with a known id, for a small
//              and a large kernel (size must not matter)
// With OpenCL found at build time, PoCL (or whatever ICD is installed) runs
// the same kernel shape in the same process, interleaved round by round:
// clEnqueueNDRangeKernel + clFinish, and 1000 enqueues + one clFinish.
//
// Prints "RESULT <system> <metric> <value>" lines (medians, p10, p90 over
// rounds) and a table. Every launch's result is checked; a wrong one exits 1.
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"

#include "AffineKernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifdef KILN_BENCH_OPENCL
#include <CL/cl.h>
#endif

using namespace kiln::api;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint32_t Cubes = kiln::bench::AffineCubes,
                   Units = kiln::bench::AffineUnits, N = kiln::bench::AffineN;
using kiln::bench::AffineText;

double usSince(Clock::time_point T) {
  return std::chrono::duration<double, std::micro>(Clock::now() - T).count();
}

struct Stats {
  std::vector<double> V;
  double pct(double P) {
    std::sort(V.begin(), V.end());
    if (V.empty())
      return 0;
    return V[std::min(V.size() - 1, size_t(P * (V.size() - 1) + 0.5))];
  }
};

std::vector<std::pair<std::string, std::vector<double>>> Rows;

void report(const std::string &System, const std::string &Metric, Stats S) {
  double Med = S.pct(0.5), P10 = S.pct(0.1), P90 = S.pct(0.9);
  std::printf("RESULT %s %s_median %.3f\nRESULT %s %s_p10 %.3f\nRESULT %s "
              "%s_p90 %.3f\n",
              System.c_str(), Metric.c_str(), Med, System.c_str(),
              Metric.c_str(), P10, System.c_str(), Metric.c_str(), P90);
  Rows.push_back({System + " " + Metric, {Med, P10, P90, double(S.V.size())}});
}

[[noreturn]] void die(const std::string &What) {
  std::fprintf(stderr, "kiln-launch-bench: %s\n", What.c_str());
  std::exit(1);
}

void check(const Status &S, const char *What) {
  if (!S.ok())
    die(std::string(What) + ": " + S.str());
}

/// A kernel of about \p Lines operations with float literals, to show that
/// a lookup by id does not depend on the kernel's size.
std::string bigKernel(unsigned Lines) {
  std::string T = "kernel @big cube_dim(64) (%y: buffer<f32, read_write>) {\n"
                  "  %i = absolute_pos : u32\n  %v0 = load %y[%i] : f32\n";
  for (unsigned L = 1; L < Lines; ++L)
    T += "  %v" + std::to_string(L) + " = fma %v" + std::to_string(L - 1) +
         ", 1.000001:f32, 0.0000003:f32 : f32\n";
  T += "  store %y[%i], %v" + std::to_string(Lines - 1) + "\n}\n";
  return T;
}

#ifdef KILN_BENCH_OPENCL
struct OpenCL {
  cl_context Ctx = nullptr;
  cl_command_queue Q = nullptr;
  cl_kernel K = nullptr;
  cl_mem Buf = nullptr;
  std::string Name;

  bool init() {
    cl_platform_id P;
    cl_uint NP = 0;
    if (clGetPlatformIDs(1, &P, &NP) != CL_SUCCESS || NP == 0)
      return false;
    cl_device_id D;
    if (clGetDeviceIDs(P, CL_DEVICE_TYPE_CPU, 1, &D, nullptr) != CL_SUCCESS)
      return false;
    char Buf1[256] = {0}, Buf2[256] = {0};
    clGetPlatformInfo(P, CL_PLATFORM_VERSION, sizeof(Buf1) - 1, Buf1, nullptr);
    clGetDeviceInfo(D, CL_DEVICE_NAME, sizeof(Buf2) - 1, Buf2, nullptr);
    Name = std::string(Buf1) + " on " + Buf2;
    cl_int E;
    Ctx = clCreateContext(nullptr, 1, &D, nullptr, nullptr, &E);
    if (E != CL_SUCCESS)
      return false;
    Q = clCreateCommandQueue(Ctx, D, 0, &E);
    const char *Src =
        "__kernel void affine(__global float *y, float a, float b, uint n) {"
        "  uint i = get_global_id(0); if (i < n) y[i] = fma(a, y[i], b); }";
    cl_program Prog = clCreateProgramWithSource(Ctx, 1, &Src, nullptr, &E);
    if (clBuildProgram(Prog, 1, &D, "", nullptr, nullptr) != CL_SUCCESS)
      return false;
    K = clCreateKernel(Prog, "affine", &E);
    std::vector<float> Zero(N, 0.0f);
    Buf = clCreateBuffer(Ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * 4,
                         Zero.data(), &E);
    float A = 1.0f, B = 1.0f;
    cl_uint Count = N;
    clSetKernelArg(K, 0, sizeof(cl_mem), &Buf);
    clSetKernelArg(K, 1, sizeof(float), &A);
    clSetKernelArg(K, 2, sizeof(float), &B);
    clSetKernelArg(K, 3, sizeof(cl_uint), &Count);
    return E == CL_SUCCESS;
  }
  void enqueue() {
    size_t G = N, L = Units;
    if (clEnqueueNDRangeKernel(Q, K, 1, nullptr, &G, &L, 0, nullptr, nullptr) !=
        CL_SUCCESS)
      die("clEnqueueNDRangeKernel failed");
  }
  float first() {
    float V;
    clEnqueueReadBuffer(Q, Buf, CL_TRUE, 0, 4, &V, 0, nullptr, nullptr);
    return V;
  }
};
#endif

} // namespace

int main(int argc, char **argv) {
  int Rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  if (Rounds < 1)
    die("usage: kiln-launch-bench [ROUNDS [KEEP_WARM_US [MIN_WORK_US]]]");
  DeviceConfig Config;
  Config.Store = StoreMode::Off;
  if (argc > 2)
    Config.KeepWarmMicroseconds = unsigned(std::atoi(argv[2]));
  if (argc > 3)
    Config.MinWorkPerThreadMicroseconds = unsigned(std::atoi(argv[3]));
  Device D = [&] {
    Result<Device> R = Device::create(Config);
    if (!R.ok())
      die(R.status().str());
    return std::move(R).value();
  }();
  std::printf("# device threads: %u, %u rounds, workers kept warm %u us, "
              "least work per thread %u us%s\n",
              D.concurrency(), Rounds, Config.KeepWarmMicroseconds,
              Config.MinWorkPerThreadMicroseconds,
              Config.MinWorkPerThreadMicroseconds
                  ? ""
                  : " (every launch over every thread, through the arena)");
  KernelOptions Opt;
  Opt.Id = "bench.affine";
  Result<Kernel> KR = D.loadKernel(AffineText, "affine", Opt);
  if (!KR.ok())
    die(KR.status().str());
  Kernel K = *KR;
  Buffer B = *Buffer::allocate(N * 4);
  float Expected = 0; // every launch adds 1 to every element
  Arg Args[] = {Arg::buffer(B.view(ElementType::scalar(ScalarType::F32))),
                Arg::f32(1.0f), Arg::f32(1.0f), Arg::u32(N)};
  Buffer One = *Buffer::allocate(Units * 4);
  Arg OneArgs[] = {Arg::buffer(One.view(ElementType::scalar(ScalarType::F32))),
                   Arg::f32(1.0f), Arg::f32(1.0f), Arg::u32(Units)};
  int OneCount = 0;
  Stream S = *D.createStream();
  auto Verify = [&](const char *What) {
    const float *P = static_cast<const float *>(B.data());
    if (P[0] != Expected || P[N - 1] != Expected)
      die(std::string("wrong result after ") + What);
  };

  // Lookups: a small and a large kernel, by id.
  KernelOptions BigOpt;
  BigOpt.Id = "bench.big";
  std::string Big = bigKernel(100);
  if (!D.loadKernel(Big, "big", BigOpt).ok())
    die("big kernel");

#ifdef KILN_BENCH_OPENCL
  OpenCL CL;
  bool HaveCL = CL.init();
  float CLExpected = 0;
  if (HaveCL)
    std::printf("# OpenCL: %s\n", CL.Name.c_str());
  else
    std::printf("# OpenCL: none usable\n");
#endif

  Stats Sync, SyncIdle, OneCubeIdle, StreamRT, StreamIdle, Submit, QueuedTotal, FindSmall,
      FindBig, LoadSmall, LoadBig;
#ifdef KILN_BENCH_OPENCL
  Stats CLSync, CLIdle, CLSubmit, CLQueuedTotal;
#endif
  const int Reps = 200;
  for (int R = 0; R < Rounds; ++R) {
    // Kiln, synchronous, back to back (a few warm-up launches first).
    for (int I = 0; I < 5; ++I, ++Expected)
      check(D.launch(K, {Cubes, 1, 1}, Args), "launch");
    for (int I = 0; I < Reps; ++I, ++Expected) {
      auto T = Clock::now();
      check(D.launch(K, {Cubes, 1, 1}, Args), "launch");
      Sync.V.push_back(usSince(T));
    }
    Verify("sync launches");
    for (int I = 0; I < 20; ++I, ++Expected) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      auto T = Clock::now();
      check(D.launch(K, {Cubes, 1, 1}, Args), "launch");
      SyncIdle.V.push_back(usSince(T));
    }
    Verify("idle launches");
    // The floor: one cube, run inline on this thread, after the same idle
    // time (what the host thread itself pays for having slept).
    for (int I = 0; I < 20; ++I) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      auto T = Clock::now();
      check(D.launch(K, {1, 1, 1}, OneArgs), "launch");
      OneCubeIdle.V.push_back(usSince(T));
      if (static_cast<const float *>(One.data())[63] != float(++OneCount))
        die("wrong result of a one-cube launch");
    }
    // Kiln, one stream launch and its wait.
    for (int I = 0; I < Reps; ++I, ++Expected) {
      auto T = Clock::now();
      check(S.launch(K, {Cubes, 1, 1}, Args), "stream launch");
      check(S.synchronize(), "stream sync");
      StreamRT.V.push_back(usSince(T));
    }
    for (int I = 0; I < 20; ++I, ++Expected) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      auto T = Clock::now();
      check(S.launch(K, {Cubes, 1, 1}, Args), "stream launch");
      check(S.synchronize(), "stream sync");
      StreamIdle.V.push_back(usSince(T));
    }
    Verify("stream launches");
    // Kiln, 1000 queued launches then one wait.
    {
      auto T = Clock::now();
      for (int I = 0; I < 1000; ++I, ++Expected)
        check(S.launch(K, {Cubes, 1, 1}, Args), "queued launch");
      Submit.V.push_back(usSince(T) / 1000);
      check(S.synchronize(), "queued sync");
      QueuedTotal.V.push_back(usSince(T) / 1000);
      Verify("queued launches");
    }
    // Lookups by id.
    for (int I = 0; I < Reps; ++I) {
      auto T = Clock::now();
      Result<Kernel> F = D.findKernel("bench.affine");
      FindSmall.V.push_back(usSince(T));
      T = Clock::now();
      Result<Kernel> G = D.findKernel("bench.big");
      FindBig.V.push_back(usSince(T));
      T = Clock::now();
      Result<Kernel> L1 = D.loadKernel(AffineText, "affine", Opt);
      LoadSmall.V.push_back(usSince(T));
      T = Clock::now();
      Result<Kernel> L2 = D.loadKernel(Big, "big", BigOpt);
      LoadBig.V.push_back(usSince(T));
      if (!F.ok() || !G.ok() || !L1.ok() || !L2.ok())
        die("lookup failed");
    }
#ifdef KILN_BENCH_OPENCL
    if (HaveCL) {
      for (int I = 0; I < 5; ++I, ++CLExpected) {
        CL.enqueue();
        clFinish(CL.Q);
      }
      for (int I = 0; I < Reps; ++I, ++CLExpected) {
        auto T = Clock::now();
        CL.enqueue();
        clFinish(CL.Q);
        CLSync.V.push_back(usSince(T));
      }
      for (int I = 0; I < 20; ++I, ++CLExpected) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto T = Clock::now();
        CL.enqueue();
        clFinish(CL.Q);
        CLIdle.V.push_back(usSince(T));
      }
      auto T = Clock::now();
      for (int I = 0; I < 1000; ++I, ++CLExpected)
        CL.enqueue();
      CLSubmit.V.push_back(usSince(T) / 1000);
      clFinish(CL.Q);
      CLQueuedTotal.V.push_back(usSince(T) / 1000);
      if (CL.first() != CLExpected)
        die("wrong OpenCL result");
    }
#endif
  }

  report("kiln", "sync_launch_wait_us", Sync);
  report("kiln", "sync_launch_wait_after_1ms_idle_us", SyncIdle);
  report("kiln", "one_cube_inline_after_1ms_idle_us", OneCubeIdle);
  report("kiln", "stream_launch_sync_us", StreamRT);
  report("kiln", "stream_launch_sync_after_1ms_idle_us", StreamIdle);
  report("kiln", "queued_submit_us_per_launch", Submit);
  report("kiln", "queued_1000_total_us_per_launch", QueuedTotal);
  report("kiln", "find_kernel_small_us", FindSmall);
  report("kiln", "find_kernel_100_ops_us", FindBig);
  report("kiln", "load_known_id_small_us", LoadSmall);
  report("kiln", "load_known_id_100_ops_us", LoadBig);
#ifdef KILN_BENCH_OPENCL
  if (HaveCL) {
    report("opencl", "sync_launch_wait_us", CLSync);
    report("opencl", "sync_launch_wait_after_1ms_idle_us", CLIdle);
    report("opencl", "queued_submit_us_per_launch", CLSubmit);
    report("opencl", "queued_1000_total_us_per_launch", CLQueuedTotal);
  }
#endif
  std::printf("\n| measure | median µs | p10 | p90 | samples |\n"
              "| --- | --- | --- | --- | --- |\n");
  for (auto &[Name, V] : Rows)
    std::printf("| %s | %.3f | %.3f | %.3f | %.0f |\n", Name.c_str(), V[0],
                V[1], V[2], V[3]);
  return 0;
}
