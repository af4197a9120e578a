//===- Launch.cpp - Validating and running launches on TBB ----------------===//

#include "kiln/Runtime/Launch.h"

#include "kiln/CPU/CubeABI.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

using namespace kiln;
using llvm::Error;
using llvm::Twine;

//===-- ArgBinding --------------------------------------------------------===//

ArgBinding ArgBinding::buffer(HostBuffer &B, AccessKind Access) {
  return buffer(B.data(), B.elementType(), B.count(), Access);
}

ArgBinding ArgBinding::buffer(void *Data, Type ElementType, uint64_t Count,
                              AccessKind Access) {
  ArgBinding A;
  A.IsBuffer = true;
  A.Ty = ElementType;
  A.Access = Access;
  A.Data = Data;
  A.Count = Count;
  return A;
}

/// Keeps the first MaxTensorRank of \p Values in \p To; returns the count.
template <typename T>
static uint32_t keep(llvm::ArrayRef<T> Values,
                     std::array<T, MaxTensorRank> &To) {
  To.fill(0);
  for (size_t I = 0; I < Values.size() && I < MaxTensorRank; ++I)
    To[I] = Values[I];
  return static_cast<uint32_t>(
      std::min<size_t>(Values.size(), std::numeric_limits<uint32_t>::max()));
}

const TensorLayout &ArgBinding::tensor() const {
  static const TensorLayout Default;
  return Tensor ? *Tensor : Default;
}

TensorLayout &ArgBinding::editTensor() {
  auto L = Tensor ? std::make_shared<TensorLayout>(*Tensor)
                  : std::make_shared<TensorLayout>();
  TensorLayout &Out = *L;
  Tensor = std::move(L);
  return Out;
}

ArgBinding ArgBinding::withShape(llvm::ArrayRef<uint64_t> Shape,
                                 llvm::ArrayRef<uint64_t> Strides) const {
  ArgBinding A = *this;
  TensorLayout &L = A.editTensor();
  L.HasShape = true;
  L.Rank = keep(Shape, L.Shape);
  if (!Strides.empty() || Shape.empty()) {
    L.StrideCount = keep(Strides, L.Strides);
    return A;
  }
  // Contiguous row-major; a product past u64 saturates and is refused at
  // launch like any stride past u32.
  L.StrideCount = L.Rank;
  uint64_t Stride = 1;
  for (size_t I = std::min<size_t>(Shape.size(), MaxTensorRank); I-- > 0;) {
    L.Strides[I] = Stride;
    Stride = llvm::SaturatingMultiply(Stride, Shape[I]);
  }
  return A;
}

ArgBinding ArgBinding::withBox(llvm::ArrayRef<uint64_t> Box) const {
  ArgBinding A = *this;
  TensorLayout &L = A.editTensor();
  L.HasBox = true;
  L.BoxRank = keep(Box, L.Box);
  return A;
}

ArgBinding ArgBinding::withIm2col(llvm::ArrayRef<int64_t> Lower,
                                  llvm::ArrayRef<int64_t> Upper,
                                  uint64_t ChannelsPerPixel,
                                  uint64_t PixelsPerColumn) const {
  ArgBinding A = *this;
  TensorLayout &L = A.editTensor();
  L.HasIm2col = true;
  L.LowerRank = keep(Lower, L.Lower);
  L.UpperRank = keep(Upper, L.Upper);
  L.ChannelsPerPixel = ChannelsPerPixel;
  L.PixelsPerColumn = PixelsPerColumn;
  return A;
}

ArgBinding ArgBinding::value(Type Ty, const void *Bytes, size_t Size) {
  ArgBinding A;
  A.Ty = Ty;
  A.Size = Size;
  size_t Kept = std::min(Size, MaxValueBytes);
  if (Kept <= InlineValueBytes) {
    std::memcpy(A.Bytes.data(), Bytes, Kept);
    return A;
  }
  auto Big = std::make_shared<uint8_t[]>(Kept);
  std::memcpy(Big.get(), Bytes, Kept);
  A.BigValue = std::move(Big);
  return A;
}

ArgBinding ArgBinding::f32(float V) {
  return value(Type::scalar(ScalarKind::F32), &V, sizeof(V));
}
ArgBinding ArgBinding::f64(double V) {
  return value(Type::scalar(ScalarKind::F64), &V, sizeof(V));
}
ArgBinding ArgBinding::i32(int32_t V) {
  return value(Type::scalar(ScalarKind::I32), &V, sizeof(V));
}
ArgBinding ArgBinding::u32(uint32_t V) {
  return value(Type::scalar(ScalarKind::U32), &V, sizeof(V));
}
ArgBinding ArgBinding::i64(int64_t V) {
  return value(Type::scalar(ScalarKind::I64), &V, sizeof(V));
}
ArgBinding ArgBinding::u64(uint64_t V) {
  return value(Type::scalar(ScalarKind::U64), &V, sizeof(V));
}
ArgBinding ArgBinding::boolean(bool V) {
  uint8_t B = V ? 1 : 0;
  return value(Type::scalar(ScalarKind::Bool), &B, 1);
}

//===-- Validation --------------------------------------------------------===//

static Error launchError(const CubeMetadata &M, const Twine &Msg,
                         std::error_code EC = llvm::inconvertibleErrorCode()) {
  return llvm::createStringError(EC, "launch of kernel '" + M.KernelName +
                                         "': " + Msg);
}

char KernelFaultError::ID = 0;

/// The error of a launch whose code recorded \p F (CubeABI.h).
static Error faultError(const CubeMetadata &M, const KernelFault &F) {
  std::string Site = F.Site ? F.Site : "a barrier operation";
  std::string Why;
  switch (F.Code) {
  case BarrierWaitNeverCompletes:
    Why = Site + " can never complete: every unit of the cube that could "
                 "arrive has reached it, and the phase still expects " +
          std::to_string(F.Pending) + " arrival(s) and " +
          std::to_string(F.PendingTx) +
          " transaction byte(s) (on a GPU the units would hang here)";
    break;
  case BarrierTooManyArrivals:
    Why = Site + " arrives more often than the barrier's phase expects (" +
          std::to_string(F.Pending) +
          " arrival(s) were pending); the phase completed with the arrivals "
          "it expected";
    break;
  case BarrierZeroArrivalCount:
    Why = Site + " has an arrival count of 0; the barrier expects 1 arrival "
                 "per phase instead";
    break;
  default:
    Why = Site + " faulted with code " + std::to_string(F.Code);
    break;
  }
  return llvm::make_error<KernelFaultError>(
      "launch of kernel '" + M.KernelName + "': kernel fault: " + Why +
      "; every cube ran to its end and the launch's results are unspecified "
      "(docs/LangRef.md §13.5)");
}

