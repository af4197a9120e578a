//===- DictionaryTest.cpp - Entries compressed with zstd dictionaries ----===//

#include "Support/Kernels.h"
#include "Support/StoreTestSupport.h"

#include "kiln/CPU/CpuBackend.h"
#include "kiln/IR/Hash.h"
#include "kiln/Store/Bundle.h"
#include "kiln/Store/Dictionary.h"
#include "kiln/Store/FileStore.h"
#include "kiln/Store/StoreScan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"

#include "gtest/gtest.h"

#include <zstd.h>

#include <algorithm>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;
using namespace kiln::test;
using llvm::ArrayRef;

namespace {

std::vector<uint8_t> readBytes(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(In), {});
}
void writeBytes(const std::string &Path, ArrayRef<uint8_t> B) {
  std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
  Out.write(reinterpret_cast<const char *>(B.data()), B.size());
}
bool exists(const std::string &Path) {
  return ::access(Path.c_str(), F_OK) == 0;
}
std::string hex8(uint32_t Id) { return llvm::utohexstr(Id, true, 8); }

/// Payloads that share most of their bytes, as a namespace's objects do:
/// one common block, then a few hundred bytes of their own.
std::vector<std::vector<uint8_t>> samples(unsigned Count, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::vector<uint8_t> Common(3000);
  for (uint8_t &B : Common)
    B = uint8_t(Rng() % 40); // compressible, but not trivially
  std::vector<std::vector<uint8_t>> Out;
  for (unsigned I = 0; I != Count; ++I) {
    std::vector<uint8_t> P(Common.begin(), Common.begin() + 1500);
    for (unsigned J = 0; J != 300; ++J)
      P.push_back(uint8_t(Rng()));
    P.insert(P.end(), Common.begin() + 1500, Common.end());
    Out.push_back(std::move(P));
  }
  return Out;
}

std::shared_ptr<const EntryDictionary> trained(unsigned Seed) {
  std::vector<std::vector<uint8_t>> S = samples(24, Seed);
  std::vector<ArrayRef<uint8_t>> Refs(S.begin(), S.end());
  auto Bytes = trainEntryDictionary(Refs, 4096);
  EXPECT_TRUE(!!Bytes) << llvm::toString(Bytes.takeError());
  if (!Bytes)
    return nullptr;
  auto D = EntryDictionary::fromBytes(*Bytes);
  EXPECT_TRUE(!!D) << llvm::toString(D.takeError());
  return D ? *D : nullptr;
}

/// The error message of \p E (consumed), "" for success.
template <typename T> std::string errorOf(llvm::Expected<T> E) {
  return E ? std::string() : llvm::toString(E.takeError());
}

/// Sets the flags of the encoded entry \p File to \p Flags and fixes the
/// header checksum, so that only the flags are wrong.
void setFlags(std::vector<uint8_t> &File, uint32_t Flags) {
  using namespace llvm::support::endian;
  write32le(File.data() + 84, Flags);
  uint32_t H = read32le(File.data() + 12);
  write64le(File.data() + H - 8,
            llvm::xxh3_64bits(ArrayRef<uint8_t>(File.data(), H - 8)));
}

const KernelCacheKey Key{0x1234, 0x5678};
const uint64_t NSHash = 0x9abc;
const EntryInfo Info{"k-0011223344556677", "checked-a64", "+avx2", 0};

EntryExpectations expecting(std::shared_ptr<const EntryDictionary> D) {
  EntryExpectations E;
  E.Key = Key;
  E.NamespaceHash = NSHash;
  E.Dictionary = [D](uint32_t Id) {
    return D && D->id() == Id ? D : nullptr;
  };
  return E;
}

//===----------------------------------------------------------------------===//
// The entry format
//===----------------------------------------------------------------------===//

TEST(DictionaryEntry, WithoutDictionaryOnlyTheFeaturesFlag) {
  std::vector<uint8_t> P = samples(1, 1)[0];
  auto File = encodeEntry(Key, NSHash, Info, P);
  ASSERT_TRUE(!!File) << llvm::toString(File.takeError());
  EXPECT_EQ(llvm::support::endian::read32le(File->data() + 84),
            EntryFlagFeaturesInFrame);
  EntryHeader H;
  auto Back = decodeEntry(*File, expecting(nullptr), &H);
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_EQ(*Back, P);
  EXPECT_EQ(H.Flags, EntryFlagFeaturesInFrame);
  EXPECT_EQ(H.DictionaryId, 0u);
  EXPECT_EQ(H.Info.Features, "+avx2");
  // Without features, no flag at all: the layout of the first entries.
  EntryInfo NoFeatures = Info;
  NoFeatures.Features = "";
  auto Bare = encodeEntry(Key, NSHash, NoFeatures, P);
  ASSERT_TRUE(!!Bare);
  EXPECT_EQ(llvm::support::endian::read32le(Bare->data() + 84), 0u);
  auto BareBack = decodeEntry(*Bare, expecting(nullptr));
  ASSERT_TRUE(!!BareBack) << llvm::toString(BareBack.takeError());
  EXPECT_EQ(*BareBack, P);
}

