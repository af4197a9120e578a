//===- TempDir.cpp - A fresh folder for one test --------------------------===//

#include "Support/TempDir.h"

#include <cstdlib>
#include <stdexcept>
#include <unistd.h>
#include <vector>

using namespace kiln::test;

TempDir::TempDir() {
  const char *Base = std::getenv("TMPDIR");
  std::string T =
      std::string(Base && *Base ? Base : "/tmp") + "/kiln-test-XXXXXX";
  std::vector<char> Buf(T.begin(), T.end());
  Buf.push_back(0);
  if (!::mkdtemp(Buf.data()))
    throw std::runtime_error("cannot make a folder like " + T);
  Path = Buf.data();
}

TempDir::~TempDir() {
  // A test may leave folders read-only (the store's fault tests do).
  int RC = std::system(
      ("chmod -R u+rwx '" + Path + "' 2>/dev/null; rm -rf '" + Path + "'")
          .c_str());
  (void)RC;
}
