//===- Minifloat.cpp - The minifloat storage formats ----------------------===//

#include "kiln/IR/Minifloat.h"

#include <cmath>

using namespace kiln;

const MinifloatFormat &kiln::minifloatFormat(ScalarKind Kind) {
  //                                  Bits E  M  Bias  Signed Inf    NaN    Max   NaN code
  static const MinifloatFormat E4M3 = {8, 4, 3, 7, true, false, true, 0x7E, 0x7F};
  static const MinifloatFormat E5M2 = {8, 5, 2, 15, true, true, true, 0x7B, 0x7E};
  static const MinifloatFormat E2M3 = {6, 2, 3, 1, true, false, false, 0x1F, 0};
  static const MinifloatFormat E3M2 = {6, 3, 2, 3, true, false, false, 0x1F, 0};
  static const MinifloatFormat E2M1 = {4, 2, 1, 1, true, false, false, 0x07, 0};
  static const MinifloatFormat E8M0 = {8, 8, 0, 127, false, false, true, 0xFE, 0xFF};
  switch (Kind) {
  case ScalarKind::F8E4M3:
    return E4M3;
  case ScalarKind::F8E5M2:
    return E5M2;
  case ScalarKind::F6E2M3:
    return E2M3;
  case ScalarKind::F6E3M2:
    return E3M2;
  case ScalarKind::UE8M0:
    return E8M0;
  default:
    return E2M1;
  }
}

double kiln::decodeMinifloat(uint64_t Code, ScalarKind Kind) {
  const MinifloatFormat &F = minifloatFormat(Kind);
  Code &= (uint64_t(1) << F.Bits) - 1;
  unsigned Magnitude = F.Signed ? Code & ((1u << (F.Bits - 1)) - 1) : Code;
  bool Negative = F.Signed && (Code >> (F.Bits - 1)) != 0;
  unsigned Exponent = Magnitude >> F.MantissaBits;
  unsigned Fraction = Magnitude & ((1u << F.MantissaBits) - 1);
  double Value;
  unsigned TopExponent = (1u << F.ExponentBits) - 1;
  if (F.HasNaN && !F.Signed && Magnitude == F.NaNCode) {
    Value = std::nan("");
  } else if (F.HasInfinity && Exponent == TopExponent) {
    Value = Fraction ? std::nan("") : INFINITY;
  } else if (F.HasNaN && !F.HasInfinity && F.Signed &&
             Magnitude == F.NaNCode) {
    Value = std::nan("");
  } else if (Exponent == 0 && F.MantissaBits != 0) {
    Value = std::ldexp(double(Fraction), 1 - F.Bias - int(F.MantissaBits));
  } else {
    Value = std::ldexp(double((1u << F.MantissaBits) | Fraction),
                       int(Exponent) - F.Bias - int(F.MantissaBits));
  }
  return Negative ? -Value : Value;
}

uint8_t kiln::encodeMinifloat(double Value, ScalarKind Kind) {
  const MinifloatFormat &F = minifloatFormat(Kind);
  if (!F.Signed) { // ue8m0: round up to a power of two
    if (std::isnan(Value))
      return F.NaNCode;
    if (!(Value > 0))
      return 0;
    if (std::isinf(Value)) // frexp has no exponent for it
      return F.MaxCode;
    int E;
    double M = std::frexp(Value, &E); // Value = M * 2^E, M in [0.5, 1)
    int Code = (M == 0.5 ? E - 1 : E) + F.Bias;
    return uint8_t(Code < 0 ? 0 : Code > F.MaxCode ? F.MaxCode : Code);
  }
  uint8_t Sign = uint8_t(1u << (F.Bits - 1));
  if (std::isnan(Value))
    return F.HasNaN ? uint8_t(F.NaNCode | (std::signbit(Value) ? Sign : 0))
                    : F.MaxCode;
  uint8_t SignBit = std::signbit(Value) ? Sign : 0;
  double A = std::fabs(Value);
  if (A > decodeMinifloat(F.MaxCode, Kind)) // infinities included
    return F.MaxCode | SignBit;
  int MinExponent = 1 - F.Bias;
  int Exponent = MinExponent;
  if (A >= std::ldexp(1.0, MinExponent)) {
    int E;
    std::frexp(A, &E);
    Exponent = E - 1;
  }
  // The step of the values at this exponent: a power of two, so that the
  // division is exact and nearbyint rounds to nearest even.
  double Step = std::ldexp(1.0, Exponent - int(F.MantissaBits));
  double N = std::nearbyint(A / Step);
  double Rounded = N * Step;
  if (Rounded < std::ldexp(1.0, MinExponent)) // a subnormal: its fraction
    return uint8_t(unsigned(N) | SignBit);
  int E;
  std::frexp(Rounded, &E);
  unsigned Biased = unsigned(E - 1 + F.Bias);
  unsigned Fraction =
      unsigned(std::ldexp(Rounded, -(E - 1) + int(F.MantissaBits))) -
      (1u << F.MantissaBits);
  return uint8_t(((Biased << F.MantissaBits) | Fraction) | SignBit);
}