TEST(DictionaryEntry, WithDictionaryRoundTripsAndShrinks) {
  std::shared_ptr<const EntryDictionary> D = trained(7);
  ASSERT_NE(D, nullptr);
  EXPECT_NE(D->id(), 0u);
  EXPECT_NE(D->compressionDict(), nullptr);
  EXPECT_NE(D->decompressionDict(), nullptr);
  // A payload the dictionary was not trained on, of the same kind.
  std::vector<uint8_t> P = samples(30, 7).back();
  auto Plain = encodeEntry(Key, NSHash, Info, P);
  auto File = encodeEntry(Key, NSHash, Info, P, D.get());
  ASSERT_TRUE(Plain && File);
  EXPECT_EQ(llvm::support::endian::read32le(File->data() + 84),
            EntryFlagDictionary | EntryFlagFeaturesInFrame);
  EXPECT_LT(File->size() * 2, Plain->size())
      << "plain " << Plain->size() << ", with the dictionary " << File->size();

  auto H = parseEntryHeader(*File);
  ASSERT_TRUE(!!H) << llvm::toString(H.takeError());
  EXPECT_EQ(H->DictionaryId, D->id());
  auto Back = decodeEntry(*File, expecting(D));
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_EQ(*Back, P);
}

TEST(DictionaryEntry, TheFrameKeepsOnlyTheFeaturesTheCodeNeeds) {
  EntryInfo I = Info;
  I.Features = "+avx2,-avx512f,+fma,-amx-tile";
  std::vector<uint8_t> P = samples(1, 2)[0];
  auto File = encodeEntry(Key, NSHash, I, P);
  ASSERT_TRUE(!!File);
  // Not in the header (its feature length is 0)...
  auto H = parseEntryHeader(*File);
  ASSERT_TRUE(!!H);
  EXPECT_EQ(H->Info.Features, "");
  EXPECT_EQ(llvm::support::endian::read32le(File->data() + 80), 0u);
  // ...but at the start of the frame, and checked after decompression.
  EntryHeader Out;
  EntryExpectations E = expecting(nullptr);
  auto Back = decodeEntry(*File, E, &Out);
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_EQ(*Back, P);
  EXPECT_EQ(Out.Info.Features, "+avx2,+fma");
  E.MissingFeature = [](llvm::StringRef Needed) -> std::string {
    return Needed.contains("+fma") ? "+fma" : "";
  };
  EXPECT_EQ(errorOf(decodeEntry(*File, E)),
            "needs CPU feature +fma the host lacks");
  EXPECT_EQ(entryFrameContent(I.Features, P).size(),
            4 + std::string("+avx2,+fma").size() + P.size());
}

// A small entry whose frame claims a huge payload is refused before the
// payload is allocated; the writer never makes one.
TEST(DictionaryEntry, ImplausibleCompressionRatiosAreRefused) {
  std::vector<uint8_t> Zeros(EntryMaxPlainSize * 8, 0);
  EXPECT_NE(errorOf(encodeEntry(Key, NSHash, Info, Zeros)).find("compresses to"),
            std::string::npos);
  // Up to EntryMaxPlainSize, anything goes.
  std::vector<uint8_t> Small(EntryMaxPlainSize - 64, 0); // with the features
  auto File = encodeEntry(Key, NSHash, Info, Small);
  ASSERT_TRUE(!!File) << llvm::toString(File.takeError());
  auto Back = decodeEntry(*File, expecting(nullptr));
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_EQ(Back->size(), Small.size());
  // Forge one: the header and frame of a 64 MiB payload of zeros (about
  // 2 KB), every checksum right.
  auto H = parseEntryHeader(*File);
  ASSERT_TRUE(!!H);
  std::vector<uint8_t> Big(size_t(64) << 20, 0);
  std::vector<uint8_t> Z(ZSTD_compressBound(Big.size()));
  size_t ZSize = ZSTD_compress(Z.data(), Z.size(), Big.data(), Big.size(), 3);
  ASSERT_FALSE(ZSTD_isError(ZSize));
  Z.resize(ZSize);
  std::vector<uint8_t> Forged(File->begin(), File->begin() + H->HeaderSize);
  Forged.insert(Forged.end(), Z.begin(), Z.end());
  llvm::support::endian::write64le(Forged.data() + 48, Big.size());
  llvm::support::endian::write64le(Forged.data() + 56, ZSize);
  llvm::support::endian::write64le(Forged.data() + 64,
                                   llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(Z)));
  // Without the feature list in front, the frame is the bare payload.
  llvm::support::endian::write32le(Forged.data() + 84, 0);
  size_t Sum = H->HeaderSize - 8;
  llvm::support::endian::write64le(
      Forged.data() + Sum,
      llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(Forged.data(), Sum)));
  ASSERT_TRUE(!!parseEntryHeader(Forged));
  EXPECT_NE(errorOf(decodeEntry(Forged, expecting(nullptr)))
                .find("cannot come from " + std::to_string(ZSize)),
            std::string::npos);
}

