//===- streamcluster.cpp - Rodinia's streamcluster: online k-median ------===//
//
// The host program of Rodinia's opencl/streamcluster (streamcluster.cpp,
// streamcluster_cl.h, after PARSEC's streamcluster), single-threaded as the
// suite runs it (nproc 1), with one chunk holding all the points (n =
// chunksize, as the suite's run script has it). For the
// chunk, pkmedian shuffles the points, opens centres with speedy (host),
// picks the feasible centres and runs the local search pFL, whose every
// pgain step clears switch_membership and work_mem with memset_kernel
// (two launches), launches pgain_kernel for the candidate centre, reads both
// back and decides on the host whether opening the candidate pays; then the
// chunk's centres are merged (contcenters, copycenters) and clustered again
// (at most kmax centres: no device work).
//
// Sizes: the suite's run clusters 65536 points of 256 dimensions with kmin
// 10 and kmax 20; its some 1800 pgain steps (a number set by k, not by the
// points) of 16M multiply-adds each take minutes on a CPU. Size 1 keeps k
// (10..20) and clusters 1024 points of 32 dimensions; size 0 clusters 256
// points of 16 dimensions with k 3..5 (fewer steps, for the tests).
//
// Inputs as the host makes them: SimStream's points uniform in [0, 1) in
// every dimension, weights 1. Rodinia draws every random number (the points,
// the shuffles, speedy's openings, the feasible centres) from lrand48
// seeded with 1; here they come from one corpus::Random in the same order,
// as 31-bit numbers like lrand48's.
//
// Where the host code differs: the original allocates work_mem for
// (kmax + 1) rows of num floats at the first pgain and writes past it when
// the number of centres K exceeds kmax (K + 1 columns a row); here the
// buffer is made larger, (K + 1) * num floats, when that happens. The
// original's other device buffers are made at the first pgain and never
// again, and so are they here (the coordinates are written once, as there).
//
// The check runs the same host program with the kernels computed serially in
// C++, one work-item after the other (the suite has no CPU reference of its
// OpenCL pgain), and compares the number of pgain steps, the centres found
// (their ids, weights and coordinates) and the final number of centres.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <utility>

using namespace corpus;

namespace {

constexpr int MaxDim = 256;          // coord_s in the kernels
constexpr unsigned GroupSize = 256;  // the host's work_group_size
constexpr long CenterSize = 1000;    // clustersize
constexpr int Iter = 3;              // ITER
constexpr int SP = 1;                // SP

/// Buffers that memset_kernel clears are made a multiple of its 256
/// work-items long: it writes every byte its work-items number, unchecked.
size_t roundUp(size_t Bytes) {
  return (Bytes + GroupSize - 1) / GroupSize * GroupSize;
}

struct Point {
  float Weight;
  float *Coord;
  long Assign; // the point this one is assigned to
  float Cost;  // weight * distance to it
};

struct Points {
  long Num;
  int Dim;
  std::vector<Point> P;
};

/// The device's Point_Struct: 24 bytes, as OpenCL lays out
/// {float; long; float;}.
struct PointStruct {
  float Weight;
  int32_t Pad0;
  int64_t Assign;
  float Cost;
  int32_t Pad1;
};
static_assert(sizeof(PointStruct) == 24, "the OpenCL struct's layout");

float dist(const Point &P1, const Point &P2, int Dim) {
  float Result = 0.0f;
  for (int I = 0; I < Dim; ++I)
    Result += (P1.Coord[I] - P2.Coord[I]) * (P1.Coord[I] - P2.Coord[I]);
  return Result;
}

/// One run of the host program on a backend; the state that Rodinia keeps in
/// globals and function statics lives here.
class StreamCluster {
public:
  StreamCluster(Backend &B, Random Rng, const std::vector<float> &Block,
                long N, int Dim, long KMin, long KMax)
      : B(B), Rng(Rng), Block(Block), N(N), Dim(Dim), KMin(KMin),
        KMax(KMax) {}

