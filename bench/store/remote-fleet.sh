#!/usr/bin/env bash
# The fleet simulation as a benchmark: N machines (processes, default 8),
# each with its own empty local store, share one Redis server on a Unix
# socket. The first compiles the kernels and publishes them; the other N-1
# start together and load them from the remote tier. Reports the compile
# work of the fleet against N cold machines, and each phase's wall time.
#   bench/store/remote-fleet.sh [BUILD_DIR] [N] [FILE.kiln...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
n=${2:-8}
shift $(( $# > 2 ? 2 : $# ))
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(examples/kernels/*.kiln bench/kernels/*.kiln)
compile=$build/bin/kiln-compile
[ -x "$compile" ] || { echo "no $compile: build it first" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server is not installed" >&2; exit 1; }

dir=$(mktemp -d)
trap 'kill $(cat "$dir/redis.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$dir"' EXIT
redis-server --port 0 --unixsocket "$dir/redis.sock" --unixsocketperm 700 \
  --save '' --appendonly no --daemonize yes --pidfile "$dir/redis.pid" \
  --logfile "$dir/redis.log" --dir "$dir"
for _ in $(seq 50); do [ -S "$dir/redis.sock" ] && break; sleep 0.1; done
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/key"
chmod 600 "$dir/key"
remote=(--remote="unix://$dir/redis.sock" --remote-key="$dir/key")

now() { date +%s.%N; }
t0=$(now)
"$compile" "${files[@]}" --store="$dir/m1" -j 1 "${remote[@]}" 2> "$dir/m1.log"
t1=$(now)
for i in $(seq 2 "$n"); do
  "$compile" "${files[@]}" --store="$dir/m$i" -j 1 "${remote[@]}" 2> "$dir/m$i.log" &
done
wait
t2=$(now)

total=0
for i in $(seq 1 "$n"); do
  line=$(grep -o '[0-9]* compiled.*' "$dir/m$i.log")
  c=${line%% compiled*}
  total=$((total + c))
  echo "machine $i: $line"
done
first=$(grep -o '^kiln-compile: [0-9]* compiled' "$dir/m1.log" | grep -o '[0-9]*')
echo "fleet compile work: $total kernels compiled by $n machines; $n cold machines: $((first * n)) ($(awk -v a="$total" -v b="$first" 'BEGIN{printf "%.2f", a/b}') machines' worth)"
awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$n" 'BEGIN{printf "wall time: first machine (compiles, publishes) %.2f s; the other %d together %.2f s\n", b-a, n-1, c-b}'
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
