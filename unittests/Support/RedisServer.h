//===- RedisServer.h - A private redis-server for one test ------*- C++ -*-===//
//
// Part of the test-support library (unittests/Support): a redis-server of
// the test's own, listening on a Unix socket in a fresh folder (never a TCP
// port), with nothing saved to disk, for the remote tier's tests
// (unittests/Remote). It is started by start(), waited for until it answers
// PING, and stopped (SIGTERM, then SIGKILL) when the object goes away.
//
// Without redis-server on PATH start() fails with a message saying to
// install it: the remote tier's tests fail rather than skip (the README's
// test command, ./build.sh test, installs it).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_SUPPORT_REDISSERVER_H
#define KILN_UNITTESTS_SUPPORT_REDISSERVER_H

#include "Support/TempDir.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

struct redisReply;
struct redisContext;

namespace kiln::test {

/// A hiredis reply, freed when it goes away.
struct RedisReplyDeleter {
  void operator()(redisReply *R) const;
};
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyDeleter>;

class RedisServer {
public:
  /// A server that is not running yet; \p ExtraArgs are added to its
  /// command line (e.g. {"--maxmemory", "2mb"}).
  explicit RedisServer(std::vector<std::string> ExtraArgs = {});
  /// Stops the server (SIGTERM, SIGKILL after 5 s) and removes its folder.
  ~RedisServer();
  RedisServer(const RedisServer &) = delete;
  RedisServer &operator=(const RedisServer &) = delete;

  /// Starts the server and waits (at most 10 s) until it answers PING;
  /// false with error() saying why (no redis-server: install it; it
  /// exited: the end of its log).
  bool start();
  /// Why the last start() failed.
  const std::string &error() const { return Error; }

  /// The socket, and its address for RemoteConfig::Url ("unix://PATH").
  const std::string &socketPath() const { return Socket; }
  std::string url() const { return "unix://" + Socket; }
  /// The server's own folder (its socket and log).
  const std::string &folder() const { return Dir.path(); }
  pid_t pid() const { return Pid; }
  bool running() const { return Pid > 0; }

  /// SIGKILL, and waits for it to die.
  void kill9();
  /// SIGTERM (SIGKILL after \p Grace), and waits for it to die.
  void stop(std::chrono::milliseconds Grace = std::chrono::milliseconds(5000));
  /// Stops the server if it runs, then starts a fresh one on the same
  /// socket (empty: nothing is saved).
  bool restart();
  /// SIGSTOP / SIGCONT: the server stalls, then goes on.
  void pause();
  void resume();

  /// Runs one command on a new connection (binary-safe arguments); null
  /// when the server cannot be reached or the request times out.
  RedisReplyPtr command(const std::vector<std::string> &Argv,
                        std::chrono::milliseconds Timeout =
                            std::chrono::milliseconds(5000)) const;
  /// GET: the value, nullopt when there is none (or no string).
  std::optional<std::string> get(const std::string &Key) const;
  /// SET: whether the server said OK.
  bool set(const std::string &Key, const std::string &Value) const;
  /// KEYS \p Pattern, sorted.
  std::vector<std::string> keys(const std::string &Pattern = "*") const;
  /// Whether PING answers PONG within \p Timeout.
  bool ping(std::chrono::milliseconds Timeout =
                std::chrono::milliseconds(1000)) const;
  /// The number from "FIELD:N" in INFO's text (e.g. "used_memory"); 0
  /// when absent.
  unsigned long long infoNumber(const std::string &Section,
                                const std::string &Field) const;

  /// Sends DEBUG SLEEP \p Seconds on a connection of its own and returns
  /// once the server is asleep (a PING on another connection no longer
  /// answers within 50 ms); false if it never was within 5 s. The sleeping
  /// command's connection is left to finish by itself.
  bool sleepFor(double Seconds);

private:
  bool waitUntilReady(std::chrono::milliseconds Max);
  std::string logTail() const;

  /// Connections of sleepFor()'s commands, kept open until they answer.
  void closeSleepers();

  std::vector<std::string> ExtraArgs;
  std::vector<redisContext *> Sleepers;
  TempDir Dir;
  std::string Socket;
  pid_t Pid = -1;
  bool Paused = false;
  std::string Error;
};

/// Writes a fleet key file at \p Path: 32 random bytes as 64 hex digits
/// and a newline (what `openssl rand -hex 32` gives), mode 0600.
/// Returns the path.
std::string writeFleetKeyFile(const std::string &Path);

} // namespace kiln::test

#endif
