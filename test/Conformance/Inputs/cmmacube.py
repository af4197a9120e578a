# Conformance of cube fragments, a unit's own fragment elements and the
# ldmatrix-style load (docs/LangRef.md §5.5, §5.6).
"""Usage: cmmacube.py WORKDIR

Writes kernels with cube fragments (cmma_fill, cmma_load, cmma_mma,
cmma_cast, cmma_store on fragments owned by the cube), kernels that read and
write a unit's own elements (cmma_count, cmma_row, cmma_col, cmma_get,
cmma_set) and kernels that load with cmma_ldmatrix; runs them with kiln-run
in the bounds-checked and the unchecked variant and compares every output
element with a reference computed here:

- cube fragments multiply as plane fragments do (mmaref.py's mma_ref: for each
  (i, j), acc = C[i][j], then one f32 fused multiply-add per k in order,
  rounded once to D's element type), whatever the shape;
- the per-unit layout, written here from LangRef §5.6: a cube fragment's
  element n of unit u is row-major element n * units + u; a plane fragment
  is cut into 8 x 8 blocks numbered down the columns of blocks, and unit t
  holds elements 2b and 2b + 1 of each block b, at (t / 4, 2 (t % 4) + j) of
  the block (a, accumulator) or (2 (t % 4) + j, t / 4) (b);
- cmma_ldmatrix: unit t's element 2i + j comes from the row named by unit
  8i + t / 4, element 2 (t % 4) + j; with trans, from the row named by unit
  8i + 2 (t % 4) + j, element t / 4.

Also ports cubecl's test_cube_mma_simple, test_cube_mma_simple_tensor,
test_cmma_elemwise_cube (cmma2), test_cmma_manual and
test_cmma_manual_ldmatrix with their inputs and expected values.
"""

import functools
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402
from mmaref import (F32, SENTINEL, fill_by_element, fx, rnd, rand_val,  # noqa: E402
                    mma_kernel, mma_case_buffers, run_mma_case)


