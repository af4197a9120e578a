//===- DebugPrintTest.cpp - debug_print and clusters through the C++ API --===//
//
// The text of debug_print reaches Device::setDebugPrintHandler whole, once
// per launch (docs/LangRef.md §14), from a text kernel and a built one,
// through Device::launch and a stream; the per-launch limit; and a launch
// whose cube count does not tile a kernel's clusters (§15) is refused.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "kiln/IR/Builder.h"
#include "kiln/IR/Printer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;
using kiln::AccessKind;
using kiln::OpKind;
using kiln::ScalarKind;

namespace {

const char *PrintText = R"(
kernel @hello cube_dim(4) (%x: f32) {
  %u = unit_pos : u32
  %c = cube_pos : u32
  %h = cast %x : f16
  debug_print "cube %u unit %u x=%.2f h=%g\n", %c, %u, %x, %h
}
)";

/// Each launch's text, as the handler got it.
struct Captured {
  std::mutex Lock;
  std::vector<std::string> Launches;
  auto handler() {
    return [this](std::string_view Text) {
      std::lock_guard<std::mutex> G(Lock);
      Launches.emplace_back(Text);
    };
  }
};

std::vector<std::string> sortedLines(const std::string &Text) {
  std::vector<std::string> Lines;
  std::istringstream In(Text);
  for (std::string L; std::getline(In, L);)
    Lines.push_back(L);
  std::sort(Lines.begin(), Lines.end());
  return Lines;
}

TEST(DebugPrintTest, HandlerGetsEachLaunchWhole) {
  Device D = memoryDevice();
  Captured Got;
  D.setDebugPrintHandler(Got.handler());
  Result<Kernel> K = D.loadKernel(PrintText);
  ASSERT_TRUE(K.ok()) << K.status().str();
  ASSERT_TRUE(D.launch(*K, {2, 1, 1}, {Arg::f32(2.5f)}).ok());
  ASSERT_TRUE(D.launch(*K, {1, 1, 1}, {Arg::f32(-1.0f)}).ok());
  ASSERT_EQ(Got.Launches.size(), 2u);
  std::vector<std::string> Want;
  for (unsigned C = 0; C < 2; ++C)
    for (unsigned U = 0; U < 4; ++U)
      Want.push_back("cube " + std::to_string(C) + " unit " +
                     std::to_string(U) + " x=2.50 h=2.5");
  std::sort(Want.begin(), Want.end());
  EXPECT_EQ(sortedLines(Got.Launches[0]), Want);
  EXPECT_EQ(Got.Launches[1], "cube 0 unit 0 x=-1.00 h=-1\n"
                             "cube 0 unit 1 x=-1.00 h=-1\n"
                             "cube 0 unit 2 x=-1.00 h=-1\n"
                             "cube 0 unit 3 x=-1.00 h=-1\n");
  // A launch of no cubes prints nothing and calls no handler.
  ASSERT_TRUE(D.launch(*K, {0, 1, 1}, {Arg::f32(1.0f)}).ok());
  EXPECT_EQ(Got.Launches.size(), 2u);
}

// Destroying the device from its own callback cannot drain it there (the
// drain would wait for the callback): the destructor returns at once and
// the device closes on a thread of its own once the callback has returned.
TEST(DebugPrintTest, DeviceDestroyedFromItsOwnCallbackClosesAfterIt) {
  std::optional<Device> D(memoryDevice());
  Result<Kernel> K = D->loadKernel(PrintText);
  ASSERT_TRUE(K.ok()) << K.status().str();
  Result<Stream> S = D->createStream();
  ASSERT_TRUE(S.ok());
  std::atomic<bool> InCallback{false}, Returned{false};
  D->setDebugPrintHandler([&](std::string_view) {
    if (!D) // a later launch, before the device closed
      return;
    InCallback = D->inCallback() && S->inCallback();
    D.reset();
    Returned = true;
  });
  ASSERT_TRUE(S->launch(*K, {1, 1, 1}, {Arg::f32(1.0f)}).ok());
  EXPECT_TRUE(S->synchronize().ok());
  EXPECT_TRUE(Returned);
  EXPECT_TRUE(InCallback);
  // Closed soon after: a new submission is refused.
  Status Late;
  for (int I = 0; I < 500; ++I) {
    Late = S->launch(*K, {1, 1, 1}, {Arg::f32(2.0f)});
    if (Late.code() == ErrorCode::Cancelled)
      break;
    (void)S->synchronize();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Late.code(), ErrorCode::Cancelled) << Late.str();
  EXPECT_FALSE(S->inCallback());
}

