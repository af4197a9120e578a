//===- main.cpp - kiln-corpus: the foreign-kernel corpus's harness -------===//
//
// kiln-corpus [--list] [--bench=A,B,...] [--systems=kiln,opencl,native]
//             [--size=0|1] [--repeat=N] [--threads=N] [--mattr=FEATURES]
//             [--no-bounds-check] [--tag=TAG] [--corpus-dir=DIR] [TAG]
//
// For each benchmark (bench/corpus/README.md): its Instance is made once;
// each system opens it (Kiln loads the kernels, OpenCL builds the program),
// sets it up, runs it once untimed (PoCL compiles at its first launch) and
// checks the outputs against the host's reference. Then --repeat rounds, each
// running every system once in turn (setup untimed, run timed with
// steady_clock, ending with the backend's finish), so that a change in the
// machine's load falls on all the systems alike.
//
// Output: "RESULT <tag> <system> <bench> <metric> <value>" lines (median_ms,
// min_ms, max_ms, launches, per_launch_us, correct, open_ms), then a table:
// per benchmark the median times, kiln/opencl and kiln/native, and the
// geometric means of both ratios. A failed check or a backend error prints
// "FAIL <system> <bench>: why"; the other benchmarks still run, and the exit
// status is then 1 (2 for a usage error).
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"
#include "harness/Harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

using namespace corpus;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

std::vector<std::string> splitList(const std::string &S) {
  std::vector<std::string> Out;
  size_t Begin = 0;
  while (Begin <= S.size()) {
    size_t End = S.find(',', Begin);
    if (End == std::string::npos)
      End = S.size();
    if (End > Begin)
      Out.push_back(S.substr(Begin, End - Begin));
    Begin = End + 1;
  }
  return Out;
}

[[noreturn]] void usageError(const std::string &Message) {
  std::fprintf(stderr, "kiln-corpus: error: %s (see --help)\n",
               Message.c_str());
  std::exit(2);
}

const char *const Help =
    "usage: kiln-corpus [options]\n"
    "  --list               list the benchmarks and exit\n"
    "  --bench=A,B,...      the benchmarks to run (default: all)\n"
    "  --systems=S,...      kiln, opencl, native (default: all available)\n"
    "  --size=0|1           0: the small problems of the tests; 1 (default):\n"
    "                       the timed problems\n"
    "  --repeat=N           timed runs per system (default 5)\n"
    "  --threads=N          threads of every system (default: all cores)\n"
    "  --mattr=FEATURES     Kiln's target features on top of the host's\n"
    "                       (-avx512f: AVX2 code on an AVX-512 host)\n"
    "  --no-bounds-check    Kiln's unchecked variant (default: checked)\n"
    "  --tag=TAG, TAG       the tag of the RESULT lines (default corpus)\n"
    "  --corpus-dir=DIR     the folder of the benchmark folders\n"
    "                       (default: the source tree's bench/corpus)\n";

unsigned parseCount(const std::string &Option, const std::string &Value,
                    unsigned Least) {
  char *End = nullptr;
  unsigned long N = std::strtoul(Value.c_str(), &End, 10);
  if (Value.empty() || *End || N < Least || N > 1000000)
    usageError(Option + " needs an integer of at least " +
               std::to_string(Least) + ", not '" + Value + "'");
  return unsigned(N);
}

struct Config {
  Options O;
  bool List = false;
  std::vector<std::string> Benches, Systems;
  bool SystemsGiven = false;
  int Size = 1;
  unsigned Repeat = 5;
  std::string Tag = "corpus";
};

