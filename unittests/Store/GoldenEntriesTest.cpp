//===- GoldenEntriesTest.cpp - The golden store entries under test/Inputs -===//
//
// Generates the golden stores of test/Inputs/store deterministically (fixed
// keys, build id, fingerprint and payloads) and checks the committed files
// are exactly what the generator makes, so the lit tests of kiln-store run
// on entries of the current format. KILN_WRITE_GOLDENS=1 rewrites them.
//
//===----------------------------------------------------------------------===//

#include "Support/StoreTestSupport.h"

#include "kiln/Store/FileStore.h"

#include "llvm/Support/Endian.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sys/stat.h>

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr const char *Fingerprint =
    "x86_64-unknown-linux-gnu golden-cpu +avx2,+fma LLVM 19.1.7";
constexpr const char *OtherFingerprint =
    "aarch64-unknown-linux-gnu other-cpu +neon LLVM 19.1.7";
constexpr uint64_t GoldenBuild = 0x6b696c6e676f6c64; // "kilngold"

std::vector<uint8_t> objectLike(unsigned Seed, size_t N) {
  std::vector<uint8_t> P(N);
  for (size_t I = 0; I != N; ++I)
    P[I] = uint8_t(I % 16 == 0 ? Seed : (I * 5 + Seed) % 7);
  return P;
}

struct Golden {
  KernelCacheKey Key;
  EntryInfo Info;
  std::vector<uint8_t> Payload;
};

std::vector<Golden> goodEntries() {
  return {
      {{0x0123456789abcdef, GoldenBuild},
       {"add-0123456789abcdef", "checked-a64", "+avx2,+fma",
        0x1111222233334444},
       objectLike(1, 1500)},
      {{0xfedcba9876543210, GoldenBuild},
       {"scale-fedcba9876543210", "unchecked-a16", "+avx2", 0x5555666677778888},
       objectLike(2, 700)},
  };
}

std::vector<uint8_t> encode(const Golden &G, const char *FP = Fingerprint) {
  llvm::Expected<std::vector<uint8_t>> B =
      encodeEntry(G.Key, fingerprintHash(FP), G.Info, G.Payload);
  EXPECT_TRUE(bool(B));
  return B ? *B : std::vector<uint8_t>();
}

/// Every golden file: path relative to test/Inputs/store → contents.
std::map<std::string, std::vector<uint8_t>> goldenFiles() {
  std::map<std::string, std::vector<uint8_t>> Files;
  std::string NS = "/cpu/" + fingerprintHex(Fingerprint) + "/";
  std::vector<Golden> Good = goodEntries();
  auto addStore = [&](const std::string &Case, std::vector<uint8_t> First,
                      std::string FirstName = "") {
    std::string FP = std::string(Fingerprint) + "\n";
    Files[Case + NS + FingerprintFileName] =
        std::vector<uint8_t>(FP.begin(), FP.end());
    Files[Case + NS +
          (FirstName.empty() ? entryFileName(Good[0].Key) : FirstName)] =
        std::move(First);
    Files[Case + NS + entryFileName(Good[1].Key)] = encode(Good[1]);
  };
  std::vector<uint8_t> A = encode(Good[0]);
  addStore("valid", A);

  std::vector<uint8_t> T = A;
  T.resize(T.size() - 10);
  addStore("truncated", T);

  std::vector<uint8_t> H = A;
  H[EntryFixedHeaderSize + 1] ^= 0x04; // the kernel id text
  addStore("header-flip", H);

  std::vector<uint8_t> P = A;
  P[P.size() - 20] ^= 0x80;
  addStore("payload-flip", P);

  std::vector<uint8_t> M = A;
  std::memcpy(M.data(), "NOTKILN!", 8);
  addStore("bad-magic", M);

  std::vector<uint8_t> V = A;
  llvm::support::endian::write32le(V.data() + 8, EntryFormatVersion + 1);
  addStore("bad-version", V);

  addStore("other-namespace", encode(Good[0], OtherFingerprint));

  addStore("key-mismatch", A,
           entryFileName(KernelCacheKey{0x00000000deadbeef, GoldenBuild}));
  return Files;
}

