#!/bin/bash
# run-bench.sh: 512-bit (Kiln's default on AVX512-VBMI CPUs) against 256-bit
# vectors (--mattr=+prefer-256-bit, LLVM's tuning for Intel) with the same
# binary, alternating, at all threads and under taskset -c 0,1. Writes $OUT.
set -u
mkdir -p /tmp/kb && cd /tmp/kb && tar xJf "$OLDPWD/build-dev/pkg.tar.xz" && cd pkg
run() { local name=$1; shift; ( timeout 200 "$@" ) > "$OUT/$name.txt" 2> "$OUT/$name.err"; echo "$name rc=$?"; }
L="./ld-linux-x86-64.so.2 --library-path ."
export OMP_WAIT_POLICY=PASSIVE
N=${ITERS:-41}
lscpu > "$OUT/lscpu.txt"
for r in 1 2; do
  run w512-all-$r $L ./kiln-bench --kernels kernels --iters $N --skip-many w512-all
  run w256-all-$r $L ./kiln-bench --kernels kernels --iters $N --skip-many --mattr=+prefer-256-bit w256-all
  run w512-2c-$r taskset -c 0,1 $L ./kiln-bench --kernels kernels --iters $N --skip-many w512-2c
  run w256-2c-$r taskset -c 0,1 $L ./kiln-bench --kernels kernels --iters $N --skip-many --mattr=+prefer-256-bit w256-2c
done
# One archive: the device returns only a few files of $OUT.
(cd "$OUT" && tar czf results.tgz ./*.txt ./*.err && rm -f ./*.txt ./*.err)
