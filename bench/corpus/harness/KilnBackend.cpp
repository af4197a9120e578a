//===- KilnBackend.cpp - The corpus on Kiln, through the public API ------===//
//
// One Device for the process (the requested threads and target features,
// OptLevel 3, the environment's store). Per benchmark, every kernel of
// <bench>/<bench>.kiln is loaded once, before anything is timed, in the
// checked or unchecked variant; launches go to one Stream, and finish()
// synchronises it. Buffers are api::Buffers; a buffer argument is bound as
// a view of the whole buffer typed by the kernel's parameter.
//
//===----------------------------------------------------------------------===//

#include "harness/Harness.h"

#include "kiln/kiln.h"

#include <cstring>
#include <map>

namespace corpus {
namespace {

namespace api = kiln::api;

void check(const api::Status &S, const std::string &What) {
  if (!S.ok())
    throw BackendError(What + ": " + S.str());
}

const char *scalarName(Arg::Kind K) {
  switch (K) {
  case Arg::Kind::I32:
    return "i32";
  case Arg::Kind::U32:
    return "u32";
  case Arg::Kind::I64:
    return "i64";
  case Arg::Kind::U64:
    return "u64";
  case Arg::Kind::F32:
    return "f32";
  case Arg::Kind::F64:
    return "f64";
  case Arg::Kind::Buffer:
    break;
  }
  return "buffer";
}

api::Arg scalarArg(const Arg &A) {
  auto Get = [&](auto V) {
    std::memcpy(&V, A.Bytes.data(), sizeof(V));
    return V;
  };
  switch (A.K) {
  case Arg::Kind::I32:
    return api::Arg::i32(Get(int32_t()));
  case Arg::Kind::U32:
    return api::Arg::u32(Get(uint32_t()));
  case Arg::Kind::I64:
    return api::Arg::i64(Get(int64_t()));
  case Arg::Kind::U64:
    return api::Arg::u64(Get(uint64_t()));
  case Arg::Kind::F32:
    return api::Arg::f32(Get(float()));
  case Arg::Kind::F64:
    return api::Arg::f64(Get(double()));
  case Arg::Kind::Buffer:
    break;
  }
  throw BackendError("a buffer argument taken for a scalar");
}

class KilnBackend final : public SystemBackend {
public:
  KilnBackend(api::Device &Dev, const Options &O, const std::string &Bench)
      : Bench(Bench) {
    std::string Path = O.CorpusDir + "/" + Bench + "/" + Bench + ".kiln";
    std::string Text = readFile(Path);
    api::KernelOptions KO;
    KO.FileName = Path;
    KO.BoundsChecked = O.BoundsChecked;
    for (auto &R : Dev.loadKernels(Text, KO)) {
      check(R.status(), "loading " + Path);
      Kernels.emplace(R->name(), *R);
    }
    auto S = Dev.createStream();
    check(S.status(), "creating a stream");
    Queue = *S;
  }

  const char *name() const override { return "kiln"; }

  Buf create(size_t Bytes, const void *Init) override {
    auto B = api::Buffer::allocate(Bytes);
    check(B.status(), "allocating " + std::to_string(Bytes) + " bytes");
    // Kiln's zeroed memory may be pages not yet mapped: writing them here
    // keeps the page faults out of the timed run, as the other systems'
    // buffers are written when made.
    if (Init && Bytes)
      std::memcpy(B->data(), Init, Bytes);
    else if (Bytes)
      std::memset(B->data(), 0, Bytes);
    Buffers.push_back(*B);
    return Buf{int(Buffers.size() - 1)};
  }

  // Reads and writes are blocking, as the OpenCL backend's: the work queued
  // before them runs first, then the host copies.
  void write(Buf B, const void *Src, size_t Bytes) override {
    api::Buffer &To = buffer(B, Bytes);
    finish();
    if (Bytes)
      std::memcpy(To.data(), Src, Bytes);
  }

  void read(Buf B, void *Dst, size_t Bytes) override {
    api::Buffer &From = buffer(B, Bytes);
    finish();
    if (Bytes)
      std::memcpy(Dst, From.data(), Bytes);
  }

