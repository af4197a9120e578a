# asinh, acosh, atanh, rhypot, add_sat, sub_sat and find_first_set through kiln-run.
"""Usage: smallops.py WORKDIR

docs/LangRef.md §5.3 for these operations, on scalars and lines,
each kernel run in the bounds-checked and in the unchecked variant:
- asinh, acosh, atanh and rhypot against Python's math module: f32 and f64
  within 4 ulp, f16 and bf16 within 1 ulp of the exact result; acosh(x < 1)
  and atanh(|x| > 1) are NaN, atanh(+-1) is +-inf, rhypot(0, 0) is +inf.
- add_sat and sub_sat against exact integer arithmetic clamped to the type
  (both ends of i8/u8/i16/u16/i32/u32/i64/u64).
- find_first_set: 1 + the index of the lowest set bit, 0 for 0, as the type
  or as u32.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

INF, NAN = math.inf, math.nan


def r_asinh(x):
    return x if math.isinf(x) or math.isnan(x) else math.asinh(x)


def r_acosh(x):
    if math.isnan(x) or x < 1:
        return NAN
    return INF if math.isinf(x) else math.acosh(x)


def r_atanh(x):
    if math.isnan(x) or abs(x) > 1:
        return NAN
    if abs(x) == 1:
        return math.copysign(INF, x)
    return math.atanh(x)


def r_rhypot(x, y):
    h = math.hypot(x, y)  # hypot(+-inf, NaN) = inf, as in C
    if math.isnan(h):
        return NAN
    return INF if h == 0 else 1.0 / h


FLOAT_UN = {
    # name: (reference, lo, hi)
    "asinh": (r_asinh, -1e3, 1e3),
    "acosh": (r_acosh, 1.0, 1e4),
    "atanh": (r_atanh, -1.0, 1.0),
}
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, INF, -INF, NAN, 2.0, -2.0, 0.999, -0.999, 1e-5,
           -1e-5, 100.0, 1.0009765625, 1.5, 60000.0, -60000.0, 1e-30]
BIN_SPECIAL = [(0.0, 0.0), (-0.0, 0.0), (3.0, 4.0), (-3.0, 4.0), (INF, NAN), (NAN, -INF),
               (NAN, 1.0), (1.0, NAN), (INF, 1.0), (0.0, -INF), (1.0, 0.0), (0.5, 0.5),
               (1e-20, 1e-20)]
BOUND = {"f32": 4.0, "f64": 4.0, "f16": 1.0, "bf16": 1.0}

INT_TYPES = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"]

# (lanes, element type, op, result element type or None); lanes 0 is a scalar.
CASES = []
for _t in ["f32", "f64", "f16", "bf16"]:
    CASES += [(0, _t, op, None) for op in list(FLOAT_UN) + ["rhypot"]]
CASES += [(4, "f32", "asinh", None), (8, "f32", "acosh", None), (4, "f32", "atanh", None),
          (2, "f64", "atanh", None), (2, "f64", "acosh", None), (8, "f16", "asinh", None),
          (8, "bf16", "atanh", None), (4, "f32", "rhypot", None), (2, "f64", "rhypot", None)]
for _t in INT_TYPES:
    CASES += [(0, _t, "add_sat", None), (0, _t, "sub_sat", None),
              (0, _t, "find_first_set", None), (0, _t, "find_first_set", "u32")]
CASES += [(16, "u8", "add_sat", None), (16, "i8", "sub_sat", None),
          (8, "i32", "add_sat", None), (8, "u32", "sub_sat", None),
          (2, "i64", "sub_sat", None), (4, "u64", "add_sat", None),
          (8, "i16", "find_first_set", None), (4, "u64", "find_first_set", "u32")]


def ty(lanes, t):
    return t if lanes == 0 else "vec<%d x %s>" % (lanes, t)


def kernel(idx, lanes, t, op, rt):
    T, R = ty(lanes, t), ty(lanes, rt or t)
    binary = op in ("add_sat", "sub_sat", "rhypot")
    L = ["kernel @case%d cube_dim(16) (%%a: buffer<%s, read>, %%b: buffer<%s, read>," % (
        idx, T, T), "    %%r: buffer<%s, write>) {" % R,
         "  %i = absolute_pos : u32",
         "  %%x = load %%a[%%i] : %s" % T,
         "  %%y = load %%b[%%i] : %s" % T,
         "  %%v = %s %s : %s" % (op, "%x, %y" if binary else "%x", R),
         "  store %r[%i], %v", "}", ""]
    return "\n".join(L)


def int_edges(t):
    lo, hi = K.int_min(t), K.int_max(t)
    e = [lo, lo + 1, lo + 2, 0, 1, 2, hi - 1, hi, hi // 2, hi // 2 + 1]
    if K.signed(t):
        e += [-1, -2, lo // 2, lo // 2 - 1]
    return sorted(set(e))


def inputs(rng, t, op):
    """Pairs (x, y): bit patterns for floats, integer values for integers."""
    if op in ("add_sat", "sub_sat"):
        e = int_edges(t)
        pairs = [(x, y) for x in e for y in e]
        for _ in range(256):
            x = K.wrap(rng.u64() >> rng.below(64), t)
            y = K.wrap(rng.u64() >> rng.below(64), t)
            pairs.append((x, y))
        return pairs
    if op == "find_first_set":
        w = K.width(t)
        vals = int_edges(t) + [K.wrap(1 << k, t) for k in range(w)]
        vals += [K.wrap((rng.u64() >> rng.below(64)) << rng.below(w), t) for _ in range(128)]
        return [(v, 0) for v in vals]
    fb = lambda v: K.round_to_bits(v, t)  # noqa: E731
    if op == "rhypot":
        pairs = [(fb(x), fb(y)) for x, y in BIN_SPECIAL]
        pairs += [(fb(rng.uniform(-1000, 1000)), fb(rng.uniform(-1000, 1000)))
                  for _ in range(400)]
        return pairs
    f, lo, hi = FLOAT_UN[op]
    xs = [fb(x) for x in SPECIAL] + [fb(rng.uniform(lo, hi)) for _ in range(400)]
    # Near the ends of the domain: 1 for acosh, +-1 for atanh, 0 for asinh.
    xs += [fb(lo + (hi - lo) * 1e-3 * rng.uniform(0, 1)) for _ in range(32)]
    return [(x, fb(0.0)) for x in xs]


def ref_int(op, x, y, t, rt):
    if op == "find_first_set":
        return 0 if x == 0 else (K.wrap(x, "u64") & -K.wrap(x, "u64")).bit_length()
    v = x + y if op == "add_sat" else x - y
    return max(K.int_min(t), min(K.int_max(t), v))


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    with open("small.kiln", "w") as f:
        f.write("\n".join(kernel(i, *c) for i, c in enumerate(CASES)))
    K.roundtrip("small.kiln")
    chk = K.Checker("small ops")
    for idx, (lanes, t, op, rt) in enumerate(CASES):
        rng = K.Rng(idx * 7919 + 11)
        pairs = inputs(rng, t, op)
        per = max(lanes, 1)
        while len(pairs) % (16 * per):  # whole cubes of 16 units
            pairs.append(pairs[len(pairs) % 7])
        xs = [p[0] for p in pairs]
        ys = [p[1] for p in pairs]
        T, R = ty(lanes, t), ty(lanes, rt or t)
        cubes = str(len(pairs) // (16 * per))
        for variant, extra in (("checked", []), ("unchecked", ["--no-bounds-check"])):
            chk.prefix = "[%s] " % variant
            res = K.run("small.kiln", "case%d" % idx, cubes,
                        {"a": K.Buf(T, xs, per), "b": K.Buf(T, ys, per),
                         "r": K.Buf(R, [0] * len(xs), per)}, ["r"], extra=extra,
                        may_fail=chk)
            if res is None:
                continue
            r = res["r"]
            worst = 0.0
            for j, (x, y) in enumerate(pairs):
                label = "case%d %s %s" % (idx, op, T)
                if K.is_int(t):
                    want = K.wrap(ref_int(op, x, y, t, rt), rt or t)
                    chk.eq("%s(%r, %r)" % (label, x, y) if op != "find_first_set"
                           else "%s(%r)" % (label, x), r[j], want)
                    continue
                xv, yv = K.bits_to_float(x, t), K.bits_to_float(y, t)
                ref = r_rhypot(xv, yv) if op == "rhypot" else FLOAT_UN[op][0](xv)
                err = K.ulp_error(r[j], ref, t)
                worst = max(worst, err)
                chk.ok("%s(%r%s)" % (label, xv, ", %r" % yv if op == "rhypot" else ""),
                       err <= BOUND[t], "got %s = %r, reference %r: %.2f ulp > %.1f" % (
                           K.fhex(r[j], t), K.bits_to_float(r[j], t), ref, err, BOUND[t]))
            if K.is_float(t) and variant == "checked":
                print("%-16s %-7s max %.2f ulp" % (T, op, worst))
    chk.report()


if __name__ == "__main__":
    main()
