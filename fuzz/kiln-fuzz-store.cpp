//===- kiln-fuzz-store.cpp - Fuzz what the store reads --------------------===//
//
// kiln-fuzz-store: the bytes the store reads from disk, bundles and the
// remote tier (docs/Store.md). The first input byte picks what the rest is:
//
//   bits 0-1  0: a store entry: parseEntryHeader and decodeEntry
//             1: a bundle: importBundle into a fresh temporary store
//             2: a remote value: openRemoteValue with a fixed fleet key
//             3: a remote address: RemoteAddress::parse, or with bit 2 a
//                zstd dictionary: EntryDictionary::fromBytes, installed
//                into a namespace folder and used
//   entry     bit 2: recompute the header and payload checksums and the
//                    compressed size first, so that mutations get past them
//             bit 3: expectations (key, namespace, IR hash, host features)
//             bits 4-5: the dictionary lookup: unset, the trained
//                    dictionary for its id, always null, the trained
//                    dictionary for any id
//   bundle    bit 2: recompute the bundle's checksum first
//   remote    bit 2: seal the bytes with the key first (opening must give
//                    them back exactly); bit 3: decode the opened payload
//                    as an entry
//
// The promises checked: no crash, hang, sanitizer report or unbounded
// allocation on any bytes; a decoded entry re-encodes to one that decodes
// to the same payload and header; an imported bundle's store exports to a
// bundle that imports in full into another store; sealing then opening
// gives the bytes back; an address that parses prints as one that parses
// to the same place; a dictionary that loads installs, loads back from its
// file, and compresses entries that decode with it.
//
// The dictionary is trained at start-up from deterministic samples. With
// KILN_FUZZ_WRITE_SEEDS=DIR set, the target writes seeds (entries with and
// without dictionary and features, bundles of version 1 and 2, sealed
// values, addresses) into DIR and exits: utils/fuzz-seeds.sh does that.
// Run it with utils/fuzz.sh kiln-fuzz-store SECONDS.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "kiln/Store/Bundle.h"
#include "kiln/Store/Dictionary.h"
#include "kiln/Store/EntryFormat.h"
#include "kiln/Store/Environment.h"
#include "kiln/Store/FileStore.h"
#include "kiln/Store/RemoteTier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace kiln;
using namespace llvm::support::endian;
using kiln::fuzz::finding;

namespace {

const KernelCacheKey SeedKey{0x0123456789abcdefull, 0x6b696c6e676f6c64ull};
constexpr uint64_t SeedIRHash = 0x1badb002cafef00dull;
constexpr const char *Fingerprint = "x86_64-unknown-linux-gnu fuzz +sse2";
constexpr const char *Features = "+sse2,+avx,+avx2,+fma,-avx512f";

std::shared_ptr<const EntryDictionary> Dict;
std::optional<FleetKey> Key;
std::string TempRoot; ///< this process's folder for bundles and stores

/// Deterministic sample payloads: object-file-like bytes with a shared
/// structure and a part of their own, enough for zstd's trainer.
const std::vector<std::vector<uint8_t>> &samples() {
  static std::vector<std::vector<uint8_t>> Out;
  if (!Out.empty())
    return Out;
  uint64_t State = 0x9e3779b97f4a7c15ull;
  auto Next = [&] {
    State ^= State << 13;
    State ^= State >> 7;
    State ^= State << 17;
    return State;
  };
  static const char Common[] =
      "\x7f"
      "ELF\x02\x01\x01 .text .rodata .symtab .strtab .rela.text "
      "kiln_cube_fn vmovups vfmadd231ps ymm0 ymm1 __kiln_plane_sum";
  for (unsigned I = 0; I < 64; ++I) {
    std::vector<uint8_t> S(Common, Common + sizeof(Common));
    size_t Own = 200 + Next() % 800;
    for (size_t J = 0; J < Own; ++J)
      S.push_back(J % 7 ? uint8_t(Next())
                        : uint8_t(Common[J % sizeof(Common)]));
    S.insert(S.end(), Common, Common + sizeof(Common));
    Out.push_back(std::move(S));
  }
  return Out;
}

std::vector<uint8_t> bytesOf(llvm::StringRef S) {
  return std::vector<uint8_t>(S.begin(), S.end());
}

/// The header and payload checksums and the compressed size made right for
/// whatever the strings' lengths say, where they fit in \p F.
void fixEntryChecksums(std::vector<uint8_t> &F) {
  if (F.size() < EntryFixedHeaderSize + 8)
    return;
  uint32_t K = read32le(&F[72]), V = read32le(&F[76]), Fe = read32le(&F[80]);
  if (K > EntryMaxStringSize || V > EntryMaxStringSize ||
      Fe > EntryMaxStringSize)
    return;
  uint64_t H = uint64_t(EntryFixedHeaderSize) + K + V + Fe + 8;
  if (H > F.size())
    return;
  write32le(&F[12], uint32_t(H));
  write64le(&F[56], F.size() - H);
  write64le(&F[64],
            llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(F).drop_front(H)));
  write64le(&F[H - 8],
            llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(F).take_front(H - 8)));
}