static std::string describe(const ParamMetadata &P) {
  if (P.IsBuffer)
    return "a " + accessName(P.Access).str() + " buffer of " + P.Ty.str();
  return "a value of type " + P.Ty.str();
}

static std::string describe(const ArgBinding &A) {
  if (A.isBuffer())
    return "a buffer of " + A.type().str();
  return "a value of type " + A.type().str();
}

/// What is wrong with the im2col binding \p L (docs/LangRef.md §17.7), its
/// shape already checked; or an empty string.
static std::string checkIm2col(const TensorLayout &L) {
  if (L.Rank < MinIm2colRank)
    return "an im2col tensor map binding has rank " +
           std::to_string(MinIm2colRank) + " to " +
           std::to_string(MaxTensorMapRank) + ", got " + std::to_string(L.Rank);
  unsigned Spatial = L.Rank - 2;
  // The pixel box holds the positions [lower, shape - 1 + upper] of each
  // spatial dimension; one image's box must hold a position and fit u32.
  uint64_t PerImage = 1;
  for (int Which = 0; Which < 2; ++Which) {
    const char *Name =
        Which ? "pixel_box_upper_corner" : "pixel_box_lower_corner";
    uint32_t Count = Which ? L.UpperRank : L.LowerRank;
    const std::array<int64_t, MaxTensorRank> &Corner =
        Which ? L.Upper : L.Lower;
    if (Count != Spatial)
      return std::string(Name) + " has " + std::to_string(Count) +
             " entry(ies), the tensor " + std::to_string(Spatial) +
             " spatial dimension(s) (rank - 2)";
    for (unsigned S = 0; S < Spatial; ++S)
      if (Corner[S] < MinIm2colCorner || Corner[S] > MaxIm2colCorner)
        return std::string(Name) + "[" + std::to_string(S) +
               "] = " + std::to_string(Corner[S]) + ": a corner is " +
               std::to_string(MinIm2colCorner) + " to " +
               std::to_string(MaxIm2colCorner);
  }
  for (unsigned S = 0; S < Spatial; ++S) {
    int64_t Extent = int64_t(L.Shape[1 + S]) + L.Upper[S] - L.Lower[S];
    if (Extent < 1)
      return "the pixel box of spatial dimension " + std::to_string(S) +
             " is empty: shape " + std::to_string(L.Shape[1 + S]) +
             " + upper corner " + std::to_string(L.Upper[S]) +
             " - lower corner " + std::to_string(L.Lower[S]) + " = " +
             std::to_string(Extent);
    // Both factors below 2^32: the product cannot wrap.
    if (uint64_t(Extent) > UINT32_MAX ||
        (PerImage *= uint64_t(Extent)) > UINT32_MAX)
      return "the pixel box holds more than 2^32 - 1 pixels per image";
  }
  if (L.ChannelsPerPixel == 0 || L.ChannelsPerPixel > MaxIm2colChannels)
    return "channels_per_pixel = " + std::to_string(L.ChannelsPerPixel) +
           ": it is 1 to " + std::to_string(MaxIm2colChannels);
  if (L.PixelsPerColumn == 0 || L.PixelsPerColumn > MaxIm2colPixels)
    return "pixels_per_column = " + std::to_string(L.PixelsPerColumn) +
           ": it is 1 to " + std::to_string(MaxIm2colPixels);
  // A column is at most 1024 * 256 * 128 = 2^25 bytes: always within a
  // barrier's transaction count.
  return "";
}

/// What is wrong with the tensor part of binding \p A of parameter \p P
/// (docs/LangRef.md §16, §17), or an empty string.
static std::string checkTensor(const ParamMetadata &P, const ArgBinding &A) {
  const TensorLayout &L = A.tensor();
  if (!P.IsBuffer)
    return L.HasShape || L.HasBox || L.HasIm2col
               ? "a value takes no shape, strides or box"
               : "";
  if (L.HasBox && !P.IsTensorMap)
    return "a tensor map (a binding with a box) is bound to a buffer "
           "parameter; bind the buffer without a box";
  if (L.HasIm2col && !P.IsTensorMap)
    return "an im2col tensor map binding is bound to a buffer parameter; "
           "bind the buffer without im2col parameters";
  if (P.IsIm2col && L.HasBox)
    return "an im2col tensor map takes no box; bind it with a shape, strides "
           "and im2col parameters";
  if (P.IsTensorMap && !P.IsIm2col && L.HasIm2col)
    return "a tiled tensor map takes no im2col parameters; bind it with a "
           "shape, strides and a box (or declare the parameter 'im2col')";
  if (P.IsIm2col && (!L.HasShape || !L.HasIm2col))
    return "an im2col tensor_map parameter needs an im2col binding: a shape, "
           "strides, the pixel box corners, channels per pixel and pixels "
           "per column";
  if (P.IsTensorMap && !P.IsIm2col && (!L.HasShape || !L.HasBox))
    return "a tensor_map parameter needs a tensor map binding: a shape, "
           "strides and a box";
  if (!L.HasShape) {
    if (P.ReadsTensorInfo && A.bufferCount() > UINT32_MAX)
      return "the buffer has " + std::to_string(A.bufferCount()) +
             " elements: its default shape does not fit u32, which the "
             "kernel's tensor metadata is";
    return "";
  }
  unsigned MaxRank = P.IsTensorMap ? MaxTensorMapRank : MaxTensorRank;
  if (L.Rank == 0 || L.Rank > MaxRank)
    return std::string(P.IsTensorMap ? "a tensor map" : "a tensor") +
           " binding has rank 1 to " + std::to_string(MaxRank) + ", got " +
           std::to_string(L.Rank);
  if (L.StrideCount != L.Rank)
    return "the shape has " + std::to_string(L.Rank) +
           " dimension(s) but the strides " + std::to_string(L.StrideCount) +
           "; give one stride per dimension";
  uint64_t Len = 1;
  for (unsigned D = 0; D < L.Rank; ++D) {
    if (L.Shape[D] > UINT32_MAX)
      return "shape[" + std::to_string(D) + "] = " +
             std::to_string(L.Shape[D]) + " does not fit u32";
    if (L.Strides[D] > UINT32_MAX)
      return "strides[" + std::to_string(D) + "] = " +
             std::to_string(L.Strides[D]) + " does not fit u32";
    Len *= L.Shape[D]; // below 2^64: the product stays checked below 2^32
    if (Len > UINT32_MAX)
      return "the shape's product (the tensor_len) exceeds u32 at "
             "dimension " + std::to_string(D);
  }
  if (!P.IsTensorMap)
    return "";
  if (P.TensorMapRank && L.Rank != P.TensorMapRank)
    return "the kernel's tensor map copies use rank " +
           std::to_string(P.TensorMapRank) + ", the binding has rank " +
           std::to_string(L.Rank);
  if (P.IsIm2col)
    return checkIm2col(L);
  if (L.BoxRank != L.Rank)
    return "the box has " + std::to_string(L.BoxRank) +
           " dimension(s), the tensor " + std::to_string(L.Rank);
  uint64_t BoxBytes = P.Ty.storeSize();
  for (unsigned D = 0; D < L.Rank; ++D) {
    if (L.Box[D] == 0 || L.Box[D] > MaxTensorMapBoxDim)
      return "box[" + std::to_string(D) + "] = " + std::to_string(L.Box[D]) +
             ": a box dimension is 1 to " +
             std::to_string(MaxTensorMapBoxDim);
    BoxBytes *= L.Box[D]; // at most 128 * 256^5 = 2^47
  }
  // A load completes its box's bytes on a barrier, whose transaction
  // count is a signed 32-bit number (docs/LangRef.md §13.3).
  if (BoxBytes > INT32_MAX)
    return "the box holds " + std::to_string(BoxBytes) +
           " bytes, more than a barrier's transaction count (2^31 - 1)";
  return "";
}

