# Accuracy of the math operations through kiln-run against double-precision references.
"""Usage: math.py WORKDIR

f32: every math operation within 4 ulp of the double reference over many
inputs (docs/LangRef.md §5.3), sqrt correctly rounded. f64: within 4 ulp of
the platform's double functions (catches a computation done in f32). f16 and
bf16: within 1 ulp of the exact result (computed wider, rounded once).
Special values (inf, NaN, zeros, domain errors) must give the IEEE/C result.
The largest error of each operation is printed.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402


def _pow(x, y):
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf if x > 0 or float(y).is_integer() and int(y) % 2 == 0 else -math.inf
    except (ValueError, ZeroDivisionError):
        if x != 0:
            return math.nan
        # pow(+-0, y < 0): +-inf for an odd integer y, else +inf.
        odd = float(y).is_integer() and int(y) % 2 == 1
        return math.copysign(math.inf, x) if odd else math.inf


def safe(f):
    def g(*a):
        try:
            return f(*a)
        except OverflowError:
            return math.inf
        except (ValueError, ZeroDivisionError):
            return math.nan
    return g


def _log(f):
    def g(x):
        if x == 0:
            return -math.inf
        if x < 0 or math.isnan(x):
            return math.nan
        return f(x)
    return g


def _sinh(x):
    try:
        return math.sinh(x)
    except OverflowError:
        return math.copysign(math.inf, x)


UNARY = {
    # name: (reference, lo, hi, log-uniform)
    "sqrt": (safe(math.sqrt), 0.0, 1e30, True),
    "rsqrt": (safe(lambda x: math.copysign(math.inf, x) if x == 0 else 1.0 / math.sqrt(x)),
              1e-30, 1e30, True),
    "recip": (safe(lambda x: math.copysign(math.inf, x) if x == 0 else 1.0 / x), -1e30, 1e30,
              False),
    "exp": (safe(math.exp), -87.0, 88.0, False),
    "exp2": (safe(lambda x: 2.0 ** x), -126.0, 127.0, False),
    "log": (_log(math.log), 1e-30, 1e30, True),
    "log2": (_log(math.log2), 1e-30, 1e30, True),
    "log1p": (safe(lambda x: -math.inf if x == -1 else math.log1p(x)), -0.999, 1e6, False),
    "expm1": (safe(math.expm1), -20.0, 88.0, False),
    "sin": (safe(math.sin), -100.0, 100.0, False),
    "cos": (safe(math.cos), -100.0, 100.0, False),
    "tan": (safe(math.tan), -100.0, 100.0, False),
    "tanh": (safe(math.tanh), -10.0, 10.0, False),
    "sinh": (_sinh, -88.0, 88.0, False),
    "cosh": (safe(math.cosh), -88.0, 88.0, False),
    "asin": (safe(math.asin), -1.0, 1.0, False),
    "acos": (safe(math.acos), -1.0, 1.0, False),
    "atan": (safe(math.atan), -1e4, 1e4, False),
    "erf": (safe(math.erf), -5.0, 5.0, False),
}
BINARY = {
    "pow": (_pow, (1e-3, 100.0), (-10.0, 10.0)),
    "atan2": (safe(math.atan2), (-100.0, 100.0), (-100.0, 100.0)),
    "hypot": (safe(math.hypot), (-1e18, 1e18), (-1e18, 1e18)),
}
# Special inputs every unary op also gets (the reference decides the answer).
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf, math.nan, 1e-40, -2.0, 100.0]
BIN_SPECIAL = [(0.0, 0.0), (1.0, math.nan), (math.nan, 0.0), (2.0, 0.5), (-8.0, 1.0 / 3),
               (-2.0, 3.0), (0.0, -1.0), (math.inf, 1.0), (-0.0, -1.0), (1.0, math.inf),
               (-1.0, math.inf), (math.inf, math.inf), (3.0, 4.0)]
# pow(x, 0) is 1 even for NaN; pow(1, y) is 1 even for NaN (C and IEEE pow).


def ref_pow(x, y):
    if y == 0 or x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return math.nan
    return _pow(x, y)


BINARY["pow"] = (ref_pow,) + BINARY["pow"][1:]

N = {"f32": 4096, "f64": 1024, "f16": 512, "bf16": 512}
BOUND = {"f32": 4.0, "f64": 4.0, "f16": 1.0, "bf16": 1.0}


def kernel(t):
    L = ["kernel @math_%s cube_dim(64) (%%x: buffer<%s, read>, %%y: buffer<%s, read>," % (t, t, t),
         "    %%r: buffer<%s, write>, %%n: u32) {" % t,
         "  %i = absolute_pos : u32",
         "  %in = lt %i, %n : bool",
         "  if %in {"]
    for k, op in enumerate(list(UNARY) + list(BINARY)):
        L.append("    %%o%d = mul %%n, %d:u32 : u32" % (k, k))
        L.append("    %%p%d = add %%o%d, %%i : u32" % (k, k))
        L.append("    %%a%d = load %%x[%%p%d] : %s" % (k, k, t))
        if op in BINARY:
            L.append("    %%b%d = load %%y[%%p%d] : %s" % (k, k, t))
            L.append("    %%v%d = %s %%a%d, %%b%d : %s" % (k, op, k, k, t))
        else:
            L.append("    %%v%d = %s %%a%d : %s" % (k, op, k, t))
        L.append("    store %%r[%%p%d], %%v%d" % (k, k))
    L += ["  }", "}", ""]
    return "\n".join(L)


def draw(rng, lo, hi, logu):
    if logu and lo > 0:
        return math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return rng.uniform(lo, hi)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    types = ["f32", "f64", "f16", "bf16"]
    with open("math.kiln", "w") as f:
        f.write("\n".join(kernel(t) for t in types))
    K.roundtrip("math.kiln")
    chk = K.Checker("math accuracy")
    ops = list(UNARY) + list(BINARY)
    for t in types:
        n = N[t]
        rng = K.Rng(len(t) * 1000 + n)
        xs, ys = [], []
        for op in ops:
            for j in range(n):
                if op in UNARY:
                    f, lo, hi, logu = UNARY[op]
                    x = SPECIAL[j] if j < len(SPECIAL) else draw(rng, lo, hi, logu)
                    y = 0.0
                else:
                    f, (xlo, xhi), (ylo, yhi) = BINARY[op]
                    if j < len(BIN_SPECIAL):
                        x, y = BIN_SPECIAL[j]
                    else:
                        x, y = draw(rng, xlo, xhi, False), draw(rng, ylo, yhi, False)
                xs.append(K.round_to_bits(x, t))
                ys.append(K.round_to_bits(y, t))
        res = K.run("math.kiln", "math_" + t, str((n + 63) // 64),
                    {"x": K.Buf(t, xs), "y": K.Buf(t, ys), "r": K.Buf(t, [0] * len(xs)),
                     "n": str(n)}, ["r"], may_fail=chk)
        if res is None:
            continue
        r = res["r"]
        for k, op in enumerate(ops):
            worst = 0.0
            worst_at = None
            for j in range(n):
                p = k * n + j
                x = K.bits_to_float(xs[p], t)
                y = K.bits_to_float(ys[p], t)
                ref = UNARY[op][0](x) if op in UNARY else BINARY[op][0](x, y)
                err = K.ulp_error(r[p], ref, t)
                bound = 0.5 if op == "sqrt" else BOUND[t]
                if err > worst:
                    worst, worst_at = err, (x, y, K.fhex(r[p], t), ref)
                label = "%s %s(%r%s)" % (t, op, x, "" if op in UNARY else ", %r" % y)
                chk.ok(label, err <= bound, "got %s = %r, reference %r: %.2f ulp > %.1f" % (
                    K.fhex(r[p], t), K.bits_to_float(r[p], t), ref, err, bound))
            print("%-5s %-6s max %.2f ulp%s" % (t, op, worst, "" if worst_at is None else
                                                 "  at %r" % (worst_at,)))
    chk.report()


if __name__ == "__main__":
    main()
