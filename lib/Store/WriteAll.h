//===- WriteAll.h - A whole buffer to a file descriptor ---------*- C++ -*-===//
//
// The one write loop of the store's files (entries, dictionaries, bundles):
// write(2) may write less than asked or be interrupted.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_STORE_WRITEALL_H
#define KILN_LIB_STORE_WRITEALL_H

#include <cerrno>
#include <cstddef>
#include <unistd.h>

namespace kiln {

/// Writes the \p Size bytes at \p Data to \p FD, again after EINTR and
/// after a short write. False when a write fails, with errno set (EIO for a
/// write that wrote nothing).
inline bool writeAllFd(int FD, const void *Data, size_t Size) {
  const char *P = static_cast<const char *>(Data);
  while (Size) {
    ssize_t N = ::write(FD, P, Size);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      if (N == 0)
        errno = EIO;
      return false;
    }
    P += N;
    Size -= size_t(N);
  }
  return true;
}

} // namespace kiln

#endif // KILN_LIB_STORE_WRITEALL_H
