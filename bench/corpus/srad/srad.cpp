//===- srad.cpp - Rodinia's srad: speckle reducing anisotropic diffusion --===//
//
// The host program of Rodinia's opencl/srad (main.c and
// kernel/kernel_gpu_opencl_wrapper.c): the image goes to the device with
// the neighbour index tables iN, iS, jW, jE (clamped at the borders);
// extract_kernel decompresses it; then each iteration launches
// prepare_kernel, launches reduce_kernel level by level until one
// work-group is left, reads the two sums back, computes the statistics of
// the region of interest (the whole image) and q0sqr on the host, and
// launches srad_kernel and srad2_kernel; compress_kernel ends the run and
// the image is read back.
//
// The OpenCL host has no CPU reference; the check runs the same algorithm
// serially (reference() below), with the reduction's exact sequence of
// float additions (the same levels, trees and remainders as the launches),
// so that q0sqr is the one the device computes.
//
// Inputs: Rodinia reads a 502 x 458 ultrasound image (image.pgm) and
// resizes it to Nr x Nc by tiling. No file is read here: the generator
// makes an Nr x Nc image of whole grey levels 0 to 255, a bright ellipse on a
// darker background, multiplied by Rayleigh-distributed speckle (the noise
// SRAD removes), stored column by column as the resized image is.
//
// Where the host differs: the run script passes -l 0.5, which the host
// parses with atoi, giving lambda 0 (no update at all); lambda is the 0.5 the
// script means. The host passes d_dW as srad_kernel's and srad2_kernel's
// d_dE argument and d_dE as their d_dW; this file passes them the same way
// (both kernels see the same swap, so it changes nothing). The original's
// 1000 iterations are cut to 40 at the timed size.
//
// Size 0 is a 66 x 58 image, 4 iterations; size 1 is Rodinia's 502 x 458
// image (the run script's -s 502 458), 40 iterations.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <algorithm>
#include <cmath>

using namespace corpus;

