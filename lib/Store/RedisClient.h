//===- RedisClient.h - One connection to a Redis server ---------*- C++ -*-===//
//
// The few commands the remote tier needs (GET, SET, SCAN, STRLEN, INFO, DEL),
// over hiredis's blocking API with a connect timeout and a per-request
// timeout. Private to lib/Store: the rest of Kiln sees RemoteTier only.
//
// A connection that failed once (a timeout, a reset, a reply of the wrong
// shape) is dead: the caller drops it and makes another, so a half-read
// reply can never be taken for the answer to the next request.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_STORE_REDISCLIENT_H
#define KILN_LIB_STORE_REDISCLIENT_H

#include "kiln/Store/RemoteTier.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct redisContext;

namespace kiln {

/// What a GET found.
struct RedisValue {
  bool Found = false;
  std::vector<uint8_t> Bytes;
};

class RedisConnection {
public:
  /// Connects to \p Where within \p ConnectTimeout, sets \p RequestTimeout
  /// on every later request, authenticates and selects the database.
  static llvm::Expected<std::unique_ptr<RedisConnection>>
  connect(const RemoteAddress &Where, std::chrono::milliseconds ConnectTimeout,
          std::chrono::milliseconds RequestTimeout);
  ~RedisConnection();
  RedisConnection(const RedisConnection &) = delete;
  RedisConnection &operator=(const RedisConnection &) = delete;

  /// GET \p Key; a value larger than \p MaxBytes is an error.
  llvm::Expected<RedisValue> get(llvm::StringRef Key, size_t MaxBytes);
  /// SET \p Key \p Value NX: whether it was set (false: the key exists).
  /// An error reply (e.g. OOM when the server is full) is an error.
  llvm::Expected<bool> setIfAbsent(llvm::StringRef Key,
                                   llvm::ArrayRef<uint8_t> Value);
  /// One SCAN step over keys matching \p Pattern: the next cursor ("0"
  /// when done) and the keys of this step.
  llvm::Expected<std::pair<std::string, std::vector<std::string>>>
  scan(llvm::StringRef Cursor, llvm::StringRef Pattern);
  llvm::Expected<uint64_t> strlen(llvm::StringRef Key);
  llvm::Expected<uint64_t> del(llvm::StringRef Key);
  /// INFO \p Section's text.
  llvm::Expected<std::string> info(llvm::StringRef Section);

  /// Whether an earlier request failed in a way that leaves the
  /// connection unusable (I/O error, timeout, protocol error).
  bool broken() const { return Broken; }
  /// Whether the server closed this idle connection (it was restarted, or
  /// dropped idle clients): the socket is readable, at its end or with
  /// bytes no request asked for. Does not block. Such a connection is
  /// dropped before use, so that a request does not fail, and count as a
  /// failure of the server, only because the connection was old.
  bool closedByServer() const;

private:
  explicit RedisConnection(redisContext *C, std::string Where)
      : Ctx(C), Where(std::move(Where)) {}
  /// Runs a command of \p Argv; the reply, or an error (and Broken set
  /// when the connection cannot be trusted any more).
  struct Reply;
  llvm::Expected<Reply> command(llvm::ArrayRef<llvm::StringRef> Argv);

  redisContext *Ctx;
  std::string Where;
  bool Broken = false;
};

} // namespace kiln

#endif // KILN_LIB_STORE_REDISCLIENT_H
