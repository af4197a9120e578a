//===- CollectiveTest.cpp - allReduce across devices ----------------------===//

#include "Kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace kiln::api;
using namespace kiln::api::test;

namespace {

/// \p N devices, each with one stream.
struct Group {
  std::vector<Device> Devices;
  std::vector<Stream> Streams;
  explicit Group(unsigned N) {
    for (unsigned I = 0; I < N; ++I) {
      Devices.push_back(memoryDevice(2));
      Streams.push_back(*Devices.back().createStream());
    }
  }
};

template <typename T>
Buffer bufferOf(const std::vector<T> &Values) {
  Buffer B = *Buffer::allocate(Values.size() * sizeof(T));
  if (!Values.empty())
    std::memcpy(B.data(), Values.data(), Values.size() * sizeof(T));
  return B;
}

template <typename T> std::vector<T> contents(const Buffer &B) {
  std::vector<T> V(B.size() / sizeof(T));
  if (!V.empty())
    std::memcpy(V.data(), B.data(), V.size() * sizeof(T));
  return V;
}

ElementType i32() { return ElementType::scalar(ScalarType::I32); }
ElementType u8() { return ElementType::scalar(ScalarType::U8); }
ElementType f32t() { return ElementType::scalar(ScalarType::F32); }

/// Member \p M's value at element \p I: distinct per member, signs mixed.
int32_t intValue(unsigned M, uint64_t I) {
  return int32_t((I * 7 + M * 13) % 101) - 50;
}

TEST(CollectiveTest, IntegersOnOneTwoAndFourDevicesUnevenCounts) {
  for (unsigned Devices : {1u, 2u, 4u}) {
    Group G(Devices);
    for (uint64_t N : {uint64_t(1), uint64_t(7), uint64_t(1001)}) {
      for (ReduceOp Op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
        std::vector<Buffer> Bufs;
        std::vector<CollectiveMember> Members;
        for (unsigned M = 0; M < Devices; ++M) {
          std::vector<int32_t> V(N);
          for (uint64_t I = 0; I < N; ++I)
            V[I] = intValue(M, I);
          Bufs.push_back(bufferOf(V));
          Members.push_back({G.Streams[M], Bufs.back().view(i32())});
        }
        ASSERT_TRUE(allReduce(Members, Op).ok());
        for (Stream &S : G.Streams)
          ASSERT_TRUE(S.synchronize().ok());
        for (unsigned M = 0; M < Devices; ++M) {
          std::vector<int32_t> Got = contents<int32_t>(Bufs[M]);
          for (uint64_t I = 0; I < N; ++I) {
            int32_t Want = intValue(0, I);
            for (unsigned O = 1; O < Devices; ++O) {
              int32_t V = intValue(O, I);
              Want = Op == ReduceOp::Sum   ? Want + V
                     : Op == ReduceOp::Max ? std::max(Want, V)
                                           : std::min(Want, V);
            }
            ASSERT_EQ(Got[I], Want) << "devices " << Devices << ", n " << N
                                    << ", op " << int(Op) << ", member " << M
                                    << ", element " << I;
          }
        }
      }
    }
  }
}

TEST(CollectiveTest, UnsignedSumsWrap) {
  Group G(2);
  Buffer A = bufferOf(std::vector<uint8_t>{200, 1, 255});
  Buffer B = bufferOf(std::vector<uint8_t>{100, 2, 255});
  CollectiveMember Members[] = {{G.Streams[0], A.view(u8())},
                                {G.Streams[1], B.view(u8())}};
  ASSERT_TRUE(allReduce(Members, ReduceOp::Sum).ok());
  ASSERT_TRUE(G.Streams[0].synchronize().ok());
  ASSERT_TRUE(G.Streams[1].synchronize().ok());
  EXPECT_EQ(contents<uint8_t>(A), (std::vector<uint8_t>{44, 3, 254}));
  EXPECT_EQ(contents<uint8_t>(B), (std::vector<uint8_t>{44, 3, 254}));
}

TEST(CollectiveTest, FloatsInMemberOrderWithNaNAndSignedZero) {
  Group G(4);
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  // Element 0: a sum whose value depends on the order ((1e8 + 1) - 1e8) + 1
  // = 1 in f32 (1e8 + 1 rounds to 1e8). Element 1: a NaN. Element 2: zeros.
  std::vector<std::vector<float>> In = {{1e8f, 1.0f, -0.0f},
                                        {1.0f, NaN, 0.0f},
                                        {-1e8f, 2.0f, -0.0f},
                                        {1.0f, 3.0f, -0.0f}};
  for (ReduceOp Op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
    std::vector<Buffer> Bufs;
    std::vector<CollectiveMember> Members;
    for (unsigned M = 0; M < 4; ++M) {
      Bufs.push_back(bufferOf(In[M]));
      Members.push_back({G.Streams[M], Bufs.back().view(f32t())});
    }
    ASSERT_TRUE(allReduce(Members, Op).ok());
    for (Stream &S : G.Streams)
      ASSERT_TRUE(S.synchronize().ok());
    for (unsigned M = 0; M < 4; ++M) {
      std::vector<float> Got = contents<float>(Bufs[M]);
      EXPECT_TRUE(std::isnan(Got[1])) << int(Op);
      if (Op == ReduceOp::Sum) {
        EXPECT_EQ(Got[0], 1.0f);
        EXPECT_EQ(Got[2], 0.0f);
      } else if (Op == ReduceOp::Max) {
        EXPECT_EQ(Got[0], 1e8f);
        EXPECT_FALSE(std::signbit(Got[2])); // +0 above -0
      } else {
        EXPECT_EQ(Got[0], -1e8f);
        EXPECT_TRUE(std::signbit(Got[2]));
      }
    }
  }
}

TEST(CollectiveTest, HalfAndBFloat16RoundAtEachAddition) {
  Group G(3);
  ElementType F16 = ElementType::scalar(ScalarType::F16);
  ElementType BF16 = ElementType::scalar(ScalarType::BF16);
  // f16: 2048 + 1 is a tie that rounds to even, 2048, twice over; in
  // another order (1 + 1) + 2048 would give 2050. Element 1: 1 + 2 + 3.
  std::vector<std::vector<uint16_t>> Half = {
      {0x6800, 0x3C00}, {0x3C00, 0x4000}, {0x3C00, 0x4200}};
  // bf16: 256 + 1 rounds to 256 the same way; element 1: max with a NaN.
  std::vector<std::vector<uint16_t>> Brain = {
      {0x4380, 0x3F80}, {0x3F80, 0x7FC0}, {0x3F80, 0x4000}};
  for (int Pass = 0; Pass < 2; ++Pass) {
    const auto &In = Pass == 0 ? Half : Brain;
    std::vector<Buffer> Bufs;
    std::vector<CollectiveMember> Members;
    for (unsigned M = 0; M < 3; ++M) {
      Bufs.push_back(bufferOf(In[M]));
      Members.push_back({G.Streams[M], Bufs.back().view(Pass ? BF16 : F16)});
    }
    ASSERT_TRUE(allReduce(Members, ReduceOp::Sum).ok());
    for (Stream &S : G.Streams)
      ASSERT_TRUE(S.synchronize().ok());
    for (unsigned M = 0; M < 3; ++M) {
      std::vector<uint16_t> Got = contents<uint16_t>(Bufs[M]);
      if (Pass == 0) {
        EXPECT_EQ(Got[0], 0x6800) << M; // 2048
        EXPECT_EQ(Got[1], 0x4600) << M; // 6
      } else {
        EXPECT_EQ(Got[0], 0x4380) << M;          // 256
        EXPECT_EQ(Got[1] & 0x7F80, 0x7F80) << M; // NaN
        EXPECT_NE(Got[1] & 0x007F, 0) << M;
      }
    }
  }
}

TEST(CollectiveTest, LinesAndViewsAtAnOffset) {
  Group G(2);
  ElementType Vec2 = ElementType::line(ScalarType::F64, 2);
  Buffer A = bufferOf(std::vector<double>{-9, 1, 2, 3, 4});
  Buffer B = bufferOf(std::vector<double>{-9, 10, 20, 30, 40});
  // Two vec<2 x f64> elements, 8 bytes in: element -9 stays.
  CollectiveMember Members[] = {{G.Streams[0], A.view(Vec2, 8, 2)},
                                {G.Streams[1], B.view(Vec2, 8, 2)}};
  ASSERT_TRUE(allReduce(Members, ReduceOp::Sum).ok());
  ASSERT_TRUE(G.Streams[1].synchronize().ok());
  EXPECT_EQ(contents<double>(A), (std::vector<double>{-9, 11, 22, 33, 44}));
  EXPECT_EQ(contents<double>(B), (std::vector<double>{-9, 11, 22, 33, 44}));
}

TEST(CollectiveTest, OrderedWithEachDevicesStream) {
  // Each device scales its buffer before the collective and adds after:
  // y_m = (m + 1) * 1 summed over 3 devices = 6, then + 100 on each.
  const unsigned Devices = 3;
  const uint32_t N = 3001;
  Group G(Devices);
  std::vector<Kernel> Ks;
  std::vector<Buffer> Bufs;
  std::vector<CollectiveMember> Members;
  for (unsigned M = 0; M < Devices; ++M) {
    Ks.push_back(*G.Devices[M].loadKernel(AffineText, "affine"));
    Bufs.push_back(bufferOf(std::vector<float>(N, 1.0f)));
    for (int R = 0; R < 10; ++R) // many launches: the collective must wait
      ASSERT_TRUE(G.Streams[M]
                      .launch(Ks[M], {(N + 63) / 64, 1, 1},
                              {Arg::buffer(Bufs[M].view(f32t())),
                               Arg::f32(1.0f),
                               Arg::f32(R == 9 ? float(M + 1) - 1.0f : 0.0f),
                               Arg::u32(N)})
                      .ok());
    Members.push_back({G.Streams[M], Bufs[M].view(f32t())});
  }
  ASSERT_TRUE(allReduce(Members, ReduceOp::Sum).ok());
  for (unsigned M = 0; M < Devices; ++M)
    ASSERT_TRUE(G.Streams[M]
                    .launch(Ks[M], {(N + 63) / 64, 1, 1},
                            {Arg::buffer(Bufs[M].view(f32t())), Arg::f32(1.0f),
                             Arg::f32(100.0f), Arg::u32(N)})
                    .ok());
  for (unsigned M = 0; M < Devices; ++M) {
    ASSERT_TRUE(G.Streams[M].synchronize().ok());
    std::vector<float> Got = contents<float>(Bufs[M]);
    for (uint32_t I = 0; I < N; ++I)
      ASSERT_EQ(Got[I], 106.0f) << "member " << M << ", element " << I;
  }
}

TEST(CollectiveTest, BadMembersAreRefusedAndQueueNothing) {
  Group G(2);
  Device Extra = memoryDevice(1);
  Stream SameDevice = *G.Devices[0].createStream();
  Buffer A = *Buffer::allocate(64), B = *Buffer::allocate(64);
  auto Expect = [](Status S, const char *Part) {
    EXPECT_EQ(S.code(), ErrorCode::InvalidArgument) << S.str();
    EXPECT_NE(S.message().find(Part), std::string::npos) << S.message();
  };
  Expect(allReduce({}, ReduceOp::Sum), "no member");
  {
    CollectiveMember M[] = {{G.Streams[0], A.view(i32())},
                            {SameDevice, B.view(i32())}};
    Expect(allReduce(M, ReduceOp::Sum), "a device takes part once");
  }
  {
    CollectiveMember M[] = {{G.Streams[0], A.view(i32())},
                            {G.Streams[1], B.view(i32(), 0, 15)}};
    Expect(allReduce(M, ReduceOp::Max), "counts must match");
  }
  {
    CollectiveMember M[] = {{G.Streams[0], A.view(i32())},
                            {G.Streams[1], B.view(f32t())}};
    Expect(allReduce(M, ReduceOp::Min), "element types must match");
  }
  {
    CollectiveMember M[] = {{G.Streams[0], A.view(i32(), 0, 8)},
                            {G.Streams[1], A.view(i32(), 16, 8)}};
    Expect(allReduce(M, ReduceOp::Sum), "overlaps");
  }
  {
    CollectiveMember M[] = {{G.Streams[0], A.view(i32())},
                            {Stream(), B.view(i32())}};
    Expect(allReduce(M, ReduceOp::Sum), "member 1: the stream is null");
  }
  {
    CollectiveMember M[] = {{G.Streams[0], A.view(i32(), 0, 17)}};
    Expect(allReduce(M, ReduceOp::Sum), "do not fit");
  }
  {
    CollectiveMember M[] = {{G.Streams[0], A.view(i32(), 2, 4)}};
    Expect(allReduce(M, ReduceOp::Sum), "not a multiple of 4");
  }
  {
    ElementType Bool = ElementType::scalar(ScalarType::Bool);
    CollectiveMember M[] = {{G.Streams[0], A.view(Bool)},
                            {G.Streams[1], B.view(Bool)}};
    Expect(allReduce(M, ReduceOp::Sum), "cannot be reduced");
  }
  {
    CollectiveMember M[] = {{G.Streams[0], BufferView()}};
    Expect(allReduce(M, ReduceOp::Sum), "buffer is null");
  }
  {
    CollectiveMember M[] = {{G.Streams[0], A.view(i32())}};
    Expect(allReduce(M, static_cast<ReduceOp>(7)), "unknown ReduceOp");
  }
  // Nothing was queued: the buffers are untouched, the streams fine.
  for (Stream &S : G.Streams)
    EXPECT_TRUE(S.synchronize().ok());
  (void)Extra;
}

TEST(CollectiveTest, AFailedMemberStreamIsItsOwnErrorOrFailsTheOthers) {
  Group G(2);
  Buffer A = bufferOf(std::vector<int32_t>{1, 2});
  Buffer B = bufferOf(std::vector<int32_t>{3, 4});
  // A cancelled stream is failed at once.
  ASSERT_TRUE(G.Streams[1].cancel().ok());
  CollectiveMember M[] = {{G.Streams[0], A.view(i32())},
                          {G.Streams[1], B.view(i32())}};
  Status S = allReduce(M, ReduceOp::Sum);
  EXPECT_EQ(S.code(), ErrorCode::Cancelled) << S.str();
  EXPECT_NE(S.message().find("cancelled"), std::string::npos) << S.str();
  EXPECT_TRUE(G.Streams[0].synchronize().ok()); // nothing queued there
  EXPECT_EQ(contents<int32_t>(A), (std::vector<int32_t>{1, 2}));

  // A stream that fails once the collective is queued (it waits for an
  // event of a failed stream) fails the first member's stream too.
  Group H(2);
  Stream Broken = *H.Devices[1].createStream();
  ASSERT_TRUE(Broken.cancel().ok());
  Event Failed = *Broken.record();
  ASSERT_TRUE(H.Streams[1].wait(Failed).ok());
  CollectiveMember N[] = {{H.Streams[0], A.view(i32())},
                          {H.Streams[1], B.view(i32())}};
  Status T = allReduce(N, ReduceOp::Sum);
  if (T.ok()) {
    EXPECT_EQ(H.Streams[0].synchronize().code(), ErrorCode::Cancelled);
  } else {
    EXPECT_EQ(T.code(), ErrorCode::Cancelled) << T.str();
  }
  EXPECT_EQ(H.Streams[1].synchronize().code(), ErrorCode::Cancelled);
  EXPECT_EQ(contents<int32_t>(A), (std::vector<int32_t>{1, 2}));
}

} // namespace