TEST(DictionaryEntry, MissingDictionaryIsAnErrorNamingIt) {
  std::shared_ptr<const EntryDictionary> D = trained(7);
  ASSERT_NE(D, nullptr);
  auto File = encodeEntry(Key, NSHash, Info, samples(1, 7)[0], D.get());
  ASSERT_TRUE(!!File);
  std::string Needs = "needs zstd dictionary " + hex8(D->id());

  // No lookup at all.
  EntryExpectations None;
  auto R = decodeEntry(*File, None);
  ASSERT_FALSE(!!R);
  bool Missing = false;
  std::string Msg;
  llvm::handleAllErrors(R.takeError(), [&](const MissingDictionaryError &E) {
    Missing = E.dictionaryId() == D->id();
    Msg = E.message();
  });
  EXPECT_TRUE(Missing);
  EXPECT_EQ(Msg, Needs);

  // A lookup that has nothing for it.
  EXPECT_EQ(errorOf(decodeEntry(*File, expecting(nullptr))), Needs);
}

TEST(DictionaryEntry, WrongDictionaryIsAnErrorNotACrash) {
  std::shared_ptr<const EntryDictionary> A = trained(7), B = trained(8);
  ASSERT_TRUE(A && B);
  ASSERT_NE(A->id(), B->id());
  std::vector<uint8_t> P = samples(1, 7)[0];
  auto File = encodeEntry(Key, NSHash, Info, P, A.get());
  ASSERT_TRUE(!!File);

  // A lookup that answers with another dictionary.
  EntryExpectations Expect;
  Expect.Dictionary = [B](uint32_t) { return B; };
  std::string Msg = errorOf(decodeEntry(*File, Expect));
  EXPECT_NE(Msg.find("zstd dictionary " + hex8(B->id()) + " given"),
            std::string::npos)
      << Msg;

  // Another dictionary carrying A's id (its id bytes rewritten): the
  // frame's content checksum catches it; bad bytes are never returned.
  std::vector<uint8_t> Forged(B->bytes().begin(), B->bytes().end());
  llvm::support::endian::write32le(Forged.data() + 4, A->id());
  auto F = EntryDictionary::fromBytes(Forged);
  ASSERT_TRUE(!!F) << llvm::toString(F.takeError());
  ASSERT_EQ((*F)->id(), A->id());
  Expect.Dictionary = [F = *F](uint32_t) { return F; };
  auto R = decodeEntry(*File, Expect);
  EXPECT_FALSE(!!R);
  if (!R) {
    EXPECT_NE(llvm::toString(R.takeError()).find("zstd decompression failed"),
              std::string::npos);
  }
}