std::string hostMissing(llvm::StringRef List) {
  llvm::SmallVector<llvm::StringRef, 16> Parts;
  List.split(Parts, ',', -1, false);
  for (llvm::StringRef P : Parts) {
    P = P.trim();
    if (P != "+sse2" && P != "+avx" && P != "+avx2" && P != "+fma")
      return P.str();
  }
  return "";
}

void fuzzEntry(uint8_t Mode, llvm::ArrayRef<uint8_t> Data) {
  std::vector<uint8_t> File(Data.begin(), Data.end());
  if (Mode & 4)
    fixEntryChecksums(File);
  llvm::Expected<EntryHeader> H = parseEntryHeader(File);
  if (!H)
    llvm::consumeError(H.takeError());

  EntryExpectations Expect;
  if (Mode & 8) {
    Expect.Key = SeedKey;
    Expect.NamespaceHash = fingerprintHash(Fingerprint);
    Expect.IRHash = SeedIRHash;
    Expect.MissingFeature = hostMissing;
  }
  switch ((Mode >> 4) & 3) {
  case 0:
    break;
  case 1:
    Expect.Dictionary = [](uint32_t Id) {
      return Id == Dict->id() ? Dict : nullptr;
    };
    break;
  case 2:
    Expect.Dictionary = [](uint32_t) {
      return std::shared_ptr<const EntryDictionary>();
    };
    break;
  default:
    Expect.Dictionary = [](uint32_t) { return Dict; };
    break;
  }
  EntryHeader Got;
  llvm::Expected<std::vector<uint8_t>> Payload =
      decodeEntry(File, Expect, &Got);
  if (!Payload) {
    llvm::consumeError(Payload.takeError());
    return;
  }
  if (!H)
    finding("decodeEntry accepts an entry whose header parseEntryHeader "
            "refuses");

  // What decoded encodes again to an entry that decodes the same.
  std::shared_ptr<const EntryDictionary> Used =
      Got.DictionaryId ? Expect.Dictionary(Got.DictionaryId) : nullptr;
  llvm::Expected<std::vector<uint8_t>> Again =
      encodeEntry(Got.Key, Got.NamespaceHash, Got.Info, *Payload, Used.get());
  if (!Again) {
    std::string Why = llvm::toString(Again.takeError());
    // Compressing better than the original frame can cross the ratio limit.
    if (llvm::StringRef(Why).contains("more than readers accept"))
      return;
    finding("a decoded entry does not encode again: " + Why);
  }
  EntryHeader Got2;
  llvm::Expected<std::vector<uint8_t>> Payload2 =
      decodeEntry(*Again, Expect, &Got2);
  if (!Payload2)
    finding("a decoded entry, encoded again, does not decode: " +
            llvm::toString(Payload2.takeError()));
  if (*Payload2 != *Payload || Got2.Key != Got.Key ||
      Got2.NamespaceHash != Got.NamespaceHash ||
      Got2.Info.IRHash != Got.Info.IRHash ||
      Got2.Info.KernelId != Got.Info.KernelId ||
      Got2.Info.Variant != Got.Info.Variant)
    finding("a decoded entry, encoded again, decodes to something else");
}

/// A fresh empty folder \p Name under TempRoot.
std::string freshFolder(llvm::StringRef Name) {
  std::string Path = TempRoot + "/" + Name.str();
  if (std::error_code EC = llvm::sys::fs::remove_directories(Path))
    finding("cannot clean " + Path + ": " + EC.message());
  return Path;
}

void writeFile(const std::string &Path, llvm::ArrayRef<uint8_t> Bytes) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  if (EC)
    finding("cannot write " + Path + ": " + EC.message());
  OS.write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  OS.close();
  if (OS.has_error()) {
    std::string Why = OS.error().message();
    OS.clear_error();
    finding("cannot write " + Path + ": " + Why);
  }
}

