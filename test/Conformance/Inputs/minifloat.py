# Minifloat storage types (f8e4m3 f8e5m2 f6e2m3 f6e3m2 f4e2m1 f4e2m1x2 ue8m0) through kiln-run.
"""Usage: minifloat.py WORKDIR

The reference is written from the format definitions (OCP FP8 and OCP MX,
as docs/LangRef.md §3.3 states them) with Python Fractions and shares nothing
with Kiln: a code's value is read field by field, and a conversion picks the
nearest finite value from the list of all of them (ties to the even code),
saturating beyond the largest; ue8m0 rounds up to a power of two.

Checked, in the bounds-checked variant and in the unchecked one compiled
without AVX:
- decode: every code of every type cast to f32, f64, f16, bf16, i32, u8,
  bool and to the other minifloats, scalars and lines;
- encode: edge values (every value, every tie between neighbours and one
  source ulp either side, the largest finite, the tie above it, beyond it,
  the subnormal steps, +-0, +-inf, NaN) and random values, from f32, f64,
  f16, bf16, i32, i64 and u64, scalars and lines;
- f4e2m1x2: two values a lane, element 0 in the low nibble, both ways;
- bitcast, select, load/store through shared and local arrays and vars,
  const, and the cubecl runtime tests (minifloat.rs) ported.
"""

import math
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

# (encoding bits, exponent bits, mantissa bits, bias, kind of specials)
FORMATS = {
    "f8e4m3": (8, 4, 3, 7, "fn"),      # no inf; S.1111.111 is NaN
    "f8e5m2": (8, 5, 2, 15, "ieee"),   # top exponent: inf / NaN
    "f6e2m3": (6, 2, 3, 1, "finite"),
    "f6e3m2": (6, 3, 2, 3, "finite"),
    "f4e2m1": (4, 2, 1, 1, "finite"),
    "ue8m0": (8, 8, 0, 127, "scale"),  # 2^(e-127), 0xff NaN, unsigned
}
ELEMS = list(FORMATS)
SOURCES = ["f32", "f64", "f16", "bf16"]
# Both variants; the unchecked one also without AVX (SSE2 only), the generic
# path of every x86-64.
VARIANTS = [("checked", ()),
            ("unchecked, no AVX", ("--no-bounds-check", "--mattr=-avx,-avx2,-avx512f"))
            if K.TARGET_X86 else ("unchecked", ("--no-bounds-check",))]
NAN = "nan"


def decode(code, t):
    """The value of a code: a Fraction, -0.0, +-inf (float) or NAN."""
    bits, eb, mb, bias, kind = FORMATS[t]
    code &= (1 << bits) - 1
    if kind == "scale":
        return NAN if code == 0xFF else Fraction(2) ** (code - 127)
    neg = (code >> (bits - 1)) & 1
    e = (code >> mb) & ((1 << eb) - 1)
    m = code & ((1 << mb) - 1)
    if kind == "fn" and e == (1 << eb) - 1 and m == (1 << mb) - 1:
        return NAN
    if kind == "ieee" and e == (1 << eb) - 1:
        if m:
            return NAN
        return -math.inf if neg else math.inf
    if e == 0:
        v = Fraction(m, 1 << mb) * Fraction(2) ** (1 - bias)
    else:
        v = Fraction((1 << mb) + m, 1 << mb) * Fraction(2) ** (e - bias)
    if v == 0:
        return -0.0 if neg else Fraction(0)
    return -v if neg else v


def finite_codes(t):
    """(value, code) of every finite non-negative code, by value."""
    bits = FORMATS[t][0]
    top = 1 << bits if FORMATS[t][4] == "scale" else 1 << (bits - 1)
    out = []
    for c in range(top):
        v = decode(c, t)
        if isinstance(v, Fraction):
            out.append((v, c))
    return sorted(out)


FINITE = {t: finite_codes(t) for t in ELEMS}


def max_finite(t):
    return FINITE[t][-1][0]


def nan_code(t, neg):
    bits, _, _, _, kind = FORMATS[t]
    sign = (1 << (bits - 1)) if neg else 0
    if kind == "fn":
        return 0x7F | sign
    if kind == "ieee":
        return 0x7E | sign
    if kind == "scale":
        return 0xFF
    return FINITE[t][-1][1]  # no NaN: +max


