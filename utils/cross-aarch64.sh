#!/usr/bin/env bash
# Builds Kiln for aarch64-linux-gnu on an x86-64 Debian machine and runs its
# tests under user-mode emulation (docs/Portability.md).
#
#   utils/cross-aarch64.sh [all|sysroot|build|test|conformance|ci]
#
#   sysroot  fetches Debian's own arm64 packages (LLVM 19, TBB, fmt, zstd,
#            hiredis, OpenSSL, GoogleTest, glibc, libstdc++) with
#            `apt-get download` and unpacks them with `dpkg-deb -x` into
#            build-aarch64-sysroot/ (no chroot, no binfmt). Needs the arm64
#            architecture in dpkg (`dpkg --add-architecture arm64 &&
#            apt-get update`, done here when run as root) and
#            qemu-user-static (or qemu-user).
#   build    configures build-aarch64/ with clang-19's cross target against
#            that sysroot (cmake/aarch64-linux-gnu.cmake) and builds the
#            library, the tools and the GoogleTest binaries.
#   test     runs every GoogleTest binary and the whole lit suite, each
#            aarch64 program under `qemu-aarch64-static -L SYSROOT`, with a
#            time limit per binary and per lit test (a test that runs past
#            it fails as TIMEOUT; the others still run).
#   all      the three in turn (the default): the whole run.
#   conformance  the conformance suite alone (test/Conformance, both
#            variants of each test), on what `build` made.
#   ci       what .ci/run asks for: the sysroot, the library, the tools and a
#            handful of conformance tests; skips with a message (exit 0)
#            when the packages cannot be fetched.
#
# Environment: KILN_AARCH64_SYSROOT, KILN_AARCH64_BUILD (folders),
# KILN_AARCH64_JOBS (ninja -j, default 2), KILN_AARCH64_CPU (the CPU qemu
# emulates, default max: NEON and SVE), KILN_QEMU (the emulator: by default
# qemu-aarch64-static, else Debian qemu-user's qemu-aarch64),
# KILN_AARCH64_TEST_TIMEOUT (seconds a lit test may run, default 1800) and
# KILN_AARCH64_GTEST_TIMEOUT (seconds a GoogleTest binary may run, default
# 3600), KILN_AARCH64_LIT_JOBS (lit -j, default KILN_AARCH64_JOBS).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
sysroot=${KILN_AARCH64_SYSROOT:-$repo/build-aarch64-sysroot}
build=${KILN_AARCH64_BUILD:-$repo/build-aarch64}
jobs=${KILN_AARCH64_JOBS:-2}
qemu_cpu=${KILN_AARCH64_CPU:-max}
qemu=${KILN_QEMU:-$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)}
test_timeout=${KILN_AARCH64_TEST_TIMEOUT:-1800}
gtest_timeout=${KILN_AARCH64_GTEST_TIMEOUT:-3600}
lit_jobs=${KILN_AARCH64_LIT_JOBS:-$jobs}
step=${1:-all}

# The arm64 packages the build links or runs against. Their dependencies
# are not resolved: only what the compiler, the linker and the emulated
# programs open is unpacked.
packages=(
  libc6 libc6-dev linux-libc-dev libgcc-s1 libgcc-12-dev libstdc++6
  libstdc++-12-dev
  llvm-19-dev libllvm19 llvm-19 llvm-19-tools libffi-dev libffi8 zlib1g
  zlib1g-dev libzstd1 libzstd-dev libxml2 libxml2-dev libedit2 libz3-4
  libz3-dev libtinfo6 libncurses-dev libicu72 liblzma5 libbsd0 libmd0
  libtbb12 libtbb-dev libtbbmalloc2 libtbbbind-2-5 libhwloc15 libudev1
  libfmt9 libfmt-dev libhiredis0.14 libhiredis-dev libssl3 libssl-dev
  libgtest-dev libgmock-dev
)

die() { echo "cross-aarch64: $*" >&2; exit 1; }

