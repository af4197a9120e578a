# Conformance of fp8/fp6/fp4 and i8/u8 fragments and the scaled multiply
# (docs/LangRef.md §5.7).
"""Usage: cmmascaled.py WORKDIR

Writes kernels with fragments of f8e4m3, f8e5m2, f6e2m3, f6e3m2, f4e2m1, i8
and u8 (16x8x32, and f4e2m1 at 16x8x64) and runs them with kiln-run in the
bounds-checked and the unchecked variant:

- cubecl's test_cmma_scaled (e5m2/e4m3 in all four pairings, 16x8x32, one
  scale per row) and test_cmma_scaled_fp4 (packed e2m1x2 inputs, 16x8x64,
  two scales per row), ported with their inputs: each unit loads its
  registers at the positions cmma_row/cmma_col give and its scales at
  cubecl's scales_index, as cubecl's kernel_scaled does. Checked against
  cubecl's expected values with its tolerance (3 %), and bit for bit
  against the reference below;
- cubecl's fp8 cases of test_cmma_manual (unscaled cmma_mma, mixed formats),
  against its expected sums (3 %) and bit for bit, and its i8/u8 cases
  (i32 accumulators) exactly; random i8/u8 codes with accumulators near the
  ends of i32, whose sums wrap;
- random codes of every format and random scale codes (some far out, so
  that terms overflow, underflow to subnormals or vanish), bit for bit.
  Units that supply no scale pass a NaN code (0xff), so reading the wrong
  unit's scale shows; one kernel has units that returned (scale 1);
- f4e2m1 fragments loaded straight from packed f4e2m1x2 memory (index in
  lines, odd and even strides in values; checked variant: values past the
  end read 0), bit for bit;
- the per-unit layout of the new shapes against the formula written here
  from LangRef §5.7 (CUDA's m16n8k32/m16n8k64 registers), and cmma_get of
  loaded codes (high bits of f6/f4 bytes dropped, NaN codes canonical).

The reference decodes every code exactly (minifloat.py) and follows
LangRef §5.7: acc = C[i][j]; for k in order, the term
A[i][k] * B[k][j] * 2^(ea - 127) * 2^(eb - 127) rounded once to f32, then
acc + term rounded once to f32.
"""

import math
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402
import minifloat as MF  # noqa: E402
from mmaref import fill_by_element  # noqa: E402

F32 = "f32"
SENTINEL = 0x7F7FFFF0
NAN_SCALE = 0xFF
FP_TYPES = ("f8e4m3", "f8e5m2", "f6e2m3", "f6e3m2", "f4e2m1")
CODE_BITS = {"f8e4m3": 8, "f8e5m2": 8, "f6e2m3": 6, "f6e3m2": 6, "f4e2m1": 4}


# ---------------------------------------------------------------------------
# Reference

def run_of(k):
    """E: neighbouring elements per unit and block (LangRef §5.7)."""
    return 8 if k == 64 else 4


