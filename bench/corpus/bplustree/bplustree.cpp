//===- bplustree.cpp - Rodinia's b+tree in the foreign-kernel corpus ------===//
//
// Searches in a B+ tree of order 256, after Rodinia's opencl/b+tree: the
// host builds the tree by inserting keys one by one (Rodinia's insertion
// code: leaves split at cut(order - 1), internal nodes at cut(order)),
// flattens it breadth-first into an array of knodes, then runs its two GPU
// commands: "k 10000" (findK: 10000 single-key searches) and "j 6000 3000"
// (findRangeK: 6000 searches of ranges of 3000 keys), one launch each, each
// followed by the read-back of its answers.
//
// Rodinia reads its million keys from a file (mil.txt); here the keys
// 0..N-1 are inserted in a random order, so that the queries, drawn in
// [0, N) as Rodinia's host draws them, find their keys. Node slots Rodinia
// leaves uninitialised (indices past a node's keys, keys[256]) are 0 and
// INT_MAX here. The OpenCL host has no reference; check() compares with the
// keys' ranks in the sorted key list (a leaf's record index is its key's
// rank), exactly.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int Order = 256; // DEFAULT_ORDER, the work-group size

// The knode of the kernels, with OpenCL's layout (bool is one byte).
struct KNode {
  int32_t Location;
  int32_t Indices[Order + 1];
  int32_t Keys[Order + 1];
  bool IsLeaf;
  int32_t NumKeys;
};
static_assert(sizeof(KNode) == 2068, "knode must match the OpenCL layout");

// Rodinia's B+ tree node: up to Order - 1 keys; an internal node has
// NumKeys + 1 children, a leaf NumKeys record values.
struct Node {
  bool IsLeaf = true;
  int NumKeys = 0;
  Node *Parent = nullptr;
  std::vector<int> Keys = std::vector<int>(Order);
  std::vector<Node *> Children;
  std::vector<int> Values;
};

int cut(int Length) { return Length % 2 == 0 ? Length / 2 : Length / 2 + 1; }

// Rodinia's insertion algorithm (insert, insert_into_leaf(_after_splitting),
// insert_into_parent, insert_into_node(_after_splitting)).
class Tree {
public:
  ~Tree() {
    for (Node *N : All)
      delete N;
  }

  void insert(int Key, int Value) {
    if (!Root) {
      Root = makeNode(true);
      Root->Keys[0] = Key;
      Root->Values[0] = Value;
      Root->NumKeys = 1;
      return;
    }
    Node *Leaf = findLeaf(Key);
    for (int I = 0; I < Leaf->NumKeys; ++I)
      if (Leaf->Keys[I] == Key)
        return; // duplicates are ignored
    if (Leaf->NumKeys < Order - 1) {
      int At = 0;
      while (At < Leaf->NumKeys && Leaf->Keys[At] < Key)
        ++At;
      for (int I = Leaf->NumKeys; I > At; --I) {
        Leaf->Keys[I] = Leaf->Keys[I - 1];
        Leaf->Values[I] = Leaf->Values[I - 1];
      }
      Leaf->Keys[At] = Key;
      Leaf->Values[At] = Value;
      ++Leaf->NumKeys;
      return;
    }
    // Split the leaf.
    std::vector<int> TempKeys(Order), TempValues(Order);
    int At = 0;
    while (At < Order - 1 && Leaf->Keys[At] < Key)
      ++At;
    for (int I = 0, J = 0; I < Leaf->NumKeys; ++I, ++J) {
      if (J == At)
        ++J;
      TempKeys[J] = Leaf->Keys[I];
      TempValues[J] = Leaf->Values[I];
    }
    TempKeys[At] = Key;
    TempValues[At] = Value;
    Node *NewLeaf = makeNode(true);
    int Split = cut(Order - 1);
    Leaf->NumKeys = 0;
    for (int I = 0; I < Split; ++I) {
      Leaf->Keys[I] = TempKeys[I];
      Leaf->Values[I] = TempValues[I];
      ++Leaf->NumKeys;
    }
    for (int I = Split, J = 0; I < Order; ++I, ++J) {
      NewLeaf->Keys[J] = TempKeys[I];
      NewLeaf->Values[J] = TempValues[I];
      ++NewLeaf->NumKeys;
    }
    NewLeaf->Parent = Leaf->Parent;
    insertIntoParent(Leaf, NewLeaf->Keys[0], NewLeaf);
  }

