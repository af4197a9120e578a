//===- DeviceTest.cpp - The device facade: compile, memoise, launch -------===//

#include "Support/Kernels.h"

#include "kiln/Runtime/Device.h"

#include <gtest/gtest.h>

#include <thread>

#include <sys/mman.h>

using namespace kiln;

namespace {

struct DeviceTest : ::testing::Test {
  std::unique_ptr<RuntimeDevice> Dev;
  std::optional<Module> M;
  void SetUp() override {
    DeviceOptions Opts;
    Opts.Threads = 2;
    // These tests count compilations: no store may serve them.
    Opts.StoreMode = DeviceStoreMode::Off;
    auto D = RuntimeDevice::create(Opts);
    ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
    Dev = std::move(*D);
    M = test::parseAndVerify(test::VaddText, Opts.Limits, "vadd.kiln");
    ASSERT_FALSE(M->Kernels.empty());
  }
  const IRKernel &vadd() { return M->Kernels.front(); }
};

TEST_F(DeviceTest, CompilesOnceAndMemoizes) {
  KernelStats S;
  auto K1 = Dev->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K1) << llvm::toString(K1.takeError());
  EXPECT_TRUE(S.Compiled);
  EXPECT_FALSE(S.Memoized);
  EXPECT_GT(S.CodegenSeconds, 0.0);
  auto K2 = Dev->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K2);
  EXPECT_TRUE(S.Memoized);
  EXPECT_FALSE(S.Compiled);
  EXPECT_EQ(K1->entry(), K2->entry());

  CpuVariant Unchecked;
  Unchecked.BoundsChecked = false;
  auto K3 = Dev->getKernel(vadd(), Unchecked, &S);
  ASSERT_TRUE(!!K3) << llvm::toString(K3.takeError());
  EXPECT_TRUE(S.Compiled);
  EXPECT_NE(K3->entry(), K1->entry()); // same symbol, both loaded
}

TEST_F(DeviceTest, LaunchesFromSeveralThreads) {
  auto K = Dev->getKernel(vadd());
  ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  const uint32_t N = 5000;
  std::vector<std::thread> Threads;
  std::vector<std::string> Errors(4);
  // char, not bool: the bits of a vector<bool> share a word, and the
  // threads write them at once.
  std::vector<char> Right(4, false);
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      HostBuffer A =
          std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
      HostBuffer B =
          std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
      HostBuffer C =
          std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
      for (uint32_t I = 0; I < N; ++I) {
        A.as<float>()[I] = float(I);
        B.as<float>()[I] = float(T);
      }
      ArgBinding Args[] = {ArgBinding::buffer(A), ArgBinding::buffer(B),
                           ArgBinding::buffer(C), ArgBinding::u32(N)};
      for (int R = 0; R < 20; ++R)
        if (llvm::Error E = Dev->launch(*K, {(N + 63) / 64, 1, 1}, Args))
          Errors[T] = llvm::toString(std::move(E));
      bool Ok = true;
      for (uint32_t I = 0; I < N; ++I)
        Ok &= C.as<float>()[I] == float(I + T);
      Right[T] = Ok;
    });
  for (std::thread &T : Threads)
    T.join();
  for (int T = 0; T < 4; ++T) {
    EXPECT_EQ(Errors[T], "") << T;
    EXPECT_TRUE(Right[T]) << T;
  }
}

TEST_F(DeviceTest, LaunchChecksTheVariantsAlignment) {
  auto K = Dev->getKernel(vadd());
  ASSERT_TRUE(!!K);
  HostBuffer A =
      std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), 65));
  ArgBinding Args[] = {
      ArgBinding::buffer(A.as<float>() + 1, Type::scalar(ScalarKind::F32), 64),
      ArgBinding::buffer(A), ArgBinding::buffer(A), ArgBinding::u32(64)};
  llvm::Error E = Dev->launch(*K, {1, 1, 1}, Args);
  ASSERT_TRUE(!!E);
  EXPECT_NE(llvm::toString(std::move(E)).find("(%a): the buffer is not aligned to 64 bytes"),
            std::string::npos);
}

// `len` of a buffer bound with 2^32 elements or more saturates at 2^32 - 1
// instead of wrapping (2^32 would read as 0, and a guard `i < len` would
// skip the whole buffer). The buffers are address space only: nothing
// touches them.
TEST(Device, LenSaturatesAtTheLargestU32) {
  DeviceOptions Opts;
  Opts.Threads = 1;
  Opts.StoreMode = DeviceStoreMode::Off;
  auto D = RuntimeDevice::create(Opts);
  ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
  Module M = test::parseAndVerify(
      "kernel @lens cube_dim(1) (%b: buffer<u8, read>, %o: buffer<u32, "
      "write>) {\n  %n = len %b : u32\n  store %o[0:u32], %n\n}\n",
      Opts.Limits, "lens.kiln");
  const uint64_t Bytes = (uint64_t(1) << 32) + 4096;
  void *Space = mmap(nullptr, Bytes, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Space == MAP_FAILED) // an address-space limit (ulimit -v) below 4 GiB
    GTEST_SKIP() << "cannot reserve 4 GiB of address space";
  const Type U8 = Type::scalar(ScalarKind::U8);
  for (bool Checked : {true, false}) {
    CpuVariant V;
    V.BoundsChecked = Checked;
    auto K = (*D)->getKernel(M.Kernels.front(), V);
    ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
    for (uint64_t Count : {uint64_t(5), (uint64_t(1) << 32) - 1,
                           uint64_t(1) << 32, Bytes}) {
      alignas(64) uint32_t Out = 7;
      ArgBinding Args[] = {
          ArgBinding::buffer(Space, U8, Count, AccessKind::Read),
          ArgBinding::buffer(&Out, Type::scalar(ScalarKind::U32), 1)};
      llvm::Error E = (*D)->launch(*K, {1, 1, 1}, Args);
      ASSERT_FALSE(!!E) << llvm::toString(std::move(E));
      EXPECT_EQ(Out, Count == 5 ? 5u : 0xffffffffu)
          << Count << " elements, checked " << Checked;
    }
  }
  munmap(Space, Bytes);
}

TEST(Device, RejectsBadOptions) {
  DeviceOptions Opts;
  Opts.OptLevel = 7;
  auto D = RuntimeDevice::create(Opts);
  ASSERT_FALSE(!!D);
  EXPECT_NE(llvm::toString(D.takeError()).find("out of range"), std::string::npos);
}

} // namespace
