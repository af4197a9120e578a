/*===- kmeans.cl - Rodinia's kmeans kernels in OpenCL C -------------------===//
//
// Written after Rodinia's opencl/kmeans (kmeans.cl): kmeans_swap transposes
// the features from point-major to feature-major order, kmeans_kernel_c gives
// each point the index of its nearest cluster centre. One work-item per
// point, work-groups of 256 (the suite's default BLOCK_SIZE and BLOCK_SIZE2).
//
//===----------------------------------------------------------------------===*/

#ifndef FLT_MAX
#define FLT_MAX 3.40282347e+38
#endif

__kernel void kmeans_kernel_c(__global float *feature,
                              __global float *clusters,
                              __global int *membership, int npoints,
                              int nclusters, int nfeatures, int offset,
                              int size) {
  unsigned int point_id = get_global_id(0);
  int index = 0;
  if (point_id < npoints) {
    float min_dist = FLT_MAX;
    for (int i = 0; i < nclusters; i++) {
      float dist = 0;
      float ans = 0;
      for (int l = 0; l < nfeatures; l++) {
        ans += (feature[l * npoints + point_id] -
                clusters[i * nfeatures + l]) *
               (feature[l * npoints + point_id] -
                clusters[i * nfeatures + l]);
      }
      dist = ans;
      if (dist < min_dist) {
        min_dist = dist;
        index = i;
      }
    }
    membership[point_id] = index;
  }
}

__kernel void kmeans_swap(__global float *feature,
                          __global float *feature_swap, int npoints,
                          int nfeatures) {
  unsigned int tid = get_global_id(0);
  if (tid < npoints) {
    for (int i = 0; i < nfeatures; i++)
      feature_swap[i * npoints + tid] = feature[tid * nfeatures + i];
  }
}
