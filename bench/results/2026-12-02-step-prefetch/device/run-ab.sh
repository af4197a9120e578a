#!/bin/bash
# run-ab.sh: matmul_tiled with and without the step prefetch (KILN_NOPF=1 in
# a build of this tree with a temporary switch), alternating, AVX-512 and
# AVX2 code, all 16 threads and 2 cores. Package: ../../2026-12-02-third-xeon-device/pack.sh.
set -u
mkdir -p /tmp/kb && cd /tmp/kb && tar xJf "$OLDPWD/build-dev/pkg.tar.xz" && cd pkg
L="./ld-linux-x86-64.so.2 --library-path ."
export OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4
lscpu > "$OUT/lscpu.txt"
for r in 1 2 3 4; do
  for pf in on off; do
    if [ $pf = off ]; then export KILN_NOPF=1; else unset KILN_NOPF; fi
    for t in all 2c; do
      pre=""; [ $t = 2c ] && pre="taskset -c 0,1"
      OPENBLAS_CORETYPE=SkylakeX timeout 100 $pre $L ./kiln-bench --kernels kernels --only=matmul_tiled --iters 21 --unchecked avx512-$t-$pf >> "$OUT/ab.txt" 2>&1
      OPENBLAS_CORETYPE=Haswell timeout 100 $pre $L ./kiln-bench-v3 --kernels kernels --only=matmul_tiled --iters 21 --unchecked --mattr=-avx512f avx2-$t-$pf >> "$OUT/ab.txt" 2>&1
    done
  done
done
grep -E "matmul_tiled (kernel_ms_median|ratio_openblas_median)" "$OUT/ab.txt" > "$OUT/ab-summary.txt"
