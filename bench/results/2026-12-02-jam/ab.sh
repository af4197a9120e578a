#!/bin/sh
# Alternating kiln-run processes, jammed (this commit's kiln-run) against
# not jammed (the same code with the pass switched off): matmul_tiled,
# unchecked, median launch of 20 per process.
# Usage: ab.sh JAMMED_KILN_RUN UNJAMMED_KILN_RUN PAIRS
J=$1; U=$2; PAIRS=${3:-4}
K=$(dirname "$0")/../../kernels/matmul_tiled.kiln
med() { grep 'launch [0-9]*:' | awk '{print $4}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
run() { # BIN N MATTR
  n2=$(($2 * $2)); c=$(($2 / 16))
  $1 --no-store --no-bounds-check --kernel=matmul_tiled "$K" --arg=A=f32[$n2]:fill=1.0 \
    --arg=B=f32[$n2]:fill=0.5 --arg=C=f32[$n2]:zeros --arg=N=$2 --cubes=$c,$c \
    --repeat=20 --stats $3 2>&1 | med
}
for mattr in "" "--mattr=-avx512f"; do
  for n in 1024 1040 2048; do
    for p in $(seq $PAIRS); do
      echo "N=$n ${mattr:-native} pair $p jammed $(run $J $n $mattr) not_jammed $(run $U $n $mattr)"
    done
  done
done