TEST(DebugPrintTest, StreamLaunchesDeliverBeforeSynchronize) {
  Device D = memoryDevice();
  Captured Got;
  D.setDebugPrintHandler(Got.handler());
  Result<Kernel> K = D.loadKernel(PrintText);
  ASSERT_TRUE(K.ok()) << K.status().str();
  Result<Stream> S = D.createStream();
  ASSERT_TRUE(S.ok());
  for (int I = 0; I < 3; ++I)
    ASSERT_TRUE(S->launch(*K, {1, 1, 1}, {Arg::f32(float(I))}).ok());
  ASSERT_TRUE(S->synchronize().ok());
  std::lock_guard<std::mutex> G(Got.Lock);
  ASSERT_EQ(Got.Launches.size(), 3u);
  for (int I = 0; I < 3; ++I)
    EXPECT_NE(Got.Launches[I].find("x=" + std::to_string(I) + ".00"),
              std::string::npos)
        << Got.Launches[I];
}

TEST(DebugPrintTest, LimitDropsWholePrintsAndSaysSo) {
  Device D = memoryDevice(1);
  Captured Got;
  D.setDebugPrintHandler(Got.handler());
  // Each line is 29 bytes; 64 of them are 1856.
  D.setDebugPrintLimit(100);
  Result<Kernel> K = D.loadKernel(R"(
kernel @flood cube_dim(64) () {
  %u = unit_pos : u32
  debug_print "a line of thirty bytes: %04u\n", %u
}
)");
  ASSERT_TRUE(K.ok()) << K.status().str();
  ASSERT_TRUE(D.launch(*K, {1, 1, 1}, {}).ok());
  ASSERT_EQ(Got.Launches.size(), 1u);
  // One thread runs the cube's units in order: the first three fit.
  EXPECT_EQ(Got.Launches[0], "a line of thirty bytes: 0000\n"
                             "a line of thirty bytes: 0001\n"
                             "a line of thirty bytes: 0002\n"
                             "... 1769 bytes of debug output dropped\n");
}

TEST(DebugPrintTest, BuiltKernelPrints) {
  kiln::KernelBuilder B("built");
  B.setCubeDim({2});
  kiln::ValueId U = B.builtin(kiln::OpKind::UnitPos);
  B.debugPrint("unit %u of %d\n", {U, kiln::lit::i32(-2)});
  llvm::Expected<kiln::IRKernel> IR = B.finish();
  ASSERT_TRUE(!!IR) << llvm::toString(IR.takeError());
  Device D = memoryDevice();
  Captured Got;
  D.setDebugPrintHandler(Got.handler());
  Result<Kernel> K = D.loadKernel(*IR);
  ASSERT_TRUE(K.ok()) << K.status().str();
  ASSERT_TRUE(D.launch(*K, {1, 1, 1}, {}).ok());
  ASSERT_EQ(Got.Launches.size(), 1u);
  EXPECT_EQ(Got.Launches[0], "unit 0 of -2\nunit 1 of -2\n");
}

TEST(DebugPrintTest, BadFormatIsALocatedKernelError) {
  Device D = memoryDevice();
  Result<Kernel> K = D.loadKernel(R"(kernel @k cube_dim(1) () {
  debug_print "%d %d", 1:i32
}
)");
  ASSERT_FALSE(K.ok());
  EXPECT_EQ(K.status().code(), ErrorCode::InvalidKernel);
  EXPECT_NE(K.status().message().find(
                "2:3: error: debug_print format has 2 conversions but 1 "
                "operand is given"),
            std::string::npos)
      << K.status().message();
}

