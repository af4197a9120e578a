//===- StoreTestSupport.h - Store helpers and an integer artifact -------===//
//
// Part of the test-support library (unittests/Support): a fake backend's
// artifact (an integer), warning capture, and small helpers for the store's
// tests and the loader's.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_SUPPORT_STORETESTSUPPORT_H
#define KILN_UNITTESTS_SUPPORT_STORETESTSUPPORT_H

#include "Support/TempDir.h"

#include "kiln/Store/ArtifactStore.h"
#include "kiln/Store/Environment.h"

#include "llvm/Support/Endian.h"

#include <string>
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

inline StoreConfig readOnly() {
  StoreConfig C;
  C.Mode = StoreModeKind::ReadOnly;
  return C;
}

} // namespace test
} // namespace kiln

#endif
