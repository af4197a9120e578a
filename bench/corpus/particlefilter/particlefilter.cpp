//===- particlefilter.cpp - Rodinia's particlefilter in the corpus --------===//
//
// A particle filter tracking a disk moving through a noisy synthetic video,
// after Rodinia's opencl/particlefilter, single precision: per frame the
// host launches likelihood_kernel, sum_kernel and the three kernels of
// Rodinia's normalize_weights_kernel (normalize_weights_kernel,
// normalize_cdf_kernel, normalize_offsets_kernel: its steps, which Rodinia
// separates by a fence that orders one work-group only, each a launch
// here; particlefilter.kiln says why), reads back the positions and
// weights to estimate the object's position, then launches
// find_index_kernel (resampling).
//
// Inputs as Rodinia's host makes them: the video (128 x 128, 10 frames) by
// its videoSequence (a disk of radius 5 on a moving point, background 100,
// foreground 228, Gaussian noise from its LCG on seed[0]), seeds i + 1, the
// disk's offsets, weights 1/N and every particle at the frame's centre.
//
// What check() compares: Rodinia's OpenCL host has no reference, and the
// positions are a random walk that float rounding (exp, log, the order of
// the weight sums) moves from system to system, so check() verifies each
// step of the last frame against serial recomputations here from what the
// step read: the seeds (exactly), the indices and likelihoods from the
// final positions, the weights and their sum, the CDF (the running sum of
// the weights), the offsets u (exactly, from u[0]), and that each
// resampled particle is the one find_index must pick from the final CDF
// and u (exactly).
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr uint32_t ThreadsPerBlock = 512;
constexpr int IszX = 128, IszY = 128, Nfr = 10;

// Rodinia's LCG and Box-Muller, as its kernels compute them.
float randu(int32_t *Seed, int Index) {
  int32_t Num = int32_t(uint32_t(1103515245) * uint32_t(Seed[Index]) + 12345u);
  Seed[Index] = Num % INT_MAX;
  return std::fabs(Seed[Index] / float(INT_MAX));
}

float randn(int32_t *Seed, int Index) {
  float Pi = 3.14159265358979323846f;
  float U = randu(Seed, Index);
  float V = randu(Seed, Index);
  float Cosine = std::cos(2 * Pi * V);
  float Rt = -2 * std::log(U);
  return std::sqrt(Rt) * Cosine;
}

// Rodinia's host version of randn (its PI is a double).
float hostRandn(int32_t *Seed, int Index) {
  float U = randu(Seed, Index);
  float V = randu(Seed, Index);
  float Cosine = float(std::cos(2 * 3.1415926535897932 * V));
  float Rt = -2 * std::log(U);
  return std::sqrt(Rt) * Cosine;
}

// dev_round_float/roundFloat: both branches return (float)(int)value.
float roundFloat(float Value) { return float(int(Value)); }

// The likelihood of particle Id at frame K: fills Ind and returns the
// likelihood, in the kernel's order of operations.
float likelihoodOf(float X, float Y, const int32_t *Objxy, int CountOnes,
                   int MaxSize, int K, const uint8_t *I, int32_t *Ind) {
  for (int J = 0; J < CountOnes; ++J) {
    int IndX = int(roundFloat(X) + float(Objxy[J * 2 + 1]));
    int IndY = int(roundFloat(Y) + float(Objxy[J * 2]));
    int32_t V = int32_t(uint32_t(IndX) * uint32_t(IszY) * uint32_t(Nfr) +
                        uint32_t(IndY) * uint32_t(Nfr) + uint32_t(K));
    Ind[J] = V < 0 ? -V : V;
    if (Ind[J] >= MaxSize)
      Ind[J] = 0;
  }
  float Sum = 0.0f;
  for (int J = 0; J < CountOnes; ++J)
    Sum += (std::pow(float(I[Ind[J]] - 100), 2.0f) -
            std::pow(float(I[Ind[J]] - 228), 2.0f)) /
           50.0;
  return Sum / CountOnes - 300;
}

class ParticleFilterInstance : public corpus::Instance {
public:
  explicit ParticleFilterInstance(int Size)
      : Nparticles(Size == 0 ? 600 : 8192) {
    MaxSize = IszX * IszY * Nfr;
    Seed0.resize(Nparticles);
    for (int I = 0; I < Nparticles; ++I)
      Seed0[I] = I + 1;
    Video.assign(MaxSize, 0);
    videoSequence();
    makeDisk();
  }

