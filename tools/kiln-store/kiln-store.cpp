//===- kiln-store.cpp - Inspect and maintain a Kiln kernel store ----------===//
//
// kiln-store [--store=DIR] stats|list|verify [--purge]|prune [--max-size=SIZE]
//            |clear|export BUNDLE|import BUNDLE
//            |train-dict [--namespace=BACKEND/HEX] [--dict-size=SIZE]
//            |remote push [BUNDLE]|remote stats   [--remote=URL ...]
// (docs/Tools.md §4). The work is in kiln/Store; this is the command line.
//
//===----------------------------------------------------------------------===//

#include "RemoteCommands.h"
#include "support/ArgSpec.h"
#include "support/RemoteOptions.h"

#include "kiln/Store/Bundle.h"
#include "kiln/Store/Dictionary.h"
#include "kiln/Store/Environment.h"
#include "kiln/Store/FileStore.h"
#include "kiln/Store/StoreScan.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

using namespace llvm;
using namespace kiln;

static cl::OptionCategory Cat("kiln-store options");

static cl::opt<std::string>
    StoreDir("store",
             cl::desc("The store's root folder (default: KILN_CACHE_DIR, else "
                      "$XDG_CACHE_HOME/kiln, else ~/.cache/kiln)"),
             cl::value_desc("DIR"), cl::cat(Cat));
static cl::opt<bool> Purge("purge",
                           cl::desc("verify: remove the bad entries it finds"),
                           cl::cat(Cat));
static cl::opt<std::string> MaxSize(
    "max-size",
    cl::desc("prune: the size to prune down to, in bytes with an optional "
             "K/M/G suffix (default: KILN_CACHE_MAX_SIZE, else 1G)"),
    cl::value_desc("SIZE"), cl::cat(Cat));
static cl::opt<std::string> NamespaceFilter(
    "namespace",
    cl::desc("export, train-dict: only the namespaces whose BACKEND/HEX "
             "starts with this"),
    cl::value_desc("BACKEND/HEX"), cl::cat(Cat));
static cl::opt<std::string> DictSize(
    "dict-size",
    cl::desc("train-dict: the dictionary size to aim for, in bytes with an "
             "optional K/M suffix, 1K to 1M (default 16K)"),
    cl::value_desc("SIZE"), cl::cat(Cat));
static cl::opt<std::string>
    Command(cl::Positional, cl::Required,
            cl::desc("<stats|list|verify|prune|clear|export|import|train-dict|remote>"),
            cl::cat(Cat));
static cl::list<std::string> Args(cl::Positional, cl::desc("[BUNDLE]"),
                                  cl::cat(Cat));

static const char *ToolName = "kiln-store";

[[noreturn]] static void fail(const Twine &Message) {
  WithColor::error(errs(), ToolName) << Message << '\n';
  std::exit(1);
}

static std::string timeText(int64_t Ns) {
  std::time_t T = std::time_t(Ns / 1000000000);
  std::tm TM;
  gmtime_r(&T, &TM);
  char Buf[32];
  std::strftime(Buf, sizeof(Buf), "%Y-%m-%dT%H:%M:%SZ", &TM);
  return Buf;
}

/// The header of \p E of \p NS, or an error saying why it cannot be read.
/// Never opens what is not a regular file of the folder's owner, never
/// reads more than EntryMaxFileSize.
static Expected<EntryHeader> readHeader(const NamespaceDir &NS,
                                        const EntryFile &E) {
  if (E.Fault != StoreFileFault::None)
    return make_error<StoreFileError>(E.Fault, E.Why);
  Expected<std::vector<uint8_t>> File =
      readStoreFile(E.Path, EntryMaxFileSize, NS.Owner);
  if (!File)
    return File.takeError();
  return parseEntryHeader(*File);
}

static void expectArgs(size_t N) {
  if (Args.size() != N)
    fail("'" + Command + "' takes " +
         (N ? Twine("one argument: the bundle file") : Twine("no argument")));
}

// Reports go to stdout through fmt; errors go to stderr through errs().

/// Says on stderr which folders of the store could not be listed (their
/// entries are missing from the report); true when there were any, which
/// makes the command's exit status 1.
static bool reportUnlisted(const std::vector<UnlistedFolder> &Unlisted) {
  for (const UnlistedFolder &F : Unlisted)
    WithColor::error(errs(), ToolName)
        << "cannot list '" << F.Path << "': " << F.Why
        << " (its entries are left out)\n";
  return !Unlisted.empty();
}