/// The TensorInfo (CubeABI.h) of a binding checkTensor accepted.
static void fillTensorInfo(const ArgBinding &A, TensorInfo &T) {
  const TensorLayout &L = A.tensor();
  T = TensorInfo{};
  std::fill(std::begin(T.Shape), std::end(T.Shape), 1u);
  if (!A.isBuffer())
    return;
  if (!L.HasShape) {
    T.Rank = 1;
    T.Shape[0] = static_cast<uint32_t>(A.bufferCount());
    T.Strides[0] = 1;
    T.Len = T.Shape[0];
    return;
  }
  T.Rank = L.Rank;
  T.Len = 1;
  for (unsigned D = 0; D < L.Rank; ++D) {
    T.Shape[D] = static_cast<uint32_t>(L.Shape[D]);
    T.Strides[D] = static_cast<uint32_t>(L.Strides[D]);
    T.Len *= T.Shape[D];
  }
  if (L.HasBox)
    for (unsigned D = 0; D < L.BoxRank && D < MaxTensorRank; ++D)
      T.Box[D] = static_cast<uint32_t>(L.Box[D]);
  if (L.HasIm2col) {
    T.Box[Im2colPixelsSlot] = static_cast<uint32_t>(L.PixelsPerColumn);
    T.Box[Im2colChannelsSlot] = static_cast<uint32_t>(L.ChannelsPerPixel);
    for (unsigned S = 0; S + 2 < L.Rank; ++S) {
      T.Box[Im2colLowerSlot + S] = static_cast<uint32_t>(L.Lower[S]);
      T.Box[Im2colUpperSlot + S] = static_cast<uint32_t>(L.Upper[S]);
    }
  }
}

Error kiln::validateLaunch(const CubeMetadata &M,
                           std::array<uint32_t, 3> CubeCount,
                           llvm::ArrayRef<ArgBinding> Args,
                           uint32_t RequiredAlignment) {
  // A zero in any dimension is a launch of no cubes: valid (it runs
  // nothing, as vkCmdDispatch does); its arguments are still checked.
  uint64_t Total = uint64_t(CubeCount[0]) * CubeCount[1];
  if (Total > UINT32_MAX || Total * CubeCount[2] > UINT32_MAX)
    return launchError(M, "cube count (" + Twine(CubeCount[0]) + ", " +
                              Twine(CubeCount[1]) + ", " + Twine(CubeCount[2]) +
                              ") has more than 2^32-1 cubes");
  // Positions are u32 (absolute_pos and its components): a launch whose
  // units would number past them would give several units one position.
  uint64_t Units = Total * CubeCount[2];
  for (unsigned D = 0; D < 3; ++D) {
    uint64_t Along = uint64_t(CubeCount[D]) * M.CubeDim[D];
    if (Along > (uint64_t(1) << 32))
      return launchError(M, "cube count " + Twine(CubeCount[D]) + " x cube_dim " +
                                Twine(M.CubeDim[D]) + " in " +
                                Twine(char('x' + D)) +
                                " makes absolute positions past u32");
  }
  for (unsigned D = 0; D < 3; ++D) {
    Units *= M.CubeDim[D];
    if (Units > (uint64_t(1) << 32))
      return launchError(M, "cube count (" + Twine(CubeCount[0]) + ", " +
                                Twine(CubeCount[1]) + ", " +
                                Twine(CubeCount[2]) + ") of cubes of " +
                                Twine(M.CubeDim[0] * M.CubeDim[1] *
                                      M.CubeDim[2]) +
                                " units makes more than 2^32 units: their "
                                "absolute_pos would not fit u32");
  }
  // Clusters tile the grid, as on a GPU (docs/LangRef.md §15); a launch
  // of no cubes has no clusters to tile and stays a no-op.
  bool NoCubes = Units == 0;
  for (unsigned D = 0; D < 3 && !NoCubes; ++D)
    if (M.ClusterDim[D] > 1 && CubeCount[D] % M.ClusterDim[D] != 0)
      return launchError(
          M, "cube count (" + Twine(CubeCount[0]) + ", " +
                 Twine(CubeCount[1]) + ", " + Twine(CubeCount[2]) +
                 ") is not a multiple of the kernel's cluster_dim(" +
                 Twine(M.ClusterDim[0]) + ", " + Twine(M.ClusterDim[1]) +
                 ", " + Twine(M.ClusterDim[2]) + ") in " +
                 Twine(char('x' + D)) + ": " + Twine(CubeCount[D]) +
                 " cubes do not make whole clusters of " +
                 Twine(M.ClusterDim[D]));
  if (Args.size() != M.Params.size())
    return launchError(
        M, Twine(Args.size()) + " argument" + (Args.size() == 1 ? "" : "s") +
               " given, the kernel has " + Twine(M.Params.size()) +
               " parameter" + (M.Params.size() == 1 ? "" : "s"));
  for (size_t I = 0; I < Args.size(); ++I) {
    const ParamMetadata &P = M.Params[I];
    const ArgBinding &A = Args[I];
    auto Bad = [&](const Twine &Why) {
      return launchError(M,
                         "argument " + Twine(I) + " (%" + P.Name + "): " + Why);
    };
    if (P.IsBuffer != A.isBuffer() || P.Ty != A.type())
      return Bad("expected " + describe(P) + ", got " + describe(A));
    if (P.IsBuffer) {
      if (A.access() == AccessKind::Read && P.Access != AccessKind::Read)
        return Bad("a read-only buffer is bound to a parameter the kernel "
                   "may write (" +
                   accessName(P.Access) + ")");
      if (A.access() == AccessKind::Write && P.Access != AccessKind::Write)
        return Bad("a write-only buffer is bound to a parameter the kernel "
                   "may read (" +
                   accessName(P.Access) + ")");
      if (!A.bufferData())
        return Bad("the buffer's address is null");
      if (RequiredAlignment > 1 &&
          reinterpret_cast<uintptr_t>(A.bufferData()) % RequiredAlignment)
        return Bad("the buffer is not aligned to " + Twine(RequiredAlignment) +
                   " bytes, as the kernel's variant assumes");
    } else if (A.valueSize() != P.Ty.storeSize()) {
      return Bad("a value of type " + P.Ty.str() + " has " +
                 Twine(P.Ty.storeSize()) + " bytes, " + Twine(A.valueSize()) +
                 " given");
    }
    if (std::string Why = checkTensor(P, A); !Why.empty())
      return Bad(Why);
  }
  return Error::success();
}