Config parseArgs(int Argc, char **Argv) {
  Config C;
  C.O.CorpusDir = KILN_CORPUS_DIR;
  C.O.Threads = std::max(1u, std::thread::hardware_concurrency());
  bool TagGiven = false;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    size_t Eq = A.find('=');
    std::string Key = A.substr(0, Eq);
    std::string Value = Eq == std::string::npos ? "" : A.substr(Eq + 1);
    bool HasValue = Eq != std::string::npos;
    auto NeedValue = [&] {
      if (!HasValue)
        usageError(Key + " needs a value: " + Key + "=...");
    };
    if (!A.empty() && A[0] != '-') {
      // A trailing word is the tag, as bench/run.sh passes it to every
      // program it runs.
      if (TagGiven)
        usageError("two tags: '" + C.Tag + "' and '" + A + "'");
      C.Tag = A;
      TagGiven = true;
      continue;
    }
    if (Key == "--help" || Key == "-h") {
      std::fputs(Help, stdout);
      std::exit(0);
    } else if (Key == "--list" && !HasValue) {
      C.List = true;
    } else if (Key == "--no-bounds-check" && !HasValue) {
      C.O.BoundsChecked = false;
    } else if (Key == "--bench") {
      NeedValue();
      C.Benches = splitList(Value);
    } else if (Key == "--systems") {
      NeedValue();
      C.Systems = splitList(Value);
      C.SystemsGiven = true;
    } else if (Key == "--size") {
      NeedValue();
      if (Value != "0" && Value != "1")
        usageError("--size is 0 or 1, not '" + Value + "'");
      C.Size = Value[0] - '0';
    } else if (Key == "--repeat") {
      NeedValue();
      C.Repeat = parseCount(Key, Value, 1);
    } else if (Key == "--threads") {
      NeedValue();
      C.O.Threads = parseCount(Key, Value, 1);
    } else if (Key == "--mattr") {
      NeedValue();
      C.O.MAttr = Value;
    } else if (Key == "--tag") {
      NeedValue();
      if (TagGiven)
        usageError("two tags: '" + C.Tag + "' and '" + Value + "'");
      C.Tag = Value;
      TagGiven = true;
    } else if (Key == "--corpus-dir") {
      NeedValue();
      C.O.CorpusDir = Value;
    } else {
      usageError("unknown option '" + A + "'");
    }
  }
  if (C.Tag.empty() || C.Tag.find_first_of(" \t\n") != std::string::npos)
    usageError("the tag must be a word without spaces");
  std::set<std::string> Known = {"kiln", "opencl", "native"};
  if (!C.SystemsGiven)
    C.Systems = {"kiln", "opencl", "native"};
  if (C.Systems.empty())
    usageError("--systems names no system");
  for (const std::string &S : C.Systems)
    if (!Known.count(S))
      usageError("unknown system '" + S + "' (kiln, opencl, native)");
  return C;
}

/// One system's state for one benchmark.
struct SystemRun {
  System *Sys = nullptr;
  std::unique_ptr<SystemBackend> Backend;
  bool Failed = false;
  std::vector<double> Ms;
};

/// The table's row of one benchmark.
struct Row {
  std::string Bench;
  unsigned Launches = 0;
  std::map<std::string, double> Median; // per system that passed
  std::set<std::string> Failed;
};

class Harness {
public:
  explicit Harness(Config C) : C(std::move(C)) {}

  int run();

private:
  void result(const char *System, const std::string &Bench, const char *Metric,
              double Value) {
    std::printf("RESULT %s %s %s %s %.6g\n", C.Tag.c_str(), System,
                Bench.c_str(), Metric, Value);
    std::fflush(stdout);
  }
  void fail(SystemRun &R, const std::string &Bench, const std::string &Why) {
    std::fflush(stdout);
    std::fprintf(stderr, "FAIL %s %s: %s\n", R.Sys->name(), Bench.c_str(),
                 Why.c_str());
    std::fflush(stderr);
    R.Failed = true;
    R.Backend.reset();
    AnyFailure = true;
  }
  /// Runs Step on R's backend; a thrown error fails R.
  template <typename F>
  void guarded(SystemRun &R, const std::string &Bench, F Step) {
    try {
      Step();
    } catch (const std::exception &E) {
      fail(R, Bench, E.what());
    }
  }
  void runBenchmark(const Benchmark &B);
  void printTable() const;

