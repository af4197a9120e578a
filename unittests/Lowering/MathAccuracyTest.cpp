//===- MathAccuracyTest.cpp - Measured ulp error of f32 math
//---------------===//
//
// Every f32 math operation is run over many inputs through a real kernel and
// compared with a double-precision reference. The maximum error in ulps (of
// the correctly rounded result) is printed as the table in docs/Lowering.md;
// the contract is at most 4 ulp, and exact for sqrt (and recip, a division).
//
//===----------------------------------------------------------------------===//

#include "OpRunner.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>

using namespace kiln;
using namespace kiln::test;

namespace {

/// |Got - Ref| in units of the last place of Ref rounded to f32.
double ulpError(float Got, double Ref) {
  if (std::isnan(Ref) || std::isnan(Got))
    return std::isnan(Ref) && std::isnan(Got) ? 0 : 1e9;
  if (std::isinf(Ref) || std::isinf(Got)) {
    if (float(Ref) == Got)
      return 0;
    // Ref beyond FLT_MAX: measure against FLT_MAX's ulp.
    if (std::isinf(Got) && std::fabs(Ref) >= 3.4028234663852886e38)
      return 0;
    return 1e9;
  }
  double R = std::fabs(Ref);
  int E;
  std::frexp(std::max(R, 1.1754943508222875e-38),
             &E); // R = m * 2^E, m in [0.5, 1)
  double Ulp = std::ldexp(1.0, E - 24);
  return std::fabs(double(Got) - Ref) / Ulp;
}

struct MathCase {
  const char *Op;
  std::function<double(double, double)> Ref;
  float Lo, Hi;   ///< first operand range
  float Lo2 = 0, Hi2 = 0; ///< second operand range (binary only)
  bool Binary = false;
  bool LogScale = false;
  double Bound = 4.0;
  /// Through kiln::optimizeModule at O3 (the harness's default JIT path
  /// skips it), where f32 exp is inline (InlineExp.h) with AVX-512 and on
  /// AArch64.
  bool O3 = false;
};

class LoweringMath : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::printf("| operation | inputs | range | max ulp |\n| --- | --- | --- | "
                "--- |\n");
  }
};

void runCase(const MathCase &C) {
  const size_t N = 1 << 17;
  std::mt19937 G(1234);
  std::uniform_real_distribution<double> D(0.0, 1.0);
  auto Pick = [&](float Lo, float Hi) {
    if (C.LogScale) {
      double L = std::log(double(Lo)), H = std::log(double(Hi));
      return float(std::exp(L + (H - L) * D(G)));
    }
    return float(Lo + (double(Hi) - Lo) * D(G));
  };
  std::vector<float> A(N), Bv;
  for (auto &X : A)
    X = Pick(C.Lo, C.Hi);
  if (C.Binary) {
    Bv.resize(N);
    for (auto &X : Bv)
      X = float(C.Lo2 + (double(C.Hi2) - C.Lo2) * D(G));
  }
  CpuVariant V;
  V.BufferAlignment = 4; // std::vector's, not 64: O3 vectorises the loads
  auto Out = runOp<float>(C.Op, "f32", "f32", A, Bv, V, C.O3);
  double Max = 0;
  size_t Worst = 0;
  for (size_t I = 0; I < N; ++I) {
    double Ref = C.Ref(A[I], C.Binary ? double(Bv[I]) : 0.0);
    double E = ulpError(Out[I], Ref);
    if (E > Max) {
      Max = E;
      Worst = I;
    }
  }
  std::printf("| %s%s | %zu | [%g, %g]%s | %.2f |\n", C.Op, C.O3 ? " (O3)" : "",
              N, double(C.Lo), double(C.Hi),
              C.Binary ? " x second operand" : "", Max);
  EXPECT_LE(Max, C.Bound) << C.Op << " worst at " << A[Worst] << " got "
                          << Out[Worst];
}

