//===- Printer.h - Print the canonical text form ----------------*- C++ -*-===//

#ifndef KILN_IR_PRINTER_H
#define KILN_IR_PRINTER_H

#include "kiln/IR/Kernel.h"

#include <string>

namespace kiln {

/// The canonical text of \p K: parseModule(printKernel(K)) gives the same
/// kernel, and print(parse(text)) is a fixed point after one step. Floats
/// print so that they read back bit-exactly (NaN payloads as hex patterns).
std::string printKernel(const Kernel &K);
/// The kernels of \p M, separated by a blank line.
std::string printModule(const Module &M);

} // namespace kiln

#endif // KILN_IR_PRINTER_H
