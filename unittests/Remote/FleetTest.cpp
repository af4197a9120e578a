//===- FleetTest.cpp - Eight machines, one remote tier --------------------===//
//
// A fleet simulated with processes: kiln-compile over examples/kernels,
// each process with its own empty store and the same remote tier and fleet
// key. The first compiles and publishes; the seven others, run at once,
// compile nothing and take every kernel from the tier; kiln-run then runs a
// kernel from one of their stores, and from an empty store behind the tier.
// The compile work of the fleet is printed next to that of eight cold
// machines.
//
//===----------------------------------------------------------------------===//

#include "RemoteTestSupport.h"

#include "Support/Kernels.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <regex>
#include <sstream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

extern char **environ;

using namespace kiln;
using namespace kiln::test;

namespace {

using Clock = std::chrono::steady_clock;

/// A child process, its output in files.
struct Child {
  pid_t Pid = -1;
  std::string OutFile, ErrFile;
  Clock::time_point Started;
  int Status = -1; ///< exit status; -1 while running or when killed
  double Seconds = 0;

  std::string out() const { return slurp(OutFile); }
  std::string err() const { return slurp(ErrFile); }
  static std::string slurp(const std::string &Path) {
    std::ifstream In(Path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(In), {});
  }
};

/// Starts \p Argv with the test's environment, less the remote tier's
/// variables (the options given must be the only ones in force).
Child spawnChild(const std::vector<std::string> &Argv, const std::string &Dir,
                 const std::string &Tag) {
  Child C;
  C.OutFile = Dir + "/" + Tag + ".out";
  C.ErrFile = Dir + "/" + Tag + ".err";
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E) {
    llvm::StringRef V(*E);
    if (V.starts_with("KILN_REMOTE") || V.starts_with("KILN_LOG="))
      continue;
    Env.push_back(*E);
  }
  std::vector<char *> EnvP, ArgvP;
  for (std::string &E : Env)
    EnvP.push_back(E.data());
  EnvP.push_back(nullptr);
  std::vector<std::string> A = Argv;
  for (std::string &S : A)
    ArgvP.push_back(S.data());
  ArgvP.push_back(nullptr);
  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  posix_spawn_file_actions_addopen(&FA, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&FA, 1, C.OutFile.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&FA, 2, C.ErrFile.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  C.Started = Clock::now();
  int RC = posix_spawn(&C.Pid, ArgvP[0], &FA, nullptr, ArgvP.data(),
                       EnvP.data());
  posix_spawn_file_actions_destroy(&FA);
  if (RC != 0) {
    ADD_FAILURE() << "cannot start " << Argv[0] << ": " << std::strerror(RC);
    C.Pid = -1;
  }
  return C;
}

/// Waits for \p C for at most \p MaxSeconds (then kills it: a hang).
void waitChild(Child &C, double MaxSeconds) {
  if (C.Pid <= 0)
    return;
  for (;;) {
    int Status = 0;
    pid_t W = ::waitpid(C.Pid, &Status, WNOHANG);
    if (W == C.Pid) {
      C.Seconds =
          std::chrono::duration<double>(Clock::now() - C.Started).count();
      C.Status = WIFEXITED(Status) ? WEXITSTATUS(Status) : -1;
      if (!WIFEXITED(Status))
        ADD_FAILURE() << "the child died of signal " << WTERMSIG(Status)
                      << "\n"
                      << C.err();
      C.Pid = -1;
      return;
    }
    if (std::chrono::duration<double>(Clock::now() - C.Started).count() >
        MaxSeconds) {
      ::kill(C.Pid, SIGKILL);
      ::waitpid(C.Pid, &Status, 0);
      ADD_FAILURE() << "the child ran over " << MaxSeconds << " s: killed\n"
                    << C.err();
      C.Pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// The numbers of kiln-compile's summary line:
/// "kiln-compile: N compiled, M already stored, [K from the remote tier, ]F failed".
struct Summary {
  bool Found = false;
  unsigned Compiled = 0, Stored = 0, Remote = 0, Failed = 0;
};
Summary summaryOf(const std::string &Err) {
  static const std::regex Line(
      R"(kiln-compile: (\d+) compiled, (\d+) already stored, (?:(\d+) from the remote tier, )?(\d+) failed)");
  std::smatch M;
  Summary S;
  if (!std::regex_search(Err, M, Line))
    return S;
  S.Found = true;
  S.Compiled = unsigned(std::stoul(M[1]));
  S.Stored = unsigned(std::stoul(M[2]));
  S.Remote = M[3].matched ? unsigned(std::stoul(M[3])) : 0;
  S.Failed = unsigned(std::stoul(M[4]));
  return S;
}

class Fleet : public RemoteTest {
protected:
  void SetUp() override {
    RemoteTest::SetUp();
    ASSERT_STRNE(KILN_COMPILE_PATH, "")
        << "the fleet test needs the tools (KILN_BUILD_TOOLS)";
    ASSERT_TRUE(fileExists(KILN_COMPILE_PATH)) << KILN_COMPILE_PATH;
    ASSERT_TRUE(fileExists(KILN_RUN_PATH)) << KILN_RUN_PATH;
    std::error_code EC;
    for (llvm::sys::fs::directory_iterator I(KILN_EXAMPLE_KERNELS_DIR, EC),
         End;
         I != End && !EC; I.increment(EC))
      if (llvm::StringRef(I->path()).ends_with(".kiln"))
        Files.push_back(I->path());
    std::sort(Files.begin(), Files.end());
    ASSERT_FALSE(Files.empty()) << KILN_EXAMPLE_KERNELS_DIR;
    for (const std::string &F : Files) {
      auto Text = llvm::MemoryBuffer::getFile(F);
      ASSERT_TRUE(!!Text) << F;
      Kernels += parseOk((*Text)->getBuffer(), F).Kernels.size();
    }
    ASSERT_GT(Kernels, 0u);
  }

  std::vector<std::string> remoteOptions() const {
    // A generous timeout: seven processes share two cores here, and a
    // timed-out fetch would be compiled instead (right, but not what this
    // test counts).
    return {"--remote=" + Server.url(), "--remote-key=" + KeyFile,
            "--remote-timeout-ms=5000"};
  }
  Child compileInto(const std::string &Store, const std::string &Tag) {
    std::vector<std::string> Argv = {KILN_COMPILE_PATH};
    Argv.insert(Argv.end(), Files.begin(), Files.end());
    Argv.push_back("--store=" + Store);
    Argv.push_back("-j");
    Argv.push_back("2");
    for (const std::string &O : remoteOptions())
      Argv.push_back(O);
    return spawnChild(Argv, Work.path(), Tag);
  }
  Child runVadd(const std::string &Store, const std::string &Tag) {
    std::vector<std::string> Argv = {
        KILN_RUN_PATH,
        std::string(KILN_EXAMPLE_KERNELS_DIR) + "/elementwise.kiln",
        "--kernel",
        "vadd",
        "--cubes",
        "2", // cube_dim(256): 512 units for 300 elements
        "--arg",
        "a=f32[300]:iota",
        "--arg",
        "b=f32[300]:fill=0.5",
        "--arg",
        "c=f32[300]:zeros",
        "--arg",
        "n=300",
        "--print",
        "c",
        "--store=" + Store,
        "--stats"};
    for (const std::string &O : remoteOptions())
      Argv.push_back(O);
    return spawnChild(Argv, Work.path(), Tag);
  }
  /// c[i] == i + 0.5 for the 300 lines kiln-run printed.
  static void expectVaddOutput(const std::string &Out) {
    std::istringstream In(Out);
    std::string Line;
    unsigned I = 0;
    while (std::getline(In, Line)) {
      ASSERT_LT(I, 300u) << "extra line: " << Line;
      EXPECT_EQ(std::strtof(Line.c_str(), nullptr), float(I) + 0.5f)
          << "line " << I << ": " << Line;
      ++I;
    }
    EXPECT_EQ(I, 300u);
  }

  TempDir Work;
  std::vector<std::string> Files;
  unsigned Kernels = 0;
};

TEST_F(Fleet, EightMachinesCompileEachKernelOnce) {
  constexpr unsigned Machines = 8;
  std::vector<std::string> Stores;
  for (unsigned I = 0; I != Machines; ++I)
    Stores.push_back(Work.sub("store-" + std::to_string(I)));

  // The first machine compiles alone, and publishes as its device goes
  // away.
  Child First = compileInto(Stores[0], "compile-0");
  waitChild(First, 120);
  ASSERT_EQ(First.Status, 0) << First.err();
  Summary S0 = summaryOf(First.err());
  ASSERT_TRUE(S0.Found) << First.err();
  EXPECT_EQ(S0.Compiled, Kernels) << First.err();
  EXPECT_EQ(S0.Remote, 0u);
  EXPECT_EQ(S0.Failed, 0u);
  EXPECT_EQ(Server.keys("kiln:cpu:*").size(), Kernels)
      << "the first machine published every kernel";

  // The seven others at once.
  std::vector<Child> Rest;
  for (unsigned I = 1; I != Machines; ++I)
    Rest.push_back(compileInto(Stores[I], "compile-" + std::to_string(I)));
  for (Child &C : Rest)
    waitChild(C, 120);
  unsigned TotalCompiled = S0.Compiled;
  double WarmSeconds = 0;
  for (unsigned I = 0; I != Rest.size(); ++I) {
    Child &C = Rest[I];
    ASSERT_EQ(C.Status, 0) << "machine " << I + 1 << ":\n" << C.err();
    Summary S = summaryOf(C.err());
    ASSERT_TRUE(S.Found) << C.err();
    EXPECT_NE(C.err().find("kiln-compile: 0 compiled, 0 already stored, " +
                           std::to_string(Kernels) +
                           " from the remote tier, 0 failed"),
              std::string::npos)
        << "machine " << I + 1 << ":\n"
        << C.err();
    TotalCompiled += S.Compiled;
    WarmSeconds = std::max(WarmSeconds, C.Seconds);
  }
  // Nothing more was published: the first publisher of each key won.
  EXPECT_EQ(Server.keys("kiln:cpu:*").size(), Kernels);

  std::printf("[          ] fleet of %u machines, %u kernels: %u compiled "
              "in all with the remote tier, %u for %u cold machines "
              "(%.1fx less work)\n",
              Machines, Kernels, TotalCompiled, Machines * Kernels, Machines,
              double(Machines * Kernels) / std::max(1u, TotalCompiled));
  std::printf("[          ] first machine (cold, compiles): %.2f s; seven "
              "at once from the tier: the slowest %.2f s\n",
              First.Seconds, WarmSeconds);

  // A machine of the seven runs a kernel from its store: loaded, not
  // compiled, and right.
  Child Run = runVadd(Stores[3], "run-3");
  waitChild(Run, 60);
  ASSERT_EQ(Run.Status, 0) << Run.err();
  EXPECT_NE(Run.err().find("): loaded from the store\n"), std::string::npos)
      << Run.err();
  EXPECT_EQ(Run.err().find("compile:"), std::string::npos) << Run.err();
  expectVaddOutput(Run.out());

  // A ninth machine, its store empty: kiln-run takes it from the tier.
  Child Ninth = runVadd(Work.sub("store-9"), "run-9");
  waitChild(Ninth, 60);
  ASSERT_EQ(Ninth.Status, 0) << Ninth.err();
  EXPECT_NE(Ninth.err().find("loaded from the store (remote hit)"),
            std::string::npos)
      << Ninth.err();
  EXPECT_EQ(Ninth.err().find("compile:"), std::string::npos) << Ninth.err();
  expectVaddOutput(Ninth.out());
}

TEST_F(Fleet, ReadOnlyAndNoRemoteMachinesPublishNothing) {
  // A worker the fleet does not trust compiles, keeps locally, publishes
  // nothing.
  std::vector<std::string> Argv = {KILN_COMPILE_PATH,
                                   std::string(KILN_EXAMPLE_KERNELS_DIR) +
                                       "/elementwise.kiln",
                                   "--store=" + Work.sub("ro"),
                                   "--remote-read-only"};
  for (const std::string &O : remoteOptions())
    Argv.push_back(O);
  Child RO = spawnChild(Argv, Work.path(), "ro");
  waitChild(RO, 120);
  ASSERT_EQ(RO.Status, 0) << RO.err();
  Summary S = summaryOf(RO.err());
  ASSERT_TRUE(S.Found) << RO.err();
  EXPECT_GT(S.Compiled, 0u);
  EXPECT_TRUE(Server.keys().empty()) << joined(Server.keys());

  // --no-remote excludes the other options, and alone uses no tier.
  Argv.push_back("--no-remote");
  Child Bad = spawnChild(Argv, Work.path(), "bad");
  waitChild(Bad, 60);
  EXPECT_NE(Bad.Status, 0);
  EXPECT_NE(Bad.err().find("--no-remote excludes the other --remote options"),
            std::string::npos)
      << Bad.err();
  Child None = spawnChild({KILN_COMPILE_PATH,
                           std::string(KILN_EXAMPLE_KERNELS_DIR) +
                               "/elementwise.kiln",
                           "--store=" + Work.sub("none"), "--no-remote"},
                          Work.path(), "none");
  waitChild(None, 120);
  ASSERT_EQ(None.Status, 0) << None.err();
  EXPECT_TRUE(Server.keys().empty()) << joined(Server.keys());
}

} // namespace
