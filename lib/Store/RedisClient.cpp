//===- RedisClient.cpp - One connection to a Redis server ----------------===//

#include "RedisClient.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <cerrno>
#include <cstring>
#include <csignal>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <sys/time.h>
#include <time.h>

using namespace llvm;

namespace kiln {

static timeval toTimeval(std::chrono::milliseconds D) {
  timeval TV;
  TV.tv_sec = time_t(D.count() / 1000);
  TV.tv_usec = suseconds_t((D.count() % 1000) * 1000);
  return TV;
}

static Error failure(const Twine &Why) {
  return createStringError(std::make_error_code(std::errc::io_error), Why);
}

namespace {
/// Keeps a write to a connection whose server went away from killing the
/// process: hiredis writes with write(2), which raises SIGPIPE (default
/// action: terminate) on a closed socket. While a guard lives, SIGPIPE is
/// blocked on this thread (a socket's SIGPIPE goes to the thread that
/// wrote), so the write fails with EPIPE instead; one it left pending is
/// consumed before the thread's mask is restored.
class SigpipeGuard {
public:
  SigpipeGuard() {
    sigset_t Pending;
    sigemptyset(&Pending);
    WasPending = sigpending(&Pending) == 0 && sigismember(&Pending, SIGPIPE);
    sigset_t Block;
    sigemptyset(&Block);
    sigaddset(&Block, SIGPIPE);
    Blocked = pthread_sigmask(SIG_BLOCK, &Block, &Old) == 0;
  }
  ~SigpipeGuard() {
    if (!Blocked)
      return;
    int SavedErrno = errno;
    sigset_t Pending;
    sigemptyset(&Pending);
    if (!WasPending && sigpending(&Pending) == 0 &&
        sigismember(&Pending, SIGPIPE)) {
      sigset_t Pipe;
      sigemptyset(&Pipe);
      sigaddset(&Pipe, SIGPIPE);
      timespec Zero{0, 0};
      while (sigtimedwait(&Pipe, nullptr, &Zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &Old, nullptr);
    errno = SavedErrno;
  }
  SigpipeGuard(const SigpipeGuard &) = delete;
  SigpipeGuard &operator=(const SigpipeGuard &) = delete;

private:
  sigset_t Old;
  bool Blocked = false;
  bool WasPending = false;
};
} // namespace

/// Owns a hiredis reply.
struct RedisConnection::Reply {
  redisReply *R = nullptr;
  explicit Reply(redisReply *R) : R(R) {}
  Reply(Reply &&O) noexcept : R(O.R) { O.R = nullptr; }
  ~Reply() {
    if (R)
      freeReplyObject(R);
  }
};

Expected<std::unique_ptr<RedisConnection>>
RedisConnection::connect(const RemoteAddress &Where,
                         std::chrono::milliseconds ConnectTimeout,
                         std::chrono::milliseconds RequestTimeout) {
  timeval TV = toTimeval(ConnectTimeout);
  redisContext *C =
      Where.SocketPath.empty()
          ? redisConnectWithTimeout(Where.Host.c_str(), int(Where.Port), TV)
          : redisConnectUnixWithTimeout(Where.SocketPath.c_str(), TV);
  if (!C)
    return failure("cannot connect to " + Where.str() + ": out of memory");
  if (C->err) {
    std::string Why = C->errstr;
    redisFree(C);
    return failure("cannot connect to " + Where.str() + ": " + Why);
  }
  if (redisSetTimeout(C, toTimeval(RequestTimeout)) != REDIS_OK) {
    redisFree(C);
    return failure("cannot set a timeout on the connection to " + Where.str());
  }
  std::unique_ptr<RedisConnection> Conn(new RedisConnection(C, Where.str()));
  auto Check = [&](Expected<Reply> R, StringRef What) -> Error {
    if (!R)
      return R.takeError();
    if (R->R->type == REDIS_REPLY_ERROR)
      return failure(What + " on " + Conn->Where + " refused: " +
                     StringRef(R->R->str, R->R->len));
    return Error::success();
  };
  if (!Where.Password.empty()) {
    SmallVector<StringRef, 3> Argv{"AUTH"};
    if (!Where.User.empty())
      Argv.push_back(Where.User);
    Argv.push_back(Where.Password);
    if (Error E = Check(Conn->command(Argv), "AUTH"))
      return E;
  }
  if (Where.Database != 0) {
    std::string DB = std::to_string(Where.Database);
    if (Error E = Check(Conn->command({"SELECT", DB}), "SELECT " + DB))
      return E;
  }
  return Conn;
}

RedisConnection::~RedisConnection() { redisFree(Ctx); }

bool RedisConnection::closedByServer() const {
  if (Broken || !Ctx || Ctx->fd < 0)
    return true;
  pollfd P{Ctx->fd, POLLIN, 0};
  int N;
  do
    N = ::poll(&P, 1, 0);
  while (N < 0 && errno == EINTR);
  // Between requests nothing is due from the server: readable means closed
  // (or out of step, which is as bad).
  return N != 0;
}

Expected<RedisConnection::Reply>
RedisConnection::command(ArrayRef<StringRef> Argv) {
  if (Broken)
    return failure("the connection to " + Where + " failed earlier");
  SmallVector<const char *, 4> Ptrs;
  SmallVector<size_t, 4> Lens;
  for (StringRef A : Argv) {
    Ptrs.push_back(A.data());
    Lens.push_back(A.size());
  }
  SigpipeGuard NoSigpipe;
  errno = 0;
  void *Raw = redisCommandArgv(Ctx, int(Argv.size()), Ptrs.data(), Lens.data());
  if (!Raw) {
    Broken = true;
    std::string Why = Ctx->err ? std::string(Ctx->errstr) : "no reply";
    if (Ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK))
      Why = "timed out";
    return failure(Twine(Argv.front()) + " on " + Where + ": " + Why);
  }
  return Reply(static_cast<redisReply *>(Raw));
}

/// An error for a reply of a type the command never answers with: the
/// connection speaks something else, so it is not used again.
static Error unexpected(bool &Broken, StringRef Cmd, StringRef Where,
                        const redisReply *R) {
  if (R->type == REDIS_REPLY_ERROR)
    return failure(Cmd + " on " + Where + " refused: " +
                   StringRef(R->str, R->len));
  Broken = true;
  return failure(Cmd + " on " + Where + ": unexpected reply (type " +
                 Twine(R->type) + ")");
}

Expected<RedisValue> RedisConnection::get(StringRef Key, size_t MaxBytes) {
  Expected<Reply> R = command({"GET", Key});
  if (!R)
    return R.takeError();
  RedisValue V;
  if (R->R->type == REDIS_REPLY_NIL)
    return V;
  if (R->R->type != REDIS_REPLY_STRING)
    return unexpected(Broken, "GET", Where, R->R);
  if (R->R->len > MaxBytes)
    return failure("GET on " + Where + ": a value of " + Twine(R->R->len) +
                   " bytes is over the limit of " + Twine(MaxBytes));
  V.Found = true;
  V.Bytes.assign(reinterpret_cast<const uint8_t *>(R->R->str),
                 reinterpret_cast<const uint8_t *>(R->R->str) + R->R->len);
  return V;
}

Expected<bool> RedisConnection::setIfAbsent(StringRef Key,
                                            ArrayRef<uint8_t> Value) {
  StringRef V(reinterpret_cast<const char *>(Value.data()), Value.size());
  Expected<Reply> R = command({"SET", Key, V, "NX"});
  if (!R)
    return R.takeError();
  if (R->R->type == REDIS_REPLY_NIL)
    return false;
  if (R->R->type == REDIS_REPLY_STATUS)
    return true;
  return unexpected(Broken, "SET", Where, R->R);
}

Expected<std::pair<std::string, std::vector<std::string>>>
RedisConnection::scan(StringRef Cursor, StringRef Pattern) {
  Expected<Reply> R = command({"SCAN", Cursor, "MATCH", Pattern, "COUNT", "1000"});
  if (!R)
    return R.takeError();
  const redisReply *A = R->R;
  if (A->type != REDIS_REPLY_ARRAY || A->elements != 2 ||
      A->element[0]->type != REDIS_REPLY_STRING ||
      A->element[1]->type != REDIS_REPLY_ARRAY)
    return unexpected(Broken, "SCAN", Where, A);
  std::pair<std::string, std::vector<std::string>> Out;
  Out.first.assign(A->element[0]->str, A->element[0]->len);
  for (size_t I = 0; I < A->element[1]->elements; ++I) {
    const redisReply *K = A->element[1]->element[I];
    if (K->type != REDIS_REPLY_STRING)
      return unexpected(Broken, "SCAN", Where, K);
    Out.second.emplace_back(K->str, K->len);
  }
  return Out;
}

static Expected<uint64_t> integerReply(bool &Broken, StringRef Cmd,
                                       StringRef Where, const redisReply *R) {
  if (R->type != REDIS_REPLY_INTEGER || R->integer < 0)
    return unexpected(Broken, Cmd, Where, R);
  return uint64_t(R->integer);
}

Expected<uint64_t> RedisConnection::strlen(StringRef Key) {
  Expected<Reply> R = command({"STRLEN", Key});
  if (!R)
    return R.takeError();
  return integerReply(Broken, "STRLEN", Where, R->R);
}

Expected<uint64_t> RedisConnection::del(StringRef Key) {
  Expected<Reply> R = command({"DEL", Key});
  if (!R)
    return R.takeError();
  return integerReply(Broken, "DEL", Where, R->R);
}

Expected<std::string> RedisConnection::info(StringRef Section) {
  Expected<Reply> R = command({"INFO", Section});
  if (!R)
    return R.takeError();
  if (R->R->type != REDIS_REPLY_STRING)
    return unexpected(Broken, "INFO", Where, R->R);
  return std::string(R->R->str, R->R->len);
}

} // namespace kiln
