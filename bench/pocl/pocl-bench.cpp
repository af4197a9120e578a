//===- pocl-bench.cpp - The bench suite on an OpenCL CPU driver (PoCL) ----===//
//
// pocl-bench [TAG]
//
// The suite of bench/kernels/*.kiln written in OpenCL C (the same algorithms,
// sizes, launch shapes, inputs and checks as kiln-bench), run through the
// OpenCL 1.2 C API on the first platform whose name contains
// $BENCH_PLATFORM (default: the first platform). For each kernel: the
// program's build, the first launch (PoCL compiles its work-group function
// there), 3 warm-ups, then the median and minimum of $BENCH_ITERS (default
// 30) launches, each clEnqueueNDRangeKernel + clFinish; the empty kernel's
// launch + wait (one work-item) and 1000 launches then one clFinish; 32
// small distinct programs one after another ($BENCH_SKIP_MANY=1 skips them).
//
// Output: "RESULT <TAG> <kernel> <metric> <value>" lines (ms unless the
// metric says _us), and "INFO <TAG> device <name> | <platform version>"
// (PoCL names the CPU it compiled for in both, e.g. pthread-skylake-avx512).
// A wrong result prints FAIL on stderr; the program then exits 1.
//
//===----------------------------------------------------------------------===//

#include <CL/cl.h>

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

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
}
double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

const char *Tag = "pocl";
int Iters = 30;
bool AnyFailure = false;

void result(const char *Kernel, const char *Metric, double Value) {
  std::printf("RESULT %s %s %s %.6g\n", Tag, Kernel, Metric, Value);
  std::fflush(stdout);
}
void checkResult(const char *Kernel, bool Ok, const std::string &Detail) {
  result(Kernel, "correct", Ok);
  if (!Ok) {
    std::fprintf(stderr, "FAIL %s: %s\n", Kernel, Detail.c_str());
    AnyFailure = true;
  }
}

[[noreturn]] void clFail(const char *What, cl_int Err) {
  std::fprintf(stderr, "pocl-bench: error: %s: OpenCL error %d\n", What, Err);
  std::exit(1);
}
void ok(cl_int Err, const char *What) {
  if (Err != CL_SUCCESS)
    clFail(What, Err);
}

// The suite's input generator (a 32-bit LCG, seed 12345), as kiln-bench's.
uint32_t LcgState = 12345u;
uint32_t lcg() {
  LcgState = LcgState * 1664525u + 1013904223u;
  return LcgState;
}
float frand() { return (lcg() >> 8) * (1.0f / 16777216.0f); }