//===-- Privatised atomics ------------------------------------------------===//
//
// A buffer whose ParamMetadata::Private is set gets, on each worker that runs
// cubes of the launch, a private copy filled with the merge's identity; the
// cube function does its atomics there (CubeABI.h); after the cubes, the
// launching thread merges every copy into the buffer with atomics (other
// launches may use the buffer at the same time) and frees it. A copy is
// allocated per launch, not kept in the worker's scratch area: a worker may
// run ranges of another stream's launch before this one merges.

namespace {
/// The largest buffer privatised, and the most bytes of copies per worker.
constexpr uint64_t MaxPrivateCopyBytes = 64 * 1024;
constexpr uint64_t MaxPrivateBytesPerWorker = 256 * 1024;

struct PrivateBuffer {
  PrivateAtomic Op;
  ScalarKind Kind;
  void *Data;
  uint64_t Count;
  uint64_t Offset; ///< in the worker's block of copies
  unsigned Bit;    ///< in LaunchArgs::Reserved and the scratch table
};

template <class T> T identityOf(PrivateAtomic Op) {
  switch (Op) {
  case PrivateAtomic::Min:
    return std::numeric_limits<T>::max();
  case PrivateAtomic::Max:
    return std::numeric_limits<T>::lowest();
  case PrivateAtomic::And:
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(~T(0));
    return T(0);
  case PrivateAtomic::Add:
    // -0.0 is the identity of float addition (x + -0.0 == x, -0.0 too).
    if constexpr (std::is_floating_point_v<T>)
      return -T(0);
    return T(0);
  default:
    return T(0);
  }
}

template <class T> void fillIdentity(void *Copy, uint64_t Count,
                                     PrivateAtomic Op) {
  std::fill_n(static_cast<T *>(Copy), Count, identityOf<T>(Op));
}

template <class T>
void mergeCopy(void *Dst, const void *Src, uint64_t Count, PrivateAtomic Op) {
  T *D = static_cast<T *>(Dst);
  const T *S = static_cast<const T *>(Src);
  T Id = identityOf<T>(Op);
  for (uint64_t I = 0; I < Count; ++I) {
    T V = S[I];
    if (std::memcmp(&V, &Id, sizeof(T)) == 0)
      continue; // nothing reached this element from this worker
    std::atomic_ref<T> R(D[I]);
    switch (Op) {
    case PrivateAtomic::Add:
      R.fetch_add(V);
      break;
    case PrivateAtomic::Min:
    case PrivateAtomic::Max: {
      T Cur = R.load(std::memory_order_relaxed);
      auto Better = [&](T Old) {
        return Op == PrivateAtomic::Min ? V < Old : V > Old;
      };
      while (Better(Cur) && !R.compare_exchange_weak(Cur, V)) {
      }
      break;
    }
    case PrivateAtomic::And:
    case PrivateAtomic::Or:
    case PrivateAtomic::Xor:
      if constexpr (std::is_integral_v<T>) {
        if (Op == PrivateAtomic::And)
          R.fetch_and(V);
        else if (Op == PrivateAtomic::Or)
          R.fetch_or(V);
        else
          R.fetch_xor(V);
      }
      break;
    case PrivateAtomic::None:
      break;
    }
  }
}

/// Calls F.template operator()<T>() with T the C++ type of \p K.
template <class F> void withElementType(ScalarKind K, F &&Fn) {
  switch (K) {
  case ScalarKind::I32:
    Fn(int32_t());
    break;
  case ScalarKind::U32:
    Fn(uint32_t());
    break;
  case ScalarKind::I64:
    Fn(int64_t());
    break;
  case ScalarKind::U64:
    Fn(uint64_t());
    break;
  case ScalarKind::F32:
    Fn(float());
    break;
  default:
    break; // never privatisable (AtomicPrivatization.h)
  }
}

/// What one launch privatises.
struct PrivatePlan {
  llvm::SmallVector<PrivateBuffer, 4> Buffers;
  uint32_t Mask = 0;           ///< LaunchArgs::Reserved
  uint64_t BlockBytes = 0;     ///< one worker's copies, each 64-aligned
  uint64_t TableOffset = 0;    ///< of the address table in scratch
  uint64_t ScratchBytes = 0;   ///< the scratch area the calls need

  explicit operator bool() const { return !Buffers.empty(); }

