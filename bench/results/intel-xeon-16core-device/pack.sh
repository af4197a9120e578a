#!/bin/bash
# pack.sh: kiln-bench (-march=native references, and x86-64-v3 references
# for AVX2 code) and a second kiln-bench binary to compare with (BEFORE,
# BEFORE_V3: kept from another build), with their libraries, for the
# 16-core device, which has no LLVM; writes build-dev/pkg.tar.xz.
# Usage: pack.sh BEFORE BEFORE_V3
set -eu
BEFORE=$1 BEFORE_V3=$2
cd "$(dirname "$0")/../../.."
ninja -C build-bench kiln-bench >/dev/null
ninja -C build-bench-v3 kiln-bench >/dev/null
rm -rf /tmp/pkgbuild && mkdir -p /tmp/pkgbuild/pkg/kernels
cp build-bench/bin/kiln-bench /tmp/pkgbuild/pkg/kiln-bench
cp build-bench-v3/bin/kiln-bench /tmp/pkgbuild/pkg/kiln-bench-v3
cp "$BEFORE" /tmp/pkgbuild/pkg/kiln-bench-before
cp "$BEFORE_V3" /tmp/pkgbuild/pkg/kiln-bench-v3-before
cp bench/kernels/*.kiln /tmp/pkgbuild/pkg/kernels/
strip -s /tmp/pkgbuild/pkg/kiln-bench* 2>/dev/null || true
for l in $(ldd build-bench/bin/kiln-bench | awk '/=>/ {print $3}') /lib64/ld-linux-x86-64.so.2; do cp -L "$l" /tmp/pkgbuild/pkg/; done
mkdir -p build-dev
# A dictionary that spans the four binaries: they share most of their code.
XZ_OPT="--lzma2=preset=6,dict=256MiB" tar cJf build-dev/pkg.tar.xz -C /tmp/pkgbuild pkg
ls -la build-dev/pkg.tar.xz
