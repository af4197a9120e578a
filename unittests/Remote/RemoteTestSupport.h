//===- RemoteTestSupport.h - A server, a key and stores for a test --------===//
//
// The remote tier's tests share this fixture: a redis-server of the test's
// own on a Unix socket (Support/RedisServer.h), a fleet key file, and
// helpers making tiers and FileStores behind them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_REMOTE_REMOTETESTSUPPORT_H
#define KILN_UNITTESTS_REMOTE_REMOTETESTSUPPORT_H

#include "Support/RedisServer.h"
#include "Support/StoreTestSupport.h"
#include "Support/TempDir.h"

#include "kiln/Store/FileStore.h"
#include "kiln/Store/RemoteTier.h"

#include "gtest/gtest.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace kiln::test {

using std::chrono::milliseconds;

/// \p N bytes that depend on \p Seed (and compress poorly when \p Random).
inline std::vector<uint8_t> payloadFor(uint64_t Seed, size_t N = 300,
                                       bool Random = false) {
  std::vector<uint8_t> P(N);
  uint64_t X = Seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t I = 0; I != N; ++I) {
    if (Random) {
      X ^= X << 13;
      X ^= X >> 7;
      X ^= X << 17;
      P[I] = uint8_t(X >> 24);
    } else {
      P[I] = uint8_t((Seed * 31 + I * 7) % 251);
    }
  }
  return P;
}

inline std::string asString(const std::vector<uint8_t> &B) {
  return std::string(B.begin(), B.end());
}
inline std::vector<uint8_t> asBytes(const std::string &S) {
  return std::vector<uint8_t>(S.begin(), S.end());
}
inline bool fileExists(const std::string &Path) {
  return ::access(Path.c_str(), F_OK) == 0;
}
inline std::vector<uint8_t> readFileBytes(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(In), {});
}

/// Whether any of \p Warnings contains \p Text.
inline bool anyContains(const std::vector<std::string> &Warnings,
                        const std::string &Text) {
  for (const std::string &W : Warnings)
    if (W.find(Text) != std::string::npos)
      return true;
  return false;
}

inline std::string joined(const std::vector<std::string> &Lines) {
  std::string S;
  for (const std::string &L : Lines)
    S += "  " + L + "\n";
  return S;
}

/// Every counter of \p S so far: what it flushed to its stats file (every
/// 64 events) and what it has pending.
inline StoreCounters totals(FileStore &S) {
  S.flushCounters();
  StoreCounters C = readStoreCounters(S.folder() + "/" + StatsFileName);
  C += S.pendingCounters();
  return C;
}

/// A redis-server and a fleet key for one test.
class RemoteTest : public ::testing::Test {
protected:
  explicit RemoteTest(std::vector<std::string> ServerArgs = {})
      : Server(std::move(ServerArgs)) {}

  void SetUp() override {
    ASSERT_TRUE(Server.start()) << Server.error();
    KeyFile = writeFleetKeyFile(Keys.sub("fleet.key"));
    OtherKeyFile = writeFleetKeyFile(Keys.sub("other.key"));
  }

  /// The tier's configuration: this server, this key, timeouts generous
  /// enough for a loaded machine (the fault tests shorten them).
  RemoteConfig config() const {
    RemoteConfig C;
    C.Url = Server.url();
    C.KeyFile = KeyFile;
    C.ConnectTimeout = C.RequestTimeout = milliseconds(3000);
    return C;
  }

  std::shared_ptr<RemoteTier>
  makeTier(const RemoteConfig &C,
           std::shared_ptr<StoreWarnings> W = nullptr) const {
    llvm::Expected<std::shared_ptr<RemoteTier>> T =
        RemoteTier::create(C, std::move(W));
    if (!T) {
      ADD_FAILURE() << "RemoteTier::create: " << llvm::toString(T.takeError());
      return nullptr;
    }
    return std::move(*T);
  }

  FleetKey key(const std::string &File) const {
    llvm::Expected<FleetKey> K = FleetKey::load(File);
    if (!K) {
      ADD_FAILURE() << llvm::toString(K.takeError());
      return llvm::cantFail(FleetKey::fromBytes(std::vector<uint8_t>(32, 1)));
    }
    return std::move(*K);
  }

  /// A FileStore in \p Root ("cpu", \p Fingerprint) behind \p Tier, its
  /// warnings into \p W.
  std::unique_ptr<FileStore>
  makeStore(const std::string &Root, std::shared_ptr<RemoteTier> Tier,
            std::shared_ptr<StoreWarnings> W = nullptr,
            const std::string &Fingerprint = "fingerprint A",
            StoreConfig SC = readWrite()) const {
    std::unique_ptr<FileStore> S =
        FileStore::openAt(Root, "cpu", Fingerprint, SC, std::move(W));
    if (!S) {
      ADD_FAILURE() << "FileStore::openAt(" << Root << ") failed";
      return nullptr;
    }
    S->setRemote(std::move(Tier));
    return S;
  }

  static EntryInfo infoFor(uint64_t K) {
    return EntryInfo{"k" + std::to_string(K), "", "", 0};
  }

  RedisServer Server;
  TempDir Keys;
  std::string KeyFile, OtherKeyFile;
};

} // namespace kiln::test

#endif