static int runStats(StringRef Root) {
  StoreWarnings Warnings(printWarningToStderr);
  std::vector<UnlistedFolder> Unlisted;
  std::vector<NamespaceDir> All = scanStore(Root, &Unlisted);
  fmt::print("store: {}\n", Root.str());
  uint64_t Entries = 0, Bytes = 0;
  for (const NamespaceDir &NS : All) {
    uint64_t Disk = 0, Before = 0, Count = 0, Bad = 0;
    for (const EntryFile &E : NS.Entries) {
      if (E.Fault != StoreFileFault::None) {
        ++Bad; // a link, a folder, a FIFO...: not an entry
        continue;
      }
      ++Count;
      Disk += E.Size;
      if (Expected<EntryHeader> H = readHeader(NS, E))
        Before += H->UncompressedSize;
      else
        consumeError(H.takeError());
    }
    StoreCounters C =
        readStoreCounters(NS.Path + "/" + StatsFileName, &Warnings);
    std::string Dict = "none";
    if (Expected<std::shared_ptr<const EntryDictionary>> D =
            NS.Dictionaries->loadCurrent()) {
      if (*D)
        Dict = fmt::format("{:08x} ({} bytes)", (*D)->id(),
                           (*D)->bytes().size());
    } else {
      Dict = "unusable: " + toString(D.takeError());
    }
    fmt::print("namespace {}/{}\n"
               "  fingerprint: {}\n"
               "  entries: {}\n"
               "  bytes on disk: {}\n"
               "  bytes before compression: {}\n"
               "  hits: {}\n"
               "  misses: {}\n"
               "  writes: {}\n"
               "  refusals: {}\n"
               "  corrupt entries purged: {}\n"
               "  dictionary: {}\n",
               NS.Backend, NS.Hex,
               !NS.Description.empty() ? NS.Description
               : NS.DescriptionFault.empty()
                   ? std::string("(unknown)")
                   : "(unknown: fingerprint.txt: " + NS.DescriptionFault + ")",
               Count, Disk, Before, C.Hits, C.Misses, C.Writes, C.Refusals,
               C.CorruptPurged, Dict);
    if (Bad)
      fmt::print("  not entries (links, folders, FIFOs, other users' or too "
                 "large files named like entries): {}\n",
                 Bad);
    if (C.RemoteHits || C.RemoteMisses || C.RemoteErrors || C.RemoteRejected ||
        C.RemoteQueued || C.RemoteDropped)
      fmt::print("  remote tier: hits {}, misses {}, errors {}, rejected {}, "
                 "queued for publication {}, dropped {}\n",
                 C.RemoteHits, C.RemoteMisses, C.RemoteErrors,
                 C.RemoteRejected, C.RemoteQueued, C.RemoteDropped);
    Entries += Count;
    Bytes += Disk;
  }
  fmt::print("total: {} entries, {} bytes on disk in {} namespaces\n", Entries,
             Bytes, All.size());
  return reportUnlisted(Unlisted) ? 1 : 0;
}

static int runList(StringRef Root) {
  std::vector<UnlistedFolder> Unlisted;
  for (const NamespaceDir &NS : scanStore(Root, &Unlisted))
    for (const EntryFile &E : NS.Entries) {
      Expected<EntryHeader> H = readHeader(NS, E);
      if (!H) {
        fmt::print("{} ({}: {}) {} {} {}/{}\n", E.Name,
                   E.Fault != StoreFileFault::None ? "bad" : "unreadable",
                   toString(H.takeError()), E.Size, timeText(E.LastUseNs),
                   NS.Backend, NS.Hex);
        continue;
      }
      fmt::print("{} {} {} {} {}/{}{}\n", H->Info.KernelId,
                 H->Info.Variant.empty() ? "-" : H->Info.Variant, E.Size,
                 timeText(E.LastUseNs), NS.Backend, NS.Hex,
                 H->DictionaryId
                     ? fmt::format(" dict={:08x}", H->DictionaryId)
                     : std::string());
    }
  return reportUnlisted(Unlisted) ? 1 : 0;
}

