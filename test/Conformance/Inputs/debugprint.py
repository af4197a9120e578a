# Checks debug_print (docs/LangRef.md §14) through kiln-run against Python's printf formatting.
"""Usage: debugprint.py KERNEL_FILE WORKDIR

Runs the kernels of KERNEL_FILE (test/Conformance/debug-print.kiln) with
kiln-run, in the bounds-checked and the unchecked variant, and compares the
debug text kiln-run writes on standard error with the text Python's own %
formatting (C's printf rules) gives for the same values. The order of the
lines of different units is unspecified, so lines are compared sorted; the
lines of one unit must keep their program order.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402


def f16_bits(v):
    return struct.unpack("<H", struct.pack("<e", v))[0]


def bf16_bits(v):
    b = struct.unpack("<I", struct.pack("<f", v))[0]
    assert b & 0xFFFF == 0, v  # exact in bf16
    return b >> 16


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f64_bits(v):
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def run(kf, kernel, cubes, args, extra=()):
    p = K.run(kf, kernel, cubes, args, [], extra=list(extra), expect_fail=True)
    if p.returncode != 0:
        K.fail("kiln-run --kernel %s failed (exit %d):\n%s" % (kernel, p.returncode, p.stderr))
    return p


def lines_of(text):
    assert text.endswith("\n") or text == "", repr(text[-80:])
    return text.splitlines()


def formats(kf, chk):
    # Per unit: (i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64).
    rows = [
        (-1, -300, -70000, -(2**63), 255, 65535, 4294967295, 2**64 - 1,
         1.5, -0.25, 3.140625, -2.5e-300),
        (127, 32767, 2**31 - 1, 2**63 - 1, 0, 1, 7, 12345678901234567890,
         -65504.0, 1.5 * 2.0**120, 1.0e-3, 6.02214076e23),
        (-128, -32768, -(2**31), -1, 65, 4096, 0xDEADBEEF, 2**32,
         0.0, 1.0, -0.0, 1.0 / 3.0),
        (0, 0, 0, 0, 9, 9, 9, 9, 6.103515625e-05, 2.0**-126, 1.0e30, 123456.789),
    ]
    names = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "h", "bh", "f", "d"]
    types = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"]
    args = {}
    cols = list(zip(*rows))
    # The values as stored, and as the kernel sees them (rounded to their type).
    seen = []
    for name, t, col in zip(names, types, cols):
        if t == "f16":
            bits = [f16_bits(v) for v in col]
            vals = [struct.unpack("<e", struct.pack("<H", b))[0] for b in bits]
        elif t == "bf16":
            bits = [bf16_bits(v) for v in col]
            vals = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]
        elif t == "f32":
            bits = [f32_bits(v) for v in col]
            vals = [struct.unpack("<f", struct.pack("<I", b))[0] for b in bits]
        elif t == "f64":
            bits = [f64_bits(v) for v in col]
            vals = list(col)
        else:
            bits = [K.to_bits(v, t) for v in col]
            vals = list(col)
        args[name] = K.Buf(t, bits)
        seen.append(vals)
    p = run(kf, "formats", "1", args)
    got = lines_of(p.stderr)
    want = []
    for u in range(4):
        a, b, c, e, g, k, m, n, ph, q, r, s = [col[u] for col in seen]
        t = 1 if c < 0 else 0
        want.append("I %u: %d %i %d %d|%u %u %u %u" % (u, a, b, c, e, g, k, m, n))
        # %u and %x of a signed operand read it as unsigned of its own width.
        # C's %#o is "0..." where Python's is "0o...": m is never 0 here.
        want.append("U %u: %u %u %x %X %o 0%o %#x %08x" % (
            u, a & 0xFF, c & 0xFFFFFFFF, c & 0xFFFFFFFF, e & (2**64 - 1), g, m, k, m))
        want.append("F %u: %f %e %g %.3f %10.2f %-10.1e| %+g %E %G" % (
            u, ph, q, r, s, s, r, ph, s, q))
        want.append("M %u: %c%c %d %u %i 100%% |%5d|%-6u|%+d|% d|%05d|%.3d" % (
            u, 75, 0x63, t, t, 1, c, m, c, c, b, a))
    chk.eq("formats: the lines, sorted", sorted(got), sorted(want))
    # One unit's lines keep their program order (I, U, F, M).
    for u in range(4):
        mine = [ln[0] for ln in got if ln[2:].startswith("%d:" % u)]
        chk.eq("formats: unit %d's lines in program order" % u, mine, ["I", "U", "F", "M"])


def many(kf, chk):
    for cubes, n in [(1, 3), (8, 5), (37, 11)]:
        p = run(kf, "many", str(cubes), {"n": str(n)})
        want = []
        for c in range(cubes):
            for u in range(32):
                a = c * 32 + u
                want.append("cube %u unit %u abs %u x %u" % (c, u, a, (a * n) & 0xFFFFFFFF))
        chk.eq("many cubes=%d: the lines, sorted" % cubes, sorted(lines_of(p.stderr)), sorted(want))


def divergent(kf, chk):
    p = run(kf, "divergent", "2", {})
    got = lines_of(p.stderr)
    want = {}
    for u in range(32):
        mine = []
        if u % 2:
            mine += ["unit %u step %u" % (u, k) for k in range(u)]
        elif u == 4:
            mine.append("unit 4 four")
        mine.append("unit %u done" % u)
        want[u] = mine
    chk.eq("divergent: the lines, sorted", sorted(got),
           sorted(ln for lst in want.values() for ln in lst))
    for u in range(32):
        mine = [ln for ln in got if ln.split()[1] == str(u)]
        chk.eq("divergent: unit %d's lines in program order" % u, mine, want[u])


def flood(kf, chk):
    line = len("flood line of unit 0000000000..\n")
    for cubes, limit in [(4, 1000), (4, 10 * line), (2, 0), (2, 64 * line)]:
        total = cubes * 32 * line
        extra = ["--debug-print-limit=%d" % limit, "--print=o"]
        p = run(kf, "flood", str(cubes), {"o": K.Buf("u32", [0] * (cubes * 32))}, extra)
        # --print's lines on stdout are untouched by the debug text.
        chk.eq("flood cubes=%d limit=%d: stdout" % (cubes, limit), p.stdout.splitlines(),
               [str(i) for i in range(cubes * 32)])
        got = lines_of(p.stderr)
        kept = [ln for ln in got if ln.startswith("flood line")]
        notes = [ln for ln in got if not ln.startswith("flood line")]
        kept_bytes = len(kept) * line
        chk.ok("flood cubes=%d limit=%d: within the limit" % (cubes, limit),
               kept_bytes <= limit, "%d bytes kept" % kept_bytes)
        chk.ok("flood cubes=%d limit=%d: whole lines" % (cubes, limit),
               all(len(ln) + 1 == line for ln in kept), repr(kept[:3]))
        if total <= limit:
            chk.eq("flood cubes=%d limit=%d: everything, no note" % (cubes, limit),
                   (len(kept), notes), (cubes * 32, []))
        else:
            chk.eq("flood cubes=%d limit=%d: the note is the last line" % (cubes, limit),
                   (notes, got[-1:]),
                   (["... %d bytes of debug output dropped" % (total - kept_bytes)],
                    ["... %d bytes of debug output dropped" % (total - kept_bytes)]))
            # The limit is filled up to the last print that fit.
            chk.ok("flood cubes=%d limit=%d: fills the limit" % (cubes, limit),
                   limit - kept_bytes < line, "%d bytes kept" % kept_bytes)
    # The default limit, 1 MiB: 36 cubes of 32 units are 1179648 bytes.
    p = run(kf, "flood", "1152", {"o": K.Buf("u32", [0] * (1152 * 32))})
    got = lines_of(p.stderr)
    kept = len(got) - 1
    chk.eq("flood default limit: kept and dropped",
           (kept, got[-1]), (1048576 // line,
                             "... %d bytes of debug output dropped"
                             % (1152 * 32 * line - (1048576 // line) * line)))


def all_checks(kf, chk):
    formats(kf, chk)
    many(kf, chk)
    divergent(kf, chk)
    flood(kf, chk)


def main():
    kfile, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    K.roundtrip(kfile)
    chk = K.Checker("debug print")
    all_checks(kfile, chk)
    K.EXTRA_OPTIONS[:] = ["--no-bounds-check"]
    chk.prefix = "[--no-bounds-check] "
    all_checks(kfile, chk)
    chk.report()


if __name__ == "__main__":
    main()
