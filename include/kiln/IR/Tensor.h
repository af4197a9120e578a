//===- Tensor.h - Limits of tensor bindings and tensor maps -----*- C++ -*-===//
//
// The bounds that the IR, the ABI (kiln/CPU/CubeABI.h) and the launch
// bindings share for tensors (docs/LangRef.md §16) and tensor maps (§17).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_TENSOR_H
#define KILN_IR_TENSOR_H

#include <cstdint>

namespace kiln {

/// The most dimensions a tensor binding may have (cubecl's tensors rarely
/// go past 6; 8 keeps the per-parameter table small).
constexpr unsigned MaxTensorRank = 8;
/// The most dimensions of a tensor map and of its box, as with TMA.
constexpr unsigned MaxTensorMapRank = 5;
/// The largest box dimension of a tensor map, as with TMA.
constexpr uint32_t MaxTensorMapBoxDim = 256;

/// Im2col tensor maps (docs/LangRef.md §17.7), as with TMA: rank 3 to 5
/// (batch, 1 to 3 spatial dimensions, channels), at most 256 channels and
/// 1024 pixels a load, and pixel box corners that fit i16.
constexpr unsigned MinIm2colRank = 3;
constexpr unsigned MaxIm2colSpatialDims = MaxTensorMapRank - 2;
constexpr uint32_t MaxIm2colChannels = 256;
constexpr uint32_t MaxIm2colPixels = 1024;
constexpr int32_t MinIm2colCorner = -32768;
constexpr int32_t MaxIm2colCorner = 32767;

} // namespace kiln

#endif // KILN_IR_TENSOR_H