def position(use, rows, cols, units, cube, t, n):
    """(row, col) of element n of unit t (LangRef §5.6)."""
    if cube:
        e = n * units + t
        return e // cols, e % cols
    b, j = n // 2, n % 2
    brows = rows // 8
    r0, c0 = 8 * (b % brows), 8 * (b // brows)
    if use == "b":
        return r0 + 2 * (t % 4) + j, c0 + t // 4
    return r0 + t // 4, c0 + 2 * (t % 4) + j


def frag_dims(use, m, n, k):
    return {"a": (m, k), "b": (k, n), "accumulator": (m, n)}[use]


# ---------------------------------------------------------------------------
# cubecl's cube-scope tests.

def simple_kernel(name, units, m, n, k):
    """kernel_simple_f16_workgroup_gmem: Out = Lhs @ Rhs^T on cube fragments."""
    s = "%dx%dx%d" % (m, n, k)
    return """
kernel @%s cube_dim(%d) (%%lhs: buffer<f16, read>, %%rhs: buffer<f16, read>,
                          %%out: buffer<f32, write>) {
  %%a = fragment matrix<a, %s, f16, row, cube>
  %%b = fragment matrix<b, %s, f16, col, cube>
  %%c = fragment matrix<accumulator, %s, f32, cube>
  cmma_load %%a, %%lhs[0], %d:u32
  cmma_load %%b, %%rhs[0], %d:u32
  cmma_fill %%c, 0.0:f32
  cmma_mma %%c, %%a, %%b, %%c
  cmma_store %%out[0], %%c, %d:u32, row
}
""" % (name, units, s, s, s, k, k, n)


def tensor_kernel(name, units, m, n, k):
    """kernel_simple_f16_workgroup_tensor: the k dimension in chunks of k;
    the slices of cubecl's TensorView are an index and a stride."""
    s = "%dx%dx%d" % (m, n, k)
    return """
kernel @%s cube_dim(%d) (%%lhs: buffer<f16, read>, %%rhs: buffer<f16, read>,
                          %%out: buffer<f32, write>, %%size_k: u32) {
  %%a = fragment matrix<a, %s, f16, row, cube>
  %%b = fragment matrix<b, %s, f16, col, cube>
  %%c = fragment matrix<accumulator, %s, f32, cube>
  cmma_fill %%c, 0.0:f32
  for %%ko = 0:u32 to %%size_k step %d:u32 {
    cmma_load %%a, %%lhs[%%ko], %%size_k
    cmma_load %%b, %%rhs[%%ko], %%size_k
    cmma_mma %%c, %%a, %%b, %%c
  }
  cmma_store %%out[0], %%c, %d:u32, row
}
""" % (name, units, s, s, s, k, n)


def elemwise_kernel(name, units, m, n, k):
    """cmma2's kernel: execute_elementwise_op(|row, col, elem| elem * row +
    col + beta) as a loop over the unit's own elements."""
    s = "%dx%dx%d" % (m, n, k)
    return """
kernel @%s cube_dim(%d) (%%out: buffer<f32, read_write>, %%beta: f32) {
  %%mat = fragment matrix<accumulator, %s, f32, row, cube>
  cmma_load %%mat, %%out[0], %d:u32
  %%u = unit_pos : u32
  %%count = cmma_count %%mat : u32
  for %%i = 0:u32 to %%count step 1:u32 {
    %%x = cmma_get %%mat, %%i : f32
    %%r = cmma_row %%mat, %%u, %%i : u32
    %%c = cmma_col %%mat, %%u, %%i : u32
    %%rf = cast %%r : f32
    %%cf = cast %%c : f32
    %%y0 = mul %%x, %%rf : f32
    %%y1 = add %%y0, %%cf : f32
    %%y = add %%y1, %%beta : f32
    cmma_set %%mat, %%i, %%y
  }
  cmma_store %%out[0], %%mat, %d:u32
}
""" % (name, units, s, n, n)


# The shape Kiln's cube fragments take for each of cubecl's cube sizes (any
# multiple of 8 works; these cover square, wide and tall ones).
SIMPLE_CONFIGS = [(32, 16, 16, 16), (64, 32, 32, 16), (128, 64, 32, 32), (256, 32, 64, 16)]
ELEMWISE_CONFIGS = [(64, 16, 16, 16), (128, 32, 16, 8), (256, 64, 64, 16),
                    (96, 16, 16, 16)]  # 96 units: 256 elements do not divide


@functools.lru_cache(maxsize=None)
def f16_value(bits):
    return fx(bits, "f16")


def f32_seq_sum(terms):
    """cubecl's expected value: sum += lhs * rhs in f32, one rounding per op.
    Its inputs are small integers, so every product and partial sum is an
    integer below 2^24, exact in f32: the exact integer sum is that value
    (checked, so that a change of inputs cannot make it wrong silently)."""
    total = 0
    for a, b in terms:
        x, y = f16_value(a), f16_value(b)
        assert x.denominator == 1 and y.denominator == 1 and x >= 0 and y >= 0
        total += int(x) * int(y)
    assert total < 2 ** 24
    return rnd(total, F32)


def check_cubecl_cube(kf, chk):
    for units, m, n, k in SIMPLE_CONFIGS:
        for tensor in (False, True):
            size_k = 2 * k if tensor else k
            lhs = [rnd(i, "f16") for i in range(m * size_k)]
            rhs = [rnd(i % 8, "f16") for i in range(size_k * n)]
            name = "%s_%d" % ("tensor" if tensor else "simple", units)
            args = {"lhs": K.Buf("f16", lhs), "rhs": K.Buf("f16", rhs),
                    "out": K.Buf(F32, [SENTINEL[F32]] * (m * n))}
            if tensor:
                args["size_k"] = str(size_k)
            res = K.run(kf, name, "1", args, ["out"])
            for i in range(m):
                for j in range(n):
                    # test_simple_cube_expected(m, n, k): lhs row i times rhs row j.
                    want = f32_seq_sum([(lhs[i * size_k + kk], rhs[j * size_k + kk])
                                        for kk in range(size_k)])
                    chk.eq("%s out[%d][%d]" % (name, i, j), res["out"][i * n + j], want)
    for units, m, n, k in ELEMWISE_CONFIGS:
        name = "elemwise_%d" % units
        res = K.run(kf, name, "1", {"out": K.Buf(F32, [rnd(1.0, F32)] * (m * n)),
                                    "beta": "2.5"}, ["out"])
        for r in range(m):
            for c in range(n):
                # test_elementwise_cube_expected: 1.0 * row + col + beta.
                chk.eq("%s out[%d][%d]" % (name, r, c), res["out"][r * n + c],
                       rnd(r + c + Fraction(5, 2), F32))


# ---------------------------------------------------------------------------
# Cube fragments on random inputs: every element type, layouts, strides,
# offsets, wide shapes (column strips), D in place, a cast.

CUBE_MMA_CASES = [
    # units, m, n, k, input, C, D, A layout, B layout, C layout, D layout, D is C
    (64, 32, 32, 16, "f16", "f32", "f32", "row", "col", "row", "row", True),
    (128, 32, 96, 16, "bf16", "f32", "f16", "col", "row", "col", "row", False),
    (32, 8, 40, 64, "f32", "f32", "f32", "row", "row", "row", "col", False),
    (256, 16, 128, 8, "f16", "f16", "f16", "row", "col", "row", "row", True),
    (64, 128, 8, 8, "f16", "f32", "f32", "col", "row", "row", "row", True),
    (48, 24, 16, 24, "bf16", "f16", "f32", "col", "col", "col", "col", False),
]


_CUBE_MMA_INPUTS = {}


def cube_mma_inputs(idx, case, rng):
    """The buffers and the expected output of case idx, made once and used in
    both variants (the exact reference is the slow part)."""
    if idx not in _CUBE_MMA_INPUTS:
        _CUBE_MMA_INPUTS[idx] = mma_case_buffers(case[1:], rng, offsets=(5, 2, 3, 1),
                                                 pads=(3, 1, 2, 5), d_tail=2)
    return _CUBE_MMA_INPUTS[idx]


def check_cube_mma(kf, chk, rng):
    for idx, case in enumerate(CUBE_MMA_CASES):
        c = cube_mma_inputs(idx, case, rng)
        got = run_mma_case(kf, "cube_mma%d" % idx, c)
        for e in range(len(c.d_mem)):
            chk.eq("cube_mma%d d[%d]" % (idx, e), got[e], c.want[e])


CAST_KERNEL = """
// A cube accumulator cast to f16 and bf16 and stored; units of the cube
// that returned first do not stop the others.
kernel @cube_cast cube_dim(80) (%x: buffer<f32, read>, %h: buffer<f16, write>,
                                %bh: buffer<bf16, write>) {
  %u = unit_pos : u32
  %early = lt %u, 50:u32 : bool
  if %early {
    return
  }
  %acc = fragment matrix<accumulator, 16x24x8, f32, row, cube>
  %half = fragment matrix<accumulator, 16x24x8, f16, cube>
  %brain = fragment matrix<accumulator, 16x24x8, bf16, cube>
  cmma_load %acc, %x[0], 24:u32
  cmma_cast %half, %acc
  cmma_cast %brain, %acc
  cmma_store %h[0], %half, 24:u32, row
  cmma_store %bh[0], %brain, 16:u32, col
}
"""


def check_cube_cast(kf, chk, rng):
    x = [rnd(rng.uniform(-3, 3), F32) for _ in range(16 * 24)]
    x[0] = rnd(1.0 + 2 ** -11, F32)  # a tie in f16
    x[1] = rnd(70000.0, F32)          # beyond f16
    res = K.run(kf, "cube_cast", "1", {"x": K.Buf(F32, x), "h": K.Buf("f16", [0] * 384),
                                       "bh": K.Buf("bf16", [0] * 384)}, ["h", "bh"])
    for r in range(16):
        for c in range(24):
            v = fx(x[r * 24 + c], F32)
            chk.eq("cube_cast h[%d][%d]" % (r, c), res["h"][r * 24 + c], rnd(v, "f16"))
            chk.eq("cube_cast bh[%d][%d]" % (r, c), res["bh"][c * 16 + r], rnd(v, "bf16"))


# ---------------------------------------------------------------------------
# The per-unit layout itself: every unit reports where each of its elements
# lies, for plane fragments of every shape and use, and cube fragments.

LAYOUT_TYPES = [
    ("a", 16, 8, 16, "f16", False), ("b", 16, 8, 16, "f16", False),
    ("accumulator", 16, 8, 16, "f32", False), ("a", 16, 16, 16, "bf16", False),
    ("b", 32, 8, 16, "f16", False), ("accumulator", 8, 32, 16, "f16", False),
    ("a", 8, 8, 8, "f16", False), ("b", 16, 16, 8, "f32", False),
    ("a", 16, 8, 8, "f32", False), ("accumulator", 24, 16, 8, "f32", True),
]


def layout_kernel(idx, lt, units):
    use, m, n, k, e, cube = lt
    ty = "matrix<%s, %dx%dx%d, %s%s%s>" % (use, m, n, k, e,
                                          "" if use == "accumulator" else ", row",
                                          ", cube" if cube else "")
    return """
// Each unit writes (row, col) of each of its elements and of one element
// number past its count (the row and column counts), and cmma_count.
kernel @layout%d cube_dim(%d) (%%out: buffer<u32, write>, %%cnt: buffer<u32, write>) {
  %%f = fragment %s
  %%u = unit_pos : u32
  %%lane = unit_pos_plane : u32
  %%count = cmma_count %%f : u32
  store %%cnt[%%u], %%count
  %%slots = add %%count, 1:u32 : u32
  %%base = mul %%u, %%slots : u32
  %%who = %s
  for %%i = 0:u32 to %%slots step 1:u32 {
    %%r = cmma_row %%f, %%who, %%i : u32
    %%c = cmma_col %%f, %%who, %%i : u32
    %%s = add %%base, %%i : u32
    %%s2 = mul %%s, 2:u32 : u32
    store %%out[%%s2], %%r
    %%s3 = add %%s2, 1:u32 : u32
    store %%out[%%s3], %%c
  }
}
""" % (idx, units, ty, "add %u, 0:u32 : u32" if cube else "add %lane, 0:u32 : u32")


def layout_units(lt):
    return 48 if lt[5] else 64


def check_layout(kf, chk):
    for idx, lt in enumerate(LAYOUT_TYPES):
        use, m, n, k, e, cube = lt
        rows, cols = frag_dims(use, m, n, k)
        units = layout_units(lt)
        lay_units = units if cube else 32
        count = -(-rows * cols // lay_units)
        slots = count + 1
        res = K.run(kf, "layout%d" % idx, "1",
                    {"out": K.Buf("u32", [0] * (units * slots * 2)),
                     "cnt": K.Buf("u32", [0] * units)}, ["out", "cnt"])
        seen = {}
        for u in range(units):
            who = u if cube else u % 32
            chk.eq("layout%d count[%d]" % (idx, u), res["cnt"][u], count)
            for i in range(slots):
                got = (res["out"][2 * (u * slots + i)], res["out"][2 * (u * slots + i) + 1])
                want = position(use, rows, cols, lay_units, cube, who, i) if i < count \
                    else (rows, cols)
                chk.eq("layout%d unit %d element %d" % (idx, u, i), got, want)
                if i < count and u < lay_units:
                    seen[want] = seen.get(want, 0) + 1
        # Each element of the fragment belongs to exactly one unit.
        inside = {p: c for p, c in seen.items() if p[0] < rows}
        chk.ok("layout%d covers the fragment once" % idx,
               len(inside) == rows * cols and all(c == 1 for c in inside.values()),
               "%d positions" % len(inside))


# ---------------------------------------------------------------------------
# cubecl's test_cmma_manual: each unit fills its elements of A, B and C from
# memory at their positions, multiplies, stores D from its elements.

MANUAL_CONFIGS = [  # a, b, cd, m, n, k (cubecl's CUDA and HIP cases Kiln has)
    ("f32", "f32", "f32", 16, 8, 8),
    ("f16", "f16", "f32", 16, 8, 16),
    ("bf16", "bf16", "f32", 16, 8, 16),
    ("f16", "f16", "f32", 16, 16, 16),
]


def manual_kernel(idx, cfg):
    ta, tb, tc, m, n, k = cfg
    s = "%dx%dx%d" % (m, n, k)

    return ("""
kernel @manual%d cube_dim(32) (%%a: buffer<%s, read>, %%b: buffer<%s, read>,
                            %%c: buffer<%s, read>, %%out: buffer<%s, write>) {
  %%fa = fragment matrix<a, %s, %s, row>
  %%fb = fragment matrix<b, %s, %s, row>
  %%fc = fragment matrix<accumulator, %s, %s>
  %%lane = unit_pos_plane : u32
""" % (idx, ta, tb, tc, tc, s, ta, s, tb, s, tc) + fill_by_element("fa", "a", ta, k) +
        fill_by_element("fb", "b", tb, n) + fill_by_element("fc", "c", tc, n) + """  cmma_mma %%fc, %%fa, %%fb, %%fc
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


def manual_inputs(ta, tb, m, n, k):
    # cubecl: lhs[i][j] = i * 2 + j, rhs[i][j] = i * 3 + j, acc 0.
    lhs = [rnd(i * 2 + j, ta) for i in range(m) for j in range(k)]
    rhs = [rnd(i * 3 + j, tb) for i in range(k) for j in range(n)]
    return lhs, rhs


def manual_expected(m, n, k):
    return [sum((i * 2 + l) * (l * 3 + j) for l in range(k)) for i in range(m)
            for j in range(n)]


def check_manual(kf, chk):
    for idx, cfg in enumerate(MANUAL_CONFIGS):
        ta, tb, tc, m, n, k = cfg
        lhs, rhs = manual_inputs(ta, tb, m, n, k)
        res = K.run(kf, "manual%d" % idx, "1",
                    {"a": K.Buf(ta, lhs), "b": K.Buf(tb, rhs), "c": K.Buf(tc, [0] * (m * n)),
                     "out": K.Buf(tc, [SENTINEL[tc]] * (m * n))}, ["out"])
        for e, want in enumerate(manual_expected(m, n, k)):
            chk.eq("manual%d %s %dx%dx%d out[%d]" % (idx, ta, m, n, k, e), res["out"][e],
                   rnd(want, tc))


# ---------------------------------------------------------------------------
# cubecl's test_cmma_manual_ldmatrix, and cmma_ldmatrix against the
# definition on random rows named by every unit.

LDMATRIX_MANUAL = """
kernel @ldmatrix_manual_%(t)s cube_dim(32) (%%a: buffer<%(t)s, read>, %%b: buffer<%(t)s, read>,
                                        %%c: buffer<f32, read>, %%out: buffer<f32, write>) {
  %%sa = shared %(t)s[256]
  %%sb = shared %(t)s[128]
  %%lane = unit_pos_plane : u32
  // The cube stages A (16 x 16) and B (16 x 8) in shared memory.
  for %%i = 0:u32 to 8:u32 step 1:u32 {
    %%t0 = mul %%i, 32:u32 : u32
    %%e = add %%t0, %%lane : u32
    %%va = load %%a[%%e] : %(t)s
    store %%sa[%%e], %%va
    %%small = lt %%i, 4:u32 : bool
    if %%small {
      %%vb = load %%b[%%e] : %(t)s
      store %%sb[%%e], %%vb
    }
  }
  sync_cube
  %%fa = fragment matrix<a, 16x8x16, %(t)s, row>
  %%fb = fragment matrix<b, 16x8x16, %(t)s, row>
  %%fc = fragment matrix<accumulator, 16x8x16, f32>
  // cubecl: row = lane %% 16, col_a = (lane / 16) * 8; start_b = row * 8.
  %%row = rem %%lane, 16:u32 : u32
  %%half = div %%lane, 16:u32 : u32
  %%col_a = mul %%half, 8:u32 : u32
  %%ra = mul %%row, 16:u32 : u32
  %%start_a = add %%ra, %%col_a : u32
  %%start_b = mul %%row, 8:u32 : u32
  cmma_ldmatrix %%fa, %%sa[%%start_a]
  cmma_ldmatrix %%fb, %%sb[%%start_b], trans
  %%nc = cmma_count %%fc : u32
  for %%j = 0:u32 to %%nc step 1:u32 {
    %%r = cmma_row %%fc, %%lane, %%j : u32
    %%col = cmma_col %%fc, %%lane, %%j : u32
    %%o = mul %%r, 8:u32 : u32
    %%x = add %%o, %%col : u32
    %%v = load %%c[%%x] : f32
    cmma_set %%fc, %%j, %%v
  }
  cmma_mma %%fc, %%fa, %%fb, %%fc
  for %%q = 0:u32 to %%nc step 1:u32 {
    %%r2 = cmma_row %%fc, %%lane, %%q : u32
    %%col2 = cmma_col %%fc, %%lane, %%q : u32
    %%o2 = mul %%r2, 8:u32 : u32
    %%x2 = add %%o2, %%col2 : u32
    %%v2 = cmma_get %%fc, %%q : f32
    store %%out[%%x2], %%v2
  }
}
"""

LDMATRIX_RAW = """
// Every unit of two planes names a row (its own index, in lines of 2 for
// line buffers); each unit then writes all its elements, as numbered. Unit
// %%quit returns first: the row it would name reads as 0.
kernel @ldmatrix_raw%(i)d cube_dim(64) (%%m: buffer<%(mem)s, read>, %%idx: buffer<u32, read>,
                                     %%out: buffer<%(t)s, write>, %%quit: u32) {
  %%u = unit_pos : u32
  %%gone = eq %%u, %%quit : bool
  if %%gone {
    return
  }
  %%mine = load %%idx[%%u] : u32
  %%f = fragment matrix<%(use)s, %(shape)s, %(t)s%(layout)s>
  cmma_ldmatrix %%f, %%m[%%mine]%(trans)s
  %%n = cmma_count %%f : u32
  %%base = mul %%u, %%n : u32
  for %%i = 0:u32 to %%n step 1:u32 {
    %%v = cmma_get %%f, %%i : %(t)s
    %%s = add %%base, %%i : u32
    store %%out[%%s], %%v
  }
}
"""

LDMATRIX_RAW_CASES = [  # use, shape, element, trans, memory lanes
    ("a", "16x8x16", "f16", False, 1), ("b", "16x8x16", "bf16", True, 1),
    ("a", "16x8x16", "bf16", True, 2), ("b", "16x8x16", "f16", False, 1),
    ("accumulator", "16x8x16", "f16", False, 1), ("a", "8x8x8", "f16", True, 1),
    ("b", "16x16x16", "f16", True, 2),
]


def ldmatrix_raw_kernel(i, case):
    use, shape, t, trans, lanes = case
    return LDMATRIX_RAW % {"i": i, "use": use, "shape": shape, "t": t,
                           "layout": "" if use == "accumulator" else ", row",
                           "trans": ", trans" if trans else "",
                           "mem": t if lanes == 1 else "vec<%d x %s>" % (lanes, t)}


def ldmatrix_ref(use, rows, cols, trans, rows_of, t, n):
    """Unit t's element n from the named rows (rows_of[lane] is 8 values)."""
    i, j = n // 2, n % 2
    if trans:
        return rows_of[8 * i + 2 * (t % 4) + j][t // 4]
    return rows_of[8 * i + t // 4][2 * (t % 4) + j]


def check_ldmatrix(kf, chk, rng, checked):
    for t in ("f16", "bf16"):
        lhs, rhs = manual_inputs(t, t, 16, 8, 16)
        res = K.run(kf, "ldmatrix_manual_" + t, "1",
                    {"a": K.Buf(t, lhs), "b": K.Buf(t, rhs), "c": K.Buf(F32, [0] * 128),
                     "out": K.Buf(F32, [SENTINEL[F32]] * 128)}, ["out"])
        for e, want in enumerate(manual_expected(16, 8, 16)):
            chk.eq("ldmatrix_manual_%s out[%d]" % (t, e), res["out"][e], rnd(want, F32))
    for ci, case in enumerate(LDMATRIX_RAW_CASES):
        use, shape, t, trans, lanes = case
        m, n, k = [int(v) for v in shape.split("x")]
        rows, cols = frag_dims(use, m, n, k)
        count = rows * cols // 32
        mem = [rand_val(rng, t) for _ in range(200 * lanes)]
        # Each unit names a row at a random line, within the memory unless
        # the checked variant is running (then some run past its end).
        idx = [rng.below(200 - 8 // lanes + 1) for _ in range(64)]
        if checked:
            idx[3] = 200 - 1   # runs past the end: the tail reads 0
            idx[9] = 4000000000
        # No unit returns; then unit 5 of plane 0 (every case names its row)
        # and unit 1 of plane 1.
        for quit in ((1000, 5, 33) if ci < 2 else (1000,)):
            res = K.run(kf, "ldmatrix_raw%d" % ci, "1",
                        {"m": K.Buf(t if lanes == 1 else "vec<%d x %s>" % (lanes, t), mem,
                                    lanes),
                         "idx": K.Buf("u32", idx), "out": K.Buf(t, [0] * (64 * count)),
                         "quit": str(quit)}, ["out"])
            zero = rnd(0, t)
            for plane in range(2):
                rows_of = []
                for lane in range(32):
                    first = idx[plane * 32 + lane] * lanes
                    gone = plane * 32 + lane == quit
                    rows_of.append([mem[first + e] if first + e < len(mem) and not gone
                                    else zero for e in range(8)])
                for u in range(32):
                    for nn in range(count):
                        want = ldmatrix_ref(use, rows, cols, trans, rows_of, u, nn)
                        if plane * 32 + u == quit:
                            want = 0  # it returned: wrote nothing
                        got = res["out"][(plane * 32 + u) * count + nn]
                        chk.eq("ldmatrix_raw%d quit %d plane %d unit %d element %d"
                               % (ci, quit, plane, u, nn), got, want)


# ---------------------------------------------------------------------------
# Element numbers outside a unit's elements: cmma_get reads 0, cmma_set
# writes nothing; a cube fragment whose elements do not divide among the
# units.

EDGE_KERNEL = """
kernel @edges cube_dim(48) (%out: buffer<f32, write>, %pos: buffer<u32, write>) {
  %u = unit_pos : u32
  %f = fragment matrix<accumulator, 8x8x8, f32, cube>
  cmma_fill %f, 7.0:f32
  %n = cmma_count %f : u32
  // 64 elements over 48 units: 2 each, the second past the fragment for
  // units 16 and up. Every unit sets its elements 0 .. n (n past the count).
  %uf = cast %u : f32
  %stop = add %n, 1:u32 : u32
  for %i = 0:u32 to %stop step 1:u32 {
    %if = cast %i : f32
    %t = mul %if, 100.0:f32 : f32
    %v = add %t, %uf : f32
    cmma_set %f, %i, %v
  }
  cmma_store %out[0], %f, 8:u32, row
  // Each unit's reads of elements 0 .. n, and the position of element 1.
  %base = mul %u, 3:u32 : u32
  for %j = 0:u32 to %stop step 1:u32 {
    %g = cmma_get %f, %j : f32
    %s = add %base, %j : u32
    %s64 = add %s, 64:u32 : u32
    store %out[%s64], %g
  }
  %r1 = cmma_row %f, %u, 1:u32 : u32
  %c1 = cmma_col %f, %u, 1:u32 : u32
  %p2 = mul %u, 2:u32 : u32
  store %pos[%p2], %r1
  %p3 = add %p2, 1:u32 : u32
  store %pos[%p3], %c1
}
"""


def check_edges(kf, chk):
    res = K.run(kf, "edges", "1", {"out": K.Buf(F32, [SENTINEL[F32]] * (64 + 144)),
                                   "pos": K.Buf("u32", [0] * 96)}, ["out", "pos"])
    frag = {}
    for u in range(48):
        for i in range(2):
            e = i * 48 + u
            if e < 64:
                frag[e] = rnd(100 * i + u, F32)
    for e in range(64):
        chk.eq("edges fragment[%d]" % e, res["out"][e], frag[e])
    for u in range(48):
        for i in range(3):
            e = i * 48 + u
            want = frag[e] if i < 2 and e < 64 else rnd(0, F32)
            chk.eq("edges unit %d get %d" % (u, i), res["out"][64 + 3 * u + i], want)
        e = 48 + u
        chk.eq("edges unit %d position 1" % u, (res["pos"][2 * u], res["pos"][2 * u + 1]),
               (e // 8, e % 8))


# ---------------------------------------------------------------------------

def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    rng = K.Rng(23)
    kf = os.path.join(work, "cmmacube.kiln")
    with open(kf, "w") as f:
        f.write("// Generated by test/Conformance/Inputs/cmmacube.py\n")
        for units, m, n, k in SIMPLE_CONFIGS:
            f.write(simple_kernel("simple_%d" % units, units, m, n, k))
            f.write(tensor_kernel("tensor_%d" % units, units, m, n, k))
        for units, m, n, k in ELEMWISE_CONFIGS:
            f.write(elemwise_kernel("elemwise_%d" % units, units, m, n, k))
        for idx, case in enumerate(CUBE_MMA_CASES):
            f.write(mma_kernel("cube_mma%d" % idx, case[1:], case[0], cube=True))
        f.write(CAST_KERNEL)
        for idx, lt in enumerate(LAYOUT_TYPES):
            f.write(layout_kernel(idx, lt, layout_units(lt)))
        for idx, cfg in enumerate(MANUAL_CONFIGS):
            f.write(manual_kernel(idx, cfg))
        for t in ("f16", "bf16"):
            f.write(LDMATRIX_MANUAL % {"t": t})
        for idx, case in enumerate(LDMATRIX_RAW_CASES):
            f.write(ldmatrix_raw_kernel(idx, case))
        f.write(EDGE_KERNEL)
    K.roundtrip(kf)
    chk = K.Checker("cmma-cube")
    for variant in ([], ["--no-bounds-check"]):
        K.EXTRA_OPTIONS[:] = variant
        chk.prefix = "[%s] " % (" ".join(variant) or "bounds-checked")
        check_cubecl_cube(kf, chk)
        check_cube_mma(kf, chk, rng)
        check_cube_cast(kf, chk, rng)
        check_layout(kf, chk)
        check_manual(kf, chk)
        check_ldmatrix(kf, chk, rng, checked=not variant)
        check_edges(kf, chk)
    K.EXTRA_OPTIONS[:] = []
    chk.report()


if __name__ == "__main__":
    main()