def encode(x, t):
    """The code `cast` gives for the exact value x (Fraction, int, float
    incl. +-0.0, +-inf, nan), per docs/LangRef.md §5.3.1."""
    bits, _, _, _, kind = FORMATS[t]
    if isinstance(x, float) and math.isnan(x):
        return nan_code(t, math.copysign(1.0, x) < 0)
    if kind == "scale":
        if x <= 0:
            return 0
        if x == math.inf or x > max_finite(t):
            return FINITE[t][-1][1]
        x = Fraction(x)
        for v, c in FINITE[t]:  # round up to a power of two
            if v >= x:
                return c
        raise AssertionError("unreachable")
    neg = (math.copysign(1.0, x) < 0) if isinstance(x, float) else x < 0
    sign = (1 << (bits - 1)) if neg else 0
    a = abs(x)
    if a == math.inf or a > max_finite(t):
        return FINITE[t][-1][1] | sign
    a = Fraction(a)
    vals = FINITE[t]
    lo = max((vc for vc in vals if vc[0] <= a), key=lambda vc: vc[0])
    hi = min((vc for vc in vals if vc[0] >= a), key=lambda vc: vc[0])
    if a - lo[0] < hi[0] - a:
        c = lo[1]
    elif a - lo[0] > hi[0] - a:
        c = hi[1]
    else:
        c = lo[1] if lo[1] % 2 == 0 else hi[1]
    return c | sign


# ---------------------------------------------------------------------------
# Destinations of a decode

def quiet_nan(d, neg):
    total, mant, expb, _ = K.fparams(d)
    return (((1 << expb) - 1) << mant) | (1 << (mant - 1)) | ((1 << (total - 1)) if neg else 0)


def code_sign(code, t):
    bits, _, _, _, kind = FORMATS[t]
    return kind != "scale" and (code >> (bits - 1)) & 1 == 1


def expect_decoded(code, t, d):
    """Expected result of `cast` of minifloat code (type t) to d."""
    v = decode(code, t)
    if d in K.FLOAT_TYPES:
        if v is NAN:
            return quiet_nan(d, code_sign(code, t))
        return K.round_to_bits(v, d)
    if d == "bool":
        return int(v is NAN or v != 0)
    if d in FORMATS:
        return encode(math.nan if v is NAN and not code_sign(code, t) else
                      -math.nan if v is NAN else v, d)
    # integers: truncate, saturate, NaN -> 0
    if v is NAN:
        return 0
    if isinstance(v, float) and math.isinf(v):
        return K.int_max(d) if v > 0 else K.int_min(d)
    return max(K.int_min(d), min(K.int_max(d), math.trunc(Fraction(v))))


def exact_of(b, s):
    """Exact value of source bits b of type s (float: Fraction/-0.0/inf/nan)."""
    if K.is_int(s):
        return b
    if K.bits_is_nan(b, s):
        total = K.fparams(s)[0]
        return -math.nan if (b >> (total - 1)) & 1 else math.nan
    fr = K.bits_to_fraction(b, s)
    if fr is None or fr == 0:
        return K.bits_to_float(b, s)
    return fr


# ---------------------------------------------------------------------------
# Inputs

def edge_values(t):
    """Exact values where a conversion to t decides something."""
    vals = [v for v, _ in FINITE[t]]
    out = set(vals)
    for a, b in zip(vals, vals[1:]):
        mid = (a + b) / 2
        out |= {mid, mid * (1 + Fraction(1, 1 << 20)), mid * (1 - Fraction(1, 1 << 20)),
                (a + mid) / 2}
    top = vals[-1]
    step = top - vals[-2]
    out |= {top + step / 2, top + step / 2 * (1 + Fraction(1, 1 << 20)),
            top + step / 2 * (1 - Fraction(1, 1 << 20)), top + step, top * 2, top * 1000}
    sub = vals[1]  # the smallest positive value
    out |= {sub / 2, sub / 4, sub * 3 / 4, sub / 2 * (1 + Fraction(1, 1 << 20)),
            sub / 2 * (1 - Fraction(1, 1 << 20)), Fraction(1, 1 << 140), Fraction(3, 1 << 128)}
    if t == "ue8m0":
        out |= {Fraction(3, 2) * Fraction(2) ** k for k in (-127, -100, -1, 0, 10, 126, 127)}
        out |= {Fraction(2) ** k * (1 + Fraction(1, 1 << 60)) for k in (-127, 0, 126)}
    res = []
    for v in sorted(out):
        res += [v, -v]
    return res


