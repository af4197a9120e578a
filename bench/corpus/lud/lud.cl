// lud.cl - blocked LU decomposition (Doolittle, no pivoting) in place.
//
// Written after Rodinia's opencl/lud (lud_kernel.cl): per 16-wide block
// step, lud_diagonal factors the diagonal block (one work-group of 16),
// lud_perimeter solves the blocks right of it and below it (work-groups of
// 32: the first 16 work-items take a block of the row, the last 16 the
// block of the column), lud_internal updates the trailing blocks (16 x 16
// work-groups, one per block).
//
// Rodinia passes the scratch arrays as __local kernel arguments of
// BLOCK_SIZE * BLOCK_SIZE floats; here they are __local arrays of that size
// declared in the kernels, since the corpus passes buffers and scalars only.

#define BLOCK_SIZE 16

__kernel void lud_diagonal(__global float *M, int MatrixDim, int Offset) {
  __local float Shadow[BLOCK_SIZE * BLOCK_SIZE];
  int Tx = get_local_id(0);

  int ArrayOffset = Offset * MatrixDim + Offset;
  for (int I = 0; I < BLOCK_SIZE; I++) {
    Shadow[I * BLOCK_SIZE + Tx] = M[ArrayOffset + Tx];
    ArrayOffset += MatrixDim;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int I = 0; I < BLOCK_SIZE - 1; I++) {
    if (Tx > I) {
      for (int J = 0; J < I; J++)
        Shadow[Tx * BLOCK_SIZE + I] -=
            Shadow[Tx * BLOCK_SIZE + J] * Shadow[J * BLOCK_SIZE + I];
      Shadow[Tx * BLOCK_SIZE + I] /= Shadow[I * BLOCK_SIZE + I];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (Tx > I) {
      for (int J = 0; J < I + 1; J++)
        Shadow[(I + 1) * BLOCK_SIZE + Tx] -=
            Shadow[(I + 1) * BLOCK_SIZE + J] * Shadow[J * BLOCK_SIZE + Tx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  ArrayOffset = (Offset + 1) * MatrixDim + Offset;
  for (int I = 1; I < BLOCK_SIZE; I++) {
    M[ArrayOffset + Tx] = Shadow[I * BLOCK_SIZE + Tx];
    ArrayOffset += MatrixDim;
  }
}

__kernel void lud_perimeter(__global float *M, int MatrixDim, int Offset) {
  __local float Dia[BLOCK_SIZE * BLOCK_SIZE];
  __local float PeriRow[BLOCK_SIZE * BLOCK_SIZE];
  __local float PeriCol[BLOCK_SIZE * BLOCK_SIZE];
  int Bx = get_group_id(0);
  int Tx = get_local_id(0);
  int Idx, ArrayOffset;

  if (Tx < BLOCK_SIZE) {
    Idx = Tx;
    ArrayOffset = Offset * MatrixDim + Offset;
    for (int I = 0; I < BLOCK_SIZE / 2; I++) {
      Dia[I * BLOCK_SIZE + Idx] = M[ArrayOffset + Idx];
      ArrayOffset += MatrixDim;
    }
    ArrayOffset = Offset * MatrixDim + Offset;
    for (int I = 0; I < BLOCK_SIZE; I++) {
      PeriRow[I * BLOCK_SIZE + Idx] =
          M[ArrayOffset + (Bx + 1) * BLOCK_SIZE + Idx];
      ArrayOffset += MatrixDim;
    }
  } else {
    Idx = Tx - BLOCK_SIZE;
    ArrayOffset = (Offset + BLOCK_SIZE / 2) * MatrixDim + Offset;
    for (int I = BLOCK_SIZE / 2; I < BLOCK_SIZE; I++) {
      Dia[I * BLOCK_SIZE + Idx] = M[ArrayOffset + Idx];
      ArrayOffset += MatrixDim;
    }
    ArrayOffset = (Offset + (Bx + 1) * BLOCK_SIZE) * MatrixDim + Offset;
    for (int I = 0; I < BLOCK_SIZE; I++) {
      PeriCol[I * BLOCK_SIZE + Idx] = M[ArrayOffset + Idx];
      ArrayOffset += MatrixDim;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  if (Tx < BLOCK_SIZE) { // a column of the row block
    Idx = Tx;
    for (int I = 1; I < BLOCK_SIZE; I++)
      for (int J = 0; J < I; J++)
        PeriRow[I * BLOCK_SIZE + Idx] -=
            Dia[I * BLOCK_SIZE + J] * PeriRow[J * BLOCK_SIZE + Idx];
  } else { // a row of the column block
    Idx = Tx - BLOCK_SIZE;
    for (int I = 0; I < BLOCK_SIZE; I++) {
      for (int J = 0; J < I; J++)
        PeriCol[Idx * BLOCK_SIZE + I] -=
            PeriCol[Idx * BLOCK_SIZE + J] * Dia[J * BLOCK_SIZE + I];
      PeriCol[Idx * BLOCK_SIZE + I] /= Dia[I * BLOCK_SIZE + I];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  if (Tx < BLOCK_SIZE) {
    Idx = Tx;
    ArrayOffset = (Offset + 1) * MatrixDim + Offset;
    for (int I = 1; I < BLOCK_SIZE; I++) {
      M[ArrayOffset + (Bx + 1) * BLOCK_SIZE + Idx] =
          PeriRow[I * BLOCK_SIZE + Idx];
      ArrayOffset += MatrixDim;
    }
  } else {
    Idx = Tx - BLOCK_SIZE;
    ArrayOffset = (Offset + (Bx + 1) * BLOCK_SIZE) * MatrixDim + Offset;
    for (int I = 0; I < BLOCK_SIZE; I++) {
      M[ArrayOffset + Idx] = PeriCol[I * BLOCK_SIZE + Idx];
      ArrayOffset += MatrixDim;
    }
  }
}

__kernel void lud_internal(__global float *M, int MatrixDim, int Offset) {
  __local float PeriRow[BLOCK_SIZE * BLOCK_SIZE];
  __local float PeriCol[BLOCK_SIZE * BLOCK_SIZE];
  int Bx = get_group_id(0);
  int By = get_group_id(1);
  int Tx = get_local_id(0);
  int Ty = get_local_id(1);

  int GlobalRowId = Offset + (By + 1) * BLOCK_SIZE;
  int GlobalColId = Offset + (Bx + 1) * BLOCK_SIZE;

  PeriRow[Ty * BLOCK_SIZE + Tx] =
      M[(Offset + Ty) * MatrixDim + GlobalColId + Tx];
  PeriCol[Ty * BLOCK_SIZE + Tx] =
      M[(GlobalRowId + Ty) * MatrixDim + Offset + Tx];
  barrier(CLK_LOCAL_MEM_FENCE);

  float Sum = 0;
  for (int I = 0; I < BLOCK_SIZE; I++)
    Sum += PeriCol[Ty * BLOCK_SIZE + I] * PeriRow[I * BLOCK_SIZE + Tx];
  M[(GlobalRowId + Ty) * MatrixDim + GlobalColId + Tx] -= Sum;
}
