//===- Collective.cpp - Element-wise reductions across buffers ------------===//

#include "kiln/Runtime/Collective.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

using namespace kiln;

namespace {

/// bf16 <-> float: bf16 is the upper half of a float's bits; rounding to
/// nearest even, NaN kept quiet.
float bf16ToFloat(uint16_t Bits) {
  return std::bit_cast<float>(uint32_t(Bits) << 16);
}
uint16_t floatToBF16(float F) {
  uint32_t U = std::bit_cast<uint32_t>(F);
  if (std::isnan(F))
    return uint16_t((U >> 16) | 0x40);
  U += 0x7FFF + ((U >> 16) & 1);
  return uint16_t(U >> 16);
}

/// Max and min that give NaN when either operand is one and order -0 below
/// +0 (a total order on the other values, as a GPU's max/min of a
/// reduction is usually expected to be).
template <typename F> F floatMax(F A, F B) {
  if (std::isnan(A))
    return A;
  if (std::isnan(B))
    return B;
  if (A == B)
    return std::signbit(A) ? B : A;
  return A > B ? A : B;
}
template <typename F> F floatMin(F A, F B) {
  if (std::isnan(A))
    return A;
  if (std::isnan(B))
    return B;
  if (A == B)
    return std::signbit(A) ? A : B;
  return A < B ? A : B;
}

/// The element-wise loop for values of type T, read and written through
/// Load and Store (the storage may be a narrower float), combined as C.
template <typename T, typename LoadFn, typename StoreFn, typename CombineFn>
void reduce(llvm::ArrayRef<void *> Buffers, uint64_t Values, unsigned Size,
            LoadFn Load, StoreFn Store, CombineFn Combine) {
  for (uint64_t I = 0; I < Values; ++I) {
    T Acc = Load(static_cast<const char *>(Buffers[0]) + I * Size);
    for (size_t B = 1; B < Buffers.size(); ++B)
      Acc = Combine(Acc, Load(static_cast<const char *>(Buffers[B]) + I * Size));
    for (void *Out : Buffers)
      Store(static_cast<char *>(Out) + I * Size, Acc);
  }
}

template <typename T> T loadAs(const void *P) {
  T V;
  std::memcpy(&V, P, sizeof(T));
  return V;
}
template <typename T> void storeAs(void *P, T V) {
  std::memcpy(P, &V, sizeof(T));
}

/// Integers: sums wrap (computed unsigned), max/min in T's order.
template <typename T>
void reduceInt(llvm::ArrayRef<void *> Buffers, uint64_t Values,
               AllReduceOp Op) {
  using U = std::make_unsigned_t<T>;
  auto Load = [](const void *P) { return loadAs<T>(P); };
  auto Store = [](void *P, T V) { storeAs<T>(P, V); };
  switch (Op) {
  case AllReduceOp::Sum:
    return reduce<T>(Buffers, Values, sizeof(T), Load, Store, [](T A, T B) {
      return static_cast<T>(static_cast<U>(static_cast<U>(A) + static_cast<U>(B)));
    });
  case AllReduceOp::Max:
    return reduce<T>(Buffers, Values, sizeof(T), Load, Store,
                     [](T A, T B) { return A < B ? B : A; });
  case AllReduceOp::Min:
    return reduce<T>(Buffers, Values, sizeof(T), Load, Store,
                     [](T A, T B) { return B < A ? B : A; });
  }
}

/// Floats computed as C (float for f16 and bf16, whose sums of two values
/// a float holds exactly before the one rounding back), stored through
/// Load/Store.
template <typename C, typename LoadFn, typename StoreFn>
void reduceFloat(llvm::ArrayRef<void *> Buffers, uint64_t Values, unsigned Size,
                 AllReduceOp Op, LoadFn Load, StoreFn Store) {
  switch (Op) {
  case AllReduceOp::Sum:
    // Rounded after each addition: a round trip through the storage type.
    return reduce<C>(Buffers, Values, Size, Load, Store, [&](C A, C B) {
      char Tmp[sizeof(C)];
      Store(Tmp, A + B);
      return Load(Tmp);
    });
  case AllReduceOp::Max:
    return reduce<C>(Buffers, Values, Size, Load, Store, floatMax<C>);
  case AllReduceOp::Min:
    return reduce<C>(Buffers, Values, Size, Load, Store, floatMin<C>);
  }
}

} // namespace

const char *kiln::reduceOpName(AllReduceOp Op) {
  switch (Op) {
  case AllReduceOp::Sum:
    return "sum";
  case AllReduceOp::Max:
    return "max";
  case AllReduceOp::Min:
    return "min";
  }
  return "?";
}

bool kiln::isReducible(Type Ty) {
  ScalarKind K = Ty.elementKind();
  return Ty.isInteger() || K == ScalarKind::F16 || K == ScalarKind::BF16 ||
         K == ScalarKind::F32 || K == ScalarKind::F64;
}

void kiln::allReduceInPlace(llvm::ArrayRef<void *> Buffers, uint64_t Count,
                            Type Ty, AllReduceOp Op) {
  if (Buffers.empty() || Count == 0)
    return;
  // A line is reduced lane by lane: its lanes are consecutive values.
  uint64_t Values = Count * Ty.lanes();
  switch (Ty.elementKind()) {
  case ScalarKind::I8:
    return reduceInt<int8_t>(Buffers, Values, Op);
  case ScalarKind::I16:
    return reduceInt<int16_t>(Buffers, Values, Op);
  case ScalarKind::I32:
    return reduceInt<int32_t>(Buffers, Values, Op);
  case ScalarKind::I64:
    return reduceInt<int64_t>(Buffers, Values, Op);
  case ScalarKind::U8:
    return reduceInt<uint8_t>(Buffers, Values, Op);
  case ScalarKind::U16:
    return reduceInt<uint16_t>(Buffers, Values, Op);
  case ScalarKind::U32:
    return reduceInt<uint32_t>(Buffers, Values, Op);
  case ScalarKind::U64:
    return reduceInt<uint64_t>(Buffers, Values, Op);
  case ScalarKind::F16:
    return reduceFloat<float>(
        Buffers, Values, 2, Op,
        [](const void *P) { return float(loadAs<_Float16>(P)); },
        [](void *P, float V) { storeAs<_Float16>(P, _Float16(V)); });
  case ScalarKind::BF16:
    return reduceFloat<float>(
        Buffers, Values, 2, Op,
        [](const void *P) { return bf16ToFloat(loadAs<uint16_t>(P)); },
        [](void *P, float V) { storeAs<uint16_t>(P, floatToBF16(V)); });
  case ScalarKind::F32:
    return reduceFloat<float>(
        Buffers, Values, 4, Op, [](const void *P) { return loadAs<float>(P); },
        [](void *P, float V) { storeAs<float>(P, V); });
  case ScalarKind::F64:
    return reduceFloat<double>(
        Buffers, Values, 8, Op,
        [](const void *P) { return loadAs<double>(P); },
        [](void *P, double V) { storeAs<double>(P, V); });
  default:
    return; // not reducible: the callers refuse it first
  }
}
