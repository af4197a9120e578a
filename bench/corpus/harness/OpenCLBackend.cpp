//===- OpenCLBackend.cpp - The corpus on an OpenCL CPU driver (PoCL) -----===//
//
// The OpenCL 1.2 C API on the first platform whose name contains
// $BENCH_PLATFORM (default "Portable": PoCL), its CPU device. The thread
// count goes to PoCL through POCL_MAX_PTHREAD_COUNT, set before the first
// platform query. Per benchmark, <bench>/<bench>.cl is built with
// -cl-std=CL1.2 (no fast-math flag); kernels are made by name on first use
// and kept. A launch's global size is the grid times the cube shape, its
// local size the cube shape. Buffers are CL_MEM_READ_WRITE; reads and writes
// are blocking; finish() is clFinish.
//
//===----------------------------------------------------------------------===//

#include "harness/Harness.h"

#ifdef KILN_CORPUS_HAVE_OPENCL

#include <CL/cl.h>

#include <cstdlib>
#include <map>

namespace corpus {
namespace {

void check(cl_int Err, const std::string &What) {
  if (Err != CL_SUCCESS)
    throw BackendError(What + " failed: OpenCL error " + std::to_string(Err));
}

std::string platformInfo(cl_platform_id P, cl_platform_info What) {
  size_t Size = 0;
  if (clGetPlatformInfo(P, What, 0, nullptr, &Size) != CL_SUCCESS || !Size)
    return "";
  std::string S(Size, '\0');
  clGetPlatformInfo(P, What, Size, S.data(), nullptr);
  S.resize(S.find('\0') == std::string::npos ? S.size() : S.find('\0'));
  return S;
}

/// The process's platform, device, context and queue.
struct Context {
  cl_device_id Dev = nullptr;
  cl_context Ctx = nullptr;
  cl_command_queue Queue = nullptr;

  ~Context() {
    if (Queue)
      clReleaseCommandQueue(Queue);
    if (Ctx)
      clReleaseContext(Ctx);
  }
};

class OpenCLBackend final : public SystemBackend {
public:
  OpenCLBackend(Context &C, const Options &O, const std::string &Bench)
      : C(C), Bench(Bench) {
    std::string Path = O.CorpusDir + "/" + Bench + "/" + Bench + ".cl";
    std::string Text = readFile(Path);
    const char *Src = Text.c_str();
    size_t Len = Text.size();
    cl_int Err;
    Program = clCreateProgramWithSource(C.Ctx, 1, &Src, &Len, &Err);
    check(Err, "clCreateProgramWithSource of " + Path);
    Err = clBuildProgram(Program, 1, &C.Dev, "-cl-std=CL1.2", nullptr, nullptr);
    if (Err != CL_SUCCESS) {
      size_t Size = 0;
      clGetProgramBuildInfo(Program, C.Dev, CL_PROGRAM_BUILD_LOG, 0, nullptr,
                            &Size);
      std::string Log(Size, '\0');
      clGetProgramBuildInfo(Program, C.Dev, CL_PROGRAM_BUILD_LOG, Size,
                            Log.data(), nullptr);
      clReleaseProgram(Program);
      throw BackendError("building " + Path + " failed (OpenCL error " +
                         std::to_string(Err) + "):\n" + Log);
    }
  }

  ~OpenCLBackend() override {
    clFinish(C.Queue);
    releaseAll();
    for (auto &[Name, K] : Kernels)
      clReleaseKernel(K);
    if (Program)
      clReleaseProgram(Program);
  }

  const char *name() const override { return "opencl"; }

  Buf create(size_t Bytes, const void *Init) override {
    // OpenCL refuses an empty buffer: make one of a few bytes instead.
    size_t Size = Bytes ? Bytes : 4;
    cl_int Err;
    cl_mem M = clCreateBuffer(C.Ctx, CL_MEM_READ_WRITE, Size, nullptr, &Err);
    check(Err, "clCreateBuffer of " + std::to_string(Bytes) + " bytes");
    Buffers.push_back(M);
    Sizes.push_back(Bytes);
    Buf B{int(Buffers.size() - 1)};
    if (Init && Bytes) {
      write(B, Init, Bytes);
    } else {
      std::vector<unsigned char> Zeros(Size, 0);
      check(clEnqueueWriteBuffer(C.Queue, M, CL_TRUE, 0, Size, Zeros.data(), 0,
                                 nullptr, nullptr),
            "clEnqueueWriteBuffer");
    }
    return B;
  }

  void write(Buf B, const void *Src, size_t Bytes) override {
    cl_mem M = buffer(B, Bytes);
    if (Bytes)
      check(clEnqueueWriteBuffer(C.Queue, M, CL_TRUE, 0, Bytes, Src, 0, nullptr,
                                 nullptr),
            "clEnqueueWriteBuffer");
  }

  void read(Buf B, void *Dst, size_t Bytes) override {
    cl_mem M = buffer(B, Bytes);
    if (Bytes)
      check(clEnqueueReadBuffer(C.Queue, M, CL_TRUE, 0, Bytes, Dst, 0, nullptr,
                                nullptr),
            "clEnqueueReadBuffer");
  }

