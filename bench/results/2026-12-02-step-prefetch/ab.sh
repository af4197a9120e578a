#!/bin/bash
# interleaved: step prefetch on/off, matmul_tiled N in SIZES; extra args to kiln-run
ROOT=$(git rev-parse --show-toplevel)
BIN=$ROOT/build/bin/kiln-run
for N in ${SIZES:-1024 1040 2048}; do
  C=$((N/16)); E=$((N*N)); R=$([ $N -ge 2048 ] && echo 5 || echo 9)
  for r in 1 2 3 4; do
    for mode in on off; do
      if [ $mode = off ]; then export KILN_NOPF=1; else unset KILN_NOPF; fi
      t=$($BIN --no-store --no-bounds-check --kernel=matmul_tiled $ROOT/bench/kernels/matmul_tiled.kiln --arg=A=f32[$E]:fill=1.0 --arg=B=f32[$E]:fill=0.5 --arg=C=f32[$E]:zeros --arg=N=$N --cubes=$C,$C --repeat=$R --stats "$@" 2>&1 | grep "launch" | tail -$((R-1)) | awk '{print $4}' | sort -n | sed -n 2p)
      echo "$N $mode $t"
    done
  done
done
