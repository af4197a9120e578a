#!/bin/bash
# run-bench.sh: kiln-bench's suite on the device, AVX-512 code against
# -march=native references and OpenBLAS's SkylakeX kernel, and AVX2 code
# (--mattr=-avx512f) against x86-64-v3 references and its Haswell kernel;
# all 16 threads and 2 cores (taskset -c 0,1). Writes $OUT/results.tgz.
set -u
mkdir -p /tmp/kb && cd /tmp/kb && tar xJf "$OLDPWD/build-dev/pkg.tar.xz" && cd pkg
run() { local name=$1; shift; ( timeout 240 "$@" ) > "$OUT/$name.txt" 2> "$OUT/$name.err"; echo "$name rc=$?"; }
L="./ld-linux-x86-64.so.2 --library-path ."
export OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4
N=${ITERS:-31}
lscpu > "$OUT/lscpu.txt"
for r in 1 2; do
  OPENBLAS_CORETYPE=SkylakeX run avx512-all-$r $L ./kiln-bench --kernels kernels --iters $N --skip-many --unchecked avx512-all
  OPENBLAS_CORETYPE=SkylakeX run avx512-2c-$r taskset -c 0,1 $L ./kiln-bench --kernels kernels --iters $N --skip-many --unchecked avx512-2c
  OPENBLAS_CORETYPE=Haswell run avx2-all-$r $L ./kiln-bench-v3 --kernels kernels --iters $N --skip-many --unchecked --mattr=-avx512f avx2-all
  OPENBLAS_CORETYPE=Haswell run avx2-2c-$r taskset -c 0,1 $L ./kiln-bench-v3 --kernels kernels --iters $N --skip-many --unchecked --mattr=-avx512f avx2-2c
done
# One archive: the device returns only a few files of $OUT.
(cd "$OUT" && tar czf results.tgz ./*.txt ./*.err && rm -f ./*.txt ./*.err)
