//===- consumer.cpp - A vadd through the installed C++ API ----------------===//
//
// Built against an installed Kiln (find_package(kiln), kiln::kiln) by the
// install test: c[i] = a[i] + b[i] for 1000 floats on a stream, every
// element checked. Exit code 0 only when all of them are right.
//
//===----------------------------------------------------------------------===//

#include <kiln/kiln.h>

#include <cstdint>
#include <cstdio>

namespace api = kiln::api;

namespace {

const char *const VAddText = R"(
kernel @vadd cube_dim(256) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                            %c: buffer<f32, write>, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %x = load %a[%i] : f32
    %y = load %b[%i] : f32
    %s = add %x, %y : f32
    store %c[%i], %s
  }
}
)";

int fail(const char *What, const api::Status &S) {
  std::fprintf(stderr, "consumer: %s: %s\n", What, S.str().c_str());
  return 1;
}

} // namespace

int main() {
  constexpr uint32_t N = 1000;
  const api::ElementType F32 = api::ElementType::scalar(api::ScalarType::F32);

  api::Result<api::Device> Dev = api::Device::create();
  if (!Dev.ok())
    return fail("Device::create", Dev.status());
  api::Result<api::Kernel> VAdd = Dev->loadKernel(VAddText, "vadd");
  if (!VAdd.ok())
    return fail("loadKernel", VAdd.status());

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
    BData[I] = 0.5f * static_cast<float>(I) + 1.0f;
  }

  api::Result<api::Stream> S = Dev->createStream();
  if (!S.ok())
    return fail("createStream", S.status());
  api::BufferView AView = A->view(F32), BView = B->view(F32),
                  CView = C->view(F32);
  if (api::Status St = S->launch(*VAdd, api::Dim3{(N + 255) / 256, 1, 1},
                                 {api::Arg::buffer(AView, api::Access::Read),
                                  api::Arg::buffer(BView, api::Access::Read),
                                  api::Arg::buffer(CView, api::Access::Write),
                                  api::Arg::u32(N)});
      !St.ok())
    return fail("launch", St);
  if (api::Status St = S->synchronize(); !St.ok())
    return fail("synchronize", St);

  const float *CData = static_cast<const float *>(CView.data());
  unsigned Bad = 0;
  for (uint32_t I = 0; I < N; ++I) {
    float Want = AData[I] + BData[I];
    if (CData[I] != Want && ++Bad <= 5)
      std::fprintf(stderr, "consumer: c[%u] = %g, expected %g\n", I,
                   static_cast<double>(CData[I]), static_cast<double>(Want));
  }
  if (Bad) {
    std::fprintf(stderr, "consumer: %u of %u elements wrong\n", Bad, N);
    return 1;
  }
  std::printf("consumer: vadd of %u floats through kiln::api: ok\n", N);
  return 0;
}