static int runVerify(StringRef Root) {
  size_t Checked = 0, Bad = 0, Others = 0, Removed = 0;
  // With --purge a bad file goes ("(removed)"); unlink removes a link
  // itself, never what it points to.
  auto ReportBad = [&](const std::string &Path, const Twine &Why) {
    std::string Note;
    if (Purge) {
      if (::unlink(Path.c_str()) == 0 || errno == ENOENT) {
        ++Removed;
        Note = " (removed)";
      } else {
        Note = std::string(" (cannot remove it: ") + std::strerror(errno) + ")";
      }
    }
    fmt::print("{}: bad: {}{}\n", Path, Why.str(), Note);
  };
  std::vector<UnlistedFolder> Unlisted;
  std::vector<NamespaceDir> All = scanStore(Root, &Unlisted);
  // A folder that cannot be listed hides entries nobody checked: bad, but
  // never removed.
  for (const UnlistedFolder &F : Unlisted) {
    ++Others;
    fmt::print("{}: bad: cannot list it: {}\n", F.Path, F.Why);
  }
  for (const NamespaceDir &NS : All)
    for (const EntryFile &E : NS.Entries) {
      ++Checked;
      if (Error Err = verifyEntryFile(NS, E)) {
        ++Bad;
        ReportBad(E.Path, toString(std::move(Err)));
      }
    }
  // A fingerprint.txt that names another CPU than its folder: not an entry,
  // but a bad file of the store (stats would show the wrong CPU, export
  // would write a namespace import refuses). The store writes the right one
  // the next time it opens the namespace for writing.
  for (const NamespaceDir &NS : All)
    if (!NS.DescriptionFault.empty()) {
      ++Others;
      ReportBad(NS.Path + "/" + FingerprintFileName, NS.DescriptionFault);
    }
  fmt::print("checked {} entries: {} bad{}{}\n", Checked, Bad,
             Others ? fmt::format("; {} other bad files or folders", Others)
                    : "",
             Purge ? fmt::format(", {} removed", Removed) : "");
  return Bad || Others ? 1 : 0;
}

static int runPrune(StringRef Root) {
  StoreWarnings Warnings(printWarningToStderr);
  uint64_t Limit = StoreConfig::fromEnvironment(&Warnings).MaxSize;
  if (MaxSize.getNumOccurrences()) { // an empty --max-size= is an error too
    Expected<uint64_t> N = parseStoreSize(MaxSize);
    if (!N)
      fail("--max-size: " + toString(N.takeError()));
    Limit = *N;
  }
  PruneResult R = pruneStore(Root, Limit);
  fmt::print("pruned {} entries: {} bytes -> {} bytes (limit {})\n", R.Removed,
             R.BytesBefore, R.BytesAfter, Limit);
  if (R.RemovedBad)
    fmt::print("removed {} links, FIFOs, sockets, devices or too large files "
               "named like entries\n",
               R.RemovedBad);
  for (const std::string &F : R.Failures)
    WithColor::error(errs(), ToolName) << "cannot remove " << F << '\n';
  bool AnyUnlisted = reportUnlisted(R.Unlisted);
  return R.Failures.empty() && !AnyUnlisted ? 0 : 1;
}

/// Removes Kiln's files from \p Dir (entries, temporaries, stats,
/// fingerprint, dictionaries; a link by those names is removed, never
/// followed), then \p Dir itself if that leaves it empty. Adds "PATH: why"
/// to \p Failures for each it could not remove.
static size_t clearFolder(const std::string &Dir,
                          std::vector<std::string> &Failures) {
  size_t Entries = 0;
  DIR *D = ::opendir(Dir.c_str());
  if (!D) {
    Failures.push_back(Dir + ": cannot read the folder: " +
                       std::strerror(errno));
    return 0;
  }
  std::vector<std::string> Names;
  while (dirent *E = ::readdir(D))
    Names.push_back(E->d_name);
  ::closedir(D);
  for (const std::string &N : Names) {
    StringRef S(N);
    bool Entry = keyFromEntryFileName(S).has_value();
    if (!(Entry || (S.starts_with("kiln-") && S.contains(".tmp-")) ||
          isDictionaryFileName(S) || S == StatsFileName ||
          S == FingerprintFileName ||
          S.starts_with(std::string(FingerprintFileName) + ".tmp-")))
      continue;
    std::string P = Dir + "/" + N;
    if (::unlink(P.c_str()) == 0) {
      Entries += Entry;
    } else if (errno != ENOENT) {
      Failures.push_back(P + ": " + std::strerror(errno));
    }
  }
  ::rmdir(Dir.c_str()); // only when empty: the user's own files stay
  return Entries;
}

static int runClear(StringRef Root) {
  size_t Removed = 0;
  std::vector<std::string> Failures;
  std::vector<UnlistedFolder> Unlisted;
  std::vector<NamespaceDir> All = scanStore(Root, &Unlisted);
  for (const NamespaceDir &NS : All) {
    Removed += clearFolder(NS.Path, Failures);
    ::rmdir((Root + "/" + NS.Backend).str().c_str()); // only when empty
  }
  fmt::print("removed {} entries from {} namespaces\n", Removed, All.size());
  for (const std::string &F : Failures)
    WithColor::error(errs(), ToolName) << "cannot remove " << F << '\n';
  bool AnyUnlisted = reportUnlisted(Unlisted);
  return Failures.empty() && !AnyUnlisted ? 0 : 1;
}

