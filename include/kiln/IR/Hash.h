//===- Hash.h - Stable hashes and ids of kernels ----------------*- C++ -*-===//

#ifndef KILN_IR_HASH_H
#define KILN_IR_HASH_H

#include "kiln/IR/Kernel.h"

#include <cstdint>
#include <string>

namespace kiln {

/// A 64-bit hash of \p K's canonical text: the same in every process, run and
/// machine (it hashes bytes, never addresses or host-dependent layouts).
uint64_t hashKernel(const IRKernel &K);

/// The id the tools derive for a kernel: "NAME-" + 16 hex digits of
/// hashKernel(K). A GPU runtime may pass its own id instead.
std::string kernelIdFromIR(const IRKernel &K);
/// The same id from \p Hash, hashKernel(K) already computed.
std::string kernelIdFromIR(const IRKernel &K, uint64_t Hash);

} // namespace kiln

#endif // KILN_IR_HASH_H
