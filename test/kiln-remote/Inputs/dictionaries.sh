# The scenario of dictionaries.test, run by with-redis.py in the test's
# folder: $1 is the example kernels' folder.
set -u
k=$1
R="--remote=unix://$PWD/redis.sock --remote-key=$PWD/key --remote-timeout-ms=5000"
echo "== warm and train"
kiln-compile $k/*.kiln --store=a --no-remote 2>&1
kiln-store --store=a train-dict
echo "== push"
kiln-store --store=a remote push $R
echo "== empty machine"
kiln-compile $k/*.kiln --store=b $R 2>&1
echo "dictionaries here: $(ls b/cpu/*/zdict-*.dict | wc -l)"
kiln-store --store=b verify
echo "== run"
kiln-run $k/elementwise.kiln --kernel vadd --cubes 1 --arg a=f32[4]:iota \
  --arg b=f32[4]:fill=1 --arg c=f32[4]:zeros --arg n=4 --print c \
  --store=b $R --stats 2>&1
echo "== a compile after training publishes its dictionary too"
redis-cli -s redis.sock flushall > /dev/null
cat > extra.kiln <<'KILN'
kernel @twice cube_dim(4) (%x: buffer<f32, read>, %y: buffer<f32, write>) {
  %i = absolute_pos : u32
  %v = load %x[%i] : f32
  %d = add %v, %v : f32
  store %y[%i], %d
}
KILN
kiln-compile extra.kiln --store=a $R 2>&1
for key in $(redis-cli -s redis.sock --scan --pattern 'kiln:*' | sort -t: -k4); do
  echo "keys: $key"
done
echo "== fresh machine takes both"
kiln-compile extra.kiln --store=c $R 2>&1