  void setup(corpus::Backend &B) override {
    float Xe = roundFloat(IszY / 2.0), Ye = roundFloat(IszX / 2.0);
    std::vector<float> Weights(Nparticles, 1 / float(Nparticles));
    ArrayX = B.create(Nparticles * sizeof(float));
    ArrayY = B.create(Nparticles * sizeof(float));
    Xj = B.create(std::vector<float>(Nparticles, Xe));
    Yj = B.create(std::vector<float>(Nparticles, Ye));
    CDF = B.create(Nparticles * sizeof(float));
    U = B.create(Nparticles * sizeof(float));
    LikelihoodBuf = B.create(Nparticles * sizeof(float));
    WeightsBuf = B.create(Weights);
    IBuf = B.create(Video);
    ObjxyBuf = B.create(Objxy);
    Ind = B.create(size_t(CountOnes) * Nparticles * sizeof(int32_t));
    SeedBuf = B.create(Seed0);
    PartialSums = B.create((Nparticles + 1) * sizeof(float));
  }

  void run(corpus::Backend &B) override {
    using corpus::Arg;
    Launches = 0;
    corpus::Dim3 Cubes{(uint32_t(Nparticles) + ThreadsPerBlock - 1) /
                       ThreadsPerBlock};
    corpus::Dim3 Cube{ThreadsPerBlock};
    std::vector<float> X(Nparticles), Y(Nparticles), W(Nparticles);
    for (int K = 1; K < Nfr; ++K) {
      B.launch("likelihood_kernel", Cubes, Cube,
               {Arg::buf(ArrayX), Arg::buf(ArrayY), Arg::buf(Xj),
                Arg::buf(Yj), Arg::buf(CDF), Arg::buf(Ind),
                Arg::buf(ObjxyBuf), Arg::buf(LikelihoodBuf), Arg::buf(IBuf),
                Arg::buf(U), Arg::buf(WeightsBuf), Arg::i32(Nparticles),
                Arg::i32(CountOnes), Arg::i32(MaxSize), Arg::i32(K),
                Arg::i32(IszY), Arg::i32(Nfr), Arg::buf(SeedBuf),
                Arg::buf(PartialSums)});
      B.launch("sum_kernel", Cubes, Cube,
               {Arg::buf(PartialSums), Arg::i32(Nparticles)});
      B.launch("normalize_weights_kernel", Cubes, Cube,
               {Arg::buf(WeightsBuf), Arg::i32(Nparticles),
                Arg::buf(PartialSums)});
      B.launch("normalize_cdf_kernel", Cubes, Cube,
               {Arg::buf(WeightsBuf), Arg::i32(Nparticles), Arg::buf(CDF),
                Arg::buf(U), Arg::buf(SeedBuf)});
      B.launch("normalize_offsets_kernel", Cubes, Cube,
               {Arg::i32(Nparticles), Arg::buf(U)});
      // The host's estimate of the object's position at this frame.
      B.read(ArrayX, X.data(), Nparticles * sizeof(float));
      B.read(ArrayY, Y.data(), Nparticles * sizeof(float));
      B.read(WeightsBuf, W.data(), Nparticles * sizeof(float));
      Xe = Ye = 0;
      for (int I = 0; I < Nparticles; ++I) {
        Xe += X[I] * W[I];
        Ye += Y[I] * W[I];
      }
      B.launch("find_index_kernel", Cubes, Cube,
               {Arg::buf(ArrayX), Arg::buf(ArrayY), Arg::buf(CDF),
                Arg::buf(U), Arg::buf(Xj), Arg::buf(Yj), Arg::buf(WeightsBuf),
                Arg::i32(Nparticles)});
      Launches += 6;
    }
    B.finish();
  }

  bool check(corpus::Backend &B, std::string &Why) override;

  unsigned launches() const override { return Launches; }

private:
  void videoSequence();
  void makeDisk();

  int Nparticles, MaxSize, CountOnes = 0;
  std::vector<int32_t> Seed0; // the seeds the filter starts from
  std::vector<uint8_t> Video;
  std::vector<int32_t> Objxy;
  float Xe = 0, Ye = 0;
  corpus::Buf ArrayX, ArrayY, Xj, Yj, CDF, U, LikelihoodBuf, WeightsBuf,
      IBuf, ObjxyBuf, Ind, SeedBuf, PartialSums;
  unsigned Launches = 0;
};