  Config C;
  std::vector<std::unique_ptr<System>> Systems;
  std::vector<Row> Rows;
  bool AnyFailure = false;
};

void Harness::runBenchmark(const Benchmark &B) {
  std::string Name = B.Name;
  Row &Out = Rows.emplace_back();
  Out.Bench = Name;
  std::vector<SystemRun> Runs(Systems.size());
  for (size_t I = 0; I < Systems.size(); ++I)
    Runs[I].Sys = Systems[I].get();

  std::unique_ptr<Instance> Inst;
  try {
    Inst = B.Make(C.Size);
    if (!Inst)
      throw BackendError("the benchmark made no instance");
  } catch (const std::exception &E) {
    for (SystemRun &R : Runs) {
      fail(R, Name, std::string("making the instance: ") + E.what());
      Out.Failed.insert(R.Sys->name());
    }
    return;
  }

  // Open, warm up and check each system.
  for (SystemRun &R : Runs) {
    guarded(R, Name, [&] {
      auto T0 = Clock::now();
      R.Backend = R.Sys->open(Name);
      result(R.Sys->name(), Name, "open_ms", msSince(T0));
      Inst->setup(*R.Backend);
      Inst->run(*R.Backend);
      std::string Why;
      if (!Inst->check(*R.Backend, Why))
        throw BackendError("wrong result: " + Why);
    });
  }

  // Timed rounds, the systems interleaved.
  for (unsigned Round = 0; Round < C.Repeat; ++Round)
    for (SystemRun &R : Runs) {
      if (R.Failed)
        continue;
      guarded(R, Name, [&] {
        R.Backend->releaseBuffers();
        Inst->setup(*R.Backend);
        auto T0 = Clock::now();
        Inst->run(*R.Backend);
        R.Ms.push_back(msSince(T0));
      });
    }

  Out.Launches = Inst->launches();
  for (SystemRun &R : Runs) {
    const char *Sys = R.Sys->name();
    if (R.Failed) {
      result(Sys, Name, "correct", 0);
      Out.Failed.insert(Sys);
      continue;
    }
    R.Backend->releaseBuffers();
    R.Backend.reset();
    double Med = median(R.Ms);
    result(Sys, Name, "median_ms", Med);
    result(Sys, Name, "min_ms", *std::min_element(R.Ms.begin(), R.Ms.end()));
    result(Sys, Name, "max_ms", *std::max_element(R.Ms.begin(), R.Ms.end()));
    result(Sys, Name, "launches", Out.Launches);
    if (Out.Launches)
      result(Sys, Name, "per_launch_us", 1000.0 * Med / Out.Launches);
    result(Sys, Name, "correct", 1);
    Out.Median[Sys] = Med;
  }
}

