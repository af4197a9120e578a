# Integer operations of every width through kiln-run, against docs/LangRef.md §5.3.
"""Usage: intops.py WORKDIR

For each of i8 i16 i32 i64 u8 u16 u32 u64 a kernel applies every integer
operation to (edge value x edge value) pairs and random pairs; results are
compared exactly with the contract: wrap-around arithmetic, div/rem by zero
give 0, INT_MIN / -1 = INT_MIN, INT_MIN rem -1 = 0, shift amounts modulo the
width, shr arithmetic on signed and logical on unsigned types, mulhi the high
half of the double-width product, clz/ctz of 0 the width.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

BIN = ["add", "sub", "mul", "div", "rem", "min", "max", "mulhi", "band", "bor", "bxor", "shl",
       "shr"]
UN = ["neg", "abs", "bnot", "popcount", "clz", "ctz", "reverse_bits"]
CMP = ["eq", "ne", "lt", "le", "gt", "ge"]


def kernel(t):
    lines = ["kernel @ops_%s cube_dim(64) (%%a: buffer<%s, read>, %%b: buffer<%s, read>," % (t, t, t),
             "    %%c: buffer<%s, read>, %%r: buffer<%s, write>, %%q: buffer<bool, write>, %%n: u32) {" % (t, t),
             "  %i = absolute_pos : u32",
             "  %in = lt %i, %n : bool",
             "  if %in {",
             "    %%x = load %%a[%%i] : %s" % t,
             "    %%y = load %%b[%%i] : %s" % t,
             "    %%z = load %%c[%%i] : %s" % t]
    k = 0

    def out(val, buf="r"):
        nonlocal k
        lines.append("    %%o%d = mul %%n, %d:u32 : u32" % (k, k if buf == "r" else k - 100))
        lines.append("    %%p%d = add %%o%d, %%i : u32" % (k, k))
        lines.append("    store %%%s[%%p%d], %s" % (buf, k, val))
        k += 1

    for op in BIN:
        lines.append("    %%v_%s = %s %%x, %%y : %s" % (op, op, t))
        out("%v_" + op)
    for op in UN:
        lines.append("    %%v_%s = %s %%x : %s" % (op, op, t))
        out("%v_" + op)
    # clamp(x, lo, hi) with lo <= hi; popcount/clz/ctz also to u32.
    lines.append("    %%lo = min %%y, %%z : %s" % t)
    lines.append("    %%hi = max %%y, %%z : %s" % t)
    lines.append("    %%v_clamp = clamp %%x, %%lo, %%hi : %s" % t)
    out("%v_clamp")
    lines.append("    %v_less = lt %x, %y : bool")
    lines.append("    %%v_sel = select %%v_less, %%x, %%z : %s" % t)
    out("%v_sel")
    nres = k
    k = 100
    for op in CMP:
        lines.append("    %%v_%s = %s %%x, %%y : bool" % (op, op))
        out("%v_" + op, "q")
    # select on a comparison, bit counts as u32 folded back through cast
    for op in ["popcount", "clz", "ctz"]:
        lines.append("    %%w_%s = %s %%x : u32" % (op, op))
        lines.append("    %%e_%s = cast %%w_%s : %s" % (op, op, t))
        lines.append("    %%f_%s = eq %%e_%s, %%v_%s : bool" % (op, op, op))
        out("%f_" + op, "q")
    lines += ["  }", "}", ""]
    return "\n".join(lines), nres


def edges(t):
    w = K.width(t)
    lo, hi = K.int_min(t), K.int_max(t)
    base = {0, 1, 2, 3, 7, w - 1, w, w + 1, 2 * w + 3, lo, hi, lo + 1, hi - 1, hi // 2}
    if K.signed(t):
        base |= {-1, -2, -7, -w, -(w + 1)}
    return sorted(K.wrap(v, t) for v in base)


def ref_bin(op, x, y, t):
    w = K.width(t)
    s = K.signed(t)
    if op == "add":
        return K.wrap(x + y, t)
    if op == "sub":
        return K.wrap(x - y, t)
    if op == "mul":
        return K.wrap(x * y, t)
    if op in ("div", "rem"):
        if y == 0:
            return 0
        if s and x == K.int_min(t) and y == -1:
            return x if op == "div" else 0
        q = abs(x) // abs(y)
        if (x < 0) != (y < 0):
            q = -q
        return K.wrap(q if op == "div" else x - q * y, t)
    if op == "min":
        return min(x, y)
    if op == "max":
        return max(x, y)
    if op == "mulhi":
        return K.wrap((x * y) >> w, t)
    if op == "band":
        return K.wrap(x & y, t)
    if op == "bor":
        return K.wrap(x | y, t)
    if op == "bxor":
        return K.wrap(x ^ y, t)
    amount = K.to_bits(y, t) % w
    if op == "shl":
        return K.wrap(x << amount, t)
    if op == "shr":
        return K.wrap((x if s else K.to_bits(x, t)) >> amount, t)
    raise KeyError(op)


def ref_un(op, x, t):
    w = K.width(t)
    bits = K.to_bits(x, t)
    if op == "neg":
        return K.wrap(-x, t)
    if op == "abs":
        return K.wrap(abs(x), t)
    if op == "bnot":
        return K.wrap(~x, t)
    if op == "popcount":
        return bin(bits).count("1")
    if op == "clz":
        return w - bits.bit_length()
    if op == "ctz":
        return w if bits == 0 else (bits & -bits).bit_length() - 1
    if op == "reverse_bits":
        return K.wrap(int(format(bits, "0%db" % w)[::-1], 2), t)
    raise KeyError(op)


def ref_cmp(op, x, y):
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op]


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    types = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
    src = []
    nres = 0
    for t in types:
        text, nres = kernel(t)
        src.append(text)
    with open("intops.kiln", "w") as f:
        f.write("\n".join(src))
    K.roundtrip("intops.kiln")
    chk = K.Checker("integer operations")
    for t in types:
        e = edges(t)
        xs, ys = [], []
        for x in e:
            for y in e:
                xs.append(x)
                ys.append(y)
        rng = K.Rng(K.width(t) * 7 + K.signed(t))
        for _ in range(300):
            xs.append(K.wrap(rng.u64(), t))
            ys.append(K.wrap(rng.u64() >> rng.below(64), t))
        zs = [K.wrap(rng.u64(), t) for _ in xs]
        n = len(xs)
        cubes = str((n + 63) // 64)
        res = K.run("intops.kiln", "ops_" + t, cubes,
                    {"a": K.Buf(t, xs), "b": K.Buf(t, ys), "c": K.Buf(t, zs),
                     "r": K.Buf(t, [0] * (n * nres)), "q": K.Buf("bool", [0] * (n * 9)),
                     "n": str(n)}, ["r", "q"])
        r, q = res["r"], res["q"]
        for i in range(n):
            x, y, z = xs[i], ys[i], zs[i]
            k = 0
            for op in BIN:
                chk.eq("%s %s(%d, %d)" % (t, op, x, y), r[k * n + i], ref_bin(op, x, y, t))
                k += 1
            for op in UN:
                chk.eq("%s %s(%d)" % (t, op, x), r[k * n + i], K.wrap(ref_un(op, x, t), t))
                k += 1
            chk.eq("%s clamp(%d, %d, %d)" % (t, x, min(y, z), max(y, z)), r[k * n + i],
                   min(max(x, min(y, z)), max(y, z)))
            chk.eq("%s select(lt(%d, %d), x, %d)" % (t, x, y, z), r[(k + 1) * n + i],
                   x if x < y else z)
            for j, op in enumerate(CMP):
                chk.eq("%s %s(%d, %d)" % (t, op, x, y), q[j * n + i], int(ref_cmp(op, x, y)))
            for j, op in enumerate(["popcount", "clz", "ctz"]):
                chk.eq("%s %s(%d) as u32 == as %s" % (t, op, x, t), q[(6 + j) * n + i], 1)
    chk.report()


if __name__ == "__main__":
    main()
