// nw.cl - Needleman-Wunsch global alignment scores, one anti-diagonal of
// 16 x 16 blocks per launch.
//
// Written after Rodinia's opencl/nw (nw.cl): nw_kernel1 sweeps the blocks
// of the upper-left triangle, nw_kernel2 those of the lower-right one; a
// work-group of 16 work-items loads its block's north row, west column and
// reference scores into local memory, fills the block along its 31 inner
// anti-diagonals (one barrier each) and writes the 16 x 16 scores back.
//
// Rodinia passes the two scratch arrays as __local kernel arguments
// ((BLOCK_SIZE+1)^2 and BLOCK_SIZE^2 ints); here they are __local arrays of
// those sizes declared in the kernels, since the corpus passes buffers and
// scalars only. OutputItemsetsD, BlockWidth (in nw_kernel1), Worksize are
// unused, as in Rodinia.

#define BLOCK_SIZE 16

#define SCORE(I, J) InputItemsetsL[(J) + (I) * (BLOCK_SIZE + 1)]
#define REF(I, J) ReferenceL[(J) + (I) * BLOCK_SIZE]

int maximum(int A, int B, int C) {
  int K;
  if (A <= B)
    K = B;
  else
    K = A;
  if (K <= C)
    return C;
  return K;
}

__kernel void nw_kernel1(__global int *ReferenceD,
                         __global int *InputItemsetsD,
                         __global int *OutputItemsetsD, int Cols, int Penalty,
                         int Blk, int BlockWidth, int Worksize, int OffsetR,
                         int OffsetC) {
  __local int InputItemsetsL[(BLOCK_SIZE + 1) * (BLOCK_SIZE + 1)];
  __local int ReferenceL[BLOCK_SIZE * BLOCK_SIZE];
  int Bx = get_group_id(0);
  int Tx = get_local_id(0);

  int Base = OffsetR * Cols + OffsetC;
  int BIndexX = Bx;
  int BIndexY = Blk - 1 - Bx;

  int Index = Base + Cols * BLOCK_SIZE * BIndexY + BLOCK_SIZE * BIndexX + Tx +
              (Cols + 1);
  int IndexN =
      Base + Cols * BLOCK_SIZE * BIndexY + BLOCK_SIZE * BIndexX + Tx + (1);
  int IndexW =
      Base + Cols * BLOCK_SIZE * BIndexY + BLOCK_SIZE * BIndexX + (Cols);
  int IndexNW = Base + Cols * BLOCK_SIZE * BIndexY + BLOCK_SIZE * BIndexX;

  if (Tx == 0)
    SCORE(Tx, 0) = InputItemsetsD[IndexNW + Tx];
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int Ty = 0; Ty < BLOCK_SIZE; Ty++)
    REF(Ty, Tx) = ReferenceD[Index + Cols * Ty];
  barrier(CLK_LOCAL_MEM_FENCE);

  SCORE((Tx + 1), 0) = InputItemsetsD[IndexW + Cols * Tx];
  barrier(CLK_LOCAL_MEM_FENCE);

  SCORE(0, (Tx + 1)) = InputItemsetsD[IndexN];
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int M = 0; M < BLOCK_SIZE; M++) {
    if (Tx <= M) {
      int TIndexX = Tx + 1;
      int TIndexY = M - Tx + 1;
      SCORE(TIndexY, TIndexX) =
          maximum(SCORE((TIndexY - 1), (TIndexX - 1)) +
                      REF((TIndexY - 1), (TIndexX - 1)),
                  SCORE((TIndexY), (TIndexX - 1)) - (Penalty),
                  SCORE((TIndexY - 1), (TIndexX)) - (Penalty));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int M = BLOCK_SIZE - 2; M >= 0; M--) {
    if (Tx <= M) {
      int TIndexX = Tx + BLOCK_SIZE - M;
      int TIndexY = BLOCK_SIZE - Tx;
      SCORE(TIndexY, TIndexX) =
          maximum(SCORE((TIndexY - 1), (TIndexX - 1)) +
                      REF((TIndexY - 1), (TIndexX - 1)),
                  SCORE((TIndexY), (TIndexX - 1)) - (Penalty),
                  SCORE((TIndexY - 1), (TIndexX)) - (Penalty));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int Ty = 0; Ty < BLOCK_SIZE; Ty++)
    InputItemsetsD[Index + Cols * Ty] = SCORE((Ty + 1), (Tx + 1));
}

__kernel void nw_kernel2(__global int *ReferenceD,
                         __global int *InputItemsetsD,
                         __global int *OutputItemsetsD, int Cols, int Penalty,
                         int Blk, int BlockWidth, int Worksize, int OffsetR,
                         int OffsetC) {
  __local int InputItemsetsL[(BLOCK_SIZE + 1) * (BLOCK_SIZE + 1)];
  __local int ReferenceL[BLOCK_SIZE * BLOCK_SIZE];
  int Bx = get_group_id(0);
  int Tx = get_local_id(0);

  int Base = OffsetR * Cols + OffsetC;
  int BIndexX = Bx + BlockWidth - Blk;
  int BIndexY = BlockWidth - Bx - 1;

  int Index = Base + Cols * BLOCK_SIZE * BIndexY + BLOCK_SIZE * BIndexX + Tx +
              (Cols + 1);
  int IndexN =
      Base + Cols * BLOCK_SIZE * BIndexY + BLOCK_SIZE * BIndexX + Tx + (1);
  int IndexW =
      Base + Cols * BLOCK_SIZE * BIndexY + BLOCK_SIZE * BIndexX + (Cols);
  int IndexNW = Base + Cols * BLOCK_SIZE * BIndexY + BLOCK_SIZE * BIndexX;

  if (Tx == 0)
    SCORE(Tx, 0) = InputItemsetsD[IndexNW];

  for (int Ty = 0; Ty < BLOCK_SIZE; Ty++)
    REF(Ty, Tx) = ReferenceD[Index + Cols * Ty];
  barrier(CLK_LOCAL_MEM_FENCE);

  SCORE((Tx + 1), 0) = InputItemsetsD[IndexW + Cols * Tx];
  barrier(CLK_LOCAL_MEM_FENCE);

  SCORE(0, (Tx + 1)) = InputItemsetsD[IndexN];
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int M = 0; M < BLOCK_SIZE; M++) {
    if (Tx <= M) {
      int TIndexX = Tx + 1;
      int TIndexY = M - Tx + 1;
      SCORE(TIndexY, TIndexX) =
          maximum(SCORE((TIndexY - 1), (TIndexX - 1)) +
                      REF((TIndexY - 1), (TIndexX - 1)),
                  SCORE((TIndexY), (TIndexX - 1)) - (Penalty),
                  SCORE((TIndexY - 1), (TIndexX)) - (Penalty));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int M = BLOCK_SIZE - 2; M >= 0; M--) {
    if (Tx <= M) {
      int TIndexX = Tx + BLOCK_SIZE - M;
      int TIndexY = BLOCK_SIZE - Tx;
      SCORE(TIndexY, TIndexX) =
          maximum(SCORE((TIndexY - 1), (TIndexX - 1)) +
                      REF((TIndexY - 1), (TIndexX - 1)),
                  SCORE((TIndexY), (TIndexX - 1)) - (Penalty),
                  SCORE((TIndexY - 1), (TIndexX)) - (Penalty));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int Ty = 0; Ty < BLOCK_SIZE; Ty++)
    InputItemsetsD[Index + Ty * Cols] = SCORE((Ty + 1), (Tx + 1));
}