def source_inputs(t, s, rng):
    """Bit patterns of source float type s to convert to t (each exact value
    rounded to s first: the kernel reads s)."""
    total = K.fparams(s)[0]
    out = [K.round_to_bits(v, s) for v in edge_values(t)]
    out += [K.round_to_bits(x, s) for x in (0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan)]
    out.append(((1 << (total - 1)) - 1))  # a NaN with a full payload
    top = float(max_finite(t))
    for _ in range(150):  # random values in and around the range
        x = rng.uniform(-top * 1.2, top * 1.2)
        out.append(K.round_to_bits(x, s))
        out.append(K.round_to_bits(x / (1 << rng.below(24)), s))
    out += [rng.u64() & ((1 << total) - 1) for _ in range(100)]  # any pattern
    dedup = []
    seen = set()
    for b in out:
        if b not in seen:
            seen.add(b)
            dedup.append(b)
    return dedup


INT_SOURCES = {
    "i32": [0, 1, -1, 2, 3, 5, 6, 7, -7, 13, 100, 448, 449, 464, 465, 480, -465, 57344, 61439,
            61440, 65536, 2 ** 31 - 1, -2 ** 31],
    "i64": [0, -1, 448, -464, 2 ** 60, 2 ** 60 + 1, 2 ** 62 + 2 ** 40 + 1, -2 ** 63, 2 ** 63 - 1,
            (2 ** 53 + 1) * 3],
    "u64": [0, 1, 7, 2 ** 63, 2 ** 64 - 1, 2 ** 61 + 1, 2 ** 33 + 2 ** 32],
}


# ---------------------------------------------------------------------------
# Kernels

def cast_kernel(name, src, dsts):
    """One input buffer of src, one output buffer per destination."""
    params = ["%%a: buffer<%s, read>" % src]
    params += ["%%r%d: buffer<%s, write>" % (i, d) for i, d in enumerate(dsts)]
    L = ["kernel @%s cube_dim(32) (%s, %%n: u32) {" % (name, ", ".join(params)),
         "  %i = absolute_pos : u32",
         "  %in = lt %i, %n : bool",
         "  if %in {",
         "    %%x = load %%a[%%i] : %s" % src]
    for i, d in enumerate(dsts):
        L.append("    %%c%d = cast %%x : %s" % (i, d))
        L.append("    store %%r%d[%%i], %%c%d" % (i, i))
    L += ["  }", "}", ""]
    return "\n".join(L)


def vec(n, t):
    return "vec<%d x %s>" % (n, t)


MISC = r"""
kernel @memory cube_dim(16) (%a: buffer<f8e4m3, read>, %b: buffer<vec<4 x f6e3m2>, read>,
    %ra: buffer<f8e4m3, write>, %rb: buffer<vec<4 x f6e3m2>, write>,
    %rs: buffer<f8e4m3, write>, %rw: buffer<u32, write>, %rx: buffer<f8e4m3, write>) {
  %i = unit_pos : u32
  %s = shared f8e4m3[16]
  %l = local_array vec<4 x f6e3m2>[2]
  %v = var f8e4m3
  %x = load %a[%i] : f8e4m3
  %y = load %b[%i] : vec<4 x f6e3m2>
  %j = sub 15:u32, %i : u32
  store %s[%j], %x
  store %l[1:u32], %y
  set %v, %x
  sync_cube
  %sx = load %s[%i] : f8e4m3
  store %rs[%i], %sx
  %ly = load %l[1:u32] : vec<4 x f6e3m2>
  store %rb[%i], %ly
  %vx = get %v : f8e4m3
  store %ra[%i], %vx
  %odd = band %i, 1:u32 : u32
  %c = eq %odd, 1:u32 : bool
  %k = const 0x38 : f8e4m3
  %sel = select %c, %k, %x : f8e4m3
  %lane = extract %y[2] : f6e3m2
  %back = cast %lane : f8e4m3
  %big = const -448.0 : f8e4m3
  %pick = select %c, %sel, %big : f8e4m3
  %ln = const [1.5, -0.25, nan, 3.0] : vec<4 x f8e4m3>
  %l2 = extract %ln[2] : f8e4m3
  %l3 = insert %ln[0], %back : vec<4 x f8e4m3>
  %sp = splat %pick : vec<4 x f8e4m3>
  %vv = vector %l2, %back, %pick, %x : vec<4 x f8e4m3>
  %bits = bitcast %vv : u32
  store %rw[%i], %bits
  store %rx[%i], %pick
}
"""


