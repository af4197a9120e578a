# Float arithmetic of f16, bf16, f32 and f64 through kiln-run, against exact IEEE references.
"""Usage: floatops.py WORKDIR

add sub mul div rem neg abs min max clamp fma sqrt floor ceil round trunc
isnan isinf and the six comparisons, on special values (signed zeros,
subnormals, the largest finite, infinities, NaN) and random values. Results
must be the correctly rounded IEEE result (round to nearest even) bit for bit;
fma is fused (one rounding); sqrt is exact; round is half to even; NaN results
may be any NaN. min/max follow IEEE minNum/maxNum (a NaN operand loses).
"""

import math
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

BIN = ["add", "sub", "mul", "div", "rem", "min", "max"]
UN = ["neg", "abs", "sqrt", "floor", "ceil", "round", "trunc"]
CMP = ["eq", "ne", "lt", "le", "gt", "ge"]


def kernel(t):
    L = ["kernel @fops_%s cube_dim(32) (%%a: buffer<%s, read>, %%b: buffer<%s, read>," % (t, t, t),
         "    %%c: buffer<%s, read>, %%r: buffer<%s, write>, %%q: buffer<bool, write>, %%n: u32) {" % (t, t),
         "  %i = absolute_pos : u32",
         "  %in = lt %i, %n : bool",
         "  if %in {",
         "    %%x = load %%a[%%i] : %s" % t,
         "    %%y = load %%b[%%i] : %s" % t,
         "    %%z = load %%c[%%i] : %s" % t]
    cnt = {"r": 0, "q": 0}

    def out(val, buf):
        k = cnt[buf]
        cnt[buf] += 1
        L.append("    %%o%s%d = mul %%n, %d:u32 : u32" % (buf, k, k))
        L.append("    %%p%s%d = add %%o%s%d, %%i : u32" % (buf, k, buf, k))
        L.append("    store %%%s[%%p%s%d], %s" % (buf, buf, k, val))

    for op in BIN:
        L.append("    %%v_%s = %s %%x, %%y : %s" % (op, op, t))
        out("%v_" + op, "r")
    for op in UN:
        L.append("    %%v_%s = %s %%x : %s" % (op, op, t))
        out("%v_" + op, "r")
    L.append("    %%v_clamp = clamp %%x, -1.5:%s, 2.0:%s : %s" % (t, t, t))
    out("%v_clamp", "r")
    for op in CMP:
        L.append("    %%v_%s = %s %%x, %%y : bool" % (op, op))
        out("%v_" + op, "q")
    for op in ["isnan", "isinf"]:
        L.append("    %%v_%s = %s %%x : bool" % (op, op))
        out("%v_" + op, "q")
    L += ["  }", "}", ""]
    # fma in a kernel of its own, so that a failure there hides nothing else.
    L += ["kernel @fma_%s cube_dim(32) (%%a: buffer<%s, read>, %%b: buffer<%s, read>," % (t, t, t),
          "    %%c: buffer<%s, read>, %%r: buffer<%s, write>) {" % (t, t),
          "  %i = absolute_pos : u32",
          "  %%x = load %%a[%%i] : %s" % t,
          "  %%y = load %%b[%%i] : %s" % t,
          "  %%z = load %%c[%%i] : %s" % t,
          "  %%f = fma %%x, %%y, %%z : %s" % t,
          "  store %r[%i], %f",
          "}", ""]
    return "\n".join(L)


def specials(t):
    total, mant, expb, bias = K.fparams(t)
    maxexp = (1 << expb) - 1
    sign = 1 << (total - 1)
    pos = [0, 1, (1 << mant) - 1, 1 << mant, (bias << mant), (bias << mant) + 1,
           ((bias + 1) << mant) | (1 << (mant - 1)),  # 3.0
           ((bias - 1) << mant),  # 0.5
           ((bias + 1) << mant) | (1 << (mant - 2)),  # 2.5
           ((maxexp - 1) << mant) | ((1 << mant) - 1),  # largest finite
           maxexp << mant,  # inf
           (maxexp << mant) | (1 << (mant - 1))]  # qNaN
    return pos + [p | sign for p in pos]


def exact(b, t):
    return K.bits_to_fraction(b, t)


def fval(b, t):
    return K.bits_to_float(b, t)


