#!/usr/bin/env bash
# Builds Kiln with sanitizers and runs its tests under them.
#
#   utils/sanitize.sh [address]   ASan + UBSan build of everything in build-asan/,
#                                 then every ctest test (GoogleTest + lit)
#   utils/sanitize.sh thread      TSan build in build-tsan/ of the Runtime, Compile
#                                 and Store tests (threads, batches, processes)
#                                 and the tools, then those test binaries and
#                                 the lit tests that launch on many threads
#
# Every sanitizer report fails the run (halt_on_error), so a clean exit means
# no report. Environment: KILN_JOBS (default: all cores) for ninja and ctest,
# KILN_SAN_BUILD to use another build folder, KILN_SAN_FILTER a ctest -R
# regex (address) or a gtest filter (thread) to run a subset, KILN_TBB_LIBDIR
# a folder holding a TSan-instrumented libtbb.so.12 (thread). Extra arguments
# are passed to ctest (address) or to each test binary (thread).
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
    echo "usage: $0 [address|thread] [extra test arguments...]" >&2
    exit 1
    ;;
esac

# -fno-sanitize-recover makes UBSan stop at its first report instead of
# printing and going on, so that a report fails the test that caused it.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKILN_SANITIZE="$sanitize" -DKILN_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=all" -DCMAKE_C_FLAGS="-fno-sanitize-recover=all" \
  >/dev/null

# Symbolised stacks; every report is fatal. detect_leaks stays on: a leak
# at exit is a finding too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# utils/tsan-tbb.supp silences TBB's own bookkeeping only (Debian's libtbb is
# not instrumented); KILN_TBB_LIBDIR points at a TSan-built libtbb.so.12
# instead, which makes the suppressions unnecessary.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/utils/tsan-tbb.supp}
if [ -n "${KILN_TBB_LIBDIR:-}" ]; then
  export LD_LIBRARY_PATH="$KILN_TBB_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
symbolizer=$(command -v llvm-symbolizer || ls /usr/lib/llvm-19/bin/llvm-symbolizer 2>/dev/null || true)
if [ -n "$symbolizer" ]; then
  export ASAN_SYMBOLIZER_PATH=$symbolizer TSAN_SYMBOLIZER_PATH=$symbolizer
fi

if [ "$mode" = address ]; then
  ninja -C "$build" -j "$jobs"
  cd "$build"
  args=(--output-on-failure -j "$jobs" --timeout 1800)
  [ -n "${KILN_SAN_FILTER:-}" ] && args+=(-R "$KILN_SAN_FILTER")
  ctest "${args[@]}" "$@"
  exit $?
fi

# thread: the libraries that run work on several threads or processes.
targets=(KilnRuntimeTests KilnCompileTests KilnStoreTests kiln-run kiln-compile kiln-store)
ninja -C "$build" -j "$jobs" "${targets[@]}"
export KILN_CACHE_DIR="$build/tsan-cache"
status=0
for t in KilnRuntimeTests KilnCompileTests KilnStoreTests; do
  echo "== $t (TSan)"
  filter=()
  [ -n "${KILN_SAN_FILTER:-}" ] && filter=(--gtest_filter="$KILN_SAN_FILTER")
  "$build/bin/$t" "${filter[@]}" "$@" || status=1
done
# The tool tests that launch many cubes on all threads and share a store.
echo "== lit: kiln-run, kiln-store, Conformance (TSan)"
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv "$build/test" \
  --filter 'kiln-run|kiln-store|Conformance/(atomics|reduce|plane|elementwise)' || status=1
exit $status
