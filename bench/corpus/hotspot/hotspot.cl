/*===- hotspot.cl - Rodinia's hotspot kernel in OpenCL C ------------------===//
//
// Written after Rodinia's opencl/hotspot (hotspot_kernel.cl): up to
// `iteration` time steps of the 2-D thermal simulation of a chip in one
// launch, by the pyramid method. Each 16 x 16 work-group loads a 16 x 16 tile
// of temperatures and powers into local memory and steps it `iteration`
// times, the valid region shrinking by one cell per side and step; the
// (16 - 2 iteration)^2 cells in the middle are written back. Neighbours
// outside the grid are the cell itself.
//
//===----------------------------------------------------------------------===*/

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif

#define IN_RANGE(x, min, max) ((x) >= (min) && (x) <= (max))

__kernel void hotspot(int iteration, global float *power,
                      global float *temp_src, global float *temp_dst,
                      int grid_cols, int grid_rows, int border_cols,
                      int border_rows, float Cap, float Rx, float Ry,
                      float Rz, float step) {
  local float temp_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
  local float power_on_cuda[BLOCK_SIZE][BLOCK_SIZE];
  local float temp_t[BLOCK_SIZE][BLOCK_SIZE]; // this step's results

  float amb_temp = 80.0f;
  float step_div_Cap;
  float Rx_1, Ry_1, Rz_1;

  int bx = get_group_id(0);
  int by = get_group_id(1);
  int tx = get_local_id(0);
  int ty = get_local_id(1);

  step_div_Cap = step / Cap;
  Rx_1 = 1 / Rx;
  Ry_1 = 1 / Ry;
  Rz_1 = 1 / Rz;

  // The cells this group finally writes (its small block) and the tile
  // around them that it loads.
  int small_block_rows = BLOCK_SIZE - iteration * 2;
  int small_block_cols = BLOCK_SIZE - iteration * 2;
  int blkY = small_block_rows * by - border_rows;
  int blkX = small_block_cols * bx - border_cols;
  int blkYmax = blkY + BLOCK_SIZE - 1;
  int blkXmax = blkX + BLOCK_SIZE - 1;

  int yidx = blkY + ty;
  int xidx = blkX + tx;
  int loadYidx = yidx, loadXidx = xidx;
  int index = grid_cols * loadYidx + loadXidx;

  if (IN_RANGE(loadYidx, 0, grid_rows - 1) &&
      IN_RANGE(loadXidx, 0, grid_cols - 1)) {
    temp_on_cuda[ty][tx] = temp_src[index];
    power_on_cuda[ty][tx] = power[index];
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // The part of the tile inside the grid.
  int validYmin = (blkY < 0) ? -blkY : 0;
  int validYmax = (blkYmax > grid_rows - 1)
                      ? BLOCK_SIZE - 1 - (blkYmax - grid_rows + 1)
                      : BLOCK_SIZE - 1;
  int validXmin = (blkX < 0) ? -blkX : 0;
  int validXmax = (blkXmax > grid_cols - 1)
                      ? BLOCK_SIZE - 1 - (blkXmax - grid_cols + 1)
                      : BLOCK_SIZE - 1;

  int N = ty - 1;
  int S = ty + 1;
  int W = tx - 1;
  int E = tx + 1;
  N = (N < validYmin) ? validYmin : N;
  S = (S > validYmax) ? validYmax : S;
  W = (W < validXmin) ? validXmin : W;
  E = (E > validXmax) ? validXmax : E;

  bool computed;
  for (int i = 0; i < iteration; i++) {
    computed = false;
    if (IN_RANGE(tx, i + 1, BLOCK_SIZE - i - 2) &&
        IN_RANGE(ty, i + 1, BLOCK_SIZE - i - 2) &&
        IN_RANGE(tx, validXmin, validXmax) &&
        IN_RANGE(ty, validYmin, validYmax)) {
      computed = true;
      temp_t[ty][tx] =
          temp_on_cuda[ty][tx] +
          step_div_Cap *
              (power_on_cuda[ty][tx] +
               (temp_on_cuda[S][tx] + temp_on_cuda[N][tx] -
                2.0f * temp_on_cuda[ty][tx]) *
                   Ry_1 +
               (temp_on_cuda[ty][E] + temp_on_cuda[ty][W] -
                2.0f * temp_on_cuda[ty][tx]) *
                   Rx_1 +
               (amb_temp - temp_on_cuda[ty][tx]) * Rz_1);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    if (i == iteration - 1)
      break;
    if (computed)
      temp_on_cuda[ty][tx] = temp_t[ty][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // After the last step only the small block's cells have computed set.
  if (computed)
    temp_dst[index] = temp_t[ty][tx];
}
