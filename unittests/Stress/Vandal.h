//===- Vandal.h - A child process that prunes and damages a store -*- C++ -*-===//
//
// The stress test (StressTest.cpp) starts its own binary again as
// `KilnStressTests --vandal DIR SECONDS`: for SECONDS, that process
// truncates, overwrites, deletes and replaces the files under the store
// root DIR, prunes the store to a few KiB (pruneStore, as `kiln-store
// prune` does) and now and then removes every namespace folder (as
// `kiln-store clear` does), while the test's device uses the store.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_STRESS_VANDAL_H
#define KILN_UNITTESTS_STRESS_VANDAL_H

#include <string>

namespace kiln::stress {

/// The first argument that makes the binary a vandal.
inline constexpr const char *VandalFlag = "--vandal";

/// Runs the vandal on \p Root for \p Seconds; prints what it did on stdout.
/// The exit status: 0.
int runVandal(const std::string &Root, double Seconds);

} // namespace kiln::stress

#endif
