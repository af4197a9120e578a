//===- StoreIsolationTest.cpp - Devices own their stores ------------------===//
//
// A device's store (root, mode, limits, warnings) is its own: nothing
// another device does to its store, and nothing done to the default
// configuration, touches the kernels it loaded or the store it uses.
//
//===----------------------------------------------------------------------===//

#include "Support/Kernels.h"
#include "Support/TempDir.h"

#include "kiln/IR/Hash.h"
#include "kiln/Runtime/Buffer.h"
#include "kiln/Runtime/Device.h"
#include "kiln/Store/Environment.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace kiln;
using kiln::test::TempDir;

namespace {

struct StoreIsolation : ::testing::Test {
  std::optional<Module> M;
  void SetUp() override {
    M = test::parseAndVerify(test::VaddText, DeviceLimits(), "vadd.kiln");
    ASSERT_FALSE(M->Kernels.empty());
  }
  const IRKernel &vadd() { return M->Kernels.front(); }

  /// A device over its own store at \p Dir, its warnings into \p Warnings.
  std::unique_ptr<RuntimeDevice> deviceAt(const std::string &Dir,
                                          std::vector<std::string> *Warnings) {
    DeviceOptions O;
    O.Threads = 2;
    O.StoreDir = Dir;
    O.StoreMode = DeviceStoreMode::ReadWrite;
    if (Warnings)
      O.WarningSink = [Warnings](llvm::StringRef W) {
        Warnings->push_back(W.str());
      };
    auto D = RuntimeDevice::create(O);
    EXPECT_TRUE(!!D) << llvm::toString(D.takeError());
    return D ? std::move(*D) : nullptr;
  }

  /// Runs vadd through \p K on \p D and checks the sums.
  void expectVaddWorks(RuntimeDevice &D, const LoadedKernel &K) {
    const uint32_t N = 300;
    HostBuffer A =
        std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
    HostBuffer B =
        std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
    HostBuffer C =
        std::move(*HostBuffer::create(Type::scalar(ScalarKind::F32), N));
    for (uint32_t I = 0; I < N; ++I) {
      A.as<float>()[I] = float(I);
      B.as<float>()[I] = 0.5f;
    }
    ArgBinding Args[] = {ArgBinding::buffer(A), ArgBinding::buffer(B),
                         ArgBinding::buffer(C), ArgBinding::u32(N)};
    ASSERT_FALSE(D.launch(K, {(N + 63) / 64, 1, 1}, Args));
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(C.as<float>()[I], float(I) + 0.5f) << I;
  }
};

TEST_F(StoreIsolation, TwoDevicesWithDifferentStores) {
  TempDir RootA, RootB, RootC;
  std::vector<std::string> WarningsA, WarningsB;
  std::unique_ptr<RuntimeDevice> A = deviceAt(RootA.path(), &WarningsA);
  std::unique_ptr<RuntimeDevice> B = deviceAt(RootB.path(), &WarningsB);
  ASSERT_TRUE(A && B);
  EXPECT_EQ(A->storeFolder().rfind(RootA.path(), 0), 0u) << A->storeFolder();
  EXPECT_EQ(B->storeFolder().rfind(RootB.path(), 0), 0u) << B->storeFolder();

  KernelStats S;
  auto KA = A->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!KA) << llvm::toString(KA.takeError());
  EXPECT_TRUE(S.Compiled && S.Stored);
  auto KB = B->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!KB) << llvm::toString(KB.takeError());
  EXPECT_TRUE(S.Compiled && S.Stored) << "B's store is not A's";

  // A's entry goes bad: A warns (to its own sink), drops it and compiles
  // again; B hears nothing.
  std::string Entry;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator I(A->storeFolder(), EC), End;
       I != End && !EC; I.increment(EC))
    if (llvm::StringRef(I->path()).ends_with(".entry"))
      Entry = I->path();
  ASSERT_FALSE(Entry.empty());
  std::ofstream(Entry, std::ios::binary | std::ios::trunc) << "garbage";
  ASSERT_TRUE(A->unloadKernel(vadd(), "", hashKernel(vadd()), {}));
  ASSERT_TRUE(!!A->getKernel(vadd(), {}, &S));
  EXPECT_TRUE(S.Compiled);
  EXPECT_EQ(A->storeWarnings().count(), 1u);
  ASSERT_EQ(WarningsA.size(), 1u);
  EXPECT_NE(WarningsA[0].find("removed bad store entry"), std::string::npos);
  EXPECT_EQ(B->storeWarnings().count(), 0u);
  EXPECT_TRUE(WarningsB.empty());

  // A goes away, its store is cleared, and a device takes another root: B's
  // loaded kernel and its store keep working.
  A.reset();
  std::system(("rm -rf '" + RootA.path() + "'/*").c_str());
  std::unique_ptr<RuntimeDevice> C = deviceAt(RootC.path(), nullptr);
  ASSERT_TRUE(C && !!C->getKernel(vadd()));
  ASSERT_TRUE(!!B->getKernel(vadd(), {}, &S));
  EXPECT_EQ(S.Origin, KernelProvenance::Memory);
  EXPECT_EQ(B->loadedCount(), 1u);
  expectVaddWorks(*B, *KB);
  std::unique_ptr<RuntimeDevice> B2 = deviceAt(RootB.path(), nullptr);
  ASSERT_TRUE(B2);
  auto KB2 = B2->getKernel(vadd(), {}, &S);
  ASSERT_TRUE(!!KB2);
  EXPECT_EQ(S.Origin, KernelProvenance::Store) << "B's store kept its entry";
  expectVaddWorks(*B2, *KB2);
}

/// The default configuration is read once: a device made after the
/// variables change still gets the first reading, and a device with its own
/// store never sees the default one.
TEST_F(StoreIsolation, DefaultConfigurationIsReadOnce) {
  const DefaultStoreSettings &First = defaultStoreSettings();
  TempDir Elsewhere, Own;
  const char *Saved = std::getenv("KILN_CACHE_DIR");
  std::string SavedText = Saved ? Saved : "";
  ::setenv("KILN_CACHE_DIR", Elsewhere.path().c_str(), 1);
  EXPECT_EQ(&defaultStoreSettings(), &First);
  EXPECT_EQ(defaultStoreSettings().Root, First.Root);

  DeviceOptions O;
  O.StoreMode = DeviceStoreMode::ReadWrite;
  auto D = RuntimeDevice::create(O);
  ASSERT_TRUE(!!D);
  if (First.Root) {
    EXPECT_EQ((*D)->storeFolder().rfind(*First.Root, 0), 0u)
        << (*D)->storeFolder();
  }
  std::unique_ptr<RuntimeDevice> Mine = deviceAt(Own.path(), nullptr);
  ASSERT_TRUE(Mine);
  EXPECT_EQ(Mine->storeFolder().rfind(Own.path(), 0), 0u);
  if (Saved)
    ::setenv("KILN_CACHE_DIR", SavedText.c_str(), 1);
  else
    ::unsetenv("KILN_CACHE_DIR");
}

} // namespace
