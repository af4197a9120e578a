#!/bin/bash
# interleaved LSR on/off: kernel launch medians; args: kernel spec
for r in 1 2 3 4; do for m in on off; do
 x=""; [ $m = off ] && x=-disable-lsr
 t=$("$(git rev-parse --show-toplevel)"/build/bin/kiln-run --no-store --no-bounds-check "$@" --repeat=9 --stats $x 2>&1 | grep "launch [2-9]:" | awk '{print $4}' | sort -n | sed -n 4p)
 echo "$m $t"
done; done
