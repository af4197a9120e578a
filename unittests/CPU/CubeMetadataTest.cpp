//===- CubeMetadataTest.cpp - Encoding of launch metadata -----------------===//

#include "kiln/CPU/CubeMetadata.h"
#include "kiln/Compile/ArtifactId.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

CubeMetadata sample() {
  CubeMetadata M;
  M.KernelName = "vadd";
  M.Symbol = "kiln_cube_vadd";
  M.CubeDim = {16, 4, 2};
  M.PlaneDim = 8;
  M.ScratchBytes = 12345;
  M.Params.push_back(
      {"a", true, Type::scalar(ScalarKind::F32), AccessKind::Read});
  M.Params.push_back(
      {"b", true, Type::line(ScalarKind::BF16, 4), AccessKind::ReadWrite});
  M.Params.push_back(
      {"c", true, Type::scalar(ScalarKind::U8), AccessKind::Write});
  M.Params.push_back({"h", true, Type::scalar(ScalarKind::U32),
                      AccessKind::ReadWrite, PrivateAtomic::Add});
  M.Params.push_back(
      {"n", false, Type::scalar(ScalarKind::U32), AccessKind::ReadWrite});
  M.Params.push_back(
      {"v", false, Type::line(ScalarKind::F64, 16), AccessKind::ReadWrite});
  // A tensor whose metadata the kernel reads, and a tensor map of rank 2.
  M.Params.push_back({"t", true, Type::scalar(ScalarKind::I8),
                      AccessKind::Read, PrivateAtomic::None, false, true});
  M.Params.push_back({"m", true, Type::scalar(ScalarKind::F32),
                      AccessKind::Read, PrivateAtomic::None, true, true, 2});
  return M;
}

