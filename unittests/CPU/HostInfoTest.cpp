//===- HostInfoTest.cpp - Host CPU description and fingerprint ------------===//

#include "kiln/CPU/HostInfo.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace kiln;

TEST(HostInfo, ComputedOnceAndStable) {
  const HostInfo &A = hostInfo();
  const HostInfo &B = hostInfo();
  EXPECT_EQ(&A, &B);
  EXPECT_FALSE(A.Triple.empty());
  EXPECT_FALSE(A.CPU.empty());
  EXPECT_FALSE(A.Features.empty());
  EXPECT_EQ(A.fingerprint(), B.fingerprint());
  EXPECT_EQ(A.fingerprint().size(), 16u);
  std::string F = A.fingerprint();
  EXPECT_TRUE(std::all_of(F.begin(), F.end(), [](char C) {
    return std::isxdigit(C);
  })) << F;
}

TEST(HostInfo, FeaturesSortedAndSigned) {
  const HostInfo &H = hostInfo();
  for (size_t I = 0; I < H.Features.size(); ++I) {
    ASSERT_GE(H.Features[I].size(), 2u);
    EXPECT_TRUE(H.Features[I][0] == '+' || H.Features[I][0] == '-');
    if (I) {
      EXPECT_LT(H.Features[I - 1].substr(1), H.Features[I].substr(1));
    }
  }
  EXPECT_EQ(H.featureString().find(",,"), std::string::npos);
}

TEST(HostInfo, FingerprintCoversEveryField) {
  HostInfo H = hostInfo();
  std::string Base = H.fingerprint();
  HostInfo Other = H;
  Other.CPU += "x";
  EXPECT_NE(Other.fingerprint(), Base);
  Other = H;
  Other.Features.back()[0] = Other.Features.back()[0] == '+' ? '-' : '+';
  EXPECT_NE(Other.fingerprint(), Base);
  Other = H;
  Other.LLVMVersion = "0.0.0";
  EXPECT_NE(Other.fingerprint(), Base);
  Other = H;
  Other.Triple = H.Triple == "aarch64-unknown-linux-gnu"
                     ? "x86_64-pc-linux-gnu"
                     : "aarch64-unknown-linux-gnu";
  EXPECT_NE(Other.fingerprint(), Base);
  Other = H;
  Other.Details += "sve-vector-bits=1024";
  EXPECT_NE(Other.fingerprint(), Base);
  // Moving a character between fields changes the hash too.
  Other = H;
  Other.Triple += Other.CPU.substr(0, 1);
  Other.CPU = Other.CPU.substr(1);
  EXPECT_NE(Other.fingerprint(), Base);
}

TEST(HostInfo, DescriptionIsReadable) {
  const HostInfo &H = hostInfo();
  std::string D = H.description();
  EXPECT_NE(D.find("cpu: " + H.CPU), std::string::npos);
  EXPECT_NE(D.find(H.fingerprint()), std::string::npos);
  EXPECT_NE(D.find(H.LLVMVersion), std::string::npos);
}

TEST(HostInfo, HasFeatureMatchesTheList) {
  const HostInfo &H = hostInfo();
  for (const std::string &F : H.Features)
    EXPECT_EQ(H.hasFeature(F.substr(1)), F[0] == '+') << F;
  EXPECT_FALSE(H.hasFeature("no-such-feature"));
}

TEST(HostInfo, MissingFeatureNamesTheFirstOneTheHostLacks) {
  const HostInfo &H = hostInfo();
  EXPECT_EQ(H.missingFeature(""), "");
  EXPECT_EQ(H.missingFeature("+no-such-feature-xyz"), "+no-such-feature-xyz");
  EXPECT_EQ(H.missingFeature("-no-such-feature-xyz"), "");
  std::string Enabled;
  for (const std::string &F : H.Features)
    if (F[0] == '+')
      Enabled += (Enabled.empty() ? "" : ",") + F;
  EXPECT_EQ(H.missingFeature(Enabled), "");
  EXPECT_EQ(H.missingFeature(Enabled + ", +no-such-feature-xyz"),
            "+no-such-feature-xyz");
}
