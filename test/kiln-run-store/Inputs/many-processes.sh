#!/bin/sh
# Several processes compile overlapping kernels into one store at once, then
# each kernel is run from the store in a new process and its result checked.
# Usage: many-processes.sh STORE EXAMPLES_DIR
set -eu
store=$1
examples=$2
pids=""
for round in 1 2 3; do
  kiln-compile "$examples/elementwise.kiln" "$examples/reduce.kiln" --store="$store" -j 1 >/dev/null 2>&1 &
  pids="$pids $!"
  kiln-compile "$examples/reduce.kiln" "$examples/histogram.kiln" --store="$store" -j 1 >/dev/null 2>&1 &
  pids="$pids $!"
  kiln-run "$examples/elementwise.kiln" --kernel vadd --cubes 4 --arg a=f32[1000]:iota \
    --arg b=f32[1000]:fill=1 --arg c=f32[1000]:zeros --arg n=1000 --store="$store" >/dev/null 2>&1 &
  pids="$pids $!"
done
status=0
for p in $pids; do wait "$p" || status=1; done
echo "writers exit status: $status"