  /// A worker's copies, filled with the identities; null if memory is out.
  void *allocate() const {
    void *Block = std::aligned_alloc(64, BlockBytes);
    if (!Block)
      return nullptr;
    for (const PrivateBuffer &PB : Buffers)
      withElementType(PB.Kind, [&](auto T) {
        fillIdentity<decltype(T)>(static_cast<char *>(Block) + PB.Offset,
                                  PB.Count, PB.Op);
      });
    return Block;
  }
  /// Points the cube function at \p Block (CubeABI.h).
  void publish(void *Scratch, void *Block) const {
    for (const PrivateBuffer &PB : Buffers) {
      void *Copy = static_cast<char *>(Block) + PB.Offset;
      std::memcpy(static_cast<char *>(Scratch) + TableOffset + 8 * PB.Bit,
                  &Copy, sizeof(Copy));
    }
  }
  /// Merges \p Block into the buffers and frees it.
  void mergeAndFree(void *Block) const {
    for (const PrivateBuffer &PB : Buffers)
      withElementType(PB.Kind, [&](auto T) {
        mergeCopy<decltype(T)>(PB.Data,
                               static_cast<char *>(Block) + PB.Offset,
                               PB.Count, PB.Op);
      });
    std::free(Block);
  }
};

/// The launch's plan: every privatisable buffer small enough to copy per
/// worker, and no larger than the launch's unit count (merging a copy
/// costs about one unit's work per element).
PrivatePlan planPrivatization(const CubeMetadata &M,
                              llvm::ArrayRef<KernelArg> KArgs,
                              uint32_t TotalCubes) {
  PrivatePlan Plan;
  uint64_t Units = uint64_t(TotalCubes) * M.CubeDim[0] * M.CubeDim[1] *
                   M.CubeDim[2];
  unsigned Bit = 0;
  for (size_t I = 0; I < M.Params.size(); ++I) {
    const ParamMetadata &P = M.Params[I];
    if (P.Private == PrivateAtomic::None)
      continue;
    unsigned K = Bit++;
    if (K >= 32 || !P.IsBuffer || P.Ty.isLine())
      continue;
    uint64_t Count = KArgs[I].Count;
    uint64_t Bytes = Count * P.Ty.storeSize();
    uint64_t Padded = (Bytes + 63) & ~uint64_t(63);
    if (Count == 0 || Bytes > MaxPrivateCopyBytes || Count > Units ||
        Plan.BlockBytes + Padded > MaxPrivateBytesPerWorker)
      continue;
    Plan.Buffers.push_back({P.Private, P.Ty.elementKind(), KArgs[I].Data,
                            Count, Plan.BlockBytes, K});
    Plan.BlockBytes += Padded;
    Plan.Mask |= 1u << K;
  }
  Plan.TableOffset = privateCopyTableOffset(M.ScratchBytes);
  Plan.ScratchBytes = Plan ? Plan.TableOffset + 8 * uint64_t(Bit)
                           : M.ScratchBytes;
  return Plan;
}
} // namespace

//===-- Executor ----------------------------------------------------------===//

namespace {
/// One worker's arena: grown on demand, kept for later launches.
struct Scratch {
  void *Data = nullptr;
  size_t Size = 0;
  Scratch() = default;
  Scratch(const Scratch &) : Scratch() {} // copies start empty
  ~Scratch() { std::free(Data); }
};
} // namespace

namespace {
/// The home block a helper from outside the arena asks for.
constexpr unsigned NotInArena = ~0u;

/// The cubes of one parallel launch, handed out in ranges of Grain to each
/// thread that takes part: the launching thread, the arena's workers (one
/// task each), and host threads that wait for a stream or an event
/// (Executor::helpWithCubes). Unlike a TBB range, a thread outside the
/// arena can take part, so a host thread that waits is one more core at
/// work, as the master thread of an OpenMP loop is; without it, a launch
/// queued on a stream runs on the arena's workers alone, one core short of
/// the device (the whole device on 2 cores: TBB runs one worker there).
///
/// The cubes are cut into one contiguous block per thread, as OpenMP's
/// static schedule cuts a loop: a thread starts on its home block (by its
/// arena slot, so the same thread gets the same cubes launch after launch,
/// and finds their data in its own cache), takes its ranges from the
/// front, and when its block is empty takes ranges from the back of the
/// others' (uneven cubes stay balanced).
struct CubeDispenser {
  /// What one thread runs: its ranges, from take() until it gives false.
  using Participation = llvm::function_ref<void(
      CubeDispenser &, unsigned Home, llvm::function_ref<bool()> Enough)>;
  static constexpr unsigned MaxBlocks = 64;

  uint32_t Grain = 1;
  unsigned MaxParticipants = 1;
  unsigned Blocks = 1;
  Participation Participate;
  /// Per block, its cubes not handed out yet: [low 32 bits, high 32 bits).
  std::array<std::atomic<uint64_t>, MaxBlocks> Cursors;
  std::atomic<unsigned> Participants{0};

  CubeDispenser(uint32_t Total, uint32_t Grain, unsigned Threads,
                Participation Participate)
      : Grain(Grain), MaxParticipants(Threads),
        Blocks(std::clamp(Threads, 1u, MaxBlocks)), Participate(Participate) {
    for (unsigned B = 0; B < Blocks; ++B) {
      uint64_t Lo = uint64_t(Total) * B / Blocks;
      uint64_t Hi = uint64_t(Total) * (B + 1) / Blocks;
      Cursors[B].store(Lo | (Hi << 32), std::memory_order_relaxed);
    }
  }

  /// Counts the calling thread in, unless MaxParticipants already are.
  bool join() {
    unsigned N = Participants.load(std::memory_order_relaxed);
    do {
      if (N >= MaxParticipants)
        return false;
    } while (!Participants.compare_exchange_weak(N, N + 1,
                                                 std::memory_order_acq_rel));
    return true;
  }
  void leave() { Participants.fetch_sub(1, std::memory_order_acq_rel); }
  bool exhausted() const {
    for (unsigned B = 0; B < Blocks; ++B) {
      uint64_t V = Cursors[B].load(std::memory_order_relaxed);
      if (uint32_t(V) < uint32_t(V >> 32))
        return false;
    }
    return true;
  }
  /// The next range [Begin, End) for the thread of home block \p Home, or
  /// false when every cube is handed out.
  bool take(unsigned Home, uint32_t &Begin, uint32_t &End) {
    for (unsigned K = 0; K < Blocks; ++K) {
      std::atomic<uint64_t> &Cursor = Cursors[(Home + K) % Blocks];
      uint64_t V = Cursor.load(std::memory_order_relaxed);
      for (;;) {
        uint32_t Lo = uint32_t(V), Hi = uint32_t(V >> 32);
        if (Lo >= Hi)
          break;
        uint32_t Size = std::min(Grain, Hi - Lo);
        // Its own block from the front, the others' from the back.
        uint32_t NewLo = K == 0 ? Lo + Size : Lo;
        uint32_t NewHi = K == 0 ? Hi : Hi - Size;
        if (Cursor.compare_exchange_weak(V, NewLo | (uint64_t(NewHi) << 32),
                                         std::memory_order_relaxed)) {
          Begin = K == 0 ? Lo : NewHi;
          End = K == 0 ? NewLo : Hi;
          return true;
        }
      }
    }
    return false;
  }
};
} // namespace

/// What the keep-warm tasks share with their executor.
struct KeepWarmControl {
  std::atomic<uint64_t> Activity{0}; ///< bumped by every launch and task
  std::atomic<int> Spinning{0};      ///< keep-warm tasks queued or running
  std::atomic<bool> Stop{false};
  std::chrono::microseconds Window;
};

