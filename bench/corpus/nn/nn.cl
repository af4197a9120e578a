/*===- nn.cl - Rodinia's nn (nearest neighbour) kernel in OpenCL C --------===//
//
// Written after Rodinia's opencl/nn (nearestNeighbor_kernel.cl): one
// work-item per record computes the Euclidean distance from the record's
// (latitude, longitude) to the query point. The global size is the record
// count rounded up to a multiple of 64; work-items past the end do nothing.
//
//===----------------------------------------------------------------------===*/

typedef struct latLong {
  float lat;
  float lng;
} LatLong;

__kernel void NearestNeighbor(__global LatLong *d_locations,
                              __global float *d_distances,
                              const int numRecords, const float lat,
                              const float lng) {
  int globalId = get_global_id(0);
  if (globalId < numRecords) {
    __global LatLong *latLong = d_locations + globalId;
    __global float *dist = d_distances + globalId;
    *dist = (float)sqrt((lat - latLong->lat) * (lat - latLong->lat) +
                        (lng - latLong->lng) * (lng - latLong->lng));
  }
}
