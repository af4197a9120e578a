//===- RemoteConfig.cpp - The remote tier's address, key file and names --===//
//
// Everything about the remote tier that is a value and needs no library of
// its own: the address, the configuration read from the environment, the
// fleet key file and the key names. The key's hash and the sealed value
// format (libcrypto) are in RemoteSeal.cpp, the connections (hiredis) in
// RemoteTier.cpp; a build without KILN_REMOTE has NoRemote.cpp instead.
//
//===----------------------------------------------------------------------===//

#include "kiln/Store/Environment.h"
#include "kiln/Store/RemoteTier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::support::endian;

namespace kiln {

static Error invalid(const Twine &Why) {
  return createStringError(std::make_error_code(std::errc::invalid_argument),
                           Why);
}

//===----------------------------------------------------------------------===//
// Addresses
//===----------------------------------------------------------------------===//

static bool isControlChar(char C) {
  return static_cast<unsigned char>(C) < 0x20 || C == 0x7f;
}

/// A host name or IPv4 address: letters, digits, '.', '-', '_'.
static bool isHostNameText(StringRef Host) {
  return llvm::all_of(Host, [](char C) {
    return isAlnum(C) || C == '.' || C == '-' || C == '_';
  });
}

/// What may stand between the brackets of an IPv6 address: hex digits,
/// ':' (at least one) and '.', then an optional "%zone" (fe80::1%eth0).
static bool isIPv6Text(StringRef Host) {
  auto [Address, Zone] = Host.split('%');
  if (!Address.contains(':') ||
      !llvm::all_of(Address, [](char C) {
        return isHexDigit(C) || C == ':' || C == '.';
      }))
    return false;
  if (Host.contains('%') && (Zone.empty() || !isHostNameText(Zone)))
    return false;
  return true;
}

Expected<RemoteAddress> RemoteAddress::parse(StringRef Url) {
  RemoteAddress A;
  StringRef Rest = Url.trim();
  auto ParseDb = [&](StringRef Text) -> Error {
    if (Text.empty())
      return Error::success();
    if (Text.getAsInteger(10, A.Database) || A.Database > 1000000)
      return invalid("remote store address '" + Url + "': database '" + Text +
                     "' is not a number");
    return Error::success();
  };
  if (Rest.consume_front("unix://") || Rest.consume_front("unix:")) {
    auto [Path, Query] = Rest.split('?');
    if (!Path.starts_with("/"))
      return invalid("remote store address '" + Url +
                     "': a Unix socket's path must be absolute "
                     "(unix:///path/to/socket)");
    // The path is handed to the system as a C string (a NUL would cut it)
    // and printed in messages, which must read back to the same path.
    if (llvm::any_of(Path, [](char C) { return isControlChar(C); }) ||
        Path.ends_with(" "))
      return invalid("remote store address '" + Url +
                     "': the socket path holds a control character or ends "
                     "in a space");
    A.SocketPath = Path.str();
    if (!Query.empty()) {
      if (!Query.consume_front("db="))
        return invalid("remote store address '" + Url +
                       "': the only query is ?db=N");
      if (Error E = ParseDb(Query))
        return E;
    }
    return A;
  }
  if (!Rest.consume_front("redis://"))
    return invalid("remote store address '" + Url +
                   "': expected redis://HOST[:PORT][/DB] or "
                   "unix:///PATH[?db=N]");
  auto [Authority, Db] = Rest.split('/');
  if (Error E = ParseDb(Db))
    return E;
  if (Authority.contains('@')) {
    auto [UserInfo, HostPort] = Authority.rsplit('@');
    auto [User, Password] = UserInfo.split(':');
    A.User = User.str();
    A.Password = Password.str();
    Authority = HostPort;
  }
  StringRef Host = Authority, Port;
  bool Bracketed = Authority.starts_with("[");
  if (Bracketed) { // [IPv6]:port
    size_t Close = Authority.find(']');
    if (Close == StringRef::npos)
      return invalid("remote store address '" + Url + "': unclosed '['");
    Host = Authority.slice(1, Close);
    StringRef After = Authority.drop_front(Close + 1);
    if (!After.empty() && !After.consume_front(":"))
      return invalid("remote store address '" + Url + "': bad port");
    Port = After;
  } else if (Authority.contains(':')) {
    std::tie(Host, Port) = Authority.rsplit(':');
  }
  if (Host.empty())
    return invalid("remote store address '" + Url + "': no host");
  // A name or an IPv4 address, or an IPv6 address in brackets: nothing that
  // would cut the C string the connection is made with, or print as an
  // address naming another place.
  if (!isHostNameText(Host) && !(Bracketed && isIPv6Text(Host)))
    return invalid("remote store address '" + Url + "': bad host '" + Host +
                   "' (a name or IPv4 address of letters, digits, '.', '-' "
                   "and '_', or an IPv6 address in brackets: [::1])");
  A.Host = Host.str();
  if (!Port.empty() && (Port.getAsInteger(10, A.Port) || A.Port == 0 ||
                        A.Port > 65535))
    return invalid("remote store address '" + Url + "': bad port '" + Port +
                   "'");
  return A;
}

std::string RemoteAddress::str() const {
  std::string S = SocketPath.empty()
                      ? "redis://" + (Host.find(':') != std::string::npos
                                          ? "[" + Host + "]"
                                          : Host) +
                            ":" + std::to_string(Port)
                      : "unix://" + SocketPath;
  if (Database)
    S += (SocketPath.empty() ? "/" : "?db=") + std::to_string(Database);
  return S;
}

//===----------------------------------------------------------------------===//
// Configuration from the environment
//===----------------------------------------------------------------------===//

std::optional<RemoteConfig> RemoteConfig::fromEnvironment(StoreWarnings *W) {
  const char *Url = std::getenv("KILN_REMOTE");
  if (!Url || !*Url || StringRef(Url) == "0")
    return std::nullopt;
  RemoteConfig C;
  C.Url = Url;
  if (const char *Key = std::getenv("KILN_REMOTE_KEY"))
    C.KeyFile = Key;
  if (const char *Mode = std::getenv("KILN_REMOTE_MODE")) {
    StringRef M(Mode);
    if (M == "read-only")
      C.Mode = RemoteModeKind::ReadOnly;
    else if (M == "read-write" || M.empty())
      C.Mode = RemoteModeKind::ReadWrite;
    else if (W)
      W->warn("KILN_REMOTE_MODE='" + M +
              "' is neither read-write nor read-only; using read-write");
  }
  if (const char *T = std::getenv("KILN_REMOTE_TIMEOUT_MS")) {
    unsigned Ms;
    if (StringRef(T).getAsInteger(10, Ms) || Ms == 0 || Ms > 60000) {
      if (W)
        W->warn(Twine("KILN_REMOTE_TIMEOUT_MS='") + T +
                "' is not a number of milliseconds from 1 to 60000; using " +
                Twine(C.RequestTimeout.count()));
    } else {
      C.ConnectTimeout = C.RequestTimeout = std::chrono::milliseconds(Ms);
    }
  }
  return C;
}

//===----------------------------------------------------------------------===//
// The fleet key
//===----------------------------------------------------------------------===//

Expected<FleetKey> FleetKey::load(StringRef Path) {
  if (Path.empty())
    return invalid("no fleet key file (KILN_REMOTE_KEY, --remote-key): the "
                   "remote tier has no default key");
  std::string P = Path.str();
  auto Bad = [&](const Twine &Why) {
    return invalid("fleet key file " + Path + ": " + Why);
  };
  int FD = ::open(P.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return Bad(errno == ELOOP ? "is a symbolic link"
                              : StringRef(std::strerror(errno)));
  struct stat St;
  std::string Why;
  if (::fstat(FD, &St) != 0)
    Why = std::strerror(errno);
  else if (!S_ISREG(St.st_mode))
    Why = "is not a regular file";
  else if (St.st_uid != ::geteuid())
    Why = "is owned by another user";
  else if (St.st_mode & 077)
    Why = "group or others may read or write it (chmod 600 it)";
  else if (St.st_size > 4096)
    Why = "is larger than 4096 bytes";
  std::vector<uint8_t> Bytes;
  if (Why.empty()) {
    Bytes.resize(size_t(St.st_size));
    size_t Done = 0;
    while (Done < Bytes.size()) {
      ssize_t N = ::pread(FD, Bytes.data() + Done, Bytes.size() - Done,
                          off_t(Done));
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        break;
      Done += size_t(N);
    }
    Bytes.resize(Done);
  }
  ::close(FD);
  if (!Why.empty())
    return Bad(Why);
  StringRef Text(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  StringRef Trimmed = Text.trim();
  Expected<FleetKey> K = fromBytes(ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(Trimmed.data()), Trimmed.size()));
  if (!K)
    return Bad(toString(K.takeError()));
  return K;
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

std::string remoteEntryName(StringRef Prefix, StringRef Backend,
                            uint64_t NamespaceHash, const KernelCacheKey &Key) {
  return (Prefix + ":" + Backend + ":" + utohexstr(NamespaceHash, true, 16) +
          ":" + Key.hex())
      .str();
}

std::string remoteDictionaryName(StringRef Prefix, StringRef Backend,
                                 uint64_t NamespaceHash, uint32_t DictId) {
  return (Prefix + ":" + Backend + ":" + utohexstr(NamespaceHash, true, 16) +
          ":zdict-" + utohexstr(DictId, true, 8))
      .str();
}

RemoteCounters &RemoteCounters::operator+=(const RemoteCounters &O) {
  Hits += O.Hits;
  Misses += O.Misses;
  Errors += O.Errors;
  Rejected += O.Rejected;
  Skipped += O.Skipped;
  Published += O.Published;
  PublishErrors += O.PublishErrors;
  Dropped += O.Dropped;
  return *this;
}

} // namespace kiln
