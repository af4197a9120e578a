//===- bfs.cpp - Rodinia's bfs in the foreign-kernel corpus ---------------===//
//
// Breadth-first search from node 0 over a random undirected graph, after
// Rodinia's opencl/bfs: per level, BFS_1 expands the frontier, BFS_2 makes
// the next frontier and sets the stop flag, which the host reads back; the
// costs (levels) are compared with the host's serial reference (Rodinia's
// run_bfs_cpu), exactly.
//
// Rodinia reads its graph from a file made by its graph generator; here the
// same generator runs in setup's place (in the constructor): every node i
// draws 2 to 4 edges to uniformly random nodes, and each edge is added in
// both directions (node i's list, then the other node's), so the mean
// degree is 6 as in Rodinia's graph1MW_6. The adjacency lists keep the
// generator's order. Edge weights are not drawn: bfs never reads them.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <omp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr uint32_t WorkGroupSize = 256; // Rodinia's MAX_THREADS_PER_BLOCK

class BfsInstance : public corpus::Instance {
public:
  explicit BfsInstance(int Size) : NoOfNodes(Size == 0 ? 4096 : 1 << 20) {
    generateGraph();
  }

  void setup(corpus::Backend &B) override {
    std::vector<int8_t> Mask(NoOfNodes, 0), Visited(NoOfNodes, 0);
    std::vector<int32_t> Cost(NoOfNodes, -1);
    Mask[0] = 1; // the source, node 0
    Visited[0] = 1;
    Cost[0] = 0;
    GraphNodes = B.create(Nodes);
    GraphEdges = B.create(Edges);
    GraphMask = B.create(Mask);
    UpdatingGraphMask = B.create(NoOfNodes);
    GraphVisited = B.create(Visited);
    CostBuf = B.create(Cost);
    Over = B.create(1);
  }

  void run(corpus::Backend &B) override {
    using corpus::Arg;
    Launches = 0;
    corpus::Dim3 Cubes{(uint32_t(NoOfNodes) + WorkGroupSize - 1) /
                       WorkGroupSize};
    corpus::Dim3 Cube{WorkGroupSize};
    int8_t HOver;
    do {
      HOver = 0;
      B.write(Over, &HOver, 1);
      B.launch("BFS_1", Cubes, Cube,
               {Arg::buf(GraphNodes), Arg::buf(GraphEdges),
                Arg::buf(GraphMask), Arg::buf(UpdatingGraphMask),
                Arg::buf(GraphVisited), Arg::buf(CostBuf),
                Arg::i32(NoOfNodes)});
      B.launch("BFS_2", Cubes, Cube,
               {Arg::buf(GraphMask), Arg::buf(UpdatingGraphMask),
                Arg::buf(GraphVisited), Arg::buf(Over), Arg::i32(NoOfNodes)});
      Launches += 2;
      B.read(Over, &HOver, 1);
    } while (HOver);
    B.finish();
  }

  bool check(corpus::Backend &B, std::string &Why) override {
    std::vector<int32_t> Got = B.read<int32_t>(CostBuf, NoOfNodes);
    std::vector<int32_t> Want = referenceCosts();
    for (int I = 0; I < NoOfNodes; ++I)
      if (Got[I] != Want[I]) {
        Why = "cost of node " + std::to_string(I) + " is " +
              std::to_string(Got[I]) + ", expected " + std::to_string(Want[I]);
        return false;
      }
    return true;
  }

  unsigned launches() const override { return Launches; }

private:
  // Rodinia's graph generator (see the file header), into the
  // {starting, no_of_edges} node array and the edge list.
  void generateGraph() {
    corpus::Random R(11);
    std::vector<std::pair<int32_t, int32_t>> Added; // (list owner, target)
    Added.reserve(size_t(NoOfNodes) * 6);
    for (int I = 0; I < NoOfNodes; ++I) {
      uint32_t NumEdges = R.below(3) + 2;
      for (uint32_t J = 0; J < NumEdges; ++J) {
        int32_t NodeId = int32_t(R.below(uint32_t(NoOfNodes)));
        Added.emplace_back(I, NodeId);
        Added.emplace_back(NodeId, I);
      }
    }
    std::vector<int32_t> Degree(NoOfNodes, 0);
    for (auto &[Owner, Target] : Added)
      ++Degree[Owner];
    Nodes.assign(size_t(NoOfNodes) * 2, 0);
    int32_t Start = 0;
    for (int I = 0; I < NoOfNodes; ++I) {
      Nodes[2 * I] = Start;
      Nodes[2 * I + 1] = Degree[I];
      Start += Degree[I];
    }
    Edges.assign(Start, 0);
    std::vector<int32_t> Fill(NoOfNodes, 0);
    for (auto &[Owner, Target] : Added)
      Edges[Nodes[2 * Owner] + Fill[Owner]++] = Target;
  }

