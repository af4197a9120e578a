# Conformance helpers: run a kernel through kiln-run and check it against an independent reference.
"""Shared by the test/Conformance scripts.

Buffers travel as raw little-endian files (`--arg NAME=T[N]:file=PATH`,
`--out NAME=PATH`), so every value is compared bit for bit. The reference
semantics below follow docs/LangRef.md §5.3 directly (integer wrap-around,
division and shift rules, saturating casts, IEEE rounding to nearest even) and
share no code with Kiln.
"""

import math
import os
import struct
import subprocess
import sys
from fractions import Fraction

# ---------------------------------------------------------------------------
# Types

INT_TYPES = {
    "i8": (8, True), "i16": (16, True), "i32": (32, True), "i64": (64, True),
    "u8": (8, False), "u16": (16, False), "u32": (32, False), "u64": (64, False),
}
# Float formats: (total bits, mantissa bits without the hidden one, exponent bits).
FLOAT_TYPES = {"f16": (16, 10, 5), "bf16": (16, 7, 8), "f32": (32, 23, 8), "f64": (64, 52, 11)}
# Minifloat storage types: one byte each, carried as their codes
# (minifloat.py holds their reference).
MINIFLOAT_TYPES = ("f8e4m3", "f8e5m2", "f6e2m3", "f6e3m2", "f4e2m1", "f4e2m1x2", "ue8m0")


def is_int(t):
    return t in INT_TYPES


def is_float(t):
    return t in FLOAT_TYPES


def width(t):
    if t == "bool" or t in MINIFLOAT_TYPES:
        return 8
    if is_int(t):
        return INT_TYPES[t][0]
    return FLOAT_TYPES[t][0]


def signed(t):
    return INT_TYPES[t][1]


def wrap(v, t):
    """The value v reduced modulo 2^width into the range of integer type t."""
    w, s = INT_TYPES[t]
    v &= (1 << w) - 1
    if s and v >= 1 << (w - 1):
        v -= 1 << w
    return v


def int_min(t):
    w, s = INT_TYPES[t]
    return -(1 << (w - 1)) if s else 0


def int_max(t):
    w, s = INT_TYPES[t]
    return (1 << (w - 1)) - 1 if s else (1 << w) - 1


def to_bits(v, t):
    """Integer value -> unsigned bit pattern of its width."""
    return v & ((1 << width(t)) - 1)


# ---------------------------------------------------------------------------
# IEEE formats as bit patterns

def fparams(t):
    total, mant, expb = FLOAT_TYPES[t]
    bias = (1 << (expb - 1)) - 1
    return total, mant, expb, bias


def bits_is_nan(b, t):
    total, mant, expb, _ = fparams(t)
    e = (b >> mant) & ((1 << expb) - 1)
    return e == (1 << expb) - 1 and (b & ((1 << mant) - 1)) != 0


def bits_to_fraction(b, t):
    """Finite value of bit pattern b as a Fraction; None for inf/NaN."""
    total, mant, expb, bias = fparams(t)
    sign = -1 if (b >> (total - 1)) & 1 else 1
    e = (b >> mant) & ((1 << expb) - 1)
    m = b & ((1 << mant) - 1)
    if e == (1 << expb) - 1:
        return None
    if e == 0:
        v = Fraction(m, 1 << mant) * Fraction(2) ** (1 - bias)
    else:
        v = Fraction((1 << mant) + m, 1 << mant) * Fraction(2) ** (e - bias)
    return sign * v


def bits_to_float(b, t):
    """Bit pattern -> Python float (exact for every format up to f64)."""
    if t == "f64":
        return struct.unpack("<d", struct.pack("<Q", b))[0]
    total, mant, expb, bias = fparams(t)
    if bits_is_nan(b, t):
        return math.nan
    fr = bits_to_fraction(b, t)
    if fr is None:
        return -math.inf if (b >> (total - 1)) & 1 else math.inf
    if fr == 0 and (b >> (total - 1)) & 1:
        return -0.0
    return float(fr)


def round_to_bits(x, t):
    """Round an exact value (Fraction, int or float; inf/nan floats allowed) to
    format t, round to nearest even; returns the bit pattern. -0.0 keeps its
    sign; NaN gives the canonical quiet NaN."""
    total, mant, expb, bias = fparams(t)
    signbit = 1 << (total - 1)
    maxexp = (1 << expb) - 1
    if isinstance(x, float):
        if math.isnan(x):
            return (maxexp << mant) | (1 << (mant - 1))
        if math.isinf(x):
            return (maxexp << mant) | (signbit if x < 0 else 0)
        neg = math.copysign(1.0, x) < 0
        x = Fraction(x)
    else:
        x = Fraction(x)
        neg = x < 0
    s = signbit if neg else 0
    a = abs(x)
    if a == 0:
        return s
    # Exponent e with 2^e <= a < 2^(e+1).
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    emin = 1 - bias
    q = max(e, emin) - mant  # quantum
    scaled = a / (Fraction(2) ** q)
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n & 1):
        n += 1
    # n * 2^q, n < 2^(mant+1) (or == after rounding up).
    if n == 0:
        return s
    if n >= 1 << (mant + 1):
        n >>= 1
        q += 1
    if n < 1 << mant:  # subnormal
        return s | n
    ebits = q + mant + bias
    if ebits >= maxexp:
        return s | (maxexp << mant)
    return s | (ebits << mant) | (n - (1 << mant))


