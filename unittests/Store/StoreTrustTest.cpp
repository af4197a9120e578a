//===- StoreTrustTest.cpp - Each refusal rule of the store's folders -----===//
//
// The store runs code it finds on disk, so it trusts a folder only when no
// one but the user could have put files there (docs/Reliability.md, "Store
// trust"). Each of the root, the backend folder and the namespace folder is
// refused when it is a symbolic link, belongs to another user, or can be
// written by its group or by others; a refused store reads nothing, writes
// nothing, warns once and leaves the folder as it is. An entry whose object
// code was replaced by someone who could write the folder, with its checksums
// recomputed, is exactly what these rules keep out.
//
//===----------------------------------------------------------------------===//

#include "Support/StoreTestSupport.h"

#include "kiln/Store/Environment.h"

#include "gtest/gtest.h"

#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<uint8_t> payload() { return std::vector<uint8_t>(200, 0x5a); }

enum class Level { Root, Backend, Namespace };
enum class Fault { GroupWritable, OthersWritable, OtherOwner, SymbolicLink };

const char *levelName(Level L) {
  switch (L) {
  case Level::Root:
    return "Root";
  case Level::Backend:
    return "Backend";
  case Level::Namespace:
    return "Namespace";
  }
  return "?";
}
const char *faultName(Fault F) {
  switch (F) {
  case Fault::GroupWritable:
    return "GroupWritable";
  case Fault::OthersWritable:
    return "OthersWritable";
  case Fault::OtherOwner:
    return "OtherOwner";
  case Fault::SymbolicLink:
    return "SymbolicLink";
  }
  return "?";
}

class FolderTrustTest
    : public ::testing::TestWithParam<std::tuple<Level, Fault>> {
protected:
  void SetUp() override {
    RootPath = Base.path() + "/root";
    auto Store = FileStore::openAt(RootPath, "cpu", "fingerprint T", readWrite());
    ASSERT_NE(Store, nullptr);
    ASSERT_FALSE(failed(Store->write(Key, payload(), Info)));
    Namespace = Store->folder();
    ASSERT_EQ(Store->read(Key), std::optional<std::vector<uint8_t>>(payload()));
  }

  std::string folderOf(Level L) const {
    switch (L) {
    case Level::Root:
      return RootPath;
    case Level::Backend:
      return RootPath + "/cpu";
    case Level::Namespace:
      return Namespace;
    }
    return "";
  }

  /// Damages \p Folder as \p F says; false when this process cannot (only
  /// root can give a folder to another user).
  bool damage(const std::string &Folder, Fault F) {
    switch (F) {
    case Fault::GroupWritable:
      return ::chmod(Folder.c_str(), 0770) == 0;
    case Fault::OthersWritable:
      return ::chmod(Folder.c_str(), 0707) == 0;
    case Fault::OtherOwner:
      // 65534 is "nobody" on Debian; any uid other than ours will do.
      return ::geteuid() == 0 && ::chown(Folder.c_str(), 65534, 65534) == 0;
    case Fault::SymbolicLink: {
      // The real folder moves aside and a link takes its name: everything
      // under it is as it was, reached through the link.
      std::string Aside = Base.path() + "/moved-" + levelName(std::get<0>(GetParam()));
      return ::rename(Folder.c_str(), Aside.c_str()) == 0 &&
             ::symlink(Aside.c_str(), Folder.c_str()) == 0;
    }
    }
    return false;
  }

  TempDir Base;
  std::string RootPath;
  std::string Namespace;
  KernelCacheKey Key{0xabc, 0xdef};
  EntryInfo Info{"k-0011223344556677", "checked-a64", "", 0x1234};
};

TEST_P(FolderTrustTest, RefusedFolderIsNeitherReadNorWritten) {
  auto [L, F] = GetParam();
  std::string Folder = folderOf(L);
  if (!damage(Folder, F))
    GTEST_SKIP() << "this process cannot give a folder to another user";
  const char *Why = F == Fault::SymbolicLink  ? "it is not a folder"
                    : F == Fault::OtherOwner  ? "it is owned by another user"
                                              : "others can write to it";

  auto Store = FileStore::openAt(RootPath, "cpu", "fingerprint T", readWrite());
  WarningCapture W(Store->warnings());
  EXPECT_EQ(Store->read(Key), std::nullopt) << "the entry must not be served";
  EXPECT_EQ(Store->read(Key), std::nullopt);
  EXPECT_TRUE(failed(Store->write(KernelCacheKey{1, 2}, payload(), Info)));
  ASSERT_EQ(W.Warnings.size(), 1u) << "one warning, not one per kernel";
  EXPECT_NE(W.Warnings[0].find(Folder + ": " + Why), std::string::npos)
      << W.Warnings[0];

  // Left as it was: the entry is still there (through the link, too), and
  // nothing was written beside it.
  struct stat St;
  EXPECT_EQ(::stat((Namespace + "/" + entryFileName(Key)).c_str(), &St), 0);
  EXPECT_NE(::stat((Namespace + "/" + entryFileName(KernelCacheKey{1, 2})).c_str(),
                   &St),
            0);
}

INSTANTIATE_TEST_SUITE_P(
    EveryFolderEveryRule, FolderTrustTest,
    ::testing::Combine(::testing::Values(Level::Root, Level::Backend,
                                         Level::Namespace),
                       ::testing::Values(Fault::GroupWritable,
                                         Fault::OthersWritable,
                                         Fault::OtherOwner,
                                         Fault::SymbolicLink)),
    [](const auto &Info) {
      return std::string(levelName(std::get<0>(Info.param))) +
             faultName(std::get<1>(Info.param));
    });

// A folder that was refused and is then put right is used again by the next
// store opened on it (a refusal is not remembered on disk).
TEST(StoreTrust, FolderPutRightIsUsedAgain) {
  TempDir Base;
  std::string Root = Base.path() + "/root";
  KernelCacheKey Key{7, 8};
  EntryInfo Info{"k-0011223344556677", "checked-a64", "", 0x1234};
  auto First = FileStore::openAt(Root, "cpu", "fingerprint T", readWrite());
  ASSERT_FALSE(failed(First->write(Key, payload(), Info)));
  ASSERT_EQ(::chmod(First->folder().c_str(), 0777), 0);
  auto Refused = FileStore::openAt(Root, "cpu", "fingerprint T", readWrite());
  WarningCapture W(Refused->warnings());
  EXPECT_EQ(Refused->read(Key), std::nullopt);
  ASSERT_EQ(::chmod(First->folder().c_str(), 0700), 0);
  auto Again = FileStore::openAt(Root, "cpu", "fingerprint T", readWrite());
  EXPECT_EQ(Again->read(Key), std::optional<std::vector<uint8_t>>(payload()));
}

// The store's settings in a setuid or setgid process: no store at all, and
// no remote tier, whatever the environment says. The process itself cannot
// become setuid here; test/kiln-run-store/setuid.test runs kiln-run so.
TEST(StoreTrust, EnvironmentIsReadInAnOrdinaryProcess) {
  ::setenv("KILN_CACHE", "read-only", 1);
  StoreWarnings W;
  StoreConfig C = StoreConfig::fromEnvironment(&W);
  ::unsetenv("KILN_CACHE");
  EXPECT_EQ(C.Mode, StoreModeKind::ReadOnly)
      << "without AT_SECURE the environment is followed";
}

} // namespace
