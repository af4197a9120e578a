//===- RemoteCommands.cpp - kiln-store remote push|stats -----------------===//
//
// `kiln-store remote push [BUNDLE]` publishes a local store's entries (or a
// bundle's) to the remote tier; `kiln-store remote stats` shows what the
// tier holds, what the server says of itself, and what this machine's
// stores counted of the tier (docs/Tools.md §4).
//
//===----------------------------------------------------------------------===//

#include "RemoteCommands.h"

#include "kiln/Store/Bundle.h"
#include "kiln/Store/Dictionary.h"
#include "kiln/Store/FileStore.h"
#include "kiln/Store/StoreScan.h"
#include "support/RemoteOptions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <map>
#include <set>

using namespace llvm;

namespace kiln::tools {

namespace {

/// Reads the entry \p E (at most \p Max bytes).
Expected<std::vector<uint8_t>> readEntryBytes(const EntryFile &E, size_t Max) {
  if (E.Size > Max)
    return createStringError(std::make_error_code(std::errc::file_too_large),
                             "larger than the remote tier takes (" +
                                 Twine(Max) + " bytes)");
  ErrorOr<std::unique_ptr<MemoryBuffer>> B =
      MemoryBuffer::getFile(E.Path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!B)
    return errorCodeToError(B.getError());
  if ((*B)->getBufferSize() > Max)
    return createStringError(std::make_error_code(std::errc::file_too_large),
                             "grew while being read");
  ArrayRef<uint8_t> Bytes(
      reinterpret_cast<const uint8_t *>((*B)->getBufferStart()),
      (*B)->getBufferSize());
  return std::vector<uint8_t>(Bytes.begin(), Bytes.end());
}

struct PushSummary {
  size_t Pushed = 0, AlreadyThere = 0, Bad = 0, Failed = 0, Dictionaries = 0;
};

/// Publishes every valid entry under \p Root whose "backend/hex" starts
/// with \p Filter.
PushSummary pushStore(RemoteTier &Tier, StringRef Root, StringRef Filter,
                      StringRef ToolName) {
  PushSummary S;
  std::vector<UnlistedFolder> Unlisted;
  std::vector<NamespaceDir> All = scanStore(Root, &Unlisted);
  for (const UnlistedFolder &F : Unlisted) { // entries nobody could push
    ++S.Failed;
    errs() << ToolName << ": error: cannot list '" << F.Path << "': " << F.Why
           << " (its entries are left out)\n";
  }
  for (const NamespaceDir &NS : All) {
    if (!StringRef(NS.Backend + "/" + NS.Hex).starts_with(Filter))
      continue;
    std::set<uint32_t> PushedDicts;
    for (const EntryFile &E : NS.Entries) {
      EntryHeader H;
      if (Error Err = verifyEntryFile(NS, E, &H)) {
        errs() << ToolName << ": warning: not pushing " << E.Path << ": "
               << toString(std::move(Err)) << "\n";
        ++S.Bad;
        continue;
      }
      Expected<std::vector<uint8_t>> Bytes =
          readEntryBytes(E, Tier.config().MaxValueBytes);
      Expected<EntryHeader> Again =
          Bytes ? parseEntryHeader(*Bytes) : Expected<EntryHeader>(Bytes.takeError());
      if (!Again || Again->Key != H.Key) {
        errs() << ToolName << ": warning: not pushing " << E.Path << ": "
               << (Again ? "changed while being read"
                         : toString(Again.takeError()))
               << "\n";
        ++S.Bad;
        continue;
      }
      // The dictionary the entry needs goes first, once per namespace.
      if (H.DictionaryId && PushedDicts.insert(H.DictionaryId).second) {
        Expected<std::shared_ptr<const EntryDictionary>> D =
            NS.Dictionaries->load(H.DictionaryId);
        Expected<bool> Set =
            D ? Tier.publishNow(remoteDictionaryName(
                                    Tier.config().Prefix, NS.Backend,
                                    H.NamespaceHash, H.DictionaryId),
                                (*D)->bytes())
              : Expected<bool>(D.takeError());
        if (!Set) {
          errs() << ToolName << ": error: pushing dictionary "
                 << utohexstr(H.DictionaryId, true, 8) << " of " << NS.Path
                 << ": " << toString(Set.takeError()) << "\n";
          PushedDicts.erase(H.DictionaryId);
          ++S.Failed;
          continue;
        }
        ++S.Dictionaries;
      }
      std::string Name = remoteEntryName(Tier.config().Prefix, NS.Backend,
                                         H.NamespaceHash, H.Key);
      Expected<bool> Set = Tier.publishNow(Name, *Bytes);
      if (!Set) {
        errs() << ToolName << ": error: pushing " << E.Path << ": "
               << toString(Set.takeError()) << "\n";
        ++S.Failed;
        continue;
      }
      ++(*Set ? S.Pushed : S.AlreadyThere);
    }
  }
  return S;
}

int push(RemoteTier &Tier, StringRef Root, ArrayRef<std::string> Args,
         StringRef Filter, StringRef ToolName) {
  std::string From = Root.str();
  SmallString<128> Temp;
  if (!Args.empty()) {
    // A bundle: imported (and checked) into a private folder, pushed from
    // there.
    if (std::error_code EC =
            sys::fs::createUniqueDirectory("kiln-store-push", Temp)) {
      errs() << ToolName << ": error: cannot make a temporary folder: "
             << EC.message() << "\n";
      return 1;
    }
    Expected<BundleSummary> B = importBundle(Temp, Args[0]);
    if (!B) {
      errs() << ToolName << ": error: " << Args[0] << ": "
             << toString(B.takeError()) << "\n";
      sys::fs::remove_directories(Temp);
      return 1;
    }
    From = std::string(Temp);
  }
  PushSummary S = pushStore(Tier, From, Filter, ToolName);
  if (!Temp.empty())
    sys::fs::remove_directories(Temp);
  fmt::print("pushed {} entries to {} ({} there already, {} bad left out, "
             "{} failed){}\n",
             S.Pushed, Tier.where(), S.AlreadyThere, S.Bad, S.Failed,
             S.Dictionaries
                 ? fmt::format(" with {} dictionaries", S.Dictionaries)
                 : "");
  return S.Failed ? 1 : 0;
}

/// "field:value" of an INFO text.
std::map<std::string, std::string> parseInfo(StringRef Text) {
  std::map<std::string, std::string> Out;
  SmallVector<StringRef, 64> Lines;
  Text.split(Lines, '\n');
  for (StringRef L : Lines) {
    L = L.trim();
    if (L.empty() || L.starts_with("#"))
      continue;
    auto [K, V] = L.split(':');
    Out[K.str()] = V.str();
  }
  return Out;
}

int stats(RemoteTier &Tier, StringRef Root, StringRef ToolName) {
  auto Keys = Tier.listKeys();
  if (!Keys) {
    errs() << ToolName << ": error: " << toString(Keys.takeError()) << "\n";
    return 1;
  }
  // Per namespace: PREFIX:BACKEND:NSHEX:(KEYHEX|zdict-ID).
  struct NsTotals {
    size_t Entries = 0, Dictionaries = 0;
    uint64_t Bytes = 0;
  };
  std::map<std::string, NsTotals> ByNs;
  size_t Other = 0;
  for (const RemoteTier::KeySummary &K : *Keys) {
    SmallVector<StringRef, 4> Parts;
    StringRef(K.Name).split(Parts, ':');
    if (Parts.size() != 4) {
      ++Other;
      continue;
    }
    NsTotals &T = ByNs[(Parts[1] + "/" + Parts[2]).str()];
    ++(Parts[3].starts_with("zdict-") ? T.Dictionaries : T.Entries);
    T.Bytes += K.Bytes;
  }
  fmt::print("remote tier {} (keys under \"{}:\")\n", Tier.where(),
             Tier.config().Prefix);
  size_t Entries = 0;
  uint64_t Bytes = 0;
  for (const auto &[Ns, T] : ByNs) {
    fmt::print("  {}: {} entries, {} dictionaries, {} bytes\n", Ns, T.Entries,
               T.Dictionaries, T.Bytes);
    Entries += T.Entries;
    Bytes += T.Bytes;
  }
  fmt::print("  total: {} entries in {} namespaces, {} bytes{}\n", Entries,
             ByNs.size(), Bytes,
             Other ? fmt::format(" ({} other keys)", Other) : "");
  if (Expected<std::string> Mem = Tier.serverInfo("memory")) {
    auto I = parseInfo(*Mem);
    fmt::print("server: used memory {}, maxmemory {} ({})\n",
               I["used_memory_human"], I["maxmemory_human"],
               I["maxmemory_policy"]);
  } else {
    consumeError(Mem.takeError());
  }
  if (Expected<std::string> St = Tier.serverInfo("stats")) {
    auto I = parseInfo(*St);
    fmt::print("server: keyspace hits {}, misses {}, evicted keys {}\n",
               I["keyspace_hits"], I["keyspace_misses"], I["evicted_keys"]);
  } else {
    consumeError(St.takeError());
  }
  // What this machine's processes counted of the tier (the stats files).
  StoreCounters Local;
  for (const NamespaceDir &NS : scanStore(Root)) {
    SmallString<256> P(NS.Path);
    sys::path::append(P, StatsFileName);
    Local += readStoreCounters(P);
  }
  fmt::print("this store ({}): remote hits {}, misses {}, errors {}, "
             "rejected {}, queued for publication {}, dropped {}\n",
             Root, Local.RemoteHits, Local.RemoteMisses, Local.RemoteErrors,
             Local.RemoteRejected, Local.RemoteQueued, Local.RemoteDropped);
  return 0;
}

} // namespace

int runRemoteCommand(StringRef Root, ArrayRef<std::string> Args,
                     StringRef NamespaceFilter, StringRef ToolName) {
  if (Args.empty() || (Args[0] != "push" && Args[0] != "stats")) {
    errs() << ToolName
           << ": error: expected 'remote push [BUNDLE]' or 'remote stats'\n";
    return 1;
  }
  StringRef Sub = Args[0];
  ArrayRef<std::string> Rest = Args.drop_front();
  if (Rest.size() > (Sub == "push" ? 1u : 0u)) {
    errs() << ToolName << ": error: too many arguments to 'remote " << Sub
           << "'\n";
    return 1;
  }
  Expected<RemoteConfig> C = effectiveRemoteConfig();
  if (!C) {
    errs() << ToolName << ": error: " << toString(C.takeError()) << "\n";
    return 1;
  }
  auto Warnings = std::make_shared<StoreWarnings>(printWarningToStderr);
  Expected<std::shared_ptr<RemoteTier>> Tier = RemoteTier::create(*C, Warnings);
  if (!Tier) {
    errs() << ToolName << ": error: " << toString(Tier.takeError()) << "\n";
    return 1;
  }
  if (Sub == "push")
    return push(**Tier, Root, Rest, NamespaceFilter, ToolName);
  return stats(**Tier, Root, ToolName);
}

} // namespace kiln::tools