  // Rodinia's run_bfs_cpu: the same two sweeps per level, serially.
  std::vector<int32_t> referenceCosts() const {
    std::vector<char> Mask(NoOfNodes, 0), Updating(NoOfNodes, 0),
        Visited(NoOfNodes, 0);
    std::vector<int32_t> Cost(NoOfNodes, -1);
    Mask[0] = Visited[0] = 1;
    Cost[0] = 0;
    bool Stop;
    do {
      Stop = false;
      for (int Tid = 0; Tid < NoOfNodes; ++Tid) {
        if (!Mask[Tid])
          continue;
        Mask[Tid] = 0;
        for (int I = Nodes[2 * Tid]; I < Nodes[2 * Tid + 1] + Nodes[2 * Tid];
             ++I) {
          int Id = Edges[I];
          if (!Visited[Id]) {
            Cost[Id] = Cost[Tid] + 1;
            Updating[Id] = 1;
          }
        }
      }
      for (int Tid = 0; Tid < NoOfNodes; ++Tid) {
        if (Updating[Tid]) {
          Mask[Tid] = Visited[Tid] = 1;
          Stop = true;
          Updating[Tid] = 0;
        }
      }
    } while (Stop);
    return Cost;
  }

  int NoOfNodes;
  std::vector<int32_t> Nodes; // per node: starting, no_of_edges
  std::vector<int32_t> Edges;
  corpus::Buf GraphNodes, GraphEdges, GraphMask, UpdatingGraphMask,
      GraphVisited, CostBuf, Over;
  unsigned Launches = 0;
};

// The native kernels: one parallel loop over the nodes per launch.
void bfs1Native(const corpus::NativeLaunch &L) {
  const int32_t *GraphNodes = L.ptr<int32_t>(0);
  const int32_t *GraphEdges = L.ptr<int32_t>(1);
  int8_t *GraphMask = L.ptr<int8_t>(2);
  int8_t *UpdatingGraphMask = L.ptr<int8_t>(3);
  const int8_t *GraphVisited = L.ptr<int8_t>(4);
  int32_t *Cost = L.ptr<int32_t>(5);
  int32_t NoOfNodes = L.value<int32_t>(6);
#pragma omp parallel for
  for (int32_t Tid = 0; Tid < NoOfNodes; ++Tid) {
    if (!GraphMask[Tid])
      continue;
    GraphMask[Tid] = 0;
    int32_t Start = GraphNodes[2 * Tid], Count = GraphNodes[2 * Tid + 1];
    for (int32_t I = Start; I < Count + Start; ++I) {
      int32_t Id = GraphEdges[I];
      if (!GraphVisited[Id]) {
        Cost[Id] = Cost[Tid] + 1;
        UpdatingGraphMask[Id] = 1;
      }
    }
  }
}

void bfs2Native(const corpus::NativeLaunch &L) {
  int8_t *GraphMask = L.ptr<int8_t>(0);
  int8_t *UpdatingGraphMask = L.ptr<int8_t>(1);
  int8_t *GraphVisited = L.ptr<int8_t>(2);
  int8_t *Over = L.ptr<int8_t>(3);
  int32_t NoOfNodes = L.value<int32_t>(4);
#pragma omp parallel for
  for (int32_t Tid = 0; Tid < NoOfNodes; ++Tid) {
    if (UpdatingGraphMask[Tid]) {
      GraphMask[Tid] = 1;
      GraphVisited[Tid] = 1;
      *Over = 1;
      UpdatingGraphMask[Tid] = 0;
    }
  }
}

} // namespace

KILN_CORPUS_NATIVE(BFS_1, bfs1Native);
KILN_CORPUS_NATIVE(BFS_2, bfs2Native);

KILN_CORPUS_BENCHMARK(bfs,
                      "breadth-first search, random graph of 1M nodes "
                      "(mean degree 6), 256-wide work-groups",
                      [](int Size) {
                        return std::make_unique<BfsInstance>(Size);
                      });
