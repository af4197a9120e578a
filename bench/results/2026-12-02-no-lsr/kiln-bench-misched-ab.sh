#!/bin/bash
# interleaved kiln-bench with and without -enable-misched=false (the machine scheduler); $1 = reps, rest = extra args
ROOT=$(git rev-parse --show-toplevel)
R=$1; shift
for r in $(seq $R); do
  for k in vadd saxpy reduce_sum reduce_plane scan_plane softmax_rows hist matmul_tiled matmul_cmma; do
    for mode in mis nomis; do
      extra=""; [ $mode = nomis ] && extra="-enable-misched=false"
      OPENBLAS_THREAD_TIMEOUT=4 OMP_WAIT_POLICY=PASSIVE OPENBLAS_CORETYPE=${CT:-SkylakeX} ${KB:-"$ROOT"/build-bench/bin/kiln-bench} --only=$k --unchecked --iters=15 $extra "$@" 2>&1 | grep -E "RESULT kiln [a-z_]+ (kernel_ms_median|ratio_native_median)" | sed "s/^/$mode /"
    done
  done
done