namespace {

constexpr int NumberThreads = 256;

int blocksFor(long N) {
  return int(N / NumberThreads + (N % NumberThreads ? 1 : 0));
}

/// reduce_kernel's work-group Bx of a level of GridDim work-groups that sums
/// No elements at stride Mul, in the kernel's order of additions.
void reduceBlock(int Bx, int GridDim, long No, int Mul, float *Sums,
                 float *Sums2) {
  float PSum[NumberThreads], PSum2[NumberThreads];
  int Nf = int(NumberThreads - (long(GridDim * NumberThreads) - No));
  for (int Tx = 0; Tx < NumberThreads; ++Tx) {
    int Ei = Bx * NumberThreads + Tx;
    if (Ei < No) {
      PSum[Tx] = Sums[Ei * Mul];
      PSum2[Tx] = Sums2[Ei * Mul];
    }
  }
  int Out = Bx * Mul * NumberThreads;
  if (Nf == NumberThreads || Bx != GridDim - 1) {
    for (int I = 2; I <= NumberThreads; I *= 2)
      for (int Tx = I - 1; Tx < NumberThreads; Tx += I) {
        PSum[Tx] = PSum[Tx] + PSum[Tx - I / 2];
        PSum2[Tx] = PSum2[Tx] + PSum2[Tx - I / 2];
      }
    Sums[Out] = PSum[NumberThreads - 1];
    Sums2[Out] = PSum2[NumberThreads - 1];
    return;
  }
  // The last, partial work-group: a tree over its first Df elements, then
  // the rest one by one, read at Sums[I] (not Sums[I * Mul]) as the kernel
  // reads them.
  int Df = 0;
  for (int I = 2; I <= NumberThreads; I *= 2)
    if (Nf >= I)
      Df = I;
  for (int I = 2; I <= Df; I *= 2)
    for (int Tx = I - 1; Tx < Df; Tx += I) {
      PSum[Tx] = PSum[Tx] + PSum[Tx - I / 2];
      PSum2[Tx] = PSum2[Tx] + PSum2[Tx - I / 2];
    }
  if (Df == 0)
    return; // no work-item has tx == df - 1
  int Tx = Df - 1;
  for (int I = Bx * NumberThreads + Df; I < Bx * NumberThreads + Nf; ++I) {
    PSum[Tx] = PSum[Tx] + Sums[I];
    PSum2[Tx] = PSum2[Tx] + Sums2[I];
  }
  Sums[Out] = PSum[Tx];
  Sums2[Out] = PSum2[Tx];
}

/// The element's row and column, as the kernels compute them.
void rowCol(int Ei, int Nr, int &Row, int &Col) {
  Row = (Ei + 1) % Nr - 1;
  Col = (Ei + 1) / Nr + 1 - 1;
  if ((Ei + 1) % Nr == 0) {
    Row = Nr - 1;
    Col = Col - 1;
  }
}

/// srad_kernel's work for element Ei (the double constants promote as in
/// the OpenCL C).
void sradElement(int Ei, int Nr, const int *IN, const int *IS, const int *JE,
                 const int *JW, float *DN, float *DS, float *DE, float *DW,
                 float Q0sqr, float *C, const float *I) {
  int Row, Col;
  rowCol(Ei, Nr, Row, Col);
  float Jc = I[Ei];
  float N = I[IN[Row] + Nr * Col] - Jc;
  float S = I[IS[Row] + Nr * Col] - Jc;
  float W = I[Row + Nr * JW[Col]] - Jc;
  float E = I[Row + Nr * JE[Col]] - Jc;
  float G2 = (N * N + S * S + W * W + E * E) / (Jc * Jc);
  float L = (N + S + W + E) / Jc;
  float Num = (0.5 * G2) - ((1.0 / 16.0) * (L * L));
  float Den = 1 + (0.25 * L);
  float Qsqr = Num / (Den * Den);
  Den = (Qsqr - Q0sqr) / (Q0sqr * (1 + Q0sqr));
  float CLoc = 1.0 / (1.0 + Den);
  if (CLoc < 0)
    CLoc = 0;
  else if (CLoc > 1)
    CLoc = 1;
  DN[Ei] = N;
  DS[Ei] = S;
  DW[Ei] = W;
  DE[Ei] = E;
  C[Ei] = CLoc;
}

/// srad2_kernel's work for element Ei.
void srad2Element(int Ei, float Lambda, int Nr, const int *IS, const int *JE,
                  const float *DN, const float *DS, const float *DE,
                  const float *DW, const float *C, float *I) {
  int Row, Col;
  rowCol(Ei, Nr, Row, Col);
  float CN = C[Ei];
  float CS = C[IS[Row] + Nr * Col];
  float CW = C[Ei];
  float CE = C[Row + Nr * JE[Col]];
  float D = CN * DN[Ei] + CS * DS[Ei] + CW * DW[Ei] + CE * DE[Ei];
  I[Ei] = I[Ei] + 0.25 * Lambda * D;
}

class SradInstance : public Instance {
public:
  SradInstance(int Nr, int Nc, int Niter)
      : Nr(Nr), Nc(Nc), Ne(long(Nr) * Nc), Niter(Niter) {
    // The synthetic image, column by column (element Col * Nr + Row).
    Random R(11);
    Image.resize(Ne);
    for (int Col = 0; Col < Nc; ++Col)
      for (int Row = 0; Row < Nr; ++Row) {
        double Y = (Row - 0.5 * Nr) / (0.3 * Nr);
        double X = (Col - 0.45 * Nc) / (0.25 * Nc);
        double Base = X * X + Y * Y < 1 ? 160 : 40;
        // Rayleigh speckle of mean 1.
        double U = R.unit();
        double Speckle = std::sqrt(-2 * std::log(1 - U)) / 1.2533141;
        Image[size_t(Col) * Nr + Row] =
            float(std::min(255.0, std::round(Base * Speckle)));
      }
    // The neighbour tables, clamped at the borders.
    IN.resize(Nr);
    IS.resize(Nr);
    JW.resize(Nc);
    JE.resize(Nc);
    for (int I = 0; I < Nr; ++I) {
      IN[I] = I - 1;
      IS[I] = I + 1;
    }
    for (int J = 0; J < Nc; ++J) {
      JW[J] = J - 1;
      JE[J] = J + 1;
    }
    IN[0] = 0;
    IS[Nr - 1] = Nr - 1;
    JW[0] = 0;
    JE[Nc - 1] = Nc - 1;
    // Launches: extract, compress, and per iteration prepare, the reduce
    // levels, srad and srad2.
    int Levels = 0;
    for (int Blocks2 = blocksFor(Ne); Blocks2 != 0;
         Blocks2 = Blocks2 == 1 ? 0 : blocksFor(Blocks2))
      ++Levels;
    Launches = 2 + unsigned(Niter) * (3 + Levels);
  }

  void setup(Backend &B) override {
    size_t Bytes = size_t(Ne) * sizeof(float);
    DI = B.create(Image);
    DIN = B.create(IN);
    DIS = B.create(IS);
    DJE = B.create(JE);
    DJW = B.create(JW);
    DdN = B.create(Bytes);
    DdS = B.create(Bytes);
    DdW = B.create(Bytes);
    DdE = B.create(Bytes);
    DC = B.create(Bytes);
    DSums = B.create(Bytes);
    DSums2 = B.create(Bytes);
  }

