#!/usr/bin/env bash
# bench/run.sh - Kiln's benchmark suite beside PoCL and the machine's limits, in one command.
#
# Usage: bench/run.sh --anchors DIR [--reps N] [--max-wait S] [--build DIR]
#                     [--out DIR] [--no-install] [--iters N] [--unchecked]
#        KILN_POCL_ANCHORS=DIR bench/run.sh [...]
#
#   --reps N       processes per mode (default 3): kiln, pocl_cold, pocl_warm, native
#   --max-wait S   before each process, wait up to S seconds (default 300) for
#                  the machine to be quiet (>= 90 % idle over 2 s)
#   --build DIR    Kiln's Release build folder (default <repo>/build-bench)
#   --anchors DIR  the folder that holds PoCL's anchor programs, bench.cpp and
#                  native.cpp (they are not part of this repository); required,
#                  else $KILN_POCL_ANCHORS. Copied into <build>/pocl-anchors
#   --out DIR      results folder (default <build>/bench-results/<time>)
#   --no-install   do not install missing Debian packages
#   --iters N      timed launches per kernel (default 30, as PoCL's bench)
#   --unchecked    also run Kiln's unchecked variant (mode kiln_unchecked,
#                  without the 32-kernel compile part)
#
# Steps: (a) install what is missing from Debian, (b) build kiln-bench
# (Release) and PoCL's bench.cpp and native.cpp, (c) run them one process at a
# time, logging the CPU load other processes caused during each, (d) write
# raw.txt, results.json, summary.md and chart.png via bench/report.py.
# Nothing here checks a timing; a wrong result makes a program exit 1, and the
# run goes on with the other programs (the report shows "NO" / missing cells).
set -euo pipefail
ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
REPS=3
MAX_WAIT=300
BUILD=$ROOT/build-bench
ANCHORS=${KILN_POCL_ANCHORS:-}
OUT=
INSTALL=1
ITERS=30
UNCHECKED=0
while (($#)); do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --max-wait) MAX_WAIT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --anchors) ANCHORS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --no-install) INSTALL=0; shift ;;
    --iters) ITERS=$2; shift 2 ;;
    --unchecked) UNCHECKED=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run.sh: error: unknown option '$1' (see --help)" >&2; exit 1 ;;
  esac