struct Executor::Impl {
  tbb::task_arena Arena;
  /// The keep-warm tasks queued in Arena: the destructor waits for them, so
  /// that none outlives the executor. A task still queued when the process
  /// exits would never run nor be destroyed, and what it holds would leak
  /// (LeakSanitizer reported it in kiln-run and the runtime's tests).
  tbb::task_group WarmTasks;
  std::shared_ptr<KeepWarmControl> Warm = std::make_shared<KeepWarmControl>();
  /// One arena per slot of the task arena: a slot is held by one thread at
  /// a time, so however many TBB workers pass through, there are at most
  /// max_concurrency() of them.
  std::vector<Scratch> Slots;
  /// Launches that run inline use their calling thread's own.
  tbb::enumerable_thread_specific<Scratch> Inline;
  std::atomic<uint64_t> Allocations{0};
  std::atomic<uint64_t> PrivatizedLaunches{0};
  Watchdog Dog;

  /// debug_print's sink and limit (setDebugPrintHandler): a launch takes a
  /// reference to the handler at its start.
  std::mutex DebugLock;
  std::shared_ptr<const DebugPrintHandler> DebugHandler;
  std::atomic<uint64_t> DebugLimit{DefaultDebugPrintLimit};

  /// The parallel launches under way, which waiting host threads may help
  /// (helpWithCubes); Helpable counts them so that a look costs one load.
  std::mutex HelpLock;
  llvm::SmallVector<CubeDispenser *, 4> Dispensers;
  std::atomic<unsigned> Helpable{0};

  /// Least work per thread, in picoseconds (0: use every thread).
  uint64_t MinPicosPerThread = 0;

  explicit Impl(unsigned Threads, unsigned KeepWarmMicroseconds,
                unsigned MinWorkPerThreadMicroseconds)
      // More threads than the machine has cores get no more workers (TBB
      // would only say so on stderr): ask for what can be had.
      : Arena(Threads == 0 ? tbb::task_arena::automatic
                           : std::min(static_cast<int>(std::min(
                                          Threads, unsigned(INT32_MAX))),
                                      tbb::info::default_concurrency())),
        MinPicosPerThread(uint64_t(MinWorkPerThreadMicroseconds) * 1000000) {
    Warm->Window = std::chrono::microseconds(KeepWarmMicroseconds);
    // Pay for the arena here rather than in the first launch.
    Arena.initialize();
    Slots.resize(static_cast<size_t>(Arena.max_concurrency()));
  }

  /// \p S grown to at least \p Bytes, or null if memory is out.
  void *grow(Scratch &S, uint64_t Bytes) {
    if (S.Data && S.Size >= Bytes)
      return S.Data;
    size_t Want = static_cast<size_t>((std::max<uint64_t>(Bytes, 64) + 63) &
                                      ~uint64_t(63));
    void *P = std::aligned_alloc(64, Want);
    if (!P)
      return nullptr;
    std::free(S.Data);
    S.Data = P;
    S.Size = Want;
    Allocations.fetch_add(1, std::memory_order_relaxed);
    return P;
  }

  /// Stop makes every keep-warm task leave at once; the wait, inside the
  /// arena, runs those no worker has taken yet on this thread.
  ~Impl() {
    Warm->Stop = true;
    Arena.execute([this] { WarmTasks.wait(); });
  }

  /// New work: the keep-warm tasks leave, so their threads take it.
  void announceWork() {
    Warm->Activity.fetch_add(1, std::memory_order_release);
  }

  /// After a launch that used the workers: queues keep-warm tasks, each
  /// spinning until new work is announced or the window ends, so that the
  /// next launch soon after finds workers awake (TBB's sleeping workers take
  /// microseconds to wake up). At most MaxWarmWorkers of them: each costs
  /// the launching thread an enqueue, and on 16 threads warming all 15
  /// workers costs more than it saves (docs/Performance.md, "Launches and
  /// dispatch").
  static constexpr int MaxWarmWorkers = 3;
  void keepWarm() {
    if (Warm->Window.count() == 0)
      return;
    int Want = std::min(Arena.max_concurrency() - 1, MaxWarmWorkers);
    uint64_t Seen = Warm->Activity.load(std::memory_order_acquire);
    while (Warm->Spinning.load(std::memory_order_relaxed) < Want) {
      Warm->Spinning.fetch_add(1, std::memory_order_relaxed);
      Arena.enqueue(WarmTasks.defer([W = Warm, Seen] {
        auto Until = std::chrono::steady_clock::now() + W->Window;
        for (unsigned N = 1;; ++N) {
          if (W->Activity.load(std::memory_order_acquire) != Seen ||
              W->Stop.load(std::memory_order_relaxed))
            break;
          if ((N & 255) == 0 && std::chrono::steady_clock::now() > Until)
            break;
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#elif defined(__aarch64__)
          __asm__ __volatile__("yield");
#endif
        }
        W->Spinning.fetch_sub(1, std::memory_order_relaxed);
      }));
    }
  }

  /// The scratch of the calling worker inside Arena.
  void *slotScratch(uint64_t Bytes) {
    int Slot = tbb::this_task_arena::current_thread_index();
    if (Slot >= 0 && static_cast<size_t>(Slot) < Slots.size())
      return grow(Slots[Slot], Bytes);
    return grow(Inline.local(), Bytes); // not expected: stay correct anyway
  }

  /// Lets waiting host threads take part in \p D's launch.
  void publishDispenser(CubeDispenser &D) {
    std::lock_guard<std::mutex> L(HelpLock);
    Dispensers.push_back(&D);
    Helpable.fetch_add(1, std::memory_order_release);
  }
  /// Takes \p D back and waits for the helpers still in it (the launching
  /// thread is the one participant left): no thread joins it after.
  void withdrawDispenser(CubeDispenser &D) {
    {
      std::lock_guard<std::mutex> L(HelpLock);
      Dispensers.erase(std::find(Dispensers.begin(), Dispensers.end(), &D));
      Helpable.fetch_sub(1, std::memory_order_release);
    }
    for (unsigned N = 0; D.Participants.load(std::memory_order_acquire) > 1;
         ++N) {
      if (N < 1024) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
      } else {
        std::this_thread::yield();
      }
    }
    D.leave();
  }
};

/// The executor whose enqueued task this thread is running, if any.
static thread_local const void *RunningTaskOf = nullptr;

Executor::Executor(unsigned Threads, unsigned KeepWarmMicroseconds,
                   unsigned MinWorkPerThreadMicroseconds)
    : P(std::make_unique<Impl>(Threads, KeepWarmMicroseconds,
                               MinWorkPerThreadMicroseconds)) {}
