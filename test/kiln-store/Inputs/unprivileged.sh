#!/bin/sh
# Runs kiln-store ARGS... on a copy of STORE whose namespace folders are
# read-only, as a user that mode bits bind: root runs it as nobody (65534),
# with the copy and the tool under a fresh folder of /tmp that user can
# reach. Prints the tool's stdout, its stderr, then "exit status: N".
# NS_MODE and ROOT_MODE (chmod modes) replace the namespace folders' mode
# (555) and set the store root's.
# Usage: [NS_MODE=M] [ROOT_MODE=M] unprivileged.sh STORE ARGS...
set -eu
src=$1
shift
# Under /tmp, not $TMPDIR: lit makes that a folder only its user can enter.
dir=$(mktemp -d /tmp/kiln-unprivileged.XXXXXX)
trap 'chmod -R u+rwx "$dir"; rm -rf "$dir"' EXIT
cp -r "$src" "$dir/store"
cp "$(command -v kiln-store)" "$dir/kiln-store"
chmod 755 "$dir"
chmod "${NS_MODE:-555}" "$dir"/store/*/*
status=0
if [ "$(id -u)" = 0 ]; then
  chown -R 65534:65534 "$dir/store"
fi
if [ -n "${ROOT_MODE:-}" ]; then
  chmod "$ROOT_MODE" "$dir/store"
fi
if [ "$(id -u)" = 0 ]; then
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$dir/kiln-store" --store="$dir/store" "$@" >"$dir/out" 2>"$dir/err" || status=$?
else
  "$dir/kiln-store" --store="$dir/store" "$@" >"$dir/out" 2>"$dir/err" || status=$?
fi
# The copy's path is not the caller's: shown as STORE.
sed "s|$dir/store|STORE|g" "$dir/out" "$dir/err"
echo "exit status: $status"
