# Float atomics, plane product scans and sync_plane through kiln-run.
"""Usage: atomicsplanelineops.py WORKDIR

Checks these operations against docs/LangRef.md, each kernel run in the
bounds-checked and in the unchecked variant:
- plane_inclusive_prod / plane_exclusive_prod on u32, i32, i64, f32, f64
  and vec<2 x f32>, over cubes of 80 units (two planes of 32 and one of 16):
  against exact integer arithmetic (wrapping) and float products rounded
  after each step, in the order docs/LangRef.md gives: Hillis-Steele for
  f32 and f64 (the vector form), lane by lane for lines; the first lane's
  exclusive product is 1.
- Float atomics on buffers of f32 and f64 with every unit of many cubes
  contending for a few elements: atomic_add/atomic_sub of values whose sums
  are exact in any order (the old values atomic_add returns are the slot's
  successive values in some serial order), atomic_min/atomic_max (a NaN in memory is
  replaced: minnum/maxnum), atomic_exchange (the old values returned and the
  final value are, together, exactly the values that were there and
  written), atomic_cas in a loop computing a maximum, atomic_load and
  atomic_store; and the same reductions on shared memory within a cube.
- sync_plane: each unit writes its slot of a shared array, sync_plane, then
  reads its plane neighbour's.
- A scalar literal operand of a lane-wise operation on lines (add, sub, mul,
  shl, min, lt, select, fma) stands for the line with it in every lane:
  exact integer results and float results that are exact in the type.
- powi (a float to an i32 power: pow(x, n converted to the type)) on f32,
  f64, f16, bf16 and lines, within 2 ulp (f32, f64) or 1 ulp (f16, bf16) of
  the exact power.
- line_sum (the horizontal sum of a line) on lines of every width and of
  integer (wrapping) and float types, the lanes added in order 0..N-1 with
  each sum rounded to the type, bf16 and f16 included.
"""

import math
import os
import string
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

CUBE = 80     # units per cube: planes of 32, 32 and 16
PLANE = 32


def ty(lanes, t):
    return t if lanes == 0 else "vec<%d x %s>" % (lanes, t)


# ---------------------------------------------------------------------------
# Plane product scans

SCAN_CASES = [(0, "u32"), (0, "i32"), (0, "i64"), (0, "f32"), (0, "f64"), (2, "f32")]


def scan_kernel(idx, lanes, t):
    T = ty(lanes, t)
    return "\n".join([
        "kernel @scan%d cube_dim(%d) (%%a: buffer<%s, read>, %%inc: buffer<%s, write>," % (
            idx, CUBE, T, T),
        "    %%exc: buffer<%s, write>) {" % T,
        "  %i = absolute_pos : u32",
        "  %%x = load %%a[%%i] : %s" % T,
        "  %%p = plane_inclusive_prod %%x : %s" % T,
        "  %%q = plane_exclusive_prod %%x : %s" % T,
        "  store %inc[%i], %p",
        "  store %exc[%i], %q",
        "}", ""])


def planes_of(n):
    """The unit ranges of the planes of n cubes."""
    out = []
    for c in range(n):
        base = c * CUBE
        for start in range(0, CUBE, PLANE):
            out.append(range(base + start, base + min(start + PLANE, CUBE)))
    return out


def scan_inputs(rng, t, count):
    if K.is_int(t):
        # Small factors (and some zeros and -1s) so products stay interesting.
        vals = []
        for _ in range(count):
            r = rng.below(16)
            v = 0 if r == 0 else -1 if r == 1 and K.signed(t) else 1 + rng.below(5)
            vals.append(K.wrap(v, t))
        return vals
    # Near 1, so that 32 of them neither overflow nor underflow.
    return [K.round_to_bits(rng.uniform(0.8, 1.25), t) for _ in range(count)]


