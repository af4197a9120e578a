/*===- hotspot3d.cl - Rodinia's hotspot3D kernel in OpenCL C --------------===//
//
// Written after Rodinia's opencl/hotspot3D (hotspotKernel.cl, hotspotOpt1):
// one time step of the 3-D thermal simulation. Each work-item owns one (x, y)
// column of the grid and walks it bottom to top, keeping the cell below, the
// cell itself and the cell above in registers. Work-groups are 64 x 4; the
// global size is (nx, ny).
//
//===----------------------------------------------------------------------===*/

__kernel void hotspotOpt1(__global float *p, __global float *tIn,
                          __global float *tOut, float sdc, int nx, int ny,
                          int nz, float ce, float cw, float cn, float cs,
                          float ct, float cb, float cc) {
  float amb_temp = 80.0f;

  int i = get_global_id(0);
  int j = get_global_id(1);
  int c = i + j * nx;
  int xy = nx * ny;

  // Neighbours in the plane; at the grid's edge a cell is its own neighbour.
  int W = (i == 0) ? c : c - 1;
  int E = (i == nx - 1) ? c : c + 1;
  int N = (j == 0) ? c : c - nx;
  int S = (j == ny - 1) ? c : c + nx;

  float temp1, temp2, temp3;
  // The bottom layer: the cell below is the cell itself.
  temp1 = temp2 = tIn[c];
  temp3 = tIn[c + xy];
  tOut[c] = cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] +
            cn * tIn[N] + cb * temp1 + ct * temp3 + sdc * p[c] +
            ct * amb_temp;
  c += xy;
  W += xy;
  E += xy;
  N += xy;
  S += xy;

  for (int k = 1; k < nz - 1; ++k) {
    temp1 = temp2;
    temp2 = temp3;
    temp3 = tIn[c + xy];
    tOut[c] = cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] +
              cn * tIn[N] + cb * temp1 + ct * temp3 + sdc * p[c] +
              ct * amb_temp;
    c += xy;
    W += xy;
    E += xy;
    N += xy;
    S += xy;
  }
  // The top layer: the cell above is the cell itself (temp3 is not reloaded).
  temp1 = temp2;
  temp2 = temp3;
  tOut[c] = cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] +
            cn * tIn[N] + cb * temp1 + ct * temp3 + sdc * p[c] +
            ct * amb_temp;
  return;
}