void fuzzBundle(uint8_t Mode, llvm::ArrayRef<uint8_t> Data) {
  std::vector<uint8_t> Bytes(Data.begin(), Data.end());
  if ((Mode & 4) && Bytes.size() >= 8)
    write64le(&Bytes[Bytes.size() - 8],
              llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(Bytes).drop_back(8)));
  std::string In = TempRoot + "/in.bundle";
  writeFile(In, Bytes);
  std::string Root = freshFolder("store");
  StoreWarnings Warnings;
  llvm::Expected<BundleSummary> Sum = importBundle(Root, In, &Warnings);
  if (!Sum) {
    llvm::consumeError(Sum.takeError());
    return;
  }
  if (Sum->Entries == 0)
    return;
  // What was imported exports, and imports in full into another store.
  std::string Out = TempRoot + "/out.bundle";
  llvm::Expected<BundleSummary> Exported = exportBundle(Root, Out);
  if (!Exported)
    finding("a store made by importing a bundle does not export: " +
            llvm::toString(Exported.takeError()));
  if (Exported->Entries != Sum->Entries || Exported->Skipped != 0)
    finding("a store made by importing " + llvm::Twine(Sum->Entries) +
            " entries exports " + llvm::Twine(Exported->Entries) + " (" +
            llvm::Twine(Exported->Skipped) + " left out)");
  std::string Root2 = freshFolder("store2");
  llvm::Expected<BundleSummary> Again = importBundle(Root2, Out, &Warnings);
  if (!Again)
    finding("an exported bundle does not import: " +
            llvm::toString(Again.takeError()));
  if (Again->Entries != Sum->Entries || Again->Skipped != 0 ||
      Again->Refused != 0)
    finding("an exported bundle of " + llvm::Twine(Sum->Entries) +
            " entries imports " + llvm::Twine(Again->Entries) + " (" +
            llvm::Twine(Again->Skipped) + " skipped, " +
            llvm::Twine(Again->Refused) + " namespaces refused)");
}

std::string remoteName() {
  return remoteEntryName("kiln", "cpu", fingerprintHash(Fingerprint), SeedKey);
}

void fuzzRemote(uint8_t Mode, llvm::ArrayRef<uint8_t> Data) {
  std::string Name = remoteName();
  std::vector<uint8_t> Value(Data.begin(), Data.end());
  if (Mode & 4)
    Value = sealRemoteValue(*Key, Name, Data);
  llvm::Expected<std::vector<uint8_t>> Opened =
      openRemoteValue(*Key, Name, Value);
  if (!Opened) {
    std::string Why = llvm::toString(Opened.takeError());
    if (Mode & 4)
      finding("a value sealed with the key does not open: " + Why);
    return;
  }
  if ((Mode & 4) && *Opened != std::vector<uint8_t>(Data.begin(), Data.end()))
    finding("a sealed value opens to other bytes");
  if (Mode & 8)
    fuzzEntry(8 | (1 << 4), *Opened);
}

void fuzzAddress(llvm::ArrayRef<uint8_t> Data) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data.data()),
                       Data.size());
  llvm::Expected<RemoteAddress> A = RemoteAddress::parse(Text);
  if (!A) {
    llvm::consumeError(A.takeError());
    return;
  }
  // str() leaves the user and password out (it is for messages); the rest
  // reads back to the same place.
  std::string Printed = A->str();
  llvm::Expected<RemoteAddress> B = RemoteAddress::parse(Printed);
  if (!B)
    finding("the address '" + Text + "' prints as '" + Printed +
            "', which does not parse: " + llvm::toString(B.takeError()));
  if (B->Host != A->Host || B->Port != A->Port ||
      B->SocketPath != A->SocketPath || B->Database != A->Database)
    finding("the address '" + Text + "' prints as '" + Printed +
            "', which names another place");
}

