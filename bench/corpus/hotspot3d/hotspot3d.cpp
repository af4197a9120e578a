//===- hotspot3d.cpp - Rodinia's hotspot3D: 3-D chip thermal simulation ---===//
//
// The host program of Rodinia's opencl/hotspot3D (3D.c): the chip's
// constants give the stencil's coefficients, the temperature and power grids
// go to the device, and each of the iterations launches hotspotOpt1 once
// over (nx, ny) work-items in 64 x 4 work-groups, swapping the input and
// output temperature buffers after each launch. The check runs the host's
// own reference, computeTempCPU, for the same number of steps.
//
// Inputs: Rodinia reads the temperature and power of every cell from its
// data files (temp_512x8, power_512x8). No file is read here: the generator
// makes grids of the same shape, temperatures uniform in [323, 343) K and
// powers uniform in [0, MAX_PD x the cell's area) W (up to the maximum
// power density the host assumes).
//
// Where the host differs: after the loop, 3D.c reads back d_c, which after
// the last swap is the input of the last step, not its output; here the
// check reads the last step's output (the buffer computeTempCPU's result
// corresponds to). The original's 500 iterations are cut to 8 at the timed
// size (the work of one step is unchanged).
//
// Size 0 is 64 x 64 x 8 cells, 4 steps; size 1 is Rodinia's 512 x 512 x 8
// grid, 8 steps.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <utility>

using namespace corpus;

namespace {

// The host's constants (3D.c).
constexpr double MaxPD = 3.0e6;
constexpr double Precision = 0.001;
constexpr double SpecHeatSi = 1.75e6;
constexpr double KSi = 100;
constexpr double FactorChip = 0.5;
constexpr float TChip = 0.0005f;
constexpr float ChipHeight = 0.016f;
constexpr float ChipWidth = 0.016f;
constexpr float AmbTemp = 80.0f;
constexpr unsigned WgSizeX = 64, WgSizeY = 4;

class Hotspot3DInstance : public Instance {
public:
  Hotspot3DInstance(int N, int Layers, int Iterations)
      : NumCols(N), NumRows(N), Layers(Layers), Iterations(Iterations) {
    // The host's parameters, computed in the same types.
    float Dx = ChipHeight / NumRows;
    float Dy = ChipWidth / NumCols;
    float Dz = TChip / Layers;
    Cap = FactorChip * SpecHeatSi * TChip * Dx * Dy;
    Rx = Dy / (2.0 * KSi * TChip * Dx);
    Ry = Dx / (2.0 * KSi * TChip * Dy);
    Rz = Dz / (KSi * Dx * Dy);
    float MaxSlope = MaxPD / (FactorChip * TChip * SpecHeatSi);
    Dt = Precision / MaxSlope;
    StepDivCap = Dt / Cap;
    Ce = Cw = StepDivCap / Rx;
    Cn = Cs = StepDivCap / Ry;
    Ct = Cb = StepDivCap / Rz;
    Cc = 1.0 - (2.0 * Ce + 2.0 * Cn + 3.0 * Ct);

    size_t Size = size_t(NumCols) * NumRows * Layers;
    Random R(3);
    TempIn.resize(Size);
    PowerIn.resize(Size);
    float MaxPower = float(MaxPD * Dx * Dy);
    for (size_t I = 0; I < Size; ++I) {
      TempIn[I] = 323.0f + 20.0f * R.unit();
      PowerIn[I] = MaxPower * R.unit();
    }
  }

  void setup(Backend &B) override {
    size_t Bytes = TempIn.size() * sizeof(float);
    DA = B.create(TempIn);
    DB = B.create(PowerIn);
    DC = B.create(Bytes); // tempOut, calloc'd and written by the host
  }

  void run(Backend &B) override {
    Buf A = DA, C = DC;
    for (int J = 0; J < Iterations; ++J) {
      B.launch("hotspotOpt1",
               {uint32_t(NumCols) / WgSizeX, uint32_t(NumRows) / WgSizeY},
               {WgSizeX, WgSizeY},
               {Arg::buf(DB), Arg::buf(A), Arg::buf(C), Arg::f32(StepDivCap),
                Arg::i32(NumCols), Arg::i32(NumRows), Arg::i32(Layers),
                Arg::f32(Ce), Arg::f32(Cw), Arg::f32(Cn), Arg::f32(Cs),
                Arg::f32(Ct), Arg::f32(Cb), Arg::f32(Cc)});
      std::swap(A, C);
    }
    Result = A; // the last step's output
    B.finish();
  }

  bool check(Backend &B, std::string &Why) override {
    std::vector<float> Got = B.read<float>(Result, TempIn.size());
    std::vector<float> Want = computeTempCPU();
    return closeEnough(Got.data(), Want.data(), Got.size(), 1e-5, 1e-4, Why);
  }

