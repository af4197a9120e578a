#!/bin/sh
# Where matmul_tiled's time goes on this machine, 2026-12-04 (fourteenth
# session): the kernel and diagnostic variants (most give wrong results by
# design), one kiln-run process each, round-robin, the median launch of 30
# per process; unchecked, all threads. Usage: decompose.sh KILN_RUN ROUNDS
# [kiln-run options]
BIN=$1; ROUNDS=${2:-3}; shift; [ $# -gt 0 ] && shift
D=$(dirname "$0")
med() { grep 'launch [0-9]*:' | awk '{print $4}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
run() { # FILE N CUBES_X CUBES_Y [kiln-run options]
  file=$1; n=$2; cx=$3; cy=$4; shift 4
  "$BIN" --no-store --no-bounds-check --kernel=matmul_tiled "$file" \
    --arg=A=f32[$((n*n))]:fill=1.0 --arg=B=f32[$((n*n))]:fill=0.5 \
    --arg=C=f32[$((n*n))]:zeros --arg=N=$n --cubes=$cx,$cy \
    --repeat=30 --stats "$@" 2>&1 | med
}
K=$D/../../kernels/matmul_tiled.kiln
for r in $(seq "$ROUNDS"); do
  line="round $r"
  line="$line matmul_tiled $(run $K 1024 64 64 "$@")"
  for v in noA noB noAB bmod64 bmod256 bmod512 pipelined_split pipelined_fused; do
    line="$line $v $(run $D/$v.kiln 1024 64 64 "$@")"
  done
  line="$line two_tiles $(run $D/two_tiles.kiln 1024 64 32 "$@")"
  line="$line two_tiles_noB $(run $D/two_tiles_noB.kiln 1024 64 32 "$@")"
  line="$line N1040 $(run $K 1040 65 65 "$@")"
  line="$line noB_N1040 $(run $D/noB.kiln 1040 65 65 "$@")"
  echo "$line"
done
