//===- PerfMap.h - Kernel symbols for Linux perf ---------------*- C++ -*-===//
//
// With KILN_PERF_MAP=1 in the environment, every function that the JIT
// linker places is appended to /tmp/perf-<pid>.map as "<start> <size>
// <name>" (hexadecimal start and size), the file Linux `perf report` reads
// to name samples in code without an ELF image: a profile of a process that
// runs kernels then shows `kiln_cube_<kernel>` instead of addresses in an
// anonymous mapping. Entries stay when a kernel is unloaded (perf maps are
// append-only); a map that cannot be written is skipped silently, as the
// profile is an aid and never part of a launch. docs/Tools.md §5.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_PERFMAP_H
#define KILN_LIB_CPU_PERFMAP_H

#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"

#include <memory>
#include <string>

namespace kiln {

/// Whether KILN_PERF_MAP asks for the map ("1", "on" or "true").
bool perfMapRequested();

/// The map file of this process: /tmp/perf-<pid>.map.
std::string perfMapPath();

/// An ObjectLinkingLayer plugin that appends the callable symbols of each
/// linked object, with their final addresses, to perfMapPath().
std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin> createPerfMapPlugin();

} // namespace kiln

#endif // KILN_LIB_CPU_PERFMAP_H