// Rodinia's videoSequence: the moving point, dilated by a disk of radius 5,
// then background/foreground intensities and noise (which advances
// seed[0]).
void ParticleFilterInstance::videoSequence() {
  auto At = [](int X, int Y, int Z) { return X * IszY * Nfr + Y * Nfr + Z; };
  int X0 = int(roundFloat(IszY / 2.0)), Y0 = int(roundFloat(IszX / 2.0));
  Video[At(X0, Y0, 0)] = 1;
  for (int K = 1; K < Nfr; ++K) {
    int Xk = std::abs(X0 + (K - 1)), Yk = std::abs(Y0 - 2 * (K - 1));
    int Pos = Yk * IszY * Nfr + Xk * Nfr + K;
    if (Pos >= MaxSize)
      Pos = 0;
    Video[Pos] = 1;
  }
  // imdilate_disk with radius 5.
  const int Error = 5;
  std::vector<uint8_t> Dilated(MaxSize, 0);
  for (int Z = 0; Z < Nfr; ++Z)
    for (int X = 0; X < IszX; ++X)
      for (int Y = 0; Y < IszY; ++Y) {
        if (Video[At(X, Y, Z)] != 1)
          continue;
        int StartX = std::max(X - Error, 0), StartY = std::max(Y - Error, 0);
        int EndX = std::min(X + Error, IszX), EndY = std::min(Y + Error, IszY);
        for (int DX = StartX; DX < EndX; ++DX)
          for (int DY = StartY; DY < EndY; ++DY) {
            float Distance = std::sqrt(std::pow(float(DX - X), 2.0f) +
                                       std::pow(float(DY - Y), 2.0f));
            if (Distance < Error)
              Dilated[At(DX, DY, Z)] = 1;
          }
      }
  Video = Dilated;
  for (uint8_t &P : Video)
    P = P == 0 ? 100 : P == 1 ? 228 : P;
  for (int X = 0; X < IszX; ++X)
    for (int Y = 0; Y < IszY; ++Y)
      for (int Z = 0; Z < Nfr; ++Z)
        Video[At(X, Y, Z)] = uint8_t(
            Video[At(X, Y, Z)] + uint8_t(int(5 * hostRandn(Seed0.data(), 0))));
}

// Rodinia's strelDisk and getneighbors: the offsets of a disk of radius 5.
void ParticleFilterInstance::makeDisk() {
  const int Radius = 5, Diameter = Radius * 2 - 1, Center = Radius - 1;
  for (int X = 0; X < Diameter; ++X)
    for (int Y = 0; Y < Diameter; ++Y) {
      float Distance = std::sqrt(std::pow(float(X - Radius + 1), 2.0f) +
                                 std::pow(float(Y - Radius + 1), 2.0f));
      if (Distance < Radius) {
        Objxy.push_back(Y - Center);
        Objxy.push_back(X - Center);
        ++CountOnes;
      }
    }
}

