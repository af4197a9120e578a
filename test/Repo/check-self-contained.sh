#!/usr/bin/env bash
# check-self-contained.sh [ROOT] - Fail when a file of the repository points
# outside it.
#
# The repository must be readable on its own: its docs, comments, scripts and
# tools may cite only its own files (docs/LangRef.md §N, docs/Tools.md,
# docs/Design.md, ...). This looks, in every file git knows (tracked, or
# untracked and not ignored) or, outside a git work tree, in every file but
# build*/ and .git/, for:
#   - design pages that are not part of the repository: ARCHITECTURE.md,
#     KERNEL-IR.md, LLVM-NOTES.md, TOOLS.md, STYLE.md;
#   - folders beside it: ../shared/..., ../seeds/..., shared/anchors/...,
#     shared/design/... (but not words such as "var/shared/local");
#   - a build machine's absolute path: /work/...
# It prints FILE:LINE:TEXT for each and exits 1, or prints a one-line "ok"
# and exits 0. This folder (test/Repo/) is left out: it names the patterns.
# Run by the lit test test/Repo/self-contained.test.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
ROOT=$(cd "$ROOT" && pwd -P) || { echo "check-self-contained: error: no folder '$1'" >&2; exit 2; }

PAGES='(ARCHITECTURE|KERNEL-IR|LLVM-NOTES|TOOLS|STYLE)\.md'
BESIDE='\.\./(shared|seeds)/|(^|[^A-Za-z0-9_./-])shared/(anchors|design|hooks|seeds)([^A-Za-z0-9_-]|$)'
MACHINE='(^|[^A-Za-z0-9_.~-])/work/'
PATTERN="$PAGES|$BESIDE|$MACHINE"

hits=
rc=2
TOP=$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null) || TOP=
if [[ -n $TOP && $(cd "$TOP" && pwd -P) == "$ROOT" ]]; then
  hits=$(git -C "$ROOT" grep --untracked -nIE "$PATTERN" -- . ':(exclude)test/Repo/')
  rc=$?
fi
if ((rc > 1)); then # not a git work tree of its own, or git failed
  hits=$(cd "$ROOT" && grep -rnIE "$PATTERN" --exclude-dir=.git \
    --exclude-dir='build*' --exclude-dir=__pycache__ . | sed 's|^\./||' |
    grep -v '^test/Repo/')
fi

if [[ -n $hits ]]; then
  echo "check-self-contained: error: files point outside the repository" \
    "(cite docs/LangRef.md, docs/Tools.md, docs/Design.md, ... instead):"
  echo "$hits"
  exit 1
fi
echo "check-self-contained: ok: no file of $ROOT points outside it"