  int height() const {
    int H = 0;
    for (Node *C = Root; !C->IsLeaf; C = C->Children[0])
      ++H;
    return H;
  }

  // Rodinia's transform_to_cuda: the nodes breadth-first; an internal
  // node's indices are its children's positions, a leaf's its records'.
  void flatten(std::vector<KNode> &Knodes, std::vector<int32_t> &Records) {
    std::deque<Node *> Queue{Root};
    int32_t NodeIndex = 1, QueueIndex = 0, RecordIndex = 0;
    while (!Queue.empty()) {
      Node *N = Queue.front();
      Queue.pop_front();
      Knodes.emplace_back();
      KNode &K = Knodes.back();
      K = KNode{};
      K.Location = QueueIndex++;
      K.IsLeaf = N->IsLeaf;
      K.NumKeys = N->NumKeys + 2;
      K.Keys[0] = INT_MIN;
      K.Keys[K.NumKeys - 1] = INT_MAX;
      for (int I = K.NumKeys; I <= Order; ++I)
        K.Keys[I] = INT_MAX;
      int I;
      if (!N->IsLeaf) {
        K.Indices[0] = NodeIndex++;
        for (I = 1; I < K.NumKeys - 1; ++I) {
          K.Keys[I] = N->Keys[I - 1];
          Queue.push_back(N->Children[I - 1]);
          K.Indices[I] = NodeIndex++;
        }
        Queue.push_back(N->Children[I - 1]);
      } else {
        K.Indices[0] = 0;
        for (I = 1; I < K.NumKeys - 1; ++I) {
          K.Keys[I] = N->Keys[I - 1];
          Records.push_back(N->Values[I - 1]);
          K.Indices[I] = RecordIndex++;
        }
      }
      K.Indices[K.NumKeys - 1] = QueueIndex;
    }
  }

private:
  Node *makeNode(bool IsLeaf) {
    Node *N = new Node;
    N->IsLeaf = IsLeaf;
    if (IsLeaf)
      N->Values.assign(Order, 0);
    else
      N->Children.assign(Order + 1, nullptr);
    All.push_back(N);
    return N;
  }

  Node *findLeaf(int Key) const {
    Node *C = Root;
    while (!C->IsLeaf) {
      int I = 0;
      while (I < C->NumKeys && Key >= C->Keys[I])
        ++I;
      C = C->Children[I];
    }
    return C;
  }