Executor::~Executor() = default;

unsigned Executor::concurrency() const {
  return static_cast<unsigned>(P->Arena.max_concurrency());
}

uint64_t Executor::scratchAllocations() const {
  return P->Allocations.load(std::memory_order_relaxed);
}

uint64_t Executor::privatizedLaunches() const {
  return P->PrivatizedLaunches.load(std::memory_order_relaxed);
}

Watchdog &Executor::watchdog() { return P->Dog; }

bool Executor::helpWithCubes(llvm::function_ref<bool()> Enough) {
  if (P->Helpable.load(std::memory_order_acquire) == 0)
    return false;
  CubeDispenser *D = nullptr;
  {
    std::lock_guard<std::mutex> L(P->HelpLock);
    for (CubeDispenser *Each : P->Dispensers)
      if (!Each->exhausted() && Each->join()) {
        D = Each;
        break;
      }
  }
  if (!D)
    return false;
  // Enough is checked before each range: a helper leaves once what it waits
  // for is done, after the range it had taken.
  D->Participate(*D, NotInArena, Enough);
  D->leave();
  return true;
}

/// The error of a launch that \p Stop ended.
static Error stoppedError(const CubeMetadata &M, const LaunchStop &Stop) {
  if (Stop.reason() == LaunchStop::Reason::TimedOut)
    return launchError(M,
                       "stopped at its deadline (the kernel ran too long); "
                       "the buffers it may write hold unspecified contents",
                       std::make_error_code(std::errc::timed_out));
  return launchError(M,
                     "cancelled while it ran; the buffers it may write hold "
                     "unspecified contents",
                     std::make_error_code(std::errc::operation_canceled));
}

void Executor::setDebugPrintHandler(DebugPrintHandler Handler) {
  auto Shared = Handler ? std::make_shared<const DebugPrintHandler>(
                              std::move(Handler))
                        : nullptr;
  std::lock_guard<std::mutex> G(P->DebugLock);
  P->DebugHandler = std::move(Shared);
}

void Executor::setDebugPrintLimit(uint64_t Bytes) {
  P->DebugLimit.store(Bytes, std::memory_order_relaxed);
}

uint64_t Executor::debugPrintLimit() const {
  return P->DebugLimit.load(std::memory_order_relaxed);
}

namespace {
/// The debug text of one launch of a kernel that prints: collected while
/// its cubes run, delivered when the launch ends, however it ends.
class LaunchDebugText {
public:
  LaunchDebugText(std::shared_ptr<const DebugPrintHandler> Handler,
                  uint64_t Limit)
      : Handler(std::move(Handler)), Collector(Limit) {}
  ~LaunchDebugText() {
    std::string Text = Collector.take();
    if (Text.empty())
      return;
    if (Handler)
      (*Handler)(Text);
    else
      writeDebugPrintToStdout(Text);
  }
  DebugPrintCollector &collector() { return Collector; }

private:
  std::shared_ptr<const DebugPrintHandler> Handler;
  DebugPrintCollector Collector;
};
} // namespace

