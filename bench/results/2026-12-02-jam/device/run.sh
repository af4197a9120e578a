#!/bin/bash
# run.sh: on the 16-core device. (1) kiln-bench's suite as in
# ../../2026-12-02-third-xeon-device/run-bench.sh (unchecked, AVX-512 and
# AVX2 code, all 16 threads and taskset -c 0,1), two processes each; (2)
# matmul_tiled jammed against not jammed (KILN_NOJAM=1 in the package's
# build, a temporary switch not committed), alternating, 4 pairs. Package:
# ../../2026-12-02-third-xeon-device/pack.sh. Writes $OUT/results.tgz.
set -u
mkdir -p /tmp/kb && cd /tmp/kb && tar xJf "$OLDPWD/build-dev/pkg.tar.xz" && cd pkg
L="./ld-linux-x86-64.so.2 --library-path ."
export OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4
lscpu > "$OUT/lscpu.txt"
run() { local name=$1; shift; ( timeout 200 "$@" ) > "$OUT/$name.txt" 2> "$OUT/$name.err"; echo "$name rc=$?"; }
for r in 1 2; do
  OPENBLAS_CORETYPE=SkylakeX run avx512-all-$r $L ./kiln-bench --kernels kernels --iters 31 --skip-many --unchecked avx512-all
  OPENBLAS_CORETYPE=SkylakeX run avx512-2c-$r taskset -c 0,1 $L ./kiln-bench --kernels kernels --iters 31 --skip-many --unchecked avx512-2c
  OPENBLAS_CORETYPE=Haswell run avx2-all-$r $L ./kiln-bench-v3 --kernels kernels --iters 31 --skip-many --unchecked --mattr=-avx512f avx2-all
  OPENBLAS_CORETYPE=Haswell run avx2-2c-$r taskset -c 0,1 $L ./kiln-bench-v3 --kernels kernels --iters 31 --skip-many --unchecked --mattr=-avx512f avx2-2c
done
for r in 1 2 3 4; do
  for jam in on off; do
    if [ $jam = off ]; then export KILN_NOJAM=1; else unset KILN_NOJAM; fi
    for t in all 2c; do
      pre=""; [ $t = 2c ] && pre="taskset -c 0,1"
      OPENBLAS_CORETYPE=SkylakeX timeout 100 $pre $L ./kiln-bench --kernels kernels --only=matmul_tiled --iters 21 --unchecked avx512-$t-jam-$jam >> "$OUT/ab.txt" 2>&1
      OPENBLAS_CORETYPE=Haswell timeout 100 $pre $L ./kiln-bench-v3 --kernels kernels --only=matmul_tiled --iters 21 --unchecked --mattr=-avx512f avx2-$t-jam-$jam >> "$OUT/ab.txt" 2>&1
    done
  done
done
unset KILN_NOJAM
grep -E "matmul_tiled (kernel_ms_median|ratio_openblas_median)" "$OUT/ab.txt" > "$OUT/ab-summary.txt"
(cd "$OUT" && tar czf results.tgz ./*.txt ./*.err && rm -f ./*.txt ./*.err)