  void run() {
    // streamCluster(): one chunk of N points.
    Points Pts;
    Pts.Dim = Dim;
    Pts.Num = N;
    Pts.P.resize(N);
    for (long I = 0; I < N; ++I)
      Pts.P[I] = {1.0f, &Block[size_t(I) * Dim], 0, 0.0f};
    Points Centers;
    Centers.Dim = Dim;
    Centers.Num = 0;
    CenterBlock.assign(size_t(CenterSize) * Dim, 0.0f);
    Centers.P.resize(CenterSize);
    for (long I = 0; I < CenterSize; ++I)
      Centers.P[I] = {1.0f, &CenterBlock[size_t(I) * Dim], 0, 0.0f};
    CenterIDs.assign(CenterSize, 0);

    SwitchMembership.assign(Pts.Num, 0);
    IsCenter.assign(Pts.Num, false);
    CenterTable.assign(Pts.Num, 0);
    long KFinal;
    pkmedian(Pts, KMin, KMax, &KFinal);
    contcenters(Pts);
    if (KFinal + Centers.Num > CenterSize)
      throw std::runtime_error("streamcluster: no more space for centers");
    copycenters(Pts, Centers, 0);

    // The chunk's centres, clustered again.
    SwitchMembership.assign(Centers.Num, 0);
    IsCenter.assign(Centers.Num, false);
    CenterTable.assign(Centers.Num, 0);
    pkmedian(Centers, KMin, KMax, &KFinal);
    contcenters(Centers);

    // What outcenterIDs writes: the medians' ids, weights and coordinates.
    Result.KFinal = KFinal;
    Result.Steps = C;
    Result.Launches = Launches;
    std::vector<bool> IsMedian(Centers.Num, false);
    for (long I = 0; I < Centers.Num; ++I)
      IsMedian[Centers.P[I].Assign] = true;
    for (long I = 0; I < Centers.Num; ++I)
      if (IsMedian[I]) {
        Result.Ids.push_back(CenterIDs[I]);
        Result.Weights.push_back(Centers.P[I].Weight);
        Result.Coords.insert(Result.Coords.end(), Centers.P[I].Coord,
                             Centers.P[I].Coord + Dim);
      }
  }

  struct Output {
    long KFinal = 0;
    int Steps = 0;
    unsigned Launches = 0;
    std::vector<long> Ids;
    std::vector<float> Weights, Coords;
  } Result;

private:
  long lrand() { return long(Rng.next() >> 33); } // lrand48: [0, 2^31)

  void shuffle(Points &Pts) {
    for (long I = 0; I < Pts.Num - 1; ++I) {
      long J = (lrand() % (Pts.Num - I)) + I;
      std::swap(Pts.P[I], Pts.P[J]);
    }
  }

  void intshuffle(std::vector<int> &A) {
    long Length = long(A.size());
    for (long I = 0; I < Length; ++I) {
      long J = (lrand() % (Length - I)) + I;
      std::swap(A[I], A[J]);
    }
  }

  /// Speedy with one thread: opens centres at random with probability
  /// cost / z; returns the total cost.
  float pspeedy(Points &Pts, float Z, long *KCenter) {
    for (long K = 0; K < Pts.Num; ++K) {
      float Distance = dist(Pts.P[K], Pts.P[0], Pts.Dim);
      Pts.P[K].Cost = Distance * Pts.P[K].Weight;
      Pts.P[K].Assign = 0;
    }
    *KCenter = 1;
    for (long I = 1; I < Pts.Num; ++I) {
      bool ToOpen = (float(lrand()) / float(INT_MAX)) < (Pts.P[I].Cost / Z);
      if (ToOpen) {
        (*KCenter)++;
        for (long K = 0; K < Pts.Num; ++K) {
          float Distance = dist(Pts.P[I], Pts.P[K], Pts.Dim);
          if (Distance * Pts.P[K].Weight < Pts.P[K].Cost) {
            Pts.P[K].Cost = Distance * Pts.P[K].Weight;
            Pts.P[K].Assign = I;
          }
        }
      }
    }
    float MyTotal = 0;
    for (long K = 0; K < Pts.Num; ++K)
      MyTotal += Pts.P[K].Cost;
    return Z * (*KCenter) + MyTotal;
  }

