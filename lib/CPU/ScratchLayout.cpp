//===- ScratchLayout.cpp - The per-worker scratch arena -------------------===//
//
// See ScratchLayout.h and docs/Lowering.md §5.
//
//===----------------------------------------------------------------------===//

#include "ScratchLayout.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace kiln;
using namespace kiln::lowering;

llvm::Expected<ScratchLayout>
kiln::lowering::layoutScratch(const IRKernel &K, uint32_t Units,
                              uint32_t PlaneDim, bool ReturnFlags,
                              const Liveness &Live) {
  // The arena is addressed with 64-bit offsets, but anything beyond 4 GiB per
  // worker is a kernel the host cannot run.
  constexpr uint64_t MaxScratch = uint64_t(1) << 32;
  ScratchLayout L;
  L.Of.assign(K.Values.size(), Placement());
  uint64_t Size = 0;
  bool Overflow = false;
  auto Reserve = [&](uint64_t Bytes) -> uint64_t {
    uint64_t Start = llvm::alignTo(Size, 64);
    if (Bytes > MaxScratch || Start + Bytes > MaxScratch)
      Overflow = true;
    Size = Start + std::min(Bytes, MaxScratch);
    return Start;
  };
  auto PerUnit = [&](uint64_t Bytes) -> uint64_t {
    if (Bytes != 0 && Units > MaxScratch / Bytes) {
      Overflow = true;
      return MaxScratch;
    }
    return Bytes * Units;
  };
  auto ArrayBytes = [&](const ValueInfo &VI) -> uint64_t {
    uint64_t Elem = VI.Ty.storeSize();
    return VI.Count > MaxScratch / std::max<uint64_t>(Elem, 1)
               ? MaxScratch
               : VI.Count * Elem;
  };

  L.HasFlags = ReturnFlags;
  if (L.HasFlags)
    L.FlagsOffset = Reserve(Units);
  for (ValueId Id = 0; Id < K.Values.size(); ++Id) {
    const ValueInfo &VI = K.value(Id);
    Placement &P = L.Of[Id];
    switch (VI.Kind) {
    case ValueKind::Buffer:
      break;
    case ValueKind::Shared:
      P = {StorageKind::ScratchCube, Reserve(ArrayBytes(VI))};
      break;
    case ValueKind::Local:
      P = {StorageKind::ScratchUnit, Reserve(PerUnit(ArrayBytes(VI)))};
      break;
    case ValueKind::Var:
      if (Live[Id].MultiSegment)
        P = {StorageKind::ScratchUnit, Reserve(PerUnit(VI.Ty.storeSize()))};
      break;
    case ValueKind::Fragment: {
      // Plane fragments hold at most 32 x 32 elements, cube fragments 128 x
      // 128 (the verifier's shapes); a cube fragment has one copy per cube.
      uint64_t Planes =
          VI.Matrix.isCube()
              ? 1
              : (uint64_t(Units) + PlaneDim - 1) / std::max(PlaneDim, 1u);
      uint64_t Elements = std::min<uint64_t>(VI.Matrix.elements(), 1 << 20);
      P = {StorageKind::ScratchCube, Reserve(Planes * Elements * 4)};
      break;
    }
    case ValueKind::Plain:
      if (Live[Id].NeedsSlot)
        P.Offset = Reserve(PerUnit(VI.Ty.storeSize()));
      break;
    }
  }
  if (Overflow)
    return llvm::createStringError("kernel '" + K.Name +
                                   "' needs a scratch area larger than 4 GiB");
  L.Bytes = llvm::alignTo(Size, 64);
  return L;
}
