//===- StoreTestSupport.h - Temporary stores and an integer artifact -----===//

#ifndef KILN_UNITTESTS_STORE_STORETESTSUPPORT_H
#define KILN_UNITTESTS_STORE_STORETESTSUPPORT_H

#include "kiln/Store/ArtifactStore.h"
#include "kiln/Store/Environment.h"

#include "llvm/Support/Endian.h"

#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace kiln {

/// A fake backend's artifact: an integer, four bytes on disk.
template <> struct ArtifactCodec<uint32_t> {
  static std::vector<uint8_t> encode(const uint32_t &V) {
    std::vector<uint8_t> B(4);
    llvm::support::endian::write32le(B.data(), V);
    return B;
  }
  static llvm::Expected<uint32_t> decode(llvm::ArrayRef<uint8_t> B) {
    if (B.size() != 4)
      return llvm::createStringError(
          std::make_error_code(std::errc::illegal_byte_sequence),
          "an integer artifact has 4 bytes, not " + llvm::Twine(B.size()));
    return llvm::support::endian::read32le(B.data());
  }
};

namespace test {

/// A fresh folder (0700), removed with its contents at the end.
class TempDir {
public:
  TempDir() {
    const char *Base = std::getenv("TMPDIR");
    std::string T =
        std::string(Base && *Base ? Base : "/tmp") + "/kiln-test-XXXXXX";
    std::vector<char> Buf(T.begin(), T.end());
    Buf.push_back(0);
    Path = ::mkdtemp(Buf.data());
  }
  ~TempDir() {
    std::system(
        ("chmod -R u+rwx '" + Path + "' 2>/dev/null; rm -rf '" + Path + "'")
            .c_str());
  }
  const std::string &path() const { return Path; }
  std::string sub(const std::string &Rel) const { return Path + "/" + Rel; }

private:
  std::string Path;
};

/// Collects the warnings \p Source receives while alive (its sink is
/// replaced meanwhile, then emptied: a test's stores are silent).
class WarningCapture {
public:
  explicit WarningCapture(StoreWarnings &Source) : Source(Source) {
    Source.setSink([this](llvm::StringRef W) { Warnings.push_back(W.str()); });
  }
  ~WarningCapture() { Source.setSink({}); }
  WarningCapture(const WarningCapture &) = delete;
  WarningCapture &operator=(const WarningCapture &) = delete;
  std::vector<std::string> Warnings;

private:
  StoreWarnings &Source;
};

/// Whether \p E is a failure; consumes it.
inline bool failed(llvm::Error E) {
  bool F = bool(E);
  llvm::consumeError(std::move(E));
  return F;
}

inline StoreConfig readWrite() {
  StoreConfig C;
  C.Mode = StoreModeKind::ReadWrite;
  return C;
}

} // namespace test
} // namespace kiln

#endif