TEST(DictionaryEntry, FlagsMustMatchTheFrame) {
  std::shared_ptr<const EntryDictionary> D = trained(7);
  ASSERT_NE(D, nullptr);
  std::vector<uint8_t> P = samples(1, 7)[0];
  auto Plain = encodeEntry(Key, NSHash, Info, P);
  auto WithDict = encodeEntry(Key, NSHash, Info, P, D.get());
  ASSERT_TRUE(Plain && WithDict);

  // Every flag bit but bits 0 and 1 is an error.
  for (uint32_t Bit = 2; Bit != 32; ++Bit) {
    std::vector<uint8_t> F = *Plain;
    setFlags(F, 1u << Bit);
    EXPECT_EQ(errorOf(parseEntryHeader(F)), "unknown header flags") << Bit;
  }
  // The flag on a frame that names no dictionary.
  std::vector<uint8_t> F = *Plain;
  setFlags(F, EntryFlagDictionary);
  EXPECT_NE(errorOf(parseEntryHeader(F)).find("names no dictionary"),
            std::string::npos);
  // A frame naming a dictionary without the flag.
  F = *WithDict;
  setFlags(F, 0);
  EXPECT_NE(errorOf(decodeEntry(F, expecting(D))).find("does not flag"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Dictionaries and their files
//===----------------------------------------------------------------------===//

TEST(EntryDictionary, FromBytesChecksWhatItIsGiven) {
  EXPECT_NE(errorOf(EntryDictionary::fromBytes({})).find("not a zstd dictionary"),
            std::string::npos);
  // Raw content has no dictionary id: no frame could name it.
  std::vector<uint8_t> Raw = samples(1, 3)[0];
  EXPECT_NE(errorOf(EntryDictionary::fromBytes(Raw)).find("with an id"),
            std::string::npos);
  std::shared_ptr<const EntryDictionary> D = trained(3);
  ASSERT_NE(D, nullptr);
  // Truncated tables.
  EXPECT_FALSE(!!EntryDictionary::fromBytes(D->bytes().take_front(12)));
  // Too large.
  std::vector<uint8_t> Big(D->bytes().begin(), D->bytes().end());
  Big.resize(DictionaryMaxSize + 1, 0x55);
  EXPECT_NE(errorOf(EntryDictionary::fromBytes(Big)).find("larger than"),
            std::string::npos);
}

TEST(EntryDictionary, TrainingNeedsFiveSamples) {
  std::vector<std::vector<uint8_t>> S = samples(DictionaryMinSamples - 1, 4);
  std::vector<ArrayRef<uint8_t>> Refs(S.begin(), S.end());
  auto R = trainEntryDictionary(Refs);
  ASSERT_FALSE(!!R);
  size_t Got = 0;
  std::string Msg;
  llvm::handleAllErrors(R.takeError(), [&](const TooFewSamplesError &E) {
    Got = E.samples();
    Msg = E.message();
  });
  EXPECT_EQ(Got, DictionaryMinSamples - 1);
  EXPECT_EQ(Msg, "4 samples, training a dictionary needs at least 5");
}

TEST(EntryDictionary, FileNames) {
  EXPECT_EQ(dictionaryFileName(0x1a2b), "zdict-00001a2b.dict");
  EXPECT_EQ(dictionaryIdFromFileName("zdict-00001a2b.dict"),
            std::optional<uint32_t>(0x1a2b));
  for (const char *Bad : {"zdict-1a2b.dict", "zdict-00001A2B.dict",
                          "zdict-00001a2b.dict.tmp-1-2", "zdict-current",
                          "kiln-00001a2b.dict"})
    EXPECT_EQ(dictionaryIdFromFileName(Bad), std::nullopt) << Bad;
  EXPECT_TRUE(isDictionaryFileName("zdict-current"));
  EXPECT_TRUE(isDictionaryFileName("zdict-00001a2b.dict.tmp-1-2"));
  EXPECT_FALSE(isDictionaryFileName("kiln-00000000000000000000000000000000.entry"));
}

struct NamespaceDictionariesTest : ::testing::Test {
  TempDir Dir;
  NamespaceDictionaries Dicts{Dir.path()};
  std::shared_ptr<const EntryDictionary> A = trained(7), B = trained(8);
  std::string path(uint32_t Id) { return Dir.sub(dictionaryFileName(Id)); }
};

TEST_F(NamespaceDictionariesTest, InstallWritesPrivateFilesAndCurrent) {
  ASSERT_TRUE(A && B);
  EXPECT_EQ(Dicts.current(), nullptr);
  auto Got = Dicts.loadCurrent();
  ASSERT_TRUE(!!Got) << "no current dictionary is not an error";
  EXPECT_EQ(*Got, nullptr);

  auto I = Dicts.install(A->bytes(), /*MakeCurrent=*/true);
  ASSERT_TRUE(!!I) << llvm::toString(I.takeError());
  EXPECT_EQ((*I)->id(), A->id());
  struct stat St;
  ASSERT_EQ(::stat(path(A->id()).c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(Dir.sub(CurrentDictionaryFileName).c_str(), &St), 0);
  EXPECT_EQ(St.st_mode & 0777, 0600u);
  std::vector<uint8_t> Cur = readBytes(Dir.sub(CurrentDictionaryFileName));
  EXPECT_EQ(std::string(Cur.begin(), Cur.end()), hex8(A->id()) + "\n");
  ASSERT_NE(Dicts.current(), nullptr);
  EXPECT_EQ(Dicts.current()->id(), A->id());
  // A fresh reader (another process) sees the same.
  NamespaceDictionaries Other(Dir.path());
  ASSERT_NE(Other.current(), nullptr);
  EXPECT_EQ(Other.current()->id(), A->id());
  EXPECT_EQ(Other.byId(A->id())->bytes(), A->bytes());
  // No temporary is left.
  std::vector<std::string> Left;
  if (DIR *D = ::opendir(Dir.path().c_str())) {
    while (dirent *E = ::readdir(D))
      if (E->d_name[0] != '.')
        Left.push_back(E->d_name);
    ::closedir(D);
  }
  std::sort(Left.begin(), Left.end());
  EXPECT_EQ(Left, (std::vector<std::string>{dictionaryFileName(A->id()),
                                            CurrentDictionaryFileName}));
}

TEST_F(NamespaceDictionariesTest, InstallNeverReplacesADictionary) {
  ASSERT_TRUE(A && B);
  ASSERT_TRUE(!!Dicts.install(A->bytes(), false));
  // The same bytes again: fine.
  ASSERT_TRUE(!!Dicts.install(A->bytes(), false));
  // Other bytes under A's id: refused, A kept.
  std::vector<uint8_t> Forged(B->bytes().begin(), B->bytes().end());
  llvm::support::endian::write32le(Forged.data() + 4, A->id());
  std::string Msg = errorOf(Dicts.install(Forged, true));
  EXPECT_NE(Msg.find("another dictionary with id " + hex8(A->id())),
            std::string::npos)
      << Msg;
  EXPECT_EQ(readBytes(path(A->id())), std::vector<uint8_t>(A->bytes().begin(),
                                                           A->bytes().end()));
  EXPECT_FALSE(exists(Dir.sub(CurrentDictionaryFileName)));
  // Garbage is refused before anything is written.
  EXPECT_FALSE(!!Dicts.install(samples(1, 1)[0], true));
}

TEST_F(NamespaceDictionariesTest, FileWithAnotherIdIsRefused) {
  ASSERT_TRUE(A && B);
  writeBytes(path(B->id()), A->bytes()); // A's bytes under B's name
  std::string Msg = errorOf(Dicts.load(B->id()));
  EXPECT_NE(Msg.find("holds dictionary " + hex8(A->id())), std::string::npos)
      << Msg;
  EXPECT_EQ(Dicts.byId(B->id()), nullptr);
}

TEST_F(NamespaceDictionariesTest, SymlinkIsRefused) {
  ASSERT_TRUE(A);
  std::string Elsewhere = Dir.sub("elsewhere");
  writeBytes(Elsewhere, A->bytes());
  ASSERT_EQ(::symlink(Elsewhere.c_str(), path(A->id()).c_str()), 0);
  std::string Msg = errorOf(Dicts.load(A->id()));
  EXPECT_NE(Msg.find("symbolic link"), std::string::npos) << Msg;
  // The current marker is not followed through a link either.
  std::string Text = hex8(A->id()) + "\n";
  writeBytes(Dir.sub("cur"), ArrayRef<uint8_t>(
                                 reinterpret_cast<const uint8_t *>(Text.data()),
                                 Text.size()));
  ASSERT_EQ(::symlink(Dir.sub("cur").c_str(),
                      Dir.sub(CurrentDictionaryFileName).c_str()),
            0);
  EXPECT_EQ(Dicts.current(), nullptr);
  EXPECT_NE(errorOf(Dicts.loadCurrent()).find("symbolic link"),
            std::string::npos);
}

TEST_F(NamespaceDictionariesTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_TRUE(A);
  ASSERT_EQ(::mkfifo(path(A->id()).c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(Dir.sub(CurrentDictionaryFileName).c_str(), 0600), 0);
  // A blocking open of a FIFO with no writer never returns: the alarm
  // ends the test binary rather than let it hang.
  ::alarm(20);
  std::string Msg = errorOf(Dicts.load(A->id()));
  std::string CurMsg = errorOf(Dicts.loadCurrent());
  ::alarm(0);
  EXPECT_NE(Msg.find("not a regular file"), std::string::npos) << Msg;
  EXPECT_NE(CurMsg.find("not a regular file"), std::string::npos) << CurMsg;
}

TEST_F(NamespaceDictionariesTest, OversizedFileIsRefusedBeforeReading) {
  ASSERT_TRUE(A);
  // A sparse file of 4 GiB: reading it first would take the memory.
  int FD = ::open(path(A->id()).c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(FD, 0);
  ASSERT_EQ(::write(FD, A->bytes().data(), A->bytes().size()),
            ssize_t(A->bytes().size()));
  ASSERT_EQ(::ftruncate(FD, off_t(4) << 30), 0);
  ::close(FD);
  std::string Msg = errorOf(Dicts.load(A->id()));
  EXPECT_NE(Msg.find("more than " + std::to_string(DictionaryMaxSize)),
            std::string::npos)
      << Msg;
  // An oversized current marker likewise.
  std::vector<uint8_t> Long(4096, '0');
  writeBytes(Dir.sub(CurrentDictionaryFileName), Long);
  EXPECT_NE(errorOf(Dicts.loadCurrent()).find("more than"), std::string::npos);
}

TEST_F(NamespaceDictionariesTest, BadCurrentMarkerIsNoDictionary) {
  ASSERT_TRUE(A);
  ASSERT_TRUE(!!Dicts.install(A->bytes(), false));
  std::string Text = "not hex\n";
  writeBytes(Dir.sub(CurrentDictionaryFileName),
             ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Text.data()),
                               Text.size()));
  EXPECT_EQ(Dicts.current(), nullptr);
  EXPECT_NE(errorOf(Dicts.loadCurrent()).find("does not hold a dictionary id"),
            std::string::npos);
  // Naming a dictionary that is not there.
  Text = "00000001\n";
  ::unlink(Dir.sub(CurrentDictionaryFileName).c_str());
  writeBytes(Dir.sub(CurrentDictionaryFileName),
             ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Text.data()),
                               Text.size()));
  EXPECT_EQ(Dicts.current(), nullptr);
}

TEST_F(NamespaceDictionariesTest, SwitchingCurrentKeepsOldEntriesReadable) {
  ASSERT_TRUE(A && B);
  ASSERT_TRUE(!!Dicts.install(A->bytes(), true));
  std::vector<std::vector<uint8_t>> S = samples(2, 7);
  auto Old = encodeEntry(Key, NSHash, Info, S[0], Dicts.current().get());
  ASSERT_TRUE(!!Old);

  // Another process makes B current: this reader notices.
  NamespaceDictionaries Other(Dir.path());
  ASSERT_TRUE(!!Other.install(B->bytes(), true));
  ASSERT_NE(Dicts.current(), nullptr);
  EXPECT_EQ(Dicts.current()->id(), B->id());
  auto New = encodeEntry(Key, NSHash, Info, S[1], Dicts.current().get());
  ASSERT_TRUE(!!New);

  // Both decode, each with its own dictionary, through one lookup, in a
  // reader that has loaded neither yet.
  NamespaceDictionaries Fresh(Dir.path());
  EntryExpectations Expect;
  Expect.Dictionary = Fresh.lookup();
  EntryHeader H;
  auto P0 = decodeEntry(*Old, Expect, &H);
  ASSERT_TRUE(!!P0) << llvm::toString(P0.takeError());
  EXPECT_EQ(*P0, S[0]);
  EXPECT_EQ(H.DictionaryId, A->id());
  auto P1 = decodeEntry(*New, Expect, &H);
  ASSERT_TRUE(!!P1) << llvm::toString(P1.takeError());
  EXPECT_EQ(*P1, S[1]);
  EXPECT_EQ(H.DictionaryId, B->id());

  // Back to A, by a rename within the same second: still noticed.
  ASSERT_TRUE(!!Other.install(A->bytes(), true));
  EXPECT_EQ(Dicts.current()->id(), A->id());
}

//===----------------------------------------------------------------------===//
// Retraining a namespace of real compiled objects
//===----------------------------------------------------------------------===//

const char *MoreKernels = R"(
kernel @fill cube_dim(64) (%y: buffer<u32, write>) {
  %i = absolute_pos : u32
  store %y[%i], 7:u32
}
kernel @scale cube_dim(32) (%x: buffer<f32, read_write>, %k: f32) {
  %i = absolute_pos : u32
  %v = load %x[%i] : f32
  %r = mul %v, %k : f32
  store %x[%i], %r
}
)";

/// The CPU backend's artifacts of a few kernels in a few variants, encoded
/// as the store keeps them, with their keys and infos: compiled once.
struct RealEntry {
  KernelCacheKey Key;
  EntryInfo Info;
  std::vector<uint8_t> Payload;
};
const std::vector<RealEntry> &realEntries() {
  static const std::vector<RealEntry> All = [] {
    std::vector<RealEntry> Out;
    std::vector<Module> Mods;
    Mods.push_back(parseOk(VaddText, "vadd.kiln"));
    Mods.push_back(parseOk(AffineText, "affine.kiln"));
    Mods.push_back(parseOk(MoreKernels, "more.kiln"));
    CpuCompiler C;
    for (const Module &M : Mods)
      for (const IRKernel &K : M.Kernels)
        for (bool Checked : {true, false}) {
          CpuVariant V;
          V.BoundsChecked = Checked;
          ArtifactId<CpuVariant> Id{KernelId(kernelIdFromIR(K), hashKernel(K)),
                                    V};
          CompilationRecording Rec;
          CompilationLogger Log;
          auto A = C.lower({K, "t.kiln"}, Id, Rec, Log);
          if (!A) {
            ADD_FAILURE() << llvm::toString(A.takeError());
            continue;
          }
          RealEntry E;
          E.Key = KernelCacheKey::fromArtifactId(Id, sourceBuildIdHash());
          E.Info = {Id.Kernel.str(), V.str(), A->Features, A->IRHash};
          E.Payload = ArtifactCodec<CpuArtifact>::encode(*A);
          Out.push_back(std::move(E));
        }
    return Out;
  }();
  return All;
}

struct RetrainTest : ::testing::Test {
  TempDir Root;
  std::unique_ptr<FileStore> Store;
  std::string Folder;
  void SetUp() override {
    Store = FileStore::openAt(Root.path(), "cpu", "fingerprint R", readWrite());
    ASSERT_NE(Store, nullptr);
    Folder = Store->folder();
  }
  /// Writes the first \p N real entries (all when 0) through the store.
  void fill(size_t N = 0) {
    const std::vector<RealEntry> &All = realEntries();
    ASSERT_GE(All.size(), 8u);
    for (size_t I = 0; I != (N ? N : All.size()); ++I)
      ASSERT_FALSE(failed(Store->write(All[I].Key, All[I].Payload, All[I].Info)));
  }
  std::string entryPath(const RealEntry &E) {
    return Folder + "/" + entryFileName(E.Key);
  }
  /// Decodes every real entry in the folder with its dictionaries.
  void expectAllDecode(size_t N = 0, uint32_t DictId = 0) {
    NamespaceDictionaries Dicts(Folder);
    const std::vector<RealEntry> &All = realEntries();
    for (size_t I = 0; I != (N ? N : All.size()); ++I) {
      EntryExpectations Expect;
      Expect.Key = All[I].Key;
      Expect.NamespaceHash = Store->namespaceHash();
      Expect.Dictionary = Dicts.lookup();
      EntryHeader H;
      auto P = decodeEntry(readBytes(entryPath(All[I])), Expect, &H);
      ASSERT_TRUE(!!P) << llvm::toString(P.takeError());
      EXPECT_EQ(*P, All[I].Payload);
      EXPECT_EQ(H.DictionaryId, DictId);
    }
  }
};

TEST_F(RetrainTest, ShrinksRealObjectsAndKeepsThemReadable) {
  fill();
  const std::vector<RealEntry> &All = realEntries();
  // One entry damaged: left alone, counted.
  std::string Bad = entryPath(All[0]);
  std::vector<uint8_t> B = readBytes(Bad);
  B[B.size() - 3] ^= 0xff;
  writeBytes(Bad, B);
  // The zstd frames alone, before and after (the headers shrink too: a
  // CPU's "-feature" list is not kept).
  auto FrameBytes = [&] {
    uint64_t Sum = 0;
    for (size_t I = 1; I != All.size(); ++I) {
      auto H = parseEntryHeader(readBytes(entryPath(All[I])));
      EXPECT_TRUE(!!H);
      Sum += H ? H->CompressedSize : 0;
    }
    return Sum;
  };
  uint64_t FramesBefore = FrameBytes();
  // Last uses survive recompression.
  struct timespec Old[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, entryPath(All[1]).c_str(), Old, 0), 0);

  auto R = retrainNamespace(Folder, Store->namespaceHash());
  ASSERT_TRUE(!!R) << llvm::toString(R.takeError());
  EXPECT_EQ(R->Entries, All.size() - 1);
  EXPECT_EQ(R->LeftAlone, 1u);
  EXPECT_EQ(R->Changed, 0u);
  EXPECT_NE(R->DictionaryId, 0u);
  EXPECT_GT(R->DictionarySize, 0u);
  EXPECT_LE(R->DictionarySize, DictionaryDefaultSize);
  // Real entries shrink to under half.
  EXPECT_LT(R->BytesAfter * 2, R->BytesBefore)
      << R->BytesBefore << " -> " << R->BytesAfter;
  uint64_t FramesAfter = FrameBytes();
  EXPECT_LT(FramesAfter * 3, FramesBefore * 2)
      << FramesBefore << " -> " << FramesAfter;
  EXPECT_EQ(readBytes(Bad), B) << "a bad entry is left as it was";
  EXPECT_TRUE(exists(Folder + "/" + dictionaryFileName(R->DictionaryId)));
  ASSERT_NE(NamespaceDictionaries(Folder).current(), nullptr);
  EXPECT_EQ(NamespaceDictionaries(Folder).current()->id(), R->DictionaryId);
  struct stat St;
  ASSERT_EQ(::stat(entryPath(All[1]).c_str(), &St), 0);
  EXPECT_EQ(St.st_mtime, 1000000000);
  EXPECT_EQ(St.st_mode & 0777, 0600u);

  ::unlink(Bad.c_str());
  std::vector<RealEntry> Good(All.begin() + 1, All.end());
  NamespaceDictionaries Dicts(Folder);
  for (const RealEntry &E : Good) {
    EntryExpectations Expect;
    Expect.Key = E.Key;
    Expect.NamespaceHash = Store->namespaceHash();
    Expect.Dictionary = Dicts.lookup();
    EntryHeader H;
    auto P = decodeEntry(readBytes(entryPath(E)), Expect, &H);
    ASSERT_TRUE(!!P) << llvm::toString(P.takeError());
    EXPECT_EQ(*P, E.Payload);
    EXPECT_EQ(H.DictionaryId, R->DictionaryId);
    EXPECT_EQ(H.Info.KernelId, E.Info.KernelId);
    EXPECT_EQ(H.Info.IRHash, E.Info.IRHash);
  }
}

