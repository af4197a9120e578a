//===- kmeans.cpp - Rodinia's kmeans: k-means clustering, host-side update ===//
//
// The host program of Rodinia's opencl/kmeans (kmeans.cpp, cluster.c,
// kmeans_clustering.c) for one number of clusters (-n 5 -m 5, the defaults)
// and one loop (-l 1): the points go to the device and kmeans_swap transposes
// them to feature-major order; then, until no point changes cluster (delta
// <= threshold 0.001) or 500 more rounds have run, each round writes the
// centres, launches kmeans_kernel_c, reads the memberships back and computes
// the new centres on the host (sums in point order, then the means).
//
// Inputs: Rodinia reads the points from its data files (204800.txt,
// 819200.txt: one point a line, 34 features). No file is read here: the
// generator makes points of the same shape, 34 features each, scattered
// uniformly within +-0.1 around 5 centres drawn uniformly in [0, 1)^34,
// point i around centre i % 5. The first 5 points, which the host takes as
// the first centres, are then one per group, and the clustering converges
// in the same 2 rounds whatever the order of the float operations (with
// random groups it took some 60 rounds, a number that moved with the
// rounding of the distances, and so did the time).
//
// The check runs the same algorithm serially in C++ (the suite has no CPU
// reference in its OpenCL version) and compares the number of rounds, the
// memberships and the final centres.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <cfloat>
#include <cmath>
#include <sstream>
#include <utility>

using namespace corpus;

namespace {

constexpr int NFeatures = 34;
constexpr int NClusters = 5;
constexpr float Threshold = 0.001f;
constexpr unsigned BlockSize = 256; // BLOCK_SIZE and BLOCK_SIZE2

/// kmeans_clustering's choice of the first centres: the point at position n
/// of a list of indices whose chosen entry is swapped to the end, for n = 0,
/// 1, ... (so point i for cluster i unless the list wrapped).
std::vector<float> initialCenters(const std::vector<float> &Feature,
                                  int NPoints) {
  std::vector<int> Initial(NPoints);
  for (int I = 0; I < NPoints; ++I)
    Initial[I] = I;
  int InitialPoints = NPoints, N = 0;
  std::vector<float> Clusters(size_t(NClusters) * NFeatures);
  for (int I = 0; I < NClusters && InitialPoints >= 0; ++I) {
    for (int J = 0; J < NFeatures; ++J)
      Clusters[I * NFeatures + J] =
          Feature[size_t(Initial[N]) * NFeatures + J];
    std::swap(Initial[N], Initial[InitialPoints - 1]);
    --InitialPoints;
    ++N;
  }
  return Clusters;
}

/// The host's part of a round (kmeansOCL after the read-back, then
/// kmeans_clustering's update): counts the points that changed cluster,
/// sums the points of each cluster in point order and replaces each centre
/// that has points by the mean. Returns delta.
int updateCenters(const std::vector<float> &Feature, int NPoints,
                  const std::vector<int> &NewMembership,
                  std::vector<int> &Membership, std::vector<float> &Clusters) {
  std::vector<int> NewCentersLen(NClusters, 0);
  std::vector<float> NewCenters(size_t(NClusters) * NFeatures, 0.0f);
  int Delta = 0;
  for (int I = 0; I < NPoints; ++I) {
    int ClusterId = NewMembership[I];
    NewCentersLen[ClusterId]++;
    if (NewMembership[I] != Membership[I]) {
      Delta++;
      Membership[I] = NewMembership[I];
    }
    for (int J = 0; J < NFeatures; ++J)
      NewCenters[ClusterId * NFeatures + J] +=
          Feature[size_t(I) * NFeatures + J];
  }
  for (int I = 0; I < NClusters; ++I)
    for (int J = 0; J < NFeatures; ++J)
      if (NewCentersLen[I] > 0)
        Clusters[I * NFeatures + J] =
            NewCenters[I * NFeatures + J] / NewCentersLen[I];
  return Delta;
}

class KmeansInstance : public Instance {
public:
  explicit KmeansInstance(int NPoints) : NPoints(NPoints) {
    Random R(7);
    std::vector<float> Hidden(size_t(NClusters) * NFeatures);
    for (float &H : Hidden)
      H = R.unit();
    Feature.resize(size_t(NPoints) * NFeatures);
    for (int I = 0; I < NPoints; ++I) {
      int C = I % NClusters;
      for (int J = 0; J < NFeatures; ++J)
        Feature[size_t(I) * NFeatures + J] =
            Hidden[C * NFeatures + J] + 0.2f * R.unit() - 0.1f;
    }
  }

  void setup(Backend &B) override {
    DFeature = B.create(Feature);
    DFeatureSwap = B.create(Feature.size() * sizeof(float));
    DCluster = B.create(size_t(NClusters) * NFeatures * sizeof(float));
    DMembership = B.create(size_t(NPoints) * sizeof(int));
  }

  void run(Backend &B) override {
    Cubes = {(uint32_t(NPoints) + BlockSize - 1) / BlockSize};
    Launches = 0;
    // allocate(): the transposition, once per number of clusters.
    B.launch("kmeans_swap", Cubes, {BlockSize},
             {Arg::buf(DFeature), Arg::buf(DFeatureSwap), Arg::i32(NPoints),
              Arg::i32(NFeatures)});
    ++Launches;
    // kmeans_clustering().
    Clusters = initialCenters(Feature, NPoints);
    Membership.assign(NPoints, -1);
    std::vector<int> MembershipOCL(NPoints);
    int Loop = 0;
    Rounds = 0;
    float Delta;
    do {
      B.write(DCluster, Clusters);
      B.launch("kmeans_kernel_c", Cubes, {BlockSize},
               {Arg::buf(DFeatureSwap), Arg::buf(DCluster),
                Arg::buf(DMembership), Arg::i32(NPoints),
                Arg::i32(NClusters), Arg::i32(NFeatures), Arg::i32(0),
                Arg::i32(0)});
      ++Launches;
      B.finish(); // clFinish before the read-back
      B.read(DMembership, MembershipOCL.data(), NPoints * sizeof(int));
      Delta = float(updateCenters(Feature, NPoints, MembershipOCL,
                                  Membership, Clusters));
      ++Rounds;
    } while (Delta > Threshold && Loop++ < 500);
    B.finish();
  }

