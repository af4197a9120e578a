//===- RedisServer.cpp - A private redis-server for one test --------------===//

#include "Support/RedisServer.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <spawn.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace kiln::test;
using Clock = std::chrono::steady_clock;

void RedisReplyDeleter::operator()(redisReply *R) const {
  if (R)
    freeReplyObject(R);
}

static timeval toTimeval(std::chrono::milliseconds D) {
  timeval TV;
  TV.tv_sec = time_t(D.count() / 1000);
  TV.tv_usec = suseconds_t((D.count() % 1000) * 1000);
  return TV;
}

/// The absolute path of \p Name on PATH, or "".
static std::string findOnPath(const std::string &Name) {
  const char *Path = std::getenv("PATH");
  std::string P = Path && *Path ? Path : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream SS(P);
  std::string Dir;
  while (std::getline(SS, Dir, ':')) {
    if (Dir.empty())
      continue;
    std::string Candidate = Dir + "/" + Name;
    if (::access(Candidate.c_str(), X_OK) == 0)
      return Candidate;
  }
  // Debian installs it in /usr/bin, which a stripped PATH may lack.
  for (const char *D : {"/usr/bin/", "/usr/sbin/", "/usr/local/bin/"}) {
    std::string Candidate = D + Name;
    if (::access(Candidate.c_str(), X_OK) == 0)
      return Candidate;
  }
  return "";
}

RedisServer::RedisServer(std::vector<std::string> ExtraArgs)
    : ExtraArgs(std::move(ExtraArgs)), Socket(Dir.sub("redis.sock")) {}

RedisServer::~RedisServer() {
  if (Paused)
    resume();
  stop();
  closeSleepers();
}

void RedisServer::closeSleepers() {
  for (redisContext *C : Sleepers)
    redisFree(C);
  Sleepers.clear();
}

bool RedisServer::start() {
  Error.clear();
  if (Pid > 0) {
    Error = "the server runs already";
    return false;
  }
  std::string Exe = findOnPath("redis-server");
  if (Exe.empty()) {
    Error = "redis-server is not installed (not on PATH): the remote tier's "
            "tests need it. Install it (Debian: apt-get install "
            "redis-server; ./build.sh test installs it).";
    return false;
  }
  std::vector<std::string> Args = {Exe,
                                   "--port",
                                   "0",
                                   "--unixsocket",
                                   Socket,
                                   "--unixsocketperm",
                                   "700",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--enable-debug-command",
                                   "yes",
                                   "--dir",
                                   Dir.path(),
                                   "--logfile",
                                   Dir.sub("redis.log"),
                                   "--daemonize",
                                   "no"};
  Args.insert(Args.end(), ExtraArgs.begin(), ExtraArgs.end());
  std::vector<char *> Argv;
  for (std::string &A : Args)
    Argv.push_back(A.data());
  Argv.push_back(nullptr);

  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  posix_spawn_file_actions_addopen(&FA, 0, "/dev/null", O_RDONLY, 0);
  std::string Out = Dir.sub("redis.out");
  posix_spawn_file_actions_addopen(&FA, 1, Out.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&FA, 1, 2);
  pid_t P = -1;
  int RC = posix_spawn(&P, Exe.c_str(), &FA, nullptr, Argv.data(), environ);
  posix_spawn_file_actions_destroy(&FA);
  if (RC != 0) {
    Error = "cannot start " + Exe + ": " + std::strerror(RC);
    return false;
  }
  Pid = P;
  if (!waitUntilReady(std::chrono::milliseconds(10000))) {
    std::string Why = Error;
    if (Pid > 0)
      kill9();
    Error = Why + "\n--- the end of its log:\n" + logTail();
    return false;
  }
  return true;
}

