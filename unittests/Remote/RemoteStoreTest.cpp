//===- RemoteStoreTest.cpp - A FileStore behind a remote tier ------------===//
//
// FileStore::read asks the tier on a local miss and keeps what it gets
// locally; FileStore::write queues new entries for publication. Everything
// the tier returns passes the tag check and then the entry's own checks:
// a value for another fleet key, tampered with, for another namespace or
// key, or with a bad checksum is never returned, and is counted.
//
//===----------------------------------------------------------------------===//

#include "RemoteTestSupport.h"

#include "kiln/Store/ArtifactStore.h"
#include "kiln/Store/EntryFormat.h"

#include <atomic>
#include <functional>
#include <thread>

using namespace kiln;
using namespace kiln::test;

namespace {

class RemoteStore : public RemoteTest {
protected:
  /// A store in a folder of its own behind a tier of its own (\p C, default
  /// config()), both warning into \p W.
  struct Node {
    TempDir Root;
    std::shared_ptr<StoreWarnings> W = std::make_shared<StoreWarnings>();
    std::shared_ptr<RemoteTier> Tier;
    std::unique_ptr<FileStore> Store;
  };
  std::unique_ptr<Node> node(std::optional<RemoteConfig> C = std::nullopt,
                             const std::string &Fingerprint = "fingerprint A") {
    auto N = std::make_unique<Node>();
    N->Tier = makeTier(C ? *C : config(), N->W);
    N->Store = makeStore(N->Root.path(), N->Tier, N->W, Fingerprint);
    return N;
  }
  /// Writes \p Payload under \p Key in \p N and waits for its publication.
  void publishThrough(Node &N, const KernelCacheKey &Key,
                      const std::vector<uint8_t> &Payload) {
    ASSERT_FALSE(failed(N.Store->write(Key, Payload, infoFor(Key.Id))));
    ASSERT_TRUE(N.Tier->drain(milliseconds(10000)));
  }
  /// The sealed value under \p Key's remote name.
  std::string remoteValue(Node &N, const KernelCacheKey &Key) {
    std::optional<std::string> V = Server.get(N.Store->remoteName(Key));
    EXPECT_TRUE(V) << "nothing under " << N.Store->remoteName(Key);
    return V.value_or("");
  }
  std::string localPath(Node &N, const KernelCacheKey &Key) {
    return N.Store->folder() + "/" + entryFileName(Key);
  }