TEST_F(LoweringMath, F32WithinFourUlp) {
  using std::function;
  auto U = [](double (*F)(double)) {
    return [F](double X, double) { return F(X); };
  };
  std::vector<MathCase> Cases = {
      {"sqrt", U(std::sqrt), 0, 1e30f, 0, 0, false, false,
       0.5}, // correctly rounded
      {"rsqrt", [](double X, double) { return 1.0 / std::sqrt(X); }, 1e-30f,
       1e30f, 0, 0, false, true},
      {"recip", [](double X, double) { return 1.0 / X; }, -1e30f, 1e30f, 0, 0,
       false, false, 0.5},
      {"exp", U(std::exp), -87, 88},
      {"exp2", U(std::exp2), -126, 127},
      {"log", U(std::log), 1e-30f, 1e30f, 0, 0, false, true},
      {"log2", U(std::log2), 1e-30f, 1e30f, 0, 0, false, true},
      {"log1p", U(std::log1p), -0.999f, 1e6f},
      {"expm1", U(std::expm1), -20, 88},
      {"sin", U(std::sin), -100, 100},
      {"cos", U(std::cos), -100, 100},
      {"tan", U(std::tan), -100, 100},
      {"tanh", U(std::tanh), -10, 10},
      {"sinh", U(std::sinh), -88, 88},
      {"cosh", U(std::cosh), -88, 88},
      {"asin", U(std::asin), -1, 1},
      {"acos", U(std::acos), -1, 1},
      {"atan", U(std::atan), -1e4f, 1e4f},
      {"erf", U(std::erf), -5, 5},
      {"pow", [](double X, double Y) { return std::pow(X, Y); }, 1e-3f, 100,
       -10, 10, true},
      {"atan2", [](double Y, double X) { return std::atan2(Y, X); }, -100, 100,
       -100, 100, true},
      {"hypot", [](double X, double Y) { return std::hypot(X, Y); }, -1e18f,
       1e18f, -1e18f, 1e18f, true},
  };
  for (const MathCase &C : Cases)
    runCase(C);
}

/// exp beyond the range of the table above, where the inline expansion of
/// InlineExp.h (AVX-512, AArch64; libmvec and libm elsewhere) takes its
/// other paths: results that are subnormal (x below -87.3) or round to 0
/// (below -103.97), overflow to +inf (above 88.72), and the special values,
/// which must be exact.
TEST_F(LoweringMath, ExpF32EdgesSubnormalsAndSpecials) {
  auto Exp = [](double X, double) { return std::exp(X); };
  for (auto [Lo, Hi] : {std::pair{-87.0f, 88.0f}, std::pair{-110.0f, -80.0f},
                        std::pair{80.0f, 95.0f}, std::pair{-1.0f, 1.0f}}) {
    MathCase C{"exp", Exp, Lo, Hi};
    C.O3 = true;
    runCase(C);
  }
  const float Inf = std::numeric_limits<float>::infinity();
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> In = {0.0f,       -0.0f,
                           Inf,        -Inf,
                           NaN,        -NaN,
                           1e30f,      -1e30f,
                           88.72283f,  88.72284f,
                           -103.97f,   -103.98f,
                           -87.33654f, -126.0f * 0.6931472f,
                           1.0f,       -1.0f,
                           0x1p-149f,  -0x1p-149f,
                           0x1p-126f};
  // A whole vector's worth and more of each, so that the vectorised loop
  // and its scalar remainder both see them.
  std::vector<float> A;
  for (int Rep = 0; Rep < 40; ++Rep)
    A.insert(A.end(), In.begin(), In.end());
  CpuVariant V;
  V.BufferAlignment = 4;
  auto Out = runOp<float>("exp", "f32", "f32", A, {}, V, /*OptimizeO3=*/true);
  ASSERT_EQ(Out.size(), A.size());
  for (size_t I = 0; I < A.size(); ++I) {
    double Ref = std::exp(double(A[I]));
    if (std::isnan(A[I])) {
      EXPECT_TRUE(std::isnan(Out[I])) << "exp(NaN) gave " << Out[I];
      continue;
    }
    if (std::isinf(A[I]) || A[I] == 0.0f) {
      EXPECT_EQ(Out[I], float(Ref)) << "exp(" << A[I] << ")";
      EXPECT_FALSE(std::signbit(Out[I])) << "exp(" << A[I] << ")";
      continue;
    }
    EXPECT_LE(ulpError(Out[I], Ref), 4.0)
        << "exp(" << A[I] << ") gave " << Out[I] << ", want " << Ref;
  }
}

} // namespace
