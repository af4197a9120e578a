# Operations on lines of every width (1, 2, 3, 4, 8, 16 lanes) through kiln-run, lane by lane.
"""Usage: lineops.py WORKDIR

docs/LangRef.md §3.1: every arithmetic, math, comparison, cast and select operation
works lane by lane on lines. Each case below loads lines from two or three
buffers of `vec<N x T>`, applies one operation and stores the line; every
lane is checked with the scalar references of intops.py, floatops.py,
casts.py and mathacc.py (math within 4 ulp for f32, else exact). Bool lines
go through and/or/xor/not and select.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import casts  # noqa: E402
import floatops  # noqa: E402
import intops  # noqa: E402
import kconf as K  # noqa: E402
import mathacc  # noqa: E402

# (lanes, element type, op, arity, result element type)
CASES = [
    (8, "f32", "add", 2, None), (8, "f32", "mul", 2, None), (8, "f32", "div", 2, None),
    (8, "f32", "fma", 3, None), (8, "f32", "sqrt", 1, None), (8, "f32", "exp", 1, None),
    (8, "f32", "log", 1, None), (8, "f32", "sin", 1, None), (8, "f32", "tanh", 1, None),
    (8, "f32", "pow", 2, None), (8, "f32", "min", 2, None), (8, "f32", "floor", 1, None),
    (16, "f32", "cos", 1, None), (16, "f32", "erf", 1, None), (4, "f32", "atan2", 2, None),
    (1, "f32", "add", 2, None), (3, "f32", "exp2", 1, None),
    (2, "f64", "div", 2, None), (2, "f64", "sqrt", 1, None), (2, "f64", "hypot", 2, None),
    (4, "f64", "log1p", 1, None), (8, "f16", "mul", 2, None), (8, "f16", "sqrt", 1, None),
    (16, "u8", "add", 2, None), (16, "u8", "shr", 2, None), (16, "u8", "popcount", 1, None),
    (16, "i8", "div", 2, None), (16, "i8", "mulhi", 2, None), (8, "i32", "rem", 2, None),
    (8, "i32", "shl", 2, None), (8, "i32", "clz", 1, None), (4, "i64", "mul", 2, None),
    (4, "u64", "max", 2, None), (2, "u16", "reverse_bits", 1, None),
    (3, "i16", "abs", 1, None), (8, "i32", "clamp", 3, None),
    (8, "f32", "cast", 1, "i32"), (8, "i32", "cast", 1, "f32"), (16, "u8", "cast", 1, "f16"),
    (4, "f64", "cast", 1, "u16"), (8, "f32", "lt", 2, "bool"), (4, "f32", "ne", 2, "bool"),
    (16, "i8", "ge", 2, "bool"), (8, "f32", "isnan", 1, "bool"),
    (8, "f32", "select", 3, None), (16, "u8", "select", 3, None),
    (4, "bool", "and", 2, None), (4, "bool", "or", 2, None), (8, "bool", "xor", 2, None),
    (16, "bool", "not", 1, None),
]


def vt(n, t):
    return "vec<%d x %s>" % (n, t)


def kernel(idx, n, t, op, arity, rt):
    T = vt(n, t)
    R = vt(n, rt or t)
    L = ["kernel @case%d cube_dim(16) (%%a: buffer<%s, read>, %%b: buffer<%s, read>," % (idx, T, T),
         "    %%c: buffer<%s, read>, %%r: buffer<%s, write>) {" % (T, R),
         "  %i = absolute_pos : u32",
         "  %%x = load %%a[%%i] : %s" % T,
         "  %%y = load %%b[%%i] : %s" % T,
         "  %%z = load %%c[%%i] : %s" % T]
    if op == "select":
        L.append("  %%m = lt %%x, %%y : %s" % vt(n, "bool"))
        L.append("  %%v = select %%m, %%y, %%z : %s" % R)
    elif op == "cast":
        L.append("  %%v = cast %%x : %s" % R)
    else:
        ops = ["%x", "%y", "%z"][:arity]
        L.append("  %%v = %s %s : %s" % (op, ", ".join(ops), R))
    L += ["  store %r[%i], %v", "}", ""]
    return "\n".join(L)


def gen(rng, t, op):
    if t == "bool":
        return rng.below(2)
    if K.is_int(t):
        if op in ("div", "rem", "mulhi") and rng.below(4) == 0:
            return rng.below(3) - 1 if K.signed(t) else rng.below(2)
        if rng.below(6) == 0:
            e = intops.edges(t)  # MIN, MAX, shift amounts >= width, ...
            return e[rng.below(len(e))]
        return K.wrap(rng.u64() >> rng.below(64), t)
    if op in mathacc.UNARY:
        f, lo, hi, logu = mathacc.UNARY[op]
        if t == "f16":
            lo, hi = max(lo, -60000.0), min(hi, 60000.0)
        return K.round_to_bits(mathacc.draw(rng, lo, hi, logu), t)
    if op in mathacc.BINARY:
        return None  # drawn in pairs below
    if rng.below(10) == 0:
        return floatops.specials(t)[rng.below(len(floatops.specials(t)))]
    return K.round_to_bits(rng.uniform(-100, 100), t)


def check_lane(chk, label, t, rt, op, x, y, z, got):
    if op == "select":
        xv = K.bits_to_float(x, t) if K.is_float(t) else x
        yv = K.bits_to_float(y, t) if K.is_float(t) else y
        chk.eq(label, got, y if xv < yv else z)
        return
    if op == "cast":
        want = casts.ref_cast(casts.value_of(x, t), rt)
        chk.ok(label, K.bits_is_nan(got, rt) if want == "nan" else got == want,
               "got %r, expected %r" % (got, want))
        return
    if t == "bool":
        want = {"and": x & y, "or": x | y, "xor": x ^ y, "not": 1 - x}[op]
        chk.eq(label, got, want)
        return
    if rt == "bool":
        if op == "isnan":
            want = int(math.isnan(K.bits_to_float(x, t)))
        elif K.is_int(t):
            want = int(intops.ref_cmp(op, x, y))
        else:
            want = int(floatops.ref_cmp(op, x, y, t))
        chk.eq(label, got, want)
        return
    if K.is_int(t):
        if op in intops.BIN:
            want = intops.ref_bin(op, x, y, t)
        elif op == "clamp":
            want = min(max(x, min(y, z)), max(y, z))
        else:
            want = K.wrap(intops.ref_un(op, x, t), t)
        chk.eq(label, got, want)
        return
    if op in mathacc.UNARY or op in mathacc.BINARY:
        xv, yv = K.bits_to_float(x, t), K.bits_to_float(y, t)
        ref = mathacc.UNARY[op][0](xv) if op in mathacc.UNARY else mathacc.BINARY[op][0](xv, yv)
        bound = 0.5 if op == "sqrt" else (4.0 if t in ("f32", "f64") else 1.0)
        err = K.ulp_error(got, ref, t)
        chk.ok(label, err <= bound, "got %s, reference %r: %.2f ulp" % (K.fhex(got, t), ref, err))
        return
    if op == "fma":
        want = floatops.ref_fma(x, y, z, t)
    elif op in floatops.BIN:
        want = floatops.ref_bin(op, x, y, t)
    else:
        want = floatops.ref_un(op, x, t)
    chk.ok(label, floatops.match(got, want, t), "got %s, expected %s" % (
        K.fhex(got, t), want if isinstance(want, (str, set)) else K.fhex(want, t)))


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    with open("lineops.kiln", "w") as f:
        f.write("\n".join(kernel(i, *c) for i, c in enumerate(CASES)))
    K.roundtrip("lineops.kiln")
    chk = K.Checker("line operations")
    rng = K.Rng(11)
    count = 32
    for idx, (n, t, op, arity, rt) in enumerate(CASES):
        xs, ys, zs = [], [], []
        for _ in range(count * n):
            if K.is_float(t) and op in mathacc.BINARY:
                f, (xlo, xhi), (ylo, yhi) = mathacc.BINARY[op]
                xs.append(K.round_to_bits(rng.uniform(xlo, xhi), t))
                ys.append(K.round_to_bits(rng.uniform(ylo, yhi), t))
            else:
                xs.append(gen(rng, t, op))
                ys.append(gen(rng, t, op))
            zs.append(gen(rng, t, op) if op not in mathacc.BINARY or not K.is_float(t) else 0)
            if op == "clamp" and ys[-1] > zs[-1]:
                ys[-1], zs[-1] = zs[-1], ys[-1]  # the contract's clamp has lo <= hi
        r = rt or t
        res = K.run("lineops.kiln", "case%d" % idx, str(count // 16), {
            "a": K.Buf(vt(n, t), xs, n), "b": K.Buf(vt(n, t), ys, n), "c": K.Buf(vt(n, t), zs, n),
            "r": K.Buf(vt(n, r), [0] * (count * n), n)}, ["r"], may_fail=chk)
        if res is None:
            continue
        for j in range(count * n):
            check_lane(chk, "%s %s lane %d of element %d" % (vt(n, t), op, j % n, j // n), t, r,
                       op, xs[j], ys[j], zs[j], res["r"][j])
    chk.report()


if __name__ == "__main__":
    main()
