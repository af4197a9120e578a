#!/usr/bin/env bash
# Divergence survey of the bench kernels: for each kernel,
# variant and target CPU, how many masked loads, masked stores and gathers
# are left in the optimised IR (`kiln-compile --emit=llvm-opt`), and, for
# znver3, whether any masked store became a blend (BlendScratchStores).
# Counts are of IR calls, not of executed instructions: a masked store in a
# remainder or an edge-cube twin runs once per cube, one in the main unit
# loop once per vector of units.
#   bench/mask-survey.sh [BUILD_DIR]   (needs kiln-compile: KILN_BUILD_TOOLS)
set -euo pipefail
cd "$(dirname "$0")/.."
compile=${1:-build}/bin/kiln-compile
cpus=(znver3 znver4 skylake icelake-server x86-64-v2)
printf '%-14s %-9s' kernel variant
for c in "${cpus[@]}"; do printf ' %-16s' "$c"; done
printf ' %s\n' 'znver3 blends'
for k in bench/kernels/*.kiln; do
  name=$(basename "$k" .kiln)
  for variant in checked unchecked; do
    flag=""; [ "$variant" = unchecked ] && flag=--no-bounds-check
    printf '%-14s %-9s' "$name" "$variant"
    for c in "${cpus[@]}"; do
      ir=$("$compile" "$k" $flag --emit=llvm-opt --mcpu="$c" | grep -v '^declare')
      ml=$(grep -c 'call .*@llvm.masked.load' <<<"$ir" || true)
      ms=$(grep -c 'call void @llvm.masked.store' <<<"$ir" || true)
      mg=$(grep -c 'call .*@llvm.masked.gather' <<<"$ir" || true)
      printf ' %-16s' "L$ml S$ms G$mg"
    done
    b=$("$compile" "$k" $flag --emit=llvm-opt --mcpu=znver3 | grep -c 'scratch.old = load' || true)
    printf ' %s\n' "$b"
  done
done