std::vector<uint8_t> readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return {};
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(In), {});
}

TEST(GoldenEntries, CommittedFilesMatchTheGenerator) {
  std::map<std::string, std::vector<uint8_t>> Files = goldenFiles();
  ASSERT_EQ(Files.size(), 8u * 3u);
  std::string Dir = KILN_STORE_GOLDEN_DIR;
  const char *W = std::getenv("KILN_WRITE_GOLDENS");
  if (W && std::string(W) == "1") {
    for (const auto &[Rel, Bytes] : Files) {
      std::string Path = Dir + "/" + Rel;
      std::string Parent = Path.substr(0, Path.rfind('/'));
      ASSERT_EQ(std::system(("mkdir -p '" + Parent + "'").c_str()), 0);
      std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
      Out.write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
      ASSERT_TRUE(Out.good()) << Path;
    }
    return;
  }
  for (const auto &[Rel, Bytes] : Files)
    EXPECT_EQ(readFile(Dir + "/" + Rel), Bytes)
        << Rel << " differs from the generator: run KilnStoreTests with "
        << "KILN_WRITE_GOLDENS=1 after a deliberate format change";
}

TEST(GoldenEntries, ValidOnesDecodeAndCorruptOnesDoNot) {
  std::map<std::string, std::vector<uint8_t>> Files = goldenFiles();
  std::vector<Golden> Good = goodEntries();
  for (const auto &[Rel, Bytes] : Files) {
    if (Rel.find(".entry") == std::string::npos)
      continue;
    EntryExpectations E;
    E.Key = keyFromEntryFileName(Rel.substr(Rel.rfind('/') + 1));
    E.NamespaceHash = fingerprintHash(Fingerprint);
    llvm::Expected<std::vector<uint8_t>> P = decodeEntry(Bytes, E);
    bool ShouldBeGood =
        Rel.starts_with("valid/") ||
        Rel.find(entryFileName(Good[1].Key)) != std::string::npos;
    EXPECT_EQ(bool(P), ShouldBeGood) << Rel;
    if (!P)
      llvm::consumeError(P.takeError());
  }
}

// An entry of the first layout (flags 0, the feature list in the header),
// as Kiln wrote them before the list moved into the frame: kept as a file,
// it must still decode, with its features checked.
TEST(GoldenEntries, HeaderFeatureEntriesStillDecode) {
  std::vector<uint8_t> File = readFile(
      std::string(KILN_STORE_GOLDEN_DIR) +
      "-header-features/kiln-0123456789abcdef6b696c6e676f6c64.entry");
  ASSERT_FALSE(File.empty());
  std::vector<Golden> Good = goodEntries();
  llvm::Expected<EntryHeader> H = parseEntryHeader(File);
  ASSERT_TRUE(!!H) << llvm::toString(H.takeError());
  EXPECT_EQ(H->Flags, 0u);
  EXPECT_EQ(H->Info.Features, "+avx2,+fma");
  EntryExpectations E;
  E.Key = Good[0].Key;
  E.NamespaceHash = fingerprintHash(Fingerprint);
  llvm::Expected<std::vector<uint8_t>> P = decodeEntry(File, E);
  ASSERT_TRUE(!!P) << llvm::toString(P.takeError());
  EXPECT_EQ(*P, Good[0].Payload);
  E.MissingFeature = [](llvm::StringRef) -> std::string { return "+fma"; };
  llvm::Expected<std::vector<uint8_t>> Refused = decodeEntry(File, E);
  ASSERT_FALSE(!!Refused);
  EXPECT_EQ(llvm::toString(Refused.takeError()),
            "needs CPU feature +fma the host lacks");
}

} // namespace