def ref_bin(op, xb, yb, t):
    """Returns a bit pattern, or 'nan', or a set of allowed patterns."""
    x, y = fval(xb, t), fval(yb, t)
    R = lambda v: K.round_to_bits(v, t)  # noqa: E731
    if op in ("min", "max"):
        if math.isnan(x) and math.isnan(y):
            return "nan"
        if math.isnan(x):
            return yb
        if math.isnan(y):
            return xb
        if x == y:  # +0/-0 may come back either way
            return {xb, yb}
        return xb if (x < y) == (op == "min") else yb
    if math.isnan(x) or math.isnan(y):
        return "nan"
    if op == "rem":
        if math.isinf(x) or y == 0:
            return "nan"
        if math.isinf(y):
            return xb
        return R(math.fmod(x, y))  # fmod is exact
    if math.isinf(x) or math.isinf(y):
        try:
            v = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y if y != 0 else
                 math.copysign(math.inf, x) * math.copysign(1.0, y)}[op]
        except (ZeroDivisionError, ValueError):
            return "nan"
        return "nan" if math.isnan(v) else R(v)
    fx, fy = exact(xb, t), exact(yb, t)
    if op == "div" and y == 0:
        if x == 0:
            return "nan"
        return R(math.copysign(math.inf, x) * math.copysign(1.0, y))
    v = {"add": lambda: fx + fy, "sub": lambda: fx - fy, "mul": lambda: fx * fy,
         "div": lambda: fx / fy}[op]()
    if v == 0:
        # Sign of an exact zero: IEEE rules for round to nearest.
        if op == "add":
            neg = math.copysign(1, x) < 0 and math.copysign(1, y) < 0
        elif op == "sub":
            neg = math.copysign(1, x) < 0 and math.copysign(1, y) > 0
        else:
            neg = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
        return R(-0.0 if neg else 0.0)
    if op in ("mul", "div"):
        # A product or quotient that underflows to zero keeps its sign.
        b = R(v)
        return b
    return R(v)


def keep_sign_zero(v, x):
    return math.copysign(0.0, x) if v == 0 else float(v)


def ref_un(op, xb, t):
    x = fval(xb, t)
    total = K.fparams(t)[0]
    sign = 1 << (total - 1)
    R = lambda v: K.round_to_bits(v, t)  # noqa: E731
    if op == "neg":
        return xb ^ sign if not math.isnan(x) else "nan"
    if op == "abs":
        return xb & ~sign if not math.isnan(x) else "nan"
    if math.isnan(x):
        return "nan"
    if op == "sqrt":
        if x < 0:
            return "nan"
        if math.isinf(x) or x == 0:
            return xb
        # Exact: the largest/smallest representable around the real root.
        fr = exact(xb, t)
        cand = R(math.sqrt(x))
        # Check by exact squares so that double rounding cannot hide an error.
        lo, hi = cand - 1, cand + 1
        best = min((c for c in (lo, cand, hi)),
                   key=lambda c: abs(exact(c, t) ** 2 - fr) if exact(c, t) is not None
                   else Fraction(10) ** 400)
        return best
    if math.isinf(x):
        return xb
    if op == "floor":
        return R(keep_sign_zero(math.floor(x), x))
    if op == "ceil":
        return R(keep_sign_zero(math.ceil(x), x))
    if op == "trunc":
        return R(keep_sign_zero(math.trunc(x), x))
    if op == "round":
        return R(keep_sign_zero(round(x), x))
    raise KeyError(op)


def ref_fma(xb, yb, zb, t):
    x, y, z = fval(xb, t), fval(yb, t), fval(zb, t)
    if any(math.isnan(v) for v in (x, y, z)):
        return "nan"
    if any(math.isinf(v) for v in (x, y, z)):
        try:
            p = x * y
            v = p + z
        except (ValueError, OverflowError):
            return "nan"
        return "nan" if math.isnan(v) else K.round_to_bits(v, t)
    v = exact(xb, t) * exact(yb, t) + exact(zb, t)
    if v == 0:
        pneg = (math.copysign(1, x) < 0) != (math.copysign(1, y) < 0)
        zneg = math.copysign(1, z) < 0
        if exact(xb, t) * exact(yb, t) == 0:
            neg = pneg and zneg
        else:
            neg = False
        return K.round_to_bits(-0.0 if neg else 0.0, t)
    return K.round_to_bits(v, t)