def scan_refs(t, xs, lanes):
    """Inclusive and exclusive products per plane, lane by lane (each vector
    lane of a line separately)."""
    per = max(lanes, 1)
    n_units = len(xs) // per
    inc, exc = [0] * len(xs), [0] * len(xs)
    for plane in planes_of(n_units // CUBE):
        if lanes == 0 and K.is_float(t):
            def mul(a, b):
                return K.round_to_bits(K.bits_to_float(a, t) * K.bits_to_float(b, t), t)
            vals = [xs[u] for u in plane]
            run = K.plane_scan_order(vals, mul, K.round_to_bits(1.0, t), PLANE)
            for k, u in enumerate(plane):
                inc[u] = run[k]
                exc[u] = run[k - 1] if k else K.round_to_bits(1.0, t)
            continue
        for l in range(per):
            acc = 1 if K.is_int(t) else 1.0
            for u in plane:
                j = u * per + l
                before = acc
                if K.is_int(t):
                    acc = K.wrap(acc * xs[j], t)
                    exc[j], inc[j] = K.wrap(before, t), acc
                else:
                    acc = K.bits_to_float(K.round_to_bits(acc * K.bits_to_float(xs[j], t), t), t)
                    exc[j] = K.round_to_bits(before, t)
                    inc[j] = K.round_to_bits(acc, t)
    return inc, exc


# ---------------------------------------------------------------------------
# Float atomics

ATOMIC_KERNELS = string.Template("""
kernel @fadd_$T cube_dim(64) (%m: buffer<$T, read_write>, %x: buffer<$T, read>,
                              %old: buffer<$T, write>) {
  %i = absolute_pos : u32
  %v = load %x[%i] : $T
  %slot = rem %i, 4:u32 : u32
  %o = atomic_add %m[%slot], %v : $T
  store %old[%i], %o
  %s2 = add %slot, 4:u32 : u32
  %o2 = atomic_sub %m[%s2], %v : $T
}
kernel @fminmax_$T cube_dim(64) (%m: buffer<$T, read_write>, %x: buffer<$T, read>) {
  %i = absolute_pos : u32
  %v = load %x[%i] : $T
  %slot = rem %i, 3:u32 : u32
  %a = atomic_min %m[%slot], %v : $T
  %s2 = add %slot, 3:u32 : u32
  %b = atomic_max %m[%s2], %v : $T
}
kernel @fxchg_$T cube_dim(64) (%m: buffer<$T, read_write>, %x: buffer<$T, read>,
                               %old: buffer<$T, write>) {
  %i = absolute_pos : u32
  %v = load %x[%i] : $T
  %slot = rem %i, 2:u32 : u32
  %o = atomic_exchange %m[%slot], %v : $T
  store %old[%i], %o
}
kernel @fcas_$T cube_dim(64) (%m: buffer<$T, read_write>, %x: buffer<$T, read>) {
  %i = absolute_pos : u32
  %v = load %x[%i] : $T
  %cur = var $T
  %start = atomic_load %m[0:u32] : $T
  set %cur, %start
  loop {
    %c = get %cur : $T
    %want = max %c, %v : $T
    %seen = atomic_cas %m[0:u32], %c, %want : $T
    %same = bitcast %seen : $U
    %mine = bitcast %c : $U
    %done = eq %same, %mine : bool
    if %done {
      break
    }
    set %cur, %seen
  }
}
kernel @fstoreload_$T cube_dim(64) (%m: buffer<$T, read_write>, %x: buffer<$T, read>,
                                    %back: buffer<$T, write>) {
  %i = absolute_pos : u32
  %v = load %x[%i] : $T
  atomic_store %m[%i], %v
  %l = atomic_load %m[%i] : $T
  store %back[%i], %l
}
kernel @fshared_$T cube_dim(64) (%x: buffer<$T, read>, %r: buffer<$T, write>) {
  %s = shared $T[4]
  %u = unit_pos : u32
  %c = cube_pos : u32
  %i = absolute_pos : u32
  %z = eq %u, 0:u32 : bool
  if %z {
    store %s[0:u32], 0.0:$T
    store %s[1:u32], 0.0:$T
    store %s[2:u32], 1000000.0:$T
    store %s[3:u32], -1000000.0:$T
  }
  sync_cube
  %v = load %x[%i] : $T
  %a = atomic_add %s[0:u32], %v : $T
  %b = atomic_sub %s[1:u32], %v : $T
  %c2 = atomic_min %s[2:u32], %v : $T
  %d = atomic_max %s[3:u32], %v : $T
  sync_cube
  %lt = lt %u, 4:u32 : bool
  if %lt {
    %w = load %s[%u] : $T
    %base = mul %c, 4:u32 : u32
    %o = add %base, %u : u32
    store %r[%o], %w
  }
}
""")

UINT_OF = {"f32": "u32", "f64": "u64"}


def atomic_kernels(t):
    return ATOMIC_KERNELS.substitute(T=t, U=UINT_OF[t])


# ---------------------------------------------------------------------------
# sync_plane

SYNC_PLANE = """
kernel @syncplane cube_dim(80) (%r: buffer<u32, write>) {
  %s = shared u32[80]
  %u = unit_pos : u32
  %i = absolute_pos : u32
  %v = mul %i, 3:u32 : u32
  store %s[%u], %v
  sync_plane
  %lane = unit_pos_plane : u32
  %pd = plane_dim : u32
  %base = sub %u, %lane : u32
  %l1 = add %lane, 1:u32 : u32
  %n = rem %l1, %pd : u32
  %src = add %base, %n : u32
  %inb = lt %src, 80:u32 : bool
  %safe = select %inb, %src, %base : u32
  %w = load %s[%safe] : u32
  store %r[%i], %w
}
"""


# ---------------------------------------------------------------------------
# line_sum

LINE_SUM_CASES = [(4, "f32"), (2, "f64"), (8, "f32"), (3, "f16"), (4, "bf16"), (16, "u8"),
                  (8, "i32"), (2, "i64"), (16, "f32"), (1, "u32")]


def line_sum_kernel(idx, lanes, t):
    T = ty(lanes, t)
    return "\n".join([
        "kernel @lsum%d cube_dim(16) (%%a: buffer<%s, read>, %%r: buffer<%s, write>) {" % (
            idx, T, t),
        "  %i = absolute_pos : u32",
        "  %%x = load %%a[%%i] : %s" % T,
        "  %%s = line_sum %%x : %s" % t,
        "  store %r[%i], %s",
        "}", ""])


def line_sum_ref(t, lane_vals):
    if K.is_int(t):
        acc = 0
        for v in lane_vals:
            acc = K.wrap(acc + v, t)
        return acc
    acc = K.bits_to_float(lane_vals[0], t)
    for b in lane_vals[1:]:
        acc = K.bits_to_float(K.round_to_bits(acc + K.bits_to_float(b, t), t), t)
    return K.round_to_bits(acc, t)


def check_line_sums(chk, variants):
    with open("linesum.kiln", "w") as f:
        f.write("\n".join(line_sum_kernel(i, *c) for i, c in enumerate(LINE_SUM_CASES)))
    K.roundtrip("linesum.kiln")
    for idx, (lanes, t) in enumerate(LINE_SUM_CASES):
        rng = K.Rng(idx * 17 + 5)
        n = 64
        if K.is_int(t):
            vals = [K.wrap(rng.u64(), t) for _ in range(n * lanes)]
        else:
            vals = [K.round_to_bits(rng.uniform(-100, 100) * (1 if rng.below(4) else 1e-3), t)
                    for _ in range(n * lanes)]
        want = [line_sum_ref(t, vals[u * lanes:(u + 1) * lanes]) for u in range(n)]
        for variant, extra in variants:
            chk.prefix = "[%s] " % variant
            res = K.run("linesum.kiln", "lsum%d" % idx, str(n // 16),
                        {"a": K.Buf(ty(lanes, t), vals, lanes), "r": K.Buf(t, [0] * n)}, ["r"],
                        extra=extra, may_fail=chk)
            if res is None:
                continue
            for u in range(n):
                chk.eq("line_sum %s unit %d" % (ty(lanes, t), u), res["r"][u], want[u])


# ---------------------------------------------------------------------------
# Scalar literals splatted in line operations

SPLAT = """
kernel @splat_int cube_dim(16) (%a: buffer<vec<4 x i32>, read>, %r: buffer<vec<4 x i32>, write>,
                                %b: buffer<vec<8 x u32>, read>, %s: buffer<vec<8 x u32>, write>) {
  %i = absolute_pos : u32
  %x = load %a[%i] : vec<4 x i32>
  %y = add %x, -3:i32 : vec<4 x i32>
  %z = mul 5:i32, %y : vec<4 x i32>
  %c = lt %z, 0:i32 : vec<4 x bool>
  %w = select %c, %z, 7:i32 : vec<4 x i32>
  %m = min %w, 100:i32 : vec<4 x i32>
  store %r[%i], %m
  %u = load %b[%i] : vec<8 x u32>
  %sh = shl %u, 3:u32 : vec<8 x u32>
  %sub = sub 4000000000:u32, %sh : vec<8 x u32>
  store %s[%i], %sub
}
kernel @splat_float cube_dim(16) (%a: buffer<vec<2 x f64>, read>, %r: buffer<vec<2 x f64>, write>) {
  %i = absolute_pos : u32
  %x = load %a[%i] : vec<2 x f64>
  %f = fma %x, 0.5:f64, 2.0:f64 : vec<2 x f64>
  %g = sub %f, 0.25:f64 : vec<2 x f64>
  store %r[%i], %g
}
"""


def check_splats(chk, variants):
    with open("splat.kiln", "w") as f:
        f.write(SPLAT)
    K.roundtrip("splat.kiln")
    n = 32
    rng = K.Rng(4242)
    xa = [K.wrap(rng.below(200) - 100, "i32") for _ in range(n * 4)]
    xb = [rng.below(1 << 29) for _ in range(n * 8)]
    xf = [K.round_to_bits(rng.below(4096) / 8.0 - 256.0, "f64") for _ in range(n * 2)]
    def int_ref(x):
        z = 5 * (x - 3)
        w = z if z < 0 else 7
        return min(w, 100)
    for variant, extra in variants:
        chk.prefix = "[%s] " % variant
        res = K.run("splat.kiln", "splat_int", str(n // 16),
                    {"a": K.Buf("vec<4 x i32>", xa, 4), "r": K.Buf("vec<4 x i32>", [0] * len(xa), 4),
                     "b": K.Buf("vec<8 x u32>", xb, 8), "s": K.Buf("vec<8 x u32>", [0] * len(xb), 8)},
                    ["r", "s"], extra=extra, may_fail=chk)
        if res is not None:
            for j, x in enumerate(xa):
                chk.eq("splatted literals i32 lane %d" % j, res["r"][j], K.wrap(int_ref(x), "i32"))
            for j, u in enumerate(xb):
                chk.eq("splatted literals u32 lane %d" % j, res["s"][j],
                       K.wrap(4000000000 - K.wrap(u << 3, "u32"), "u32"))
        res = K.run("splat.kiln", "splat_float", str(n // 16),
                    {"a": K.Buf("vec<2 x f64>", xf, 2), "r": K.Buf("vec<2 x f64>", [0] * len(xf), 2)},
                    ["r"], extra=extra, may_fail=chk)
        if res is not None:
            for j, b in enumerate(xf):
                x = K.bits_to_float(b, "f64")
                chk.eq("splatted literals f64 lane %d" % j, res["r"][j],
                       K.round_to_bits(x * 0.5 + 2.0 - 0.25, "f64"))


# ---------------------------------------------------------------------------
# powi

POWI_CASES = [(0, "f32"), (0, "f64"), (0, "f16"), (0, "bf16"), (4, "f32"), (2, "f64")]
POWI_BOUND = {"f32": 2.0, "f64": 2.0, "f16": 1.0, "bf16": 1.0}


def powi_kernel(idx, lanes, t):
    T, N = ty(lanes, t), ty(lanes, "i32")
    return "\n".join([
        "kernel @powi%d cube_dim(16) (%%a: buffer<%s, read>, %%n: buffer<%s, read>," % (idx, T, N),
        "    %%r: buffer<%s, write>) {" % T,
        "  %i = absolute_pos : u32",
        "  %%x = load %%a[%%i] : %s" % T,
        "  %%e = load %%n[%%i] : %s" % N,
        "  %%p = powi %%x, %%e : %s" % T,
        "  store %r[%i], %p",
        "}", ""])


def check_powi(chk, variants):
    with open("powi.kiln", "w") as f:
        f.write("\n".join(powi_kernel(i, *c) for i, c in enumerate(POWI_CASES)))
    K.roundtrip("powi.kiln")
    for idx, (lanes, t) in enumerate(POWI_CASES):
        per = max(lanes, 1)
        rng = K.Rng(idx * 31 + 3)
        n = 64 * per
        xs, ns = [], []
        for _ in range(n):
            x = rng.uniform(0.5, 2.5) * (-1 if rng.below(3) == 0 else 1)
            xs.append(K.round_to_bits(x, t))
            ns.append(K.wrap(rng.below(17) - 8, "i32"))
        for variant, extra in variants:
            chk.prefix = "[%s] " % variant
            res = K.run("powi.kiln", "powi%d" % idx, str(n // per // 16),
                        {"a": K.Buf(ty(lanes, t), xs, per), "n": K.Buf(ty(lanes, "i32"), ns, per),
                         "r": K.Buf(ty(lanes, t), [0] * n, per)}, ["r"], extra=extra, may_fail=chk)
            if res is None:
                continue
            for j in range(n):
                x = K.bits_to_float(xs[j], t)
                ref = math.pow(x, ns[j])
                err = K.ulp_error(res["r"][j], ref, t)
                chk.ok("powi %s (%r, %d)" % (ty(lanes, t), x, ns[j]), err <= POWI_BOUND[t],
                       "got %r, reference %r: %.2f ulp" % (K.bits_to_float(res["r"][j], t), ref, err))


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    chk = K.Checker("atomics, plane and line ops")
    variants = (("checked", []), ("unchecked", ["--no-bounds-check"]))

    # Plane product scans.
    with open("scans.kiln", "w") as f:
        f.write("\n".join(scan_kernel(i, *c) for i, c in enumerate(SCAN_CASES)))
    K.roundtrip("scans.kiln")
    cubes = 3
    for idx, (lanes, t) in enumerate(SCAN_CASES):
        per = max(lanes, 1)
        rng = K.Rng(idx * 131 + 7)
        xs = scan_inputs(rng, t, cubes * CUBE * per)
        inc_ref, exc_ref = scan_refs(t, xs, lanes)
        T = ty(lanes, t)
        for variant, extra in variants:
            chk.prefix = "[%s] " % variant
            res = K.run("scans.kiln", "scan%d" % idx, str(cubes),
                        {"a": K.Buf(T, xs, per), "inc": K.Buf(T, [0] * len(xs), per),
                         "exc": K.Buf(T, [0] * len(xs), per)}, ["inc", "exc"], extra=extra,
                        may_fail=chk)
            if res is None:
                continue
            for j in range(len(xs)):
                chk.eq("plane_inclusive_prod %s unit %d" % (T, j // per), res["inc"][j],
                       inc_ref[j])
                chk.eq("plane_exclusive_prod %s unit %d" % (T, j // per), res["exc"][j],
                       exc_ref[j])

    # Float atomics.
    for t in ("f32", "f64"):
        kf = "atomics_%s.kiln" % t
        with open(kf, "w") as f:
            f.write(atomic_kernels(t))
        K.roundtrip(kf)
        fb = lambda v: K.round_to_bits(v, t)  # noqa: E731
        fv = lambda b: K.bits_to_float(b, t)  # noqa: E731
        n = 64 * 8
        rng = K.Rng(99 if t == "f32" else 101)
        # Multiples of 1/4 below 64: every partial sum is exact in any order.
        xs = [fb(rng.below(256) / 4.0 - 32.0) for _ in range(n)]
        for variant, extra in variants:
            chk.prefix = "[%s %s] " % (variant, t)
            m0 = [fb(v) for v in (1.0, -2.0, 0.5, 100.0, 3.0, 0.0, -7.25, 8.0)]
            res = K.run(kf, "fadd_%s" % t, "8",
                        {"m": K.Buf(t, m0), "x": K.Buf(t, xs), "old": K.Buf(t, [0] * n)},
                        ["m", "old"], extra=extra, may_fail=chk)
            if res is not None:
                for s in range(4):
                    mine = [fv(xs[i]) for i in range(n) if i % 4 == s]
                    chk.eq("atomic_add slot %d" % s, res["m"][s], fb(fv(m0[s]) + sum(mine)))
                    chk.eq("atomic_sub slot %d" % (s + 4), res["m"][s + 4],
                           fb(fv(m0[s + 4]) - sum(mine)))
                    # The old values a slot returned are its successive
                    # values in some order of the additions: with the final
                    # value they are the initial one and every old + x.
                    units = [i for i in range(n) if i % 4 == s]
                    olds = sorted([fv(res["old"][i]) for i in units] + [fv(res["m"][s])])
                    steps = sorted([fv(res["old"][i]) + fv(xs[i]) for i in units] +
                                   [fv(m0[s])])
                    chk.ok("atomic_add slot %d returns its successive values" % s,
                           olds == steps, "the old values are no serial order of the adds")
            nan = (0x7FC00000 if t == "f32" else 0x7FF8000000000000)
            m1 = [nan, fb(1e9), fb(5.0), nan, fb(-1e9), fb(-5.0)]
            res = K.run(kf, "fminmax_%s" % t, "8", {"m": K.Buf(t, m1), "x": K.Buf(t, xs)},
                        ["m"], extra=extra, may_fail=chk)
            if res is not None:
                for s in range(3):
                    mine = [fv(xs[i]) for i in range(n) if i % 3 == s]
                    start_min = [v for v in [fv(m1[s])] if not math.isnan(v)]
                    start_max = [v for v in [fv(m1[s + 3])] if not math.isnan(v)]
                    chk.eq("atomic_min slot %d" % s, res["m"][s], fb(min(mine + start_min)))
                    chk.eq("atomic_max slot %d" % (s + 3), res["m"][s + 3],
                           fb(max(mine + start_max)))
            # Distinct values, so the multiset check is meaningful.
            ys = [fb(i + 0.5) for i in range(n)]
            m2 = [fb(-1.0), fb(-2.0)]
            res = K.run(kf, "fxchg_%s" % t, "8",
                        {"m": K.Buf(t, m2), "x": K.Buf(t, ys), "old": K.Buf(t, [0] * n)},
                        ["m", "old"], extra=extra, may_fail=chk)
            if res is not None:
                for s in range(2):
                    seen = sorted([res["old"][i] for i in range(n) if i % 2 == s] + [res["m"][s]])
                    want = sorted([ys[i] for i in range(n) if i % 2 == s] + [m2[s]])
                    chk.ok("atomic_exchange slot %d" % s, seen == want,
                           "old values and the final one are not the values written")
            res = K.run(kf, "fcas_%s" % t, "8", {"m": K.Buf(t, [fb(-100.0)]), "x": K.Buf(t, xs)},
                        ["m"], extra=extra, may_fail=chk)
            if res is not None:
                chk.eq("atomic_cas maximum", res["m"][0], fb(max(fv(x) for x in xs)))
            res = K.run(kf, "fstoreload_%s" % t, "8",
                        {"m": K.Buf(t, [0] * n), "x": K.Buf(t, xs), "back": K.Buf(t, [0] * n)},
                        ["m", "back"], extra=extra, may_fail=chk)
            if res is not None:
                for i in range(n):
                    chk.eq("atomic_store %d" % i, res["m"][i], xs[i])
                    chk.eq("atomic_load %d" % i, res["back"][i], xs[i])
            res = K.run(kf, "fshared_%s" % t, "8", {"x": K.Buf(t, xs), "r": K.Buf(t, [0] * 32)},
                        ["r"], extra=extra, may_fail=chk)
            if res is not None:
                for c in range(8):
                    mine = [fv(xs[c * 64 + u]) for u in range(64)]
                    got = res["r"][c * 4:c * 4 + 4]
                    chk.eq("shared atomic_add cube %d" % c, got[0], fb(sum(mine)))
                    chk.eq("shared atomic_sub cube %d" % c, got[1], fb(-sum(mine)))
                    chk.eq("shared atomic_min cube %d" % c, got[2], fb(min(mine)))
                    chk.eq("shared atomic_max cube %d" % c, got[3], fb(max(mine)))

    # sync_plane.
    with open("syncplane.kiln", "w") as f:
        f.write(SYNC_PLANE)
    K.roundtrip("syncplane.kiln")
    for variant, extra in variants:
        chk.prefix = "[%s] " % variant
        res = K.run("syncplane.kiln", "syncplane", "3", {"r": K.Buf("u32", [0] * 240)}, ["r"],
                    extra=extra, may_fail=chk)
        if res is None:
            continue
        for plane in planes_of(3):
            units = list(plane)
            for k, u in enumerate(units):
                # The next lane of a full plane of 32 (wrapping); in the
                # partial plane of 16, lanes 16..31 do not exist: the last
                # unit reads its plane's first.
                nxt = (k + 1) % PLANE
                src = units[nxt] if nxt < len(units) else units[0]
                chk.eq("sync_plane unit %d" % u, res["r"][u], K.wrap(src * 3, "u32"))
    check_line_sums(chk, variants)
    check_splats(chk, variants)
    check_powi(chk, variants)
    chk.report()


if __name__ == "__main__":
    main()
