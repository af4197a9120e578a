#!/bin/sh
# saxpy's arithmetic, isolated: Kiln's unchecked cube function (kiln-compile
# --emit=obj) called in a plain loop beside hand-written loops, one thread,
# the same 64 MiB buffers, interleaved, medians of 40. Variants of Kiln's
# own assembly change one thing each:
#   k   Kiln's code as it is (vmulps x, vaddps y, store)
#   k1  the cube index division replaced by a move (1-D launch)
#   k2  multiply and add fused into one FMA (a different result: only to
#       find the cause, not a legal rewrite of the kernel)
#   k9  the FMA and an extra independent 512-bit add (two FP operations an
#       element again, neither dependent on the other)
# Usage: run.sh KILN_BUILD_DIR
set -eu
B=${1:-build}
W=$(mktemp -d)
"$B/bin/kiln-compile" --emit=asm --no-bounds-check bench/kernels/saxpy.kiln -o "$W/k.s"
H=bench/results/2026-12-02-fifth-saxpy/harness.cpp
python3 - "$W" <<'PY'
import re, sys
w = sys.argv[1]
s = open(w + '/k.s').read()
pat = r'\tvmulps\t(\(%r10,%r[a-z]+,4\)), %zmm0, %zmm18\n\tvaddps\t(\(%r11,%r[a-z]+,4\)), %zmm18, %zmm18'
assert len(re.findall(pat, s)) == 16
open(w + '/k1.s', 'w').write(s.replace('\tdivl\t%r8d', '\txchgl\t%eax, %edx'))
open(w + '/k2.s', 'w').write(re.sub(pat, r'\tvmovaps\t\1, %zmm18\n\tvfmadd213ps\t\2, %zmm0, %zmm18', s))
open(w + '/k9.s', 'w').write(re.sub(pat, r'\tvmovaps\t\1, %zmm18\n\tvfmadd213ps\t\2, %zmm0, %zmm18\n\tvaddps\t%zmm31, %zmm30, %zmm29', s))
PY
for K in k k1 k2 k9; do
  gcc -c "$W/$K.s" -o "$W/$K.o"
  g++ -O3 -march=native "$H" "$W/$K.o" -o "$W/h_$K"
done
for R in 1 2; do
  for K in k k1 k2 k9; do
    echo "$K: $(taskset -c 0 "$W/h_$K")"
  done
done
rm -rf "$W"
