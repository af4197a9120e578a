//===- Buffer.cpp - Buffers, views and launch arguments of the public API -===//

#include "Internal.h"

#include <algorithm>
#include <cstring>
#include <new>

using namespace kiln;
using namespace kiln::api;
using detail::BufferState;

Result<api::Buffer> api::Buffer::allocate(uint64_t Bytes) {
  try {
    llvm::Expected<kiln::HostBuffer> B =
        kiln::HostBuffer::create(kiln::Type::scalar(ScalarKind::U8), Bytes);
    if (!B)
      return Status(ErrorCode::OutOfMemory, llvm::toString(B.takeError()));
    auto S = std::make_shared<BufferState>();
    S->Owned = std::move(*B);
    S->Data = S->Owned.data();
    S->Size = Bytes;
    return BufferState::make(std::move(S));
  } catch (const std::bad_alloc &) {
    return Status(ErrorCode::OutOfMemory,
                  "cannot allocate a buffer of " + std::to_string(Bytes) +
                      " bytes");
  }
}

Result<api::Buffer> api::Buffer::wrap(void *Data, uint64_t Bytes) {
  if (!Data && Bytes)
    return Status(ErrorCode::InvalidArgument,
                  "Buffer::wrap: a null address for " + std::to_string(Bytes) +
                      " bytes");
  auto S = std::make_shared<BufferState>();
  S->Data = Data;
  S->Size = Bytes;
  return BufferState::make(std::move(S));
}

void *api::Buffer::data() const { return S ? S->Data : nullptr; }
uint64_t api::Buffer::size() const { return S ? S->Size : 0; }

BufferView api::Buffer::view(ElementType Type, uint64_t ByteOffset,
                             uint64_t Count) const {
  return BufferView(*this, Type, ByteOffset, Count);
}

BufferView api::Buffer::view(ElementType Type) const {
  unsigned Size = Type.sizeInBytes();
  return BufferView(*this, Type, 0, Size ? size() / Size : 0);
}

void *BufferView::data() const {
  if (!B.valid() || !B.data())
    return nullptr;
  return static_cast<char *>(B.data()) + ByteOffset;
}

//===-- Arguments ---------------------------------------------------------===//

Arg Arg::buffer(BufferView View, Access Allowed) {
  Arg A;
  A.IsBuffer = true;
  A.View = std::move(View);
  A.BufferAccess = Allowed;
  return A;
}

Arg Arg::tensor(BufferView View, std::span<const uint64_t> Shape,
                std::span<const uint64_t> Strides, Access Allowed) {
  Arg A = buffer(std::move(View), Allowed);
  A.HasShape = true;
  A.Shape.assign(Shape.begin(), Shape.end());
  A.Strides.assign(Strides.begin(), Strides.end());
  return A;
}

Arg Arg::tensorMap(BufferView View, std::span<const uint64_t> Shape,
                   std::span<const uint64_t> Strides,
                   std::span<const uint64_t> Box, Access Allowed) {
  Arg A = tensor(std::move(View), Shape, Strides, Allowed);
  A.HasBox = true;
  A.Box.assign(Box.begin(), Box.end());
  return A;
}

Arg Arg::tensorMapIm2col(BufferView View, std::span<const uint64_t> Shape,
                         std::span<const uint64_t> Strides,
                         std::span<const int64_t> Lower,
                         std::span<const int64_t> Upper,
                         uint64_t ChannelsPerPixel, uint64_t PixelsPerColumn,
                         Access Allowed) {
  Arg A = tensor(std::move(View), Shape, Strides, Allowed);
  A.HasIm2col = true;
  A.Lower.assign(Lower.begin(), Lower.end());
  A.Upper.assign(Upper.begin(), Upper.end());
  A.ChannelsPerPixel = ChannelsPerPixel;
  A.PixelsPerColumn = PixelsPerColumn;
  return A;
}

Arg Arg::value(ElementType Type, const void *Bytes, size_t Size) {
  Arg A;
  A.ValueType = Type;
  A.Size = Size;
  if (Bytes)
    std::memcpy(A.Bytes.data(), Bytes, std::min(Size, MaxValueBytes));
  return A;
}

Arg Arg::f32(float V) {
  return value(ElementType::scalar(ScalarType::F32), &V, sizeof(V));
}
Arg Arg::f64(double V) {
  return value(ElementType::scalar(ScalarType::F64), &V, sizeof(V));
}
Arg Arg::i32(int32_t V) {
  return value(ElementType::scalar(ScalarType::I32), &V, sizeof(V));
}
Arg Arg::u32(uint32_t V) {
  return value(ElementType::scalar(ScalarType::U32), &V, sizeof(V));
}
Arg Arg::i64(int64_t V) {
  return value(ElementType::scalar(ScalarType::I64), &V, sizeof(V));
}
Arg Arg::u64(uint64_t V) {
  return value(ElementType::scalar(ScalarType::U64), &V, sizeof(V));
}
Arg Arg::boolean(bool V) {
  uint8_t B = V ? 1 : 0;
  return value(ElementType::scalar(ScalarType::Bool), &B, 1);
}