def position(use, k, t, n):
    """(row, col) of element n of unit t of a 16x8xK fp8/fp6/fp4 fragment."""
    if use == "accumulator":  # LangRef §5.6: 8 x 8 blocks, 2 per unit
        b, j = n // 2, n % 2
        return 8 * (b % 2) + t // 4, 8 * (b // 2) + 2 * (t % 4) + j
    e = run_of(k)
    b, j = n // e, n % e
    if use == "a":  # blocks of 8 x 4E, two block rows
        return 8 * (b % 2) + t // 4, 4 * e * (b // 2) + e * (t % 4) + j
    # b: blocks of 4E x 8 down the K rows
    rows = k // (4 * e)
    return 4 * e * (b % rows) + e * (t % 4) + j, 8 * (b // rows) + t // 4


def count_of(use, k):
    rows, cols = {"a": (16, k), "b": (k, 8), "accumulator": (16, 8)}[use]
    return rows * cols // 32


def dec(code, t):
    v = MF.decode(code, t)
    return math.nan if v == MF.NAN else float(v)


def scale_value(code):
    return math.nan if code == NAN_SCALE else 2.0 ** (code - 127)


def f32_of(x):
    """The f32 that x (a float; exact inputs) rounds to, as a float."""
    return K.bits_to_float(K.round_to_bits(x, F32), F32)


def add_f32(a, b):
    """a + b rounded once to f32 (a, b floats holding f32 values)."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b) or (a == 0 and b == 0):
        return f32_of(a + b)  # IEEE specials and signed zeros, exact in f64
    return f32_of(Fraction(a) + Fraction(b))


def scaled_ref(a, ta, b, tb, c, sa, sb, k, scales):
    """D (16 x 8 floats) for codes a[i][kk], b[kk][j], C f32 bits c[i][j],
    scale codes sa[i][s] and sb[j][s]; scales None: unscaled cmma_mma."""
    block = k // (scales or 1)
    d = []
    for i in range(16):
        row = []
        for j in range(8):
            acc = K.bits_to_float(c[i][j], F32)
            for kk in range(k):
                x = dec(a[i][kk], ta) * dec(b[kk][j], tb)  # exact in f64
                if scales:
                    s = kk // block
                    x = x * scale_value(sa[i][s]) * scale_value(sb[j][s])  # exact
                acc = add_f32(acc, f32_of(x))
            row.append(acc)
        d.append(row)
    return d


def check_exact(chk, label, got_bits, want):
    if math.isnan(want):
        chk.ok(label, K.bits_is_nan(got_bits, F32), "got 0x%08x, expected a NaN" % got_bits)
    else:
        chk.eq(label, got_bits, K.round_to_bits(want, F32))


def check_cubecl_tolerance(chk, label, got_bits, want, epsilon=0.03):
    """cubecl's assert_equals_approx: |got - want| <= max(epsilon * want, epsilon)."""
    got = K.bits_to_float(got_bits, F32)
    allowed = max(epsilon * want, epsilon)
    chk.ok(label + " (cubecl's tolerance)", abs(got - want) <= allowed,
           "got %r, cubecl expects %r +- %r" % (got, want, allowed))


# ---------------------------------------------------------------------------
# cubecl's test_cmma_scaled and test_cmma_scaled_fp4: kernel_scaled, each
# unit loading its registers and scales itself.

def scaled_port_kernel(name, ta, tb, k, factor):
    shape = "16x8x%d" % k
    packed = ta == "f4e2m1" and k == 64
    mem_a = "vec<4 x f4e2m1x2>" if packed else "vec<4 x %s>" % ta
    mem_b = "vec<4 x f4e2m1x2>" if packed else "vec<4 x %s>" % tb
    per_line = 8 if packed else 4  # codes in a 32-bit register

    def load_registers(frag, mem, t, count, b_major):
        # registers[i] = mem[(row * k + col) / per_line] (b: col * k + row).
        out = """  for %%i_%(f)s = 0:u32 to %(regs)d:u32 step 1:u32 {
    %%n_%(f)s = mul %%i_%(f)s, %(pl)d:u32 : u32
    %%r_%(f)s = cmma_row %%%(f)s, %%lane, %%n_%(f)s : u32
    %%c_%(f)s = cmma_col %%%(f)s, %%lane, %%n_%(f)s : u32
""" % {"f": frag, "regs": count // per_line, "pl": per_line}
        major, minor = ("c", "r") if b_major else ("r", "c")
        out += """    %%o_%(f)s = mul %%%(ma)s_%(f)s, %(k)d:u32 : u32
    %%x_%(f)s = add %%o_%(f)s, %%%(mi)s_%(f)s : u32
    %%l_%(f)s = div %%x_%(f)s, %(pl)d:u32 : u32
    %%v_%(f)s = load %%%(m)s[%%l_%(f)s] : %(mt)s
""" % {"f": frag, "ma": major, "mi": minor, "k": k, "pl": per_line, "m": mem,
       "mt": mem_a if frag == "fa" else mem_b}
        codes = "v"
        if packed:  # two codes a byte: widen, then one code a lane (exact)
            out += "    %%w_%(f)s = cast %%v_%(f)s : vec<8 x f4e2m1>\n" % {"f": frag}
            codes = "w"
        for j in range(per_line):
            out += """    %%e%(j)d_%(f)s = extract %%%(w)s_%(f)s[%(j)d] : %(t)s
    %%m%(j)d_%(f)s = add %%n_%(f)s, %(j)d:u32 : u32
    cmma_set %%%(f)s, %%m%(j)d_%(f)s, %%e%(j)d_%(f)s
""" % {"f": frag, "j": j, "t": t, "w": codes}
        return out + "  }\n"

    def load_scales(which, idx):
        name_ = "s" + which
        if factor == 1:
            return "  %%%s = load %%scales_%s[%%%s] : ue8m0\n" % (name_, which, idx)
        out = "  %%%s_base = mul %%%s, %d:u32 : u32\n" % (name_, idx, factor)
        parts = []
        for i in range(factor):
            out += ("  %%%s_i%d = add %%%s_base, %d:u32 : u32\n"
                    "  %%%s_%d = load %%scales_%s[%%%s_i%d] : ue8m0\n"
                    % (name_, i, name_, i, name_, i, which, name_, i))
            parts.append("%%%s_%d" % (name_, i))
        out += "  %%%s = vector %s : vec<%d x ue8m0>\n" % (name_, ", ".join(parts), factor)
        return out

    text = """
kernel @%(name)s cube_dim(32) (%%a: buffer<%(ma)s, read>, %%b: buffer<%(mb)s, read>,
    %%c: buffer<vec<2 x f32>, read>, %%scales_a: buffer<ue8m0, read>,
    %%scales_b: buffer<ue8m0, read>, %%out: buffer<vec<2 x f32>, write>) {
  %%fa = fragment matrix<a, %(s)s, %(ta)s, row>
  %%fb = fragment matrix<b, %(s)s, %(tb)s, col>
  %%fc = fragment matrix<accumulator, %(s)s, f32>
  %%lane = unit_pos_plane : u32
""" % {"name": name, "ma": mem_a, "mb": mem_b, "s": shape, "ta": ta, "tb": tb}
    text += load_registers("fa", "a", ta, count_of("a", k), False)
    # cubecl's scales_index: A quad + (t % 4 % 2) * 8, B quad.
    text += """  %quad = div %lane, 4:u32 : u32
  %tid = rem %lane, 4:u32 : u32
  %half = rem %tid, 2:u32 : u32
  %half8 = mul %half, 8:u32 : u32
  %row_a = add %quad, %half8 : u32
"""
    text += load_scales("a", "row_a")
    text += load_registers("fb", "b", tb, count_of("b", k), True)
    text += load_scales("b", "quad")
    text += """  for %i_c = 0:u32 to 2:u32 step 1:u32 {
    %n_c = mul %i_c, 2:u32 : u32
    %r_c = cmma_row %fc, %lane, %n_c : u32
    %c_c = cmma_col %fc, %lane, %n_c : u32
    %o_c = mul %r_c, 8:u32 : u32
    %x_c = add %o_c, %c_c : u32
    %l_c = div %x_c, 2:u32 : u32
    %v_c = load %c[%l_c] : vec<2 x f32>
    %e0_c = extract %v_c[0] : f32
    %e1_c = extract %v_c[1] : f32
    %m1_c = add %n_c, 1:u32 : u32
    cmma_set %fc, %n_c, %e0_c
    cmma_set %fc, %m1_c, %e1_c
  }
  cmma_mma_scaled %fc, %fa, %fb, %fc, %sa, %sb
  for %i_d = 0:u32 to 2:u32 step 1:u32 {
    %n_d = mul %i_d, 2:u32 : u32
    %r_d = cmma_row %fc, %lane, %n_d : u32
    %c_d = cmma_col %fc, %lane, %n_d : u32
    %o_d = mul %r_d, 8:u32 : u32
    %x_d = add %o_d, %c_d : u32
    %l_d = div %x_d, 2:u32 : u32
    %m1_d = add %n_d, 1:u32 : u32
    %e0_d = cmma_get %fc, %n_d : f32
    %e1_d = cmma_get %fc, %m1_d : f32
    %v_d = vector %e0_d, %e1_d : vec<2 x f32>
    store %out[%l_d], %v_d
  }
}
"""
    return text


# cubecl's cases: (A, B, m, n, k, factor) of test_cmma_scaled and
# test_cmma_scaled_fp4 (Kiln's names for e5m2, e4m3, e2m1x2).
SCALED_PORTS = [("f8e5m2", "f8e5m2", 32, 1), ("f8e4m3", "f8e4m3", 32, 1),
                ("f8e5m2", "f8e4m3", 32, 1), ("f8e4m3", "f8e5m2", 32, 1)]
FP4_PORT = ("f4e2m1", "f4e2m1", 64, 2)


def pack_fp4(codes):
    """e2m1x2::from_f32_slice: element 2i in the low nibble of byte i."""
    return [codes[2 * i] | (codes[2 * i + 1] << 4) for i in range(len(codes) // 2)]


def check_scaled_ports(kf, chk):
    m, n = 16, 8
    for idx, (ta, tb, k, factor) in enumerate(SCALED_PORTS + [FP4_PORT]):
        fp4 = k == 64
        if fp4:
            # lhs[i][j] = e2m1::from_bits((i + j) % 15 + 1); rhs col-major the same.
            lhs_codes = [(i + j) % 15 + 1 for i in range(m) for j in range(k)]
            rhs_codes = [(i + j) % 15 + 1 for j in range(n) for i in range(k)]
            # scale(index) = 2^(index % 7 - 3), as ue8m0.
            sc = lambda index: MF.encode(Fraction(2) ** (index % 7 - 3), "ue8m0")  # noqa: E731
            lhs_scales = [sc(i * 2 + j) for i in range(m) for j in range(factor)]
            rhs_scales = [sc(i * 3 + j) for j in range(n) for i in range(factor)]
            mem_a, mem_b = pack_fp4(lhs_codes), pack_fp4(rhs_codes)
            ea, eb = "vec<4 x f4e2m1x2>", "vec<4 x f4e2m1x2>"
        else:
            # lhs[i][j] = A::from(i * 2 + j); rhs[j][i] (col-major) = B::from(i * 3 + j).
            lhs_codes = [MF.encode(i * 2 + j, ta) for i in range(m) for j in range(k)]
            rhs_codes = [MF.encode(i * 3 + j, tb) for j in range(n) for i in range(k)]
            lhs_scales = [(i * 2 + j + 120) for i in range(m) for j in range(factor)]
            rhs_scales = [(i * 3 + j + 120) for j in range(n) for i in range(factor)]
            mem_a, mem_b = lhs_codes, rhs_codes
            ea, eb = "vec<4 x %s>" % ta, "vec<4 x %s>" % tb
        res = K.run(kf, "scaled_port%d" % idx, "1",
                    {"a": K.Buf(ea, mem_a, lanes=4), "b": K.Buf(eb, mem_b, lanes=4),
                     "c": K.Buf("vec<2 x f32>", [0] * (m * n), lanes=2),
                     "scales_a": K.Buf("ue8m0", lhs_scales),
                     "scales_b": K.Buf("ue8m0", rhs_scales),
                     "out": K.Buf("vec<2 x f32>", [SENTINEL] * (m * n), lanes=2)}, ["out"])
        a = [[lhs_codes[i * k + kk] for kk in range(k)] for i in range(m)]
        b = [[rhs_codes[j * k + kk] for j in range(n)] for kk in range(k)]
        sa = [[lhs_scales[i * factor + s] for s in range(factor)] for i in range(m)]
        sb = [[rhs_scales[j * factor + s] for s in range(factor)] for j in range(n)]
        exact = scaled_ref(a, ta, b, tb, [[0] * n for _ in range(m)], sa, sb, k, factor)
        label = "cubecl scaled %s x %s 16x8x%d" % (ta, tb, k)
        for i in range(m):
            for j in range(n):
                got = res["out"][i * n + j]
                check_exact(chk, "%s out[%d][%d]" % (label, i, j), got, exact[i][j])
                # cubecl's expected value, from the undecoded inputs.
                want = 0.0
                for l in range(k):
                    s = l // (k // factor)
                    if fp4:
                        x = dec(lhs_codes[i * k + l], "f4e2m1") * dec(rhs_codes[j * k + l], "f4e2m1")
                        x *= scale_value(sa[i][s]) * scale_value(sb[j][s])
                    else:
                        x = (i * 2 + l) * (l * 3 + j) * scale_value(i * 2 + s + 120) * \
                            scale_value(s * 3 + j + 120)
                    want += x
                check_cubecl_tolerance(chk, "%s out[%d][%d]" % (label, i, j), got, want)


# ---------------------------------------------------------------------------
# cubecl's fp8 cases of test_cmma_manual: each unit sets its elements of A,
# B and C from memory at their positions, cmma_mma, stores D from its own.

MANUAL_CASES = [("f8e5m2", "f8e5m2", F32), ("f8e4m3", "f8e4m3", F32),
                ("f8e5m2", "f8e4m3", F32), ("f8e4m3", "f8e5m2", F32),
                ("i8", "i8", "i32"), ("i8", "u8", "i32"), ("u8", "u8", "i32"),
                ("u8", "i8", "i32")]


def manual_kernel(idx, ta, tb, tc):
    m, n, k = 16, 8, 32

    return ("""
kernel @manual%d cube_dim(32) (%%a: buffer<%s, read>, %%b: buffer<%s, read>,
                            %%c: buffer<%s, read>, %%out: buffer<%s, write>) {
  %%fa = fragment matrix<a, 16x8x32, %s, row>
  %%fb = fragment matrix<b, 16x8x32, %s, row>
  %%fc = fragment matrix<accumulator, 16x8x32, %s>
  %%lane = unit_pos_plane : u32
""" % (idx, ta, tb, tc, tc, ta, tb, tc) + fill_by_element("fa", "a", ta, k) + fill_by_element("fb", "b", tb, n) +
        fill_by_element("fc", "c", tc, n) + """  cmma_mma %%fc, %%fa, %%fb, %%fc
  %%nd = cmma_count %%fc : u32
  for %%i = 0:u32 to %%nd step 1:u32 {
    %%r = cmma_row %%fc, %%lane, %%i : u32
    %%col = cmma_col %%fc, %%lane, %%i : u32
    %%o = mul %%r, %d:u32 : u32
    %%x = add %%o, %%col : u32
    %%v = cmma_get %%fc, %%i : %s
    store %%out[%%x], %%v
  }
}
""" % (n, tc))


def check_manual(kf, chk):
    m, n, k = 16, 8, 32
    for idx, (ta, tb, tc) in enumerate(MANUAL_CASES):
        # cubecl: lhs[i][j] = i * 2 + j (M x K), rhs[i][j] = i * 3 + j (K x N).
        code = (lambda v, t: v) if tc == "i32" else MF.encode
        lhs = [code(i * 2 + j, ta) for i in range(m) for j in range(k)]
        rhs = [code(i * 3 + j, tb) for i in range(k) for j in range(n)]
        res = K.run(kf, "manual%d" % idx, "1",
                    {"a": K.Buf(ta, lhs), "b": K.Buf(tb, rhs), "c": K.Buf(tc, [0] * (m * n)),
                     "out": K.Buf(tc, [SENTINEL] * (m * n))}, ["out"])
        if tc == "i32":
            for i in range(m):
                for j in range(n):
                    want = sum((i * 2 + l) * (l * 3 + j) for l in range(k))
                    chk.eq("manual %s x %s out[%d][%d]" % (ta, tb, i, j),
                           res["out"][i * n + j], want)
            continue
        a = [[lhs[i * k + kk] for kk in range(k)] for i in range(m)]
        b = [[rhs[kk * n + j] for j in range(n)] for kk in range(k)]
        exact = scaled_ref(a, ta, b, tb, [[0] * n for _ in range(m)], None, None, k, None)
        for i in range(m):
            for j in range(n):
                got = res["out"][i * n + j]
                label = "manual %s x %s out[%d][%d]" % (ta, tb, i, j)
                check_exact(chk, label, got, exact[i][j])
                want = sum((i * 2 + l) * (l * 3 + j) for l in range(k))
                check_cubecl_tolerance(chk, label, got, float(want))


# ---------------------------------------------------------------------------
# Random codes and scales, bit for bit.

# (A, B, k, scales per row, units of the cube, a unit that returns or None)
RANDOM_CASES = [
    ("f8e4m3", "f8e4m3", 32, 1, 32, None),
    ("f8e5m2", "f8e5m2", 32, 1, 32, None),
    ("f6e2m3", "f6e2m3", 32, 1, 32, None),
    ("f6e3m2", "f6e3m2", 32, 1, 32, None),
    ("f4e2m1", "f4e2m1", 32, 1, 32, None),
    ("f8e5m2", "f8e4m3", 32, 1, 64, None),
    ("f8e4m3", "f6e3m2", 32, 1, 32, None),
    ("f6e2m3", "f4e2m1", 32, 1, 32, None),
    ("f4e2m1", "f8e5m2", 32, 1, 32, 4),
    ("f4e2m1", "f4e2m1", 64, 2, 32, None),
    ("f4e2m1", "f4e2m1", 64, 4, 32, None),
    ("f4e2m1", "f4e2m1", 64, 2, 32, 9),
]
# Unscaled cmma_mma on random codes: (A, B, k).
UNSCALED_CASES = [("f6e3m2", "f8e4m3", 32), ("f4e2m1", "f4e2m1", 64)]


def random_kernel(name, ta, tb, k, scales, units, returner):
    shape = "16x8x%d" % k
    st = "ue8m0" if (scales or 1) == 1 else "vec<%d x ue8m0>" % scales
    ret = ""
    if returner is not None:
        ret = """  %%quit = eq %%lane, %d:u32 : bool
  if %%quit {
    return
  }
""" % returner
    mma = ("cmma_mma_scaled %fc, %fa, %fb, %fc, %s_a, %s_b" if scales
           else "cmma_mma %fc, %fa, %fb, %fc")
    # Unit t names row t / 4 + 8 (t % 4) of A's scales and column
    # t / 4 + 8 (t % 4) of B's: the units that supply none name rows and
    # columns whose scales are NaN codes.
    return """
kernel @%(name)s cube_dim(%(units)d) (%%a: buffer<%(ta)s, read>, %%b: buffer<%(tb)s, read>,
    %%c: buffer<f32, read>, %%sa: buffer<%(st)s, read>, %%sb: buffer<%(st)s, read>,
    %%out: buffer<f32, write>) {
  %%fa = fragment matrix<a, %(s)s, %(ta)s, row>
  %%fb = fragment matrix<b, %(s)s, %(tb)s, col>
  %%fc = fragment matrix<accumulator, %(s)s, f32>
  %%unit = unit_pos : u32
  %%lane = unit_pos_plane : u32
  %%plane = div %%unit, 32:u32 : u32
  %%base_c = mul %%plane, 128:u32 : u32
%(ret)s  cmma_load %%fa, %%a[0], %(k)d:u32
  cmma_load %%fb, %%b[0], %(k)d:u32
  cmma_load %%fc, %%c[%%base_c], 8:u32, row
  %%q = div %%lane, 4:u32 : u32
  %%t = rem %%lane, 4:u32 : u32
  %%t8 = mul %%t, 8:u32 : u32
  %%idx = add %%q, %%t8 : u32
  %%s_a = load %%sa[%%idx] : %(st)s
  %%s_b = load %%sb[%%idx] : %(st)s
  %(mma)s
  cmma_store %%out[%%base_c], %%fc, 8:u32, row
}
""" % {"name": name, "units": units, "ta": ta, "tb": tb, "st": st, "s": shape, "k": k,
       "ret": ret, "mma": mma}


def randint(rng, lo, hi):
    """A uniform integer in [lo, hi]."""
    return lo + rng.below(hi - lo + 1)


def random_code(rng, t):
    """A code of t that is not a NaN or an infinity."""
    while True:
        c = randint(rng, 0, (1 << CODE_BITS[t]) - 1)
        v = MF.decode(c, t)
        if v != MF.NAN and not (isinstance(v, float) and math.isinf(v)):
            return c


def random_scale(rng):
    # Mostly near 1, some far out: terms that overflow f32, fall to its
    # subnormals or round to zero.
    r = randint(rng, 0, 9)
    if r == 0:
        return randint(rng, 0, 40)
    if r == 1:
        return randint(rng, 200, 254)
    return randint(rng, 112, 142)


def check_random(kf, chk, rng):
    for idx, case in enumerate(RANDOM_CASES + [(ta, tb, k, None, 32, None)
                                               for ta, tb, k in UNSCALED_CASES]):
        ta, tb, k, scales, units, returner = case
        planes = units // 32
        a = [[random_code(rng, ta) for _ in range(k)] for _ in range(16)]
        # B is col-major in memory: column j's K codes together.
        b_cols = [[random_code(rng, tb) for _ in range(k)] for _ in range(8)]
        b = [[b_cols[j][kk] for j in range(8)] for kk in range(k)]
        cs = [[[K.round_to_bits(rng.uniform(-4.0, 4.0), F32) for _ in range(8)]
               for _ in range(16)] for _ in range(planes)]
        s = scales or 1
        # 32 rows / columns of scales: those past 16 / 8 are NaN codes.
        sa = [[random_scale(rng) if r < 16 else NAN_SCALE for _ in range(s)] for r in range(32)]
        sb = [[random_scale(rng) if c < 8 else NAN_SCALE for _ in range(s)] for c in range(32)]
        # Some high bits set in the bytes of f6/f4 codes: ignored when read.
        noise = {"f6e2m3": 0xC0, "f6e3m2": 0xC0, "f4e2m1": 0xF0}

        def with_noise(code, t):
            return code | (noise.get(t, 0) if randint(rng, 0, 3) == 0 else 0)
        st = "ue8m0" if s == 1 else "vec<%d x ue8m0>" % s
        res = K.run(kf, "random%d" % idx, "1",
                    {"a": K.Buf(ta, [with_noise(x, ta) for row in a for x in row]),
                     "b": K.Buf(tb, [with_noise(x, tb) for col in b_cols for x in col]),
                     "c": K.Buf(F32, [x for p in cs for row in p for x in row]),
                     "sa": K.Buf(st, [x for row in sa for x in row], lanes=s),
                     "sb": K.Buf(st, [x for col in sb for x in col], lanes=s),
                     "out": K.Buf(F32, [SENTINEL] * (128 * planes))}, ["out"])
        if returner is not None:
            # The returned unit supplies scale 1 for row and column it names.
            r = returner // 4 + 8 * (returner % 4)
            if r < 16:
                sa[r] = [127] * s
            if r < 8:
                sb[r] = [127] * s
        label = "random%d %s x %s 16x8x%d S=%s" % (idx, ta, tb, k, scales)
        for p in range(planes):
            want = scaled_ref(a, ta, b, tb, cs[p], sa, sb, k, scales)
            for i in range(16):
                for j in range(8):
                    check_exact(chk, "%s plane %d out[%d][%d]" % (label, p, i, j),
                                res["out"][128 * p + i * 8 + j], want[i][j])


INT_RANDOM = [("i8", "u8", 32), ("u8", "i8", 32), ("i8", "i8", 32), ("u8", "u8", 32)]


def int_random_kernel(idx, ta, tb, units):
    return """
kernel @intrandom%(i)d cube_dim(%(u)d) (%%a: buffer<%(ta)s, read>, %%b: buffer<%(tb)s, read>,
    %%c: buffer<i32, read>, %%out: buffer<i32, write>) {
  %%fa = fragment matrix<a, 16x8x32, %(ta)s, row>
  %%fb = fragment matrix<b, 16x8x32, %(tb)s, col>
  %%fc = fragment matrix<accumulator, 16x8x32, i32>
  %%fd = fragment matrix<accumulator, 16x8x32, i32>
  cmma_load %%fa, %%a[0], 32:u32
  cmma_load %%fb, %%b[0], 32:u32
  cmma_load %%fc, %%c[0], 16:u32, col
  cmma_mma %%fd, %%fa, %%fb, %%fc
  cmma_store %%out[0], %%fd, 8:u32, row
}
""" % {"i": idx, "u": units, "ta": ta, "tb": tb}


def check_int_random(kf, chk, rng):
    for idx, (ta, tb, k) in enumerate(INT_RANDOM):
        lo = lambda t: -128 if t == "i8" else 0  # noqa: E731
        a = [[randint(rng, lo(ta), lo(ta) + 255) for _ in range(k)] for _ in range(16)]
        b_cols = [[randint(rng, lo(tb), lo(tb) + 255) for _ in range(k)] for _ in range(8)]
        # C col-major with stride 16, near the ends of i32 so that sums wrap.
        c = [[[randint(rng, -2 ** 31, -2 ** 31 + 300000),
                  randint(rng, 2 ** 31 - 300000, 2 ** 31 - 1),
                  randint(rng, -1000, 1000)][rng.below(3)] for _ in range(8)] for _ in range(16)]
        res = K.run(kf, "intrandom%d" % idx, "1",
                    {"a": K.Buf(ta, [x for row in a for x in row]),
                     "b": K.Buf(tb, [x for col in b_cols for x in col]),
                     "c": K.Buf("i32", [c[i][j] for j in range(8) for i in range(16)]),
                     "out": K.Buf("i32", [0x7EEEEEEE] * 128)}, ["out"])
        for i in range(16):
            for j in range(8):
                want = K.wrap(c[i][j] + sum(a[i][kk] * b_cols[j][kk] for kk in range(k)), "i32")
                chk.eq("intrandom %s x %s out[%d][%d]" % (ta, tb, i, j),
                       res["out"][i * 8 + j], want)


# ---------------------------------------------------------------------------
# fp4 fragments loaded straight from packed f4e2m1x2 memory: the index counts
# the memory's elements (lines of bytes), the stride counts fp4 values, two a
# byte (an odd stride starts rows on high nibbles).

def packed_kernel(packed):
    """A from lines of packed bytes (stride 65) and B from packed bytes
    (stride 66), or, for the one not named by \p packed, from one code a
    byte at the same scalar positions: a nibble mix-up in one operand
    changes the products, not only their order."""
    ta = "vec<4 x f4e2m1x2>" if packed == "a" else "vec<8 x f4e2m1>"
    tb = "f4e2m1x2" if packed == "b" else "vec<2 x f4e2m1>"
    return """
kernel @packed_%s cube_dim(32) (%%a: buffer<%s, read>,
    %%b: buffer<%s, read>, %%c: buffer<f32, read>, %%sa: buffer<vec<2 x ue8m0>, read>,
    %%sb: buffer<vec<2 x ue8m0>, read>, %%out: buffer<f32, write>, %%ia: u32, %%ib: u32) {
  %%fa = fragment matrix<a, 16x8x64, f4e2m1, row>
  %%fb = fragment matrix<b, 16x8x64, f4e2m1, col>
  %%fc = fragment matrix<accumulator, 16x8x64, f32>
  %%lane = unit_pos_plane : u32
  cmma_load %%fa, %%a[%%ia], 65:u32
  cmma_load %%fb, %%b[%%ib], 66:u32
  cmma_load %%fc, %%c[0], 8:u32, row
  %%q = div %%lane, 4:u32 : u32
  %%t = rem %%lane, 4:u32 : u32
  %%t8 = mul %%t, 8:u32 : u32
  %%idx = add %%q, %%t8 : u32
  %%s_a = load %%sa[%%idx] : vec<2 x ue8m0>
  %%s_b = load %%sb[%%idx] : vec<2 x ue8m0>
  cmma_mma_scaled %%fc, %%fa, %%fb, %%fc, %%s_a, %%s_b
  cmma_store %%out[0], %%fc, 8:u32, row
}
""" % (packed, ta, tb)


def check_packed(kf, chk, rng, checked):
    k = 64
    # Values: A's row r at scalar 8 * ia + 65 r, B's column j at 2 * ib + 66 j.
    for packed, ia, ib, short in (("a", 1, 3, False), ("b", 1, 3, False),
                                  ("a", 2, 0, True), ("b", 2, 0, True)):
        a_first, b_first = 8 * ia, 2 * ib
        a_scalars = a_first + 65 * 15 + k
        b_scalars = b_first + 66 * 7 + k
        a_mem = [rng.below(16) for _ in range(a_scalars + (a_scalars % 8 and 8 - a_scalars % 8))]
        b_mem = [rng.below(16) for _ in range(b_scalars + b_scalars % 2)]
        if short:  # the last rows / columns partly past the end
            a_mem = a_mem[:len(a_mem) - 8 * 9]
            b_mem = b_mem[:len(b_mem) - 2 * 40]
        def at(mem, s):
            return mem[s] if s < len(mem) else None
        a = [[at(a_mem, a_first + 65 * r + kk) for kk in range(k)] for r in range(16)]
        b = [[at(b_mem, b_first + 66 * j + kk) for j in range(8)] for kk in range(k)]
        if short and not checked:
            continue  # out of bounds is only defined in the checked variant
        a = [[0 if x is None else x for x in row] for row in a]
        b = [[0 if x is None else x for x in row] for row in b]
        cs = [[K.round_to_bits(rng.uniform(-2.0, 2.0), F32) for _ in range(8)] for _ in range(16)]
        sa = [[randint(rng, 117, 137) if r < 16 else NAN_SCALE for _ in range(2)] for r in range(32)]
        sb = [[randint(rng, 117, 137) if c < 8 else NAN_SCALE for _ in range(2)] for c in range(32)]
        res = K.run(kf, "packed_" + packed, "1",
                    {"a": K.Buf("vec<4 x f4e2m1x2>", pack_fp4(a_mem), lanes=4)
                     if packed == "a" else K.Buf("vec<8 x f4e2m1>", a_mem, lanes=8),
                     "b": K.Buf("f4e2m1x2", pack_fp4(b_mem))
                     if packed == "b" else K.Buf("vec<2 x f4e2m1>", b_mem, lanes=2),
                     "c": K.Buf(F32, [x for row in cs for x in row]),
                     "sa": K.Buf("vec<2 x ue8m0>", [x for row in sa for x in row], lanes=2),
                     "sb": K.Buf("vec<2 x ue8m0>", [x for col in sb for x in col], lanes=2),
                     "out": K.Buf(F32, [SENTINEL] * 128), "ia": str(ia), "ib": str(ib)}, ["out"])
        want = scaled_ref(a, "f4e2m1", b, "f4e2m1", cs, sa, sb, k, 2)
        for i in range(16):
            for j in range(8):
                check_exact(chk, "packed %s ia=%d ib=%d out[%d][%d]" % (packed, ia, ib, i, j),
                            res["out"][i * 8 + j], want[i][j])


# ---------------------------------------------------------------------------
# The per-unit layout of the new shapes, and cmma_get of loaded codes.

LAYOUT_CASES = [("a", "f8e4m3", 32), ("b", "f6e2m3", 32), ("a", "f4e2m1", 64),
                ("b", "f4e2m1", 64), ("a", "f8e5m2", 32), ("b", "f6e3m2", 32),
                ("a", "i8", 32), ("b", "u8", 32)]


def layout_kernel(idx, use, t, k):
    rows, cols = (16, k) if use == "a" else (k, 8)
    layout = "row" if use == "a" else "col"
    stride = cols if use == "a" else rows
    return """
kernel @layout%(i)d cube_dim(32) (%%m: buffer<%(t)s, read>, %%pos: buffer<u32, write>,
                                %%got: buffer<%(t)s, write>) {
  %%f = fragment matrix<%(u)s, 16x8x%(k)d, %(t)s, %(l)s>
  cmma_load %%f, %%m[0], %(s)d:u32
  %%lane = unit_pos_plane : u32
  %%n = cmma_count %%f : u32
  %%base = mul %%lane, %%n : u32
  for %%i = 0:u32 to %%n step 1:u32 {
    %%e = add %%base, %%i : u32
    %%r = cmma_row %%f, %%lane, %%i : u32
    %%c = cmma_col %%f, %%lane, %%i : u32
    %%e2 = mul %%e, 2:u32 : u32
    %%e21 = add %%e2, 1:u32 : u32
    store %%pos[%%e2], %%r
    store %%pos[%%e21], %%c
    %%x = cmma_get %%f, %%i : %(t)s
    store %%got[%%e], %%x
  }
}
""" % {"i": idx, "t": t, "u": use, "k": k, "l": layout, "s": stride}


def expected_get(code, t):
    """The code cmma_get gives back for a loaded byte (LangRef §5.7)."""
    if t in ("i8", "u8"):
        return code
    c = code & ((1 << CODE_BITS[t]) - 1)
    v = MF.decode(c, t)
    if v == MF.NAN:
        return MF.nan_code(t, (c >> (CODE_BITS[t] - 1)) & 1 == 1)
    return c


def check_layout(kf, chk, rng):
    for idx, (use, t, k) in enumerate(LAYOUT_CASES):
        rows, cols = (16, k) if use == "a" else (k, 8)
        count = rows * cols // 32
        mem = [randint(rng, 0, 255) for _ in range(rows * cols)]
        if t == "i8":
            mem = [K.wrap(x, "i8") for x in mem]
        res = K.run(kf, "layout%d" % idx, "1",
                    {"m": K.Buf(t, mem), "pos": K.Buf("u32", [0xFFFFFFFF] * (64 * count)),
                     "got": K.Buf(t, [0xAA] * (32 * count))}, ["pos", "got"])
        seen = set()
        label = "layout %s %s 16x8x%d" % (use, t, k)
        for lane in range(32):
            for n in range(count):
                e = lane * count + n
                r, c = position(use, k, lane, n)
                seen.add((r, c))
                chk.eq("%s unit %d element %d" % (label, lane, n),
                       (res["pos"][2 * e], res["pos"][2 * e + 1]), (r, c))
                at = r * cols + c if use == "a" else c * rows + r
                chk.eq("%s unit %d get %d" % (label, lane, n), res["got"][e],
                       expected_get(mem[at], t))
        chk.ok("%s covers the fragment once" % label, len(seen) == rows * cols,
               "%d positions" % len(seen))


# ---------------------------------------------------------------------------

def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    rng = K.Rng(61)
    kf = os.path.join(work, "cmmascaled.kiln")
    with open(kf, "w") as f:
        f.write("// Generated by test/Conformance/Inputs/cmmascaled.py\n")
        for idx, (ta, tb, k, factor) in enumerate(SCALED_PORTS + [FP4_PORT]):
            f.write(scaled_port_kernel("scaled_port%d" % idx, ta, tb, k, factor))
        for idx, (ta, tb, tc) in enumerate(MANUAL_CASES):
            f.write(manual_kernel(idx, ta, tb, tc))
        for idx, (ta, tb, k) in enumerate(INT_RANDOM):
            f.write(int_random_kernel(idx, ta, tb, 32))
        for idx, case in enumerate(RANDOM_CASES + [(ta, tb, k, None, 32, None)
                                                   for ta, tb, k in UNSCALED_CASES]):
            f.write(random_kernel("random%d" % idx, *case))
        for idx, (use, t, k) in enumerate(LAYOUT_CASES):
            f.write(layout_kernel(idx, use, t, k))
        f.write(packed_kernel("a"))
        f.write(packed_kernel("b"))
    K.roundtrip(kf)
    chk = K.Checker("cmma-scaled")
    for variant in ([], ["--no-bounds-check"]):
        K.EXTRA_OPTIONS[:] = variant
        chk.prefix = "[%s] " % (" ".join(variant) or "bounds-checked")
        check_scaled_ports(kf, chk)
        check_manual(kf, chk)
        check_random(kf, chk, rng)
        check_int_random(kf, chk, rng)
        check_packed(kf, chk, rng, checked=not variant)
        check_layout(kf, chk, rng)
    K.EXTRA_OPTIONS[:] = []
    chk.report()


if __name__ == "__main__":
    main()
