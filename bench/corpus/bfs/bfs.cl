// bfs.cl - breadth-first search, one level per pair of launches.
//
// Written after Rodinia's opencl/bfs (Kernels.cl): BFS_1 expands every node
// of the frontier (mask), BFS_2 turns the nodes reached into the next
// frontier and raises the stop flag. One work-item per node, 1-D work-groups
// of 256 (the host rounds the global size up to a multiple of it).

typedef struct {
  int Starting;
  int NoOfEdges;
} Node;

__kernel void BFS_1(__global const Node *GraphNodes,
                    __global const int *GraphEdges, __global char *GraphMask,
                    __global char *UpdatingGraphMask,
                    __global char *GraphVisited, __global int *Cost,
                    const int NoOfNodes) {
  int Tid = get_global_id(0);
  if (Tid < NoOfNodes && GraphMask[Tid]) {
    GraphMask[Tid] = 0;
    for (int I = GraphNodes[Tid].Starting;
         I < GraphNodes[Tid].NoOfEdges + GraphNodes[Tid].Starting; I++) {
      int Id = GraphEdges[I];
      if (!GraphVisited[Id]) {
        Cost[Id] = Cost[Tid] + 1;
        UpdatingGraphMask[Id] = 1;
      }
    }
  }
}

__kernel void BFS_2(__global char *GraphMask, __global char *UpdatingGraphMask,
                    __global char *GraphVisited, __global char *Over,
                    const int NoOfNodes) {
  int Tid = get_global_id(0);
  if (Tid < NoOfNodes && UpdatingGraphMask[Tid]) {
    GraphMask[Tid] = 1;
    GraphVisited[Tid] = 1;
    *Over = 1;
    UpdatingGraphMask[Tid] = 0;
  }
}
