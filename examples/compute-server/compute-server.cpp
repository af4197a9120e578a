//===- compute-server.cpp - A GPU runtime's CPU fallback on Kiln ----------===//
//
// What a runtime such as cubecl's compute server does with a GPU, done with
// Kiln's public API (kiln/kiln.h) alone:
//   - one memory pool, allocated once; tensors are views into it at
//     whatever offsets the pool's allocator hands out (4-byte granules here,
//     so most are not 64-byte aligned);
//   - kernels registered once under the runtime's own ids, then launched by
//     handle;
//   - every operation queued on one stream, including an in-place one whose
//     input and output are the same tensor; one read-back at the end.
// The result of a small two-layer network is checked against a plain C++
// reference. Exit status 0 when everything matches.
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace kiln::api;

namespace {

constexpr const char *Kernels = R"(
// y[r] = sum_k w[r * cols + k] * x[k] + b[r]
kernel @matvec cube_dim(64) (%w: buffer<f32, read>, %x: buffer<f32, read>,
                             %b: buffer<f32, read>, %y: buffer<f32, write>,
                             %rows: u32, %cols: u32) {
  %r = absolute_pos : u32
  %in = lt %r, %rows : bool
  if %in {
    %acc = var f32
    %b0 = load %b[%r] : f32
    set %acc, %b0
    %row = mul %r, %cols : u32
    for %k = 0:u32 to %cols {
      %wi = add %row, %k : u32
      %wv = load %w[%wi] : f32
      %xv = load %x[%k] : f32
      %a = get %acc : f32
      %n = fma %wv, %xv, %a : f32
      set %acc, %n
    }
    %out = get %acc : f32
    store %y[%r], %out
  }
}

// x[i] = max(x[i], 0), in place
kernel @relu cube_dim(64) (%x: buffer<f32, read_write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %v = load %x[%i] : f32
    %r = max %v, 0.0:f32 : f32
    store %x[%i], %r
  }
}

// out[i] = a[i] * s + c[i]: bound with out == a for an in-place update
kernel @scale_add cube_dim(64) (%a: buffer<f32, read>, %c: buffer<f32, read>,
                                %out: buffer<f32, write>, %s: f32, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %v = load %a[%i] : f32
    %w = load %c[%i] : f32
    %r = fma %v, %s, %w : f32
    store %out[%i], %r
  }
}
)";

/// A bump allocator over one Kiln buffer: the runtime's memory pool.
class MemoryPool {
public:
  explicit MemoryPool(Buffer B) : Pool(std::move(B)) {}
  /// A tensor of \p Count f32, at the next 4-byte granule.
  BufferView tensor(uint64_t Count) {
    BufferView V = Pool.view(ElementType::scalar(ScalarType::F32), Next, Count);
    Next += Count * 4 + 4; // a gap, so that views do not line up on 64 bytes
    return V;
  }
  const Buffer &buffer() const { return Pool; }

private:
  Buffer Pool;
  uint64_t Next = 4;
};

/// The runtime's compute server: kernels by id, one stream, one pool.
class ComputeServer {
public:
  static Result<ComputeServer> create(uint64_t PoolBytes) {
    DeviceConfig Config;
    Result<Device> D = Device::create(Config);
    if (!D.ok())
      return D.status();
    Result<Buffer> Pool = Buffer::allocate(PoolBytes);
    if (!Pool.ok())
      return Pool.status();
    Result<Stream> S = D->createStream();
    if (!S.ok())
      return S.status();
    return ComputeServer(std::move(*D), std::move(*Pool), std::move(*S));
  }

  /// Compiles every kernel of \p Text once, as one batch, under "Module.f".
  Status registerKernels(const std::string &Module, const char *Text) {
    KernelOptions O;
    O.Id = Module;
    O.FileName = Module + ".kiln";
    for (Result<Kernel> &K : Dev.loadKernels(Text, O)) {
      if (!K.ok())
        return K.status();
      ById[K->id()] = *K;
    }
    return Status();
  }

  BufferView empty(uint64_t Count) { return Pool.tensor(Count); }
  Status upload(const BufferView &T, const std::vector<float> &Host) {
    return Queue.copyToBuffer(T.buffer(), T.byteOffset(), Host.data(),
                              Host.size() * 4);
  }
  Status dispatch(const std::string &Id, uint32_t Threads,
                  std::initializer_list<Arg> Args) {
    auto It = ById.find(Id);
    if (It == ById.end())
      return Status(ErrorCode::NotFound, "no kernel " + Id);
    return Queue.launch(It->second, {(Threads + 63) / 64, 1, 1}, Args);
  }
  Status download(const BufferView &T, std::vector<float> &Host) {
    Host.resize(T.count());
    if (Status S = Queue.copyFromBuffer(Host.data(), T.buffer(), T.byteOffset(),
                                        T.count() * 4);
        !S.ok())
      return S;
    return Queue.synchronize();
  }

private:
  ComputeServer(Device D, Buffer B, Stream S)
      : Dev(std::move(D)), Pool(std::move(B)), Queue(std::move(S)) {}
  Device Dev;
  MemoryPool Pool;
  Stream Queue;
  std::map<std::string, Kernel> ById;
};