  void run(Backend &B) override {
    uint32_t Blocks = uint32_t(blocksFor(Ne));
    B.launch("extract_kernel", {Blocks}, {NumberThreads},
             {Arg::i64(Ne), Arg::buf(DI)});
    for (int Iter = 0; Iter < Niter; ++Iter) {
      B.launch("prepare_kernel", {Blocks}, {NumberThreads},
               {Arg::i64(Ne), Arg::buf(DI), Arg::buf(DSums), Arg::buf(DSums2)});
      int Blocks2 = int(Blocks);
      long No = Ne;
      int Mul = 1;
      while (Blocks2 != 0) {
        B.launch("reduce_kernel", {uint32_t(Blocks2)}, {NumberThreads},
                 {Arg::i64(Ne), Arg::i64(No), Arg::i32(Mul), Arg::buf(DSums),
                  Arg::buf(DSums2), Arg::i32(Blocks2)});
        No = Blocks2;
        if (Blocks2 == 1) {
          Blocks2 = 0;
        } else {
          Mul = Mul * NumberThreads;
          Blocks2 = blocksFor(Blocks2);
        }
      }
      float Total, Total2;
      B.read(DSums, &Total, sizeof(float));
      B.read(DSums2, &Total2, sizeof(float));
      float Q0sqr = q0sqr(Total, Total2);
      // Arguments 10 and 11 (d_dE, d_dW) get d_dW and d_dE, as the host
      // sets them.
      B.launch("srad_kernel", {Blocks}, {NumberThreads},
               {Arg::f32(Lambda), Arg::i32(Nr), Arg::i32(Nc), Arg::i64(Ne),
                Arg::buf(DIN), Arg::buf(DIS), Arg::buf(DJE), Arg::buf(DJW),
                Arg::buf(DdN), Arg::buf(DdS), Arg::buf(DdW), Arg::buf(DdE),
                Arg::f32(Q0sqr), Arg::buf(DC), Arg::buf(DI)});
      B.launch("srad2_kernel", {Blocks}, {NumberThreads},
               {Arg::f32(Lambda), Arg::i32(Nr), Arg::i32(Nc), Arg::i64(Ne),
                Arg::buf(DIN), Arg::buf(DIS), Arg::buf(DJE), Arg::buf(DJW),
                Arg::buf(DdN), Arg::buf(DdS), Arg::buf(DdW), Arg::buf(DdE),
                Arg::buf(DC), Arg::buf(DI)});
    }
    B.launch("compress_kernel", {Blocks}, {NumberThreads},
             {Arg::i64(Ne), Arg::buf(DI)});
    B.finish();
  }

  bool check(Backend &B, std::string &Why) override {
    std::vector<float> Got = B.read<float>(DI, size_t(Ne));
    std::vector<float> Want = reference();
    return closeEnough(Got.data(), Want.data(), Got.size(), 1e-4, 1e-3, Why);
  }

  unsigned launches() const override { return Launches; }

private:
  /// The host's statistics of the region of interest (the whole image).
  float q0sqr(float Total, float Total2) const {
    long NeROI = Ne;
    float MeanROI = Total / float(NeROI);
    float MeanROI2 = MeanROI * MeanROI;
    float VarROI = (Total2 / float(NeROI)) - MeanROI2;
    return VarROI / MeanROI2;
  }

  /// The whole run, serially.
  std::vector<float> reference() const {
    std::vector<float> I = Image, Sums(Ne), Sums2(Ne), DN(Ne), DS(Ne), DW(Ne),
                       DE(Ne), C(Ne);
    for (long Ei = 0; Ei < Ne; ++Ei)
      I[Ei] = std::exp(I[Ei] / 255);
    for (int Iter = 0; Iter < Niter; ++Iter) {
      for (long Ei = 0; Ei < Ne; ++Ei) {
        Sums[Ei] = I[Ei];
        Sums2[Ei] = I[Ei] * I[Ei];
      }
      long No = Ne;
      int Mul = 1;
      for (int Blocks2 = blocksFor(Ne); Blocks2 != 0;) {
        for (int Bx = 0; Bx < Blocks2; ++Bx)
          reduceBlock(Bx, Blocks2, No, Mul, Sums.data(), Sums2.data());
        No = Blocks2;
        Mul *= NumberThreads;
        Blocks2 = Blocks2 == 1 ? 0 : blocksFor(Blocks2);
      }
      float Q0sqr = q0sqr(Sums[0], Sums2[0]);
      for (int Ei = 0; Ei < Ne; ++Ei)
        sradElement(Ei, Nr, IN.data(), IS.data(), JE.data(), JW.data(),
                    DN.data(), DS.data(), DE.data(), DW.data(), Q0sqr, C.data(),
                    I.data());
      for (int Ei = 0; Ei < Ne; ++Ei)
        srad2Element(Ei, Lambda, Nr, IS.data(), JE.data(), DN.data(), DS.data(),
                     DE.data(), DW.data(), C.data(), I.data());
    }
    for (long Ei = 0; Ei < Ne; ++Ei)
      I[Ei] = std::log(I[Ei]) * 255;
    return I;
  }

