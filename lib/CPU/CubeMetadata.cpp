//===- CubeMetadata.cpp - Encoding of a compiled kernel's launch metadata -===//
//
// Layout (all integers little-endian):
//   "KCMD" u16 version(=2, 3, 4 or 5)
//   str KernelName, str Symbol        (str = u32 length + bytes)
//   u32 CubeDim[3], u32 PlaneDim,
//   versions 3 and 5 only: u32 ClusterDim[3], u8 Flags (bit 0: UsesDebugPrint),
//   u64 ScratchBytes
//   u32 NumParams, then per parameter:
//     str Name, u8 IsBuffer(0|1), u8 ScalarKind, u8 Lanes(0 = scalar), u8
//     Access, u8 Private (PrivateAtomic; 0 unless a scalar buffer),
//     versions 4 and 5 only: u8 TensorFlags (bit 0 IsTensorMap, bit 1
//     ReadsTensorInfo, bit 2 IsIm2col; buffers only, bit 2 only with bit
//     0), u8 TensorMapRank (0..MaxTensorMapRank; tensor maps only)
// Nothing may follow the last parameter. The version says which optional
// parts are present: 2 none, 3 the cluster block (docs/LangRef.md §14,
// §15), 4 the tensor bytes (§16, §17), 5 both. Each part is written only
// for a kernel that needs it (clusters other than 1x1x1 or debug printing;
// a tensor map or a read of tensor metadata), so that the encoding of every
// other kernel stays what it was and each metadata has exactly one
// encoding; a part present without need is refused as corrupt. Version 1
// (no Private byte) is refused, not read: a store entry written by it is
// recompiled.
//
//===----------------------------------------------------------------------===//

#include "kiln/CPU/CubeMetadata.h"

#include "kiln/IR/Tensor.h"

#include "llvm/Support/Endian.h"

#include <cstring>

using namespace kiln;
using namespace llvm;

namespace {
constexpr char Magic[4] = {'K', 'C', 'M', 'D'};
constexpr uint16_t Version = 2;
/// Version 2 plus ClusterDim and Flags.
constexpr uint16_t ClusterVersion = 3;
constexpr uint8_t FlagDebugPrint = 1;
/// Version 2 plus the tensor bytes of every parameter.
constexpr uint16_t TensorVersion = 4;
/// Version 2 plus both.
constexpr uint16_t ClusterTensorVersion = 5;
/// The smallest encoding of one parameter: empty name plus five bytes.
constexpr size_t MinParamBytes = 4 + 5;

/// Whether some parameter needs the tensor bytes of version 4.
bool usesTensors(ArrayRef<ParamMetadata> Params) {
  for (const ParamMetadata &P : Params)
    if (P.IsTensorMap || P.ReadsTensorInfo)
      return true;
  return false;
}

class Writer {
public:
  std::vector<uint8_t> Out;
  template <typename T> void put(T V) {
    uint8_t Buf[sizeof(T)];
    support::endian::write<T, llvm::endianness::little>(Buf, V);
    Out.insert(Out.end(), Buf, Buf + sizeof(T));
  }
  void putStr(const std::string &S) {
    put<uint32_t>(static_cast<uint32_t>(S.size()));
    Out.insert(Out.end(), S.begin(), S.end());
  }
};

class Reader {
public:
  explicit Reader(ArrayRef<uint8_t> Bytes) : Bytes(Bytes) {}
  template <typename T> Error get(T &V, const char *What) {
    if (Bytes.size() - Pos < sizeof(T))
      return truncated(What);
    V = support::endian::read<T, llvm::endianness::little>(Bytes.data() + Pos);
    Pos += sizeof(T);
    return Error::success();
  }
  Error getStr(std::string &S, const char *What) {
    uint32_t Len;
    if (Error E = get(Len, What))
      return E;
    if (Bytes.size() - Pos < Len)
      return truncated(What);
    S.assign(reinterpret_cast<const char *>(Bytes.data() + Pos), Len);
    Pos += Len;
    return Error::success();
  }
  size_t remaining() const { return Bytes.size() - Pos; }
  size_t offset() const { return Pos; }

private:
  Error truncated(const char *What) {
    return createStringError(inconvertibleErrorCode(),
                             "cube metadata truncated in %s at byte %zu", What,
                             Pos);
  }
  ArrayRef<uint8_t> Bytes;
  size_t Pos = 0;
};

Error corrupt(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(),
                           "corrupt cube metadata: " + Msg);
}
} // namespace