  bool check(Backend &B, std::string &Why) override {
    // The transposition.
    std::vector<float> Swap = B.read<float>(DFeatureSwap, Feature.size());
    for (int I = 0; I < NPoints; ++I)
      for (int J = 0; J < NFeatures; ++J)
        if (Swap[size_t(J) * NPoints + I] !=
            Feature[size_t(I) * NFeatures + J]) {
          std::ostringstream OS;
          OS << "kmeans_swap: feature " << J << " of point " << I
             << " is misplaced";
          Why = OS.str();
          return false;
        }
    reference();
    if (Rounds != RefRounds) {
      std::ostringstream OS;
      OS << Rounds << " rounds, the reference took " << RefRounds;
      Why = OS.str();
      return false;
    }
    // A point almost equidistant from two centres may be assigned otherwise
    // when the distance is summed with other roundings (contracted into
    // fma); allow one point in 10000 to differ.
    int Differ = 0, First = -1;
    for (int I = 0; I < NPoints; ++I)
      if (Membership[I] != RefMembership[I] && Differ++ == 0)
        First = I;
    if (Differ > NPoints / 10000) {
      std::ostringstream OS;
      OS << Differ << " of " << NPoints << " memberships differ, first point "
         << First << ": " << Membership[First] << ", expected "
         << RefMembership[First];
      Why = OS.str();
      return false;
    }
    if (!closeEnough(Clusters.data(), RefClusters.data(), Clusters.size(),
                     1e-4, 1e-5, Why)) {
      Why = "centres: " + Why;
      return false;
    }
    return true;
  }

  unsigned launches() const override { return Launches; }

private:
  /// The serial reference of the whole clustering, computed once.
  void reference() {
    if (RefRounds)
      return;
    RefClusters = initialCenters(Feature, NPoints);
    RefMembership.assign(NPoints, -1);
    std::vector<int> NewMembership(NPoints);
    int Loop = 0;
    float Delta;
    do {
      for (int P = 0; P < NPoints; ++P) {
        float MinDist = FLT_MAX;
        int Index = 0;
        for (int I = 0; I < NClusters; ++I) {
          float Ans = 0;
          for (int L = 0; L < NFeatures; ++L) {
            float D = Feature[size_t(P) * NFeatures + L] -
                      RefClusters[I * NFeatures + L];
            Ans += D * D;
          }
          if (Ans < MinDist) {
            MinDist = Ans;
            Index = I;
          }
        }
        NewMembership[P] = Index;
      }
      Delta = float(updateCenters(Feature, NPoints, NewMembership,
                                  RefMembership, RefClusters));
      ++RefRounds;
    } while (Delta > Threshold && Loop++ < 500);
  }

  int NPoints;
  std::vector<float> Feature; // point-major, as read from the input
  Buf DFeature, DFeatureSwap, DCluster, DMembership;
  Dim3 Cubes;
  unsigned Launches = 0;
  int Rounds = 0;
  std::vector<float> Clusters;
  std::vector<int> Membership;
  int RefRounds = 0;
  std::vector<float> RefClusters;
  std::vector<int> RefMembership;
};

/// kmeans_swap: one iteration per point.
void kmeansSwapNative(const NativeLaunch &L) {
  const float *Feature = L.ptr<float>(0);
  float *FeatureSwap = L.ptr<float>(1);
  int NPoints = L.value<int32_t>(2), NFeat = L.value<int32_t>(3);
#pragma omp parallel for
  for (int Tid = 0; Tid < NPoints; ++Tid)
    for (int I = 0; I < NFeat; ++I)
      FeatureSwap[size_t(I) * NPoints + Tid] =
          Feature[size_t(Tid) * NFeat + I];
}

/// kmeans_kernel_c: one iteration per point.
void kmeansKernelCNative(const NativeLaunch &L) {
  const float *Feature = L.ptr<float>(0);
  const float *Clusters = L.ptr<float>(1);
  int *Membership = L.ptr<int>(2);
  int NPoints = L.value<int32_t>(3), NClust = L.value<int32_t>(4),
      NFeat = L.value<int32_t>(5);
#pragma omp parallel for
  for (int P = 0; P < NPoints; ++P) {
    float MinDist = FLT_MAX;
    int Index = 0;
    for (int I = 0; I < NClust; ++I) {
      float Ans = 0;
      for (int F = 0; F < NFeat; ++F) {
        float D = Feature[size_t(F) * NPoints + P] - Clusters[I * NFeat + F];
        Ans += D * D;
      }
      if (Ans < MinDist) {
        MinDist = Ans;
        Index = I;
      }
    }
    Membership[P] = Index;
  }
}

} // namespace

KILN_CORPUS_NATIVE(kmeans_swap, kmeansSwapNative);
KILN_CORPUS_NATIVE(kmeans_kernel_c, kmeansKernelCNative);

KILN_CORPUS_BENCHMARK(kmeans, "k-means, 5 clusters of 204800 points x 34 "
                              "features (Rodinia kmeans), host update",
                      [](int Size) {
                        return std::make_unique<KmeansInstance>(
                            Size == 0 ? 4096 : 204800);
                      });
