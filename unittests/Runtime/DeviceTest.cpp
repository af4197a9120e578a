//===- DeviceTest.cpp - The device facade: compile, memoise, launch -------===//

#include "Support/Kernels.h"

#include "kiln/Runtime/Device.h"

#include <gtest/gtest.h>

#include <thread>

using namespace kiln;

namespace {

struct DeviceTest : ::testing::Test {
  std::unique_ptr<Device> Dev;
  std::optional<Module> M;
  void SetUp() override {
    DeviceOptions Opts;
    Opts.Threads = 2;
    // These tests count compilations: no store may serve them.
    Opts.StoreMode = DeviceStoreMode::Off;
    auto D = Device::create(Opts);
    ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
    Dev = std::move(*D);
    M = test::parseAndVerify(test::VaddText, Opts.Limits, "vadd.kiln");
    ASSERT_FALSE(M->Kernels.empty());
  }
  const Kernel &vadd() { return M->Kernels.front(); }
};

TEST_F(DeviceTest, CompilesOnceAndMemoises) {
  KernelStats S;
  auto K1 = Dev->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K1) << llvm::toString(K1.takeError());
  EXPECT_TRUE(S.Compiled);
  EXPECT_FALSE(S.Memoised);
  EXPECT_GT(S.CodegenSeconds, 0.0);
  auto K2 = Dev->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!K2);
  EXPECT_TRUE(S.Memoised);
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
      Buffer A = std::move(*Buffer::create(Type::scalar(ScalarKind::F32), N));
      Buffer B = std::move(*Buffer::create(Type::scalar(ScalarKind::F32), N));
      Buffer C = std::move(*Buffer::create(Type::scalar(ScalarKind::F32), N));
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
  Buffer A = std::move(*Buffer::create(Type::scalar(ScalarKind::F32), 65));
  ArgBinding Args[] = {
      ArgBinding::buffer(A.as<float>() + 1, Type::scalar(ScalarKind::F32), 64),
      ArgBinding::buffer(A), ArgBinding::buffer(A), ArgBinding::u32(64)};
  llvm::Error E = Dev->launch(*K, {1, 1, 1}, Args);
  ASSERT_TRUE(!!E);
  EXPECT_NE(llvm::toString(std::move(E)).find("(%a): the buffer is not aligned to 64 bytes"),
            std::string::npos);
}

TEST(Device, RejectsBadOptions) {
  DeviceOptions Opts;
  Opts.OptLevel = 7;
  auto D = Device::create(Opts);
  ASSERT_FALSE(!!D);
  EXPECT_NE(llvm::toString(D.takeError()).find("out of range"), std::string::npos);
}

} // namespace
