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
  auto Out = runOp<float>(C.Op, "f32", "f32", A, Bv);
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
  std::printf("| %s | %zu | [%g, %g]%s | %.2f |\n", C.Op, N, double(C.Lo),
              double(C.Hi), C.Binary ? " x second operand" : "", Max);
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

} // namespace
