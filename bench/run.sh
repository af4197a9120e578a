#!/usr/bin/env bash
# bench/run.sh - Kiln's benchmark suite beside native C++, PoCL and the
# machine's limits, in one command; everything it runs is in this repository.
#
# Usage: bench/run.sh [--reps N] [--max-wait S] [--build DIR] [--out DIR]
#                     [--no-install] [--iters N] [--unchecked]
#                     [--mattr FEATURES] [--native-arch ARCH]
#                     [--blas-core NAME] [--corpus-repeat N] [--no-corpus]
#
#   --reps N       processes per mode (default 3): kiln, pocl_cold, pocl_warm,
#                  native
#   --max-wait S   before each process, wait up to S seconds (default 300) for
#                  the machine to be quiet (>= 90 % idle over 2 s)
#   --build DIR    Kiln's Release build folder (default <repo>/build-bench;
#                  a new one gets the benchmarks alone, an existing one keeps
#                  its tests and tools)
#   --out DIR      results folder (default <build>/bench-results/<time>)
#   --no-install   do not install missing Debian packages
#   --iters N      timed rounds per kernel (default 30)
#   --unchecked    also run Kiln's unchecked variant (mode kiln_unchecked,
#                  without the 32-kernel compile part)
#   --mattr F      Kiln compiles with these target features on top of the
#                  host's (kiln-bench --mattr): "-avx512f" runs AVX2 code on
#                  an AVX-512 host
#   --native-arch A  -march of the native references and native-bench
#                  (default native; x86-64-v3 with --mattr=-avx512f compares
#                  AVX2 code with AVX2 code)
#   --blas-core NAME  OpenBLAS's kernel for the sgemm reference (default:
#                  SkylakeX for AVX-512 code, Haswell for AVX2 code); an
#                  OPENBLAS_CORETYPE in the environment is ignored
#   --corpus-repeat N  timed rounds per benchmark of the foreign-kernel
#                  corpus (kiln-corpus --repeat; default 5)
#   --no-corpus    do not run the corpus
#
# The foreign-kernel corpus (bench/corpus/README.md): kiln-corpus runs each
# benchmark on Kiln, PoCL and native OpenMP loops in one process, the three
# interleaved round by round, once per ISA and repetition: corpus_avx512
# (Kiln with the host's features, the native loops -march=native; only on an
# AVX-512 host, and only while --mattr and --native-arch leave it 512-bit)
# corpus_avx2 (Kiln --mattr=-avx512f on an AVX-512 host, the native
# loops -march=x86-64-v3: kiln-corpus-v3) and corpus_sse42 (Kiln
# --mattr=-avx,-avx2,-avx512f, the native loops -march=x86-64-v2:
# kiln-corpus-v2). PoCL runs as it is in each.
#
# Steps: (a) install what is missing from Debian, (b) build kiln-bench,
# native-bench and pocl-bench (Release: bench/kiln-bench.cpp,
# bench/native/, bench/pocl/), (c) record the machine (lscpu with the CPU
# flags, clinfo, the CPU PoCL compiles for), (d) run the programs one process
# at a time, logging the CPU load other processes caused during each, (e)
# write raw.txt, results.json, summary.md and chart.png via bench/report.py.
# kiln-bench's figures are ratios to native C++ timed in its own process,
# interleaved with Kiln's launches: they hold up under another tenant's load
# far better than times taken in different processes.
# Nothing here checks a timing; a wrong result makes a program exit 1, and the
# run goes on with the other programs (the report shows "NO" / missing cells).
set -euo pipefail
ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
REPS=3
MAX_WAIT=300
BUILD=$ROOT/build-bench
OUT=
INSTALL=1
ITERS=30
UNCHECKED=0
MATTR=
NATIVE_ARCH=native
BLAS_CORE=
CORPUS=1
CORPUS_REPEAT=5
while (($#)); do
  case "$1" in
    --reps) REPS=$2; shift 2 ;;
    --max-wait) MAX_WAIT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --no-install) INSTALL=0; shift ;;
    --iters) ITERS=$2; shift 2 ;;
    --unchecked) UNCHECKED=1; shift ;;
    --mattr) MATTR=$2; shift 2 ;;
    --mattr=*) MATTR=${1#--mattr=}; shift ;;
    --native-arch) NATIVE_ARCH=$2; shift 2 ;;
    --native-arch=*) NATIVE_ARCH=${1#--native-arch=}; shift ;;
    --blas-core) BLAS_CORE=$2; shift 2 ;;
    --blas-core=*) BLAS_CORE=${1#--blas-core=}; shift ;;
    --corpus-repeat) CORPUS_REPEAT=$2; shift 2 ;;
    --corpus-repeat=*) CORPUS_REPEAT=${1#--corpus-repeat=}; shift ;;
    --no-corpus) CORPUS=0; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run.sh: error: unknown option '$1' (see --help)" >&2; exit 1 ;;
  esac