std::vector<uint8_t> CubeMetadata::serialize() const {
  Writer W;
  W.Out.insert(W.Out.end(), Magic, Magic + 4);
  bool Extended =
      UsesDebugPrint || ClusterDim != std::array<uint32_t, 3>{1, 1, 1};
  bool UsesTensors = usesTensors(Params);
  W.put<uint16_t>(Extended && UsesTensors ? ClusterTensorVersion
                  : Extended              ? ClusterVersion
                  : UsesTensors           ? TensorVersion
                                          : Version);
  W.putStr(KernelName);
  W.putStr(Symbol);
  for (uint32_t D : CubeDim)
    W.put<uint32_t>(D);
  W.put<uint32_t>(PlaneDim);
  if (Extended) {
    for (uint32_t D : ClusterDim)
      W.put<uint32_t>(D);
    W.put<uint8_t>(UsesDebugPrint ? FlagDebugPrint : 0);
  }
  W.put<uint64_t>(ScratchBytes);
  W.put<uint32_t>(static_cast<uint32_t>(Params.size()));
  for (const ParamMetadata &P : Params) {
    W.putStr(P.Name);
    W.put<uint8_t>(P.IsBuffer ? 1 : 0);
    W.put<uint8_t>(static_cast<uint8_t>(P.Ty.elementKind()));
    W.put<uint8_t>(P.Ty.isLine() ? static_cast<uint8_t>(P.Ty.lanes()) : 0);
    W.put<uint8_t>(static_cast<uint8_t>(P.Access));
    W.put<uint8_t>(static_cast<uint8_t>(P.Private));
    if (UsesTensors) {
      W.put<uint8_t>((P.IsTensorMap ? 1 : 0) | (P.ReadsTensorInfo ? 2 : 0) |
                     (P.IsIm2col ? 4 : 0));
      W.put<uint8_t>(P.TensorMapRank);
    }
  }
  return std::move(W.Out);
}

