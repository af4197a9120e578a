#!/bin/bash
# pack.sh: kiln-bench built with -march=native references (build-bench) and
# with x86-64-v3 references (build-bench-v3), with their libraries, for the
# 16-core device, which has no LLVM; writes build-dev/pkg.tar.xz
set -eu
cd "$(dirname "$0")/../../.."
ninja -C build-bench kiln-bench >/dev/null
ninja -C build-bench-v3 kiln-bench >/dev/null
rm -rf /tmp/pkgbuild && mkdir -p /tmp/pkgbuild/pkg/kernels
cp build-bench/bin/kiln-bench /tmp/pkgbuild/pkg/kiln-bench
cp build-bench-v3/bin/kiln-bench /tmp/pkgbuild/pkg/kiln-bench-v3
cp bench/kernels/*.kiln /tmp/pkgbuild/pkg/kernels/
for l in $(ldd build-bench/bin/kiln-bench | awk '/=>/ {print $3}') /lib64/ld-linux-x86-64.so.2; do cp -L "$l" /tmp/pkgbuild/pkg/; done
mkdir -p build-dev
tar cJf build-dev/pkg.tar.xz -C /tmp/pkgbuild pkg
ls -la build-dev/pkg.tar.xz