/// Trains a dictionary for each namespace (of --namespace) and recompresses
/// its entries with it. A namespace with too few entries is reported and
/// left as it is; any other failure makes the exit status 1.
static int runTrainDict(StringRef Root) {
  size_t Size = 0;
  if (!DictSize.empty()) {
    Expected<uint64_t> N = parseStoreSize(DictSize);
    if (!N)
      fail("--dict-size: " + toString(N.takeError()));
    if (*N < 1024 || *N > DictionaryMaxSize)
      fail("--dict-size must be between 1K and 1M");
    Size = size_t(*N);
  }
  size_t Matched = 0, Trained = 0, Failed = 0;
  std::vector<UnlistedFolder> Unlisted;
  std::vector<NamespaceDir> All = scanStore(Root, &Unlisted);
  if (reportUnlisted(Unlisted))
    ++Failed;
  for (const NamespaceDir &NS : All) {
    if (!StringRef(NS.Backend + "/" + NS.Hex).starts_with(NamespaceFilter))
      continue;
    ++Matched;
    Expected<RetrainSummary> R =
        retrainNamespace(NS.Path, NS.namespaceHash(), Size);
    if (!R) {
      Error E = handleErrors(R.takeError(), [&](const TooFewSamplesError &T) {
        fmt::print("namespace {}/{}: not trained: {} of {} entries decode, "
                   "a dictionary needs at least {}\n",
                   NS.Backend, NS.Hex, T.samples(), NS.Entries.size(),
                   DictionaryMinSamples);
      });
      if (E) {
        ++Failed;
        WithColor::error(errs(), ToolName)
            << "namespace " << NS.Backend << "/" << NS.Hex << ": "
            << toString(std::move(E)) << '\n';
      }
      continue;
    }
    ++Trained;
    size_t Pruned = 0;
    if (Expected<size_t> P = pruneDictionaries(NS.Path))
      Pruned = *P;
    else
      WithColor::warning(errs(), ToolName) << toString(P.takeError()) << '\n';
    std::string Notes;
    if (R->LeftAlone)
      Notes += fmt::format(", {} left alone (they do not decode)", R->LeftAlone);
    if (R->Changed)
      Notes += fmt::format(", {} changed meanwhile (skipped)", R->Changed);
    if (Pruned)
      Notes += fmt::format(", {} unused dictionaries removed", Pruned);
    fmt::print("namespace {}/{}: {} entries recompressed, {} -> {} bytes, "
               "dictionary {:08x} ({} bytes){}\n",
               NS.Backend, NS.Hex, R->Entries, R->BytesBefore, R->BytesAfter,
               R->DictionaryId, R->DictionarySize, Notes);
  }
  if (!Matched)
    fail(NamespaceFilter.empty()
             ? "no namespace in the store at '" + Root.str() + "'"
             : "no namespace matching '" + NamespaceFilter + "' in the store");
  fmt::print("trained {} of {} namespaces\n", Trained, Matched);
  return Failed ? 1 : 0;
}

