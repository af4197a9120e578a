//===- kiln-burst-bench.cpp - Bursts of queued launches -------------------===//
//
// What a runtime pays to queue a long command list on a stream: a burst of
// N (default 10000) Stream::launch calls, each timed on its own, then one
// Stream::synchronize. Per burst:
//   avg     (first submit to the wait's return) / N: the burst's cost a
//           launch, running the launches included
//   submit  the single submits: their mean, median, 99th percentile and
//           maximum, and the share above 5 us
// in four settings:
//   warm    one process, bursts after a warm-up burst
//   fresh   a new process per burst (this program run again with --child):
//           the first burst of a new device and stream
// each into an idle stream ("idle": the stream runs the launches as they
// come) and behind a long kernel ("behind": a one-cube kernel of about
// 30 ms queued first, so every launch of the burst waits in the queue; its
// "avg" leaves out the time the long kernel runs after the last submit).
// The launch is that of kiln-launch-bench's "queued": y = a*y + b over 4096
// floats as 64 cubes of 64, checked after each burst.
//
// Prints "RESULT kiln burst_<setting>_<measure>_{median,min,max} V" lines
// (over bursts) and a table.
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"

#include "AffineKernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <string>
#include <vector>

using namespace kiln::api;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint32_t Cubes = kiln::bench::AffineCubes,
                   Units = kiln::bench::AffineUnits, N = kiln::bench::AffineN;
using kiln::bench::AffineText;

/// A multiply-add chain per unit, %iters long: no closed form to fold.
constexpr const char *BusyText = R"(
kernel @busy cube_dim(64) (%out: buffer<u32, read_write>, %iters: u32) {
  %i = absolute_pos.x : u32
  %n = var u32
  set %n, %i
  for %k = 0:u32 to %iters {
    %v = get %n : u32
    %m = mul %v, 1664525:u32 : u32
    %w = add %m, 1013904223:u32 : u32
    set %n, %w
  }
  %r = get %n : u32
  store %out[%i], %r
}
)";

[[noreturn]] void die(const std::string &What) {
  std::fprintf(stderr, "kiln-burst-bench: %s\n", What.c_str());
  std::exit(1);
}

void check(const Status &S, const char *What) {
  if (!S.ok())
    die(std::string(What) + ": " + S.str());
}

double usBetween(Clock::time_point A, Clock::time_point B) {
  return std::chrono::duration<double, std::micro>(B - A).count();
}

/// One burst's figures, in microseconds (Over5 a fraction).
struct Burst {
  double Avg = 0, SubmitMean = 0, SubmitMedian = 0, SubmitP99 = 0,
         SubmitMax = 0, Over5 = 0;
};
constexpr const char *MeasureNames[] = {"avg_us",      "submit_mean_us",
                                        "submit_p50_us", "submit_p99_us",
                                        "submit_max_us", "submits_over_5us"};
constexpr size_t MeasureCount = 6;
double measure(const Burst &B, size_t I) {
  const double V[] = {B.Avg,       B.SubmitMean, B.SubmitMedian,
                      B.SubmitP99, B.SubmitMax,  B.Over5};
  return V[I];
}

/// A device, the two kernels, a stream and the buffer the launches update.
struct Setup {
  Device D;
  Kernel Affine, Busy;
  Stream S;
  Buffer Y, Out;
  float Expected = 0;
  uint32_t BusyIters = 0;

