#!/usr/bin/env bash
# Builds one of Kiln's libFuzzer targets (fuzz/, docs/Reliability.md) and
# runs it for a while on its corpus.
#
#   utils/fuzz.sh TARGET SECONDS [JOBS]
#
# TARGET is kiln-fuzz-parse, kiln-fuzz-lower, kiln-fuzz-store or
# kiln-fuzz-argspec. The first run configures build-fuzz/ (KILN_FUZZ_BUILD
# for another folder) with clang-19 and -DKILN_BUILD_FUZZERS=ON; the build
# takes /tmp/kiln-build.lock, as every build on a shared machine should. The
# corpus is the seeds utils/fuzz-seeds.sh writes into BUILD/fuzz-seeds/TARGET,
# the committed seeds of fuzz/corpus/TARGET, and what earlier runs found,
# kept in BUILD/fuzz-corpus/TARGET (new inputs go there). Crashes, timeouts
# (over 10 s for one input), memory blow-ups (over 2 GiB) and leaks are
# written to BUILD/findings/TARGET/, and the run's output to a log there.
# JOBS > 1 runs that many fuzzing processes (libFuzzer's -fork). Everything
# runs under nice. Extra libFuzzer options can follow in KILN_FUZZ_ARGS.
#
# A finding is reproduced by running the target on the file alone:
#   build-fuzz/bin/TARGET build-fuzz/findings/TARGET/crash-...
# and made small with -minimize_crash=1 -runs=10000 (docs/Reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

usage() {
  echo "usage: $0 kiln-fuzz-parse|kiln-fuzz-lower|kiln-fuzz-store|kiln-fuzz-argspec SECONDS [JOBS]" >&2
  exit 1
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
target=$1
seconds=$2
jobs=${3:-1}
case "$target" in
  kiln-fuzz-parse) dict=fuzz/kiln.dict ;;
  kiln-fuzz-lower) dict= ;;
  kiln-fuzz-store) dict=fuzz/store.dict ;;
  kiln-fuzz-argspec) dict=fuzz/argspec.dict ;;
  *) usage ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] || usage
[[ "$jobs" =~ ^[0-9]+$ ]] && [ "$jobs" -gt 0 ] || usage

build=${KILN_FUZZ_BUILD:-$root/build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
  for tool in clang-19 clang++-19; do
    command -v "$tool" >/dev/null || {
      echo "$0: $tool is missing: apt-get install clang-19 libclang-rt-19-dev" >&2
      exit 1
    }
  done
  flock /tmp/kiln-build.lock cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DKILN_BUILD_FUZZERS=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF >/dev/null
fi
flock /tmp/kiln-build.lock nice -n 10 ninja -C "$build" "$target"
utils/fuzz-seeds.sh "$build" "$target"

corpus=$build/fuzz-corpus/$target
findings=$build/findings/$target
mkdir -p "$corpus" "$findings" "$build/fuzz-tmp"
dirs=("$corpus" "$build/fuzz-seeds/$target")
[ -d "fuzz/corpus/$target" ] && dirs+=("fuzz/corpus/$target")

args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
      -artifact_prefix="$findings/" -print_final_stats=1)
[ -n "$dict" ] && args+=(-dict="$dict")
[ "$jobs" -gt 1 ] && args+=(-fork="$jobs")
# shellcheck disable=SC2206
[ -n "${KILN_FUZZ_ARGS:-}" ] && args+=($KILN_FUZZ_ARGS)

# Temporary files of the store target stay in the build folder.
export TMPDIR=$build/fuzz-tmp
symbolizer=$(command -v llvm-symbolizer-19 || command -v llvm-symbolizer ||
             ls /usr/lib/llvm-19/bin/llvm-symbolizer 2>/dev/null || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH=$symbolizer
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

log=$findings/run-$(date +%Y%m%d-%H%M%S).log
echo "fuzz: $target for ${seconds}s, $jobs job(s); log: $log"
status=0
nice -n 10 "$build/bin/$target" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || status=$?
# The run's end: libFuzzer's last status line and its final statistics.
grep -a -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|^Done |^INFO: fuzzed for|^kiln-fuzz|^==[0-9]+==ERROR|^SUMMARY|^artifact_prefix|Test unit written' "$log" | tail -20 || true
echo "fuzz: corpus $(find "$corpus" -type f | wc -l) files in $corpus"
if [ "$status" -ne 0 ]; then
  echo "fuzz: $target stopped with status $status: see $log and $findings" >&2
fi
exit "$status"