  KernelCacheKey Key{0x1234, 0x5678};
};

TEST_F(RemoteStore, PublicationPutsTheSealedEntryUnderItsName) {
  auto A = node();
  std::vector<uint8_t> P = payloadFor(1);
  publishThrough(*A, Key, P);

  std::string Name = "kiln:cpu:" + fingerprintHex("fingerprint A") + ":" +
                     Key.hex();
  EXPECT_EQ(A->Store->remoteName(Key), Name);
  EXPECT_EQ(Server.keys(), std::vector<std::string>{Name});
  // The value is the local entry file, sealed with the fleet key.
  std::string V = remoteValue(*A, Key);
  llvm::Expected<std::vector<uint8_t>> Opened =
      openRemoteValue(key(KeyFile), Name, asBytes(V));
  ASSERT_TRUE(!!Opened) << llvm::toString(Opened.takeError());
  EXPECT_EQ(*Opened, readFileBytes(localPath(*A, Key)));
  EXPECT_EQ(A->Tier->counters().Published, 1u);
  EXPECT_EQ(A->Store->pendingCounters().RemoteQueued, 1u);
  EXPECT_EQ(A->Store->pendingCounters().RemoteDropped, 0u);

  // The entry exists locally: a second write is refused, nothing is queued.
  EXPECT_TRUE(failed(A->Store->write(Key, P, infoFor(Key.Id))));
  ASSERT_TRUE(A->Tier->drain(milliseconds(10000)));
  EXPECT_EQ(A->Store->pendingCounters().RemoteQueued, 1u);
  EXPECT_EQ(A->Tier->counters().Published, 1u);

  // The first publisher wins: another value under the name is not
  // written over it.
  llvm::Expected<bool> Again = A->Tier->publishNow(Name, payloadFor(99));
  ASSERT_TRUE(!!Again) << llvm::toString(Again.takeError());
  EXPECT_FALSE(*Again);
  EXPECT_EQ(remoteValue(*A, Key), V);

  // listKeys sees it, with its size.
  llvm::Expected<std::vector<RemoteTier::KeySummary>> Keys =
      A->Tier->listKeys();
  ASSERT_TRUE(!!Keys) << llvm::toString(Keys.takeError());
  ASSERT_EQ(Keys->size(), 1u);
  EXPECT_EQ((*Keys)[0].Name, Name);
  EXPECT_EQ((*Keys)[0].Bytes, V.size());
  EXPECT_EQ(A->W->count(), 0u) << joined(A->W->recent());
}

TEST_F(RemoteStore, HitIsKeptLocally) {
  auto A = node();
  std::vector<uint8_t> P = payloadFor(2);
  publishThrough(*A, Key, P);

  auto B = node(); // an empty folder, the same tier configuration
  ASSERT_FALSE(fileExists(localPath(*B, Key)));
  std::optional<std::vector<uint8_t>> Got = B->Store->read(Key);
  ASSERT_TRUE(Got);
  EXPECT_EQ(*Got, P);
  EXPECT_TRUE(FileStore::lastReadCameFromRemote());
  StoreCounters C = B->Store->pendingCounters();
  EXPECT_EQ(C.Misses, 1u);
  EXPECT_EQ(C.RemoteHits, 1u);
  EXPECT_EQ(C.RemoteMisses, 0u);
  EXPECT_EQ(C.Writes, 1u) << "a remote hit is written to the local store";
  EXPECT_EQ(B->Tier->counters().Hits, 1u);
  // Written locally, byte for byte the publisher's entry...
  ASSERT_TRUE(fileExists(localPath(*B, Key)));
  EXPECT_EQ(readFileBytes(localPath(*B, Key)), readFileBytes(localPath(*A, Key)));
  // ...and not published back.
  ASSERT_TRUE(B->Tier->drain(milliseconds(10000)));
  EXPECT_EQ(B->Tier->counters().Published, 0u);
  EXPECT_EQ(C.RemoteQueued, 0u);

  // The third read is a local hit: the tier is not asked.
  Got = B->Store->read(Key);
  ASSERT_TRUE(Got);
  EXPECT_EQ(*Got, P);
  EXPECT_FALSE(FileStore::lastReadCameFromRemote());
  C = B->Store->pendingCounters();
  EXPECT_EQ(C.Hits, 1u);
  EXPECT_EQ(C.RemoteHits, 1u);
  EXPECT_EQ(B->Tier->counters().Hits, 1u);
  EXPECT_EQ(B->Tier->counters().Misses, 0u);

  // With the server gone, the local copy still serves.
  Server.kill9();
  auto Local = makeStore(B->Root.path(), nullptr);
  EXPECT_EQ(Local->read(Key), std::optional<std::vector<uint8_t>>(P));
  EXPECT_EQ(B->W->count(), 0u) << joined(B->W->recent());
}

TEST_F(RemoteStore, HitThroughAnArtifactStore) {
  auto A = node();
  auto B = node();
  ArtifactStore<uint32_t> SA(std::move(A->Store), nullptr, 77);
  ArtifactStore<uint32_t> SB(std::move(B->Store), nullptr, 77);
  KernelId K("First");
  ASSERT_TRUE(SA.keep(K, 0xC0FFEE, std::nullopt));
  ASSERT_TRUE(A->Tier->drain(milliseconds(10000)));
  EXPECT_EQ(SB.take(K), std::optional<uint32_t>(0xC0FFEE));
  EXPECT_TRUE(FileStore::lastReadCameFromRemote());
  EXPECT_EQ(SB.take(KernelId("Second")), std::nullopt);
  EXPECT_EQ(B->Tier->counters().Hits, 1u);
  EXPECT_EQ(B->Tier->counters().Misses, 1u);
}

TEST_F(RemoteStore, Miss) {
  auto B = node();
  EXPECT_EQ(B->Store->read(Key), std::nullopt);
  EXPECT_FALSE(FileStore::lastReadCameFromRemote());
  StoreCounters C = B->Store->pendingCounters();
  EXPECT_EQ(C.Misses, 1u);
  EXPECT_EQ(C.RemoteMisses, 1u);
  EXPECT_EQ(C.RemoteHits + C.RemoteErrors + C.RemoteRejected, 0u);
  RemoteCounters R = B->Tier->counters();
  EXPECT_EQ(R.Misses, 1u);
  EXPECT_EQ(R.Hits + R.Errors + R.Rejected + R.Skipped, 0u);
  EXPECT_FALSE(fileExists(localPath(*B, Key)));
  EXPECT_EQ(B->W->count(), 0u) << joined(B->W->recent());
}

TEST_F(RemoteStore, ReadOnlyModeConsumesButPublishesNothing) {
  RemoteConfig RO = config();
  RO.Mode = RemoteModeKind::ReadOnly;
  auto W = node(RO);
  EXPECT_TRUE(W->Tier->readOnly());
  for (uint64_t I = 0; I != 5; ++I)
    ASSERT_FALSE(failed(W->Store->write(KernelCacheKey{I, 1}, payloadFor(I),
                                        infoFor(I))));
  ASSERT_TRUE(W->Tier->drain(milliseconds(10000)));
  EXPECT_FALSE(W->Tier->publish("kiln:cpu:x:y", payloadFor(1)));
  llvm::Expected<bool> Now = W->Tier->publishNow("kiln:cpu:x:y", payloadFor(1));
  ASSERT_FALSE(!!Now);
  EXPECT_NE(llvm::toString(Now.takeError()).find("read-only"),
            std::string::npos);
  EXPECT_TRUE(Server.keys().empty()) << joined(Server.keys());
  EXPECT_EQ(W->Tier->counters().Published, 0u);
  EXPECT_EQ(W->Store->pendingCounters().RemoteQueued, 0u);
  EXPECT_EQ(W->Store->pendingCounters().Writes, 5u) << "kept locally";

  // It still takes what the fleet published.
  auto A = node();
  publishThrough(*A, Key, payloadFor(3));
  EXPECT_EQ(W->Store->read(Key),
            std::optional<std::vector<uint8_t>>(payloadFor(3)));
  EXPECT_TRUE(FileStore::lastReadCameFromRemote());
  EXPECT_EQ(W->Tier->counters().Hits, 1u);
}

TEST_F(RemoteStore, AnotherFleetKeyIsNeverLoaded) {
  auto A = node();
  publishThrough(*A, Key, payloadFor(4));
  RemoteConfig Other = config();
  Other.KeyFile = OtherKeyFile;
  auto B = node(Other);
  WarningCapture Cap(*B->W);
  EXPECT_EQ(B->Store->read(Key), std::nullopt);
  EXPECT_FALSE(FileStore::lastReadCameFromRemote());
  EXPECT_EQ(B->Store->pendingCounters().RemoteRejected, 1u);
  EXPECT_EQ(B->Store->pendingCounters().RemoteHits, 0u);
  EXPECT_EQ(B->Tier->counters().Rejected, 1u);
  EXPECT_EQ(B->Tier->counters().Hits, 0u);
  EXPECT_FALSE(fileExists(localPath(*B, Key)));
  ASSERT_EQ(Cap.Warnings.size(), 1u) << joined(Cap.Warnings);
  EXPECT_TRUE(anyContains(Cap.Warnings, "another fleet key"))
      << joined(Cap.Warnings);
  EXPECT_TRUE(anyContains(Cap.Warnings, B->Store->remoteName(Key)))
      << joined(Cap.Warnings);
  // Rejections are not failures of the server: no back-off.
  for (int I = 0; I != 5; ++I)
    EXPECT_EQ(B->Store->read(Key), std::nullopt);
  EXPECT_FALSE(B->Tier->backingOff());
  EXPECT_EQ(B->Tier->counters().Rejected, 6u);
  EXPECT_EQ(B->Tier->counters().Errors, 0u);
  // And what B compiles itself does not replace the fleet's entry.
  ASSERT_FALSE(failed(B->Store->write(Key, payloadFor(5), infoFor(1))));
  ASSERT_TRUE(B->Tier->drain(milliseconds(10000)));
  auto C = node();
  EXPECT_EQ(C->Store->read(Key),
            std::optional<std::vector<uint8_t>>(payloadFor(4)));
}

TEST_F(RemoteStore, TamperedValuesAreRejected) {
  auto A = node();
  publishThrough(*A, Key, payloadFor(6, 2000));
  std::string Name = A->Store->remoteName(Key);
  std::string Good = remoteValue(*A, Key);
  ASSERT_GT(Good.size(), 200u);
  // A byte in the seal's header, its tag, the entry's header, its payload.
  for (size_t At : {size_t(5), size_t(20), size_t(40), size_t(64 + 10),
                    size_t(64 + 100), Good.size() - 1}) {
    std::string Bad = Good;
    Bad[At] ^= 0x04;
    ASSERT_TRUE(Server.set(Name, Bad));
    auto B = node();
    WarningCapture Cap(*B->W);
    EXPECT_EQ(B->Store->read(Key), std::nullopt) << "byte " << At;
    EXPECT_EQ(B->Store->pendingCounters().RemoteRejected, 1u) << At;
    EXPECT_EQ(B->Tier->counters().Rejected, 1u) << At;
    EXPECT_EQ(B->Tier->counters().Hits, 0u) << At;
    EXPECT_FALSE(fileExists(localPath(*B, Key))) << At;
    EXPECT_EQ(Cap.Warnings.size(), 1u) << At << joined(Cap.Warnings);
  }
  // Put back, it serves again.
  ASSERT_TRUE(Server.set(Name, Good));
  auto B = node();
  EXPECT_EQ(B->Store->read(Key),
            std::optional<std::vector<uint8_t>>(payloadFor(6, 2000)));
}

TEST_F(RemoteStore, ValueMovedToAnotherKeyIsRejected) {
  auto A = node();
  KernelCacheKey Other{0x9999, 0x5678};
  publishThrough(*A, Key, payloadFor(7));
  ASSERT_TRUE(
      Server.set(A->Store->remoteName(Other), remoteValue(*A, Key)));
  auto B = node();
  WarningCapture Cap(*B->W);
  EXPECT_EQ(B->Store->read(Other), std::nullopt);
  EXPECT_TRUE(anyContains(Cap.Warnings, "bad authentication tag"))
      << joined(Cap.Warnings);
  EXPECT_EQ(B->Tier->counters().Rejected, 1u);
  EXPECT_FALSE(fileExists(localPath(*B, Other)));
}

/// A validly sealed value under the right name whose entry was made for
/// another namespace, another key, another IR hash, or with a payload
/// checksum that does not match: the entry checks refuse it.
class SealedButBad : public RemoteStore {
protected:
  /// Seals \p Entry with the fleet key under \p Key's name in namespace
  /// "fingerprint A", reads it through a fresh node, and checks it is
  /// refused with a warning containing \p Why.
  void expectRefused(const std::vector<uint8_t> &Entry, const std::string &Why,
                     std::optional<uint64_t> IRHash = std::nullopt,
                     std::function<std::string(llvm::StringRef)> Missing = {}) {
    auto B = node();
    if (Missing)
      B->Store->setMissingFeature(Missing);
    std::string Name = B->Store->remoteName(Key);
    ASSERT_TRUE(Server.set(Name, asString(sealRemoteValue(key(KeyFile), Name,
                                                          Entry))));
    WarningCapture Cap(*B->W);
    EXPECT_EQ(B->Store->read(Key, IRHash), std::nullopt);
    EXPECT_FALSE(FileStore::lastReadCameFromRemote());
    StoreCounters C = B->Store->pendingCounters();
    EXPECT_EQ(C.RemoteRejected, 1u);
    EXPECT_EQ(C.RemoteHits, 0u);
    EXPECT_EQ(C.Writes, 0u);
    RemoteCounters R = B->Tier->counters();
    EXPECT_EQ(R.Rejected, 1u);
    EXPECT_EQ(R.Hits, 0u) << "a hit the entry checks refused is not a hit";
    EXPECT_FALSE(fileExists(localPath(*B, Key)));
    ASSERT_EQ(Cap.Warnings.size(), 1u) << joined(Cap.Warnings);
    EXPECT_NE(Cap.Warnings[0].find(Why), std::string::npos) << Cap.Warnings[0];
    EXPECT_NE(Cap.Warnings[0].find(Name), std::string::npos) << Cap.Warnings[0];
    Server.command({"DEL", Name});
  }
  std::vector<uint8_t> entry(const KernelCacheKey &K, llvm::StringRef FP,
                             uint64_t IRHash = 0, std::string Features = "") {
    return llvm::cantFail(encodeEntry(K, fingerprintHash(FP),
                                      EntryInfo{"k", "", Features, IRHash},
                                      payloadFor(8, 500)));
  }
};

TEST_F(SealedButBad, ControlAGoodSealedEntryIsTaken) {
  auto B = node();
  std::string Name = B->Store->remoteName(Key);
  ASSERT_TRUE(Server.set(
      Name, asString(sealRemoteValue(key(KeyFile), Name,
                                     entry(Key, "fingerprint A")))));
  EXPECT_EQ(B->Store->read(Key),
            std::optional<std::vector<uint8_t>>(payloadFor(8, 500)));
  EXPECT_TRUE(FileStore::lastReadCameFromRemote());
}

TEST_F(SealedButBad, ForeignNamespace) {
  expectRefused(entry(Key, "fingerprint B"), "entry of another namespace");
}

TEST_F(SealedButBad, AnotherKernelsEntry) {
  expectRefused(entry(KernelCacheKey{0x4321, 0x5678}, "fingerprint A"),
                "key mismatch");
}

TEST_F(SealedButBad, StaleIRHash) {
  expectRefused(entry(Key, "fingerprint A", 0xaaaa), "stale entry",
                uint64_t(0xbbbb));
}

TEST_F(SealedButBad, NeedsAFeatureTheHostLacks) {
  expectRefused(entry(Key, "fingerprint A", 0, "+sse2,+imaginary"),
                "needs CPU feature +imaginary", std::nullopt,
                [](llvm::StringRef Features) -> std::string {
                  return Features.contains("+imaginary") ? "+imaginary" : "";
                });
}

TEST_F(SealedButBad, PayloadChecksumMismatch) {
  std::vector<uint8_t> E = entry(Key, "fingerprint A");
  E[E.size() - 3] ^= 0x10;
  expectRefused(E, "payload checksum mismatch");
}

TEST_F(SealedButBad, HeaderChecksumMismatch) {
  std::vector<uint8_t> E = entry(Key, "fingerprint A");
  E[EntryFixedHeaderSize] ^= 0x10; // the kernel id's text
  expectRefused(E, "header checksum mismatch");
}

TEST_F(SealedButBad, TruncatedEntry) {
  std::vector<uint8_t> E = entry(Key, "fingerprint A");
  E.resize(E.size() - 7);
  expectRefused(E, "truncated entry");
}

TEST_F(SealedButBad, NotAnEntryAtAll) {
  expectRefused(asBytes("#!/bin/sh\nrm -rf /\n"), "bad magic");
}

TEST_F(RemoteStore, ReadOnlyLocalStoreStillServesRemoteHits) {
  auto A = node();
  publishThrough(*A, Key, payloadFor(9));
  TempDir Root;
  StoreConfig RO = readWrite();
  RO.Mode = StoreModeKind::ReadOnly;
  auto Tier = makeTier(config());
  auto S = makeStore(Root.path(), Tier, nullptr, "fingerprint A", RO);
  EXPECT_EQ(S->read(Key), std::optional<std::vector<uint8_t>>(payloadFor(9)));
  EXPECT_TRUE(FileStore::lastReadCameFromRemote());
  // Nothing written in a read-only store.
  EXPECT_EQ(S->pendingCounters().Writes, 0u);
  EXPECT_FALSE(fileExists(S->folder() + "/" + entryFileName(Key)));
}

TEST_F(RemoteStore, ManyEntriesManyThreads) {
  auto A = node();
  constexpr unsigned N = 64;
  for (uint64_t I = 0; I != N; ++I)
    ASSERT_FALSE(failed(A->Store->write(KernelCacheKey{I, 3},
                                        payloadFor(I, 100 + I * 13),
                                        infoFor(I))));
  ASSERT_TRUE(A->Tier->drain(milliseconds(20000)));
  EXPECT_EQ(A->Tier->counters().Published, N);
  EXPECT_EQ(Server.keys("kiln:cpu:*").size(), N);

  auto B = node();
  std::atomic<unsigned> Wrong{0}, Remote{0};
  std::vector<std::thread> Threads;
  for (unsigned T = 0; T != 4; ++T)
    Threads.emplace_back([&, T] {
      for (uint64_t I = T; I < N + 8; I += 2) { // overlapping, some absent
        std::optional<std::vector<uint8_t>> Got =
            B->Store->read(KernelCacheKey{I, 3});
        if (I < N ? Got != payloadFor(I, 100 + I * 13) : Got.has_value())
          ++Wrong;
        if (FileStore::lastReadCameFromRemote())
          ++Remote;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Wrong, 0u);
  // Each entry came from the tier at least once, and at most once per
  // thread that raced for it.
  EXPECT_GE(Remote, N);
  EXPECT_LE(Remote, 2 * N);
  EXPECT_EQ(B->Tier->counters().Hits, Remote.load());
  for (uint64_t I = 0; I != N; ++I)
    EXPECT_TRUE(fileExists(localPath(*B, KernelCacheKey{I, 3}))) << I;
  EXPECT_EQ(B->W->count(), 0u) << joined(B->W->recent());
}

} // namespace
