#!/bin/sh
# Where matmul_tiled's time goes (1024^3, unchecked, all threads): the kernel
# and its diagnostic variants, one kiln-run process each, round-robin, the
# median launch of 30 per process. Usage: decompose.sh KILN_RUN ROUNDS [--mattr=...]
BIN=$1; ROUNDS=${2:-3}; shift 2
D=$(dirname "$0")
med() { grep 'launch [0-9]*:' | awk '{print $4}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
run() { # FILE CUBES_Y [kiln-run options]
  file=$1; cy=$2; shift 2
  "$BIN" --no-store --no-bounds-check --kernel=matmul_tiled "$file" --arg=A=f32[1048576]:fill=1.0 \
    --arg=B=f32[1048576]:fill=0.5 --arg=C=f32[1048576]:zeros --arg=N=1024 --cubes=64,$cy \
    --repeat=30 --stats "$@" 2>&1 | med
}
for r in $(seq "$ROUNDS"); do
  line="round $r"
  for v in matmul_tiled b_in_l1 ab_in_l1 one_k one_k_ab_in_l1 matmul_two_tiles; do
    f=$D/$v.kiln; y=64
    [ $v = matmul_tiled ] && f=$D/../../kernels/matmul_tiled.kiln
    [ $v = matmul_two_tiles ] && y=32
    line="$line $v $(run "$f" $y "$@")"
  done
  echo "$line"
done
