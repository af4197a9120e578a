//===- NativeBackend.cpp - The corpus as native OpenMP loops -------------===//
//
// Buffers are 64-byte aligned host memory; a launch calls the native kernel
// registered (KILN_CORPUS_NATIVE) under the launched name by the benchmark's
// own folder, with the grid, the cube shape, the arguments and the thread
// count. Launches run when called, so finish() has nothing to wait for.
//
//===----------------------------------------------------------------------===//

#include "harness/Harness.h"

#include <omp.h>

#include <cstdlib>
#include <map>

namespace corpus {
namespace {

struct FreeAligned {
  void operator()(void *P) const { std::free(P); }
};

class NativeBackend final : public SystemBackend {
public:
  NativeBackend(const Options &O, const std::string &Bench)
      : Bench(Bench), Threads(int(O.Threads)) {
    for (const NativeKernel &K : nativeKernels()) {
      if (K.Benchmark != Bench)
        continue;
      if (!Kernels.emplace(K.Name, K.Fn).second)
        throw BackendError("native kernel '" + K.Name +
                           "' registered twice by " + Bench);
    }
  }

  const char *name() const override { return "native"; }

  Buf create(size_t Bytes, const void *Init) override {
    // aligned_alloc wants a multiple of the alignment; one byte at least,
    // so that an empty buffer is still a distinct non-null pointer.
    size_t Rounded = (Bytes + 63) / 64 * 64;
    void *P = std::aligned_alloc(64, Rounded ? Rounded : 64);
    if (!P)
      throw BackendError("allocating " + std::to_string(Bytes) + " bytes");
    if (Init && Bytes)
      std::memcpy(P, Init, Bytes);
    else
      std::memset(P, 0, Rounded);
    Buffers.emplace_back(P);
    Sizes.push_back(Bytes);
    return Buf{int(Buffers.size() - 1)};
  }

  void write(Buf B, const void *Src, size_t Bytes) override {
    if (Bytes)
      std::memcpy(buffer(B, Bytes), Src, Bytes);
  }

  void read(Buf B, void *Dst, size_t Bytes) override {
    if (Bytes)
      std::memcpy(Dst, buffer(B, Bytes), Bytes);
  }

  void launch(const char *Name, Dim3 Cubes, Dim3 Cube,
              std::initializer_list<Arg> Args) override {
    auto It = Kernels.find(Name);
    if (It == Kernels.end())
      throw BackendError(std::string("no native kernel '") + Name +
                         "' registered by " + Bench + ".cpp");
    Launch.Cubes = Cubes;
    Launch.Cube = Cube;
    Launch.Threads = Threads;
    Launch.Args.assign(Args.begin(), Args.end());
    Launch.Pointers.clear();
    for (const Arg &A : Args)
      Launch.Pointers.push_back(A.K == Arg::Kind::Buffer ? buffer(A.B, 0)
                                                         : nullptr);
    It->second(Launch);
  }

  void finish() override {}

  void releaseBuffers() override {
    Buffers.clear();
    Sizes.clear();
  }

private:
  void *buffer(Buf B, size_t Bytes) {
    if (B.Index < 0 || size_t(B.Index) >= Buffers.size())
      throw BackendError("buffer #" + std::to_string(B.Index) +
                         " was not made by this backend");
    if (Bytes > Sizes[B.Index])
      throw BackendError("a copy of " + std::to_string(Bytes) +
                         " bytes into buffer #" + std::to_string(B.Index) +
                         " of " + std::to_string(Sizes[B.Index]) + " bytes");
    return Buffers[B.Index].get();
  }

  std::string Bench;
  int Threads;
  std::map<std::string, NativeKernelFn, std::less<>> Kernels;
  std::vector<std::unique_ptr<void, FreeAligned>> Buffers;
  std::vector<size_t> Sizes;
  NativeLaunch Launch;
};

class NativeSystem final : public System {
public:
  explicit NativeSystem(const Options &O) : O(O) {
    omp_set_num_threads(int(O.Threads));
  }
  const char *name() const override { return "native"; }
  std::string describe() const override {
    return std::to_string(O.Threads) + " OpenMP threads";
  }
  std::unique_ptr<SystemBackend> open(const std::string &Bench) override {
    return std::make_unique<NativeBackend>(O, Bench);
  }

private:
  Options O;
};

} // namespace

std::unique_ptr<System> makeNativeSystem(const Options &O) {
  return std::make_unique<NativeSystem>(O);
}

} // namespace corpus
