//===- MultiProcessTest.cpp - Several processes share one store ----------===//

#include "Support/StoreTestSupport.h"

#include "kiln/Store/StoreScan.h"

#include "gtest/gtest.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<uint8_t> payloadFor(uint64_t Key) {
  std::vector<uint8_t> P(200 + Key * 37 % 900);
  for (size_t I = 0; I != P.size(); ++I)
    P[I] = uint8_t((Key * 31 + I * I) >> 2);
  return P;
}

/// One writer: overlapping keys with its neighbours, each checked on read.
int writer(const std::string &Root, unsigned Index) {
  auto S = FileStore::openAt(Root, "cpu", "shared fingerprint", readWrite());
  if (!S)
    return 2;
  for (int Round = 0; Round != 2; ++Round)
    for (uint64_t K = Index * 10; K != Index * 10 + 30; ++K) {
      KernelCacheKey Key{K, 7};
      std::optional<std::vector<uint8_t>> Got = S->read(Key);
      if (Got && *Got != payloadFor(K))
        return 3; // a bad payload reached a reader
      if (!Got)
        storeCompiled(*S, Key, payloadFor(K),
                      EntryInfo{"k" + std::to_string(K), "", "", 0});
    }
  return 0;
}

TEST(StoreConcurrency, ProcessesWritingOverlappingKeys) {
  TempDir Root;
  constexpr unsigned Procs = 6;
  std::vector<pid_t> Pids;
  for (unsigned I = 0; I != Procs; ++I) {
    pid_t P = ::fork();
    ASSERT_GE(P, 0);
    if (P == 0)
      ::_exit(writer(Root.path(), I));
    Pids.push_back(P);
  }
  for (pid_t P : Pids) {
    int Status = 0;
    ASSERT_EQ(::waitpid(P, &Status, 0), P);
    ASSERT_TRUE(WIFEXITED(Status));
    EXPECT_EQ(WEXITSTATUS(Status), 0);
  }
  std::vector<NamespaceDir> NS = scanStore(Root.path());
  ASSERT_EQ(NS.size(), 1u);
  EXPECT_EQ(NS[0].Entries.size(), (Procs - 1) * 10 + 30);
  for (const EntryFile &E : NS[0].Entries) {
    llvm::Error Err = verifyEntryFile(NS[0], E);
    EXPECT_FALSE(bool(Err)) << E.Name << ": " << llvm::toString(std::move(Err));
  }
  // No temporary file was left behind.
  DIR *D = ::opendir(NS[0].Path.c_str());
  ASSERT_NE(D, nullptr);
  while (dirent *E = ::readdir(D))
    EXPECT_EQ(std::string(E->d_name).find(".tmp-"), std::string::npos)
        << E->d_name;
  ::closedir(D);
  // And every entry serves the right bytes.
  auto S =
      FileStore::openAt(Root.path(), "cpu", "shared fingerprint", readWrite());
  for (uint64_t K = 0; K != (Procs - 1) * 10 + 30; ++K)
    EXPECT_EQ(S->read(KernelCacheKey{K, 7}),
              std::optional<std::vector<uint8_t>>(payloadFor(K)));
  // The counters of every process were added up.
  S.reset();
  StoreCounters C = readStoreCounters(NS[0].Path + "/" + StatsFileName);
  EXPECT_EQ(C.Writes + C.Refusals >= (Procs - 1) * 10 + 30, true);
  EXPECT_EQ(C.Writes, (Procs - 1) * 10 + 30) << "each key written once";
}

} // namespace