CUBECL = r"""
kernel @cubecl_fp8 cube_dim(1) (%input: buffer<vec<4 x f32>, read_write>,
    %out: buffer<vec<4 x u8>, write>) {
  %value = load %input[0:u32] : vec<4 x f32>
  %a = cast %value : vec<4 x f8e4m3>
  %ab = bitcast %a : vec<4 x u8>
  store %out[0:u32], %ab
  %b = cast %value : vec<4 x f8e5m2>
  %bb = bitcast %b : vec<4 x u8>
  store %out[1:u32], %bb
  %back = bitcast %ab : vec<4 x f8e4m3>
  %wide = cast %back : vec<4 x f32>
  store %input[0:u32], %wide
}
kernel @cubecl_fp6 cube_dim(1) (%input: buffer<vec<4 x f32>, read_write>,
    %out: buffer<vec<4 x u8>, write>) {
  %value = load %input[0:u32] : vec<4 x f32>
  %a = cast %value : vec<4 x f6e2m3>
  %ab = bitcast %a : vec<4 x u8>
  store %out[0:u32], %ab
  %b = cast %value : vec<4 x f6e3m2>
  %bb = bitcast %b : vec<4 x u8>
  store %out[1:u32], %bb
  %back = bitcast %ab : vec<4 x f6e2m3>
  %wide = cast %back : vec<4 x f32>
  store %input[0:u32], %wide
}
kernel @cubecl_fp4 cube_dim(1) (%input: buffer<vec<4 x f32>, read_write>,
    %out: buffer<vec<2 x u8>, write>) {
  %value = load %input[0:u32] : vec<4 x f32>
  %a = cast %value : vec<2 x f4e2m1x2>
  %ab = bitcast %a : vec<2 x u8>
  store %out[0:u32], %ab
  %back = bitcast %ab : vec<2 x f4e2m1x2>
  %wide = cast %back : vec<4 x f32>
  store %input[0:u32], %wide
}
kernel @cubecl_scale cube_dim(1) (%input: buffer<vec<4 x f32>, read_write>,
    %out: buffer<vec<4 x ue8m0>, write>) {
  %value = load %input[0:u32] : vec<4 x f32>
  %a = cast %value : vec<4 x ue8m0>
  store %out[0:u32], %a
  %wide = cast %a : vec<4 x f32>
  store %input[0:u32], %wide
}
"""


# ---------------------------------------------------------------------------
# Checks

def check_values(chk, label, got, want, d):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            chk.ok("%s [%d]" % (label, i), False, "got %#x, expected %#x" % (g, w))
        else:
            chk.ok(label, True)
    chk.eq("%s: element count" % label, len(got), len(want))


