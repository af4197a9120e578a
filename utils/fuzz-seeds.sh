#!/usr/bin/env bash
# Writes the seed corpus of one of Kiln's fuzz targets (fuzz/, docs/Reliability.md),
# made from the repository's own inputs, into BUILD/fuzz-seeds/TARGET (emptied
# first). utils/fuzz.sh runs it before each run.
#
#   utils/fuzz-seeds.sh BUILD TARGET
#
#   kiln-fuzz-parse    every .kiln file of test/, examples/ and bench/, and the
#                      lit tests holding kernels (their RUN lines are comments)
#   kiln-fuzz-lower    64 deterministic pseudo-random inputs of 256 to 4096
#                      bytes: the generator's choices (no text to seed it with)
#   kiln-fuzz-store    what the target writes itself (KILN_FUZZ_WRITE_SEEDS:
#                      entries, bundles, sealed values, addresses), and the
#                      golden entries of test/Inputs/store, behind mode bytes
#   kiln-fuzz-argspec  nothing: its seeds are committed (fuzz/corpus/)
#
# The committed seeds of fuzz/corpus/TARGET (regression inputs included) are
# used as they are; utils/fuzz.sh passes that folder too.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD TARGET" >&2
  exit 1
fi
build=$1
target=$2
out=$build/fuzz-seeds/$target
rm -rf "$out"
mkdir -p "$out"

# Tracked files only, so that another engineer's file in progress is not
# taken; every file when this is not a git checkout.
files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- "$@"
  else
    for pattern in "$@"; do
      find . -path "./build*" -prune -o -path "./$pattern" -type f -print | sed 's|^\./||'
    done
  fi
}

case "$target" in
  kiln-fuzz-parse)
    for f in $(files 'test/*.kiln' 'examples/*.kiln' 'bench/*.kiln'); do
      cp "$f" "$out/$(echo "$f" | tr / _)"
    done
    for f in $(files 'test/*.test'); do
      if grep -q 'kernel @' "$f"; then
        cp "$f" "$out/$(echo "$f" | tr / _)"
      fi
    done
    ;;
  kiln-fuzz-lower)
    python3 - "$out" <<'PY'
import random, sys
out = sys.argv[1]
for i in range(64):
    r = random.Random(i)
    size = r.choice([256, 512, 1024, 2048, 4096])
    with open("%s/random-%02d" % (out, i), "wb") as f:
        f.write(bytes(r.getrandbits(8) for _ in range(size)))
PY
    ;;
  kiln-fuzz-store)
    KILN_FUZZ_WRITE_SEEDS=$out "$build/bin/kiln-fuzz-store" >/dev/null
    # Mode bytes (fuzz/kiln-fuzz-store.cpp): 0x00 an entry as it is, 0x04 with
    # its checksums recomputed, 0x14 the same with the trained dictionary.
    for f in $(files 'test/Inputs/store/*.entry' 'test/Inputs/store-header-features/*.entry'); do
      name=golden-$(echo "$f" | tr / _)
      { printf '\000'; cat "$f"; } >"$out/$name-00"
      { printf '\004'; cat "$f"; } >"$out/$name-04"
      { printf '\024'; cat "$f"; } >"$out/$name-14"
    done
    ;;
  kiln-fuzz-argspec)
    ;;
  *)
    echo "$0: unknown fuzz target '$target'" >&2
    exit 1
    ;;
esac
echo "fuzz-seeds: $(find "$out" -type f | wc -l) seeds in $out"