  /// The gain of opening a centre at point X: the device computes each
  /// point's part, the host adds them up and applies the change if it pays.
  float pgain(long X, Points &Pts, float Z, long *NumCenters, int KMaxArg) {
    int K = int(*NumCenters);
    int Num = int(Pts.Num);
    int D = Pts.Dim;
    KMaxArg++;
    int Count = 0;
    for (int I = 0; I < Num; ++I)
      if (IsCenter[I])
        CenterTable[I] = Count++;

    if (C == 0) {
      // The first step: host arrays, device buffers, the coordinates.
      std::vector<float> CoordH(size_t(Num) * D);
      for (int I = 0; I < D; ++I)
        for (int J = 0; J < Num; ++J)
          CoordH[size_t(Num) * I + J] = Pts.P[J].Coord[I];
      GlLower.assign(KMaxArg, 0.0f);
      WorkMemFloats = size_t(KMaxArg) * Num;
      WorkMemH.assign(WorkMemFloats, 0.0f);
      PH.assign(Num, PointStruct{});
      WorkMemD = B.create(roundUp(WorkMemFloats * sizeof(float)));
      CenterTableD = B.create(size_t(Num) * sizeof(int));
      SwitchMembershipD = B.create(roundUp(Num));
      PD = B.create(size_t(Num) * sizeof(PointStruct));
      CoordD = B.create(CoordH);
    }
    if (size_t(K + 1) * Num > WorkMemFloats) {
      // Where the original writes past work_mem: a larger buffer.
      WorkMemFloats = size_t(K + 1) * Num;
      WorkMemH.assign(WorkMemFloats, 0.0f);
      WorkMemD = B.create(roundUp(WorkMemFloats * sizeof(float)));
    }
    if (K + 1 > int(GlLower.size()))
      GlLower.resize(K + 1); // the original writes past gl_lower there too

    for (int I = 0; I < Num; ++I) {
      PH[I].Weight = Pts.P[I].Weight;
      PH[I].Assign = Pts.P[I].Assign;
      PH[I].Cost = Pts.P[I].Cost;
    }
    B.write(CenterTableD, CenterTable.data(), size_t(Num) * sizeof(int));
    B.write(PD, PH.data(), size_t(Num) * sizeof(PointStruct));

    memset(SwitchMembershipD, 0, Num);
    memset(WorkMemD, 0, (K + 1) * Num * int(sizeof(float)));
    B.launch("pgain_kernel", {cubesFor(Num)}, {GroupSize},
             {Arg::buf(PD), Arg::buf(CoordD), Arg::buf(WorkMemD),
              Arg::buf(CenterTableD), Arg::buf(SwitchMembershipD),
              Arg::i32(Num), Arg::i32(D), Arg::i64(int64_t(X)),
              Arg::i32(K)});
    ++Launches;
    B.finish();

    B.read(SwitchMembershipD, SwitchMembership.data(), Num);
    B.read(WorkMemD, WorkMemH.data(), size_t(K + 1) * Num * sizeof(float));

    // The host's part: the centres to close if X opens, and the net cost.
    int NumClose = 0;
    float GlCost = Z;
    for (int I = 0; I < Num; ++I) {
      if (IsCenter[I]) {
        float Low = Z;
        for (int J = 0; J < Num; ++J)
          Low += WorkMemH[size_t(J) * (K + 1) + CenterTable[I]];
        GlLower[CenterTable[I]] = Low;
        if (Low > 0) {
          NumClose++;
          WorkMemH[size_t(I) * (K + 1) + K] -= Low;
        }
      }
      GlCost += WorkMemH[size_t(I) * (K + 1) + K];
    }
    if (GlCost < 0) {
      for (int I = 0; I < Num; ++I) {
        bool CloseCenter = GlLower[CenterTable[Pts.P[I].Assign]] > 0;
        if (SwitchMembership[I] == '1' || CloseCenter) {
          Pts.P[I].Cost =
              Pts.P[I].Weight * dist(Pts.P[I], Pts.P[X], Pts.Dim);
          Pts.P[I].Assign = X;
        }
      }
      for (int I = 0; I < Num; ++I)
        if (IsCenter[I] && GlLower[CenterTable[I]] > 0)
          IsCenter[I] = false;
      IsCenter[X] = true;
      *NumCenters = *NumCenters + 1 - NumClose;
    } else {
      GlCost = 0;
    }
    C++;
    return -GlCost;
  }