void fuzzDictionary(llvm::ArrayRef<uint8_t> Data) {
  llvm::Expected<std::shared_ptr<const EntryDictionary>> D =
      EntryDictionary::fromBytes(Data);
  if (!D) {
    llvm::consumeError(D.takeError());
    return;
  }
  uint32_t Id = (*D)->id();
  if (Id == 0)
    finding("a dictionary with id 0 loads");
  // It installs as a namespace's current dictionary and loads back.
  std::string Folder = freshFolder("dict-ns");
  if (std::error_code EC = llvm::sys::fs::create_directories(
          Folder, true, llvm::sys::fs::perms::owner_all))
    finding("cannot create " + Folder + ": " + EC.message());
  NamespaceDictionaries Dicts(Folder);
  llvm::Expected<std::shared_ptr<const EntryDictionary>> Installed =
      Dicts.install(Data, /*MakeCurrent=*/true);
  if (!Installed)
    finding("a dictionary that loads does not install: " +
            llvm::toString(Installed.takeError()));
  NamespaceDictionaries Again(Folder);
  llvm::Expected<std::shared_ptr<const EntryDictionary>> Current =
      Again.loadCurrent();
  if (!Current)
    finding("an installed dictionary does not load back: " +
            llvm::toString(Current.takeError()));
  if (!*Current || (*Current)->id() != Id ||
      (*Current)->bytes() != llvm::ArrayRef<uint8_t>(Data))
    finding("an installed dictionary loads back as another");
  // Entries compressed with it decode with it.
  const std::vector<std::vector<uint8_t>> &Payloads = samples();
  EntryInfo Info;
  Info.KernelId = "k";
  Info.Features = Features;
  llvm::Expected<std::vector<uint8_t>> E = encodeEntry(
      SeedKey, fingerprintHash(Fingerprint), Info, Payloads[0], D->get());
  if (!E)
    finding("a dictionary that loads and installs does not compress: " +
            llvm::toString(E.takeError()));
  EntryExpectations Expect;
  Expect.Dictionary = Again.lookup();
  llvm::Expected<std::vector<uint8_t>> P = decodeEntry(*E, Expect);
  if (!P)
    finding("an entry compressed with a fuzzed dictionary does not decode: " +
            llvm::toString(P.takeError()));
  if (*P != Payloads[0])
    finding("an entry compressed with a fuzzed dictionary decodes to other "
            "bytes");
}

/// Writes the seeds of every mode into \p Dir (KILN_FUZZ_WRITE_SEEDS).
void writeSeeds(const std::string &Dir) {
  if (std::error_code EC = llvm::sys::fs::create_directories(Dir))
    finding("cannot create " + Dir + ": " + EC.message());
  unsigned Count = 0;
  auto Seed = [&](llvm::StringRef Name, uint8_t Mode,
                  llvm::ArrayRef<uint8_t> Bytes) {
    std::vector<uint8_t> Out = {Mode};
    Out.insert(Out.end(), Bytes.begin(), Bytes.end());
    writeFile(Dir + "/" + Name.str(), Out);
    ++Count;
  };
  const std::vector<std::vector<uint8_t>> &Payloads = samples();
  EntryInfo Info;
  Info.KernelId = "vadd-e8eb15a0f2339f1e";
  Info.Variant = "checked-a64";
  Info.IRHash = SeedIRHash;
  uint64_t NS = fingerprintHash(Fingerprint);
  auto Encode = [&](const EntryInfo &I, llvm::ArrayRef<uint8_t> P,
                    const EntryDictionary *D) {
    llvm::Expected<std::vector<uint8_t>> E = encodeEntry(SeedKey, NS, I, P, D);
    if (!E)
      finding("cannot encode a seed entry: " + llvm::toString(E.takeError()));
    return std::move(*E);
  };
  EntryInfo WithFeatures = Info;
  WithFeatures.Features = Features;
  std::vector<uint8_t> Plain = Encode(Info, Payloads[0], nullptr);
  std::vector<uint8_t> Feat = Encode(WithFeatures, Payloads[1], nullptr);
  std::vector<uint8_t> Dicted = Encode(Info, Payloads[2], Dict.get());
  std::vector<uint8_t> Both = Encode(WithFeatures, Payloads[3], Dict.get());
  Seed("entry-plain", 0x00, Plain);
  Seed("entry-plain-expect", 0x08, Plain);
  Seed("entry-features-fixed", 0x0c, Feat);
  Seed("entry-dict", 0x18, Dicted);
  Seed("entry-dict-features-fixed", 0x1c, Both);
  Seed("entry-dict-any", 0x34, Both);

  // Bundles: a store of one namespace exported, without and with
  // dictionary entries.
  for (bool WithDict : {false, true}) {
    std::string Root = freshFolder("seed-store");
    std::string NSDir = Root + "/cpu/" + fingerprintHex(Fingerprint);
    if (std::error_code EC = llvm::sys::fs::create_directories(
            NSDir, true, llvm::sys::fs::perms::owner_all))
      finding("cannot create " + NSDir + ": " + EC.message());
    writeFile(NSDir + "/" + FingerprintFileName,
              bytesOf(std::string(Fingerprint) + "\n"));
    if (WithDict) {
      NamespaceDictionaries Dicts(NSDir);
      if (auto D = Dicts.install(Dict->bytes(), /*MakeCurrent=*/true); !D)
        finding("cannot install the seed dictionary: " +
                llvm::toString(D.takeError()));
    }
    for (unsigned I = 0; I < 3; ++I) {
      KernelCacheKey K{SeedKey.Id + I, SeedKey.BuildId};
      llvm::Expected<std::vector<uint8_t>> E =
          encodeEntry(K, NS, I ? WithFeatures : Info, Payloads[4 + I],
                      WithDict ? Dict.get() : nullptr);
      if (!E)
        finding("cannot encode a seed entry: " + llvm::toString(E.takeError()));
      writeFile(NSDir + "/" + entryFileName(K), *E);
    }
    std::string Path = TempRoot + "/seed.bundle";
    llvm::Expected<BundleSummary> S = exportBundle(Root, Path);
    if (!S)
      finding("cannot export a seed bundle: " + llvm::toString(S.takeError()));
    if (S->Entries != 3)
      finding("a seed bundle holds " + llvm::Twine(S->Entries) +
              " entries, not 3");
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buf =
        llvm::MemoryBuffer::getFile(Path);
    if (!Buf)
      finding("cannot read " + Path);
    llvm::ArrayRef<uint8_t> B(
        reinterpret_cast<const uint8_t *>((*Buf)->getBufferStart()),
        (*Buf)->getBufferSize());
    Seed(WithDict ? "bundle-v2" : "bundle-v1", 0x01, B);
    Seed(WithDict ? "bundle-v2-fixed" : "bundle-v1-fixed", 0x05, B);
  }

  std::vector<uint8_t> Sealed = sealRemoteValue(*Key, remoteName(), Dicted);
  Seed("remote-sealed-entry", 0x0a, Sealed);
  Seed("remote-seal", 0x06, Plain);
  Seed("remote-seal-decode", 0x0e, Dicted);
  Seed("dictionary", 0x07, Dict->bytes());
  for (const char *A :
       {"redis://127.0.0.1:6379/0", "redis://user:secret@[::1]:6380/3",
        "redis://cache.internal", "unix:///run/redis/redis.sock?db=2",
        "unix:/tmp/r.sock"})
    Seed(std::string("address-") + std::to_string(Count), 0x03, bytesOf(A));
  llvm::outs() << "kiln-fuzz-store: wrote " << Count << " seeds into " << Dir
               << "\n";
}

