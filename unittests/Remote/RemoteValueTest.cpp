//===- RemoteValueTest.cpp - Addresses, fleet keys, sealed values --------===//
//
// What the remote tier is made of before any server: the address parser,
// the fleet key file's rules, the sealed value (HMAC-SHA256 over the key
// name and the payload), the key names, the configuration from the
// environment, and RemoteTier::create's refusals.
//
//===----------------------------------------------------------------------===//

#include "RemoteTestSupport.h"

#include "kiln/Store/Environment.h"

#include "llvm/Support/Endian.h"

#include <cstdlib>
#include <fcntl.h>
#include <future>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;
using namespace kiln::test;

namespace {

//===----------------------------------------------------------------------===//
// RemoteAddress::parse
//===----------------------------------------------------------------------===//

RemoteAddress parseOk(llvm::StringRef Url) {
  llvm::Expected<RemoteAddress> A = RemoteAddress::parse(Url);
  if (!A) {
    ADD_FAILURE() << Url.str() << ": " << llvm::toString(A.takeError());
    return RemoteAddress();
  }
  return *A;
}

std::string parseError(llvm::StringRef Url) {
  llvm::Expected<RemoteAddress> A = RemoteAddress::parse(Url);
  if (A) {
    ADD_FAILURE() << Url.str() << " parsed, to " << A->str();
    return "";
  }
  return llvm::toString(A.takeError());
}

TEST(RemoteAddress, TcpForms) {
  RemoteAddress A = parseOk("redis://cache.example");
  EXPECT_EQ(A.Host, "cache.example");
  EXPECT_EQ(A.Port, 6379u);
  EXPECT_EQ(A.Database, 0u);
  EXPECT_TRUE(A.SocketPath.empty());
  EXPECT_TRUE(A.User.empty() && A.Password.empty());
  EXPECT_EQ(A.str(), "redis://cache.example:6379");

  A = parseOk("redis://10.0.0.7:7000/3");
  EXPECT_EQ(A.Host, "10.0.0.7");
  EXPECT_EQ(A.Port, 7000u);
  EXPECT_EQ(A.Database, 3u);
  EXPECT_EQ(A.str(), "redis://10.0.0.7:7000/3");

  A = parseOk("  redis://h:6380/  ");
  EXPECT_EQ(A.Host, "h");
  EXPECT_EQ(A.Port, 6380u);
  EXPECT_EQ(A.Database, 0u);

  A = parseOk("redis://[::1]:6390/2");
  EXPECT_EQ(A.Host, "::1");
  EXPECT_EQ(A.Port, 6390u);
  EXPECT_EQ(A.Database, 2u);
  EXPECT_EQ(A.str(), "redis://[::1]:6390/2");
  EXPECT_EQ(parseOk("redis://[fe80::1]").Port, 6379u);
}

TEST(RemoteAddress, CredentialsAreKeptButNeverPrinted) {
  RemoteAddress A = parseOk("redis://builder:s3cr%t@cache:6379/1");
  EXPECT_EQ(A.User, "builder");
  EXPECT_EQ(A.Password, "s3cr%t");
  EXPECT_EQ(A.Host, "cache");
  EXPECT_EQ(A.Database, 1u);
  EXPECT_EQ(A.str().find("s3cr"), std::string::npos) << A.str();

  A = parseOk("redis://:only-a-password@cache");
  EXPECT_EQ(A.User, "");
  EXPECT_EQ(A.Password, "only-a-password");
  EXPECT_EQ(A.Host, "cache");
  EXPECT_EQ(A.str().find("only-a-password"), std::string::npos) << A.str();

  // The last '@' ends the user information: a password may hold one.
  A = parseOk("redis://u:p@ss@cache");
  EXPECT_EQ(A.Password, "p@ss");
  EXPECT_EQ(A.Host, "cache");
}

TEST(RemoteAddress, UnixForms) {
  RemoteAddress A = parseOk("unix:///run/redis/redis.sock");
  EXPECT_EQ(A.SocketPath, "/run/redis/redis.sock");
  EXPECT_TRUE(A.Host.empty());
  EXPECT_EQ(A.Database, 0u);
  EXPECT_EQ(A.str(), "unix:///run/redis/redis.sock");

  A = parseOk("unix:/tmp/r.sock?db=4");
  EXPECT_EQ(A.SocketPath, "/tmp/r.sock");
  EXPECT_EQ(A.Database, 4u);
  EXPECT_EQ(A.str(), "unix:///tmp/r.sock?db=4");
}

TEST(RemoteAddress, BadAddressesSayWhatIsWrong) {
  struct Case {
    const char *Url;
    const char *Why;
  } Cases[] = {
      {"", "expected redis://HOST[:PORT][/DB] or unix:///PATH[?db=N]"},
      {"cache:6379", "expected redis://"},
      {"http://cache", "expected redis://"},
      {"rediss://cache", "expected redis://"},
      {"redis://", "no host"},
      {"redis://:6379", "no host"},
      {"redis://user:pw@", "no host"},
      {"redis://cache:abc", "bad port 'abc'"},
      {"redis://cache:0", "bad port '0'"},
      {"redis://cache:65536", "bad port '65536'"},
      {"redis://cache:-1", "bad port"},
      {"redis://cache/x", "database 'x' is not a number"},
      {"redis://cache/1/2", "is not a number"},
      {"redis://cache/99999999", "is not a number"},
      {"redis://[::1", "unclosed '['"},
      {"redis://[::1]x", "bad port"},
      {"unix://relative/path.sock", "must be absolute"},
      {"unix:", "must be absolute"},
      {"unix:///tmp/r.sock?database=2", "the only query is ?db=N"},
      {"unix:///tmp/r.sock?db=two", "database 'two' is not a number"},
  };
  for (const Case &C : Cases) {
    std::string E = parseError(C.Url);
    EXPECT_NE(E.find(C.Why), std::string::npos)
        << "'" << C.Url << "': " << E;
    // Every message names the address it refuses.
    EXPECT_NE(E.find(std::string("'") + C.Url + "'"), std::string::npos)
        << "'" << C.Url << "': " << E;
  }
}

//===----------------------------------------------------------------------===//
// FleetKey::load
//===----------------------------------------------------------------------===//

class FleetKeyFile : public ::testing::Test {
protected:
  /// \p Text into \p Name under the folder, mode \p Mode.
  std::string write(const std::string &Name, const std::string &Text,
                    mode_t Mode = 0600) {
    std::string P = Dir.sub(Name);
    ::unlink(P.c_str());
    int FD = ::open(P.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(FD, 0) << P;
    if (FD >= 0) {
      EXPECT_EQ(::write(FD, Text.data(), Text.size()), ssize_t(Text.size()));
      ::close(FD);
    }
    EXPECT_EQ(::chmod(P.c_str(), Mode), 0);
    return P;
  }
  std::string loadError(const std::string &Path) {
    llvm::Expected<FleetKey> K = FleetKey::load(Path);
    if (K) {
      ADD_FAILURE() << Path << " loaded";
      return "";
    }
    return llvm::toString(K.takeError());
  }
  TempDir Dir;
  const std::string Good = std::string(32, 'k');
};

TEST_F(FleetKeyFile, AGoodFileLoads) {
  std::string P = write("good.key", Good + "\n");
  llvm::Expected<FleetKey> K = FleetKey::load(P);
  ASSERT_TRUE(!!K) << llvm::toString(K.takeError());
  // Surrounding whitespace is not part of the key.
  EXPECT_EQ(K->bytes().size(), 32u);
  llvm::Expected<FleetKey> Same = FleetKey::fromBytes(asBytes(Good));
  ASSERT_TRUE(!!Same);
  EXPECT_EQ(K->id(), Same->id());
  EXPECT_EQ(std::string(K->bytes().begin(), K->bytes().end()), Good);
  // Another key, another id.
  llvm::Expected<FleetKey> Other =
      FleetKey::fromBytes(asBytes(std::string(31, 'k') + "l"));
  ASSERT_TRUE(!!Other);
  EXPECT_NE(K->id(), Other->id());
  // The largest key allowed.
  EXPECT_TRUE(!!FleetKey::load(write("big.key", std::string(4096, 'x'))));
  // A key file from openssl rand -hex 32.
  EXPECT_TRUE(!!FleetKey::load(writeFleetKeyFile(Dir.sub("hex.key"))));
}

TEST_F(FleetKeyFile, Missing) {
  std::string E = loadError(Dir.sub("absent.key"));
  EXPECT_NE(E.find("fleet key file"), std::string::npos) << E;
  EXPECT_NE(E.find("absent.key"), std::string::npos) << E;
  EXPECT_NE(E.find("No such file or directory"), std::string::npos) << E;
  E = loadError("");
  EXPECT_NE(E.find("no fleet key file"), std::string::npos) << E;
  EXPECT_NE(E.find("no default key"), std::string::npos) << E;
}

TEST_F(FleetKeyFile, SymlinkIsRefused) {
  std::string Target = write("target.key", Good);
  ASSERT_TRUE(!!FleetKey::load(Target));
  std::string Link = Dir.sub("link.key");
  ASSERT_EQ(::symlink(Target.c_str(), Link.c_str()), 0);
  std::string E = loadError(Link);
  EXPECT_NE(E.find("is a symbolic link"), std::string::npos) << E;
}

TEST_F(FleetKeyFile, FifoIsRefusedWithoutBlocking) {
  std::string P = Dir.sub("fifo.key");
  ASSERT_EQ(::mkfifo(P.c_str(), 0600), 0);
  std::future<std::string> F =
      std::async(std::launch::async, [&] { return loadError(P); });
  if (F.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    // Blocked on open or read: a writer releases it, then fail.
    int FD = ::open(P.c_str(), O_RDWR | O_NONBLOCK);
    F.wait();
    if (FD >= 0)
      ::close(FD);
    FAIL() << "FleetKey::load blocked on a FIFO";
  }
  std::string E = F.get();
  EXPECT_NE(E.find("is not a regular file"), std::string::npos) << E;
}

TEST_F(FleetKeyFile, DirectoryIsRefused) {
  std::string P = Dir.sub("keydir");
  ASSERT_EQ(::mkdir(P.c_str(), 0700), 0);
  std::string E = loadError(P);
  EXPECT_NE(E.find("is not a regular file"), std::string::npos) << E;
}

TEST_F(FleetKeyFile, OthersMayNotReadOrWriteIt) {
  for (mode_t Mode : {0640, 0604, 0620, 0602, 0660, 0644}) {
    std::string E = loadError(write("shared.key", Good, Mode));
    EXPECT_NE(E.find("group or others may read or write it (chmod 600 it)"),
              std::string::npos)
        << std::oct << Mode << ": " << E;
  }
  // Owner-only modes are fine, even read-only.
  EXPECT_TRUE(!!FleetKey::load(write("ro.key", Good, 0400)));
}

TEST_F(FleetKeyFile, TooShort) {
  std::string E = loadError(write("short.key", std::string(31, 'k')));
  EXPECT_NE(E.find("a fleet key needs at least 32 bytes, this one has 31"),
            std::string::npos)
      << E;
  // Whitespace around it does not count.
  E = loadError(write("padded.key", "  \t" + std::string(31, 'k') + "\n\n"));
  EXPECT_NE(E.find("this one has 31"), std::string::npos) << E;
  E = loadError(write("empty.key", ""));
  EXPECT_NE(E.find("this one has 0"), std::string::npos) << E;
  E = llvm::toString(FleetKey::fromBytes(asBytes(std::string(5, 'a')))
                         .takeError());
  EXPECT_NE(E.find("at least 32 bytes"), std::string::npos) << E;
}

TEST_F(FleetKeyFile, TooLong) {
  std::string E = loadError(write("long.key", std::string(4097, 'k')));
  EXPECT_NE(E.find("is larger than 4096 bytes"), std::string::npos) << E;
}

TEST_F(FleetKeyFile, OwnedByAnotherUser) {
  std::string P = write("theirs.key", Good);
  if (::geteuid() != 0)
    GTEST_SKIP() << "giving a file to another user needs root";
  ASSERT_EQ(::chown(P.c_str(), 65534, 65534), 0);
  std::string E = loadError(P);
  EXPECT_NE(E.find("is owned by another user"), std::string::npos) << E;
}

//===----------------------------------------------------------------------===//
// Sealed values
//===----------------------------------------------------------------------===//

FleetKey keyOf(char C) {
  return llvm::cantFail(FleetKey::fromBytes(asBytes(std::string(40, C))));
}

const char *const Name = "kiln:cpu:0123456789abcdef:00112233445566778899aabbccddeeff";

TEST(SealedValue, RoundTripAndLayout) {
  FleetKey K = keyOf('a');
  for (size_t N : {size_t(0), size_t(1), size_t(300), size_t(70000)}) {
    std::vector<uint8_t> P = payloadFor(N, N, /*Random=*/true);
    std::vector<uint8_t> V = sealRemoteValue(K, Name, P);
    // "KILNRMT1", version 1, algorithm 1, the key's id, the size, a 32-byte
    // tag, the payload.
    ASSERT_EQ(V.size(), 64 + N);
    EXPECT_EQ(std::string(V.begin(), V.begin() + 8), "KILNRMT1");
    EXPECT_EQ(llvm::support::endian::read32le(V.data() + 8), 1u);
    EXPECT_EQ(llvm::support::endian::read32le(V.data() + 12), 1u);
    EXPECT_EQ(llvm::support::endian::read64le(V.data() + 16), K.id());
    EXPECT_EQ(llvm::support::endian::read64le(V.data() + 24), N);
    EXPECT_TRUE(std::equal(P.begin(), P.end(), V.begin() + 64));
    llvm::Expected<std::vector<uint8_t>> Back = openRemoteValue(K, Name, V);
    ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
    EXPECT_EQ(*Back, P);
  }
  // Sealing is deterministic: a fleet publishing one entry twice writes
  // one value.
  EXPECT_EQ(sealRemoteValue(K, Name, payloadFor(1)),
            sealRemoteValue(K, Name, payloadFor(1)));
}

std::string openError(const FleetKey &K, llvm::StringRef N,
                      const std::vector<uint8_t> &V) {
  llvm::Expected<std::vector<uint8_t>> P = openRemoteValue(K, N, V);
  if (P) {
    ADD_FAILURE() << "opened";
    return "";
  }
  return llvm::toString(P.takeError());
}

TEST(SealedValue, AnotherFleetKey) {
  FleetKey Ours = keyOf('a'), Theirs = keyOf('b');
  std::vector<uint8_t> V = sealRemoteValue(Theirs, Name, payloadFor(2));
  std::string E = openError(Ours, Name, V);
  EXPECT_NE(E.find("made with another fleet key"), std::string::npos) << E;
  // Another key that claims our key's id still fails: the tag is the proof.
  llvm::support::endian::write64le(V.data() + 16, Ours.id());
  E = openError(Ours, Name, V);
  EXPECT_NE(E.find("bad authentication tag"), std::string::npos) << E;
}

TEST(SealedValue, EveryTamperedByteIsRefused) {
  FleetKey K = keyOf('a');
  std::vector<uint8_t> Good = sealRemoteValue(K, Name, payloadFor(3, 200));
  for (size_t I = 0; I != Good.size(); ++I)
    for (uint8_t Flip : {uint8_t(0x01), uint8_t(0x80)}) {
      std::vector<uint8_t> V = Good;
      V[I] ^= Flip;
      llvm::Expected<std::vector<uint8_t>> P = openRemoteValue(K, Name, V);
      ASSERT_FALSE(!!P) << "byte " << I << " ^ " << int(Flip) << " opened";
      std::string E = llvm::toString(P.takeError());
      const char *Why = I < 8    ? "not a sealed kiln value"
                        : I < 16 ? "unsupported sealed value version"
                        : I < 24 ? "made with another fleet key"
                        : I < 32 ? "truncated or padded"
                                 : "bad authentication tag";
      EXPECT_NE(E.find(Why), std::string::npos) << "byte " << I << ": " << E;
    }
}

TEST(SealedValue, MovedToAnotherName) {
  FleetKey K = keyOf('a');
  std::vector<uint8_t> V = sealRemoteValue(K, Name, payloadFor(4));
  for (std::string Other :
       {std::string(Name) + "0", std::string(Name).substr(1),
        std::string("kiln:cpu:0123456789abcdef:00112233445566778899aabbccddeefe"),
        std::string("")}) {
    std::string E = openError(K, Other, V);
    EXPECT_NE(E.find("bad authentication tag"), std::string::npos)
        << Other << ": " << E;
  }
}

TEST(SealedValue, TruncatedOrPadded) {
  FleetKey K = keyOf('a');
  std::vector<uint8_t> V = sealRemoteValue(K, Name, payloadFor(5, 100));
  for (size_t Len = 0; Len != V.size(); ++Len) {
    std::vector<uint8_t> T(V.begin(), V.begin() + Len);
    llvm::Expected<std::vector<uint8_t>> P = openRemoteValue(K, Name, T);
    ASSERT_FALSE(!!P) << "a value cut to " << Len << " bytes opened";
    std::string E = llvm::toString(P.takeError());
    EXPECT_NE(E.find(Len < 64 ? "not a sealed kiln value"
                              : "truncated or padded sealed value"),
              std::string::npos)
        << Len << ": " << E;
  }
  std::vector<uint8_t> Padded = V;
  Padded.push_back(0);
  EXPECT_NE(openError(K, Name, Padded).find("truncated or padded"),
            std::string::npos);
  // A payload cut short with the size field fixed up: the tag fails.
  std::vector<uint8_t> Cut(V.begin(), V.end() - 10);
  llvm::support::endian::write64le(Cut.data() + 24, Cut.size() - 64);
  EXPECT_NE(openError(K, Name, Cut).find("bad authentication tag"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Names, configuration, creation
//===----------------------------------------------------------------------===//

TEST(RemoteNames, EntryAndDictionaryNames) {
  KernelCacheKey Key{0x0011223344556677ull, 0x8899aabbccddeeffull};
  EXPECT_EQ(remoteEntryName("kiln", "cpu", 0xabcull, Key),
            "kiln:cpu:0000000000000abc:00112233445566778899aabbccddeeff");
  EXPECT_EQ(remoteEntryName("team", "cpu", fingerprintHash("fp"), Key),
            "team:cpu:" + fingerprintHex("fp") + ":" + Key.hex());
  EXPECT_EQ(remoteDictionaryName("kiln", "cpu", 0xabcull, 0x12),
            "kiln:cpu:0000000000000abc:zdict-00000012");
  // A FileStore names its entries the same way, with its tier's prefix.
  TempDir Root;
  auto S = FileStore::openAt(Root.path(), "cpu", "fp", readWrite());
  ASSERT_TRUE(S);
  EXPECT_EQ(S->remoteName(Key),
            "kiln:cpu:" + fingerprintHex("fp") + ":" + Key.hex());
}

/// Sets (or unsets, for null) environment variables for its lifetime.
class ScopedEnv {
public:
  ScopedEnv(std::initializer_list<std::pair<const char *, const char *>> Vars) {
    for (auto [Name, Value] : Vars) {
      const char *Old = std::getenv(Name);
      Saved.push_back({Name, Old ? std::optional<std::string>(Old)
                                 : std::nullopt});
      if (Value)
        ::setenv(Name, Value, 1);
      else
        ::unsetenv(Name);
    }
  }
  ~ScopedEnv() {
    for (auto &[Name, Value] : Saved)
      if (Value)
        ::setenv(Name.c_str(), Value->c_str(), 1);
      else
        ::unsetenv(Name.c_str());
  }

private:
  std::vector<std::pair<std::string, std::optional<std::string>>> Saved;
};

TEST(RemoteConfigEnv, Variables) {
  {
    ScopedEnv E({{"KILN_REMOTE", nullptr}});
    EXPECT_FALSE(RemoteConfig::fromEnvironment());
  }
  for (const char *Off : {"", "0"}) {
    ScopedEnv E({{"KILN_REMOTE", Off}});
    EXPECT_FALSE(RemoteConfig::fromEnvironment()) << "'" << Off << "'";
  }
  {
    ScopedEnv E({{"KILN_REMOTE", "unix:///tmp/x.sock"},
                 {"KILN_REMOTE_KEY", "/etc/kiln/fleet.key"},
                 {"KILN_REMOTE_MODE", "read-only"},
                 {"KILN_REMOTE_TIMEOUT_MS", "250"}});
    StoreWarnings W;
    std::optional<RemoteConfig> C = RemoteConfig::fromEnvironment(&W);
    ASSERT_TRUE(C);
    EXPECT_EQ(C->Url, "unix:///tmp/x.sock");
    EXPECT_EQ(C->KeyFile, "/etc/kiln/fleet.key");
    EXPECT_EQ(C->Mode, RemoteModeKind::ReadOnly);
    EXPECT_EQ(C->ConnectTimeout, milliseconds(250));
    EXPECT_EQ(C->RequestTimeout, milliseconds(250));
    EXPECT_EQ(W.count(), 0u);
  }
  {
    ScopedEnv E({{"KILN_REMOTE", "redis://cache"},
                 {"KILN_REMOTE_KEY", nullptr},
                 {"KILN_REMOTE_MODE", "write-only"},
                 {"KILN_REMOTE_TIMEOUT_MS", "0"}});
    StoreWarnings W;
    std::optional<RemoteConfig> C = RemoteConfig::fromEnvironment(&W);
    ASSERT_TRUE(C);
    EXPECT_EQ(C->Mode, RemoteModeKind::ReadWrite);
    EXPECT_EQ(C->RequestTimeout, RemoteConfig().RequestTimeout);
    EXPECT_TRUE(C->KeyFile.empty());
    std::vector<std::string> R = W.recent();
    ASSERT_EQ(R.size(), 2u) << joined(R);
    EXPECT_TRUE(anyContains(R, "KILN_REMOTE_MODE='write-only'")) << joined(R);
    EXPECT_TRUE(anyContains(R, "KILN_REMOTE_TIMEOUT_MS='0'")) << joined(R);
  }
  for (const char *Bad : {"abc", "60001", "-5"}) {
    ScopedEnv E({{"KILN_REMOTE", "redis://cache"},
                 {"KILN_REMOTE_TIMEOUT_MS", Bad}});
    StoreWarnings W;
    std::optional<RemoteConfig> C = RemoteConfig::fromEnvironment(&W);
    ASSERT_TRUE(C);
    EXPECT_EQ(C->RequestTimeout, RemoteConfig().RequestTimeout) << Bad;
    EXPECT_EQ(W.count(), 1u) << Bad;
  }
}

TEST(RemoteTierCreate, RefusesWhatCannotWork) {
  TempDir Dir;
  std::string Key = writeFleetKeyFile(Dir.sub("k"));
  RemoteConfig C;
  C.Url = "unix://" + Dir.sub("nobody-listens.sock");
  C.KeyFile = Key;
  // The server is not contacted: nothing listens, yet the tier is made.
  llvm::Expected<std::shared_ptr<RemoteTier>> T = RemoteTier::create(C);
  ASSERT_TRUE(!!T) << llvm::toString(T.takeError());
  EXPECT_EQ((*T)->where(), C.Url);
  EXPECT_FALSE((*T)->readOnly());
  EXPECT_FALSE((*T)->backingOff());

  auto ErrorOf = [](const RemoteConfig &C) {
    llvm::Expected<std::shared_ptr<RemoteTier>> T = RemoteTier::create(C);
    if (T) {
      ADD_FAILURE() << "made a tier for " << C.Url << " " << C.KeyFile;
      return std::string();
    }
    return llvm::toString(T.takeError());
  };
  RemoteConfig Bad = C;
  Bad.Url = "http://x";
  EXPECT_NE(ErrorOf(Bad).find("expected redis://"), std::string::npos);
  Bad = C;
  Bad.KeyFile = "";
  EXPECT_NE(ErrorOf(Bad).find("no fleet key file"), std::string::npos);
  Bad = C;
  Bad.KeyFile = Dir.sub("absent");
  EXPECT_NE(ErrorOf(Bad).find("absent"), std::string::npos);
  Bad = C;
  ASSERT_EQ(::chmod(Key.c_str(), 0644), 0);
  EXPECT_NE(ErrorOf(Bad).find("chmod 600"), std::string::npos);
  ASSERT_EQ(::chmod(Key.c_str(), 0600), 0);
  for (const char *Prefix : {"", "a:b"}) {
    Bad = C;
    Bad.Prefix = Prefix;
    EXPECT_NE(ErrorOf(Bad).find("must be non-empty, without ':'"),
              std::string::npos)
        << Prefix;
  }
}

TEST(RemoteTierCreate, EnvironmentUseRemote) {
  TempDir Dir;
  StoreEnvironment Env(Dir.path(), readWrite());
  RemoteConfig C;
  C.Url = "unix://" + Dir.sub("s.sock");
  C.KeyFile = Dir.sub("absent.key");
  EXPECT_TRUE(failed(Env.useRemote(C)));
  EXPECT_EQ(Env.remote(), nullptr);
  C.KeyFile = writeFleetKeyFile(Dir.sub("k"));
  EXPECT_FALSE(failed(Env.useRemote(C)));
  ASSERT_NE(Env.remote(), nullptr);
  // A store opened in the environment is behind its tier; a copy of the
  // environment shares it.
  auto S = FileStore::open("cpu", "fp", Env);
  ASSERT_TRUE(S);
  EXPECT_EQ(S->remote(), Env.remote().get());
  StoreEnvironment Copy = Env;
  EXPECT_EQ(Copy.remote(), Env.remote());
}

} // namespace