bool ParticleFilterInstance::check(corpus::Backend &B, std::string &Why) {
  int N = Nparticles;
  auto X = B.read<float>(ArrayX, N), Y = B.read<float>(ArrayY, N);
  auto GotXj = B.read<float>(Xj, N), GotYj = B.read<float>(Yj, N);
  auto GotCDF = B.read<float>(CDF, N), GotU = B.read<float>(U, N);
  auto GotL = B.read<float>(LikelihoodBuf, N);
  auto GotW = B.read<float>(WeightsBuf, N);
  auto GotInd = B.read<int32_t>(Ind, size_t(CountOnes) * N);
  auto GotSeed = B.read<int32_t>(SeedBuf, N);
  auto GotSums = B.read<float>(PartialSums, 1);
  auto Fail = [&](const std::string &What, int I) {
    Why = What + " at particle " + std::to_string(I);
    return false;
  };

  // Seeds: four draws per particle per frame, one more for seed[0] in
  // normalize_cdf_kernel.
  std::vector<int32_t> Seed = Seed0;
  for (int K = 1; K < Nfr; ++K) {
    for (int I = 0; I < N; ++I)
      for (int D = 0; D < 4; ++D)
        randu(Seed.data(), I);
    randu(Seed.data(), 0);
  }
  for (int I = 0; I < N; ++I)
    if (GotSeed[I] != Seed[I])
      return Fail("seed " + std::to_string(GotSeed[I]) + ", expected " +
                      std::to_string(Seed[I]),
                  I);

  // The last frame's indices and likelihoods, from the final positions.
  std::vector<int32_t> WantInd(CountOnes);
  std::vector<float> WantL(N);
  double Total = 0;
  for (int I = 0; I < N; ++I) {
    WantL[I] = likelihoodOf(X[I], Y[I], Objxy.data(), CountOnes, MaxSize,
                            Nfr - 1, Video.data(), WantInd.data());
    for (int J = 0; J < CountOnes; ++J)
      if (GotInd[size_t(I) * CountOnes + J] != WantInd[J])
        return Fail("ind[" + std::to_string(J) + "] " +
                        std::to_string(GotInd[size_t(I) * CountOnes + J]) +
                        ", expected " + std::to_string(WantInd[J]),
                    I);
    Total += std::exp(double(GotL[I])) / N;
  }
  if (!corpus::closeEnough(GotL.data(), WantL.data(), N, 1e-5, 2e-3, Why)) {
    Why = "likelihood: " + Why;
    return false;
  }

  // The weights: (1/N) exp(likelihood) / the sum of them all.
  if (!(std::fabs(GotSums[0] - Total) <= 1e-3 * Total)) {
    Why = "sum of weights " + std::to_string(GotSums[0]) + ", expected " +
          std::to_string(Total);
    return false;
  }
  std::vector<float> WantW(N);
  double WeightSum = 0;
  for (int I = 0; I < N; ++I) {
    WantW[I] = float(std::exp(double(GotL[I])) / N / GotSums[0]);
    WeightSum += GotW[I];
  }
  if (!corpus::closeEnough(GotW.data(), WantW.data(), N, 1e-4, 1e-12, Why)) {
    Why = "weights: " + Why;
    return false;
  }
  if (!(std::fabs(WeightSum - 1) <= 1e-3)) {
    Why = "normalised weights sum to " + std::to_string(WeightSum);
    return false;
  }

  // u[i] = u[0] + i/N, u[0] in [0, 1/N) (OpenCL's single-precision
  // division may be off by 2.5 ulp).
  if (!(GotU[0] >= 0 && GotU[0] < 1 / float(N)))
    return Fail("u " + std::to_string(GotU[0]) + " out of its range", 0);
  for (int I = 0; I < N; ++I) {
    float Want = GotU[0] + float(I) / float(N);
    if (!(std::fabs(GotU[I] - Want) <= 1e-6f * Want))
      return Fail("u " + std::to_string(GotU[I]) + ", expected " +
                      std::to_string(Want),
                  I);
  }

  // The CDF: the running sum of the final weights.
  float Run = 0;
  for (int I = 0; I < N; ++I) {
    Run = I == 0 ? GotW[0] : GotW[I] + Run;
    if (GotCDF[I] != Run)
      return Fail("CDF " + std::to_string(GotCDF[I]) + ", expected " +
                      std::to_string(Run),
                  I);
  }

  // Resampling: particle i takes the first j with CDF[j] >= u[i].
  for (int I = 0; I < N; ++I) {
    int Index = N - 1;
    for (int J = 0; J < N; ++J)
      if (GotCDF[J] >= GotU[I]) {
        Index = J;
        break;
      }
    if (GotXj[I] != X[Index] || GotYj[I] != Y[Index])
      return Fail("resampled particle is not particle " +
                      std::to_string(Index),
                  I);
  }
  if (!std::isfinite(Xe) || !std::isfinite(Ye)) {
    Why = "the position estimate is not finite";
    return false;
  }
  return true;
}

// The native kernels: one parallel loop per launch over the work-groups
// (where the kernel uses local memory and barriers) or the particles.
void likelihoodNative(const corpus::NativeLaunch &L) {
  float *ArrayX = L.ptr<float>(0), *ArrayY = L.ptr<float>(1);
  const float *Xj = L.ptr<float>(2), *Yj = L.ptr<float>(3);
  int32_t *Ind = L.ptr<int32_t>(5);
  const int32_t *Objxy = L.ptr<int32_t>(6);
  float *Likelihood = L.ptr<float>(7);
  const uint8_t *I = L.ptr<uint8_t>(8);
  float *Weights = L.ptr<float>(10);
  int N = L.value<int32_t>(11), CountOnes = L.value<int32_t>(12);
  int MaxSize = L.value<int32_t>(13), K = L.value<int32_t>(14);
  int32_t *Seed = L.ptr<int32_t>(17);
  float *PartialSums = L.ptr<float>(18);
  int Groups = int(L.Cubes.X), Size = int(L.Cube.X);
#pragma omp parallel for
  for (int G = 0; G < Groups; ++G) {
    int End = std::min(N, (G + 1) * Size);
    float Sum = 0;
    for (int Id = G * Size; Id < End; ++Id) {
      Weights[Id] = 1 / float(N);
      ArrayX[Id] = Xj[Id] + 1.0 + 5.0 * randn(Seed, Id);
      ArrayY[Id] = Yj[Id] - 2.0 + 2.0 * randn(Seed, Id);
      Likelihood[Id] =
          likelihoodOf(ArrayX[Id], ArrayY[Id], Objxy, CountOnes, MaxSize, K,
                       I, Ind + size_t(Id) * CountOnes);
      Weights[Id] = Weights[Id] * std::exp(Likelihood[Id]);
      Sum += Weights[Id];
    }
    PartialSums[G] = Sum;
  }
}