  void launch(const char *Name, Dim3 Cubes, Dim3 Cube,
              std::initializer_list<Arg> Args) override {
    auto It = Kernels.find(Name);
    if (It == Kernels.end())
      throw BackendError(std::string("no kernel '") + Name + "' in " + Bench +
                         ".kiln");
    const api::Kernel &K = It->second;
    api::Dim3 Shape = K.cubeDim();
    if (Shape.X != Cube.X || Shape.Y != Cube.Y || Shape.Z != Cube.Z)
      throw BackendError(std::string("kernel '") + Name + "' has cube_dim " +
                         str(Shape) + ", the host launches cubes of " +
                         str(api::Dim3{Cube.X, Cube.Y, Cube.Z}));
    auto Params = K.parameters();
    if (Params.size() != Args.size())
      throw BackendError(std::string("kernel '") + Name + "' has " +
                         std::to_string(Params.size()) +
                         " parameters, the host passes " +
                         std::to_string(Args.size()));
    LaunchArgs.clear();
    size_t I = 0;
    for (const Arg &A : Args) {
      const api::ParameterInfo &P = Params[I++];
      if (P.IsBuffer != (A.K == Arg::Kind::Buffer))
        throw BackendError(std::string("kernel '") + Name + "' parameter %" +
                           P.Name + " is " +
                           (P.IsBuffer ? "a buffer" : P.Type.str()) +
                           ", the host passes " + scalarName(A.K));
      if (A.K == Arg::Kind::Buffer)
        LaunchArgs.push_back(api::Arg::buffer(buffer(A.B, 0).view(P.Type)));
      else
        LaunchArgs.push_back(scalarArg(A));
    }
    check(Queue.launch(K, api::Dim3{Cubes.X, Cubes.Y, Cubes.Z}, LaunchArgs),
          std::string("launching '") + Name + "'");
  }

  void finish() override { check(Queue.synchronize(), "running " + Bench); }

  void releaseBuffers() override {
    finish();
    // The last launch's arguments hold views of the buffers: dropped here
    // with them, so that freeing the buffers (milliseconds for large ones)
    // is not paid by the next timed run, as the other systems free theirs
    // here too.
    LaunchArgs.clear();
    Buffers.clear();
  }

private:
  static std::string str(api::Dim3 D) {
    return "(" + std::to_string(D.X) + ", " + std::to_string(D.Y) + ", " +
           std::to_string(D.Z) + ")";
  }

  api::Buffer &buffer(Buf B, size_t Bytes) {
    if (B.Index < 0 || size_t(B.Index) >= Buffers.size())
      throw BackendError("buffer #" + std::to_string(B.Index) +
                         " was not made by this backend");
    api::Buffer &Buffer = Buffers[B.Index];
    if (Bytes > Buffer.size())
      throw BackendError("a copy of " + std::to_string(Bytes) +
                         " bytes into buffer #" + std::to_string(B.Index) +
                         " of " + std::to_string(Buffer.size()) + " bytes");
    return Buffer;
  }

  std::string Bench;
  std::map<std::string, api::Kernel, std::less<>> Kernels;
  api::Stream Queue;
  std::vector<api::Buffer> Buffers;
  std::vector<api::Arg> LaunchArgs;
};

class KilnSystem final : public System {
public:
  explicit KilnSystem(const Options &O) : O(O) {
    api::DeviceConfig Config;
    Config.Threads = O.Threads;
    Config.Features = O.MAttr;
    Config.OptLevel = 3;
    auto D = api::Device::create(Config);
    check(D.status(), "creating Kiln's device");
    Dev = std::move(*D);
  }
  const char *name() const override { return "kiln"; }
  std::string describe() const override {
    return std::to_string(Dev.concurrency()) + " threads, features '" +
           O.MAttr + "', " +
           (O.BoundsChecked ? "bounds-checked" : "unchecked") + ", O3";
  }
  std::unique_ptr<SystemBackend> open(const std::string &Bench) override {
    return std::make_unique<KilnBackend>(Dev, O, Bench);
  }

private:
  Options O;
  api::Device Dev;
};

} // namespace

std::unique_ptr<System> makeKilnSystem(const Options &O) {
  return std::make_unique<KilnSystem>(O);
}

} // namespace corpus
