#!/usr/bin/env bash
# Builds Kiln with sanitizers and runs its tests under them
# (docs/Conformance.md, "Sanitizers").
#
#   utils/sanitize.sh [address]   ASan + UBSan build of everything in build-asan/,
#                                 then every ctest test: the GoogleTest tests,
#                                 lit (the whole suite: Conformance, the tools,
#                                 the remote tier on a private redis-server),
#                                 layering, install, the examples
#   utils/sanitize.sh thread      TSan build in build-tsan/ against a TSan-built
#                                 oneTBB (utils/build-tsan-tbb.sh, made once from
#                                 Debian 12's source package into build-tsan/tbb),
#                                 then every ctest test but layering and
#                                 install: the GoogleTest tests, lit (the whole
#                                 suite), the examples
#
# Every sanitizer report fails the run: ASan, UBSan
# (-fno-sanitize-recover=all, set by KILN_SANITIZE in CMakeLists.txt) and
# TSan stop the process at their first report (halt_on_error), so a clean
# exit means no report. LeakSanitizer is on. No suppression file is used.
# Environment: KILN_JOBS (default: all cores) for ninja, ctest and lit;
# KILN_SAN_BUILD another build folder; KILN_SAN_FILTER a ctest -R regex to
# run a subset of the ctest tests. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mode=${1:-address}
[ $# -gt 0 ] && shift
jobs=${KILN_JOBS:-$(nproc)}

case "$mode" in
  address)
    build=${KILN_SAN_BUILD:-$root/build-asan}
    sanitize=address,undefined
    ;;
  thread)
    build=${KILN_SAN_BUILD:-$root/build-tsan}
    sanitize=thread
    ;;
  *)
    echo "usage: $0 [address|thread] [extra ctest arguments...]" >&2
    exit 1
    ;;
esac

config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE="$sanitize" -DKILN_BUILD_BENCH=OFF)
if [ "$mode" = thread ]; then
  # TSan sees a hand-off between threads only where both sides are
  # instrumented: oneTBB's scheduler must be, or TSan reports the task
  # bodies TBB hands from one worker to another as races.
  tbb=$build/tbb
  "$root/utils/build-tsan-tbb.sh" "$tbb"
  config+=(-DTBB_DIR="$tbb/install/lib/cmake/TBB")
fi
cmake -S "$root" -B "$build" -G Ninja "${config[@]}" >/dev/null

# Symbolised stacks; every report is fatal. detect_leaks stays on: a leak
# at exit is a finding too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
symbolizer=$(command -v llvm-symbolizer || ls /usr/lib/llvm-19/bin/llvm-symbolizer 2>/dev/null || true)
if [ -n "$symbolizer" ]; then
  export ASAN_SYMBOLIZER_PATH=$symbolizer TSAN_SYMBOLIZER_PATH=$symbolizer
fi

ninja -C "$build" -j "$jobs"

ctest_args=(--output-on-failure -j "$jobs" --timeout 1800)
[ -n "${KILN_SAN_FILTER:-}" ] && ctest_args+=(-R "$KILN_SAN_FILTER")

if [ "$mode" = address ]; then
  cd "$build"
  ctest "${ctest_args[@]}" "$@"
  exit $?
fi

# thread: a run is conclusive only if every binary loads the instrumented
# libtbb (the build tree's RUNPATH points there).
for binary in "$build"/bin/*; do
  [ -x "$binary" ] && [ -f "$binary" ] || continue
  loaded=$(ldd "$binary" 2>/dev/null | awk '/libtbb\.so/ {print $3}' || true)
  if [ -n "$loaded" ] && [ "$(realpath "$loaded")" != "$(realpath "$tbb"/install/lib/libtbb.so.12)" ]; then
    echo "error: $binary loads $loaded, not the TSan-built $tbb/install/lib/libtbb.so.12" >&2
    exit 1
  fi
done

echo "== ctest: GoogleTest tests, lit, examples (TSan)"
# layering only reads includes; install rebuilds consumers against the
# installed package, which would need the TSan oneTBB installed with it.
cd "$build"
ctest "${ctest_args[@]}" -E '^(layering|install)$' "$@"
