# Atomics on lines, one atomic per lane (docs/LangRef.md §12.3), through kiln-run.
"""Usage: lineatomics.py WORKDIR

Writes the kernels (one per element type and width), runs each with kiln-run
in the bounds-checked default variant and with --no-bounds-check, and checks
every lane against references computed here:

- cubecl's kernel_atomic_numeric / kernel_atomic_int ported: one unit applies
  atomic_load, atomic_store, atomic_exchange, atomic_add, atomic_sub,
  atomic_min, atomic_max (and atomic_and/or/xor on integers) to lines of 1,
  2, 3, 4, 8 and 16 lanes, each lane with its own values; the memory and the
  returned old line are checked lane by lane;
- contention: 4 cubes of 64 units add, exchange and take the maximum of lines
  on 3 slots of a buffer; per lane, the final value is the sum (resp. the
  maximum, one of the exchanged values) and the old values returned chain
  (each old value is the one before it plus that unit's addend) or, for
  atomic_exchange, with the final value are a permutation of the initial and
  exchanged values;
- shared memory: the same adds and maxima on a shared line inside each cube;
- the checked variant only: a line atomic at an index past the buffer is
  dropped and returns a line of zeros.
"""

import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

TYPES = ["i32", "u32", "i64", "u64", "f32", "f64"]
WIDTHS = {"i32": [1, 2, 4, 16], "u32": [3, 4, 8], "i64": [2, 4], "u64": [1, 3],
          "f32": [1, 2, 3, 4, 8], "f64": [2, 4]}
NUMERIC = ["atomic_load", "atomic_store", "atomic_exchange", "atomic_add", "atomic_sub",
           "atomic_min", "atomic_max"]
BITWISE = ["atomic_and", "atomic_or", "atomic_xor"]


def vt(n, t):
    return "vec<%d x %s>" % (n, t)


def ops_of(t):
    return NUMERIC + ([] if K.is_float(t) else BITWISE)


def single_kernel(t, n):
    """One unit: op k on slot k of %a with operand line %x[k]; old line to %old[k]."""
    v = vt(n, t)
    lines = ["kernel @single_%s_%d cube_dim(1) (%%a: buffer<%s, read_write>, "
             "%%x: buffer<%s, read>, %%old: buffer<%s, write>) {" % (t, n, v, v, v)]
    for k, op in enumerate(ops_of(t)):
        lines.append("  %%x%d = load %%x[%d] : %s" % (k, k, v))
        if op == "atomic_load":
            lines.append("  %%o%d = atomic_load %%a[%d] : %s" % (k, k, v))
        elif op == "atomic_store":
            lines.append("  atomic_store %%a[%d], %%x%d" % (k, k))
            continue
        else:
            lines.append("  %%o%d = %s %%a[%d], %%x%d : %s" % (k, op, k, k, v))
        lines.append("  store %%old[%d], %%o%d" % (k, k))
    lines.append("}")
    return "\n".join(lines) + "\n"


def contention_kernel(t, n, op):
    v = vt(n, t)
    return """kernel @%s_%s_%d cube_dim(64) (%%a: buffer<%s, read_write>, %%x: buffer<%s, read>,
    %%old: buffer<%s, write>, %%slots: u32) {
  %%g = absolute_pos : u32
  %%s = rem %%g, %%slots : u32
  %%v = load %%x[%%g] : %s
  %%o = %s %%a[%%s], %%v : %s
  store %%old[%%g], %%o
}
""" % (op, t, n, v, v, v, v, op, v)


def shared_kernel(t, n):
    v = vt(n, t)
    zero = "0.0" if K.is_float(t) else "0"
    low = "-1000.0" if K.is_float(t) else ("0" if t.startswith("u") else "-1000")
    return """kernel @shared_%s_%d cube_dim(64) (%%x: buffer<%s, read>, %%out: buffer<%s, write>,
    %%olds: buffer<%s, write>) {
  %%u = unit_pos : u32
  %%g = absolute_pos : u32
  %%c = cube_pos : u32
  %%sh = shared %s[2]
  %%first = eq %%u, 0:u32 : bool
  if %%first {
    %%z = splat %s:%s : %s
    store %%sh[0], %%z
    %%lo = splat %s:%s : %s
    store %%sh[1], %%lo
  }
  sync_cube
  %%v = load %%x[%%g] : %s
  %%o = atomic_add %%sh[0], %%v : %s
  %%m = atomic_max %%sh[1], %%v : %s
  store %%olds[%%g], %%o
  sync_cube
  if %%first {
    %%c2 = mul %%c, 2:u32 : u32
    %%c21 = add %%c2, 1:u32 : u32
    %%r0 = load %%sh[0] : %s
    store %%out[%%c2], %%r0
    %%r1 = load %%sh[1] : %s
    store %%out[%%c21], %%r1
  }
}
""" % (t, n, v, v, v, v, zero, t, v, low, t, v, v, v, v, v, v)


