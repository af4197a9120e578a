//===- Registry.cpp - The corpus's registries and shared checks ----------===//
//
// The benchmark and native-kernel registries that KILN_CORPUS_BENCHMARK and
// KILN_CORPUS_NATIVE fill before main (function-local statics, so that the
// order of static initialisation across files does not matter), and the
// comparison the benchmarks' checks share.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"
#include "harness/Harness.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace corpus {

std::vector<Benchmark> &benchmarks() {
  static std::vector<Benchmark> All;
  return All;
}

std::vector<NativeKernel> &nativeKernels() {
  static std::vector<NativeKernel> All;
  return All;
}

std::string folderOf(const char *File) {
  std::string Path = File ? File : "";
  size_t End = Path.find_last_of("/\\");
  if (End == std::string::npos)
    return "";
  size_t Begin = Path.find_last_of("/\\", End - 1);
  Begin = Begin == std::string::npos ? 0 : Begin + 1;
  return Path.substr(Begin, End - Begin);
}

bool closeEnough(const float *Got, const float *Want, size_t N, double Rel,
                 double Abs, std::string &Why) {
  size_t Bad = 0, First = 0;
  for (size_t I = 0; I < N; ++I) {
    double G = Got[I], W = Want[I];
    // Both NaN is agreement: the reference computes NaN there too.
    bool Ok = (std::isnan(G) && std::isnan(W)) ||
              std::fabs(G - W) <= Abs + Rel * std::fabs(W);
    if (!Ok && Bad++ == 0)
      First = I;
  }
  if (!Bad)
    return true;
  std::ostringstream OS;
  OS.precision(9);
  OS << "element " << First << " is " << Got[First] << ", expected "
     << Want[First] << " (" << Bad << " of " << N
     << " elements differ by more than " << Abs << " + " << Rel
     << " * |expected|)";
  Why = OS.str();
  return false;
}

std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    throw BackendError("cannot read " + Path);
  std::ostringstream OS;
  OS << In.rdbuf();
  return OS.str();
}

} // namespace corpus
