// pathfinder.cl - minimum-weight paths down a grid, several rows per launch
// (ghost-zone pyramid).
//
// Written after Rodinia's opencl/pathfinder (kernels.cl): a work-group
// loads a row segment of the running sums, then advances Iteration rows in
// local memory, each step taking for every column the smallest of its
// three upper neighbours plus the wall's weight; the valid part shrinks by
// Halo columns per side and step, so each work-group writes back only its
// inner segment. The debug write to OutputBuffer is Rodinia's.
//
// Rodinia passes the two row arrays as __local kernel arguments of
// local-size ints; here they are __local arrays of the corpus's local size
// (BLOCK_SIZE, 250) declared in the kernel, since the corpus passes buffers
// and scalars only. The kernel reads its block size with get_local_size
// as Rodinia's does.

#define BLOCK_SIZE 250

#define IN_RANGE(X, Min, Max) ((X) >= (Min) && (X) <= (Max))
#define MIN(A, B) ((A) <= (B) ? (A) : (B))

__kernel void dynproc_kernel(int Iteration, __global int *GpuWall,
                             __global int *GpuSrc, __global int *GpuResults,
                             int Cols, int Rows, int StartStep, int Border,
                             int Halo, __global int *OutputBuffer) {
  __local int Prev[BLOCK_SIZE];
  __local int Result[BLOCK_SIZE];
  int BlockSize = get_local_size(0);
  int Bx = get_group_id(0);
  int Tx = get_local_id(0);

  int SmallBlockCols = BlockSize - (Iteration * Halo * 2);
  int BlkX = (SmallBlockCols * Bx) - Border;
  int BlkXmax = BlkX + BlockSize - 1;
  int Xidx = BlkX + Tx;

  int ValidXmin = (BlkX < 0) ? -BlkX : 0;
  int ValidXmax = (BlkXmax > Cols - 1)
                      ? BlockSize - 1 - (BlkXmax - Cols + 1)
                      : BlockSize - 1;

  int W = Tx - 1;
  int E = Tx + 1;
  W = (W < ValidXmin) ? ValidXmin : W;
  E = (E > ValidXmax) ? ValidXmax : E;

  bool IsValid = IN_RANGE(Tx, ValidXmin, ValidXmax);

  if (IN_RANGE(Xidx, 0, Cols - 1))
    Prev[Tx] = GpuSrc[Xidx];
  barrier(CLK_LOCAL_MEM_FENCE);

  bool Computed;
  for (int I = 0; I < Iteration; I++) {
    Computed = false;
    if (IN_RANGE(Tx, I + 1, BlockSize - I - 2) && IsValid) {
      Computed = true;
      int Left = Prev[W];
      int Up = Prev[Tx];
      int Right = Prev[E];
      int Shortest = MIN(Left, Up);
      Shortest = MIN(Shortest, Right);
      int Index = Cols * (StartStep + I) + Xidx;
      Result[Tx] = Shortest + GpuWall[Index];
      if (Tx == 11 && I == 0) {
        int BufIndex = GpuSrc[Xidx];
        OutputBuffer[BufIndex] = 1;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (I == Iteration - 1)
      break;
    if (Computed)
      Prev[Tx] = Result[Tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  if (Computed)
    GpuResults[Xidx] = Result[Tx];
}
