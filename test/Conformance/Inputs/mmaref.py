# The fragment multiply's reference and case set-up, shared by cmma.py (plane
# fragments, docs/LangRef.md §5.4) and cmmacube.py (cube fragments, §5.5).
"""Exact references for fragment windows and multiplies:

- a fragment element (r, c) of a window at scalar offset o with stride s is
  memory scalar o + r*s + c (row layout) or o + c*s + r (col layout);
- cmma_mma: for each (i, j), acc = C[i][j], then for k = 0 .. K-1 in order
  acc = f32(A[i][k] * B[k][j] + acc) with one rounding (a fused
  multiply-add), then D[i][j] = acc rounded once to D's element type.

A multiply case is the tuple (m, n, k, input type, C type, D type, A layout,
B layout, C layout, D layout, D is C). mma_kernel writes its kernel and
mma_case_buffers makes its inputs, offsets, strides wider than the fragment
and the expected D buffer; run_mma_case runs it through kiln-run.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

F32 = "f32"
SENTINEL = {"f32": 0x7F7FFFF0, "f16": 0x7BFE, "bf16": 0x7F70}


def fx(b, t):
    return K.bits_to_fraction(b, t)


def rnd(x, t):
    return K.round_to_bits(x, t)


def rand_val(rng, t, lo=-2.0, hi=2.0):
    """A random nonzero value of type t (no zeros: the exact reference has no
    sign of zero)."""
    while True:
        b = rnd(rng.uniform(lo, hi), t)
        if fx(b, t) != 0:
            return b


def window_index(layout, off, stride, r, c):
    return off + (r * stride + c if layout == "row" else c * stride + r)


def read_window(mem, layout, off, stride, rows, cols):
    return [[mem[window_index(layout, off, stride, r, c)] for c in range(cols)]
            for r in range(rows)]


def mma_ref(a, b, c, ta, tc, td, m, n, k):
    """D = A x B + C with the fused, in-order f32 accumulation."""
    d = []
    for i in range(m):
        row = []
        for j in range(n):
            acc = rnd(fx(c[i][j], tc), F32)
            for kk in range(k):
                acc = rnd(fx(a[i][kk], ta) * fx(b[kk][j], ta) + fx(acc, F32), F32)
            row.append(rnd(fx(acc, F32), td))
        d.append(row)
    return d


def span(layout, off, stride, rows, cols):
    """Scalars a window reaches: one past its last element."""
    lines, length = (rows, cols) if layout == "row" else (cols, rows)
    return off + (lines - 1) * stride + length


def mma_kernel(name, case, units, cube):
    """Kernel @name: one multiply of the case's fragments (owned by the cube
    when cube is true, by a plane otherwise), loaded from and stored to
    windows whose offsets and strides are arguments."""
    m, n, k, ta, tc, td, la, lb, lc, ld, same = case
    shape = "%dx%dx%d" % (m, n, k)
    scope = ", cube" if cube else ""
    d = "%fc" if same else "%fd"
    decl_d = ("" if same else
              "  %%fd = fragment matrix<accumulator, %s, %s%s>\n" % (shape, td, scope))
    return ("kernel @%s cube_dim(%d) (%%a: buffer<%s, read>, %%b: buffer<%s, read>, "
            "%%c: buffer<%s, read>, %%d: buffer<%s, read_write>, %%oa: u32, %%ob: u32, "
            "%%oc: u32, %%od: u32, %%sa: u32, %%sb: u32, %%sc: u32, %%sd: u32) {\n"
            "  %%fa = fragment matrix<a, %s, %s, %s%s>\n"
            "  %%fb = fragment matrix<b, %s, %s, %s%s>\n"
            "  %%fc = fragment matrix<accumulator, %s, %s%s>\n%s"
            "  cmma_load %%fa, %%a[%%oa], %%sa\n"
            "  cmma_load %%fb, %%b[%%ob], %%sb\n"
            "  cmma_load %%fc, %%c[%%oc], %%sc, %s\n"
            "  cmma_mma %s, %%fa, %%fb, %%fc\n"
            "  cmma_store %%d[%%od], %s, %%sd, %s\n"
            "}\n" % (name, units, ta, ta, tc, td if not same else tc, shape, ta, la, scope,
                     shape, ta, lb, scope, shape, tc, scope, decl_d, lc, d, d, ld))


class MmaCase:
    """One multiply's buffers and expected D: td (D's type), the offsets
    (oa, ob, oc, od) and strides (sa, sb, sc, sd), a_mem .. d_mem (d_mem holds
    sentinels) and want (d_mem with D's window written)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def mma_case_buffers(case, rng, offsets, pads, d_tail):
    """Random inputs for case at offsets (oa, ob, oc, od), each stride its
    window's line length plus its pad (pa, pb, pc, pd), and D's buffer d_tail
    scalars longer than its window reaches."""
    m, n, k, ta, tc, td, la, lb, lc, ld, same = case
    if same:
        td = tc
    oa, ob, oc, od = offsets
    pa, pb, pc, pd = pads
    sa = (k if la == "row" else m) + pa
    sb = (n if lb == "row" else k) + pb
    sc = (n if lc == "row" else m) + pc
    sd = (n if ld == "row" else m) + pd
    a_mem = [rand_val(rng, ta) for _ in range(span(la, oa, sa, m, k))]
    b_mem = [rand_val(rng, ta) for _ in range(span(lb, ob, sb, k, n))]
    c_mem = [rand_val(rng, tc, -8, 8) for _ in range(span(lc, oc, sc, m, n))]
    d_mem = [SENTINEL[td]] * (span(ld, od, sd, m, n) + d_tail)
    want_d = mma_ref(read_window(a_mem, la, oa, sa, m, k),
                     read_window(b_mem, lb, ob, sb, k, n),
                     read_window(c_mem, lc, oc, sc, m, n), ta, tc, td, m, n, k)
    want = list(d_mem)
    for i in range(m):
        for j in range(n):
            want[window_index(ld, od, sd, i, j)] = want_d[i][j]
    return MmaCase(ta=ta, tc=tc, td=td, offsets=(oa, ob, oc, od),
                   strides=(sa, sb, sc, sd), a_mem=a_mem, b_mem=b_mem, c_mem=c_mem,
                   d_mem=d_mem, want=want)


def run_mma_case(kf, kernel, c):
    """Runs kernel (made by mma_kernel) on case buffers c; returns D's buffer."""
    oa, ob, oc, od = c.offsets
    sa, sb, sc, sd = c.strides
    res = K.run(kf, kernel, "1",
                {"a": K.Buf(c.ta, c.a_mem), "b": K.Buf(c.ta, c.b_mem),
                 "c": K.Buf(c.tc, c.c_mem), "d": K.Buf(c.td, c.d_mem),
                 "oa": str(oa), "ob": str(ob), "oc": str(oc), "od": str(od),
                 "sa": str(sa), "sb": str(sb), "sc": str(sc), "sd": str(sd)}, ["d"])
    return res["d"]


def fill_by_element(frag, mem, t, stride):
    """Kiln IR that fills fragment %FRAG element by element from the
    row-major matrix %MEM (row stride STRIDE, type T): each unit sets its own
    elements (cmma_count, cmma_row, cmma_col, cmma_set), in the kernel's
    %lane."""
    return """  %%n_%(f)s = cmma_count %%%(f)s : u32
  for %%i_%(f)s = 0:u32 to %%n_%(f)s step 1:u32 {
    %%r_%(f)s = cmma_row %%%(f)s, %%lane, %%i_%(f)s : u32
    %%c_%(f)s = cmma_col %%%(f)s, %%lane, %%i_%(f)s : u32
    %%o_%(f)s = mul %%r_%(f)s, %(s)d:u32 : u32
    %%x_%(f)s = add %%o_%(f)s, %%c_%(f)s : u32
    %%v_%(f)s = load %%%(m)s[%%x_%(f)s] : %(t)s
    cmma_set %%%(f)s, %%i_%(f)s, %%v_%(f)s
  }
""" % {"f": frag, "m": mem, "t": t, "s": stride}