  static uint32_t cubesFor(int WorkItems) {
    return (uint32_t(WorkItems) + GroupSize - 1) / GroupSize;
  }

  /// _clMemset: memset_kernel over the byte count rounded up to 256.
  void memset(Buf Mem, int Val, int NumberBytes) {
    B.launch("memset_kernel", {cubesFor(NumberBytes)}, {GroupSize},
             {Arg::buf(Mem), Arg::i32(Val), Arg::i32(NumberBytes)});
    ++Launches;
  }

  /// Local search for facility location: pgain over the feasible centres
  /// in random order until an improvement falls below e.
  float pFL(Points &Pts, std::vector<int> &Feasible, float Z, long *K,
            int KMaxArg, float Cost, long IterArg, float E) {
    float Change = Cost;
    while (Change / Cost > 1.0 * E) {
      Change = 0.0;
      intshuffle(Feasible);
      for (long I = 0; I < IterArg; ++I) {
        long X = I % long(Feasible.size());
        Change += pgain(Feasible[X], Pts, Z, K, KMaxArg);
      }
      Cost -= Change;
    }
    return Cost;
  }

  std::vector<int> selectfeasibleFast(Points &Pts, int KMinArg) {
    int NumFeasible = int(Pts.Num);
    if (NumFeasible > (Iter * KMinArg * std::log(float(KMinArg))))
      NumFeasible = int(Iter * KMinArg * std::log(float(KMinArg)));
    std::vector<int> Feasible(NumFeasible);
    if (NumFeasible == Pts.Num) {
      for (int I = 0; I < NumFeasible; ++I)
        Feasible[I] = I;
      return Feasible;
    }
    std::vector<float> AccumWeight(Pts.Num);
    AccumWeight[0] = Pts.P[0].Weight;
    for (long I = 1; I < Pts.Num; ++I)
      AccumWeight[I] = AccumWeight[I - 1] + Pts.P[I].Weight;
    float TotalWeight = AccumWeight[Pts.Num - 1];
    for (int I = 0; I < NumFeasible; ++I) {
      float W = (float(lrand()) / float(INT_MAX)) * TotalWeight;
      int L = 0, R = int(Pts.Num) - 1;
      if (AccumWeight[0] > W) {
        Feasible[I] = 0;
        continue;
      }
      while (L + 1 < R) {
        int Mid = (L + R) / 2;
        if (AccumWeight[Mid] > W)
          R = Mid;
        else
          L = Mid;
      }
      Feasible[I] = R;
    }
    return Feasible;
  }

