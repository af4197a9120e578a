//===- hotspot.cpp - Rodinia's hotspot: 2-D chip thermal simulation -------===//
//
// The host program of Rodinia's opencl/hotspot (hotspot.c,
// compute_tran_temp): from the chip's constants it computes the capacitance,
// the three resistances and the time step; then, for total_iterations steps
// taken pyramid_height at a time, it launches the hotspot kernel over
// (blockCols, blockRows) work-groups of 16 x 16, swapping the source and
// destination temperature buffers after each launch, and reads back the
// buffer the last launch wrote.
//
// The OpenCL host has no CPU reference; the check runs the same simulation
// serially, one step at a time over the whole grid (a neighbour outside the
// grid is the cell itself), with the kernel's expression.
//
// Inputs: Rodinia reads the temperature and power of every cell from its
// data files (temp_1024, power_1024). No file is read here: the generator
// makes grids of the same shape, temperatures uniform in [323, 343) K and
// powers uniform in [0, MAX_PD x the cell's area) W (up to the maximum
// power density the host assumes).
//
// Size 0 is a 64 x 64 grid, pyramid height 2, 4 steps (2 launches); size 1
// is Rodinia's 1024 x 1024 grid with its pyramid height 4 (the run script's
// arguments), 8 steps instead of its 10000 (2 launches).
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <algorithm>
#include <utility>

using namespace corpus;

namespace {

// The host's constants (hotspot.h).
constexpr int BlockSize = 16;
constexpr int ExpandRate = 2;
constexpr double MaxPD = 3.0e6;
constexpr double Precision = 0.001;
constexpr double SpecHeatSi = 1.75e6;
constexpr double KSi = 100;
constexpr double FactorChip = 0.5;
constexpr float TChip = 0.0005f;
constexpr float ChipHeight = 0.016f;
constexpr float ChipWidth = 0.016f;
constexpr float AmbTemp = 80.0f;

class HotspotInstance : public Instance {
public:
  HotspotInstance(int Grid, int PyramidHeight, int TotalIterations)
      : GridRows(Grid), GridCols(Grid), PyramidHeight(PyramidHeight),
        TotalIterations(TotalIterations) {
    // main's pyramid parameters.
    BorderCols = PyramidHeight * ExpandRate / 2;
    BorderRows = PyramidHeight * ExpandRate / 2;
    int SmallBlockCol = BlockSize - PyramidHeight * ExpandRate;
    int SmallBlockRow = BlockSize - PyramidHeight * ExpandRate;
    BlockCols = GridCols / SmallBlockCol + (GridCols % SmallBlockCol ? 1 : 0);
    BlockRows = GridRows / SmallBlockRow + (GridRows % SmallBlockRow ? 1 : 0);
    // compute_tran_temp's constants, in the same types.
    float GridHeight = ChipHeight / GridRows;
    float GridWidth = ChipWidth / GridCols;
    Cap = FactorChip * SpecHeatSi * TChip * GridWidth * GridHeight;
    Rx = GridWidth / (2.0 * KSi * TChip * GridHeight);
    Ry = GridHeight / (2.0 * KSi * TChip * GridWidth);
    Rz = TChip / (KSi * GridHeight * GridWidth);
    float MaxSlope = MaxPD / (FactorChip * TChip * SpecHeatSi);
    Step = Precision / MaxSlope;

    size_t Size = size_t(GridRows) * GridCols;
    Random R(5);
    Temp.resize(Size);
    Power.resize(Size);
    float MaxPower = float(MaxPD * GridWidth * GridHeight);
    for (size_t I = 0; I < Size; ++I) {
      Temp[I] = 323.0f + 20.0f * R.unit();
      Power[I] = MaxPower * R.unit();
    }
  }

  void setup(Backend &B) override {
    MatrixTemp[0] = B.create(Temp);
    MatrixTemp[1] = B.create(Temp.size() * sizeof(float));
    MatrixPower = B.create(Power);
  }