  void insertIntoParent(Node *Left, int Key, Node *Right) {
    Node *Parent = Left->Parent;
    if (!Parent) {
      Root = makeNode(false);
      Root->Keys[0] = Key;
      Root->Children[0] = Left;
      Root->Children[1] = Right;
      Root->NumKeys = 1;
      Left->Parent = Right->Parent = Root;
      return;
    }
    int LeftIndex = 0;
    while (LeftIndex <= Parent->NumKeys && Parent->Children[LeftIndex] != Left)
      ++LeftIndex;
    if (Parent->NumKeys < Order - 1) {
      for (int I = Parent->NumKeys; I > LeftIndex; --I) {
        Parent->Children[I + 1] = Parent->Children[I];
        Parent->Keys[I] = Parent->Keys[I - 1];
      }
      Parent->Children[LeftIndex + 1] = Right;
      Parent->Keys[LeftIndex] = Key;
      ++Parent->NumKeys;
      return;
    }
    // Split the internal node.
    std::vector<Node *> TempChildren(Order + 1);
    std::vector<int> TempKeys(Order);
    for (int I = 0, J = 0; I < Parent->NumKeys + 1; ++I, ++J) {
      if (J == LeftIndex + 1)
        ++J;
      TempChildren[J] = Parent->Children[I];
    }
    for (int I = 0, J = 0; I < Parent->NumKeys; ++I, ++J) {
      if (J == LeftIndex)
        ++J;
      TempKeys[J] = Parent->Keys[I];
    }
    TempChildren[LeftIndex + 1] = Right;
    TempKeys[LeftIndex] = Key;
    int Split = cut(Order);
    Node *NewNode = makeNode(false);
    Parent->NumKeys = 0;
    int I, J;
    for (I = 0; I < Split - 1; ++I) {
      Parent->Children[I] = TempChildren[I];
      Parent->Keys[I] = TempKeys[I];
      ++Parent->NumKeys;
    }
    Parent->Children[I] = TempChildren[I];
    int KPrime = TempKeys[Split - 1];
    for (++I, J = 0; I < Order; ++I, ++J) {
      NewNode->Children[J] = TempChildren[I];
      NewNode->Keys[J] = TempKeys[I];
      ++NewNode->NumKeys;
    }
    NewNode->Children[J] = TempChildren[I];
    NewNode->Parent = Parent->Parent;
    for (int C = 0; C <= NewNode->NumKeys; ++C)
      NewNode->Children[C]->Parent = NewNode;
    insertIntoParent(Parent, KPrime, NewNode);
  }

  Node *Root = nullptr;
  std::vector<Node *> All;
};

class BPlusTreeInstance : public corpus::Instance {
public:
  explicit BPlusTreeInstance(int Size)
      : NumKeys(Size == 0 ? 20000 : 1000000), CountK(Size == 0 ? 1000 : 10000),
        CountJ(Size == 0 ? 600 : 6000), RangeSize(Size == 0 ? 300 : 3000) {
    corpus::Random R(3);
    std::vector<int> Keys(NumKeys);
    for (int I = 0; I < NumKeys; ++I)
      Keys[I] = I;
    for (int I = NumKeys - 1; I > 0; --I) // Fisher-Yates
      std::swap(Keys[I], Keys[R.below(uint32_t(I + 1))]);
    Tree T;
    for (int K : Keys)
      T.insert(K, K); // Rodinia inserts each key with its own value
    T.flatten(Knodes, Records);
    Height = T.height();
    SortedKeys = Keys;
    std::sort(SortedKeys.begin(), SortedKeys.end());
    // The queries, as the host draws them.
    for (int I = 0; I < CountK; ++I)
      QueryKeys.push_back(int(R.unit() * NumKeys));
    for (int I = 0; I < CountJ; ++I) {
      int Start = int(R.unit() * NumKeys), End = Start + RangeSize;
      if (End >= NumKeys) {
        Start = Start - (End - NumKeys);
        End = NumKeys - 1;
      }
      Starts.push_back(Start);
      Ends.push_back(End);
    }
  }

  void setup(corpus::Backend &B) override {
    KnodesBuf = B.create(Knodes);
    RecordsBuf = B.create(Records);
    // findK's buffers.
    CurrKnode = B.create(CountK * sizeof(int64_t));
    Offset = B.create(CountK * sizeof(int64_t));
    KeysBuf = B.create(QueryKeys);
    Ans = B.create(std::vector<int32_t>(CountK, -1));
    // findRangeK's buffers.
    CurrKnode2 = B.create(CountJ * sizeof(int64_t));
    Offset2 = B.create(CountJ * sizeof(int64_t));
    LastKnode = B.create(CountJ * sizeof(int64_t));
    OffsetLast = B.create(CountJ * sizeof(int64_t));
    StartBuf = B.create(Starts);
    EndBuf = B.create(Ends);
    Recstart = B.create(CountJ * sizeof(int32_t));
    Reclen = B.create(CountJ * sizeof(int32_t));
  }