Expected<CubeMetadata> CubeMetadata::deserialize(ArrayRef<uint8_t> Bytes) {
  if (Bytes.size() < 4 || std::memcmp(Bytes.data(), Magic, 4) != 0)
    return corrupt("bad magic");
  Reader R(Bytes.drop_front(4));
  uint16_t V;
  if (Error E = R.get(V, "version"))
    return E;
  bool HasClusterBlock = V == ClusterVersion || V == ClusterTensorVersion;
  bool HasTensorBytes = V == TensorVersion || V == ClusterTensorVersion;
  if (V != Version && !HasClusterBlock && !HasTensorBytes)
    return corrupt("unsupported version " + Twine(V) + " (expected " +
                   Twine(Version) + " to " + Twine(ClusterTensorVersion) + ")");
  CubeMetadata M;
  if (Error E = R.getStr(M.KernelName, "kernel name"))
    return E;
  if (Error E = R.getStr(M.Symbol, "symbol"))
    return E;
  if (M.Symbol.empty())
    return corrupt("empty symbol");
  for (uint32_t &D : M.CubeDim) {
    if (Error E = R.get(D, "cube_dim"))
      return E;
    if (D == 0)
      return corrupt("cube_dim of zero");
  }
  if (Error E = R.get(M.PlaneDim, "plane_dim"))
    return E;
  if (M.PlaneDim == 0)
    return corrupt("plane_dim of zero");
  if (HasClusterBlock) {
    for (uint32_t &D : M.ClusterDim) {
      if (Error E = R.get(D, "cluster_dim"))
        return E;
      if (D == 0)
        return corrupt("cluster_dim of zero");
    }
    uint8_t Flags;
    if (Error E = R.get(Flags, "flags"))
      return E;
    if (Flags & ~FlagDebugPrint)
      return corrupt("unknown flags " + Twine(unsigned(Flags)));
    M.UsesDebugPrint = Flags & FlagDebugPrint;
    // Such metadata is written as version 2: one encoding per metadata.
    if (!M.UsesDebugPrint && M.ClusterDim == std::array<uint32_t, 3>{1, 1, 1})
      return corrupt("version " + Twine(V) +
                     " with neither clusters nor flags");
  }
  if (Error E = R.get(M.ScratchBytes, "scratch size"))
    return E;
  uint32_t NumParams;
  if (Error E = R.get(NumParams, "parameter count"))
    return E;
  // Bound the reservation by what the remaining bytes can hold.
  if (NumParams > R.remaining() / MinParamBytes)
    return corrupt("parameter count " + Twine(NumParams) + " exceeds the data");
  M.Params.reserve(NumParams);
  for (uint32_t I = 0; I < NumParams; ++I) {
    ParamMetadata P;
    uint8_t IsBuffer, Kind, Lanes, Access, Private;
    if (Error E = R.getStr(P.Name, "parameter name"))
      return E;
    if (Error E = R.get(IsBuffer, "parameter"))
      return E;
    if (Error E = R.get(Kind, "parameter"))
      return E;
    if (Error E = R.get(Lanes, "parameter"))
      return E;
    if (Error E = R.get(Access, "parameter"))
      return E;
    if (Error E = R.get(Private, "parameter"))
      return E;
    if (IsBuffer > 1)
      return corrupt("parameter " + Twine(I) + ": bad buffer flag");
    if (Kind > static_cast<uint8_t>(LastScalarKind))
      return corrupt("parameter " + Twine(I) + ": bad element kind " +
                     Twine(Kind));
    if (Lanes != 0 && !Type::isValidLineWidth(Lanes))
      return corrupt("parameter " + Twine(I) + ": bad line width " +
                     Twine(Lanes));
    if (Access > static_cast<uint8_t>(AccessKind::ReadWrite))
      return corrupt("parameter " + Twine(I) + ": bad access " + Twine(Access));
    if (Private > static_cast<uint8_t>(PrivateAtomic::Xor) ||
        (Private && (!IsBuffer || Lanes)))
      return corrupt("parameter " + Twine(I) + ": bad private atomic " +
                     Twine(Private));
    P.IsBuffer = IsBuffer;
    ScalarKind SK = static_cast<ScalarKind>(Kind);
    P.Ty = Lanes ? Type::line(SK, Lanes) : Type::scalar(SK);
    P.Access = static_cast<AccessKind>(Access);
    P.Private = static_cast<PrivateAtomic>(Private);
    if (HasTensorBytes) {
      uint8_t Flags, MapRank;
      if (Error E = R.get(Flags, "parameter"))
        return E;
      if (Error E = R.get(MapRank, "parameter"))
        return E;
      if (Flags > 7 || (Flags && !IsBuffer) || (Flags & 4 && !(Flags & 1)))
        return corrupt("parameter " + Twine(I) + ": bad tensor flags " +
                       Twine(unsigned(Flags)));
      P.IsTensorMap = Flags & 1;
      P.ReadsTensorInfo = Flags & 2;
      P.IsIm2col = Flags & 4;
      if (MapRank > MaxTensorMapRank || (MapRank && !P.IsTensorMap))
        return corrupt("parameter " + Twine(I) + ": bad tensor map rank " +
                       Twine(unsigned(MapRank)));
      P.TensorMapRank = MapRank;
    }
    M.Params.push_back(std::move(P));
  }
  if (R.remaining() != 0)
    return corrupt(Twine(R.remaining()) + " trailing bytes");
  // Such metadata is written as version 2: one encoding per metadata.
  if (HasTensorBytes && !usesTensors(M.Params))
    return corrupt("version " + Twine(V) + " without a tensor parameter");
  return M;
}
