#!/bin/bash
# run.sh: on the 16-core device. (1) kiln-bench's suite, unchecked, with
# AVX-512 and AVX2 code, all 16 threads and taskset -c 0,1, one process
# each; (2) saxpy and vadd with the packaged kiln-bench and with
# kiln-bench-before (another build of the same bench and references),
# alternating, 3 pairs per ISA and thread count. Package:
# pack.sh here. Writes $OUT/results.tgz.
set -u
mkdir -p /tmp/kb && cd /tmp/kb && tar xJf "$OLDPWD/build-dev/pkg.tar.xz" && cd pkg
L="./ld-linux-x86-64.so.2 --library-path ."
export OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4
lscpu > "$OUT/lscpu.txt"
run() { local name=$1; shift; ( timeout 200 "$@" ) > "$OUT/$name.txt" 2> "$OUT/$name.err"; echo "$name rc=$?"; }
OPENBLAS_CORETYPE=SkylakeX run avx512-all $L ./kiln-bench --kernels kernels --iters 31 --skip-many --unchecked avx512-all
OPENBLAS_CORETYPE=SkylakeX run avx512-2c taskset -c 0,1 $L ./kiln-bench --kernels kernels --iters 31 --skip-many --unchecked avx512-2c
OPENBLAS_CORETYPE=Haswell run avx2-all $L ./kiln-bench-v3 --kernels kernels --iters 31 --skip-many --unchecked --mattr=-avx512f avx2-all
OPENBLAS_CORETYPE=Haswell run avx2-2c taskset -c 0,1 $L ./kiln-bench-v3 --kernels kernels --iters 31 --skip-many --unchecked --mattr=-avx512f avx2-2c
for r in 1 2 3; do
  for b in before after; do
    s=""; [ $b = before ] && s="-before"
    for t in all 2c; do
      pre=""; [ $t = 2c ] && pre="taskset -c 0,1"
      OPENBLAS_CORETYPE=SkylakeX timeout 60 $pre $L ./kiln-bench$s --kernels kernels --only=saxpy,vadd --unchecked avx512-$t-$b >> "$OUT/ab.txt" 2>&1
      OPENBLAS_CORETYPE=Haswell timeout 60 $pre $L ./kiln-bench-v3$s --kernels kernels --only=saxpy,vadd --unchecked --mattr=-avx512f avx2-$t-$b >> "$OUT/ab.txt" 2>&1
    done
  done
done
grep -E "(saxpy|vadd) (kernel_ms_median|ratio_native_median|ratio_native_fma_median)" "$OUT/ab.txt" > "$OUT/ab-summary.txt"
(cd "$OUT" && tar czf results.tgz ./*.txt ./*.err && rm -f ./*.txt ./*.err)
