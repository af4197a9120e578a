//===- Printer.h - Print the canonical text form ----------------*- C++ -*-===//

#ifndef KILN_IR_PRINTER_H
#define KILN_IR_PRINTER_H

#include "kiln/IR/Kernel.h"

#include <string>

namespace kiln {

/// The canonical text of \p K: parseModule(printKernel(K)) gives the same
/// kernel, and print(parse(text)) is a fixed point after one step. Floats
/// print so that they read back bit-exactly (NaN payloads as hex patterns).
std::string printKernel(const IRKernel &K);
/// The kernels of \p M, separated by a blank line.
std::string printModule(const Module &M);
/// One line naming \p Op (an operation of \p K) in diagnostics: its
/// canonical text without indentation or newline (`%3 = add %1, %2 : f32`);
/// an operation with blocks gives its first line with the blocks elided
/// (`if %c { ... }`). A line longer than \p MaxWidth bytes is cut to that
/// width, ending in "...".
std::string printOperationSummary(const IRKernel &K, const Operation &Op,
                                  size_t MaxWidth = 80);

} // namespace kiln

#endif // KILN_IR_PRINTER_H