void Harness::printTable() const {
  auto Has = [&](const char *S) {
    for (const auto &Sys : Systems)
      if (std::string(Sys->name()) == S)
        return true;
    return false;
  };
  const char *Cols[] = {"kiln", "opencl", "native"};
  std::printf("\n%-20s %8s", "benchmark", "launches");
  for (const char *S : Cols)
    if (Has(S))
      std::printf(" %11s", (std::string(S) + " ms").c_str());
  bool VsOpenCL = Has("kiln") && Has("opencl");
  bool VsNative = Has("kiln") && Has("native");
  if (VsOpenCL)
    std::printf(" %11s", "kiln/opencl");
  if (VsNative)
    std::printf(" %11s", "kiln/native");
  std::printf("\n");

  double LogOpenCL = 0, LogNative = 0;
  unsigned NOpenCL = 0, NNative = 0;
  auto Ratio = [](const Row &R, const char *Other, double &Log, unsigned &N) {
    auto K = R.Median.find("kiln"), O = R.Median.find(Other);
    if (K == R.Median.end() || O == R.Median.end() || O->second <= 0 ||
        K->second <= 0) {
      std::printf(" %11s", "-");
      return;
    }
    double Q = K->second / O->second;
    Log += std::log(Q);
    ++N;
    std::printf(" %11.3f", Q);
  };
  for (const Row &R : Rows) {
    std::printf("%-20s %8u", R.Bench.c_str(), R.Launches);
    for (const char *S : Cols) {
      if (!Has(S))
        continue;
      auto It = R.Median.find(S);
      if (It != R.Median.end())
        std::printf(" %11.4g", It->second);
      else
        std::printf(" %11s", R.Failed.count(S) ? "FAIL" : "-");
    }
    if (VsOpenCL)
      Ratio(R, "opencl", LogOpenCL, NOpenCL);
    if (VsNative)
      Ratio(R, "native", LogNative, NNative);
    std::printf("\n");
  }
  if (VsOpenCL || VsNative) {
    std::printf("%-20s %8s", "geometric mean", "");
    for (const char *S : Cols)
      if (Has(S))
        std::printf(" %11s", "");
    if (VsOpenCL) {
      if (NOpenCL)
        std::printf(" %11.3f", std::exp(LogOpenCL / NOpenCL));
      else
        std::printf(" %11s", "-");
    }
    if (VsNative) {
      if (NNative)
        std::printf(" %11.3f", std::exp(LogNative / NNative));
      else
        std::printf(" %11s", "-");
    }
    std::printf("\n(over %u benchmarks against opencl, %u against native; "
                "below 1: Kiln is faster)\n",
                NOpenCL, NNative);
  }
  std::fflush(stdout);
}

int Harness::run() {
  std::vector<Benchmark> All = benchmarks();
  std::sort(All.begin(), All.end(), [](const Benchmark &A, const Benchmark &B) {
    return std::string(A.Name) < B.Name;
  });
  if (C.List) {
    for (const Benchmark &B : All)
      std::printf("%-20s %s\n", B.Name, B.Summary);
    return 0;
  }

  std::vector<const Benchmark *> Chosen;
  if (C.Benches.empty()) {
    for (const Benchmark &B : All)
      Chosen.push_back(&B);
  } else {
    for (const std::string &Name : C.Benches) {
      auto It = std::find_if(All.begin(), All.end(), [&](const Benchmark &B) {
        return Name == B.Name;
      });
      if (It == All.end())
        usageError("no benchmark '" + Name + "'; --list lists them");
      Chosen.push_back(&*It);
    }
  }

  for (const std::string &S : C.Systems) {
    try {
      if (S == "kiln") {
        Systems.push_back(makeKilnSystem(C.O));
      } else if (S == "native") {
        Systems.push_back(makeNativeSystem(C.O));
      } else if (S == "opencl") {
        if (!haveOpenCL() && !C.SystemsGiven) { // "all available"
          std::fprintf(stderr, "kiln-corpus: note: no opencl system: built "
                               "without OpenCL\n");
          continue;
        }
        Systems.push_back(makeOpenCLSystem(C.O));
      }
    } catch (const std::exception &E) {
      if (C.SystemsGiven) {
        std::fprintf(stderr, "kiln-corpus: error: %s\n", E.what());
        return 2;
      }
      std::fprintf(stderr, "kiln-corpus: note: no %s system: %s\n", S.c_str(),
                   E.what());
    }
  }
  for (const auto &S : Systems)
    std::printf("INFO %s %s %s\n", C.Tag.c_str(), S->name(),
                S->describe().c_str());
  std::printf("INFO %s size %d repeat %u threads %u\n", C.Tag.c_str(), C.Size,
              C.Repeat, C.O.Threads);
  std::fflush(stdout);

  for (const Benchmark *B : Chosen)
    runBenchmark(*B);
  printTable();
  return AnyFailure ? 1 : 0;
}

} // namespace

int main(int Argc, char **Argv) {
  Harness H(parseArgs(Argc, Argv));
  return H.run();
}
