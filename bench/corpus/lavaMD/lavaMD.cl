// lavaMD.cl - particle potential and forces within neighbouring boxes.
//
// Written after Rodinia's opencl/lavaMD (kernel/kernel_gpu_opencl.cl): one
// work-group of 128 work-items per home box of 100 particles; the home box's
// positions, then each neighbour box's positions and charges, are staged in
// local memory, and each work-item accumulates the forces on its particles
// (work-item tx handles particles tx, tx + 128, ...).
//
// Differs from Rodinia: the by-value structs par_str and dim_str become the
// two fields the kernel reads (alpha, number_boxes), since the corpus passes
// scalar arguments only.

#define NUMBER_PAR_PER_BOX 100
#define NUMBER_THREADS 128

typedef struct {
  float x, y, z;
} ThreeVector;

typedef struct {
  float v, x, y, z;
} FourVector;

typedef struct {
  int x, y, z;
  int number;
  long offset;
} NeiStr;

typedef struct {
  int x, y, z;
  int number;
  long offset;
  int nn;
  NeiStr nei[26];
} BoxStr;

#define DOT(A, B) ((A.x) * (B.x) + (A.y) * (B.y) + (A.z) * (B.z))

__kernel void kernel_gpu_opencl(float Alpha, long NumberBoxes,
                                __global BoxStr *Box, __global FourVector *Rv,
                                __global float *Qv, __global FourVector *Fv) {
  int Bx = get_group_id(0);
  int Tx = get_local_id(0);
  int Wtx = Tx;

  __local FourVector RAShared[100];
  __local FourVector RBShared[100];
  __local float QBShared[100];

  if (Bx < NumberBoxes) {
    float A2 = 2 * Alpha * Alpha;
    int FirstI, Pointer, FirstJ;
    float R2, U2, Vij, Fs, Fxij, Fyij, Fzij;
    ThreeVector D;

    // The home box's positions.
    FirstI = Box[Bx].offset;
    while (Wtx < NUMBER_PAR_PER_BOX) {
      RAShared[Wtx] = Rv[FirstI + Wtx];
      Wtx = Wtx + NUMBER_THREADS;
    }
    Wtx = Tx;
    barrier(CLK_LOCAL_MEM_FENCE);

    // The home box itself first, then its neighbours.
    for (int K = 0; K < 1 + Box[Bx].nn; K++) {
      if (K == 0)
        Pointer = Bx;
      else
        Pointer = Box[Bx].nei[K - 1].number;
      FirstJ = Box[Pointer].offset;

      while (Wtx < NUMBER_PAR_PER_BOX) {
        RBShared[Wtx] = Rv[FirstJ + Wtx];
        QBShared[Wtx] = Qv[FirstJ + Wtx];
        Wtx = Wtx + NUMBER_THREADS;
      }
      Wtx = Tx;
      barrier(CLK_LOCAL_MEM_FENCE);

      while (Wtx < NUMBER_PAR_PER_BOX) {
        for (int J = 0; J < NUMBER_PAR_PER_BOX; J++) {
          R2 = RAShared[Wtx].v + RBShared[J].v - DOT(RAShared[Wtx], RBShared[J]);
          U2 = A2 * R2;
          Vij = exp(-U2);
          Fs = 2 * Vij;
          D.x = RAShared[Wtx].x - RBShared[J].x;
          Fxij = Fs * D.x;
          D.y = RAShared[Wtx].y - RBShared[J].y;
          Fyij = Fs * D.y;
          D.z = RAShared[Wtx].z - RBShared[J].z;
          Fzij = Fs * D.z;
          Fv[FirstI + Wtx].v += QBShared[J] * Vij;
          Fv[FirstI + Wtx].x += QBShared[J] * Fxij;
          Fv[FirstI + Wtx].y += QBShared[J] * Fyij;
          Fv[FirstI + Wtx].z += QBShared[J] * Fzij;
        }
        Wtx = Wtx + NUMBER_THREADS;
      }
      Wtx = Tx;
      // The next neighbour box overwrites RBShared and QBShared.
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
