//===- plugin.cpp - A shared object that runs a kernel through Kiln -------===//
//
// Built three ways by test/Plugin/CMakeLists.txt: against libkiln.so
// (kiln::shared), against libkiln.a the safe way (kiln::plugin), and against
// libkiln.a naively (kiln::kiln). kiln-plugin-host loads it with dlopen into
// a process that already holds other LLVMs and calls plugin_run().
//
//===----------------------------------------------------------------------===//

#include <kiln/kiln.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace api = kiln::api;

namespace {

// sin is a call into libm (or libmvec, vectorised): the compiled kernel
// must find it from inside a library loaded with RTLD_LOCAL.
const char *const Text = R"(
kernel @addsin cube_dim(64) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                             %c: buffer<f32, write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = sin %y : f32
    %r = add %x, %s : f32
    store %c[%i], %r
  }
}
)";

int fail(const char *What, const api::Status &S) {
  std::fprintf(stderr, "plugin: %s: %s\n", What, S.str().c_str());
  return 1;
}

} // namespace

/// 0 when the kernel ran and every element is right.
extern "C" __attribute__((visibility("default"))) int plugin_run() {
  constexpr uint32_t N = 1000;
  api::DeviceConfig Config;
  Config.Store = api::StoreMode::Off;
  api::Result<api::Device> Dev = api::Device::create(Config);
  if (!Dev.ok())
    return fail("Device::create", Dev.status());
  api::Result<api::Kernel> K = Dev->loadKernel(Text, "addsin");
  if (!K.ok())
    return fail("loadKernel", K.status());

  const api::ElementType F32 = api::ElementType::scalar(api::ScalarType::F32);
  api::Result<api::Buffer> A = api::Buffer::allocate(N * sizeof(float));
  api::Result<api::Buffer> B = api::Buffer::allocate(N * sizeof(float));
  api::Result<api::Buffer> C = api::Buffer::allocate(N * sizeof(float));
  for (const api::Result<api::Buffer> *Buf : {&A, &B, &C})
    if (!Buf->ok())
      return fail("Buffer::allocate", Buf->status());
  float *AData = static_cast<float *>(A->data());
  float *BData = static_cast<float *>(B->data());
  for (uint32_t I = 0; I < N; ++I) {
    AData[I] = static_cast<float>(I);
    BData[I] = 0.01f * static_cast<float>(I);
  }

  api::Result<api::Stream> S = Dev->createStream();
  if (!S.ok())
    return fail("createStream", S.status());
  if (api::Status St =
          S->launch(*K, api::Dim3{(N + 63) / 64, 1, 1},
                    {api::Arg::buffer(A->view(F32), api::Access::Read),
                     api::Arg::buffer(B->view(F32), api::Access::Read),
                     api::Arg::buffer(C->view(F32), api::Access::Write),
                     api::Arg::u32(N)});
      !St.ok())
    return fail("launch", St);
  if (api::Status St = S->synchronize(); !St.ok())
    return fail("synchronize", St);

  const float *CData = static_cast<const float *>(C->data());
  for (uint32_t I = 0; I < N; ++I) {
    float Want = AData[I] + std::sin(BData[I]);
    if (std::fabs(CData[I] - Want) > 1e-3f) {
      std::fprintf(stderr, "plugin: c[%u] = %g, expected %g\n", I,
                   static_cast<double>(CData[I]), static_cast<double>(Want));
      return 1;
    }
  }
  std::printf("plugin: addsin ran, all %u elements right\n", N);
  return 0;
}
