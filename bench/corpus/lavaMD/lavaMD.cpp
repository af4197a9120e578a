//===- lavaMD.cpp - Rodinia's lavaMD in the foreign-kernel corpus ---------===//
//
// Potentials and forces between particles in a 3-D grid of boxes, each
// particle interacting with the particles of its own box and of the (up to
// 26) neighbouring boxes, after Rodinia's opencl/lavaMD: one launch of
// kernel_gpu_opencl, one work-group of 128 per box of 100 particles.
//
// Inputs as Rodinia's main.c makes them: alpha = 0.5, positions, v and
// charges drawn from {0.1, 0.2, ..., 1.0}, the boxes and neighbour lists
// built by the same loops (z, y, x; neighbours in l, m, n order). The
// OpenCL host code has no reference computation; check() runs a serial
// version of the same loops here (in double, so the tolerance covers the
// float sums of up to 2700 terms in the kernels).
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int NumberParPerBox = 100;
constexpr uint32_t NumberThreads = 128;

// The OpenCL structs, with the same layout (OpenCL's long is 64 bits).
struct FourVector {
  float V, X, Y, Z;
};
struct NeiStr {
  int32_t X, Y, Z;
  int32_t Number;
  int64_t Offset;
};
struct BoxStr {
  int32_t X, Y, Z;
  int32_t Number;
  int64_t Offset;
  int32_t Nn;
  NeiStr Nei[26];
};
static_assert(sizeof(BoxStr) == 656, "box_str must match the OpenCL layout");

class LavaMDInstance : public corpus::Instance {
public:
  explicit LavaMDInstance(int Size) : Boxes1d(Size == 0 ? 2 : 5) {
    NumberBoxes = int64_t(Boxes1d) * Boxes1d * Boxes1d;
    SpaceElem = NumberBoxes * NumberParPerBox;
    makeBoxes();
    corpus::Random R(7);
    Rv.resize(SpaceElem);
    for (FourVector &P : Rv) {
      P.V = float((R.below(10) + 1) / 10.0);
      P.X = float((R.below(10) + 1) / 10.0);
      P.Y = float((R.below(10) + 1) / 10.0);
      P.Z = float((R.below(10) + 1) / 10.0);
    }
    Qv.resize(SpaceElem);
    for (float &Q : Qv)
      Q = float((R.below(10) + 1) / 10.0);
  }

  void setup(corpus::Backend &B) override {
    BoxBuf = B.create(Box);
    RvBuf = B.create(Rv);
    QvBuf = B.create(Qv);
    FvBuf = B.create(SpaceElem * sizeof(FourVector)); // zeros
  }

  void run(corpus::Backend &B) override {
    using corpus::Arg;
    B.launch("kernel_gpu_opencl", corpus::Dim3{uint32_t(NumberBoxes)},
             corpus::Dim3{NumberThreads},
             {Arg::f32(Alpha), Arg::i64(NumberBoxes), Arg::buf(BoxBuf),
              Arg::buf(RvBuf), Arg::buf(QvBuf), Arg::buf(FvBuf)});
    B.finish();
  }

  bool check(corpus::Backend &B, std::string &Why) override {
    std::vector<float> Got = B.read<float>(FvBuf, SpaceElem * 4);
    std::vector<float> Want = reference();
    // The forces' x, y and z sum terms of both signs: the absolute
    // tolerance is scaled by the largest potential, v, a sum of positive
    // terms.
    float MaxV = 0;
    for (int64_t I = 0; I < SpaceElem; ++I)
      MaxV = std::fmax(MaxV, std::fabs(Want[4 * I]));
    return corpus::closeEnough(Got.data(), Want.data(), Got.size(), 1e-4,
                               5e-5 * MaxV, Why);
  }

  unsigned launches() const override { return 1; }

private:
  // Rodinia's box and neighbour loops.
  void makeBoxes() {
    Box.resize(NumberBoxes);
    int Nh = 0;
    for (int I = 0; I < Boxes1d; ++I)
      for (int J = 0; J < Boxes1d; ++J)
        for (int K = 0; K < Boxes1d; ++K) {
          BoxStr &H = Box[Nh];
          H = BoxStr{};
          H.X = K;
          H.Y = J;
          H.Z = I;
          H.Number = Nh;
          H.Offset = int64_t(Nh) * NumberParPerBox;
          H.Nn = 0;
          for (int L = -1; L < 2; ++L)
            for (int M = -1; M < 2; ++M)
              for (int N = -1; N < 2; ++N) {
                bool Inside = I + L >= 0 && J + M >= 0 && K + N >= 0 &&
                              I + L < Boxes1d && J + M < Boxes1d &&
                              K + N < Boxes1d;
                if (!Inside || (L == 0 && M == 0 && N == 0))
                  continue;
                NeiStr &Nb = H.Nei[H.Nn];
                Nb.X = K + N;
                Nb.Y = J + M;
                Nb.Z = I + L;
                Nb.Number = Nb.Z * Boxes1d * Boxes1d + Nb.Y * Boxes1d + Nb.X;
                Nb.Offset = int64_t(Nb.Number) * NumberParPerBox;
                ++H.Nn;
              }
          ++Nh;
        }
  }