def float_to_bits(v, t):
    return round_to_bits(v, t)


def ulp_of(ref, t):
    """Size of one ulp of format t at the exact value ref (a float)."""
    total, mant, expb, bias = fparams(t)
    a = abs(ref)
    if a == 0 or math.isinf(a):
        return Fraction(2) ** (1 - bias - mant)
    e = math.frexp(a)[1] - 1
    e = max(e, 1 - bias)
    return Fraction(2) ** (e - mant)


def ulp_error(got_bits, ref, t):
    """Error of the result got_bits against the exact reference ref (a float),
    in ulps of format t at ref. NaN/inf must match exactly (0 or inf)."""
    if math.isnan(ref):
        return 0.0 if bits_is_nan(got_bits, t) else math.inf
    if bits_is_nan(got_bits, t):
        return math.inf
    got = bits_to_float(got_bits, t)
    if math.isinf(ref) or math.isinf(got):
        # An overflow that rounds to inf in the format is fine if got is inf too.
        rb = round_to_bits(ref, t)
        return 0.0 if rb == got_bits else math.inf
    return float(abs(Fraction(got) - Fraction(ref)) / ulp_of(ref, t))


# ---------------------------------------------------------------------------
# Raw buffers

def plane_reduce_order(vals, op, neutral, plane):
    """A plane reduction in the order docs/LangRef.md gives for floats in
    the vector form: the lanes padded to the plane size with the neutral
    element, then halved repeatedly, lane i combined with lane i + h for
    h = plane/2, ..., 1 (op(v[i], v[i + h]))."""
    v = list(vals) + [neutral] * (plane - len(vals))
    h = plane // 2
    while h:
        v = [op(v[i], v[i + h]) for i in range(h)]
        h //= 2
    return v[0]


def plane_scan_order(vals, op, neutral, plane):
    """The inclusive plane scan of docs/LangRef.md in the vector form
    (Hillis-Steele): for d = 1, 2, ..., plane/2, v[i] = op(v[i - d], v[i])
    for i >= d, all lanes at once; lanes past the plane are neutral."""
    v = list(vals) + [neutral] * (plane - len(vals))
    d = 1
    while d < plane:
        v = [v[i] if i < d else op(v[i - d], v[i]) for i in range(plane)]
        d *= 2
    return v[:len(vals)]


