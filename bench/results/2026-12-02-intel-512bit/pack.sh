#!/bin/bash
# pack.sh: kiln-bench (Release, -march=native references) with its libraries,
# for a machine without LLVM (the 16-core device); writes build-dev/pkg.tar.xz
set -eu
cd "$(dirname "$0")/../../.."
ninja -C build-bench kiln-bench >/dev/null
rm -rf /tmp/pkgbuild && mkdir -p /tmp/pkgbuild/pkg/kernels
cp build-bench/bin/kiln-bench /tmp/pkgbuild/pkg/kiln-bench
cp bench/kernels/*.kiln /tmp/pkgbuild/pkg/kernels/
for l in $(ldd build-bench/bin/kiln-bench | awk '/=>/ {print $3}') /lib64/ld-linux-x86-64.so.2; do cp -L "$l" /tmp/pkgbuild/pkg/; done
mkdir -p build-dev
tar cJf build-dev/pkg.tar.xz -C /tmp/pkgbuild pkg
ls -la build-dev/pkg.tar.xz