bool RedisServer::waitUntilReady(std::chrono::milliseconds Max) {
  Clock::time_point End = Clock::now() + Max;
  while (Clock::now() < End) {
    int Status = 0;
    pid_t W = ::waitpid(Pid, &Status, WNOHANG);
    if (W == Pid) {
      Pid = -1;
      Error = "redis-server exited at once (" +
              (WIFEXITED(Status)
                   ? "status " + std::to_string(WEXITSTATUS(Status))
                   : "signal " + std::to_string(WTERMSIG(Status))) +
              ")";
      return false;
    }
    if (ping(std::chrono::milliseconds(200)))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Error = "redis-server did not answer PING on " + Socket + " within " +
          std::to_string(Max.count()) + " ms";
  return false;
}

std::string RedisServer::logTail() const {
  std::string Text;
  for (const char *F : {"redis.log", "redis.out"}) {
    std::ifstream In(Dir.sub(F));
    std::string All((std::istreambuf_iterator<char>(In)), {});
    if (All.size() > 2000)
      All = All.substr(All.size() - 2000);
    Text += All;
  }
  return Text;
}

/// Waits for \p Pid for at most \p Max; whether it was reaped.
static bool reap(pid_t Pid, std::chrono::milliseconds Max) {
  Clock::time_point End = Clock::now() + Max;
  for (;;) {
    int Status = 0;
    pid_t W = ::waitpid(Pid, &Status, WNOHANG);
    if (W == Pid || (W < 0 && errno == ECHILD))
      return true;
    if (Clock::now() >= End)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void RedisServer::kill9() {
  if (Pid <= 0)
    return;
  ::kill(Pid, SIGKILL);
  reap(Pid, std::chrono::milliseconds(10000));
  Pid = -1;
  Paused = false;
  closeSleepers();
}

void RedisServer::stop(std::chrono::milliseconds Grace) {
  if (Pid <= 0)
    return;
  if (Paused)
    resume();
  ::kill(Pid, SIGTERM);
  if (!reap(Pid, Grace)) {
    ::kill(Pid, SIGKILL);
    reap(Pid, std::chrono::milliseconds(10000));
  }
  Pid = -1;
  closeSleepers();
}

bool RedisServer::restart() {
  stop();
  return start();
}

void RedisServer::pause() {
  if (Pid > 0 && ::kill(Pid, SIGSTOP) == 0)
    Paused = true;
}

void RedisServer::resume() {
  if (Pid > 0)
    ::kill(Pid, SIGCONT);
  Paused = false;
}

RedisReplyPtr RedisServer::command(const std::vector<std::string> &Argv,
                                   std::chrono::milliseconds Timeout) const {
  redisContext *C = redisConnectUnixWithTimeout(Socket.c_str(),
                                                toTimeval(Timeout));
  if (!C)
    return nullptr;
  if (C->err || redisSetTimeout(C, toTimeval(Timeout)) != REDIS_OK) {
    redisFree(C);
    return nullptr;
  }
  std::vector<const char *> Ptrs;
  std::vector<size_t> Lens;
  for (const std::string &A : Argv) {
    Ptrs.push_back(A.data());
    Lens.push_back(A.size());
  }
  void *R = redisCommandArgv(C, int(Argv.size()), Ptrs.data(), Lens.data());
  redisFree(C);
  return RedisReplyPtr(static_cast<redisReply *>(R));
}

std::optional<std::string> RedisServer::get(const std::string &Key) const {
  RedisReplyPtr R = command({"GET", Key});
  if (!R || R->type != REDIS_REPLY_STRING)
    return std::nullopt;
  return std::string(R->str, R->len);
}

bool RedisServer::set(const std::string &Key, const std::string &Value) const {
  RedisReplyPtr R = command({"SET", Key, Value});
  return R && R->type == REDIS_REPLY_STATUS &&
         std::string(R->str, R->len) == "OK";
}

std::vector<std::string> RedisServer::keys(const std::string &Pattern) const {
  std::vector<std::string> Out;
  RedisReplyPtr R = command({"KEYS", Pattern});
  if (!R || R->type != REDIS_REPLY_ARRAY)
    return Out;
  for (size_t I = 0; I < R->elements; ++I)
    Out.emplace_back(R->element[I]->str, R->element[I]->len);
  std::sort(Out.begin(), Out.end());
  return Out;
}

bool RedisServer::ping(std::chrono::milliseconds Timeout) const {
  RedisReplyPtr R = command({"PING"}, Timeout);
  return R && R->type == REDIS_REPLY_STATUS &&
         std::string(R->str, R->len) == "PONG";
}

unsigned long long RedisServer::infoNumber(const std::string &Section,
                                           const std::string &Field) const {
  RedisReplyPtr R = command({"INFO", Section});
  if (!R || R->type != REDIS_REPLY_STRING)
    return 0;
  std::string Text(R->str, R->len);
  std::string Needle = "\n" + Field + ":";
  size_t At = ("\n" + Text).find(Needle);
  if (At == std::string::npos)
    return 0;
  return std::strtoull(Text.c_str() + At + Needle.size() - 1, nullptr, 10);
}

bool RedisServer::sleepFor(double Seconds) {
  redisContext *C = redisConnectUnixWithTimeout(
      Socket.c_str(), toTimeval(std::chrono::milliseconds(2000)));
  if (!C || C->err) {
    if (C)
      redisFree(C);
    return false;
  }
  std::string S = std::to_string(Seconds);
  const char *Argv[] = {"DEBUG", "SLEEP", S.c_str()};
  size_t Lens[] = {5, 5, S.size()};
  redisAppendCommandArgv(C, 3, Argv, Lens);
  int Done = 0;
  while (!Done)
    if (redisBufferWrite(C, &Done) != REDIS_OK) {
      redisFree(C);
      return false;
    }
  Sleepers.push_back(C); // its reply comes when the sleep is over
  Clock::time_point End = Clock::now() + std::chrono::milliseconds(5000);
  while (Clock::now() < End) {
    if (!ping(std::chrono::milliseconds(50)))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

std::string kiln::test::writeFleetKeyFile(const std::string &Path) {
  std::random_device RD;
  static const char Hex[] = "0123456789abcdef";
  std::string Text;
  for (int I = 0; I < 32; ++I) {
    unsigned B = RD() & 0xff;
    Text += Hex[B >> 4];
    Text += Hex[B & 15];
  }
  Text += "\n";
  ::unlink(Path.c_str());
  int FD = ::open(Path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (FD < 0)
    return Path;
  ssize_t N = ::write(FD, Text.data(), Text.size());
  (void)N;
  ::fchmod(FD, 0600);
  ::close(FD);
  return Path;
}
