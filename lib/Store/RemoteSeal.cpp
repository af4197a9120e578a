//===- RemoteSeal.cpp - The fleet key's id and sealed remote values -------===//
//
// What the remote tier needs libcrypto for: the fleet key's public id
// (SHA-256) and the HMAC-SHA256 tag that seals every remote value
// (docs/Store.md, "Trust"). Built with KILN_REMOTE only.
//
//===----------------------------------------------------------------------===//

#include "kiln/Store/RemoteTier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"

#include <cstring>
#include <openssl/crypto.h>
#include <openssl/evp.h>

using namespace llvm;
using namespace llvm::support::endian;

namespace kiln {

static std::array<uint8_t, 32> sha256(ArrayRef<uint8_t> A,
                                      ArrayRef<uint8_t> B) {
  std::array<uint8_t, 32> Out{};
  EVP_MD_CTX *Ctx = EVP_MD_CTX_new();
  unsigned Len = 0;
  if (Ctx && EVP_DigestInit_ex(Ctx, EVP_sha256(), nullptr) == 1 &&
      EVP_DigestUpdate(Ctx, A.data(), A.size()) == 1 &&
      EVP_DigestUpdate(Ctx, B.data(), B.size()) == 1)
    EVP_DigestFinal_ex(Ctx, Out.data(), &Len);
  EVP_MD_CTX_free(Ctx);
  return Out;
}

Expected<FleetKey> FleetKey::fromBytes(ArrayRef<uint8_t> Bytes) {
  if (Bytes.size() < 32)
    return createStringError(
        std::make_error_code(std::errc::invalid_argument),
        "a fleet key needs at least 32 bytes, this one has " +
            Twine(Bytes.size()));
  FleetKey K;
  K.Bytes.assign(Bytes.begin(), Bytes.end());
  static const char Domain[] = "kiln fleet key id";
  std::array<uint8_t, 32> H = sha256(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Domain),
                        sizeof(Domain)),
      Bytes);
  K.Id = read64le(H.data());
  return K;
}

//===----------------------------------------------------------------------===//
// Sealed values
//===----------------------------------------------------------------------===//

namespace {
constexpr char RemoteMagic[8] = {'K', 'I', 'L', 'N', 'R', 'M', 'T', '1'};
constexpr uint32_t RemoteVersion = 1;
constexpr uint32_t TagHmacSha256 = 1;
constexpr size_t SealHeader = 32; // magic, version, alg, key id, size
constexpr size_t TagSize = 32;
constexpr size_t SealedOverhead = SealHeader + TagSize;

/// HMAC-SHA256 over a domain string, the key name and the header, then the
/// payload: a value moved to another key name no longer verifies.
std::array<uint8_t, 32> tagOf(const FleetKey &Key, StringRef Name,
                              ArrayRef<uint8_t> Header,
                              ArrayRef<uint8_t> Payload) {
  static const char Domain[] = "kiln remote value v1";
  std::vector<uint8_t> Msg;
  Msg.reserve(sizeof(Domain) + Name.size() + 1 + Header.size() +
              Payload.size());
  Msg.insert(Msg.end(), Domain, Domain + sizeof(Domain));
  Msg.insert(Msg.end(), Name.begin(), Name.end());
  Msg.push_back(0);
  Msg.insert(Msg.end(), Header.begin(), Header.end());
  Msg.insert(Msg.end(), Payload.begin(), Payload.end());
  std::array<uint8_t, 32> Out{};
  size_t OutLen = 0;
  if (!EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr,
                 Key.bytes().data(), Key.bytes().size(), Msg.data(),
                 Msg.size(), Out.data(), Out.size(), &OutLen) ||
      OutLen != Out.size())
    Out.fill(0); // never verifies: openRemoteValue also checks for this
  return Out;
}
} // namespace

std::vector<uint8_t> sealRemoteValue(const FleetKey &Key, StringRef Name,
                                     ArrayRef<uint8_t> Payload) {
  std::vector<uint8_t> Out(SealedOverhead + Payload.size());
  uint8_t *P = Out.data();
  std::memcpy(P, RemoteMagic, 8);
  write32le(P + 8, RemoteVersion);
  write32le(P + 12, TagHmacSha256);
  write64le(P + 16, Key.id());
  write64le(P + 24, Payload.size());
  std::array<uint8_t, 32> Tag =
      tagOf(Key, Name, ArrayRef<uint8_t>(P, SealHeader), Payload);
  std::memcpy(P + SealHeader, Tag.data(), TagSize);
  if (!Payload.empty())
    std::memcpy(P + SealedOverhead, Payload.data(), Payload.size());
  return Out;
}

Expected<std::vector<uint8_t>> openRemoteValue(const FleetKey &Key,
                                               StringRef Name,
                                               ArrayRef<uint8_t> Value) {
  auto Bad = [](const Twine &Why) {
    return createStringError(
        std::make_error_code(std::errc::illegal_byte_sequence), Why);
  };
  if (Value.size() < SealedOverhead ||
      std::memcmp(Value.data(), RemoteMagic, 8) != 0)
    return Bad("not a sealed kiln value");
  const uint8_t *P = Value.data();
  if (read32le(P + 8) != RemoteVersion || read32le(P + 12) != TagHmacSha256)
    return Bad("unsupported sealed value version " + Twine(read32le(P + 8)));
  if (read64le(P + 16) != Key.id())
    return Bad("made with another fleet key (key id " +
               utohexstr(read64le(P + 16), true, 16) + ", ours " +
               utohexstr(Key.id(), true, 16) + ")");
  if (read64le(P + 24) != Value.size() - SealedOverhead)
    return Bad("truncated or padded sealed value");
  ArrayRef<uint8_t> Payload = Value.drop_front(SealedOverhead);
  std::array<uint8_t, 32> Tag =
      tagOf(Key, Name, Value.take_front(SealHeader), Payload);
  std::array<uint8_t, 32> Zero{};
  if (CRYPTO_memcmp(Tag.data(), P + SealHeader, TagSize) != 0 ||
      CRYPTO_memcmp(Tag.data(), Zero.data(), TagSize) == 0)
    return Bad("bad authentication tag (tampered with, or stored under "
               "another name)");
  return std::vector<uint8_t>(Payload.begin(), Payload.end());
}

bool remoteTierBuilt() { return true; }

} // namespace kiln
