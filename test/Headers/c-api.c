/* The C API's header alone, compiled as C99 by the test public-headers-c. */
#include <kiln-c/kiln.h>