void cleanUp() {
  if (!TempRoot.empty())
    (void)llvm::sys::fs::remove_directories(TempRoot);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fuzz::abortOnLLVMFatalErrors();
  const std::vector<std::vector<uint8_t>> &S = samples();
  std::vector<llvm::ArrayRef<uint8_t>> Refs(S.begin(), S.end());
  llvm::Expected<std::vector<uint8_t>> Trained =
      trainEntryDictionary(Refs, 4096);
  if (!Trained)
    finding("cannot train the dictionary: " +
            llvm::toString(Trained.takeError()));
  llvm::Expected<std::shared_ptr<const EntryDictionary>> D =
      EntryDictionary::fromBytes(*Trained);
  if (!D)
    finding("the trained dictionary does not load: " +
            llvm::toString(D.takeError()));
  Dict = *D;
  static const char KeyText[] = "kiln-fuzz-store fleet key, 32 bytes or more";
  llvm::Expected<FleetKey> K = FleetKey::fromBytes(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(KeyText), sizeof(KeyText) - 1));
  if (!K)
    finding("cannot make the fleet key: " + llvm::toString(K.takeError()));
  Key = std::move(*K);

  llvm::SmallString<128> Tmp;
  if (std::error_code EC =
          llvm::sys::fs::createUniqueDirectory("kiln-fuzz-store", Tmp))
    finding("cannot make a temporary folder: " + EC.message());
  TempRoot = std::string(Tmp);
  std::atexit(cleanUp);

  if (const char *Dir = std::getenv("KILN_FUZZ_WRITE_SEEDS")) {
    writeSeeds(Dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  uint8_t Mode = Data[0];
  llvm::ArrayRef<uint8_t> Rest(Data + 1, Size - 1);
  switch (Mode & 3) {
  case 0:
    fuzzEntry(Mode, Rest);
    break;
  case 1:
    fuzzBundle(Mode, Rest);
    break;
  case 2:
    fuzzRemote(Mode, Rest);
    break;
  default:
    if (Mode & 4)
      fuzzDictionary(Rest);
    else
      fuzzAddress(Rest);
    break;
  }
  return 0;
}
