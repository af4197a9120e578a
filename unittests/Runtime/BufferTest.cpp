//===- BufferTest.cpp - Owning aligned host memory ------------------------===//

#include "kiln/Runtime/Buffer.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace kiln;

TEST(Buffer, AlignedZeroedAndSized) {
  for (uint64_t Count : {0ull, 1ull, 3ull, 1000ull, 300000ull}) {
    auto B = HostBuffer::create(Type::line(ScalarKind::F32, 3), Count);
    ASSERT_TRUE(!!B) << llvm::toString(B.takeError());
    EXPECT_NE(B->data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(B->data()) % HostBuffer::Alignment,
              0u);
    EXPECT_EQ(B->count(), Count);
    EXPECT_EQ(B->sizeInBytes(), Count * 12);
    const uint8_t *P = B->as<uint8_t>();
    for (uint64_t I = 0; I < B->sizeInBytes(); ++I)
      ASSERT_EQ(P[I], 0) << I;
  }
}

TEST(Buffer, MoveOnly) {
  auto B = HostBuffer::create(Type::scalar(ScalarKind::I32), 16);
  ASSERT_TRUE(!!B);
  B->as<int32_t>()[5] = 42;
  void *Data = B->data();
  HostBuffer Moved = std::move(*B);
  EXPECT_EQ(Moved.data(), Data);
  EXPECT_EQ(Moved.as<int32_t>()[5], 42);
  EXPECT_EQ(B->data(), nullptr);
  EXPECT_EQ(B->count(), 0u);
  HostBuffer Other;
  Other = std::move(Moved);
  EXPECT_EQ(Other.count(), 16u);
  static_assert(!std::is_copy_constructible_v<HostBuffer>);
}

TEST(Buffer, RefusesWhatCannotBeAllocated) {
  auto B = HostBuffer::create(Type::line(ScalarKind::F64, 16), UINT64_MAX / 4);
  ASSERT_FALSE(!!B);
  EXPECT_NE(llvm::toString(B.takeError()).find("overflows"), std::string::npos);
  auto C = HostBuffer::create(Type::scalar(ScalarKind::U8), uint64_t(1) << 60);
  ASSERT_FALSE(!!C);
  llvm::consumeError(C.takeError());
}