done
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: error: --reps needs a positive integer" >&2; exit 1; }
[[ $MAX_WAIT =~ ^[0-9]+$ ]] || { echo "run.sh: error: --max-wait needs seconds" >&2; exit 1; }
[[ $ITERS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: error: --iters needs a positive integer" >&2; exit 1; }
[[ -n $ANCHORS ]] || { echo "run.sh: error: the PoCL anchor programs (bench.cpp, native.cpp) are not part of this repository: give their folder with --anchors DIR or KILN_POCL_ANCHORS=DIR (see --help)" >&2; exit 1; }
ANCHORS=$(readlink -f "$ANCHORS" || true)
for f in bench.cpp native.cpp; do
  [[ -f $ANCHORS/$f ]] || { echo "run.sh: error: no $f in '$ANCHORS' (give --anchors or KILN_POCL_ANCHORS)" >&2; exit 1; }
done

# ---------------------------------------------------------------- (a) packages
packages=(pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo libopenblas-dev
          gnuplot-nox g++ cmake ninja-build pkg-config python3 llvm-19-dev
          libtbb-dev libzstd-dev libfmt-dev zlib1g-dev libedit-dev libxml2-dev
          libcurl4-openssl-dev libffi-dev)
if ((INSTALL)); then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "== installing: ${missing[*]}"
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi

# ---------------------------------------------------------------- (b) build
echo "== building kiln-bench (Release) in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKILN_BUILD_BENCH=ON -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_TOOLS=OFF >/dev/null
ninja -C "$BUILD" kiln-bench
KILN_BENCH=$BUILD/bin/kiln-bench

ANCH=$BUILD/pocl-anchors
mkdir -p "$ANCH"
cp "$ANCHORS/bench.cpp" "$ANCHORS/native.cpp" "$ANCH/"
echo "== building PoCL's bench and native from $ANCHORS"
g++ -O2 -std=c++17 "$ANCH/bench.cpp" -lOpenCL -o "$ANCH/bench"
g++ -O3 -march=native -fopenmp -fno-tree-loop-distribute-patterns -DHAVE_BLAS \
  "$ANCH/native.cpp" -o "$ANCH/native" -lopenblas

[[ -n $OUT ]] || OUT=$BUILD/bench-results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
RAW=$OUT/raw.txt
: > "$RAW"
: > "$OUT/load.txt"
clinfo > "$OUT/clinfo.txt" 2>&1 || true
{
  echo "date: $(date -Is)"
  echo "kiln: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  uname -srm
  lscpu | grep -E 'Model name|^CPU\(s\)|CPU family|^Model:|L3'
  echo "avx512f: $(grep -qw avx512f /proc/cpuinfo && echo yes || echo no)"
  dpkg-query -W -f='${Package} ${Version}\n' pocl-opencl-icd libpocl2 llvm-19 \
    libopenblas0-pthread g++ 2>/dev/null || true
  echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
} > "$OUT/env.txt"

# ---------------------------------------------------------------- (c) run
HZ=$(getconf CLK_TCK)
NCPU=$(nproc)
busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
idle_jiffies() { awk '/^cpu /{print $5+$6}' /proc/stat; }
idle_frac_2s() {
  local a b ia ib
  a=$(busy_jiffies); ia=$(idle_jiffies)
  sleep 2
  b=$(busy_jiffies); ib=$(idle_jiffies)
  awk -v db=$((b - a)) -v di=$((ib - ia)) 'BEGIN{printf "%.3f", (db+di) ? di/(db+di) : 1}'
}
wait_quiet() {
  local t0=$SECONDS f
  while :; do
    f=$(idle_frac_2s)
    if awk -v f="$f" 'BEGIN{exit !(f>=0.90)}'; then echo "$f"; return; fi
    if ((SECONDS - t0 > MAX_WAIT)); then echo "$f(timeout)"; return; fi
    sleep 3
  done
}
# run_one TAG CMD...: waits for a quiet machine, runs CMD TAG, logs the load
# other processes put on the machine while it ran.
FAILED=()
run_one() {
  local tag=$1; shift
  local idle b0 b1 u s e rc=0
  idle=$(wait_quiet)
  echo "== $tag (idle before: $idle)"
  b0=$(busy_jiffies)
  /usr/bin/time -f "%U %S %e" -o "$OUT/time.$tag" "$@" "$tag" >> "$RAW" 2>> "$OUT/stderr.$tag.txt" || rc=$?
  b1=$(busy_jiffies)
  ((rc == 0)) || { FAILED+=("$tag(exit $rc)"); echo "   $tag exited with $rc (see $OUT/stderr.$tag.txt)"; }
  read -r u s e < <(tail -n1 "$OUT/time.$tag")
  awk -v tag="$tag" -v idle="$idle" -v d=$((b1 - b0)) -v hz="$HZ" -v u="$u" -v s="$s" -v e="$e" -v rc="$rc" \
    'BEGIN{own=u+s; tot=d/hz; printf "LOAD %s idle_before=%s wall_s=%.1f own_cpu_s=%.1f foreign_cores=%.2f exit=%d\n", tag, idle, e, own, (e>0)?(tot-own)/e:0, rc}' \
    | tee -a "$OUT/load.txt"
}

export BENCH_ITERS=$ITERS
for r in $(seq 1 "$REPS"); do
  KC=$(mktemp -d "$OUT/kiln-store.XXXXXX")
  KILN_CACHE_DIR=$KC run_one "kiln$r" "$KILN_BENCH" --kernels "$ROOT/bench/kernels" --iters "$ITERS"
  rm -rf "$KC"
  if ((UNCHECKED)); then
    KC=$(mktemp -d "$OUT/kiln-store.XXXXXX")
    KILN_CACHE_DIR=$KC run_one "kiln_unchecked$r" "$KILN_BENCH" --kernels "$ROOT/bench/kernels" \
      --iters "$ITERS" --unchecked --skip-many
    rm -rf "$KC"
  fi
  PC=$(mktemp -d "$OUT/pocl-cache.XXXXXX")
  POCL_CACHE_DIR=$PC run_one "pocl_cold$r" "$ANCH/bench"
  POCL_CACHE_DIR=$PC run_one "pocl_warm$r" "$ANCH/bench"
  rm -rf "$PC"
  OMP_NUM_THREADS=$NCPU OPENBLAS_NUM_THREADS=$NCPU OMP_PROC_BIND=spread \
    run_one "native$r" "$ANCH/native"
done

# ---------------------------------------------------------------- (d) report
python3 "$ROOT/bench/report.py" "$OUT"
ln -sfn "$(basename "$OUT")" "$(dirname "$OUT")/latest" 2>/dev/null || true
echo "== results: $OUT/summary.md, $OUT/results.json, $OUT/chart.png"
if ((${#FAILED[@]})); then
  echo "== programs that failed (wrong result or error): ${FAILED[*]}"
  exit 1
fi