OOB_KERNEL = """kernel @oob cube_dim(1) (%a: buffer<vec<4 x u32>, read_write>, %old: buffer<vec<4 x u32>, write>) {
  %n = len %a : u32
  %v = const [1, 2, 3, 4] : vec<4 x u32>
  %o = atomic_add %a[%n], %v : vec<4 x u32>
  store %old[0], %o
  %p = atomic_load %a[4294967295:u32] : vec<4 x u32>
  store %old[1], %p
  %q = atomic_exchange %a[-1:i32], %v : vec<4 x u32>
  store %old[2], %q
  atomic_store %a[%n], %v
}
"""

CONTENTION = [("u32", 4), ("i64", 3), ("f32", 8), ("u64", 2), ("f64", 4), ("i32", 16)]
SHARED = [("u32", 4), ("f32", 3), ("i64", 2)]


# ---------------------------------------------------------------------------
# References

def value(b, t):
    """The exact value of an element (Fraction for floats, int for integers)."""
    return K.bits_to_fraction(b, t) if K.is_float(t) else b


def to_elem(x, t):
    return K.round_to_bits(x, t) if K.is_float(t) else K.wrap(x, t)


def apply(op, t, old, x):
    """The new value of a lane after op with operand x (bit patterns for floats)."""
    if op in ("atomic_store", "atomic_exchange"):
        return x
    if op == "atomic_load":
        return old
    if K.is_float(t):
        if op in ("atomic_min", "atomic_max"):
            if K.bits_is_nan(old, t):
                return x
            if K.bits_is_nan(x, t):
                return old
            a, b = value(old, t), value(x, t)
            return x if (b < a if op == "atomic_min" else b > a) else old
        a, b = value(old, t), value(x, t)
        return K.round_to_bits(a + b if op == "atomic_add" else a - b, t)
    return to_elem({"atomic_add": old + x, "atomic_sub": old - x, "atomic_min": min(old, x),
                    "atomic_max": max(old, x), "atomic_and": old & x, "atomic_or": old | x,
                    "atomic_xor": old ^ x}[op], t)


def gen(rng, t, small=False):
    if K.is_float(t):
        # Dyadic values, so that sums are exact whatever the order.
        return K.round_to_bits(Fraction(int(rng.below(2001)) - 1000, 8), t)
    lo, hi = K.int_min(t), K.int_max(t)
    if small:
        return int(rng.below(1000)) + 1
    return lo + int(rng.below(hi - lo + 1))


def single(chk, rng):
    for t in TYPES:
        for n in WIDTHS[t]:
            ops = ops_of(t)
            init = [gen(rng, t) for _ in range(len(ops) * n)]
            xs = [gen(rng, t) for _ in range(len(ops) * n)]
            if K.is_float(t):
                nan = K.round_to_bits(float("nan"), t)
                init[ops.index("atomic_min") * n] = nan  # a NaN in memory is ignored
                xs[ops.index("atomic_max") * n] = nan    # a NaN given is ignored
            name = "single_%s_%d" % (t, n)
            res = K.run("lineatomics.kiln", name, "1",
                        {"a": K.Buf(vt(n, t), init, n), "x": K.Buf(vt(n, t), xs, n),
                         "old": K.Buf(vt(n, t), [0] * len(xs), n)}, ["a", "old"], may_fail=chk)
            if res is None:
                continue
            for k, op in enumerate(ops):
                for lane in range(n):
                    j = k * n + lane
                    label = "%s %s lane %d" % (name, op, lane)
                    chk.eq(label + " memory", res["a"][j], apply(op, t, init[j], xs[j]))
                    if op != "atomic_store":
                        chk.eq(label + " old", res["old"][j], init[j])


