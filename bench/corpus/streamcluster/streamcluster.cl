/*===- streamcluster.cl - Rodinia's streamcluster kernels in OpenCL C -----===//
//
// Written after Rodinia's opencl/streamcluster (Kernels.cl):
//   - memset_kernel: work-item i sets byte i of a buffer (the host's
//     _clMemset; the global size is the byte count rounded up to 256);
//   - pgain_kernel: one work-item per point computes the weighted squared
//     distance from its point to the candidate centre x (whose coordinates
//     work-item 0 of each work-group first copies to local memory) and
//     records in its row of work_mem what opening x would save or cost.
// Work-groups of 256.
//
// Differs from the original in two places, both because the harness passes
// buffers and 4- and 8-byte scalars only: memset_kernel's value is an int,
// not a short (the kernel still stores it as a char), and pgain_kernel's
// __local argument coord_s, which the host sizes dim floats, is a __local
// array of MAX_DIM = 256 floats declared in the kernel (256 is the dim of
// the suite's run; the host code refuses a larger dim).
//
//===----------------------------------------------------------------------===*/

#define MAX_DIM 256

typedef struct {
  float weight;
  long assign; /* the point this one is assigned to */
  float cost;  /* the cost of that assignment, weight * distance */
} Point_Struct;

__kernel void memset_kernel(__global char *mem_d, int val,
                            int number_bytes) {
  const int thread_id = get_global_id(0);
  mem_d[thread_id] = val;
}

__kernel void pgain_kernel(__global Point_Struct *p, __global float *coord_d,
                           __global float *work_mem_d,
                           __global int *center_table_d,
                           __global char *switch_membership_d, int num,
                           int dim, long x, int K) {
  __local float coord_s[MAX_DIM];
  const int thread_id = get_global_id(0);
  const int local_id = get_local_id(0);

  if (thread_id < num) {
    // The coordinates of point x to local memory.
    if (local_id == 0)
      for (int i = 0; i < dim; i++)
        coord_s[i] = coord_d[i * num + x];
    barrier(CLK_LOCAL_MEM_FENCE);

    // The weighted squared distance from this point to point x.
    float x_cost = 0.0;
    for (int i = 0; i < dim; i++)
      x_cost += (coord_d[(i * num) + thread_id] - coord_s[i]) *
                (coord_d[(i * num) + thread_id] - coord_s[i]);
    x_cost = x_cost * p[thread_id].weight;

    float current_cost = p[thread_id].cost;

    int base = thread_id * (K + 1);
    if (x_cost < current_cost) {
      // Cheaper with x: mark the point to move and record the saving.
      switch_membership_d[thread_id] = '1';
      int addr_1 = base + K;
      work_mem_d[addr_1] = x_cost - current_cost;
    } else {
      // Dearer: record what closing its centre would cost.
      int assign = p[thread_id].assign;
      int addr_2 = base + center_table_d[assign];
      work_mem_d[addr_2] += current_cost - x_cost;
    }
  }
}