static int run(int argc, char **argv) {
  cl::HideUnrelatedOptions({&Cat, &kiln::tools::remoteOptionCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "kiln-store: inspect and maintain a Kiln kernel store\n\n"
      "  stats            entries, sizes and hit/miss counters per namespace\n"
      "  list             one line per entry: kernel id, variant, size, last "
      "use, namespace\n"
      "  verify [--purge] check every entry, fingerprint file and folder;\n"
      "                   exit 1 if any is bad\n"
      "  prune            least-recently-used eviction down to --max-size\n"
      "  clear            remove every entry\n"
      "  export BUNDLE    write the store's namespaces to one file\n"
      "  import BUNDLE    add a bundle's entries, each under its own "
      "namespace\n"
      "  train-dict       per namespace: train a zstd dictionary on its "
      "entries,\n"
      "                   make it the one new entries use, recompress the "
      "entries\n"
      "  remote push [BUNDLE]\n"
      "                   publish every valid entry (and the dictionaries "
      "they need)\n"
      "                   of the store, or of BUNDLE, to the remote tier\n"
      "  remote stats     what the remote tier holds, what the server says, "
      "and what\n"
      "                   this store counted of the tier\n"
      "The remote tier is the one --remote/--remote-key name, else "
      "KILN_REMOTE/KILN_REMOTE_KEY.\n");

  if (StoreDir.getNumOccurrences() && StoreDir.empty())
    fail("--store: empty folder name");
  std::string Root = StoreDir;
  if (Root.empty()) {
    std::optional<std::string> R = defaultStoreRoot();
    if (!R)
      fail("no store: set KILN_CACHE_DIR or HOME, or pass --store");
    Root = *R;
  }
  while (Root.size() > 1 && Root.back() == '/')
    Root.pop_back();
  // A missing store is an empty one (import makes it); a file is a mistake.
  struct stat RootStat;
  if (::stat(Root.c_str(), &RootStat) != 0) {
    if (errno != ENOENT) // a parent that is a file, a folder not searchable
      fail("store '" + Root + "': " + std::strerror(errno));
  } else if (!S_ISDIR(RootStat.st_mode)) {
    fail("store '" + Root + "': it is not a folder");
  } else if (DIR *D = ::opendir(Root.c_str())) {
    ::closedir(D);
  } else {
    fail("store '" + Root + "': cannot list it: " + std::strerror(errno));
  }

  if (Purge && Command != "verify")
    fail("--purge applies to verify only");
  if (MaxSize.getNumOccurrences() && Command != "prune")
    fail("--max-size applies to prune only");
  if (!NamespaceFilter.empty() && Command != "export" &&
      Command != "train-dict" && Command != "remote")
    fail("--namespace applies to export, train-dict and remote push only");
  if (!DictSize.empty() && Command != "train-dict")
    fail("--dict-size applies to train-dict only");

  if (Command == "stats") {
    expectArgs(0);
    return runStats(Root);
  }
  if (Command == "list") {
    expectArgs(0);
    return runList(Root);
  }
  if (Command == "verify") {
    expectArgs(0);
    return runVerify(Root);
  }
  if (Command == "prune") {
    expectArgs(0);
    return runPrune(Root);
  }
  if (Command == "clear") {
    expectArgs(0);
    return runClear(Root);
  }
  if (Command == "export") {
    expectArgs(1);
    Expected<BundleSummary> S = exportBundle(Root, Args[0], NamespaceFilter);
    if (!S)
      fail(toString(S.takeError()));
    fmt::print("exported {} entries of {} namespaces to {}{}{}\n", S->Entries,
               S->Namespaces, Args[0],
               S->Dictionaries
                   ? fmt::format(" with {} dictionaries", S->Dictionaries)
                   : "",
               S->Skipped
                   ? fmt::format(" ({} bad entries left out)", S->Skipped)
                   : "");
    return 0;
  }
  if (Command == "import") {
    expectArgs(1);
    StoreWarnings Warnings(printWarningToStderr);
    Expected<BundleSummary> S = importBundle(Root, Args[0], &Warnings);
    if (!S)
      fail(toString(S.takeError()));
    fmt::print(
        "imported {} entries into {} namespaces{}{}{}\n", S->Entries,
        S->Namespaces,
        S->Dictionaries ? fmt::format(" with {} dictionaries", S->Dictionaries)
                        : "",
        S->Skipped ? fmt::format(" ({} already present or bad)", S->Skipped)
                   : "",
        S->Refused ? fmt::format("; {} namespaces refused ({} entries)",
                                 S->Refused, S->RefusedEntries)
                   : "");
    // A refused namespace is a bundle that lies about itself: a failure.
    return S->Refused ? 1 : 0;
  }
  if (Command == "train-dict") {
    expectArgs(0);
    return runTrainDict(Root);
  }
  if (Command == "remote")
    return kiln::tools::runRemoteCommand(
        Root, std::vector<std::string>(Args.begin(), Args.end()),
        NamespaceFilter, ToolName);
  fail("unknown command '" + Command + "' (expected stats, list, verify, "
                                       "prune, clear, export, import, "
                                       "train-dict or remote)");
}

int main(int argc, char **argv) {
  // A reader that goes away (`| head`) makes a write fail with EPIPE, which
  // the tool reports as any failed write (exit status 1), instead of a
  // SIGPIPE death or LLVM's silent exit 74.
  InitLLVM X(argc, argv, /*InstallPipeSignalExitHandler=*/false);
  kiln::survivePipeReadersGoingAway();
  int Status;
  try {
    Status = run(argc, argv);
  } catch (const std::system_error &E) { // fmt reports a failed write so
    fail(Twine("cannot write the output: ") + E.code().message());
  } catch (const std::exception &E) {
    fail(Twine("cannot write the output: ") + E.what());
  }
  // A report that did not reach its reader (a full disk, a closed pipe) is
  // a failure, not a success with the output lost.
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    fail(Twine("cannot write the output: ") + std::strerror(errno));
  return Status;
}
