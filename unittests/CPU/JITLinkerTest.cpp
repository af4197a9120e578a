//===- JITLinkerTest.cpp - Linking kernel objects into the process --------===//

#include "IRObject.h"

#include "kiln/CPU/JITLinker.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <deque>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace kiln;

namespace {

CubeMetadata vaddMetadata(const std::string &Symbol) {
  CubeMetadata M;
  M.KernelName = "vadd";
  M.Symbol = Symbol;
  M.CubeDim = {64, 1, 1};
  M.Params = {
      {"a", true, Type::scalar(ScalarKind::F32), AccessKind::Read},
      {"b", true, Type::scalar(ScalarKind::F32), AccessKind::Read},
      {"c", true, Type::scalar(ScalarKind::F32), AccessKind::Write},
      {"n", false, Type::scalar(ScalarKind::U32), AccessKind::ReadWrite}};
  return M;
}

/// Runs cubes [0, Cubes) of a vadd-shaped kernel over n elements and returns c.
std::vector<float> runVadd(const LoadedKernel &K, uint32_t N, uint32_t Cubes) {
  std::vector<float> A(N), B(N), C(N, -1.0f);
  for (uint32_t I = 0; I < N; ++I) {
    A[I] = float(I);
    B[I] = float(2 * I);
  }
  KernelArg Args[4] = {{A.data(), N}, {B.data(), N}, {C.data(), N}, {&N, 1}};
  LaunchArgs LA{Args, {Cubes, 1, 1}, 0, nullptr};
  alignas(64) char Scratch[64];
  K.entry()(&LA, 0, Cubes, Scratch);
  return C;
}

TEST(JITLinker, LoadCallUnload) {
  auto Linker = JITLinker::create();
  ASSERT_TRUE(!!Linker) << llvm::toString(Linker.takeError());
  auto Obj = test::compileIR(test::vaddIR("kiln_cube_vadd"));
  auto K = (*Linker)->load(Obj, vaddMetadata("kiln_cube_vadd"));
  ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  EXPECT_TRUE(K->valid());
  EXPECT_EQ(K->metadata().KernelName, "vadd");
  EXPECT_EQ((*Linker)->loadedCount(), 1u);

  std::vector<float> C = runVadd(*K, 100, 2);
  for (uint32_t I = 0; I < 100; ++I)
    EXPECT_EQ(C[I], float(3 * I)) << I;

  LoadedKernel Copy = *K;
  EXPECT_EQ(Copy.useCount(), 2);
  K->reset();
  EXPECT_FALSE(K->valid());
  EXPECT_EQ((*Linker)->loadedCount(), 1u); // the copy still holds it
  EXPECT_EQ(runVadd(Copy, 10, 1)[9], 27.0f);
  Copy.reset();
  EXPECT_EQ((*Linker)->loadedCount(), 0u);

  // The symbol is free again: loading the same object works.
  auto Again = (*Linker)->load(Obj, vaddMetadata("kiln_cube_vadd"));
  ASSERT_TRUE(!!Again) << llvm::toString(Again.takeError());
  EXPECT_EQ((*Linker)->dylibCount(), 1u);
}

/// KILN_PERF_MAP=1: the linked cube function is in /tmp/perf-<pid>.map
/// with its address and size, for `perf report`; unset: no map is written.
TEST(JITLinker, PerfMapNamesLinkedFunctions) {
  std::string Map = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  auto Linked = [&](bool Wanted) {
    std::remove(Map.c_str());
    if (Wanted)
      ::setenv("KILN_PERF_MAP", "1", 1);
    else
      ::unsetenv("KILN_PERF_MAP");
    auto Linker = JITLinker::create();
    ::unsetenv("KILN_PERF_MAP");
    EXPECT_TRUE(!!Linker);
    auto Obj = test::compileIR(test::vaddIR("kiln_cube_vadd"));
    auto K = (*Linker)->load(Obj, vaddMetadata("kiln_cube_vadd"));
    EXPECT_TRUE(!!K);
    return reinterpret_cast<uintptr_t>(K->entry());
  };
  uintptr_t Entry = Linked(true);
  std::ifstream In(Map);
  ASSERT_TRUE(In.good()) << Map;
  bool Found = false;
  for (std::string Line; std::getline(In, Line);) {
    std::istringstream Fields(Line);
    std::string Start, Size, Name;
    Fields >> Start >> Size >> Name;
    if (Name != "kiln_cube_vadd")
      continue;
    Found = true;
    EXPECT_EQ(std::stoull(Start, nullptr, 16), Entry) << Line;
    EXPECT_GT(std::stoull(Size, nullptr, 16), 16u) << Line;
  }
  EXPECT_TRUE(Found);
  In.close();
  Linked(false);
  EXPECT_FALSE(std::ifstream(Map).good()) << "written without KILN_PERF_MAP";
  std::remove(Map.c_str());
}

TEST(JITLinker, TwoKernelsWithTheSameSymbol) {
  auto Linker = JITLinker::create();
  ASSERT_TRUE(!!Linker);
  auto Obj1 = test::compileIR(test::vaddIR("kiln_cube_vadd", 1.0f));
  auto Obj2 = test::compileIR(test::vaddIR("kiln_cube_vadd", 10.0f));
  auto K1 = (*Linker)->load(Obj1, vaddMetadata("kiln_cube_vadd"));
  ASSERT_TRUE(!!K1) << llvm::toString(K1.takeError());
  auto K2 = (*Linker)->load(Obj2, vaddMetadata("kiln_cube_vadd"));
  ASSERT_TRUE(!!K2) << llvm::toString(K2.takeError());
  EXPECT_EQ((*Linker)->dylibCount(), 2u);
  EXPECT_NE(K1->entry(), K2->entry());
  EXPECT_EQ(runVadd(*K1, 8, 1)[7], 7.0f + 14.0f);
  EXPECT_EQ(runVadd(*K2, 8, 1)[7], 7.0f + 140.0f);

  // Distinct names share the first JITDylib.
  auto Obj3 = test::compileIR(test::vaddIR("kiln_cube_other"));
  auto K3 = (*Linker)->load(Obj3, vaddMetadata("kiln_cube_other"));
  ASSERT_TRUE(!!K3) << llvm::toString(K3.takeError());
  EXPECT_EQ((*Linker)->dylibCount(), 2u);
  EXPECT_EQ((*Linker)->loadedCount(), 3u);
}

TEST(JITLinker, KernelsOutliveTheLinker) {
  LoadedKernel K;
  {
    auto Linker = JITLinker::create();
    ASSERT_TRUE(!!Linker);
    auto Obj = test::compileIR(test::vaddIR("kiln_cube_vadd"));
    auto L = (*Linker)->load(Obj, vaddMetadata("kiln_cube_vadd"));
    ASSERT_TRUE(!!L);
    K = *L;
  }
  EXPECT_EQ(runVadd(K, 4, 1)[3], 9.0f);
  K.reset(); // ends the session; must neither crash nor hang
}

TEST(JITLinker, ErrorsSayWhy) {
  auto Linker = JITLinker::create();
  ASSERT_TRUE(!!Linker);
  std::vector<char> Junk(200, 'x');
  auto R = (*Linker)->load(Junk, vaddMetadata("kiln_cube_vadd"));
  ASSERT_FALSE(!!R);
  EXPECT_NE(llvm::toString(R.takeError()).find("cannot link the object"),
            std::string::npos);

  auto Obj = test::compileIR(test::vaddIR("kiln_cube_vadd"));
  R = (*Linker)->load(Obj, vaddMetadata("kiln_cube_nothere"));
  ASSERT_FALSE(!!R);
  EXPECT_NE(llvm::toString(R.takeError()).find("does not define"),
            std::string::npos);

  // An undefined external: the error names it, and nothing stays loaded.
  auto Undef = test::compileIR(R"(
declare void @kiln_no_such_function()
define void @kiln_cube_u(ptr %la, i32 %b, i32 %e, ptr %s) {
  call void @kiln_no_such_function()
  ret void
}
)");
  R = (*Linker)->load(Undef, vaddMetadata("kiln_cube_u"));
  ASSERT_FALSE(!!R);
  std::string Msg = llvm::toString(R.takeError());
  EXPECT_NE(Msg.find("kiln_no_such_function"), std::string::npos) << Msg;
  EXPECT_EQ((*Linker)->loadedCount(), 0u);
}

TEST(JITLinker, ResolvesLibmAndLibmvec) {
  auto Linker = JITLinker::create();
  ASSERT_TRUE(!!Linker);
  auto Obj = test::compileIR(R"(
declare float @expf(float)
define void @kiln_cube_e(ptr %la, i32 %b, i32 %e, ptr %s) {
  %args = load ptr, ptr %la
  %p = load ptr, ptr %args
  %x = load float, ptr %p
  %y = call float @expf(float %x)
  store float %y, ptr %p
  ret void
}
)");
  auto K = (*Linker)->load(Obj, vaddMetadata("kiln_cube_e"));
  ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  float X = 1.0f;
  KernelArg Args[1] = {{&X, 1}};
  LaunchArgs LA{Args, {1, 1, 1}, 0, nullptr};
  K->entry()(&LA, 0, 1, nullptr);
  EXPECT_NEAR(X, 2.7182817f, 1e-6f);
}

TEST(JITLinker, ManyLoadsAndUnloadsDoNotLeak) {
  auto Linker = JITLinker::create();
  ASSERT_TRUE(!!Linker);
  auto Obj = test::compileIR(test::vaddIR("kiln_cube_vadd"));
  for (int I = 0; I < 200; ++I) {
    auto K = (*Linker)->load(Obj, vaddMetadata("kiln_cube_vadd"));
    ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  }
  EXPECT_EQ((*Linker)->loadedCount(), 0u);
  EXPECT_EQ((*Linker)->dylibCount(), 1u);
}

TEST(JITLinker, LastCopyReleasedOnAnotherThread) {
  auto Linker = JITLinker::create();
  ASSERT_TRUE(!!Linker);
  auto ObjA = test::compileIR(test::vaddIR("kiln_cube_vadd", 1.0f));
  auto ObjB = test::compileIR(test::vaddIR("kiln_cube_vadd", 2.0f));
  std::mutex M;
  std::condition_variable CV;
  std::deque<LoadedKernel> Queue;
  bool Done = false;
  std::thread Releaser([&] {
    for (;;) {
      std::unique_lock<std::mutex> G(M);
      CV.wait(G, [&] { return Done || !Queue.empty(); });
      if (Queue.empty())
        return;
      LoadedKernel K = std::move(Queue.front());
      Queue.pop_front();
      G.unlock();
      float V = runVadd(K, 2, 1)[1]; // still callable on this thread
      EXPECT_TRUE(V == 3.0f || V == 5.0f) << V;
      K.reset(); // the last copy: unloads here, while the main thread loads
    }
  });
  for (int I = 0; I < 150; ++I) {
    auto K =
        (*Linker)->load(I % 2 ? ObjA : ObjB, vaddMetadata("kiln_cube_vadd"));
    ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
    float Want = I % 2 ? 3.0f : 5.0f; // a[1] + b[1] * k with a=1, b=2
    EXPECT_EQ(runVadd(*K, 2, 1)[1], Want);
    std::lock_guard<std::mutex> G(M);
    Queue.push_back(std::move(*K));
    CV.notify_one();
  }
  {
    std::lock_guard<std::mutex> G(M);
    Done = true;
    CV.notify_one();
  }
  Releaser.join();
  EXPECT_EQ((*Linker)->loadedCount(), 0u);
}

} // namespace
