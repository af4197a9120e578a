#!/usr/bin/env bash
# Kiln's two set-up commands (see README.md):
#   ./build.sh demo   install what is missing, build, run the demo twice (cold, then warm)
#   ./build.sh test   install what is missing, build, run every test (GoogleTest + lit)
# BUILD_DIR (default build/), KILN_SANITIZE (address,undefined | thread) and
# KILN_JOBS (default: all cores) adjust it.
set -euo pipefail
cd "$(dirname "$0")"

mode=${1:-}
case "$mode" in
  demo|test) ;;
  *) echo "usage: $0 demo|test" >&2; exit 1 ;;
esac

packages=(llvm-19-dev llvm-19-tools libtbb-dev libzstd-dev libfmt-dev googletest
          cmake ninja-build g++ pkg-config python3 zlib1g-dev libedit-dev libxml2-dev
          libcurl4-openssl-dev libffi-dev lld-19 ccache libhiredis-dev libssl-dev redis-server
          libllvm14)
# libllvm14 is for the tests only: test/Plugin loads a plugin beside it.
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

build=${BUILD_DIR:-build}
jobs=${KILN_JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKILN_SANITIZE="${KILN_SANITIZE:-}" -DKILN_BUILD_BENCH=OFF >/dev/null
if [ "$mode" = demo ]; then
  ninja -C "$build" -j "$jobs" kiln-demo
  # The default store (KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
  # ~/.cache/kiln): the first run compiles what it does not hold yet, the
  # second, a new process, loads everything from it.
  echo "== first run"
  "$build/bin/kiln-demo" examples/kernels/*.kiln
  echo
  echo "== second run (a new process)"
  "$build/bin/kiln-demo" examples/kernels/*.kiln
else
  ninja -C "$build" -j "$jobs"
  cd "$build"
  ctest --output-on-failure -j "$jobs" --timeout 900
fi