def ref_cmp(op, xb, yb, t):
    x, y = fval(xb, t), fval(yb, t)
    if math.isnan(x) or math.isnan(y):
        return op == "ne"
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]


def match(got, want, t):
    if want == "nan":
        return K.bits_is_nan(got, t)
    if isinstance(want, set):
        return got in want
    return got == want


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    types = ["f16", "bf16", "f32", "f64"]
    with open("floatops.kiln", "w") as f:
        f.write("\n".join(kernel(t) for t in types))
    K.roundtrip("floatops.kiln")
    chk = K.Checker("float operations")
    for t in types:
        total, mant, expb, bias = K.fparams(t)
        sp = specials(t)
        xs, ys, zs = [], [], []
        rng = K.Rng(total + mant)
        for x in sp:
            for y in sp:
                xs.append(x)
                ys.append(y)
                zs.append(sp[rng.below(len(sp))])
        for _ in range(600):
            # Random finite values around 1 and anywhere.
            mode = rng.below(3)
            if mode == 0:
                v = [K.round_to_bits(rng.uniform(-8, 8), t) for _ in range(3)]
            elif mode == 1:
                v = [rng.u64() & ((1 << total) - 1) for _ in range(3)]
            else:
                a = rng.uniform(-4, 4)
                v = [K.round_to_bits(a, t), K.round_to_bits(rng.uniform(-4, 4), t),
                     K.round_to_bits(-a * 3, t)]
            xs.append(v[0])
            ys.append(v[1])
            zs.append(v[2])
        n = len(xs)
        res = K.run("floatops.kiln", "fops_" + t, str((n + 31) // 32),
                    {"a": K.Buf(t, xs), "b": K.Buf(t, ys), "c": K.Buf(t, zs),
                     "r": K.Buf(t, [0] * (n * 15)), "q": K.Buf("bool", [0] * (n * 8)),
                     "n": str(n)}, ["r", "q"])
        r, q = res["r"], res["q"]
        fres = K.run("floatops.kiln", "fma_" + t, str((n + 31) // 32),
                     {"a": K.Buf(t, xs), "b": K.Buf(t, ys), "c": K.Buf(t, zs),
                      "r": K.Buf(t, [0] * n)}, ["r"], may_fail=chk)
        H = lambda b: K.fhex(b, t)  # noqa: E731
        for i in range(n):
            x, y, z = xs[i], ys[i], zs[i]
            k = 0
            for op in BIN:
                w = ref_bin(op, x, y, t)
                chk.ok("%s %s(%s, %s)" % (t, op, H(x), H(y)), match(r[k * n + i], w, t),
                       "got %s, expected %s" % (H(r[k * n + i]), w if isinstance(w, str) else
                                                [H(v) for v in w] if isinstance(w, set) else H(w)))
                k += 1
            for op in UN:
                w = ref_un(op, x, t)
                chk.ok("%s %s(%s)" % (t, op, H(x)), match(r[k * n + i], w, t),
                       "got %s, expected %s" % (H(r[k * n + i]), w if isinstance(w, str) else H(w)))
                k += 1
            if fres:
                w = ref_fma(x, y, z, t)
                got = fres["r"][i]
                chk.ok("%s fma(%s, %s, %s)" % (t, H(x), H(y), H(z)), match(got, w, t),
                       "got %s, expected %s" % (H(got), w if isinstance(w, str) else H(w)))
            lo, hi = K.round_to_bits(-1.5, t), K.round_to_bits(2.0, t)
            m = ref_bin("max", x, lo, t)
            m = next(iter(m)) if isinstance(m, set) else m
            w = ref_bin("min", m, hi, t)
            chk.ok("%s clamp(%s, -1.5, 2)" % (t, H(x)), match(r[k * n + i], w, t),
                   "got %s, expected %s" % (H(r[k * n + i]), w if isinstance(w, (str, set)) else H(w)))
            for j, op in enumerate(CMP):
                chk.eq("%s %s(%s, %s)" % (t, op, H(x), H(y)), q[j * n + i], int(ref_cmp(op, x, y, t)))
            fx = fval(x, t)
            chk.eq("%s isnan(%s)" % (t, H(x)), q[6 * n + i], int(math.isnan(fx)))
            chk.eq("%s isinf(%s)" % (t, H(x)), q[7 * n + i], int(math.isinf(fx)))
    chk.report()


if __name__ == "__main__":
    main()
