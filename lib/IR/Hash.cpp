//===- Hash.cpp - Stable hashes and ids of kernels ------------------------===//

#include "kiln/IR/Hash.h"
#include "kiln/IR/Printer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace kiln;

uint64_t kiln::hashKernel(const IRKernel &K) {
  // The canonical text is the identity of a kernel: hashing it (rather than
  // the in-memory structures) keeps the hash independent of value numbering
  // details the text does not show and of the host's layout.
  std::string Text = printKernel(K);
  return llvm::xxh3_64bits(llvm::arrayRefFromStringRef(Text));
}

std::string kiln::kernelIdFromIR(const IRKernel &K) {
  return kernelIdFromIR(K, hashKernel(K));
}

std::string kiln::kernelIdFromIR(const IRKernel &K, uint64_t Hash) {
  std::string Id = K.Name + "-";
  llvm::raw_string_ostream OS(Id);
  OS << llvm::format_hex_no_prefix(Hash, 16);
  return Id;
}