TEST_F(RetrainTest, RetrainingAgainKeepsEveryEntryReadable) {
  fill();
  auto R1 = retrainNamespace(Folder, Store->namespaceHash(), 8192);
  ASSERT_TRUE(!!R1) << llvm::toString(R1.takeError());
  expectAllDecode(0, R1->DictionaryId);
  // The entries now decode with the first dictionary; a second training
  // on a smaller size gives another one and recompresses them again.
  auto R2 = retrainNamespace(Folder, Store->namespaceHash(), 4096);
  ASSERT_TRUE(!!R2) << llvm::toString(R2.takeError());
  ASSERT_NE(R2->DictionaryId, R1->DictionaryId);
  EXPECT_EQ(R2->Entries, realEntries().size());
  expectAllDecode(0, R2->DictionaryId);
  // The first is no longer named by any entry: kept during the grace
  // period, then pruned; the current one never is.
  EXPECT_EQ(llvm::cantFail(pruneDictionaries(Folder)), 0u);
  EXPECT_TRUE(exists(Folder + "/" + dictionaryFileName(R1->DictionaryId)));
  EXPECT_EQ(llvm::cantFail(pruneDictionaries(Folder, 0)), 1u);
  EXPECT_FALSE(exists(Folder + "/" + dictionaryFileName(R1->DictionaryId)));
  EXPECT_TRUE(exists(Folder + "/" + dictionaryFileName(R2->DictionaryId)));
  expectAllDecode(0, R2->DictionaryId);
}

