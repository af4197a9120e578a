// The C++ API's and the C API's headers, compiled as C++20 by the test
// public-headers-cxx.
#include <kiln-c/kiln.h>
#include <kiln/kiln.h>
