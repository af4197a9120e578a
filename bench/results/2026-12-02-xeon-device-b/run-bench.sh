#!/bin/bash
# usage: run-bench.sh PHASE   (1: 16 threads, 2: 2 cores)
set -u
mkdir -p /tmp/kb && cd /tmp/kb && tar xJf "$OLDPWD/build-dev/pkg.tar.xz" && cd pkg
run() { local name=$1; shift; ( timeout 270 "$@" ) > "$OUT/$name.txt" 2> "$OUT/$name.err"; echo "$name rc=$?"; }
L="./ld-linux-x86-64.so.2 --library-path ."
export OMP_WAIT_POLICY=PASSIVE
N=${ITERS:-61}
lscpu > "$OUT/lscpu.txt"
if [ "$1" = 1 ] || [ "$1" = all ]; then
  run avx512-16 $L ./kiln-bench --kernels kernels --iters $N --skip-many xeon16-avx512
  run avx2-16 $L ./kiln-bench-v3 --kernels kernels --iters $N --skip-many --mattr=-avx512f xeon16-avx2
fi
if [ "$1" = 2 ] || [ "$1" = all ]; then
  run avx512-2 taskset -c 0,1 $L ./kiln-bench --kernels kernels --iters $N --skip-many xeon2-avx512
  run avx2-2 taskset -c 0,1 $L ./kiln-bench-v3 --kernels kernels --iters $N --skip-many --mattr=-avx512f xeon2-avx2
fi
