#!/bin/bash
# Runs the corpus on a machine without LLVM (a many-core host): the folder
# BUNDLE (default: the current one) holds kiln-corpus.xz (and optionally
# kiln-corpus-base.xz, another build to compare), both stripped and
# xz-compressed, and libs.tar.xz (their shared libraries and ld-linux, from
# `ldd`). It unpacks them, runs Kiln and native OpenMP (PoCL is not carried)
# at THREADS threads (default 16), 512-bit code and, on an AVX-512 host,
# Kiln with AVX2 code, and writes one file per run to $OUT.
# Environment: THREADS ("16 2"), REPEAT (5), LIMIT (seconds a run, 250),
# BENCHES (a comma-separated list for --bench; default all).
set -u
corpus=$(cd "$(dirname "$0")" && pwd)
cd "${BUNDLE:-.}"
mkdir -p /tmp/kc/lib
for f in kiln-corpus*.xz; do xz -dc "$f" > "/tmp/kc/${f%.xz}"; done
chmod +x /tmp/kc/kiln-corpus*
xz -dc libs.tar.xz | tar -xf - -C /tmp/kc/lib
# The carried loader and libraries, whatever the host's glibc is.
LD=(/tmp/kc/lib/ld-linux-x86-64.so.2 --library-path /tmp/kc/lib)
export KILN_CACHE_DIR=/tmp/kc/store
lscpu | head -20 > "$OUT/lscpu.txt"
nproc >> "$OUT/lscpu.txt"
R=${REPEAT:-5}
SEL=()
[ -n "${BENCHES:-}" ] && SEL=(--bench="$BENCHES")
for t in ${THREADS:-16}; do
  for bin in kiln-corpus kiln-corpus-base; do
    [ -x /tmp/kc/$bin ] || continue
    timeout ${LIMIT:-250} "${LD[@]}" /tmp/kc/$bin --corpus-dir="$corpus" --systems=kiln,native --threads=$t --repeat=$R "${SEL[@]}" --tag=$bin-t$t > "$OUT/$bin-t$t.txt" 2>&1
  done
  if grep -q avx512f /proc/cpuinfo; then
    timeout ${LIMIT:-250} "${LD[@]}" /tmp/kc/kiln-corpus --corpus-dir="$corpus" --systems=kiln --threads=$t --repeat=$R "${SEL[@]}" --mattr=-avx512f --tag=avx2-t$t > "$OUT/kiln-corpus-avx2-t$t.txt" 2>&1
  fi
done