def pack(values, t):
    """Values (ints for integers/bool, bit patterns for floats) -> bytes."""
    w = width(t)
    out = bytearray()
    for v in values:
        if t == "bool":
            out += bytes([1 if v else 0])
        else:
            out += (v & ((1 << w) - 1)).to_bytes(w // 8, "little")
    return bytes(out)


def unpack(data, t):
    """Bytes -> ints (signed per type) for integers, bools, bit patterns for floats."""
    w = width(t) // 8
    if len(data) % w:
        raise ValueError("buffer of %d bytes is not a whole number of %s" % (len(data), t))
    vals = []
    for i in range(0, len(data), w):
        v = int.from_bytes(data[i:i + w], "little")
        if t == "bool":
            vals.append(v)
        elif is_int(t):
            vals.append(wrap(v, t))
        else:
            vals.append(v)
    return vals


# ---------------------------------------------------------------------------
# Running kiln-run

class Buf:
    """A buffer argument: element type (scalar name or 'vec<N x T>'), the flat
    list of scalar values (bit patterns for floats), and the lane count."""

    def __init__(self, elem, values, lanes=1, count=None, suffix=""):
        # suffix: appended to the SPEC, e.g. ":shape=2x3:strides=3x1"
        # (a tensor binding, docs/Tools.md).
        self.suffix = suffix
        self.elem = elem
        self.scalar = elem.split(" x ")[1].rstrip(">") if elem.startswith("vec<") else elem
        self.lanes = lanes
        self.values = list(values)
        self.count = count if count is not None else len(self.values) // lanes


_counter = [0]
# The architecture kiln-run generates code for (lit's kiln_target_arch; a
# cross build runs under an emulator): the x86 variants (--mattr=-avx512f)
# exist only there.
TARGET_X86 = os.environ.get("KILN_TEST_TARGET_ARCH", "x86_64") == "x86_64"


def x86_variants(*extras):
    """[[]] plus each of extras (lists of kiln-run options) when the code is
    x86-64's: the instruction-set variants a test also runs."""
    return [[]] + ([list(e) for e in extras] if TARGET_X86 else [])

# Options added to every kiln-run command (patterns.py runs every in-bounds
# kernel a second time with --no-bounds-check).
EXTRA_OPTIONS = []


def run(kfile, kernel, cubes, args, outs, extra=(), workdir=None, expect_fail=False,
        may_fail=None):
    """Run `kiln-run kfile --kernel kernel --cubes cubes` with args (name ->
    Buf or a scalar literal string); return {name: flat values} for the
    buffers named in outs. A failing run exits 1, or with may_fail (a
    Checker) is recorded there as a failed check and gives None."""
    workdir = workdir or os.getcwd()
    _counter[0] += 1
    tag = "%s.%d" % (kernel, _counter[0])
    cmd = ["kiln-run", kfile, "--kernel", kernel, "--cubes", cubes, "--no-store"]
    for name, a in args.items():
        if isinstance(a, Buf):
            path = os.path.join(workdir, "%s.%s.in" % (tag, name))
            with open(path, "wb") as f:
                f.write(pack(a.values, a.scalar))
            cmd.append("--arg=%s=%s[%d]:file=%s%s" % (name, a.elem, a.count, path,
                                                      a.suffix))
        else:
            cmd.append("--arg=%s=%s" % (name, a))
    outpaths = {}
    for name in outs:
        outpaths[name] = os.path.join(workdir, "%s.%s.out" % (tag, name))
        cmd.append("--out=%s=%s" % (name, outpaths[name]))
    cmd += list(extra) + EXTRA_OPTIONS
    p = subprocess.run(cmd, capture_output=True, text=True)
    if expect_fail:
        return p
    if p.returncode != 0 and may_fail is not None:
        may_fail.ok("kiln-run --kernel %s" % kernel, False,
                    "exit %d: %s" % (p.returncode, p.stderr.strip()[-600:]))
        return None
    if p.returncode != 0:
        sys.stderr.write("FAILED: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
        sys.exit(1)
    result = {}
    for name, path in outpaths.items():
        with open(path, "rb") as f:
            result[name] = unpack(f.read(), args[name].scalar)
    return result


def roundtrip(kfile, workdir=None):
    """kiln-compile --emit=ir is a fixed point after one step, and the printed
    IR of every kernel parses and verifies again."""
    workdir = workdir or os.getcwd()
    base = os.path.join(workdir, os.path.basename(kfile))
    p1 = subprocess.run(["kiln-compile", kfile, "--emit=ir"], capture_output=True, text=True)
    if p1.returncode != 0:
        fail("kiln-compile --emit=ir %s failed:\n%s" % (kfile, p1.stderr))
    with open(base + ".ir1.kiln", "w") as f:
        f.write(p1.stdout)
    p2 = subprocess.run(["kiln-compile", base + ".ir1.kiln", "--emit=ir"], capture_output=True,
                        text=True)
    if p2.returncode != 0 or p2.stdout != p1.stdout:
        fail("kiln-compile --emit=ir is not a fixed point for %s:\n%s" % (kfile, p2.stderr))
    return base + ".ir1.kiln"


# ---------------------------------------------------------------------------
# Checking

class Checker:
    """Collects mismatches; report() prints the first ones and exits 1."""

    def __init__(self, what):
        self.what = what
        self.errors = []
        self.checked = 0
        self.prefix = ""  # put before every failure (e.g. the variant being run)

    def eq(self, label, got, want):
        self.checked += 1
        if got != want:
            self.errors.append("%s%s: got %r, expected %r" % (self.prefix, label, got, want))

    def ok(self, label, cond, detail=""):
        self.checked += 1
        if not cond:
            self.errors.append("%s%s: %s" % (self.prefix, label, detail))

    def refused(self, label, p, message):
        """A kiln-run that must fail with exit 1 and \p message on stderr."""
        self.ok("refused %s" % label, p.returncode == 1 and message in p.stderr,
                "exit %d: %s" % (p.returncode, p.stderr.strip()[-400:]))

    def report(self):
        if self.errors:
            sys.stderr.write("%s: %d of %d checks failed\n" % (self.what, len(self.errors),
                                                               self.checked))
            for e in self.errors[:None if os.environ.get("KCONF_ALL") else 40]:
                sys.stderr.write("  " + e + "\n")
            sys.exit(1)
        if self.checked == 0:
            fail("%s: nothing was checked" % self.what)
        print("%s: %d checks passed" % (self.what, self.checked))


def f32_bits(x):
    """The bit pattern of \p x rounded to f32, as a u32."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def dims(v):
    """A shape as kiln-run's suffixes write it: 64x64."""
    return "x".join(str(d) for d in v)


def fail(msg):
    sys.stderr.write(msg + "\n")
    sys.exit(1)


class Rng:
    """A small deterministic generator (xorshift64*), so inputs never change."""

    def __init__(self, seed):
        self.s = (seed * 0x9E3779B97F4A7C15 + 1) & ((1 << 64) - 1) or 1

    def u64(self):
        x = self.s
        x ^= x >> 12
        x ^= (x << 25) & ((1 << 64) - 1)
        x ^= x >> 27
        self.s = x
        return (x * 0x2545F4914F6CDD1D) & ((1 << 64) - 1)

    def below(self, n):
        return self.u64() % n

    def uniform(self, lo, hi):
        return lo + (hi - lo) * (self.u64() >> 11) / float(1 << 53)


def fhex(b, t):
    return "0x%0*x" % (width(t) // 4, b)
