#!/bin/bash
# interleaved kiln-bench with and without -disable-lsr; $1 = reps, rest = extra args
ROOT=$(git rev-parse --show-toplevel)
R=$1; shift
for r in $(seq $R); do
  for k in vadd saxpy reduce_sum reduce_plane scan_plane softmax_rows hist matmul_tiled matmul_cmma; do
    for mode in lsr nolsr; do
      extra=""; [ $mode = nolsr ] && extra="-disable-lsr"
      OPENBLAS_CORETYPE=SkylakeX "$ROOT"/build-bench/bin/kiln-bench --only=$k --unchecked --iters=15 $extra "$@" 2>&1 | grep -E "RESULT kiln [a-z_]+ (kernel_ms_median|ratio_native_median)" | sed "s/^/$mode /"
    done
  done
done