  /// Approximate k-median by a binary search on the facility cost z.
  float pkmedian(Points &Pts, long KMinArg, long KMaxArg, long *KFinal) {
    float Hiz = 0.0f, Loz = 0.0f, Z;
    float MyHiz = 0;
    for (long KK = 0; KK < Pts.Num; ++KK)
      MyHiz += dist(Pts.P[KK], Pts.P[0], Pts.Dim) * Pts.P[KK].Weight;
    Hiz += MyHiz;
    Loz = 0.0;
    Z = (Hiz + Loz) / 2.0;
    if (Pts.Num <= KMaxArg) {
      // No more points than centres: every point is a centre.
      for (long KK = 0; KK < Pts.Num; ++KK) {
        Pts.P[KK].Assign = KK;
        Pts.P[KK].Cost = 0;
      }
      *KFinal = K;
      return 0;
    }
    shuffle(Pts);
    float Cost = pspeedy(Pts, Z, &K);
    int I = 0;
    while (K < KMinArg && I < SP) {
      Cost = pspeedy(Pts, Z, &K);
      I++;
    }
    while (K < KMinArg) {
      if (I >= SP) {
        Hiz = Z;
        Z = (Hiz + Loz) / 2.0;
        I = 0;
      }
      shuffle(Pts);
      Cost = pspeedy(Pts, Z, &K);
      I++;
    }
    std::vector<int> Feasible = selectfeasibleFast(Pts, int(KMinArg));
    for (long J = 0; J < Pts.Num; ++J)
      IsCenter[Pts.P[J].Assign] = true;

    long FLIter = long(Iter * KMaxArg * std::log(float(KMaxArg)));
    while (true) {
      Cost = pFL(Pts, Feasible, Z, &K, int(KMaxArg), Cost, FLIter, 0.1f);
      if ((K <= 1.1 * KMaxArg && K >= 0.9 * KMinArg) ||
          (K <= KMaxArg + 2 && K >= KMinArg - 2))
        Cost = pFL(Pts, Feasible, Z, &K, int(KMaxArg), Cost, FLIter, 0.001f);
      if (K > KMaxArg) {
        Loz = Z;
        Z = (Hiz + Loz) / 2.0;
        Cost += (Z - Loz) * K;
      }
      if (K < KMinArg) {
        Hiz = Z;
        Z = (Hiz + Loz) / 2.0;
        Cost += (Z - Hiz) * K;
      }
      if ((K <= KMaxArg && K >= KMinArg) || Loz >= 0.999 * Hiz)
        break;
    }
    *KFinal = K;
    return Cost;
  }

  /// Moves each centre to the weighted mean of its points.
  static void contcenters(Points &Pts) {
    for (long I = 0; I < Pts.Num; ++I) {
      Point &Own = Pts.P[Pts.P[I].Assign];
      if (Pts.P[I].Assign != I) {
        float RelWeight = Own.Weight + Pts.P[I].Weight;
        RelWeight = Pts.P[I].Weight / RelWeight;
        for (int II = 0; II < Pts.Dim; ++II) {
          Own.Coord[II] *= 1.0 - RelWeight;
          Own.Coord[II] += Pts.P[I].Coord[II] * RelWeight;
        }
        Own.Weight += Pts.P[I].Weight;
      }
    }
  }

  void copycenters(Points &Pts, Points &Centers, long Offset) {
    std::vector<bool> IsAMedian(Pts.Num, false);
    for (long I = 0; I < Pts.Num; ++I)
      IsAMedian[Pts.P[I].Assign] = true;
    long K = Centers.Num;
    for (long I = 0; I < Pts.Num; ++I)
      if (IsAMedian[I]) {
        std::copy(Pts.P[I].Coord, Pts.P[I].Coord + Pts.Dim,
                  Centers.P[K].Coord);
        Centers.P[K].Weight = Pts.P[I].Weight;
        CenterIDs[K] = I + Offset;
        K++;
      }
    Centers.Num = K;
  }