TEST_F(RetrainTest, PruningKeepsEveryDictionaryWhenAnEntryCannotBeRead) {
  fill();
  const std::vector<RealEntry> &All = realEntries();
  auto R1 = retrainNamespace(Folder, Store->namespaceHash(), 8192);
  ASSERT_TRUE(!!R1) << llvm::toString(R1.takeError());
  std::string Path = entryPath(All[0]);
  std::vector<uint8_t> WithR1 = readBytes(Path);
  auto R2 = retrainNamespace(Folder, Store->namespaceHash(), 4096);
  ASSERT_TRUE(!!R2) << llvm::toString(R2.takeError());
  ASSERT_NE(R2->DictionaryId, R1->DictionaryId);
  std::string R1File = Folder + "/" + dictionaryFileName(R1->DictionaryId);

  // An entry compressed with R1 whose header cannot be read: which
  // dictionary it needs is unknown, so none is deleted (R1 was deleted).
  std::vector<uint8_t> Damaged = WithR1;
  Damaged[0] ^= 0xff;
  writeBytes(Path, Damaged);
  llvm::Expected<size_t> Pruned = pruneDictionaries(Folder, 0);
  ASSERT_FALSE(!!Pruned) << "pruned " << *Pruned;
  std::string Why = llvm::toString(Pruned.takeError());
  EXPECT_NE(Why.find("kept every dictionary"), std::string::npos) << Why;
  EXPECT_NE(Why.find(entryFileName(All[0].Key)), std::string::npos) << Why;
  EXPECT_TRUE(exists(R1File));

  // A good entry that needs R1 but that this user cannot read (as root
  // every file is readable: skipped).
  writeBytes(Path, WithR1);
  if (::geteuid() != 0) {
    ASSERT_EQ(::chmod(Path.c_str(), 0), 0);
    Pruned = pruneDictionaries(Folder, 0);
    EXPECT_FALSE(!!Pruned);
    if (!Pruned)
      llvm::consumeError(Pruned.takeError());
    EXPECT_TRUE(exists(R1File));
    ASSERT_EQ(::chmod(Path.c_str(), 0600), 0);
  }
  // Readable again: R1 is named by it, and kept; nothing else is unused.
  Pruned = pruneDictionaries(Folder, 0);
  ASSERT_TRUE(!!Pruned) << llvm::toString(Pruned.takeError());
  EXPECT_EQ(*Pruned, 0u);
  EXPECT_TRUE(exists(R1File));
}

