# Every cast between bool, the integers and the floats, and bitcasts, through kiln-run.
"""Usage: casts.py WORKDIR

For each source type one kernel casts its input to every other type. The
reference: int -> int wraps (sign- or zero-extension by the source type);
int/float -> float is correctly rounded (round to nearest even); float -> int
truncates toward zero and saturates, NaN -> 0 (docs/LangRef.md §5.3);
x -> bool is x != 0 (a NaN is != 0, so true); bool -> number is 0 or 1.
Bitcasts must keep every bit, NaN payloads included.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

TYPES = ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
         "f64"]


def kernel(src, dsts, name):
    params = ["%%a: buffer<%s, read>" % src] + ["%%r_%s: buffer<%s, write>" % (d, d) for d in dsts]
    L = ["kernel @%s cube_dim(16) (%s, %%n: u32) {" % (name, ", ".join(params)),
         "  %i = absolute_pos : u32",
         "  %in = lt %i, %n : bool",
         "  if %in {",
         "    %%x = load %%a[%%i] : %s" % src]
    for d in dsts:
        L.append("    %%c_%s = cast %%x : %s" % (d, d))
        L.append("    store %%r_%s[%%i], %%c_%s" % (d, d))
    L += ["  }", "}", ""]
    return "\n".join(L)


def values(t, rng):
    if t == "bool":
        return [0, 1] * 20
    if K.is_int(t):
        lo, hi = K.int_min(t), K.int_max(t)
        v = {0, 1, 2, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 2 ** 24 + 1, 2 ** 31 - 1,
             2 ** 31, 2 ** 32 - 1, 2 ** 53 + 1, 2 ** 63 - 1, lo, hi, lo + 1, hi - 1,
             (1 << 24) + 3, 0x1000001, 0x7fffffc0, 0x80000080, 0x8000008000000001,
             0x0100008000000001, 0x40400001, 0x0000000101000004}
        if K.signed(t):
            v |= {-1, -2, -128, -129, -32769, -(2 ** 31) - 1}
        out = sorted({K.wrap(x, t) for x in v})
        out += [K.wrap(rng.u64() >> rng.below(64), t) for _ in range(100)]
        return out
    total, mant, expb, bias = K.fparams(t)
    out = []
    for v in [0.0, -0.0, 0.5, -0.5, 0.7, -0.7, 1.0, -1.0, 1.5, 2.5, -2.5, 127.9, 128.0, 255.5,
              256.0, -128.9, -129.0, 32767.5, 32768.0, 65504.0, 65535.9, 65536.0, 1e5, -1e5,
              2.0 ** 31, -2.0 ** 31, 2.0 ** 31 - 1, 2.0 ** 32, 2.0 ** 40, 2.0 ** 63, -2.0 ** 63,
              2.0 ** 64, 1e30, -1e30, 3.0e38, 1e300, math.inf, -math.inf, math.nan, -math.nan,
              1e-40, 1e-7, 6e-8, 1e-310, 1.0 + 2 ** -9, 1.0 + 2 ** -12, 1.0 + 2 ** -25,
              1.0 + 2 ** -24 + 2 ** -40]:
        out.append(K.round_to_bits(v, t))
    # A signalling NaN with a payload and a NaN with the sign bit.
    out.append(((1 << expb) - 1) << mant | 1)
    out += [rng.u64() & ((1 << total) - 1) for _ in range(100)]
    return out


def value_of(b, t):
    """Exact value (int, Fraction, float inf, or nan) of an element."""
    if t == "bool":
        return int(b != 0)
    if K.is_int(t):
        return b
    fr = K.bits_to_fraction(b, t)
    if fr is None:
        return K.bits_to_float(b, t)
    if fr == 0:
        return K.bits_to_float(b, t)  # keeps -0.0
    return fr


def ref_cast(v, d):
    """Returns the expected bits/int, or 'nan'."""
    isnan = isinstance(v, float) and math.isnan(v)
    if d == "bool":
        return int(isnan or v != 0)
    if K.is_int(d):
        if isnan:
            return 0
        if isinstance(v, float) and math.isinf(v):
            return K.int_max(d) if v > 0 else K.int_min(d)
        if not isinstance(v, int):
            tv = math.trunc(v)
            return max(K.int_min(d), min(K.int_max(d), tv))
        return K.wrap(v, d)
    if isnan:
        return "nan"
    return K.round_to_bits(v, d)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    texts = []
    dsts_of = {}
    # Casts to bf16 in kernels of their own, so that a failure there hides
    # nothing else.
    for s in TYPES:
        dsts_of["cast_" + s] = (s, [t for t in TYPES if t not in (s, "bf16")])
        if s != "bf16":
            dsts_of["cast_%s_bf16" % s] = (s, ["bf16"])
    for name, (s, dsts) in dsts_of.items():
        texts.append(kernel(s, dsts, name))
    # Bitcasts: every pair of same-size types, both ways, lines included.
    pairs = [("i32", "f32"), ("u32", "f32"), ("u64", "f64"), ("i64", "f64"), ("u16", "f16"),
             ("i16", "bf16"), ("f16", "bf16"), ("u64", "vec<2 x u32>"), ("u32", "vec<4 x u8>"),
             ("f64", "vec<2 x f32>"), ("vec<4 x u16>", "vec<2 x f32>"), ("u16", "vec<2 x i8>")]
    for idx, (a, b) in enumerate(pairs):
        texts.append("\n".join([
            "kernel @bitcast_%d cube_dim(8) (%%a: buffer<%s, read>, %%r: buffer<%s, write>," % (idx, a, b),
            "    %%s: buffer<%s, write>) {" % a,
            "  %i = absolute_pos : u32",
            "  %%x = load %%a[%%i] : %s" % a,
            "  %%y = bitcast %%x : %s" % b,
            "  store %r[%i], %y",
            "  %%z = bitcast %%y : %s" % a,
            "  store %s[%i], %z",
            "}", ""]))
    with open("casts.kiln", "w") as f:
        f.write("\n".join(texts))
    K.roundtrip("casts.kiln")
    chk = K.Checker("casts")
    rng = K.Rng(99)
    inputs = {s: values(s, rng) for s in TYPES}
    for name, (s, dsts) in dsts_of.items():
        xs = inputs[s]
        n = len(xs)
        args = {"a": K.Buf(s, xs), "n": str(n)}
        for d in dsts:
            args["r_" + d] = K.Buf(d, [0] * n)
        res = K.run("casts.kiln", name, str((n + 15) // 16), args,
                    ["r_" + d for d in dsts], may_fail=chk)
        if res is None:
            continue
        for d in dsts:
            got = res["r_" + d]
            for i, x in enumerate(xs):
                want = ref_cast(value_of(x, s), d)
                g = got[i]
                label = "cast %s %s -> %s" % (s, K.fhex(x, s) if K.is_float(s) else x, d)
                if want == "nan":
                    chk.ok(label, K.bits_is_nan(g, d), "got %s, expected a NaN" % K.fhex(g, d))
                elif K.is_float(d):
                    chk.ok(label, g == want, "got %s, expected %s" % (K.fhex(g, d), K.fhex(want, d)))
                else:
                    chk.eq(label, g, want)
    for idx, (a, b) in enumerate(pairs):
        nbytes = K.width(a.split(" x ")[-1].rstrip(">")) // 8 * (int(a[4:a.index(" ")]) if a.startswith("vec") else 1)
        data = bytes(rng.below(256) for _ in range(nbytes * 32))
        # Make sure a few are NaN patterns with payloads in every float view.
        data = b"\x01\x00\x80\x7f\x01\x00\xf0\x7f" * (nbytes // 8 if nbytes >= 8 else 0) + data
        data = data[:nbytes * 32]
        n = 32

        def elem(t):
            return t.split(" x ")[-1].rstrip(">") if t.startswith("vec") else t

        def lanes(t):
            return int(t[4:t.index(" ")]) if t.startswith("vec") else 1
        ea, eb = elem(a), elem(b)
        res = K.run("casts.kiln", "bitcast_%d" % idx, "4",
                    {"a": K.Buf(a, K.unpack(data, ea), lanes(a), n),
                     "r": K.Buf(b, [0] * (n * lanes(b)), lanes(b), n),
                     "s": K.Buf(a, [0] * (n * lanes(a)), lanes(a), n)}, ["r", "s"], may_fail=chk)
        if res is None:
            continue
        chk.eq("bitcast %s -> %s keeps the bytes" % (a, b), K.pack(res["r"], eb), data)
        chk.eq("bitcast %s -> %s -> %s keeps the bytes" % (a, b, a), K.pack(res["s"], ea), data)
    chk.report()


if __name__ == "__main__":
    main()
