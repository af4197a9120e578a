//===- nn.cpp - Rodinia's nn: distances to a query point, 50 nearest -----===//
//
// The host program of Rodinia's opencl/nn (nearestNeighbor.cpp): the
// records' (latitude, longitude) pairs go to the device, one launch of
// NearestNeighbor computes every record's distance to the query point
// (lat 30, lng 90, as the suite's run script asks), the distances come back
// and the host picks the 50 nearest (-r 50) by repeated selection
// (findLowest).
//
// Inputs: Rodinia reads hurricane records from its data files (cane4_*.db,
// 42764 records in all). No file is read here: the generator makes records of
// the same shape and range, latitudes uniform in [7, 70) and longitudes
// uniform in [1, 359), rounded to one decimal as the records' text fields
// hold them.
//
// Size 0 is the suite's 42764 records; size 1 is 8381744 records (196 times
// as many), so that one launch does measurable work.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <algorithm>
#include <cmath>
#include <utility>

using namespace corpus;

namespace {

constexpr unsigned LocalSize = 64; // the host's rounding of the global size
constexpr int ResultsCount = 50;   // -r 50
constexpr float QueryLat = 30.0f;  // -lat 30
constexpr float QueryLng = 90.0f;  // -lng 90

/// The host's findLowest: moves the TopN smallest distances to the front,
/// in increasing order, by selection (ties keep the earliest record).
void findLowest(std::vector<float> &Dist, std::vector<int> &Rec, int TopN) {
  int N = int(Dist.size());
  for (int I = 0; I < TopN; ++I) {
    int MinLoc = I;
    for (int J = I; J < N; ++J)
      if (Dist[J] < Dist[MinLoc])
        MinLoc = J;
    std::swap(Rec[I], Rec[MinLoc]);
    std::swap(Dist[I], Dist[MinLoc]);
  }
}

class NearestNeighborInstance : public Instance {
public:
  explicit NearestNeighborInstance(int NumRecords) : NumRecords(NumRecords) {
    Random R(42);
    Locations.resize(2 * size_t(NumRecords));
    for (int I = 0; I < NumRecords; ++I) {
      float Lat = 7.0f + 63.0f * R.unit();
      float Lng = 1.0f + 358.0f * R.unit();
      Locations[2 * I] = std::round(Lat * 10.0f) / 10.0f;
      Locations[2 * I + 1] = std::round(Lng * 10.0f) / 10.0f;
    }
  }

  void setup(Backend &B) override {
    DLocations = B.create(Locations);
    DDistances = B.create(size_t(NumRecords) * sizeof(float));
  }

  void run(Backend &B) override {
    uint32_t Global = uint32_t(NumRecords);
    if (Global % LocalSize)
      Global += LocalSize - Global % LocalSize;
    B.launch("NearestNeighbor", {Global / LocalSize}, {LocalSize},
             {Arg::buf(DLocations), Arg::buf(DDistances),
              Arg::i32(NumRecords), Arg::f32(QueryLat), Arg::f32(QueryLng)});
    B.finish();
  }

  bool check(Backend &B, std::string &Why) override {
    std::vector<float> Got = B.read<float>(DDistances, NumRecords);
    // The reference: the same distance in double, rounded to float.
    std::vector<float> Want(NumRecords);
    for (int I = 0; I < NumRecords; ++I) {
      double DLat = double(QueryLat) - Locations[2 * I];
      double DLng = double(QueryLng) - Locations[2 * I + 1];
      Want[I] = float(std::sqrt(DLat * DLat + DLng * DLng));
    }
    if (!closeEnough(Got.data(), Want.data(), Got.size(), 1e-5, 1e-5, Why))
      return false;
    // The host's result: the 50 nearest records. Their distances must be
    // the reference's 50 smallest (records at equal distance may come in
    // another order, so the distances are compared, not the records).
    std::vector<int> GotRec(NumRecords), WantRec(NumRecords);
    for (int I = 0; I < NumRecords; ++I)
      GotRec[I] = WantRec[I] = I;
    int Top = std::min(ResultsCount, NumRecords);
    findLowest(Got, GotRec, Top);
    findLowest(Want, WantRec, Top);
    if (!closeEnough(Got.data(), Want.data(), Top, 1e-5, 1e-5, Why)) {
      Why = "the 50 nearest: " + Why;
      return false;
    }
    return true;
  }

  unsigned launches() const override { return 1; }

private:
  int NumRecords;
  std::vector<float> Locations; // lat, lng of record i at 2i, 2i+1
  Buf DLocations, DDistances;
};

/// NearestNeighbor: one iteration per record.
void nearestNeighborNative(const NativeLaunch &L) {
  const float *Loc = L.ptr<float>(0);
  float *Dist = L.ptr<float>(1);
  int NumRecords = L.value<int32_t>(2);
  float Lat = L.value<float>(3), Lng = L.value<float>(4);
#pragma omp parallel for
  for (int I = 0; I < NumRecords; ++I) {
    float DLat = Lat - Loc[2 * I], DLng = Lng - Loc[2 * I + 1];
    Dist[I] = std::sqrt(DLat * DLat + DLng * DLng);
  }
}

} // namespace

KILN_CORPUS_NATIVE(NearestNeighbor, nearestNeighborNative);

KILN_CORPUS_BENCHMARK(nn, "distances of 8381744 records to a query point "
                          "(Rodinia nn), one launch",
                      [](int Size) {
                        return std::make_unique<NearestNeighborInstance>(
                            Size == 0 ? 42764 : 8381744);
                      });