def run_decodes(chk, extra):
    for t in ELEMS:
        bits = FORMATS[t][0]
        codes = list(range(1 << bits))
        dsts = SOURCES + ["i32", "u8", "bool"] + [u for u in ELEMS if u != t]
        n = len(codes)
        args = {"a": K.Buf(t, codes), "n": str(n)}
        for i, d in enumerate(dsts):
            args["r%d" % i] = K.Buf(d, [0] * n)
        res = K.run("minifloat.kiln", "decode_" + t, str((n + 31) // 32), args,
                    ["r%d" % i for i in range(len(dsts))], extra=extra, may_fail=chk)
        if res is None:
            continue
        for i, d in enumerate(dsts):
            check_values(chk, "cast %s -> %s" % (t, d), res["r%d" % i],
                         [expect_decoded(c, t, d) for c in codes], d)
        # Lines: 16 lanes to f32, 3 lanes to f16.
        for lanes, d in ((16, "f32"), (3, "f16")):
            cnt = (n + lanes - 1) // lanes
            lc = (codes * 2)[:cnt * lanes]
            res = K.run("minifloat.kiln", "decode_%s_v%d" % (t, lanes), str((cnt + 31) // 32),
                        {"a": K.Buf(vec(lanes, t), lc, lanes, cnt),
                         "r0": K.Buf(vec(lanes, d), [0] * len(lc), lanes, cnt),
                         "n": str(cnt)}, ["r0"], extra=extra, may_fail=chk)
            if res is not None:
                check_values(chk, "cast %s -> %s" % (vec(lanes, t), vec(lanes, d)), res["r0"],
                             [expect_decoded(c, t, d) for c in lc], d)


def run_encodes(chk, extra, rng):
    for t in ELEMS:
        for s in SOURCES:
            xs = source_inputs(t, s, rng)
            n = len(xs)
            res = K.run("minifloat.kiln", "encode_%s_%s" % (s, t), str((n + 31) // 32),
                        {"a": K.Buf(s, xs), "r0": K.Buf(t, [0] * n), "n": str(n)}, ["r0"],
                        extra=extra, may_fail=chk)
            if res is None:
                continue
            want = [encode(exact_of(b, s), t) for b in xs]
            for i, (g, w) in enumerate(zip(res["r0"], want)):
                chk.ok("cast %s %s -> %s" % (s, K.fhex(xs[i], s), t), g == w,
                       "got %#04x, expected %#04x" % (g, w))
            if s in ("f32", "f64"):  # lines of 8 lanes
                cnt = n // 8
                res = K.run("minifloat.kiln", "encode_%s_%s_v8" % (s, t), str((cnt + 31) // 32),
                            {"a": K.Buf(vec(8, s), xs[:cnt * 8], 8, cnt),
                             "r0": K.Buf(vec(8, t), [0] * (cnt * 8), 8, cnt), "n": str(cnt)},
                            ["r0"], extra=extra, may_fail=chk)
                if res is not None:
                    check_values(chk, "cast %s -> %s" % (vec(8, s), vec(8, t)), res["r0"],
                                 want[:cnt * 8], t)
        for s, xs in INT_SOURCES.items():
            n = len(xs)
            res = K.run("minifloat.kiln", "encode_%s_%s" % (s, t), "1",
                        {"a": K.Buf(s, xs), "r0": K.Buf(t, [0] * n), "n": str(n)}, ["r0"],
                        extra=extra, may_fail=chk)
            if res is not None:
                for x, g in zip(xs, res["r0"]):
                    chk.eq("cast %s %d -> %s" % (s, x, t), g, encode(x, t))


def run_pairs(chk, extra, rng):
    """f4e2m1x2: element 0 in the low nibble."""
    codes = list(range(256))
    res = K.run("minifloat.kiln", "unpack_pairs", "8",
                {"a": K.Buf(vec(2, "f4e2m1x2"), codes, 2, 128),
                 "r0": K.Buf(vec(4, "f32"), [0] * 512, 4, 128),
                 "r1": K.Buf(vec(2, "f16"), [0] * 256, 2, 128), "n": "128"},
                ["r0", "r1"], extra=extra, may_fail=chk)
    if res is not None:
        want32, want16 = [], []
        for c in codes:
            want32 += [expect_decoded(c & 0xF, "f4e2m1", "f32"),
                       expect_decoded(c >> 4, "f4e2m1", "f32")]
        check_values(chk, "cast vec<2 x f4e2m1x2> -> vec<4 x f32>", res["r0"], want32, "f32")
        for c in codes[::2]:
            want16 += [expect_decoded(c & 0xF, "f4e2m1", "f16"),
                       expect_decoded(c >> 4, "f4e2m1", "f16")]
        check_values(chk, "cast f4e2m1x2 -> vec<2 x f16>", res["r1"], want16, "f16")
    xs = source_inputs("f4e2m1", "f32", rng)
    xs = xs[:len(xs) // 16 * 16]
    n = len(xs)
    res = K.run("minifloat.kiln", "pack_pairs", str((n // 16 + 31) // 32),
                {"a": K.Buf(vec(16, "f32"), xs, 16, n // 16),
                 "r0": K.Buf(vec(8, "f4e2m1x2"), [0] * (n // 2), 8, n // 16),
                 "r1": K.Buf("f4e2m1x2", [0] * (n // 16), 1, n // 16),
                 "n": str(n // 16)}, ["r0", "r1"], extra=extra, may_fail=chk)
    if res is not None:
        want = [encode(exact_of(xs[2 * i], "f32"), "f4e2m1") |
                encode(exact_of(xs[2 * i + 1], "f32"), "f4e2m1") << 4 for i in range(n // 2)]
        check_values(chk, "cast vec<16 x f32> -> vec<8 x f4e2m1x2>", res["r0"], want, "u8")
        # r1: the first two lanes of each line, as a scalar pair.
        check_values(chk, "cast vec<2 x f32> -> f4e2m1x2", res["r1"], want[::8], "u8")


def run_misc(chk, extra, rng):
    a = [rng.below(256) for _ in range(16)]
    b = [rng.below(64) for _ in range(64)]
    res = K.run("minifloat.kiln", "memory", "1",
                {"a": K.Buf("f8e4m3", a), "b": K.Buf(vec(4, "f6e3m2"), b, 4, 16),
                 "ra": K.Buf("f8e4m3", [0] * 16), "rb": K.Buf(vec(4, "f6e3m2"), [0] * 64, 4, 16),
                 "rs": K.Buf("f8e4m3", [0] * 16), "rw": K.Buf("u32", [0] * 16),
                 "rx": K.Buf("f8e4m3", [0] * 16)},
                ["ra", "rb", "rs", "rw", "rx"], extra=extra, may_fail=chk)
    if res is None:
        return
    chk.eq("var of f8e4m3 keeps the code", res["ra"], a)
    chk.eq("local array of vec<4 x f6e3m2> keeps the codes", res["rb"], b)
    chk.eq("shared array of f8e4m3 keeps the codes", res["rs"], a[::-1])
    m448 = encode(Fraction(-448), "f8e4m3")
    for i in range(16):
        lane2 = b[4 * i + 2]
        back = encode(decode(lane2, "f6e3m2") if decode(lane2, "f6e3m2") is not NAN else 0,
                      "f8e4m3")
        pick = (0x38 if i % 2 else m448)
        chk.eq("select of f8e4m3 [%d]" % i, res["rx"][i], pick)
        word = 0x7F | back << 8 | pick << 16 | a[i] << 24
        chk.eq("vector/extract/const/bitcast of f8e4m3 [%d]" % i, res["rw"][i], word)


def run_cubecl(chk, extra):
    """cubecl's runtime_tests/minifloat.rs: test_fp8, test_fp6, test_fp4 and
    test_scale at line size 4, with their expected codes (little endian
    pairs for fp4) and values."""
    data = [K.round_to_bits(x, "f32") for x in (-2.1, 1.8, 0.4, 1.2)]
    cases = [
        ("cubecl_fp8", "vec<4 x u8>", 2,
         [0b1_1000_000, 0b0_0111_110, 0b0_0101_101, 0b0_0111_010,
          0b1_10000_00, 0b0_01111_11, 0b0_01101_10, 0b0_01111_01],
         [-2.0, 1.75, 0.40625, 1.25]),
        ("cubecl_fp6", "vec<4 x u8>", 2,
         [0b1_10_000, 0b0_01_110, 0b0_00_011, 0b0_01_010,
          0b1_100_00, 0b0_011_11, 0b0_001_10, 0b0_011_01],
         [-2.0, 1.75, 0.375, 1.25]),
        ("cubecl_fp4", "vec<2 x u8>", 1, [0b0_10_0_1_10_0, 0b0_01_0_0_00_1],
         [-2.0, 2.0, 0.5, 1.0]),
    ]
    for name, outty, count, codes, back in cases:
        lanes = 4 if "4" in outty.split(" x ")[0] else 2
        res = K.run("minifloat.kiln", name, "1",
                    {"input": K.Buf(vec(4, "f32"), data, 4, 1),
                     "out": K.Buf(outty, [0] * (lanes * count), lanes, count)},
                    ["input", "out"], extra=extra, may_fail=chk)
        if res is None:
            continue
        chk.eq("cubecl %s codes" % name, res["out"], codes)
        chk.eq("cubecl %s values" % name, res["input"],
               [K.round_to_bits(x, "f32") for x in back])
        # The same against the reference of this file.
        t = {"cubecl_fp8": "f8e4m3", "cubecl_fp6": "f6e2m3", "cubecl_fp4": "f4e2m1"}[name]
        chk.eq("reference agrees with cubecl %s" % name,
               [encode(exact_of(x, "f32"), t) for x in data], codes[:4] if t != "f4e2m1" else
               [c for p in codes for c in (p & 0xF, p >> 4)])
    scale_in = [K.round_to_bits(x, "f32") for x in (2.0, 1024.0, 57312.0)] + [0x7F000000]
    res = K.run("minifloat.kiln", "cubecl_scale", "1",
                {"input": K.Buf(vec(4, "f32"), scale_in, 4, 1),
                 "out": K.Buf(vec(4, "ue8m0"), [0] * 4, 4, 1)}, ["input", "out"], extra=extra,
                may_fail=chk)
    if res is not None:
        want = [0b1000_0000, 0b1000_1001, 0b1000_1111, 0b1111_1110]
        chk.eq("cubecl test_scale codes", res["out"], want)
        chk.eq("reference agrees with cubecl test_scale",
               [encode(exact_of(x, "f32"), "ue8m0") for x in scale_in], want)
        chk.eq("cubecl test_scale back", res["input"],
               [K.round_to_bits(decode(c, "ue8m0"), "f32") for c in want])


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    texts = []
    for t in ELEMS:
        dsts = SOURCES + ["i32", "u8", "bool"] + [u for u in ELEMS if u != t]
        texts.append(cast_kernel("decode_" + t, t, dsts))
        texts.append(cast_kernel("decode_%s_v16" % t, vec(16, t), [vec(16, "f32")]))
        texts.append(cast_kernel("decode_%s_v3" % t, vec(3, t), [vec(3, "f16")]))
        for s in SOURCES + list(INT_SOURCES):
            texts.append(cast_kernel("encode_%s_%s" % (s, t), s, [t]))
        for s in ("f32", "f64"):
            texts.append(cast_kernel("encode_%s_%s_v8" % (s, t), vec(8, s), [vec(8, t)]))
    texts.append(cast_kernel("unpack_pairs", vec(2, "f4e2m1x2"), [vec(4, "f32")]).replace(
        "    store %r0[%i], %c0",
        "    store %r0[%i], %c0\n    %p = extract %x[0] : f4e2m1x2\n"
        "    %h = cast %p : vec<2 x f16>\n    store %r1[%i], %h").replace(
        "%r0: buffer<vec<4 x f32>, write>",
        "%r0: buffer<vec<4 x f32>, write>, %r1: buffer<vec<2 x f16>, write>"))
    texts.append(cast_kernel("pack_pairs", vec(16, "f32"), [vec(8, "f4e2m1x2")]).replace(
        "    store %r0[%i], %c0",
        "    store %r0[%i], %c0\n    %e0 = extract %x[0] : f32\n    %e1 = extract %x[1] : f32\n"
        "    %two = vector %e0, %e1 : vec<2 x f32>\n    %p = cast %two : f4e2m1x2\n"
        "    store %r1[%i], %p").replace(
        "%r0: buffer<vec<8 x f4e2m1x2>, write>",
        "%r0: buffer<vec<8 x f4e2m1x2>, write>, %r1: buffer<f4e2m1x2, write>"))
    texts.append(MISC)
    texts.append(CUBECL)
    with open("minifloat.kiln", "w") as f:
        f.write("\n".join(texts))
    printed = K.roundtrip("minifloat.kiln")
    chk = K.Checker("minifloat")
    for variant, extra in VARIANTS:
        chk.prefix = "[%s] " % variant
        rng = K.Rng(11)
        run_decodes(chk, extra)
        run_encodes(chk, extra, rng)
        run_pairs(chk, extra, rng)
        run_misc(chk, extra, rng)
        run_cubecl(chk, extra)
    # The printed form runs too (its literals and types read back).
    chk.prefix = "[printed] "
    res = K.run(printed, "cubecl_fp8", "1",
                {"input": K.Buf(vec(4, "f32"),
                                [K.round_to_bits(x, "f32") for x in (-2.1, 1.8, 0.4, 1.2)], 4, 1),
                 "out": K.Buf("vec<4 x u8>", [0] * 8, 4, 2)}, ["out"], may_fail=chk)
    if res is not None:
        chk.eq("printed cubecl_fp8", res["out"][:4],
               [0b1_1000_000, 0b0_0111_110, 0b0_0101_101, 0b0_0111_010])
    chk.report()


if __name__ == "__main__":
    main()