  unsigned launches() const override { return unsigned(Iterations); }

private:
  /// The host's computeTempCPU: the same steps, serially, in its own order
  /// of the terms; returns the temperatures after the last step.
  std::vector<float> computeTempCPU() const {
    int Nx = NumCols, Ny = NumRows, Nz = Layers;
    std::vector<float> In = TempIn, Out(In.size());
    float SDC = Dt / Cap;
    for (int Step = 0; Step < Iterations; ++Step) {
      for (int Z = 0; Z < Nz; ++Z)
        for (int Y = 0; Y < Ny; ++Y)
          for (int X = 0; X < Nx; ++X) {
            int C = X + Y * Nx + Z * Nx * Ny;
            int W = X == 0 ? C : C - 1;
            int E = X == Nx - 1 ? C : C + 1;
            int N = Y == 0 ? C : C - Nx;
            int S = Y == Ny - 1 ? C : C + Nx;
            int Bo = Z == 0 ? C : C - Nx * Ny;
            int T = Z == Nz - 1 ? C : C + Nx * Ny;
            Out[C] = In[C] * Cc + In[N] * Cn + In[S] * Cs + In[E] * Ce +
                     In[W] * Cw + In[T] * Ct + In[Bo] * Cb + SDC * PowerIn[C] +
                     Ct * AmbTemp;
          }
      std::swap(In, Out);
    }
    return In;
  }

  int NumCols, NumRows, Layers, Iterations;
  float Cap, Rx, Ry, Rz, Dt, StepDivCap, Ce, Cw, Cn, Cs, Ct, Cb, Cc;
  std::vector<float> TempIn, PowerIn;
  Buf DA, DB, DC, Result;
};

/// hotspotOpt1: one iteration per (x, y) column, walking its layers.
void hotspotOpt1Native(const NativeLaunch &L) {
  const float *P = L.ptr<float>(0);
  const float *TIn = L.ptr<float>(1);
  float *TOut = L.ptr<float>(2);
  float Sdc = L.value<float>(3);
  int Nx = L.value<int32_t>(4), Ny = L.value<int32_t>(5);
  int Nz = L.value<int32_t>(6);
  float Ce = L.value<float>(7), Cw = L.value<float>(8);
  float Cn = L.value<float>(9), Cs = L.value<float>(10);
  float Ct = L.value<float>(11), Cb = L.value<float>(12);
  float Cc = L.value<float>(13);
  int XY = Nx * Ny;
#pragma omp parallel for
  for (int J = 0; J < Ny; ++J)
    for (int I = 0; I < Nx; ++I) {
      int C = I + J * Nx;
      int W = I == 0 ? C : C - 1;
      int E = I == Nx - 1 ? C : C + 1;
      int N = J == 0 ? C : C - Nx;
      int S = J == Ny - 1 ? C : C + Nx;
      float T1, T2, T3;
      T1 = T2 = TIn[C];
      T3 = TIn[C + XY];
      TOut[C] = Cc * T2 + Cw * TIn[W] + Ce * TIn[E] + Cs * TIn[S] +
                Cn * TIn[N] + Cb * T1 + Ct * T3 + Sdc * P[C] + Ct * AmbTemp;
      C += XY, W += XY, E += XY, N += XY, S += XY;
      for (int K = 1; K < Nz - 1; ++K) {
        T1 = T2;
        T2 = T3;
        T3 = TIn[C + XY];
        TOut[C] = Cc * T2 + Cw * TIn[W] + Ce * TIn[E] + Cs * TIn[S] +
                  Cn * TIn[N] + Cb * T1 + Ct * T3 + Sdc * P[C] + Ct * AmbTemp;
        C += XY, W += XY, E += XY, N += XY, S += XY;
      }
      T1 = T2;
      T2 = T3;
      TOut[C] = Cc * T2 + Cw * TIn[W] + Ce * TIn[E] + Cs * TIn[S] +
                Cn * TIn[N] + Cb * T1 + Ct * T3 + Sdc * P[C] + Ct * AmbTemp;
    }
}

} // namespace

KILN_CORPUS_NATIVE(hotspotOpt1, hotspotOpt1Native);

KILN_CORPUS_BENCHMARK(hotspot3d,
                      "3-D chip thermal stencil (Rodinia hotspot3D), "
                      "512 x 512 x 8 cells, 8 steps",
                      [](int Size) {
                        return Size == 0
                                   ? std::make_unique<Hotspot3DInstance>(64, 8,
                                                                         4)
                                   : std::make_unique<Hotspot3DInstance>(512, 8,
                                                                         8);
                      });