TEST(ClusterTest, CubeCountMustTileTheClusters) {
  Device D = memoryDevice();
  Result<Kernel> K = D.loadKernel(R"(
kernel @c cube_dim(1) cluster_dim(2, 1, 3) (%o: buffer<u32, write>) {
  %c = cube_pos : u32
  %r = cube_pos_cluster : u32
  store %o[%c], %r
}
)");
  ASSERT_TRUE(K.ok()) << K.status().str();
  Result<Buffer> O = Buffer::allocate(64 * 4);
  ASSERT_TRUE(O.ok());
  Arg Out = Arg::buffer(O->view(ElementType::scalar(ScalarType::U32)));
  Status Bad = D.launch(*K, {4, 1, 2}, {Out});
  EXPECT_EQ(Bad.code(), ErrorCode::InvalidLaunch);
  EXPECT_NE(Bad.message().find("cube count (4, 1, 2) is not a multiple of "
                               "the kernel's cluster_dim(2, 1, 3) in z"),
            std::string::npos)
      << Bad.message();
  ASSERT_TRUE(D.launch(*K, {4, 1, 3}, {Out}).ok());
  auto *V = static_cast<const uint32_t *>(O->data());
  for (uint32_t C = 0; C < 12; ++C) {
    uint32_t X = C % 4, Z = C / 4;
    EXPECT_EQ(V[C], X % 2 + (Z % 3) * 2) << "cube " << C;
  }
  // Zero cubes tile anything.
  Status Zero = D.launch(*K, {0, 1, 1}, {Out});
  EXPECT_TRUE(Zero.ok()) << Zero.str();
}

// A cluster shape set through the builder: printed in the kernel's text
// (so part of its id) and read back by the cluster builtins at run time.
TEST(ClusterTest, BuiltKernelReadsItsClusterShape) {
  kiln::KernelBuilder B("built_clusters");
  B.setCubeDim({1});
  B.setClusterDim({1, 2, 3});
  kiln::ValueId Out = B.addBuffer("o", kiln::Type::scalar(ScalarKind::U32),
                                  AccessKind::Write);
  kiln::ValueId Cube = B.builtin(kiln::OpKind::CubePos);
  kiln::ValueId Rank = B.builtin(kiln::OpKind::CubePosCluster);
  kiln::ValueId Size = B.builtin(kiln::OpKind::ClusterDim);
  kiln::ValueId DimZ = B.builtin(kiln::OpKind::ClusterDim, 3);
  kiln::ValueId Twice = B.binary(OpKind::Mul, Cube, kiln::lit::u32(2));
  kiln::ValueId Next = B.binary(OpKind::Add, Twice, kiln::lit::u32(1));
  B.store(Out, Twice, Rank);
  B.store(Out, Next, B.binary(OpKind::Add, Size, DimZ));
  llvm::Expected<kiln::IRKernel> IR = B.finish();
  ASSERT_TRUE(!!IR) << llvm::toString(IR.takeError());
  std::string Text = kiln::printKernel(*IR);
  EXPECT_NE(Text.find("cluster_dim(1, 2, 3)"), std::string::npos) << Text;

  Device D = memoryDevice();
  Result<Kernel> K = D.loadKernel(*IR);
  ASSERT_TRUE(K.ok()) << K.status().str();
  Result<Buffer> O = Buffer::allocate(24 * 2 * 4);
  ASSERT_TRUE(O.ok());
  Arg OutArg = Arg::buffer(O->view(ElementType::scalar(ScalarType::U32)));
  EXPECT_EQ(D.launch(*K, {2, 2, 5}, {OutArg}).code(), ErrorCode::InvalidLaunch);
  ASSERT_TRUE(D.launch(*K, {2, 2, 6}, {OutArg}).ok());
  auto *V = static_cast<const uint32_t *>(O->data());
  for (uint32_t C = 0; C < 24; ++C) {
    uint32_t Y = (C / 2) % 2, Z = C / 4;
    // Linear rank x + y*dx + z*dx*dy with cluster (1, 2, 3): x is always 0.
    EXPECT_EQ(V[2 * C], Y % 2 + (Z % 3) * 2) << "cube " << C;
    EXPECT_EQ(V[2 * C + 1], 6u + 3u) << "cube " << C;
  }
}

} // namespace