Error Executor::launch(const LoadedKernel &Kernel,
                       std::array<uint32_t, 3> CubeCount,
                       llvm::ArrayRef<ArgBinding> Args,
                       uint32_t RequiredAlignment, bool Validated,
                       LaunchStop *Stop) {
  if (!Kernel.valid())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "launch of an empty kernel handle");
  const CubeMetadata &M = Kernel.metadata();
  if (RequiredAlignment == 0)
    RequiredAlignment = Kernel.bufferAlignment();
  if (!Validated)
    if (Error E = validateLaunch(M, CubeCount, Args, RequiredAlignment))
      return E;
  // Far beyond anything the device limits allow: a corrupt metadata.
  if (M.ScratchBytes > (uint64_t(1) << 34))
    return launchError(M, "scratch area of " + Twine(M.ScratchBytes) +
                              " bytes is too large");

  // On the stack for the usual handful of parameters: a launch of an empty
  // kernel stays a few hundred nanoseconds.
  llvm::SmallVector<KernelArg, 16> KArgs(Args.size());
  for (size_t I = 0; I < Args.size(); ++I) {
    if (Args[I].isBuffer())
      KArgs[I] = {Args[I].bufferData(), Args[I].bufferCount()};
    else
      KArgs[I] = {const_cast<uint8_t *>(Args[I].valueBytes()), 1};
  }
  KernelFault Fault{};
  LaunchArgs LA{KArgs.data(),
                {CubeCount[0], CubeCount[1], CubeCount[2]},
                0,
                Stop ? Stop->flag() : nullptr,
                &Fault};
  // Only kernels that read tensor metadata get (and pay for) the table.
  llvm::SmallVector<TensorInfo, 4> Tensors;
  if (M.readsTensorInfo()) {
    Tensors.resize(Args.size());
    for (size_t I = 0; I < Args.size(); ++I)
      fillTensorInfo(Args[I], Tensors[I]);
    LA.Tensors = Tensors.data();
  }
  uint32_t Total = CubeCount[0] * CubeCount[1] * CubeCount[2];
  if (Total == 0)
    return Error::success(); // nothing to run (LangRef §2.1)
  if (Stop && Stop->stopped())
    return stoppedError(M, *Stop);
  CubeFunction Fn = Kernel.entry();
  // A kernel that prints runs each call of its cube function with the
  // launch's collector installed; any other kernel runs exactly as before.
  std::optional<LaunchDebugText> Debug;
  if (M.UsesDebugPrint) {
    std::shared_ptr<const DebugPrintHandler> Handler;
    {
      std::lock_guard<std::mutex> G(P->DebugLock);
      Handler = P->DebugHandler;
    }
    Debug.emplace(std::move(Handler),
                  P->DebugLimit.load(std::memory_order_relaxed));
  }
  auto Run = [&](uint32_t Begin, uint32_t End, void *S) {
    if (!Debug) {
      Fn(&LA, Begin, End, S);
      return;
    }
    DebugPrintScope Scope(Debug->collector());
    Fn(&LA, Begin, End, S);
  };
  // Nothing to privatise: an empty plan, and the kernel's own scratch.
  PrivatePlan Plan = planPrivatization(M, KArgs, Total);
  uint64_t ScratchBytes = Plan.ScratchBytes;
  if (Plan) {
    LA.Reserved = Plan.Mask;
    P->PrivatizedLaunches.fetch_add(1, std::memory_order_relaxed);
  }

  // As many threads as the work is worth, by what earlier launches of this
  // kernel measured (all of them until then); about eight ranges per
  // thread: enough to balance uneven cubes, few enough that the per-range
  // call and task costs stay small.
  unsigned Threads = concurrency();
  LaunchProfile *Profile = Kernel.profile();
  uint64_t PerCube =
      Profile ? Profile->PicosPerCube.load(std::memory_order_relaxed) : 0;
  if (PerCube && P->MinPicosPerThread) {
    uint64_t Worth = PerCube * Total / P->MinPicosPerThread;
    Threads = static_cast<unsigned>(
        std::clamp<uint64_t>(Worth, 1, uint64_t(Threads)));
  }
  uint32_t Grain = std::max<uint32_t>(1, Total / (Threads * 8));
  using Clock = std::chrono::steady_clock;
  auto Picos = [](Clock::duration D) {
    return uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(D).count()) *
           1000;
  };
  if (Threads <= 1 || Total <= Grain) {
    void *S = P->grow(P->Inline.local(), ScratchBytes);
    if (!S)
      return launchError(M,
                         "cannot allocate a scratch area of " +
                             Twine(ScratchBytes) + " bytes",
                         std::make_error_code(std::errc::not_enough_memory));
    void *Copies = nullptr;
    if (Plan) {
      Copies = Plan.allocate();
      if (!Copies)
        return launchError(
            M, "cannot allocate private copies of " + Twine(Plan.BlockBytes) +
                   " bytes",
            std::make_error_code(std::errc::not_enough_memory));
      Plan.publish(S, Copies);
    }
    auto T0 = Clock::now();
    Run(0, Total, S);
    bool Stopped = Stop && Stop->stopped();
    if (Profile && !Stopped)
      Profile->record(Picos(Clock::now() - T0) / Total);
    if (Copies)
      Plan.mergeAndFree(Copies);
    if (Stopped)
      return stoppedError(M, *Stop);
    if (Fault.Code != NoKernelFault)
      return faultError(M, Fault);
    return Error::success();
  }

  std::atomic<bool> OutOfMemory{false};
  std::atomic<uint64_t> BusyPicos{0};
  // Privatised: one block of copies per arena slot that ran cubes (a slot
  // is held by one thread at a time), and one per call of a thread without
  // a slot (not expected).
  std::vector<void *> SlotCopies(Plan ? P->Slots.size() : 0, nullptr);
  std::vector<void *> OtherCopies;
  std::mutex OtherCopiesMutex;
  auto CopiesFor = [&](bool InArena) -> void * {
    int Slot = InArena ? tbb::this_task_arena::current_thread_index() : -1;
    if (Slot >= 0 && static_cast<size_t>(Slot) < SlotCopies.size()) {
      void *&C = SlotCopies[Slot];
      if (!C)
        C = Plan.allocate();
      return C;
    }
    void *C = Plan.allocate();
    if (C) {
      std::lock_guard<std::mutex> Lock(OtherCopiesMutex);
      OtherCopies.push_back(C);
    }
    return C;
  };
  // Each thread that takes part gets its scratch (and copies) once, then
  // runs ranges until none is left.
  // The home block of a thread in the arena is its slot's; a helper from
  // outside (Executor::helpWithCubes) gets NotInArena.
  auto Participate = [&](CubeDispenser &D, unsigned Home,
                         llvm::function_ref<bool()> Enough) {
    bool InArena = Home != NotInArena;
    if (Stop && Stop->stopped())
      return; // the ranges not started yet
    void *S = InArena ? P->slotScratch(ScratchBytes)
                      : P->grow(P->Inline.local(), ScratchBytes);
    if (!S) {
      OutOfMemory = true;
      return;
    }
    if (Plan) {
      void *C = CopiesFor(InArena);
      if (!C) {
        OutOfMemory = true;
        return;
      }
      Plan.publish(S, C);
    }
    uint32_t Begin, End;
    auto T0 = Clock::now();
    if (!InArena)
      Home = 0; // the master's slot: the host's own when it launches
    while (!(Stop && Stop->stopped()) && !(Enough && Enough()) &&
           D.take(Home, Begin, End))
      Run(Begin, End, S);
    BusyPicos.fetch_add(Picos(Clock::now() - T0), std::memory_order_relaxed);
  };
  CubeDispenser Dispenser(Total, Grain, Threads, Participate);
  auto Slot = [] {
    return static_cast<unsigned>(
        std::max(0, tbb::this_task_arena::current_thread_index()));
  };
  auto RunCubes = [&] {
    Dispenser.join(); // the launching thread: the first, never refused
    P->publishDispenser(Dispenser);
    tbb::task_group Workers;
    for (unsigned I = 1; I < Threads; ++I)
      Workers.run([&] {
        if (Dispenser.exhausted() || !Dispenser.join())
          return;
        Participate(Dispenser, Slot(), nullptr);
        Dispenser.leave();
      });
    Participate(Dispenser, Slot(), nullptr);
    Workers.wait();
    P->withdrawDispenser(Dispenser);
  };
  // Isolated in any case: the thread waiting for these cubes must not take
  // a keep-warm task (it would spin until the next launch) or, from a
  // stream's task, another stream's task (this launch would then finish
  // only when that one does).
  P->announceWork();
  if (RunningTaskOf == P.get())
    tbb::this_task_arena::isolate(RunCubes);
  else
    P->Arena.execute([&] { tbb::this_task_arena::isolate(RunCubes); });
  P->keepWarm();
  // The cubes that ran count even when others did not.
  for (void *C : SlotCopies)
    if (C)
      Plan.mergeAndFree(C);
  for (void *C : OtherCopies)
    Plan.mergeAndFree(C);
  bool Stopped = Stop && Stop->stopped();
  if (Profile && !OutOfMemory && !Stopped)
    Profile->record(BusyPicos.load(std::memory_order_relaxed) / Total);
  if (Stopped)
    return stoppedError(M, *Stop);
  if (OutOfMemory)
    return launchError(M,
                       "cannot allocate a scratch area of " +
                           Twine(ScratchBytes) +
                           " bytes: some cubes did not run",
                       std::make_error_code(std::errc::not_enough_memory));
  // Written by the cubes (one compare-and-swap), read after all of them.
  if (Fault.Code != NoKernelFault)
    return faultError(M, Fault);
  return Error::success();
}

void Executor::enqueue(std::function<void()> Work) {
  P->announceWork();
  P->Arena.enqueue([Impl = P.get(), Work = std::move(Work)] {
    const void *Outer = RunningTaskOf;
    RunningTaskOf = Impl;
    Work();
    RunningTaskOf = Outer;
  });
}
