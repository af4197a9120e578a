// gaussian.cl - Gaussian elimination (forward phase), two launches per
// column.
//
// Written after Rodinia's opencl/gaussian (gaussianElim_kernels.cl): for
// column T, Fan1 computes the multipliers of the rows below T (one
// work-item per row), Fan2 subtracts the multiple of row T from every row
// below it and updates the right-hand side (a 2-D range: dimension 0 walks
// the rows, dimension 1 the columns). Rodinia's host passes no local size;
// the corpus uses 256 for Fan1 and 16 x 16 for Fan2 and rounds the global
// size up to a multiple of it, as that host does when a size is set.

__kernel void Fan1(__global float *MDev, __global float *ADev,
                   __global float *BDev, const int Size, const int T) {
  int GlobalId = get_global_id(0);
  if (GlobalId < Size - 1 - T)
    MDev[Size * (GlobalId + T + 1) + T] =
        ADev[Size * (GlobalId + T + 1) + T] / ADev[Size * T + T];
}

__kernel void Fan2(__global float *MDev, __global float *ADev,
                   __global float *BDev, const int Size, const int T) {
  int GlobalIdx = get_global_id(0);
  int GlobalIdy = get_global_id(1);
  if (GlobalIdx < Size - 1 - T && GlobalIdy < Size - T) {
    ADev[Size * (GlobalIdx + 1 + T) + (GlobalIdy + T)] -=
        MDev[Size * (GlobalIdx + 1 + T) + T] * ADev[Size * T + (GlobalIdy + T)];
    if (GlobalIdy == 0)
      BDev[GlobalIdx + 1 + T] -=
          MDev[Size * (GlobalIdx + 1 + T) + (GlobalIdy + T)] * BDev[T];
  }
}