  void run(corpus::Backend &B) override {
    using corpus::Arg;
    int64_t KnodesElem = int64_t(Knodes.size());
    corpus::Dim3 Cube{Order};
    // Command "k": findK, then the answers back.
    B.launch("findK", corpus::Dim3{uint32_t(CountK)}, Cube,
             {Arg::i64(Height), Arg::buf(KnodesBuf), Arg::i64(KnodesElem),
              Arg::buf(RecordsBuf), Arg::buf(CurrKnode), Arg::buf(Offset),
              Arg::buf(KeysBuf), Arg::buf(Ans)});
    GotAns = B.read<int32_t>(Ans, CountK);
    // Command "j": findRangeK, then the answers back.
    B.launch("findRangeK", corpus::Dim3{uint32_t(CountJ)}, Cube,
             {Arg::i64(Height), Arg::buf(KnodesBuf), Arg::i64(KnodesElem),
              Arg::buf(CurrKnode2), Arg::buf(Offset2), Arg::buf(LastKnode),
              Arg::buf(OffsetLast), Arg::buf(StartBuf), Arg::buf(EndBuf),
              Arg::buf(Recstart), Arg::buf(Reclen)});
    GotRecstart = B.read<int32_t>(Recstart, CountJ);
    GotReclen = B.read<int32_t>(Reclen, CountJ);
    B.finish();
  }

  bool check(corpus::Backend &, std::string &Why) override {
    // A key's record index is its rank among the sorted keys; -1 if absent.
    auto Rank = [&](int Key) {
      auto It = std::lower_bound(SortedKeys.begin(), SortedKeys.end(), Key);
      return It != SortedKeys.end() && *It == Key
                 ? int(It - SortedKeys.begin())
                 : -1;
    };
    for (int I = 0; I < CountK; ++I) {
      int Want = Rank(QueryKeys[I]) < 0 ? -1 : QueryKeys[I];
      if (GotAns[I] != Want) {
        Why = "findK query " + std::to_string(I) + " (key " +
              std::to_string(QueryKeys[I]) + ") answered " +
              std::to_string(GotAns[I]) + ", expected " + std::to_string(Want);
        return false;
      }
    }
    for (int I = 0; I < CountJ; ++I) {
      int S = Rank(Starts[I]), E = Rank(Ends[I]);
      int WantStart = S < 0 ? 0 : S;
      int WantLen = E < 0 ? 0 : E - WantStart + 1;
      if (GotRecstart[I] != WantStart || GotReclen[I] != WantLen) {
        Why = "findRangeK query " + std::to_string(I) + " [" +
              std::to_string(Starts[I]) + ", " + std::to_string(Ends[I]) +
              "] answered start " + std::to_string(GotRecstart[I]) +
              " length " + std::to_string(GotReclen[I]) + ", expected " +
              std::to_string(WantStart) + " and " + std::to_string(WantLen);
        return false;
      }
    }
    return true;
  }

  unsigned launches() const override { return 2; }

private:
  int NumKeys, CountK, CountJ, RangeSize;
  int64_t Height = 0;
  std::vector<KNode> Knodes;
  std::vector<int32_t> Records;
  std::vector<int> SortedKeys, QueryKeys, Starts, Ends;
  std::vector<int32_t> GotAns, GotRecstart, GotReclen;
  corpus::Buf KnodesBuf, RecordsBuf, CurrKnode, Offset, KeysBuf, Ans,
      CurrKnode2, Offset2, LastKnode, OffsetLast, StartBuf, EndBuf, Recstart,
      Reclen;
};

