//===- TempDir.h - A fresh folder for one test ------------------*- C++ -*-===//
//
// Part of the test-support library (unittests/Support).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_UNITTESTS_SUPPORT_TEMPDIR_H
#define KILN_UNITTESTS_SUPPORT_TEMPDIR_H

#include <string>

namespace kiln::test {

/// A fresh folder (0700: only this user may write it, as the store
/// requires) under $TMPDIR, else /tmp, removed with its contents (made
/// writable first) at the end.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return Path; }
  /// \p Rel under the folder.
  std::string sub(const std::string &Rel) const { return Path + "/" + Rel; }

private:
  std::string Path;
};

} // namespace kiln::test

#endif
