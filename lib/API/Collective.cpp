//===- Collective.cpp - All-reduce across the devices of a process --------===//
//
// allReduce of kiln/kiln.h, ordered with its members' streams by events
// alone: each member's stream but the first records an event; the first
// waits for them all, reduces (kiln/Runtime/Collective.h) and records one
// event, which the others wait for. No thread blocks on another stream.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "kiln/Runtime/Collective.h"

#include <string>

using namespace kiln;
using namespace kiln::api;
using namespace kiln::api::detail;

namespace {

Status invalid(const std::string &Message) {
  return Status(ErrorCode::InvalidArgument, "allReduce: " + Message);
}

std::string member(size_t I) { return "member " + std::to_string(I); }

/// Checks member \p I's stream and view on their own.
Status checkMember(const CollectiveMember &M, size_t I) {
  if (!M.OnStream.valid())
    return invalid(member(I) + ": the stream is null");
  const BufferView &V = M.View;
  if (!V.buffer().valid())
    return invalid(member(I) + ": the view's buffer is null");
  if (!isValidType(V.type()))
    return invalid(member(I) + ": the view's element type is not a type of "
                               "the IR");
  if (!kiln::isReducible(irType(V.type())))
    return invalid(member(I) + ": " + V.type().str() +
                   " elements cannot be reduced (integers, f16, bf16, f32, "
                   "f64 and lines of them can)");
  if (V.byteOffset() % V.type().alignment())
    return invalid(member(I) + ": byte offset " +
                   std::to_string(V.byteOffset()) + " is not a multiple of " +
                   std::to_string(V.type().alignment()) + " (the alignment of " +
                   V.type().str() + ")");
  uint64_t Size = V.buffer().size();
  uint64_t ElemSize = V.type().sizeInBytes();
  if (V.byteOffset() > Size ||
      V.count() > (Size - V.byteOffset()) / ElemSize)
    return invalid(member(I) + ": " + std::to_string(V.count()) + " " +
                   V.type().str() + " at byte offset " +
                   std::to_string(V.byteOffset()) + " do not fit in its buffer "
                   "of " + std::to_string(Size) + " bytes");
  return Status();
}

/// Whether the bytes of views \p A and \p B overlap.
bool overlap(const BufferView &A, const BufferView &B) {
  if (!A.sizeInBytes() || !B.sizeInBytes())
    return false;
  auto *AB = static_cast<const char *>(A.data());
  auto *BB = static_cast<const char *>(B.data());
  return AB < BB + B.sizeInBytes() && BB < AB + A.sizeInBytes();
}

} // namespace

Status api::allReduce(std::span<const CollectiveMember> Members, ReduceOp Op) {
  if (Members.empty())
    return invalid("no member: give one stream and view per device");
  if (Op != ReduceOp::Sum && Op != ReduceOp::Max && Op != ReduceOp::Min)
    return invalid("unknown ReduceOp " + std::to_string(int(Op)));
  for (size_t I = 0; I < Members.size(); ++I) {
    if (Status S = checkMember(Members[I], I); !S.ok())
      return S;
    const CollectiveMember &M = Members[I];
    const DeviceState *Dev = StreamState::of(M.OnStream)->Device.get();
    for (size_t J = 0; J < I; ++J) {
      const CollectiveMember &Earlier = Members[J];
      if (StreamState::of(Earlier.OnStream)->Device.get() == Dev)
        return invalid(member(I) + "'s stream is of the device of " +
                       member(J) + "'s: a device takes part once");
      if (M.View.type() != Earlier.View.type())
        return invalid(member(I) + " holds " + M.View.type().str() + ", " +
                       member(J) + " " + Earlier.View.type().str() +
                       ": the members' element types must match");
      if (M.View.count() != Earlier.View.count())
        return invalid(member(I) + " has " + std::to_string(M.View.count()) +
                       " elements, " + member(J) + " " +
                       std::to_string(Earlier.View.count()) +
                       ": the members' counts must match");
      if (overlap(M.View, Earlier.View))
        return invalid(member(I) + "'s view overlaps " + member(J) +
                       "'s: each device needs its own memory");
    }
  }
  for (const CollectiveMember &M : Members)
    if (Status S = M.OnStream.status(); !S.ok())
      return S;
  if (Members.size() == 1)
    return Status();

  // Every other member's stream has reached the collective...
  Stream First = Members[0].OnStream;
  for (size_t I = 1; I < Members.size(); ++I) {
    Result<Event> Arrived = Stream(Members[I].OnStream).record();
    if (!Arrived.ok())
      return Arrived.status();
    if (Status S = First.wait(*Arrived); !S.ok())
      return S;
  }
  // ... the first reduces into every view...
  std::vector<std::shared_ptr<BufferState>> Keep;
  std::vector<uint64_t> Offsets;
  for (const CollectiveMember &M : Members) {
    Keep.push_back(BufferState::of(M.View.buffer()));
    Offsets.push_back(M.View.byteOffset());
  }
  kiln::Type Ty = irType(Members[0].View.type());
  uint64_t Count = Members[0].View.count();
  kiln::AllReduceOp IROp = Op == ReduceOp::Sum   ? kiln::AllReduceOp::Sum
                           : Op == ReduceOp::Max ? kiln::AllReduceOp::Max
                                                 : kiln::AllReduceOp::Min;
  StreamState &FS = *StreamState::of(First);
  StreamState::Item *Item = FS.takeItem();
  if (!Item)
    return Status(ErrorCode::OutOfMemory,
                  "allReduce: cannot allocate a queue entry");
  Item->Work = [Keep = std::move(Keep), Offsets = std::move(Offsets), Ty,
                Count, IROp] {
    std::vector<void *> Data;
    for (size_t I = 0; I < Keep.size(); ++I)
      Data.push_back(static_cast<char *>(Keep[I]->Data) + Offsets[I]);
    kiln::allReduceInPlace(Data, Count, Ty, IROp);
    return Status();
  };
  if (Status S = FS.submit(Item); !S.ok())
    return S;
  // ... and the others continue once it has.
  Result<Event> Reduced = First.record();
  if (!Reduced.ok())
    return Reduced.status();
  for (size_t I = 1; I < Members.size(); ++I)
    if (Status S = Stream(Members[I].OnStream).wait(*Reduced); !S.ok())
      return S;
  return Status();
}