  Backend &B;
  Random Rng;
  std::vector<float> Block; // the chunk's coordinates (contcenters moves them)
  std::vector<float> CenterBlock;
  std::vector<long> CenterIDs;
  long N;
  int Dim;
  long KMin, KMax; // k1 and k2 of the command line
  long K = 0;      // pkmedian's static k
  int C = 0;  // pgain steps so far
  unsigned Launches = 0;
  std::vector<char> SwitchMembership;
  std::vector<bool> IsCenter;
  std::vector<int> CenterTable;
  std::vector<float> GlLower, WorkMemH;
  std::vector<PointStruct> PH;
  size_t WorkMemFloats = 0;
  Buf WorkMemD, CenterTableD, SwitchMembershipD, PD, CoordD;
};

/// memset_kernel for one work-item.
void memsetItem(unsigned char *Mem, int32_t Val, size_t ThreadId) {
  Mem[ThreadId] = (unsigned char)Val;
}

/// pgain_kernel for one work-item (XCoord: the coordinates of point x).
void pgainItem(const PointStruct *P, const float *Coord, float *WorkMem,
               const int *CenterTable, unsigned char *SwitchMembership,
               int Num, int Dim, const float *XCoord, int K, int ThreadId) {
  float XCost = 0.0f;
  for (int I = 0; I < Dim; ++I)
    XCost += (Coord[size_t(I) * Num + ThreadId] - XCoord[I]) *
             (Coord[size_t(I) * Num + ThreadId] - XCoord[I]);
  XCost = XCost * P[ThreadId].Weight;
  float CurrentCost = P[ThreadId].Cost;
  size_t Base = size_t(ThreadId) * (K + 1);
  if (XCost < CurrentCost) {
    SwitchMembership[ThreadId] = '1';
    WorkMem[Base + K] = XCost - CurrentCost;
  } else {
    int Assign = int(P[ThreadId].Assign);
    WorkMem[Base + CenterTable[Assign]] += CurrentCost - XCost;
  }
}

/// The check's device: the kernels run serially, one work-item after the
/// other, on host memory.
class SerialBackend : public Backend {
public:
  const char *name() const override { return "serial"; }
  Buf create(size_t Bytes, const void *Init) override {
    Mem.emplace_back(Bytes, 0);
    if (Init)
      std::memcpy(Mem.back().data(), Init, Bytes);
    return Buf{int(Mem.size()) - 1};
  }
  void write(Buf B, const void *Src, size_t Bytes) override {
    std::memcpy(Mem.at(B.Index).data(), Src, Bytes);
  }
  void read(Buf B, void *Dst, size_t Bytes) override {
    std::memcpy(Dst, Mem.at(B.Index).data(), Bytes);
  }
  void launch(const char *Name, Dim3 Cubes, Dim3 Cube,
              std::initializer_list<Arg> Args) override {
    std::vector<Arg> A(Args);
    size_t Items = Cubes.count() * Cube.count();
    if (std::strcmp(Name, "memset_kernel") == 0) {
      auto *M = Mem.at(A[0].B.Index).data();
      int32_t Val;
      std::memcpy(&Val, A[1].Bytes.data(), 4);
      for (size_t T = 0; T < Items; ++T)
        memsetItem(M, Val, T);
      return;
    }
    int32_t Num, Dim, K;
    int64_t X;
    std::memcpy(&Num, A[5].Bytes.data(), 4);
    std::memcpy(&Dim, A[6].Bytes.data(), 4);
    std::memcpy(&X, A[7].Bytes.data(), 8);
    std::memcpy(&K, A[8].Bytes.data(), 4);
    auto *P = reinterpret_cast<const PointStruct *>(
        Mem.at(A[0].B.Index).data());
    auto *Coord = reinterpret_cast<const float *>(Mem.at(A[1].B.Index).data());
    auto *Work = reinterpret_cast<float *>(Mem.at(A[2].B.Index).data());
    auto *Table = reinterpret_cast<const int *>(Mem.at(A[3].B.Index).data());
    auto *Switch = Mem.at(A[4].B.Index).data();
    std::vector<float> XCoord(Dim);
    for (int I = 0; I < Dim; ++I)
      XCoord[I] = Coord[size_t(I) * Num + X];
    for (int T = 0; T < Num; ++T)
      pgainItem(P, Coord, Work, Table, Switch, Num, Dim, XCoord.data(), K, T);
  }
  void finish() override {}

private:
  std::vector<std::vector<unsigned char>> Mem;
};

class StreamClusterInstance : public Instance {
public:
  StreamClusterInstance(long N, int Dim, long KMin, long KMax)
      : N(N), Dim(Dim), KMin(KMin), KMax(KMax), Rng(1) {
    if (Dim > MaxDim)
      throw std::invalid_argument("streamcluster: dim above 256");
    // SimStream: every coordinate lrand48() / INT_MAX.
    Block.resize(size_t(N) * Dim);
    for (float &V : Block)
      V = float(long(Rng.next() >> 33)) / float(INT_MAX);
  }

  void setup(Backend &) override {
    // The device buffers are made by the first pgain step, as the original
    // makes them.
  }