// The native kernels: one parallel loop over the queries (the
// work-groups); each does its work-group's steps as loops over the 256
// key slots, level by level.
void findKNative(const corpus::NativeLaunch &L) {
  int64_t Height = L.value<int64_t>(0);
  const KNode *Knodes = L.ptr<KNode>(1);
  int64_t KnodesElem = L.value<int64_t>(2);
  const int32_t *Records = L.ptr<int32_t>(3);
  int64_t *CurrKnode = L.ptr<int64_t>(4), *Offset = L.ptr<int64_t>(5);
  const int32_t *Keys = L.ptr<int32_t>(6);
  int32_t *Ans = L.ptr<int32_t>(7);
  int Count = int(L.Cubes.X), Threads = int(L.Cube.X);
#pragma omp parallel for
  for (int Bid = 0; Bid < Count; ++Bid) {
    for (int64_t I = 0; I < Height; ++I) {
      const KNode &N = Knodes[CurrKnode[Bid]];
      for (int T = 0; T < Threads; ++T)
        if (N.Keys[T] <= Keys[Bid] && N.Keys[T + 1] > Keys[Bid] &&
            Knodes[Offset[Bid]].Indices[T] < KnodesElem)
          Offset[Bid] = Knodes[Offset[Bid]].Indices[T];
      CurrKnode[Bid] = Offset[Bid];
    }
    const KNode &Leaf = Knodes[CurrKnode[Bid]];
    for (int T = 0; T < Threads; ++T)
      if (Leaf.Keys[T] == Keys[Bid])
        Ans[Bid] = Records[Leaf.Indices[T]];
  }
}

void findRangeKNative(const corpus::NativeLaunch &L) {
  int64_t Height = L.value<int64_t>(0);
  const KNode *Knodes = L.ptr<KNode>(1);
  int64_t KnodesElem = L.value<int64_t>(2);
  int64_t *CurrKnode = L.ptr<int64_t>(3), *Offset = L.ptr<int64_t>(4);
  int64_t *LastKnode = L.ptr<int64_t>(5), *Offset2 = L.ptr<int64_t>(6);
  const int32_t *Start = L.ptr<int32_t>(7), *End = L.ptr<int32_t>(8);
  int32_t *Recstart = L.ptr<int32_t>(9), *Reclen = L.ptr<int32_t>(10);
  int Count = int(L.Cubes.X), Threads = int(L.Cube.X);
#pragma omp parallel for
  for (int Bid = 0; Bid < Count; ++Bid) {
    for (int64_t I = 0; I < Height; ++I) {
      const KNode &C = Knodes[CurrKnode[Bid]], &La = Knodes[LastKnode[Bid]];
      for (int T = 0; T < Threads; ++T) {
        if (C.Keys[T] <= Start[Bid] && C.Keys[T + 1] > Start[Bid] &&
            C.Indices[T] < KnodesElem)
          Offset[Bid] = C.Indices[T];
        if (La.Keys[T] <= End[Bid] && La.Keys[T + 1] > End[Bid] &&
            La.Indices[T] < KnodesElem)
          Offset2[Bid] = La.Indices[T];
      }
      CurrKnode[Bid] = Offset[Bid];
      LastKnode[Bid] = Offset2[Bid];
    }
    const KNode &C = Knodes[CurrKnode[Bid]];
    for (int T = 0; T < Threads; ++T)
      if (C.Keys[T] == Start[Bid])
        Recstart[Bid] = C.Indices[T];
    const KNode &La = Knodes[LastKnode[Bid]];
    for (int T = 0; T < Threads; ++T)
      if (La.Keys[T] == End[Bid])
        Reclen[Bid] = La.Indices[T] - Recstart[Bid] + 1;
  }
}

} // namespace

KILN_CORPUS_NATIVE(findK, findKNative);
KILN_CORPUS_NATIVE(findRangeK, findRangeKNative);

KILN_CORPUS_BENCHMARK(bplustree,
                      "B+ tree of 1M keys (order 256): 10000 key searches "
                      "and 6000 range searches of 3000 keys, one work-group "
                      "a query",
                      [](int Size) {
                        return std::make_unique<BPlusTreeInstance>(Size);
                      });