  static constexpr float Lambda = 0.5f;
  int Nr, Nc;
  long Ne;
  int Niter;
  unsigned Launches;
  std::vector<float> Image;
  std::vector<int> IN, IS, JE, JW;
  Buf DI, DIN, DIS, DJE, DJW, DdN, DdS, DdW, DdE, DC, DSums, DSums2;
};

// The native kernels: one iteration per element (per work-group for
// reduce_kernel), as the OpenCL work-items and work-groups do.

void extractNative(const NativeLaunch &L) {
  long Ne = L.value<int64_t>(0);
  float *I = L.ptr<float>(1);
#pragma omp parallel for
  for (long Ei = 0; Ei < Ne; ++Ei)
    I[Ei] = std::exp(I[Ei] / 255);
}

void prepareNative(const NativeLaunch &L) {
  long Ne = L.value<int64_t>(0);
  const float *I = L.ptr<float>(1);
  float *Sums = L.ptr<float>(2), *Sums2 = L.ptr<float>(3);
#pragma omp parallel for
  for (long Ei = 0; Ei < Ne; ++Ei) {
    Sums[Ei] = I[Ei];
    Sums2[Ei] = I[Ei] * I[Ei];
  }
}

void reduceNative(const NativeLaunch &L) {
  long No = L.value<int64_t>(1);
  int Mul = L.value<int32_t>(2);
  float *Sums = L.ptr<float>(3), *Sums2 = L.ptr<float>(4);
  int GridDim = L.value<int32_t>(5);
  int Blocks = int(L.Cubes.X);
#pragma omp parallel for
  for (int Bx = 0; Bx < Blocks; ++Bx)
    reduceBlock(Bx, GridDim, No, Mul, Sums, Sums2);
}

void sradNative(const NativeLaunch &L) {
  int Nr = L.value<int32_t>(1);
  long Ne = L.value<int64_t>(3);
  const int *IN = L.ptr<int>(4), *IS = L.ptr<int>(5);
  const int *JE = L.ptr<int>(6), *JW = L.ptr<int>(7);
  float *DN = L.ptr<float>(8), *DS = L.ptr<float>(9);
  float *DE = L.ptr<float>(10), *DW = L.ptr<float>(11);
  float Q0sqr = L.value<float>(12);
  float *C = L.ptr<float>(13);
  const float *I = L.ptr<float>(14);
#pragma omp parallel for
  for (int Ei = 0; Ei < int(Ne); ++Ei)
    sradElement(Ei, Nr, IN, IS, JE, JW, DN, DS, DE, DW, Q0sqr, C, I);
}

void srad2Native(const NativeLaunch &L) {
  float Lambda = L.value<float>(0);
  int Nr = L.value<int32_t>(1);
  long Ne = L.value<int64_t>(3);
  const int *IS = L.ptr<int>(5), *JE = L.ptr<int>(6);
  const float *DN = L.ptr<float>(8), *DS = L.ptr<float>(9);
  const float *DE = L.ptr<float>(10), *DW = L.ptr<float>(11);
  const float *C = L.ptr<float>(12);
  float *I = L.ptr<float>(13);
#pragma omp parallel for
  for (int Ei = 0; Ei < int(Ne); ++Ei)
    srad2Element(Ei, Lambda, Nr, IS, JE, DN, DS, DE, DW, C, I);
}

void compressNative(const NativeLaunch &L) {
  long Ne = L.value<int64_t>(0);
  float *I = L.ptr<float>(1);
#pragma omp parallel for
  for (long Ei = 0; Ei < Ne; ++Ei)
    I[Ei] = std::log(I[Ei]) * 255;
}

} // namespace

KILN_CORPUS_NATIVE(extract_kernel, extractNative);
KILN_CORPUS_NATIVE(prepare_kernel, prepareNative);
KILN_CORPUS_NATIVE(reduce_kernel, reduceNative);
KILN_CORPUS_NATIVE(srad_kernel, sradNative);
KILN_CORPUS_NATIVE(srad2_kernel, srad2Native);
KILN_CORPUS_NATIVE(compress_kernel, compressNative);

KILN_CORPUS_BENCHMARK(srad,
                      "speckle reducing anisotropic diffusion (Rodinia "
                      "srad), 502 x 458 image, 40 iterations",
                      [](int Size) {
                        return Size == 0
                                   ? std::make_unique<SradInstance>(66, 58, 4)
                                   : std::make_unique<SradInstance>(502, 458,
                                                                    40);
                      });
