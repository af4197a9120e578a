#!/usr/bin/env bash
# Builds oneTBB's libtbb with ThreadSanitizer from Debian 12's source package,
# so that utils/sanitize.sh thread runs Kiln against a TBB whose hand-offs of
# work between threads TSan can see (Debian's libtbb.so.12 is not
# instrumented, and without it TSan reports TBB's own bookkeeping as races).
#
#   utils/build-tsan-tbb.sh DEST
#
# DEST/downloads keeps the two tarballs, DEST/install gets headers, the
# instrumented libtbb.so.12 and its CMake package (DEST/install/lib/cmake/TBB,
# for -DTBB_DIR). A second run with the same sources, compiler and flags does
# nothing. Environment: CXX (default c++: the compiler Kiln's build uses,
# whose TSan runtime the library must share), KILN_JOBS (default:
# all cores), KILN_DEBIAN_MIRROR (default http://deb.debian.org/debian; every
# file is checked against the SHA-256 below, so plain HTTP is safe).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DEST" >&2
  exit 1
fi
dest=$(mkdir -p "$1" && cd "$1" && pwd)
jobs=${KILN_JOBS:-$(nproc)}
cxx=${CXX:-c++}
mirror=${KILN_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# Debian 12's oneTBB (the version of the libtbb-dev headers Kiln builds
# against elsewhere): the upstream tarball and Debian's packaging, whose
# patches are applied as Debian applies them. The hashes are those of the
# package's .dsc.
version=2021.8.0
debian_revision=2+deb12u1
orig=onetbb_${version}.orig.tar.xz
orig_sha256=7e9111b8bb59c8800bf6d0b06afe7b0891937443d2dae1ee1101c8e2ede6a7ef
debian=onetbb_${version}-${debian_revision}.debian.tar.xz
debian_sha256=b83a270205b38cdf66972fa1467c3e29493b88b92ecacf4f3672e87d67199df5
pool=$mirror/pool/main/o/onetbb

# What the installed library was made from: when it matches, nothing to do.
stamp_text="onetbb $version-$debian_revision $orig_sha256 $debian_sha256
$("$cxx" --version | head -n 1)
TBB_SANITIZE=thread RelWithDebInfo -Wno-tsan tbb-only"
stamp=$dest/install/kiln-tsan-tbb.stamp
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ] &&
   ls "$dest"/install/lib/libtbb.so.12* >/dev/null 2>&1; then
  echo "== TSan oneTBB: up to date in $dest/install"
  exit 0
fi

fetch() { # fetch FILE SHA256: download into DEST/downloads unless there, check
  local file=$1 sum=$2 path=$dest/downloads/$1
  mkdir -p "$dest/downloads"
  if [ ! -f "$path" ] || ! echo "$sum  $path" | sha256sum -c --status; then
    echo "== downloading $pool/$file"
    python3 - "$pool/$file" "$path.part" <<'EOF'
import sys, urllib.request
urllib.request.urlretrieve(sys.argv[1], sys.argv[2])
EOF
    mv "$path.part" "$path"
  fi
  if ! echo "$sum  $path" | sha256sum -c --status; then
    echo "error: $path does not have the SHA-256 of Debian's .dsc ($sum); removed" >&2
    rm -f "$path"
    exit 1
  fi
}
fetch "$orig" "$orig_sha256"
fetch "$debian" "$debian_sha256"

src=$dest/src
rm -rf "$src" "$dest/build" "$dest/install"
mkdir -p "$src"
tar -xf "$dest/downloads/$orig" -C "$src" --strip-components=1
tar -xf "$dest/downloads/$debian" -C "$src"
# debian/patches/series, in order (what dpkg-source does for 3.0 (quilt)).
while read -r patch _; do
  case "$patch" in ''|'#'*) continue ;; esac
  patch -d "$src" -p1 -s <"$src/debian/patches/$patch"
done <"$src/debian/patches/series"

# libtbb alone (Kiln links TBB::tbb only), with upstream's TBB_SANITIZE.
# TBB_STRICT off and -Wno-tsan: GCC warns at every atomic_thread_fence that
# TSan does not model fences (TBB's sleep/wake protocol uses them; TBB tests
# itself under TSan with this same option).
echo "== building TSan oneTBB $version-$debian_revision in $dest"
cmake -S "$src" -B "$dest/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS=-Wno-tsan \
  -DCMAKE_INSTALL_PREFIX="$dest/install" -DCMAKE_INSTALL_LIBDIR=lib \
  -DTBB_SANITIZE=thread -DTBB_STRICT=OFF -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF \
  -DTBBMALLOC_BUILD=OFF -DTBB4PY_BUILD=OFF \
  -DTBB_DISABLE_HWLOC_AUTOMATIC_SEARCH=ON >/dev/null
ninja -C "$dest/build" -j "$jobs" tbb
cmake --install "$dest/build" >/dev/null
echo "$stamp_text" >"$stamp"
echo "== TSan oneTBB installed in $dest/install"