// The kernels, in OpenCL C. Local size 256 where the Kiln kernel has
// cube_dim(256); matmul 16 x 16.
// One program per kernel, as each Kiln kernel is compiled on its own (and
// so that PoCL's cache does not serve one kernel's build to another).
struct KernelSource {
  const char *Name, *Src;
};
const KernelSource Sources[] = {
    {"init_k", R"CLC(
__kernel void init_k(__global uint *p) { p[get_global_id(0)] = 1u; }
)CLC"},
    {"empty_k", R"CLC(
__kernel void empty_k(void) {}
)CLC"},
    {"vadd", R"CLC(
__kernel void vadd(__global const float *a, __global const float *b,
                   __global float *c, uint n) {
  uint i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
)CLC"},
    {"saxpy", R"CLC(
__kernel void saxpy(float alpha, __global const float *x, __global float *y,
                    uint n) {
  uint i = get_global_id(0);
  if (i < n) y[i] = alpha * x[i] + y[i];
}
)CLC"},
    {"reduce_sum", R"CLC(
__kernel void reduce_sum(__global const float *in, __global float *partial) {
  __local float s[256];
  uint lid = get_local_id(0);
  s[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 0; k < 8; ++k) {
    uint st = 128u >> k;
    if (lid < st) s[lid] = s[lid] + s[lid + st];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = s[0];
}
)CLC"},
    {"matmul_tiled", R"CLC(
__kernel void matmul_tiled(__global const float *A, __global const float *B,
                           __global float *C, uint n) {
  __local float ta[16][16], tb[16][16];
  uint tx = get_local_id(0), ty = get_local_id(1);
  uint col = get_global_id(0), row = get_global_id(1);
  float acc = 0.0f;
  for (uint t = 0; t < n; t += 16) {
    ta[ty][tx] = A[row * n + t + tx];
    tb[ty][tx] = B[(t + ty) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < 16; ++k) acc = fma(ta[ty][k], tb[k][tx], acc);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * n + col] = acc;
}
)CLC"},
    {"softmax_rows", R"CLC(
__kernel void softmax_rows(__global const float *in, __global float *out,
                           uint ncols) {
  __local float red[256];
  uint row = get_group_id(0), lid = get_local_id(0);
  uint base = row * ncols;
  float m = -INFINITY;
  for (uint j = lid; j < ncols; j += 256) m = fmax(m, in[base + j]);
  red[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 0; k < 8; ++k) {
    uint st = 128u >> k;
    if (lid < st) red[lid] = fmax(red[lid], red[lid + st]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float mx = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  float s = 0.0f;
  for (uint j = lid; j < ncols; j += 256) {
    float e = exp(in[base + j] - mx);
    out[base + j] = e;
    s += e;
  }
  red[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 0; k < 8; ++k) {
    uint st = 128u >> k;
    if (lid < st) red[lid] = red[lid] + red[lid + st];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float inv = 1.0f / red[0];
  for (uint j = lid; j < ncols; j += 256)
    out[base + j] = out[base + j] * inv;
}
)CLC"},
    {"hist_global", R"CLC(
__kernel void hist_global(__global const uint *data, __global uint *bins,
                          uint n) {
  uint i = get_global_id(0);
  if (i < n) atomic_add(&bins[data[i]], 1u);
}
)CLC"},
    {"hist_local", R"CLC(
__kernel void hist_local(__global const uint *data, __global uint *bins,
                         uint n) {
  __local uint lh[256];
  uint lid = get_local_id(0);
  lh[lid] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint stride = get_num_groups(0) * 256;
  for (uint i = get_global_id(0); i < n; i += stride)
    atomic_add(&lh[data[i]], 1u);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint h = lh[lid];
  if (h != 0) atomic_add(&bins[lid], h);
}
)CLC"},
};

const char *sourceOf(const char *KName) {
  for (const KernelSource &S : Sources)
    if (std::strcmp(S.Name, KName) == 0)
      return S.Src;
  std::fprintf(stderr, "pocl-bench: error: no kernel %s\n", KName);
  std::exit(1);
}

cl_context Ctx;
cl_device_id Dev;
cl_command_queue Queue;

/// One program holding \p Src, built; its build time reported under
/// \p Name when \p Report.
cl_program buildProgram(const char *Name, const char *Src, bool Report,
                        double *Ms = nullptr) {
  cl_int Err;
  cl_program P = clCreateProgramWithSource(Ctx, 1, &Src, nullptr, &Err);
  ok(Err, "clCreateProgramWithSource");
  auto T0 = Clock::now();
  Err = clBuildProgram(P, 1, &Dev, "", nullptr, nullptr);
  double T = msSince(T0);
  if (Err != CL_SUCCESS) {
    size_t Len = 0;
    clGetProgramBuildInfo(P, Dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &Len);
    std::string Log(Len, '\0');
    clGetProgramBuildInfo(P, Dev, CL_PROGRAM_BUILD_LOG, Len, &Log[0], nullptr);
    std::fprintf(stderr, "pocl-bench: error: building %s:\n%s\n", Name,
                 Log.c_str());
    std::exit(1);
  }
  if (Ms)
    *Ms = T;
  if (Report)
    result(Name, "build_ms", T);
  return P;
}

/// Kernel \p KName, built in a program of its own.
cl_kernel kernelOf(const char *Name, const char *KName) {
  cl_program P = buildProgram(Name, sourceOf(KName), true);
  cl_int Err;
  cl_kernel K = clCreateKernel(P, KName, &Err);
  ok(Err, KName);
  return K;
}

template <typename T> void arg(cl_kernel K, cl_uint I, const T &V) {
  ok(clSetKernelArg(K, I, sizeof(T), &V), "clSetKernelArg");
}

/// A buffer initialised from \p Host (its pages touched by the copy).
cl_mem buffer(size_t Bytes, const void *Host) {
  cl_int Err;
  cl_mem M = clCreateBuffer(Ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            Bytes, const_cast<void *>(Host), &Err);
  ok(Err, "clCreateBuffer");
  return M;
}
void read(cl_mem M, size_t Bytes, void *Host) {
  ok(clEnqueueReadBuffer(Queue, M, CL_TRUE, 0, Bytes, Host, 0, nullptr,
                         nullptr),
     "clEnqueueReadBuffer");
}

double launch(cl_kernel K, cl_uint Dims, const size_t *Global,
              const size_t *Local) {
  auto T0 = Clock::now();
  ok(clEnqueueNDRangeKernel(Queue, K, Dims, nullptr, Global, Local, 0, nullptr,
                            nullptr),
     "clEnqueueNDRangeKernel");
  ok(clFinish(Queue), "clFinish");
  return msSince(T0);
}

/// First launch, 3 warm-ups, the median of Iters launches (\p Pre before
/// each, untimed). Returns the median.
double timeKernel(const char *Name, cl_kernel K, cl_uint Dims,
                  const size_t *Global, const size_t *Local,
                  const std::function<void()> &Pre, bool ReportFirst = true) {
  Pre();
  double First = launch(K, Dims, Global, Local);
  if (ReportFirst)
    result(Name, "first_launch_ms", First);
  for (int I = 0; I < 3; ++I) {
    Pre();
    launch(K, Dims, Global, Local);
  }
  int N = First > 300 ? std::min(Iters, 10) : Iters;
  std::vector<double> T;
  for (int I = 0; I < N; ++I) {
    Pre();
    T.push_back(launch(K, Dims, Global, Local));
  }
  double Med = median(T);
  result(Name, "kernel_ms_median", Med);
  result(Name, "kernel_ms_min", *std::min_element(T.begin(), T.end()));
  result(Name, "iters", N);
  return Med;
}

void nothing() {}

constexpr uint32_t N = 1u << 24;

} // namespace

int main(int argc, char **argv) {
  if (argc > 1)
    Tag = argv[1];
  if (const char *E = std::getenv("BENCH_ITERS"))
    Iters = std::max(1, std::atoi(E));
  const char *Want = std::getenv("BENCH_PLATFORM");

  auto T0 = Clock::now();
  cl_uint NP = 0;
  ok(clGetPlatformIDs(0, nullptr, &NP), "clGetPlatformIDs");
  std::vector<cl_platform_id> Plats(NP);
  ok(clGetPlatformIDs(NP, Plats.data(), nullptr), "clGetPlatformIDs");
  cl_platform_id Plat = nullptr;
  for (cl_platform_id P : Plats) {
    char Name[256] = {};
    clGetPlatformInfo(P, CL_PLATFORM_NAME, sizeof Name - 1, Name, nullptr);
    if (!Want || std::strstr(Name, Want)) {
      Plat = P;
      break;
    }
  }
  if (!Plat) {
    std::fprintf(stderr, "pocl-bench: error: no OpenCL platform%s%s\n",
                 Want ? " named like " : "", Want ? Want : "");
    return 1;
  }
  ok(clGetDeviceIDs(Plat, CL_DEVICE_TYPE_ALL, 1, &Dev, nullptr),
     "clGetDeviceIDs");
  cl_int Err;
  Ctx = clCreateContext(nullptr, 1, &Dev, nullptr, nullptr, &Err);
  ok(Err, "clCreateContext");
  Queue = clCreateCommandQueue(Ctx, Dev, 0, &Err);
  ok(Err, "clCreateCommandQueue");
  result("setup", "platform_ctx_queue_ms", msSince(T0));
  {
    char Name[256] = {}, Ver[256] = {};
    cl_uint Units = 0;
    clGetDeviceInfo(Dev, CL_DEVICE_NAME, sizeof Name - 1, Name, nullptr);
    clGetPlatformInfo(Plat, CL_PLATFORM_VERSION, sizeof Ver - 1, Ver, nullptr);
    clGetDeviceInfo(Dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof Units, &Units,
                    nullptr);
    std::printf("INFO %s device %s | %s\n", Tag, Name, Ver);
    result("setup", "compute_units", Units);
  }

  { // The first program of the process bears the compiler's set-up.
    cl_kernel K = kernelOf("init", "init_k");
    std::vector<uint32_t> Z(1024, 0);
    cl_mem P = buffer(Z.size() * 4, Z.data());
    arg(K, 0, P);
    size_t G = 1024, L = 64;
    result("init", "first_launch_ms", launch(K, 1, &G, &L));
    read(P, Z.size() * 4, Z.data());
    checkResult("init", Z[1023] == 1, "the first kernel wrote nothing");
  }

  std::vector<float> A(N), B(N), Out(N, 0.0f);
  for (uint32_t I = 0; I < N; ++I) {
    A[I] = frand();
    B[I] = frand();
  }
  const size_t G1 = N, L256 = 256;
  const cl_uint Nu = N;

  { // vadd
    cl_kernel K = kernelOf("vadd", "vadd");
    cl_mem dA = buffer(N * 4, A.data()), dB = buffer(N * 4, B.data()),
           dC = buffer(N * 4, Out.data());
    arg(K, 0, dA), arg(K, 1, dB), arg(K, 2, dC), arg(K, 3, Nu);
    double T = timeKernel("vadd", K, 1, &G1, &L256, nothing);
    result("vadd", "GBps", 12.0 * N / (T * 1e6));
    read(dC, N * 4, Out.data());
    double E = 0;
    for (uint32_t I = 0; I < N; ++I)
      E = std::max(E, (double)std::fabs(Out[I] - (A[I] + B[I])));
    checkResult("vadd", E == 0.0, "max abs error " + std::to_string(E));
    clReleaseMemObject(dA), clReleaseMemObject(dB), clReleaseMemObject(dC);
  }
  { // saxpy: checked after its first launch, from the initial y
    cl_kernel K = kernelOf("saxpy", "saxpy");
    const float Alpha = 0.5f;
    cl_mem dX = buffer(N * 4, A.data()), dY = buffer(N * 4, B.data());
    arg(K, 0, Alpha), arg(K, 1, dX), arg(K, 2, dY), arg(K, 3, Nu);
    result("saxpy", "first_launch_ms", launch(K, 1, &G1, &L256));
    read(dY, N * 4, Out.data());
    double E = 0;
    for (uint32_t I = 0; I < N; ++I)
      E = std::max(E, (double)std::fabs(Out[I] - (Alpha * A[I] + B[I])));
    checkResult("saxpy", E <= 1e-6, "max abs error " + std::to_string(E));
    double T = timeKernel("saxpy", K, 1, &G1, &L256, nothing, false);
    result("saxpy", "GBps", 12.0 * N / (T * 1e6));
    clReleaseMemObject(dX), clReleaseMemObject(dY);
  }
  { // reduce_sum
    cl_kernel K = kernelOf("reduce_sum", "reduce_sum");
    const uint32_t G = N / 256;
    std::vector<float> Part(G, 0.0f);
    cl_mem dIn = buffer(N * 4, A.data()), dP = buffer(G * 4, Part.data());
    arg(K, 0, dIn), arg(K, 1, dP);
    double T = timeKernel("reduce_sum", K, 1, &G1, &L256, nothing);
    result("reduce_sum", "GBps", 4.0 * N / (T * 1e6));
    read(dP, G * 4, Part.data());
    double S = 0, Ref = 0;
    for (float V : Part)
      S += V;
    for (float V : A)
      Ref += V;
    double Rel = std::fabs(S - Ref) / Ref;
    result("reduce_sum", "rel_err", Rel);
    checkResult("reduce_sum", Rel < 1e-5, "relative error " + std::to_string(Rel));
    clReleaseMemObject(dIn), clReleaseMemObject(dP);
  }
  { // matmul_tiled, 1024 x 1024
    const uint32_t M = 1024;
    cl_kernel K = kernelOf("matmul_tiled", "matmul_tiled");
    std::vector<float> MA(M * M), MB(M * M), MC(M * M, 0.0f);
    for (float &V : MA)
      V = frand() - 0.5f;
    for (float &V : MB)
      V = frand() - 0.5f;
    cl_mem dA = buffer(M * M * 4, MA.data()), dB = buffer(M * M * 4, MB.data()),
           dC = buffer(M * M * 4, MC.data());
    arg(K, 0, dA), arg(K, 1, dB), arg(K, 2, dC), arg(K, 3, M);
    size_t G[2] = {M, M}, L[2] = {16, 16};
    double T = timeKernel("matmul_tiled", K, 2, G, L, nothing);
    result("matmul_tiled", "GFLOPs", 2.0 * M * M * M / (T * 1e6));
    read(dC, M * M * 4, MC.data());
    std::vector<double> Ref(size_t(M) * M, 0.0);
    for (uint32_t I = 0; I < M; ++I)
      for (uint32_t Kk = 0; Kk < M; ++Kk) {
        double Av = MA[I * M + Kk];
        for (uint32_t J = 0; J < M; ++J)
          Ref[size_t(I) * M + J] += Av * MB[size_t(Kk) * M + J];
      }
    double E = 0;
    for (size_t I = 0; I < size_t(M) * M; ++I)
      E = std::max(E, std::fabs(MC[I] - Ref[I]));
    checkResult("matmul_tiled", E < 1e-3, "max abs error " + std::to_string(E));
    clReleaseMemObject(dA), clReleaseMemObject(dB), clReleaseMemObject(dC);
  }
  { // softmax_rows, 4096 x 1024
    const uint32_t Rows = 4096, Cols = 1024;
    cl_kernel K = kernelOf("softmax_rows", "softmax_rows");
    std::vector<float> X(size_t(Rows) * Cols), Y(X.size(), 0.0f);
    for (float &V : X)
      V = (frand() - 0.5f) * 8.0f;
    cl_mem dX = buffer(X.size() * 4, X.data()), dY = buffer(Y.size() * 4, Y.data());
    arg(K, 0, dX), arg(K, 1, dY), arg(K, 2, Cols);
    size_t G = size_t(Rows) * 256;
    double T = timeKernel("softmax_rows", K, 1, &G, &L256, nothing);
    result("softmax_rows", "GBps", 8.0 * Rows * Cols / (T * 1e6));
    read(dY, Y.size() * 4, Y.data());
    double E = 0;
    for (uint32_t R = 0; R < Rows; ++R) {
      const float *Xr = &X[size_t(R) * Cols];
      double Mx = -1e30, S = 0;
      for (uint32_t J = 0; J < Cols; ++J)
        Mx = std::max(Mx, (double)Xr[J]);
      for (uint32_t J = 0; J < Cols; ++J)
        S += std::exp(Xr[J] - Mx);
      for (uint32_t J = 0; J < Cols; ++J)
        E = std::max(E, std::fabs(Y[size_t(R) * Cols + J] -
                                  std::exp(Xr[J] - Mx) / S));
    }
    checkResult("softmax_rows", E < 1e-6, "max abs error " + std::to_string(E));
    clReleaseMemObject(dX), clReleaseMemObject(dY);
  }
  { // histograms over 2^24 values in 0..255
    std::vector<uint32_t> D(N), Ref(256, 0), Bins(256, 0), Zero(256, 0);
    for (uint32_t &V : D) {
      V = lcg() >> 24;
      Ref[V]++;
    }
    cl_mem dD = buffer(N * 4, D.data()), dBins = buffer(1024, Zero.data());
    auto ZeroBins = [&] {
      ok(clEnqueueWriteBuffer(Queue, dBins, CL_TRUE, 0, 1024, Zero.data(), 0,
                              nullptr, nullptr),
         "clEnqueueWriteBuffer");
    };
    const char *Names[] = {"hist_global", "hist_local"};
    const size_t Globals[] = {N, 256 * 256};
    for (int H = 0; H < 2; ++H) {
      cl_kernel K = kernelOf(Names[H], Names[H]);
      arg(K, 0, dD), arg(K, 1, dBins), arg(K, 2, Nu);
      double T = timeKernel(Names[H], K, 1, &Globals[H], &L256, ZeroBins);
      result(Names[H], "GBps", 4.0 * N / (T * 1e6));
      read(dBins, 1024, Bins.data());
      checkResult(Names[H], Bins == Ref, "bins differ from the reference");
    }
    clReleaseMemObject(dD), clReleaseMemObject(dBins);
  }
  { // launch latency: one work-item
    cl_kernel K = kernelOf("empty", "empty_k");
    size_t G = 1;
    result("empty", "first_launch_ms", launch(K, 1, &G, nullptr));
    for (int I = 0; I < 20; ++I)
      launch(K, 1, &G, nullptr);
    std::vector<double> T;
    for (int I = 0; I < 1000; ++I)
      T.push_back(launch(K, 1, &G, nullptr) * 1e3);
    result("empty", "launch_us_median", median(T));
    auto T1 = Clock::now();
    for (int I = 0; I < 1000; ++I)
      ok(clEnqueueNDRangeKernel(Queue, K, 1, nullptr, &G, nullptr, 0, nullptr,
                                nullptr),
         "clEnqueueNDRangeKernel");
    ok(clFinish(Queue), "clFinish");
    result("empty", "batched_us_per_launch", msSince(T1)); // ms / 1000 = us
  }
  if (!std::getenv("BENCH_SKIP_MANY")) { // 32 distinct small programs
    const uint32_t Count = 4096;
    std::vector<float> Ones(Count, 1.0f), Twos(Count, 2.0f), C(Count, 0.0f);
    cl_mem dA = buffer(Count * 4, Ones.data()), dB = buffer(Count * 4, Twos.data()),
           dC = buffer(Count * 4, C.data());
    double Build = 0, First = 0;
    bool Ok = true;
    auto TAll = Clock::now();
    for (int I = 0; I < 32; ++I) {
      float Kc = 0.25f * (I + 1);
      char Src[512], KName[32];
      std::snprintf(KName, sizeof KName, "vadd_k%d", I);
      std::snprintf(Src, sizeof Src,
                    "__kernel void %s(__global const float *a, __global const "
                    "float *b, __global float *c, uint n) {\n"
                    "  uint i = get_global_id(0);\n"
                    "  if (i < n) c[i] = a[i] + %.2ff * b[i];\n}\n",
                    KName, Kc);
      double Ms = 0;
      cl_program P = buildProgram("many32", Src, false, &Ms);
      Build += Ms;
      cl_kernel K = clCreateKernel(P, KName, &Err);
      ok(Err, KName);
      arg(K, 0, dA), arg(K, 1, dB), arg(K, 2, dC), arg(K, 3, Count);
      size_t G = Count;
      First += launch(K, 1, &G, &L256);
      read(dC, Count * 4, C.data());
      for (uint32_t J = 0; J < Count; J += 511)
        Ok = Ok && C[J] == 1.0f + 2.0f * Kc;
      clReleaseKernel(K);
      clReleaseProgram(P);
    }
    result("many32", "total_ms", msSince(TAll));
    result("many32", "build_ms_per_kernel", Build / 32);
    result("many32", "first_launch_ms_per_kernel", First / 32);
    checkResult("many32", Ok, "a vadd variant computed a wrong value");
  }
  return AnyFailure ? 1 : 0;
}
