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

} // namespace kiln

#endif // KILN_IR_TENSOR_H