TEST_F(RetrainTest, TooFewEntriesChangeNothing) {
  fill(DictionaryMinSamples - 1);
  auto R = retrainNamespace(Folder, Store->namespaceHash());
  ASSERT_FALSE(!!R);
  bool TooFew = false;
  llvm::handleAllErrors(R.takeError(), [&](const TooFewSamplesError &E) {
    TooFew = E.samples() == DictionaryMinSamples - 1;
  });
  EXPECT_TRUE(TooFew);
  EXPECT_FALSE(exists(Folder + "/" + CurrentDictionaryFileName));
  expectAllDecode(DictionaryMinSamples - 1, 0);
}

TEST_F(RetrainTest, ScanVerifyAndPruneKnowDictionaries) {
  fill();
  auto R = retrainNamespace(Folder, Store->namespaceHash());
  ASSERT_TRUE(!!R) << llvm::toString(R.takeError());
  std::vector<NamespaceDir> All = scanStore(Root.path());
  ASSERT_EQ(All.size(), 1u);
  ASSERT_EQ(All[0].Entries.size(), realEntries().size())
      << "dictionary files are not entries";
  for (const EntryFile &E : All[0].Entries)
    EXPECT_FALSE(test::failed(verifyEntryFile(All[0], E))) << E.Name;

  // Without its dictionary an entry is bad, and says why.
  std::string DictPath = Folder + "/" + dictionaryFileName(R->DictionaryId);
  std::vector<uint8_t> Saved = readBytes(DictPath);
  ASSERT_EQ(::unlink(DictPath.c_str()), 0);
  std::vector<NamespaceDir> Again = scanStore(Root.path());
  llvm::Error E = verifyEntryFile(Again[0], Again[0].Entries[0]);
  ASSERT_TRUE(!!E);
  EXPECT_EQ(llvm::toString(std::move(E)),
            "needs zstd dictionary " + hex8(R->DictionaryId));
  writeBytes(DictPath, Saved);

  // Pruning everything takes the entries and leaves the dictionaries.
  PruneResult P = pruneStore(Root.path(), 0);
  EXPECT_EQ(P.Removed, realEntries().size());
  EXPECT_TRUE(exists(DictPath));
  EXPECT_TRUE(exists(Folder + "/" + CurrentDictionaryFileName));
}