def contention(chk, rng):
    cubes, units, slots = 4, 256, 3
    for t, n in CONTENTION:
        for op in ("atomic_add", "atomic_exchange", "atomic_max"):
            init = [gen(rng, t, small=True) for _ in range(slots * n)]
            xs = [gen(rng, t, small=True) for _ in range(units * n)]
            if K.is_float(t):
                # Positive integers: every order gives the exact sum.
                init = [K.round_to_bits(1 + rng.below(100), t) for _ in init]
                xs = [K.round_to_bits(1 + rng.below(100), t) for _ in xs]
            name = "%s_%s_%d" % (op, t, n)
            res = K.run("lineatomics.kiln", name, str(cubes),
                        {"a": K.Buf(vt(n, t), init, n), "x": K.Buf(vt(n, t), xs, n),
                         "old": K.Buf(vt(n, t), [0] * len(xs), n), "slots": str(slots)},
                        ["a", "old"], may_fail=chk)
            if res is None:
                continue
            for s in range(slots):
                mine = [g for g in range(units) if g % slots == s]
                for lane in range(n):
                    label = "%s slot %d lane %d" % (name, s, lane)
                    i0 = init[s * n + lane]
                    adds = {g: xs[g * n + lane] for g in mine}
                    olds = {g: res["old"][g * n + lane] for g in mine}
                    final = res["a"][s * n + lane]
                    if op == "atomic_add":
                        total = sum(value(v, t) for v in adds.values()) + value(i0, t)
                        chk.eq(label + " sum", final, to_elem(total, t))
                        # Positive addends: the old values, sorted, chain.
                        order = sorted(mine, key=lambda g: value(olds[g], t))
                        at = value(i0, t)
                        ok = True
                        for g in order:
                            ok &= value(olds[g], t) == at
                            at = at + value(adds[g], t)
                        chk.ok(label + " old values chain", ok, "olds %r" % sorted(
                            value(o, t) for o in olds.values())[:8])
                    elif op == "atomic_exchange":
                        chk.ok(label + " permutation",
                               sorted(list(olds.values()) + [final]) ==
                               sorted(list(adds.values()) + [i0]), "final %r" % final)
                    else:
                        want = max([i0] + list(adds.values()), key=lambda b: value(b, t))
                        chk.eq(label + " max", final, want)
                        chk.ok(label + " old values", all(
                            o == i0 or o in adds.values() for o in olds.values()), "")


def shared(chk, rng):
    cubes = 3
    for t, n in SHARED:
        xs = [gen(rng, t, small=True) for _ in range(64 * cubes * n)]
        if K.is_float(t):
            xs = [K.round_to_bits(1 + rng.below(100), t) for _ in xs]
        name = "shared_%s_%d" % (t, n)
        res = K.run("lineatomics.kiln", name, str(cubes),
                    {"x": K.Buf(vt(n, t), xs, n), "out": K.Buf(vt(n, t), [0] * (2 * cubes * n), n),
                     "olds": K.Buf(vt(n, t), [0] * len(xs), n)}, ["out", "olds"], may_fail=chk)
        if res is None:
            continue
        for c in range(cubes):
            for lane in range(n):
                label = "%s cube %d lane %d" % (name, c, lane)
                vals = [xs[(64 * c + u) * n + lane] for u in range(64)]
                chk.eq(label + " sum", res["out"][2 * c * n + lane],
                       to_elem(sum(value(v, t) for v in vals), t))
                chk.eq(label + " max", res["out"][(2 * c + 1) * n + lane],
                       max(vals, key=lambda b: value(b, t)))
                olds = sorted(value(res["olds"][(64 * c + u) * n + lane], t) for u in range(64))
                sums = sorted(value(o, t) + value(x, t) for o, x in
                              zip([res["olds"][(64 * c + u) * n + lane] for u in range(64)], vals))
                chk.ok(label + " old values chain", olds[0] == 0 and olds[1:] == sums[:-1], "")


def out_of_bounds(chk):
    init = list(range(1, 9))
    res = K.run("lineatomics.kiln", "oob", "1",
                {"a": K.Buf("vec<4 x u32>", init, 4), "old": K.Buf("vec<4 x u32>", [7] * 12, 4)},
                ["a", "old"], may_fail=chk)
    if res is None:
        return
    chk.eq("oob: the buffer is unchanged", res["a"], init)
    chk.eq("oob: the old lines are zeros", res["old"], [0] * 12)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    kernels = [single_kernel(t, n) for t in TYPES for n in WIDTHS[t]]
    kernels += [contention_kernel(t, n, op) for t, n in CONTENTION
                for op in ("atomic_add", "atomic_exchange", "atomic_max")]
    kernels += [shared_kernel(t, n) for t, n in SHARED]
    kernels.append(OOB_KERNEL)
    with open("lineatomics.kiln", "w") as f:
        f.write("\n".join(kernels))
    K.roundtrip("lineatomics.kiln")
    chk = K.Checker("line atomics")
    for variant in ([], ["--no-bounds-check"]):
        K.EXTRA_OPTIONS[:] = variant
        chk.prefix = "[%s] " % (variant[0] if variant else "checked")
        rng = K.Rng(31)
        single(chk, rng)
        contention(chk, rng)
        shared(chk, rng)
        if not variant:
            out_of_bounds(chk)
    chk.report()


if __name__ == "__main__":
    main()