// sum_kernel's work is one work-item's loop: a serial loop here.
void sumNative(const corpus::NativeLaunch &L) {
  float *PartialSums = L.ptr<float>(0);
  int N = L.value<int32_t>(1);
  int NumBlocks = int(std::ceil(float(N) / float(L.Cube.X)));
  float Sum = 0;
  for (int X = 0; X < NumBlocks; ++X)
    Sum += PartialSums[X];
  PartialSums[0] = Sum;
}

void normalizeWeightsNative(const corpus::NativeLaunch &L) {
  float *Weights = L.ptr<float>(0);
  int N = L.value<int32_t>(1);
  const float *PartialSums = L.ptr<float>(2);
  int Groups = int(L.Cubes.X), Size = int(L.Cube.X);
#pragma omp parallel for
  for (int G = 0; G < Groups; ++G) {
    int Begin = G * Size, End = std::min(N, (G + 1) * Size);
    float SumWeights = PartialSums[0];
    for (int I = Begin; I < End; ++I)
      Weights[I] = Weights[I] / SumWeights;
  }
}

// normalize_cdf_kernel's work is one work-item's loop: a serial loop here.
void normalizeCdfNative(const corpus::NativeLaunch &L) {
  const float *Weights = L.ptr<float>(0);
  int N = L.value<int32_t>(1);
  float *CDF = L.ptr<float>(2), *U = L.ptr<float>(3);
  int32_t *Seed = L.ptr<int32_t>(4);
  CDF[0] = Weights[0];
  for (int X = 1; X < N; ++X)
    CDF[X] = Weights[X] + CDF[X - 1];
  U[0] = (1 / float(N)) * randu(Seed, 0);
}

void normalizeOffsetsNative(const corpus::NativeLaunch &L) {
  int N = L.value<int32_t>(0);
  float *U = L.ptr<float>(1);
  int Groups = int(L.Cubes.X), Size = int(L.Cube.X);
  // Every work-group reads u[0] (work-group 0 writes it back unchanged):
  // read once, before the loop writes it.
  float U1 = U[0];
#pragma omp parallel for
  for (int G = 0; G < Groups; ++G) {
    int Begin = G * Size, End = std::min(N, (G + 1) * Size);
    for (int I = Begin; I < End; ++I)
      U[I] = U1 + I / float(N);
  }
}

void findIndexNative(const corpus::NativeLaunch &L) {
  const float *ArrayX = L.ptr<float>(0), *ArrayY = L.ptr<float>(1);
  const float *CDF = L.ptr<float>(2), *U = L.ptr<float>(3);
  float *Xj = L.ptr<float>(4), *Yj = L.ptr<float>(5);
  int N = L.value<int32_t>(7);
#pragma omp parallel for
  for (int I = 0; I < N; ++I) {
    int Index = -1;
    for (int X = 0; X < N; ++X)
      if (CDF[X] >= U[I]) {
        Index = X;
        break;
      }
    if (Index == -1)
      Index = N - 1;
    Xj[I] = ArrayX[Index];
    Yj[I] = ArrayY[Index];
  }
}

} // namespace

KILN_CORPUS_NATIVE(likelihood_kernel, likelihoodNative);
KILN_CORPUS_NATIVE(sum_kernel, sumNative);
KILN_CORPUS_NATIVE(normalize_weights_kernel, normalizeWeightsNative);
KILN_CORPUS_NATIVE(normalize_cdf_kernel, normalizeCdfNative);
KILN_CORPUS_NATIVE(normalize_offsets_kernel, normalizeOffsetsNative);
KILN_CORPUS_NATIVE(find_index_kernel, findIndexNative);

KILN_CORPUS_BENCHMARK(particlefilter,
                      "particle filter, 8192 particles over a 128x128 video "
                      "of 10 frames, 512-wide work-groups",
                      [](int Size) {
                        return std::make_unique<ParticleFilterInstance>(Size);
                      });