int fail(const char *What, const Status &S) {
  std::fprintf(stderr, "compute-server: %s: %s\n", What, S.str().c_str());
  return 1;
}

} // namespace

int main() {
  const uint32_t In = 96, Hidden = 130, Out = 10;
  Result<ComputeServer> Server = ComputeServer::create(1 << 20);
  if (!Server.ok())
    return fail("create", Server.status());
  if (Status S = Server->registerKernels("nn", Kernels); !S.ok())
    return fail("register", S);

  std::vector<float> X(In), W1(Hidden * In), B1(Hidden), W2(Out * Hidden),
      B2(Out);
  auto Fill = [](std::vector<float> &V, float Scale, int Seed) {
    for (size_t I = 0; I < V.size(); ++I)
      V[I] = Scale * float(int((I * 7919 + Seed * 104729) % 201) - 100) / 100;
  };
  Fill(X, 1.0f, 1);
  Fill(W1, 0.1f, 2);
  Fill(B1, 0.5f, 3);
  Fill(W2, 0.1f, 4);
  Fill(B2, 0.5f, 5);

  BufferView TX = Server->empty(In), TW1 = Server->empty(W1.size()),
             TB1 = Server->empty(Hidden), TW2 = Server->empty(W2.size()),
             TB2 = Server->empty(Out), TH = Server->empty(Hidden),
             TY = Server->empty(Out);
  for (auto [T, H] : {std::pair{&TX, &X}, {&TW1, &W1}, {&TB1, &B1},
                      {&TW2, &W2}, {&TB2, &B2}})
    if (Status S = Server->upload(*T, *H); !S.ok())
      return fail("upload", S);

  // h = relu(W1 x + b1); h = 0.5 h + b1 (in place); y = W2 h + b2
  Status S = Server->dispatch(
      "nn.matvec", Hidden,
      {Arg::buffer(TW1, Access::Read), Arg::buffer(TX, Access::Read),
       Arg::buffer(TB1, Access::Read), Arg::buffer(TH), Arg::u32(Hidden),
       Arg::u32(In)});
  if (S.ok())
    S = Server->dispatch("nn.relu", Hidden, {Arg::buffer(TH), Arg::u32(Hidden)});
  if (S.ok())
    S = Server->dispatch("nn.scale_add", Hidden,
                         {Arg::buffer(TH, Access::Read),
                          Arg::buffer(TB1, Access::Read), Arg::buffer(TH),
                          Arg::f32(0.5f), Arg::u32(Hidden)});
  if (S.ok())
    S = Server->dispatch(
        "nn.matvec", Out,
        {Arg::buffer(TW2, Access::Read), Arg::buffer(TH, Access::Read),
         Arg::buffer(TB2, Access::Read), Arg::buffer(TY), Arg::u32(Out),
         Arg::u32(Hidden)});
  if (!S.ok())
    return fail("dispatch", S);
  std::vector<float> Y;
  if (Status R = Server->download(TY, Y); !R.ok())
    return fail("read back", R);

  // The reference, in the same order of operations (fma per step).
  std::vector<float> H(Hidden), Ref(Out);
  for (uint32_t R = 0; R < Hidden; ++R) {
    float Acc = B1[R];
    for (uint32_t K = 0; K < In; ++K)
      Acc = std::fma(W1[R * In + K], X[K], Acc);
    H[R] = std::fma(std::max(Acc, 0.0f), 0.5f, B1[R]);
  }
  for (uint32_t R = 0; R < Out; ++R) {
    float Acc = B2[R];
    for (uint32_t K = 0; K < Hidden; ++K)
      Acc = std::fma(W2[R * Hidden + K], H[K], Acc);
    Ref[R] = Acc;
  }
  int Bad = 0;
  for (uint32_t R = 0; R < Out; ++R)
    if (Y[R] != Ref[R]) {
      std::fprintf(stderr, "y[%u] = %g, expected %g\n", R, Y[R], Ref[R]);
      ++Bad;
    }
  if (Bad)
    return 1;
  std::printf("compute-server: %u outputs match the reference (tensors at "
              "offsets %llu..%llu of one pool)\n",
              Out, (unsigned long long)TX.byteOffset(),
              (unsigned long long)TY.byteOffset());
  return 0;
}