  Setup() {
    DeviceConfig C;
    C.Store = StoreMode::Off;
    Result<Device> R = Device::create(C);
    if (!R.ok())
      die(R.status().str());
    D = *std::move(R);
    Result<Kernel> A = D.loadKernel(AffineText, "affine");
    Result<Kernel> B = D.loadKernel(BusyText, "busy");
    if (!A.ok() || !B.ok())
      die("kernels: " + (A.ok() ? B.status() : A.status()).str());
    Affine = *A;
    Busy = *B;
    S = *D.createStream();
    Y = *Buffer::allocate(N * 4);
    Out = *Buffer::allocate(Units * 4);
    // About 30 ms of the busy kernel, from a timed run of 2^20 iterations.
    auto T = Clock::now();
    check(D.launch(Busy, {1, 1, 1}, {Arg::buffer(Out.view(u32())),
                                     Arg::u32(1u << 20)}),
          "busy launch");
    double Us = std::max(usBetween(T, Clock::now()), 1.0);
    BusyIters = uint32_t(std::min(30000.0 / Us * (1u << 20), 4.0e9));
  }
  static ElementType u32() { return ElementType::scalar(ScalarType::U32); }

  Burst run(unsigned Launches, bool Behind) {
    Arg Args[] = {Arg::buffer(Y.view(ElementType::scalar(ScalarType::F32))),
                  Arg::f32(1.0f), Arg::f32(1.0f), Arg::u32(N)};
    Event BusyDone;
    if (Behind) {
      check(S.launch(Busy, {1, 1, 1},
                     {Arg::buffer(Out.view(u32())), Arg::u32(BusyIters)}),
            "busy launch");
      BusyDone = *S.record();
    }
    std::vector<double> Submits(Launches);
    auto Start = Clock::now();
    auto Prev = Start;
    for (unsigned I = 0; I < Launches; ++I) {
      check(S.launch(Affine, {Cubes, 1, 1}, Args), "burst launch");
      auto Now = Clock::now();
      Submits[I] = usBetween(Prev, Now);
      Prev = Now;
    }
    // Behind the long kernel, the time it runs after the last submit is
    // not the burst's: only the submits and the drain after it count.
    double Waiting = 0;
    if (Behind) {
      check(BusyDone.synchronize(), "long kernel");
      Waiting = std::max(0.0, usBetween(Prev, Clock::now()));
    }
    check(S.synchronize(), "burst wait");
    auto End = Clock::now();
    Expected += float(Launches);
    const float *P = static_cast<const float *>(Y.data());
    if (P[0] != Expected || P[N - 1] != Expected)
      die("wrong result after a burst");

    Burst B;
    B.Avg = (usBetween(Start, End) - Waiting) / Launches;
    double Sum = 0;
    unsigned Over = 0;
    for (double V : Submits) {
      Sum += V;
      Over += V > 5.0;
    }
    B.SubmitMean = Sum / Launches;
    B.Over5 = double(Over) / Launches;
    std::sort(Submits.begin(), Submits.end());
    B.SubmitMedian = Submits[Launches / 2];
    B.SubmitP99 = Submits[std::min<size_t>(Launches - 1, Launches * 99 / 100)];
    B.SubmitMax = Submits.back();
    return B;
  }
};

void printBurst(const Burst &B) {
  std::printf("BURST");
  for (size_t I = 0; I != MeasureCount; ++I)
    std::printf(" %.4f", measure(B, I));
  std::printf("\n");
}

/// Runs this program again with --child for one fresh burst.
Burst freshBurst(unsigned Launches, bool Behind) {
  char Self[4096];
  ssize_t Len = readlink("/proc/self/exe", Self, sizeof(Self) - 1);
  if (Len <= 0)
    die("cannot find this program (/proc/self/exe)");
  Self[Len] = 0;
  std::string Cmd = std::string("'") + Self + "' --child --launches=" +
                    std::to_string(Launches) + (Behind ? " --behind" : "");
  FILE *F = popen(Cmd.c_str(), "r");
  if (!F)
    die("cannot run " + Cmd);
  Burst B;
  char Line[512];
  bool Got = false;
  while (std::fgets(Line, sizeof(Line), F))
    if (std::sscanf(Line, "BURST %lf %lf %lf %lf %lf %lf", &B.Avg,
                    &B.SubmitMean, &B.SubmitMedian, &B.SubmitP99, &B.SubmitMax,
                    &B.Over5) == 6)
      Got = true;
  if (pclose(F) != 0 || !Got)
    die("the child burst failed: " + Cmd);
  return B;
}