/// No prefix of a valid encoding decodes.
void expectEveryPrefixRefused(const std::vector<uint8_t> &Bytes) {
  for (size_t N = 0; N < Bytes.size(); ++N) {
    auto R = CubeMetadata::deserialize(llvm::ArrayRef(Bytes).take_front(N));
    EXPECT_FALSE(!!R) << "prefix of " << N << " bytes decoded";
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

/// \p Bytes does not decode, with an error that contains \p Needle.
void expectRefused(const std::vector<uint8_t> &Bytes, const char *Needle) {
  auto R = CubeMetadata::deserialize(Bytes);
  ASSERT_FALSE(!!R);
  std::string Msg = llvm::toString(R.takeError());
  EXPECT_NE(Msg.find(Needle), std::string::npos) << Msg;
}

TEST(CubeMetadata, RoundTrip) {
  CubeMetadata M = sample();
  std::vector<uint8_t> Bytes = M.serialize();
  auto Back = CubeMetadata::deserialize(Bytes);
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_EQ(*Back, M);
  EXPECT_EQ(Back->serialize(), Bytes);
}

TEST(CubeMetadata, TensorBytesOnlyForKernelsThatUseTensors) {
  // Without a tensor parameter the encoding is version 2's, byte for byte.
  CubeMetadata M = sample();
  M.Params.resize(6);
  std::vector<uint8_t> Plain = M.serialize();
  EXPECT_EQ(Plain[4], 2);
  // sample()'s 8 parameters of one-letter names: 12 bytes each with the
  // tensor bytes, 10 without.
  std::vector<uint8_t> Full = sample().serialize();
  EXPECT_EQ(Full[4], 4);
  EXPECT_EQ(Full.size(), Plain.size() + 6 * 2 + 2 * 12);
  auto Back = CubeMetadata::deserialize(Full);
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_TRUE(Back->Params[6].ReadsTensorInfo);
  EXPECT_FALSE(Back->Params[6].IsTensorMap);
  EXPECT_TRUE(Back->Params[7].IsTensorMap);
  EXPECT_EQ(Back->Params[7].TensorMapRank, 2);
  EXPECT_TRUE(Back->readsTensorInfo());
}

// An im2col tensor map is bit 2 of the tensor flags, only with bit 0.
TEST(CubeMetadata, Im2colFlagRoundTrips) {
  CubeMetadata M = sample();
  M.Params[7].IsIm2col = true;
  M.Params[7].TensorMapRank = 4;
  std::vector<uint8_t> Bytes = M.serialize();
  EXPECT_EQ(Bytes[4], 4);
  EXPECT_EQ(Bytes.size(), sample().serialize().size());
  // The last parameter ends with its flags and rank.
  EXPECT_EQ(Bytes[Bytes.size() - 2], 1 | 2 | 4);
  auto Back = CubeMetadata::deserialize(Bytes);
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_EQ(*Back, M);
  EXPECT_TRUE(Back->Params[7].IsIm2col);
  EXPECT_FALSE(Back->Params[6].IsIm2col);
  auto Expect = [](std::vector<uint8_t> B, uint8_t Flags) {
    B[B.size() - 2] = Flags;
    auto R = CubeMetadata::deserialize(B);
    ASSERT_FALSE(!!R);
    std::string Msg = llvm::toString(R.takeError());
    EXPECT_NE(Msg.find("bad tensor flags " + std::to_string(Flags)),
              std::string::npos)
        << Msg;
  };
  // An unknown bit; im2col without a tensor map (the flags are read first).
  Expect(Bytes, 8);
  Expect(Bytes, 2 | 4);
}

TEST(CubeMetadata, LittleEndianLayout) {
  CubeMetadata M;
  M.KernelName = "k";
  M.Symbol = "s";
  std::vector<uint8_t> B = M.serialize();
  // magic, version 2 as u16 LE, then the u32 LE length of "k".
  ASSERT_GE(B.size(), 11u);
  EXPECT_EQ(std::string(B.begin(), B.begin() + 4), "KCMD");
  EXPECT_EQ(B[4], 2);
  EXPECT_EQ(B[5], 0);
  EXPECT_EQ(B[6], 1);
  EXPECT_EQ(B[7], 0);
  EXPECT_EQ(B[10], 'k');
}

// Clusters and the debug-print flag take version 3; a kernel without them
// keeps the version 2 encoding it always had.
TEST(CubeMetadata, ClusterAndFlagsRoundTripAsVersion3) {
  CubeMetadata M = sample();
  M.Params.resize(6); // no tensor: see BothOptionalPartsTakeVersion5
  std::vector<uint8_t> Plain = M.serialize();
  EXPECT_EQ(Plain[4], 2);
  M.ClusterDim = {1, 2, 3};
  M.UsesDebugPrint = true;
  std::vector<uint8_t> Bytes = M.serialize();
  EXPECT_EQ(Bytes[4], 3);
  EXPECT_EQ(Bytes.size(), Plain.size() + 13);
  auto Back = CubeMetadata::deserialize(Bytes);
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_EQ(*Back, M);
  expectEveryPrefixRefused(Bytes);
  // After magic, version, the two strings, cube_dim and plane_dim.
  size_t ClusterAt = 4 + 2 + 4 + 4 + 4 + 14 + 16;
  auto B = Bytes;
  B[ClusterAt] = 0;
  expectRefused(B, "cluster_dim of zero");
  B = Bytes;
  B[ClusterAt + 12] = 2;
  expectRefused(B, "unknown flags");
  M.UsesDebugPrint = false;
  M.ClusterDim = {1, 1, 1};
  B = Bytes;
  B[ClusterAt + 4] = 1;
  B[ClusterAt + 8] = 1;
  B[ClusterAt + 12] = 0;
  expectRefused(B, "neither clusters nor flags");
}

// A kernel with clusters (or debug printing) and tensors has both optional
// parts: version 5, the cluster block after plane_dim and the tensor bytes
// after each parameter.
TEST(CubeMetadata, BothOptionalPartsTakeVersion5) {
  CubeMetadata M = sample();
  std::vector<uint8_t> TensorsOnly = M.serialize();
  EXPECT_EQ(TensorsOnly[4], 4);
  M.ClusterDim = {2, 1, 1};
  std::vector<uint8_t> Bytes = M.serialize();
  EXPECT_EQ(Bytes[4], 5);
  EXPECT_EQ(Bytes.size(), TensorsOnly.size() + 13);
  auto Back = CubeMetadata::deserialize(Bytes);
  ASSERT_TRUE(!!Back) << llvm::toString(Back.takeError());
  EXPECT_EQ(*Back, M);
  EXPECT_TRUE(Back->Params[7].IsTensorMap);
  expectEveryPrefixRefused(Bytes);
  // Version 5 whose cluster block says 1x1x1 and no flags is not this
  // metadata's one encoding.
  size_t ClusterAt = 4 + 2 + 4 + 4 + 4 + 14 + 16;
  auto B = Bytes;
  B[ClusterAt] = 1;
  expectRefused(B, "version 5 with neither clusters nor flags");
}

TEST(CubeMetadata, EveryTruncationIsAnError) {
  std::vector<uint8_t> Bytes = sample().serialize();
  expectEveryPrefixRefused(Bytes);
}

TEST(CubeMetadata, CorruptInputsAreErrors) {
  std::vector<uint8_t> Good = sample().serialize();
  auto B = Good;
  B[0] = 'X';
  expectRefused(B, "bad magic");
  B = Good;
  B[4] = 6;
  expectRefused(B, "unsupported version 6");
  // Version 1 had no private-atomic byte: refused (its store entries are
  // recompiled), never misread.
  B = Good;
  B[4] = 1;
  expectRefused(B, "unsupported version 1 (expected 2 to 5)");
  B = Good;
  B.push_back(0);
  expectRefused(B, "trailing");
  // The kernel name's length claims far more than there is.
  B = Good;
  B[9] = 0x7f;
  expectRefused(B, "truncated");
  // The parameter count (after magic, version, 2 strings, 4 u32, 1 u64).
  size_t CountAt = 4 + 2 + 4 + 4 + 4 + 14 + 16 + 8;
  B = Good;
  B[CountAt + 3] = 0xff;
  expectRefused(B, "exceeds");
  // First parameter: name "a" (4 + 1 bytes), then flag, kind, lanes, access.
  size_t P = CountAt + 4 + 5;
  B = Good;
  B[P] = 2;
  expectRefused(B, "buffer flag");
  B = Good;
  B[P + 1] = 20; // one past the last kind (ue8m0)
  expectRefused(B, "element kind");
  B = Good;
  B[P + 2] = 5;
  expectRefused(B, "line width");
  B = Good;
  B[P + 3] = 3;
  expectRefused(B, "access");
  B = Good;
  B[P + 4] = 7;
  expectRefused(B, "private atomic");
  B = Good;
  B[P + 5] = 4;
  expectRefused(B, "tensor flags");
  // A tensor map rank on a buffer that is not a tensor map.
  B = Good;
  B[P + 6] = 1;
  expectRefused(B, "tensor map rank");
  // A private atomic on a buffer of lines, or on a value, is corrupt too.
  size_t P2 = P + 7 + 4 + 1; // second parameter "b": a buffer of lines
  B = Good;
  B[P2 + 4] = 1;
  expectRefused(B, "private atomic");
  // Tensor flags on a value ("n", the fifth parameter), a tensor map rank
  // past 5.
  size_t P5 = P2 + 7 + 4 + 1 + 7 + 4 + 1 + 7 + 4 + 1;
  B = Good;
  B[P5 + 5] = 2;
  expectRefused(B, "tensor flags");
  size_t P8 = P5 + 7 + 4 + 1 + 7 + 4 + 1 + 7 + 4 + 1;
  B = Good;
  B[P8 + 6] = 6;
  expectRefused(B, "tensor map rank");
  // Version 4 whose parameters use no tensor: written as version 2 only.
  size_t P7 = P8 - (7 + 4 + 1);
  B = Good;
  B[P7 + 5] = 0;
  B[P8 + 5] = 0;
  B[P8 + 6] = 0;
  expectRefused(B, "version 4 without a tensor parameter");
}

TEST(CubeMetadata, RandomBytesNeverCrash) {
  std::vector<uint8_t> Good = sample().serialize();
  uint32_t Seed = 12345;
  auto Next = [&] { return Seed = Seed * 1664525u + 1013904223u; };
  for (int Round = 0; Round < 20000; ++Round) {
    std::vector<uint8_t> B = Good;
    for (int K = 0, E = 1 + Next() % 4; K < E; ++K)
      B[Next() % B.size()] = static_cast<uint8_t>(Next() >> 24);
    if (Next() % 4 == 0)
      B.resize(Next() % (B.size() + 1));
    auto R = CubeMetadata::deserialize(B);
    if (R)
      EXPECT_EQ(R->serialize(), B); // what decodes is canonical
    else
      llvm::consumeError(R.takeError());
  }
  for (int Round = 0; Round < 2000; ++Round) {
    std::vector<uint8_t> B(Next() % 64);
    for (uint8_t &X : B)
      X = static_cast<uint8_t>(Next() >> 24);
    auto R = CubeMetadata::deserialize(B);
    if (!R)
      llvm::consumeError(R.takeError());
  }
}

TEST(CpuVariant, NamesAndKeys) {
  // The names of the existing variants are store keys: they must not change.
  EXPECT_EQ(CpuVariant{}.str(), "checked-a64");
  EXPECT_EQ((CpuVariant{false, 16}.str()), "unchecked-a16");
  CpuVariant Alias{true, 1, /*MayAlias=*/true};
  EXPECT_EQ(Alias.str(), "checked-a1-alias");
  EXPECT_EQ((CpuVariant{false, 64, true}.str()), "unchecked-a64-alias");
  // MayAlias makes another artifact: another key, another hash.
  CpuVariant NoAlias{true, 1};
  EXPECT_NE(Alias, NoAlias);
  KernelId K("k-0123456789abcdef", 0x0123456789abcdefull);
  ArtifactId<CpuVariant> A{K, Alias}, B{K, NoAlias};
  EXPECT_FALSE(A == B);
  EXPECT_NE(A.stableHash(), B.stableHash());
  EXPECT_NE(std::hash<ArtifactId<CpuVariant>>()(A),
            std::hash<ArtifactId<CpuVariant>>()(B));
}

} // namespace