  void run(Backend &B) override {
    int Src = 0, Dst = 1;
    for (int T = 0; T < TotalIterations; T += PyramidHeight) {
      int Iter = std::min(PyramidHeight, TotalIterations - T);
      B.launch("hotspot", {uint32_t(BlockCols), uint32_t(BlockRows)},
               {BlockSize, BlockSize},
               {Arg::i32(Iter), Arg::buf(MatrixPower),
                Arg::buf(MatrixTemp[Src]), Arg::buf(MatrixTemp[Dst]),
                Arg::i32(GridCols), Arg::i32(GridRows), Arg::i32(BorderCols),
                Arg::i32(BorderRows), Arg::f32(Cap), Arg::f32(Rx), Arg::f32(Ry),
                Arg::f32(Rz), Arg::f32(Step)});
      std::swap(Src, Dst);
    }
    Result = Src; // compute_tran_temp's return value
    B.finish();
  }

  bool check(Backend &B, std::string &Why) override {
    std::vector<float> Got = B.read<float>(MatrixTemp[Result], Temp.size());
    std::vector<float> Want = reference();
    return closeEnough(Got.data(), Want.data(), Got.size(), 1e-5, 1e-4, Why);
  }

  unsigned launches() const override {
    return unsigned((TotalIterations + PyramidHeight - 1) / PyramidHeight);
  }

private:
  /// The simulation step by step over the whole grid, serially.
  std::vector<float> reference() const {
    float StepDivCap = Step / Cap;
    float Rx1 = 1 / Rx, Ry1 = 1 / Ry, Rz1 = 1 / Rz;
    std::vector<float> In = Temp, Out(In.size());
    for (int T = 0; T < TotalIterations; ++T) {
      for (int Y = 0; Y < GridRows; ++Y)
        for (int X = 0; X < GridCols; ++X) {
          int N = std::max(Y - 1, 0), S = std::min(Y + 1, GridRows - 1);
          int W = std::max(X - 1, 0), E = std::min(X + 1, GridCols - 1);
          float C = In[Y * GridCols + X];
          Out[Y * GridCols + X] =
              C +
              StepDivCap *
                  (Power[Y * GridCols + X] +
                   (In[S * GridCols + X] + In[N * GridCols + X] - 2.0f * C) *
                       Ry1 +
                   (In[Y * GridCols + E] + In[Y * GridCols + W] - 2.0f * C) *
                       Rx1 +
                   (AmbTemp - C) * Rz1);
        }
      std::swap(In, Out);
    }
    return In;
  }