void report(const char *Setting, std::vector<Burst> &Bursts,
            std::vector<std::string> &Table) {
  std::string Row = std::string("| ") + Setting;
  for (size_t I = 0; I != MeasureCount; ++I) {
    std::vector<double> V;
    for (const Burst &B : Bursts)
      V.push_back(measure(B, I));
    std::sort(V.begin(), V.end());
    double Med = V[V.size() / 2];
    std::printf("RESULT kiln burst_%s_%s_median %.4f\n"
                "RESULT kiln burst_%s_%s_min %.4f\n"
                "RESULT kiln burst_%s_%s_max %.4f\n",
                Setting, MeasureNames[I], Med, Setting, MeasureNames[I],
                V.front(), Setting, MeasureNames[I], V.back());
    char Cell[96];
    if (I == 5)
      std::snprintf(Cell, sizeof(Cell), " | %.2f%% [%.2f, %.2f]", Med * 100,
                    V.front() * 100, V.back() * 100);
    else
      std::snprintf(Cell, sizeof(Cell), " | %.3f [%.3f, %.3f]", Med, V.front(),
                    V.back());
    Row += Cell;
  }
  Table.push_back(Row + " |");
}

} // namespace

int main(int argc, char **argv) {
  unsigned Launches = 10000, Bursts = 10, Fresh = 10;
  bool Child = false, Behind = false;
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    auto Num = [&](const char *Prefix, unsigned &Out) {
      size_t L = std::strlen(Prefix);
      if (A.compare(0, L, Prefix) != 0)
        return false;
      Out = unsigned(std::atoi(A.c_str() + L));
      return true;
    };
    if (A == "--child")
      Child = true;
    else if (A == "--behind")
      Behind = true;
    else if (!Num("--launches=", Launches) && !Num("--bursts=", Bursts) &&
             !Num("--fresh=", Fresh))
      die("usage: kiln-burst-bench [--launches=N] [--bursts=B] [--fresh=F]");
  }
  if (Launches < 100 || Bursts < 1)
    die("--launches must be at least 100, --bursts at least 1");

  if (Child) {
    Setup S;
    // The variant and the stream's first task, as a runtime's first launch.
    check(S.S.launch(S.Affine, {Cubes, 1, 1},
                     {Arg::buffer(S.Y.view(ElementType::scalar(
                          ScalarType::F32))),
                      Arg::f32(1.0f), Arg::f32(1.0f), Arg::u32(N)}),
          "first launch");
    check(S.S.synchronize(), "first wait");
    S.Expected = 1;
    printBurst(S.run(Launches, Behind));
    return 0;
  }

  std::vector<std::string> Table;
  std::vector<Burst> WarmIdle, WarmBehind, FreshIdle, FreshBehind;
  {
    Setup S;
    std::printf("# device threads: %u, %u launches a burst, %u warm bursts, "
                "%u fresh processes; long kernel: %u iterations\n",
                S.D.concurrency(), Launches, Bursts, Fresh, S.BusyIters);
    (void)S.run(Launches, false); // warm-up
    for (unsigned B = 0; B < Bursts; ++B) {
      WarmIdle.push_back(S.run(Launches, false));
      WarmBehind.push_back(S.run(Launches, true));
    }
  }
  for (unsigned B = 0; B < Fresh; ++B) {
    FreshIdle.push_back(freshBurst(Launches, false));
    FreshBehind.push_back(freshBurst(Launches, true));
  }
  report("warm_idle", WarmIdle, Table);
  report("warm_behind", WarmBehind, Table);
  if (Fresh) {
    report("fresh_idle", FreshIdle, Table);
    report("fresh_behind", FreshBehind, Table);
  }
  std::printf("\nmedian [min, max] over bursts, us\n"
              "| setting | avg a launch | submit mean | submit median | "
              "submit p99 | submit max | submits > 5 us |\n"
              "| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const std::string &R : Table)
    std::printf("%s\n", R.c_str());
  return 0;
}