TEST_F(RetrainTest, BundleCarriesTheDictionariesItsEntriesNeed) {
  fill();
  auto R = retrainNamespace(Folder, Store->namespaceHash());
  ASSERT_TRUE(!!R) << llvm::toString(R.takeError());
  std::string Bundle = Root.sub("b.bundle");
  auto Ex = exportBundle(Root.path(), Bundle);
  ASSERT_TRUE(!!Ex) << llvm::toString(Ex.takeError());
  EXPECT_EQ(Ex->Entries, realEntries().size());
  EXPECT_EQ(Ex->Dictionaries, 1u);
  EXPECT_EQ(llvm::support::endian::read32le(readBytes(Bundle).data() + 8), 2u);

  TempDir To;
  StoreWarnings W;
  WarningCapture Cap(W);
  auto Im = importBundle(To.path(), Bundle, &W);
  ASSERT_TRUE(!!Im) << llvm::toString(Im.takeError());
  EXPECT_EQ(Im->Entries, realEntries().size());
  EXPECT_EQ(Im->Dictionaries, 1u);
  EXPECT_TRUE(Cap.Warnings.empty());
  std::vector<NamespaceDir> All = scanStore(To.path());
  ASSERT_EQ(All.size(), 1u);
  ASSERT_EQ(All[0].Entries.size(), realEntries().size());
  for (const EntryFile &E : All[0].Entries)
    EXPECT_FALSE(test::failed(verifyEntryFile(All[0], E))) << E.Name;
  // Installed, not made current: the importing store chooses its own.
  EXPECT_TRUE(exists(All[0].Path + "/" + dictionaryFileName(R->DictionaryId)));
  EXPECT_FALSE(exists(All[0].Path + "/" + CurrentDictionaryFileName));

  // A store without dictionaries still exports a version 1 bundle.
  TempDir Plain;
  auto S = FileStore::openAt(Plain.path(), "cpu", "fingerprint P", readWrite());
  ASSERT_FALSE(failed(S->write(realEntries()[0].Key, realEntries()[0].Payload,
                               realEntries()[0].Info)));
  auto Ex1 = exportBundle(Plain.path(), Plain.sub("p.bundle"));
  ASSERT_TRUE(!!Ex1);
  EXPECT_EQ(Ex1->Dictionaries, 0u);
  EXPECT_EQ(
      llvm::support::endian::read32le(readBytes(Plain.sub("p.bundle")).data() + 8),
      1u);
}

} // namespace