  int GridRows, GridCols, PyramidHeight, TotalIterations;
  int BorderCols, BorderRows, BlockCols, BlockRows;
  float Cap, Rx, Ry, Rz, Step;
  std::vector<float> Temp, Power;
  Buf MatrixTemp[2], MatrixPower;
  int Result = 0;
};

/// hotspot: one iteration per work-group, which loads its tile, steps it
/// `iteration` times and writes its small block, as the work-group does.
void hotspotNative(const NativeLaunch &L) {
  int Iteration = L.value<int32_t>(0);
  const float *Power = L.ptr<float>(1);
  const float *TempSrc = L.ptr<float>(2);
  float *TempDst = L.ptr<float>(3);
  int GridCols = L.value<int32_t>(4), GridRows = L.value<int32_t>(5);
  int BorderCols = L.value<int32_t>(6), BorderRows = L.value<int32_t>(7);
  float Cap = L.value<float>(8), Rx = L.value<float>(9);
  float Ry = L.value<float>(10), Rz = L.value<float>(11);
  float Step = L.value<float>(12);
  float StepDivCap = Step / Cap;
  float Rx1 = 1 / Rx, Ry1 = 1 / Ry, Rz1 = 1 / Rz;
  int SmallBlock = BlockSize - Iteration * 2;
  int BlocksX = int(L.Cubes.X), Blocks = int(L.Cubes.X * L.Cubes.Y);
#pragma omp parallel for
  for (int Block = 0; Block < Blocks; ++Block) {
    int Bx = Block % BlocksX, By = Block / BlocksX;
    float TempOn[BlockSize][BlockSize], PowerOn[BlockSize][BlockSize];
    float TempT[BlockSize][BlockSize];
    int BlkY = SmallBlock * By - BorderRows;
    int BlkX = SmallBlock * Bx - BorderCols;
    int BlkYmax = BlkY + BlockSize - 1, BlkXmax = BlkX + BlockSize - 1;
    for (int Ty = 0; Ty < BlockSize; ++Ty)
      for (int Tx = 0; Tx < BlockSize; ++Tx) {
        int Y = BlkY + Ty, X = BlkX + Tx;
        if (Y >= 0 && Y <= GridRows - 1 && X >= 0 && X <= GridCols - 1) {
          TempOn[Ty][Tx] = TempSrc[GridCols * Y + X];
          PowerOn[Ty][Tx] = Power[GridCols * Y + X];
        }
      }
    int ValidYmin = BlkY < 0 ? -BlkY : 0;
    int ValidYmax = BlkYmax > GridRows - 1
                        ? BlockSize - 1 - (BlkYmax - GridRows + 1)
                        : BlockSize - 1;
    int ValidXmin = BlkX < 0 ? -BlkX : 0;
    int ValidXmax = BlkXmax > GridCols - 1
                        ? BlockSize - 1 - (BlkXmax - GridCols + 1)
                        : BlockSize - 1;
    // The cells computed in step I: inside the pyramid and the grid.
    auto Computed = [&](int I, int Ty, int Tx) {
      return Tx >= I + 1 && Tx <= BlockSize - I - 2 && Ty >= I + 1 &&
             Ty <= BlockSize - I - 2 && Tx >= ValidXmin && Tx <= ValidXmax &&
             Ty >= ValidYmin && Ty <= ValidYmax;
    };
    for (int I = 0; I < Iteration; ++I) {
      for (int Ty = 0; Ty < BlockSize; ++Ty)
        for (int Tx = 0; Tx < BlockSize; ++Tx) {
          if (!Computed(I, Ty, Tx))
            continue;
          int N = std::max(Ty - 1, ValidYmin), S = std::min(Ty + 1, ValidYmax);
          int W = std::max(Tx - 1, ValidXmin), E = std::min(Tx + 1, ValidXmax);
          float C = TempOn[Ty][Tx];
          TempT[Ty][Tx] =
              C +
              StepDivCap * (PowerOn[Ty][Tx] +
                            (TempOn[S][Tx] + TempOn[N][Tx] - 2.0f * C) * Ry1 +
                            (TempOn[Ty][E] + TempOn[Ty][W] - 2.0f * C) * Rx1 +
                            (AmbTemp - C) * Rz1);
        }
      if (I == Iteration - 1)
        break;
      for (int Ty = 0; Ty < BlockSize; ++Ty)
        for (int Tx = 0; Tx < BlockSize; ++Tx)
          if (Computed(I, Ty, Tx))
            TempOn[Ty][Tx] = TempT[Ty][Tx];
    }
    for (int Ty = 0; Ty < BlockSize; ++Ty)
      for (int Tx = 0; Tx < BlockSize; ++Tx)
        if (Computed(Iteration - 1, Ty, Tx))
          TempDst[GridCols * (BlkY + Ty) + BlkX + Tx] = TempT[Ty][Tx];
  }
}

} // namespace

KILN_CORPUS_NATIVE(hotspot, hotspotNative);

KILN_CORPUS_BENCHMARK(hotspot,
                      "2-D chip thermal stencil, pyramid of 4 steps a launch "
                      "(Rodinia hotspot), 1024 x 1024 cells, 8 steps",
                      [](int Size) {
                        return Size == 0
                                   ? std::make_unique<HotspotInstance>(64, 2, 4)
                                   : std::make_unique<HotspotInstance>(1024, 4,
                                                                       8);
                      });