  // The kernel's computation, box by box, in double.
  std::vector<float> reference() const {
    std::vector<double> Fv(SpaceElem * 4, 0.0);
    double A2 = 2.0 * Alpha * Alpha;
    for (int64_t Bx = 0; Bx < NumberBoxes; ++Bx) {
      int64_t FirstI = Box[Bx].Offset;
      for (int K = 0; K < 1 + Box[Bx].Nn; ++K) {
        int64_t Pointer = K == 0 ? Bx : Box[Bx].Nei[K - 1].Number;
        int64_t FirstJ = Box[Pointer].Offset;
        for (int I = 0; I < NumberParPerBox; ++I) {
          const FourVector &A = Rv[FirstI + I];
          double *F = &Fv[4 * (FirstI + I)];
          for (int J = 0; J < NumberParPerBox; ++J) {
            const FourVector &Bv = Rv[FirstJ + J];
            double R2 = double(A.V) + Bv.V -
                        (double(A.X) * Bv.X + double(A.Y) * Bv.Y +
                         double(A.Z) * Bv.Z);
            double Vij = std::exp(-A2 * R2);
            double Fs = 2 * Vij;
            double Q = Qv[FirstJ + J];
            F[0] += Q * Vij;
            F[1] += Q * Fs * (double(A.X) - Bv.X);
            F[2] += Q * Fs * (double(A.Y) - Bv.Y);
            F[3] += Q * Fs * (double(A.Z) - Bv.Z);
          }
        }
      }
    }
    return std::vector<float>(Fv.begin(), Fv.end());
  }

  int Boxes1d;
  int64_t NumberBoxes, SpaceElem;
  const float Alpha = 0.5f;
  std::vector<BoxStr> Box;
  std::vector<FourVector> Rv;
  std::vector<float> Qv;
  corpus::Buf BoxBuf, RvBuf, QvBuf, FvBuf;
};

// The native kernel: one parallel loop over the boxes (the work-groups);
// each does the work-group's loops over neighbour boxes and particle pairs.
void lavaMDNative(const corpus::NativeLaunch &L) {
  float Alpha = L.value<float>(0);
  int64_t NumberBoxes = L.value<int64_t>(1);
  const BoxStr *Box = L.ptr<BoxStr>(2);
  const FourVector *Rv = L.ptr<FourVector>(3);
  const float *Qv = L.ptr<float>(4);
  FourVector *Fv = L.ptr<FourVector>(5);
  float A2 = 2 * Alpha * Alpha;
#pragma omp parallel for
  for (int64_t Bx = 0; Bx < NumberBoxes; ++Bx) {
    int FirstI = int(Box[Bx].Offset);
    for (int K = 0; K < 1 + Box[Bx].Nn; ++K) {
      int Pointer = K == 0 ? int(Bx) : Box[Bx].Nei[K - 1].Number;
      int FirstJ = int(Box[Pointer].Offset);
      for (int I = 0; I < NumberParPerBox; ++I) {
        const FourVector &A = Rv[FirstI + I];
        for (int J = 0; J < NumberParPerBox; ++J) {
          const FourVector &Bv = Rv[FirstJ + J];
          float R2 = A.V + Bv.V - (A.X * Bv.X + A.Y * Bv.Y + A.Z * Bv.Z);
          float U2 = A2 * R2;
          float Vij = std::exp(-U2);
          float Fs = 2 * Vij;
          float Fxij = Fs * (A.X - Bv.X);
          float Fyij = Fs * (A.Y - Bv.Y);
          float Fzij = Fs * (A.Z - Bv.Z);
          Fv[FirstI + I].V += Qv[FirstJ + J] * Vij;
          Fv[FirstI + I].X += Qv[FirstJ + J] * Fxij;
          Fv[FirstI + I].Y += Qv[FirstJ + J] * Fyij;
          Fv[FirstI + I].Z += Qv[FirstJ + J] * Fzij;
        }
      }
    }
  }
}

} // namespace

KILN_CORPUS_NATIVE(kernel_gpu_opencl, lavaMDNative);

KILN_CORPUS_BENCHMARK(lavaMD,
                      "particle forces over 5x5x5 boxes of 100 particles "
                      "(neighbour boxes included), 128-wide work-groups",
                      [](int Size) {
                        return std::make_unique<LavaMDInstance>(Size);
                      });
