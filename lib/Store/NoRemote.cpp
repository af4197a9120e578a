//===- NoRemote.cpp - The remote tier of a build without one --------------===//
//
// Built instead of RedisClient.cpp, RemoteSeal.cpp and RemoteTier.cpp when
// KILN_REMOTE is off: nothing links hiredis or libcrypto. No tier can be
// made (RemoteTier::create and FleetKey::fromBytes fail with
// noRemoteTierMessage()), so the tier's other members are never reached;
// they do nothing.
//
//===----------------------------------------------------------------------===//

#include "kiln/Store/RemoteTier.h"

using namespace llvm;

namespace kiln {

static Error noRemoteTier() {
  return createStringError(std::make_error_code(std::errc::not_supported),
                           noRemoteTierMessage());
}

bool remoteTierBuilt() { return false; }

Expected<FleetKey> FleetKey::fromBytes(ArrayRef<uint8_t>) {
  return noRemoteTier();
}

std::vector<uint8_t> sealRemoteValue(const FleetKey &, StringRef,
                                     ArrayRef<uint8_t>) {
  return {};
}

Expected<std::vector<uint8_t>> openRemoteValue(const FleetKey &, StringRef,
                                               ArrayRef<uint8_t>) {
  return noRemoteTier();
}

class RemoteTier::Impl {
public:
  RemoteConfig Config;
};

Expected<std::shared_ptr<RemoteTier>>
RemoteTier::create(const RemoteConfig &, std::shared_ptr<StoreWarnings>) {
  return noRemoteTier();
}

RemoteTier::RemoteTier(std::unique_ptr<Impl> I) : I(std::move(I)) {}
RemoteTier::~RemoteTier() = default;

RemoteFetch RemoteTier::fetch(StringRef) {
  RemoteFetch F;
  F.Status = RemoteFetchStatus::Skipped;
  return F;
}
bool RemoteTier::publish(std::string, std::vector<uint8_t>) { return false; }
Expected<bool> RemoteTier::publishNow(StringRef, ArrayRef<uint8_t>) {
  return noRemoteTier();
}
void RemoteTier::countRejected(StringRef, StringRef) {}
bool RemoteTier::drain(std::chrono::milliseconds) { return true; }
Expected<std::vector<RemoteTier::KeySummary>>
RemoteTier::listKeys(const ListLimits &) {
  return noRemoteTier();
}
Expected<std::string> RemoteTier::serverInfo(StringRef) {
  return noRemoteTier();
}
RemoteCounters RemoteTier::counters() const { return RemoteCounters(); }
const RemoteConfig &RemoteTier::config() const { return I->Config; }
bool RemoteTier::readOnly() const { return true; }
std::string RemoteTier::where() const { return std::string(); }
bool RemoteTier::backingOff() const { return true; }

} // namespace kiln