done
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: error: --reps needs a positive integer" >&2; exit 1; }
[[ $MAX_WAIT =~ ^[0-9]+$ ]] || { echo "run.sh: error: --max-wait needs seconds" >&2; exit 1; }
[[ $ITERS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: error: --iters needs a positive integer" >&2; exit 1; }
[[ $CORPUS_REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: error: --corpus-repeat needs a positive integer" >&2; exit 1; }
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
echo "== building kiln-bench, native-bench, pocl-bench (Release) in $BUILD"
# A new folder builds the benchmarks alone; one that exists (the tests'
# build, say) keeps its tests and tools.
lean=()
[ -f "$BUILD/CMakeCache.txt" ] || lean=(-DKILN_BUILD_TESTS=OFF -DKILN_BUILD_TOOLS=OFF)
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKILN_BUILD_BENCH=ON "${lean[@]}" \
  -DKILN_BENCH_NATIVE_ARCH="$NATIVE_ARCH" >/dev/null
ninja -C "$BUILD" -j"$(nproc)" kiln-bench native-bench pocl-bench
# The corpus: kiln-corpus (native loops -march=$NATIVE_ARCH) and
# kiln-corpus-v3 (x86-64-v3), both built on demand here.
if ((CORPUS)); then
  corpus_targets=(kiln-corpus)
  ninja -C "$BUILD" -t query kiln-corpus-v3 >/dev/null 2>&1 && corpus_targets+=(kiln-corpus-v3)
  ninja -C "$BUILD" -t query kiln-corpus-v2 >/dev/null 2>&1 && corpus_targets+=(kiln-corpus-v2)
  ninja -C "$BUILD" -j"$(nproc)" "${corpus_targets[@]}"
fi
KILN_BENCH=$BUILD/bin/kiln-bench
NATIVE_BENCH=$BUILD/bin/native-bench
POCL_BENCH=$BUILD/bin/pocl-bench

[[ -n $OUT ]] || OUT=$BUILD/bench-results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
RAW=$OUT/raw.txt
: > "$RAW"
: > "$OUT/load.txt"
# ---------------------------------------------------------------- (c) machine
clinfo > "$OUT/clinfo.txt" 2>&1 || true
lscpu > "$OUT/lscpu.txt" 2>&1 || true
# The CPU PoCL compiles for: its device name ("pthread-<llvm cpu>-<model>")
# and platform version (pocl-bench prints them too: INFO lines in raw.txt).
POCL_DEVICE=$(awk '/Device Name/ {sub(/^ *Device Name +/, ""); print; exit}' "$OUT/clinfo.txt")
POCL_VERSION=$(awk '/Platform Version/ {sub(/^ *Platform Version +/, ""); print; exit}' "$OUT/clinfo.txt")
{
  echo "date: $(date -Is)"
  echo "kiln: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "kiln_uncommitted: $(git -C "$ROOT" status --porcelain -- lib include 2>/dev/null | wc -l) files under lib/ and include/"
  uname -srm
  lscpu | grep -E 'Model name|^CPU\(s\)|CPU family|^Model:|L2|L3|Hypervisor'
  echo "cpu: $(lscpu | awk -F': *' '/Model name/ {print $2; exit}'), family $(lscpu | awk -F': *' '/CPU family/ {print $2; exit}') model $(lscpu | awk -F': *' '/^Model:/ {print $2; exit}'), $(nproc) CPUs"
  echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2- | xargs)"
  echo "kiln_mattr: ${MATTR:-none, the host features}"
  echo "native_arch: -march=$NATIVE_ARCH"
  echo "pocl_device: ${POCL_DEVICE:-unknown}"
  echo "pocl_version: ${POCL_VERSION:-unknown}"
  MODEL=$(lscpu | awk -F': *' '/Model name/ {print $2; exit}')
  ISA=${POCL_DEVICE#pthread-}
  echo "pocl_isa: ${ISA%-"$MODEL"} (PoCL's device name less 'pthread-' and the CPU model)"
  dpkg-query -W -f='${Package} ${Version}\n' pocl-opencl-icd libpocl2 llvm-19 \
    libopenblas0-pthread g++ 2>/dev/null || true
  echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
} > "$OUT/env.txt"

# ---------------------------------------------------------------- (d) run
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
# OpenMP's threads sleep between native runs, as Kiln's do between launches
# after kiln-bench's pause (--gap-us): neither side spins into the other's run.
export OMP_WAIT_POLICY=PASSIVE
# OpenBLAS's kernel is named, not detected: Debian's OpenBLAS 0.3.21 does
# not know recent CPU models (Emerald Rapids gets its generic "Prescott"
# kernel, many times slower than its AVX-512 one) and the sgemm reference
# would then mean nothing (docs/Performance.md, "Known limits of the
# method"). AVX-512 hosts get SkylakeX, AVX2 ones
# Haswell; so does AVX2 code (--mattr=-avx512f or x86-64-v3 natives): AVX2
# against AVX2. --blas-core names another. An OPENBLAS_CORETYPE inherited
# from the environment is not used (a login environment may set Haswell,
# which makes AVX-512 code look twice as close to OpenBLAS as it is); it is
# recorded in env.txt. kiln-bench and native-bench print the
# kernel OpenBLAS runs (INFO ... blas) into raw.txt and env.txt.
echo "openblas_coretype_inherited: ${OPENBLAS_CORETYPE:-none} (not used)" >> "$OUT/env.txt"
echo "openblas_other_settings: $(env | grep '^OPENBLAS_' | grep -v '^OPENBLAS_CORETYPE=' | tr '\n' ' ')" >> "$OUT/env.txt"
unset OPENBLAS_CORETYPE
if [[ -n $BLAS_CORE ]]; then
  export OPENBLAS_CORETYPE=$BLAS_CORE
elif grep -qw avx512f /proc/cpuinfo && [[ $MATTR != *-avx512f* && $NATIVE_ARCH != x86-64-v3 ]]; then
  export OPENBLAS_CORETYPE=SkylakeX
elif grep -qw avx2 /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=Haswell
fi
echo "openblas_coretype: ${OPENBLAS_CORETYPE:-chosen by OpenBLAS}" >> "$OUT/env.txt"
# OpenBLAS's threads spin for 2^OPENBLAS_THREAD_TIMEOUT cycles after each
# call (default 2^28, about 0.1 s): longer than kiln-bench's pause, so Kiln's
# next launch would run beside spinning threads and take up to twice as
# long, and its ratio to OpenBLAS would be bimodal. 2^4 cycles puts them to
# sleep at once; OpenBLAS's
# own sgemm time does not change. A value set by the caller wins.
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4}
echo "openblas_thread_timeout: $OPENBLAS_THREAD_TIMEOUT" >> "$OUT/env.txt"
for r in $(seq 1 "$REPS"); do
  KC=$(mktemp -d "$OUT/kiln-store.XXXXXX")
  KILN_CACHE_DIR=$KC OPENBLAS_NUM_THREADS=$NCPU \
    run_one "kiln$r" "$KILN_BENCH" --kernels "$ROOT/bench/kernels" --iters "$ITERS" \
      ${MATTR:+--mattr="$MATTR"}
  rm -rf "$KC"
  if ((UNCHECKED)); then
    KC=$(mktemp -d "$OUT/kiln-store.XXXXXX")
    KILN_CACHE_DIR=$KC run_one "kiln_unchecked$r" "$KILN_BENCH" --kernels "$ROOT/bench/kernels" \
      --iters "$ITERS" --unchecked --skip-many ${MATTR:+--mattr="$MATTR"}
    rm -rf "$KC"
  fi
  PC=$(mktemp -d "$OUT/pocl-cache.XXXXXX")
  POCL_CACHE_DIR=$PC run_one "pocl_cold$r" "$POCL_BENCH"
  POCL_CACHE_DIR=$PC run_one "pocl_warm$r" "$POCL_BENCH"
  rm -rf "$PC"
  NATIVE_THREADS=$NCPU OPENBLAS_NUM_THREADS=$NCPU run_one "native$r" "$NATIVE_BENCH"
  if ((CORPUS)); then
    # The native loops run with libgomp's default wait policy (spin a little,
    # then sleep), as an OpenMP program does: the corpus times sequences of
    # launches, and Kiln's threads stay warm between launches too.
    KC=$(mktemp -d "$OUT/kiln-store.XXXXXX")
    PC=$(mktemp -d "$OUT/pocl-cache.XXXXXX")
    corpus=(env -u OMP_WAIT_POLICY KILN_CACHE_DIR="$KC" POCL_CACHE_DIR="$PC")
    corpus_args=(--repeat="$CORPUS_REPEAT" --threads="$NCPU")
    if grep -qw avx512f /proc/cpuinfo; then
      if [[ $MATTR != *-avx512f* && $NATIVE_ARCH == native ]]; then
        run_one "corpus_avx512_r$r" "${corpus[@]}" "$BUILD/bin/kiln-corpus" \
          "${corpus_args[@]}" ${MATTR:+--mattr="$MATTR"}
      fi
      avx2_mattr=-avx512f
    else
      avx2_mattr=
    fi
    if [[ -x $BUILD/bin/kiln-corpus-v3 ]] && grep -qw avx2 /proc/cpuinfo; then
      run_one "corpus_avx2_r$r" "${corpus[@]}" "$BUILD/bin/kiln-corpus-v3" \
        "${corpus_args[@]}" ${avx2_mattr:+--mattr="$avx2_mattr"}
    fi
    # Code without AVX (x86-64-v2, SSE4.2): Kiln with AVX turned off, the
    # native loops -march=x86-64-v2 (docs/Portability.md).
    if [[ -x $BUILD/bin/kiln-corpus-v2 ]]; then
      run_one "corpus_sse42_r$r" "${corpus[@]}" "$BUILD/bin/kiln-corpus-v2" \
        "${corpus_args[@]}" --mattr=-avx,-avx2,-avx512f
    fi
    rm -rf "$KC" "$PC"
  fi
done

# ---------------------------------------------------------------- (e) report
grep -h '^INFO' "$RAW" | sort -u >> "$OUT/env.txt" || true
python3 "$ROOT/bench/report.py" "$OUT"
ln -sfn "$(basename "$OUT")" "$(dirname "$OUT")/latest" 2>/dev/null || true
echo "== results: $OUT/summary.md, $OUT/results.json, $OUT/chart.png"
if ((${#FAILED[@]})); then
  echo "== programs that failed (wrong result or error): ${FAILED[*]}"
  exit 1
fi
