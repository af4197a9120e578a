//===- Callbacks.cpp - What a callback may call back into -----------------===//
//
// Callbacks (a device's warning sink, its debug-print handler) run with no
// Kiln lock held: warnings and debug text raised under a lock wait in a
// kiln::DeferCallbacks until the API call that raised them lets go of its
// locks. What this thread's callback comes from is kept here, so that a
// call that would wait for the callback itself (synchronising the stream
// whose launch prints, destroying the device) is refused at once instead of
// hanging.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

using namespace kiln::api;
using namespace kiln::api::detail;

static thread_local const CallbackSource *InCallback = nullptr;
static thread_local const CallbackSource *InLaunch = nullptr;

const CallbackSource *detail::currentCallback() { return InCallback; }

void detail::runAsCallback(const CallbackSource &Source,
                           const std::function<void()> &F) {
  const CallbackSource *Outer = InCallback;
  InCallback = &Source;
  // Restored however F leaves (a C++ sink may throw).
  struct Restore {
    const CallbackSource *Outer;
    ~Restore() { InCallback = Outer; }
  } R{Outer};
  F();
}

const CallbackSource *detail::currentLaunch() { return InLaunch; }

LaunchScope::LaunchScope(const CallbackSource &Source)
    : Outer(InLaunch), Mine(Source) {
  InLaunch = &Mine;
}

LaunchScope::~LaunchScope() { InLaunch = Outer; }

Status detail::selfWait(const char *Fn, const char *What) {
  return Status(ErrorCode::InvalidArgument,
                std::string(Fn) + ": called from a debug-print callback of " +
                    What + ", which cannot end before the callback returns");
}