  void launch(const char *Name, Dim3 Cubes, Dim3 Cube,
              std::initializer_list<Arg> Args) override {
    cl_kernel K = kernel(Name);
    std::string Where = std::string("kernel '") + Name + "'";
    cl_uint I = 0;
    for (const Arg &A : Args) {
      cl_int Err;
      if (A.K == Arg::Kind::Buffer) {
        cl_mem M = buffer(A.B, 0);
        Err = clSetKernelArg(K, I, sizeof(cl_mem), &M);
      } else {
        Err = clSetKernelArg(K, I, A.size(), A.Bytes.data());
      }
      check(Err, "clSetKernelArg " + std::to_string(I) + " of " + Where);
      ++I;
    }
    size_t Global[3] = {size_t(Cubes.X) * Cube.X, size_t(Cubes.Y) * Cube.Y,
                        size_t(Cubes.Z) * Cube.Z};
    size_t Local[3] = {Cube.X, Cube.Y, Cube.Z};
    cl_uint Dims = Global[2] > 1 || Local[2] > 1   ? 3
                   : Global[1] > 1 || Local[1] > 1 ? 2
                                                   : 1;
    if (!Cubes.count())
      return; // OpenCL refuses a global size of 0; Kiln runs nothing
    check(clEnqueueNDRangeKernel(C.Queue, K, Dims, nullptr, Global, Local, 0,
                                 nullptr, nullptr),
          "clEnqueueNDRangeKernel of " + Where);
  }

  void finish() override { check(clFinish(C.Queue), "clFinish"); }

  void releaseBuffers() override {
    finish();
    releaseAll();
  }

private:
  void releaseAll() {
    for (cl_mem M : Buffers)
      clReleaseMemObject(M);
    Buffers.clear();
    Sizes.clear();
  }

  cl_kernel kernel(const char *Name) {
    auto It = Kernels.find(Name);
    if (It != Kernels.end())
      return It->second;
    cl_int Err;
    cl_kernel K = clCreateKernel(Program, Name, &Err);
    check(Err,
          std::string("clCreateKernel '") + Name + "' of " + Bench + ".cl");
    Kernels.emplace(Name, K);
    return K;
  }

  cl_mem buffer(Buf B, size_t Bytes) {
    if (B.Index < 0 || size_t(B.Index) >= Buffers.size())
      throw BackendError("buffer #" + std::to_string(B.Index) +
                         " was not made by this backend");
    if (Bytes > Sizes[B.Index])
      throw BackendError("a copy of " + std::to_string(Bytes) +
                         " bytes into buffer #" + std::to_string(B.Index) +
                         " of " + std::to_string(Sizes[B.Index]) + " bytes");
    return Buffers[B.Index];
  }

  Context &C;
  std::string Bench;
  cl_program Program = nullptr;
  std::map<std::string, cl_kernel, std::less<>> Kernels;
  std::vector<cl_mem> Buffers;
  std::vector<size_t> Sizes;
};

class OpenCLSystem final : public System {
public:
  explicit OpenCLSystem(const Options &O) : O(O) {
    // PoCL's CPU driver reads its thread count when it starts.
    setenv("POCL_MAX_PTHREAD_COUNT", std::to_string(O.Threads).c_str(), 1);
    const char *Want = std::getenv("BENCH_PLATFORM");
    if (!Want || !*Want)
      Want = "Portable";
    cl_uint Count = 0;
    check(clGetPlatformIDs(0, nullptr, &Count), "clGetPlatformIDs");
    std::vector<cl_platform_id> Platforms(Count);
    check(clGetPlatformIDs(Count, Platforms.data(), nullptr),
          "clGetPlatformIDs");
    cl_platform_id Platform = nullptr;
    for (cl_platform_id P : Platforms)
      if (platformInfo(P, CL_PLATFORM_NAME).find(Want) != std::string::npos) {
        Platform = P;
        break;
      }
    if (!Platform)
      throw BackendError(std::string("no OpenCL platform named like '") + Want +
                         "' (set BENCH_PLATFORM)");
    Version = platformInfo(Platform, CL_PLATFORM_VERSION);
    check(clGetDeviceIDs(Platform, CL_DEVICE_TYPE_CPU, 1, &C.Dev, nullptr),
          "clGetDeviceIDs (a CPU device)");
    cl_int Err;
    C.Ctx = clCreateContext(nullptr, 1, &C.Dev, nullptr, nullptr, &Err);
    check(Err, "clCreateContext");
    C.Queue = clCreateCommandQueue(C.Ctx, C.Dev, 0, &Err);
    check(Err, "clCreateCommandQueue");
  }
  const char *name() const override { return "opencl"; }
  std::unique_ptr<SystemBackend> open(const std::string &Bench) override {
    return std::make_unique<OpenCLBackend>(C, O, Bench);
  }
  std::string describe() const override { return Version; }

private:
  Options O;
  Context C;
  std::string Version;
};

} // namespace

bool haveOpenCL() { return true; }

std::unique_ptr<System> makeOpenCLSystem(const Options &O) {
  return std::make_unique<OpenCLSystem>(O);
}

} // namespace corpus

#else // !KILN_CORPUS_HAVE_OPENCL

namespace corpus {

bool haveOpenCL() { return false; }

std::unique_ptr<System> makeOpenCLSystem(const Options &) {
  throw BackendError(
      "kiln-corpus was built without OpenCL (no OpenCL "
      "headers or ICD loader when it was configured: install "
      "ocl-icd-opencl-dev and opencl-headers, then reconfigure)");
}

} // namespace corpus

#endif // KILN_CORPUS_HAVE_OPENCL