  void run(Backend &B) override {
    StreamCluster S(B, Rng, Block, N, Dim, KMin, KMax);
    S.run();
    B.finish();
    Got = S.Result;
  }

  bool check(Backend &, std::string &Why) override {
    if (Ref.Steps == 0) {
      SerialBackend Serial;
      StreamCluster S(Serial, Rng, Block, N, Dim, KMin, KMax);
      S.run();
      Ref = S.Result;
    }
    std::ostringstream OS;
    if (Got.Steps != Ref.Steps || Got.KFinal != Ref.KFinal ||
        Got.Ids != Ref.Ids) {
      OS << Got.Steps << " pgain steps, " << Got.KFinal << " centres (ids";
      for (long Id : Got.Ids)
        OS << " " << Id;
      OS << "); the reference: " << Ref.Steps << " steps, " << Ref.KFinal
         << " centres (ids";
      for (long Id : Ref.Ids)
        OS << " " << Id;
      OS << ")";
      Why = OS.str();
      return false;
    }
    if (!closeEnough(Got.Weights.data(), Ref.Weights.data(),
                     Got.Weights.size(), 0, 0, Why)) {
      Why = "centre weights: " + Why;
      return false;
    }
    if (!closeEnough(Got.Coords.data(), Ref.Coords.data(), Got.Coords.size(),
                     1e-5, 1e-6, Why)) {
      Why = "centre coordinates: " + Why;
      return false;
    }
    return true;
  }

  unsigned launches() const override { return Got.Launches; }

private:
  long N;
  int Dim;
  long KMin, KMax;
  Random Rng; // lrand48's stream after the points
  std::vector<float> Block;
  StreamCluster::Output Got, Ref;
};

/// memset_kernel: one iteration per work-item (the byte count rounded up
/// to 256, as launched).
void memsetNative(const NativeLaunch &L) {
  auto *Mem = L.ptr<unsigned char>(0);
  int32_t Val = L.value<int32_t>(1);
  long Items = long(L.Cubes.count() * L.Cube.count());
#pragma omp parallel for
  for (long T = 0; T < Items; ++T)
    Mem[T] = (unsigned char)Val;
}

/// pgain_kernel: one iteration per point, each reading point x's
/// coordinates from the feature-major array.
void pgainNative(const NativeLaunch &L) {
  const auto *P = L.ptr<PointStruct>(0);
  const float *Coord = L.ptr<float>(1);
  float *Work = L.ptr<float>(2);
  const int *Table = L.ptr<int>(3);
  auto *Switch = L.ptr<unsigned char>(4);
  int Num = L.value<int32_t>(5), Dim = L.value<int32_t>(6);
  int64_t X = L.value<int64_t>(7);
  int K = L.value<int32_t>(8);
#pragma omp parallel for
  for (int T = 0; T < Num; ++T) {
    float XCost = 0.0f;
    for (int I = 0; I < Dim; ++I) {
      float D = Coord[size_t(I) * Num + T] - Coord[size_t(I) * Num + X];
      XCost += D * D;
    }
    XCost = XCost * P[T].Weight;
    float CurrentCost = P[T].Cost;
    size_t Base = size_t(T) * (K + 1);
    if (XCost < CurrentCost) {
      Switch[T] = '1';
      Work[Base + K] = XCost - CurrentCost;
    } else {
      Work[Base + Table[int(P[T].Assign)]] += CurrentCost - XCost;
    }
  }
}

} // namespace

KILN_CORPUS_NATIVE(memset_kernel, memsetNative);
KILN_CORPUS_NATIVE(pgain_kernel, pgainNative);

KILN_CORPUS_BENCHMARK(streamcluster,
                      "k-median of 1024 points x 32 dims, k 10..20 "
                      "(Rodinia streamcluster), host search between",
                      [](int Size) {
                        return Size == 0
                                   ? std::make_unique<StreamClusterInstance>(
                                         256, 16, 3, 5)
                                   : std::make_unique<StreamClusterInstance>(
                                         1024, 32, 10, 20);
                      });