make_sysroot() {
  if [[ -f $sysroot/.complete ]]; then
    echo "cross-aarch64: sysroot $sysroot is ready"
    return 0
  fi
  command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (a Debian system is needed)"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    [[ $(id -u) == 0 ]] || die "dpkg lacks the arm64 architecture: run 'dpkg --add-architecture arm64 && apt-get update' as root"
    dpkg --add-architecture arm64
    apt-get update -q || return 1
  fi
  local debs=$sysroot.debs
  mkdir -p "$debs"
  (cd "$debs" && apt-get download -q "${packages[@]/%/:arm64}") || return 1
  rm -rf "$sysroot" && mkdir -p "$sysroot"
  for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$sysroot"; done
  # Absolute symbolic links inside the packages (libz.so ->
  # /lib/aarch64-linux-gnu/libz.so.1) would point at the build machine's
  # own files: point them inside the sysroot, relatively.
  find "$sysroot" -type l -lname '/*' | while read -r l; do
    ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" \
      "$sysroot$(readlink "$l")")" "$l"
  done
  # LLVM's CMake package checks that every file it exports exists (MLIR's
  # tools, libLTO, LLVMgold, ...), while Kiln links LLVM's static component
  # libraries only: empty stand-ins for the others, which nothing opens.
  local llvm=$sysroot/usr/lib/llvm-19 f
  grep -ho '"${_IMPORT_PREFIX}[^"]*"' "$llvm"/lib/cmake/llvm/LLVMExports-*.cmake |
    sed 's/"${_IMPORT_PREFIX}//; s/"$//' | sort -u | while read -r f; do
      if [[ ! -e $llvm$f ]]; then mkdir -p "$(dirname "$llvm$f")" && : > "$llvm$f"; fi
    done
  # Its link interface names libz3 by the arm64 machine's absolute path.
  sed -i "s|/usr/lib/aarch64-linux-gnu/|$sysroot/usr/lib/aarch64-linux-gnu/|g" \
    "$llvm"/lib/cmake/llvm/LLVMExports.cmake
  touch "$sysroot/.complete"
}

need_qemu() {
  [[ -n $qemu ]] && command -v "$qemu" >/dev/null ||
    die "qemu-aarch64-static is missing: apt-get install qemu-user-static (or qemu-user)"
}

configure() {
  command -v clang++-19 >/dev/null || die "clang++-19 is missing: apt-get install clang-19"
  command -v ld.lld-19 >/dev/null || die "ld.lld-19 is missing: apt-get install lld-19"
  need_qemu
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/aarch64-linux-gnu.cmake" \
    -DKILN_SYSROOT="$sysroot" -DKILN_QEMU="$(command -v "$qemu")" \
    -DKILN_QEMU_CPU="$qemu_cpu" \
    -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_SHARED=OFF \
    -DCMAKE_C_COMPILER_LAUNCHER="$(command -v ccache || true)" \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$(command -v ccache || true)"
}

build_targets() {
  configure
  CCACHE_BASEDIR=$repo nice -n 19 ninja -C "$build" -j "$jobs" "$@"
}

# The GoogleTest binaries the build made, in bin/.
gtest_binaries() {
  find "$build/bin" -maxdepth 1 -name 'Kiln*Tests' -type f | sort
}

run_gtests() {
  local failed=0 passed=0 b
  for b in $(gtest_binaries); do
    echo "== cross-aarch64: $(basename "$b") under $(basename "$qemu") -cpu $qemu_cpu"
    if (cd "$build" && KILN_CACHE_DIR="$build/test-cache" \
        timeout "$gtest_timeout" nice -n 19 "$qemu" -L "$sysroot" -cpu "$qemu_cpu" \
        "$b" --gtest_brief=1); then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      echo "cross-aarch64: $(basename "$b") FAILED"
    fi
  done
  echo "cross-aarch64: GoogleTest binaries: $passed passed, $failed failed"
  [[ $failed == 0 ]]
}

# lit's --timeout needs psutil (Debian's python3-psutil): the first Python
# that has it runs lit.
run_lit() {
  local limit=() py=python3 p
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import psutil' 2>/dev/null; then
      py=$p limit=(--timeout "$test_timeout")
      break
    fi
  done
  ((${#limit[@]})) ||
    echo "cross-aarch64: python3-psutil is missing: lit tests run without a time limit"
  nice -n 19 "$py" /usr/lib/llvm-19/build/utils/lit/lit.py -sv -j "$lit_jobs" \
    "${limit[@]}" "$build/test" "$@"
}

case $step in
  sysroot) make_sysroot || die "could not fetch the arm64 packages" ;;
  build)
    make_sysroot || die "could not fetch the arm64 packages"
    build_targets ;;
  test)
    need_qemu
    rc=0
    run_gtests || rc=1
    run_lit || rc=1
    exit $rc ;;
  all)
    make_sysroot || die "could not fetch the arm64 packages"
    build_targets
    rc=0
    run_gtests || rc=1
    run_lit || rc=1
    exit $rc ;;
  conformance)
    need_qemu
    run_lit --filter 'Conformance/' ;;
  ci)
    if ! make_sysroot; then
      echo "cross-aarch64: SKIPPED: the arm64 packages could not be fetched (offline?)"
      exit 0
    fi
    build_targets kiln-compile kiln-run kiln-store
    # A handful of conformance tests: integer and float operations, plane
    # operations, atomics, barriers and scratch, each in both variants.
    run_lit --filter 'Conformance/(elementwise|atomics|plane|reduce|scratch|control)\.kiln' ;;
  *) die "unknown step '$step' (all, sysroot, build, test, conformance or ci)" ;;
esac
