# Conformance of the cooperative matrix operations (cmma, docs/LangRef.md §5.4).
"""Usage: cmma.py WORKDIR

Writes kernels that use fragments (cmma_fill, cmma_load, cmma_store,
cmma_mma, cmma_cast) for every supported shape, input and accumulator type,
row and col layouts, strides wider than the fragment, offsets, line-typed
buffers, shared memory, several planes per cube and cubes per grid, units
that return first, and partly out-of-bounds windows; runs them with kiln-run
in the bounds-checked and the unchecked variant and compares every output
element with a reference computed here (and in mmaref.py) from the same
inputs:

- a fragment element (r, c) of a window at scalar offset o with stride s is
  memory scalar o + r*s + c (row layout) or o + c*s + r (col layout);
- cmma_mma: for each (i, j), acc = C[i][j], then for k = 0 .. K-1 in order
  acc = f32(A[i][k] * B[k][j] + acc) with one rounding (a fused
  multiply-add), then D[i][j] = acc rounded once to D's element type;
- cmma_cast and stores of f16/bf16 round to nearest even.

Everything is exact arithmetic on Fractions rounded by kconf.round_to_bits;
nothing comes from Kiln. Also ports cubecl's cmma runtime tests (the
16x16x16 f16 product Out = Lhs @ Rhs^T with lhs[i] = i, rhs[i] = i % 8, its
line-typed variant with an offset, and the f32 -> f16/bf16 casts).
"""

import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402
from mmaref import (F32, SENTINEL, fx, rnd, rand_val, mma_ref,  # noqa: E402
                    mma_kernel, mma_case_buffers, run_mma_case)

# ---------------------------------------------------------------------------
# One fragment multiply in one plane: every shape, type and layout.

MMA_CASES = [
    # m, n, k, input, C, D, A layout, B layout, C layout, D layout, D is C
    (16, 16, 16, "f16", "f32", "f32", "row", "col", "row", "row", True),
    (16, 16, 16, "f16", "f32", "f32", "col", "row", "col", "col", False),
    (16, 16, 16, "f16", "f16", "f16", "row", "row", "row", "col", True),
    (16, 16, 16, "bf16", "f32", "f32", "col", "col", "row", "row", False),
    (16, 16, 16, "bf16", "f32", "f16", "row", "col", "col", "row", False),
    (32, 8, 16, "f16", "f32", "f32", "row", "row", "row", "row", True),
    (32, 8, 16, "f16", "f16", "f32", "col", "col", "col", "row", False),
    (32, 8, 16, "bf16", "f32", "f32", "row", "col", "row", "col", True),
    (8, 32, 16, "f16", "f32", "f32", "row", "col", "row", "row", False),
    (8, 32, 16, "bf16", "f16", "f16", "col", "row", "row", "row", True),
    (8, 32, 16, "f16", "f32", "f16", "col", "col", "col", "col", False),
    (8, 8, 8, "f16", "f32", "f32", "row", "col", "row", "row", True),
    (8, 8, 8, "bf16", "f32", "f32", "col", "row", "col", "row", False),
    (16, 16, 8, "f32", "f32", "f32", "row", "row", "row", "row", True),
    (16, 16, 8, "f32", "f32", "f32", "col", "col", "col", "col", False),
]


def check_mma(kf, chk, rng):
    for idx, case in enumerate(MMA_CASES):
        m, n, k, ta, tc, _, la, lb, lc, ld, _ = case
        # Offsets and strides wider than the fragment (padding between lines).
        c = mma_case_buffers(case, rng, offsets=(3, 5, 1, 7), pads=(2, 3, 1, 4), d_tail=3)
        got = run_mma_case(kf, "mma%d" % idx, c)
        label = "mma%d %dx%dx%d %s->%s/%s %s%s%s%s" % (idx, m, n, k, ta, tc, c.td, la, lb, lc,
                                                       ld)
        for e in range(len(c.d_mem)):
            chk.eq("%s d[%d]" % (label, e), got[e], c.want[e])


# ---------------------------------------------------------------------------
# cubecl's runtime tests, ported.

CUBECL_KERNELS = """
// Out = Lhs @ Rhs^T as cubecl's kernel_simple_f16_m16n16k16_gmem computes it.
kernel @cubecl_simple cube_dim(32) (%lhs: buffer<f16, read>, %rhs: buffer<f16, read>,
                                    %out: buffer<f32, write>) {
  %a = fragment matrix<a, 16x16x16, f16, row>
  %b = fragment matrix<b, 16x16x16, f16, col>
  %c = fragment matrix<accumulator, 16x16x16, f32>
  cmma_load %a, %lhs[0], 16:u32
  cmma_load %b, %rhs[0], 16:u32
  cmma_fill %c, 0.0:f32
  cmma_mma %c, %a, %b, %c
  cmma_store %out[0], %c, 16:u32, row
}

// kernel_simple_1_vectorized_offset: line-typed buffers, an offset in lines.
kernel @cubecl_lines cube_dim(32) (%lhs: buffer<vec<2 x f16>, read>,
                                   %rhs: buffer<vec<2 x f16>, read>,
                                   %out: buffer<vec<4 x f32>, write>, %olhs: u32,
                                   %orhs: u32, %oout: u32) {
  %a = fragment matrix<a, 16x16x16, f16, row>
  %b = fragment matrix<b, 16x16x16, f16, col>
  %c = fragment matrix<accumulator, 16x16x16, f32>
  cmma_load %a, %lhs[%olhs], 16:u32
  cmma_load %b, %rhs[%orhs], 16:u32
  cmma_fill %c, 0.0:f32
  cmma_mma %c, %a, %b, %c
  cmma_store %out[%oout], %c, 16:u32, row
}

// cast_matrix_f16 / cast_matrix_bf16: an f32 accumulator loaded with a
// layout, cast, stored.
kernel @cubecl_cast cube_dim(32) (%input: buffer<f32, read>, %h: buffer<f16, write>,
                                  %bh: buffer<bf16, write>, %back: buffer<f32, write>) {
  %acc = fragment matrix<accumulator, 16x16x16, f32>
  %half = fragment matrix<accumulator, 16x16x16, f16>
  %brain = fragment matrix<accumulator, 16x16x16, bf16>
  %wide = fragment matrix<accumulator, 16x16x16, f32>
  cmma_load %acc, %input[0], 16:u32, row
  cmma_cast %half, %acc
  cmma_store %h[0], %half, 16:u32, row
  cmma_cast %brain, %acc
  cmma_store %bh[0], %brain, 16:u32, col
  cmma_cast %wide, %half
  cmma_store %back[0], %wide, 16:u32, row
}
"""


def check_cubecl(kf, chk, rng):
    lhs = [rnd(i, "f16") for i in range(256)]
    rhs = [rnd(i % 8, "f16") for i in range(256)]
    res = K.run(kf, "cubecl_simple", "1", {"lhs": K.Buf("f16", lhs), "rhs": K.Buf("f16", rhs),
                                           "out": K.Buf(F32, [0] * 256)}, ["out"])
    # Out[i][j] = sum_k lhs[i*16+k] * rhs[j*16+k]: exact integers.
    for i in range(16):
        for j in range(16):
            want = sum((i * 16 + kk) * ((j * 16 + kk) % 8) for kk in range(16))
            chk.eq("cubecl_simple out[%d][%d]" % (i, j), res["out"][i * 16 + j], rnd(want, F32))
    # cubecl's own expected first row and last row (504 and 13944).
    chk.eq("cubecl_simple out[0][0] is cubecl's 504", res["out"][0], rnd(504, F32))
    chk.eq("cubecl_simple out[15][15] is cubecl's 13944", res["out"][255], rnd(13944, F32))

    # Line-typed: lhs shifted by one line of 2 (two leading elements).
    olhs = 1
    lhs2 = [rnd(-7, "f16"), rnd(-9, "f16")] + lhs + [rnd(5, "f16")] * 2
    res = K.run(kf, "cubecl_lines", "1",
                {"lhs": K.Buf("vec<2 x f16>", lhs2, 2), "rhs": K.Buf("vec<2 x f16>", rhs, 2),
                 "out": K.Buf("vec<4 x f32>", [SENTINEL[F32]] * 264, 4), "olhs": str(olhs),
                 "orhs": "0", "oout": "2"}, ["out"])
    for e in range(264):
        if 8 <= e < 264:
            i, j = (e - 8) // 16, (e - 8) % 16
            want = rnd(sum((i * 16 + kk) * ((j * 16 + kk) % 8) for kk in range(16)), F32)
        else:
            want = SENTINEL[F32]
        chk.eq("cubecl_lines out[%d]" % e, res["out"][e], want)

    # Casts: values that round (ties to even), overflow f16, underflow to
    # subnormals and zero, and random ones.
    special = [1.0, -1.0, 65504.0, 65520.0, 70000.0, -1e6, 1e-5, 6e-8, 3e-8, 2.9e-8,
               1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8,
               3.0e38, -3.0e38, 1e-40, 0.1, 1 / 3]
    inp = [rnd(v, F32) for v in special]
    inp += [rnd(rng.uniform(-100, 100), F32) for _ in range(256 - len(inp))]
    res = K.run(kf, "cubecl_cast", "1",
                {"input": K.Buf(F32, inp), "h": K.Buf("f16", [0] * 256),
                 "bh": K.Buf("bf16", [0] * 256), "back": K.Buf(F32, [0] * 256)},
                ["h", "bh", "back"])
    for e in range(256):
        r, c = e // 16, e % 16
        h = rnd(fx(inp[e], F32), "f16")
        chk.eq("cubecl_cast f16 [%d] (%r)" % (e, K.bits_to_float(inp[e], F32)), res["h"][e], h)
        # bh is stored col-major: element (r, c) at c*16 + r.
        chk.eq("cubecl_cast bf16 [%d]" % e, res["bh"][c * 16 + r], rnd(fx(inp[e], F32), "bf16"))
        back = K.bits_to_float(h, "f16")
        chk.eq("cubecl_cast f16->f32 [%d]" % e, res["back"][e], rnd(back, F32))


# ---------------------------------------------------------------------------
# Whole kernels: a tiled matmul over many cubes and planes, from global
# memory and staged through shared memory.

MATMUL_KERNELS = """
// C (m x n, f32) = A (m x k, f16, row-major) x B (k x n, f16, row-major).
// A cube of 64 units is two planes; cube (x, y) computes the 16 x 32 block
// at rows 16y, columns 32x: plane p the 16 x 16 tile at column 32x + 16p.
kernel @matmul_global cube_dim(64) (%a: buffer<f16, read>, %b: buffer<f16, read>,
                                    %c: buffer<f32, write>, %n: u32, %k: u32) {
  %pl = plane_pos : u32
  %cx = cube_pos.x : u32
  %cy = cube_pos.y : u32
  %row = mul %cy, 16:u32 : u32
  %t2 = mul %cx, 2:u32 : u32
  %t = add %t2, %pl : u32
  %col = mul %t, 16:u32 : u32
  %fa = fragment matrix<a, 16x16x16, f16, row>
  %fb = fragment matrix<b, 16x16x16, f16, row>
  %acc = fragment matrix<accumulator, 16x16x16, f32>
  cmma_fill %acc, 0.0:f32
  for %kk = 0:u32 to %k step 16:u32 {
    %ra = mul %row, %k : u32
    %ia = add %ra, %kk : u32
    cmma_load %fa, %a[%ia], %k
    %rb = mul %kk, %n : u32
    %ib = add %rb, %col : u32
    cmma_load %fb, %b[%ib], %n
    cmma_mma %acc, %fa, %fb, %acc
  }
  %rc = mul %row, %n : u32
  %ic = add %rc, %col : u32
  cmma_store %c[%ic], %acc, %n, row
}

// The same product with B given transposed (bt is n x k, row-major), both
// tiles staged through shared memory by the cube's 64 units: the A tile
// row-major, the B tile as a col-major k x n tile; one cube per 16 x 16
// tile. Both planes multiply the same tiles; plane p stores its result
// 4096 elements further. A uniform if on a kernel scalar selects the f16
// output (an accumulator cast to f16).
kernel @matmul_shared cube_dim(64) (%a: buffer<bf16, read>, %bt: buffer<bf16, read>,
                                    %c: buffer<f32, write>, %c16: buffer<f16, write>,
                                    %n: u32, %k: u32, %half: bool) {
  %u = unit_pos : u32
  %pl = plane_pos : u32
  %cx = cube_pos.x : u32
  %cy = cube_pos.y : u32
  %row = mul %cy, 16:u32 : u32
  %col = mul %cx, 16:u32 : u32
  %ta = shared bf16[256]
  %tb = shared bf16[256]
  %fa = fragment matrix<a, 16x16x16, bf16, row>
  %fb = fragment matrix<b, 16x16x16, bf16, col>
  %acc = fragment matrix<accumulator, 16x16x16, f32>
  cmma_fill %acc, 0.0:f32
  for %kk = 0:u32 to %k step 16:u32 {
    for %e = %u to 256:u32 step 64:u32 {
      %r = div %e, 16:u32 : u32
      %q = rem %e, 16:u32 : u32
      %ar = add %row, %r : u32
      %ao = mul %ar, %k : u32
      %ak = add %kk, %q : u32
      %ai = add %ao, %ak : u32
      %av = load %a[%ai] : bf16
      store %ta[%e], %av
      %br = add %col, %r : u32
      %bo = mul %br, %k : u32
      %bi = add %bo, %ak : u32
      %bv = load %bt[%bi] : bf16
      store %tb[%e], %bv
    }
    sync_cube
    cmma_load %fa, %ta[0], 16:u32
    cmma_load %fb, %tb[0], 16:u32
    cmma_mma %acc, %fa, %fb, %acc
    sync_cube
  }
  %rc = mul %row, %n : u32
  %ic = add %rc, %col : u32
  %ip = mul %pl, 4096:u32 : u32
  %at = add %ic, %ip : u32
  if %half {
    %hacc = fragment matrix<accumulator, 16x16x16, f16>
    cmma_cast %hacc, %acc
    cmma_store %c16[%at], %hacc, %n, row
  } else {
    cmma_store %c[%at], %acc, %n, row
  }
}
"""


def check_matmul(kf, chk, rng):
    for m, n, k in [(16, 32, 16), (32, 64, 48), (48, 32, 64)]:
        a = [rand_val(rng, "f16") for _ in range(m * k)]
        b = [rand_val(rng, "f16") for _ in range(k * n)]
        res = K.run(kf, "matmul_global", "%d,%d" % (n // 32, m // 16),
                    {"a": K.Buf("f16", a), "b": K.Buf("f16", b),
                     "c": K.Buf(F32, [SENTINEL[F32]] * (m * n)), "n": str(n), "k": str(k)},
                    ["c"])
        want = mma_ref([a[i * k:(i + 1) * k] for i in range(m)],
                       [b[r * n:(r + 1) * n] for r in range(k)],
                       [[0] * n for _ in range(m)], "f16", F32, F32, m, n, k)
        for i in range(m):
            for j in range(n):
                chk.eq("matmul_global %dx%dx%d c[%d][%d]" % (m, n, k, i, j),
                       res["c"][i * n + j], want[i][j])
    for m, n, k, half in [(16, 16, 16, False), (32, 48, 32, False), (32, 16, 48, True)]:
        a = [rand_val(rng, "bf16") for _ in range(m * k)]
        bt = [rand_val(rng, "bf16") for _ in range(n * k)]
        # Plane 1's store lands 4096 further: give the buffers room for it.
        size = 4096 + m * n
        tc = "f16" if half else F32
        res = K.run(kf, "matmul_shared", "%d,%d" % (n // 16, m // 16),
                    {"a": K.Buf("bf16", a), "bt": K.Buf("bf16", bt),
                     "c": K.Buf(F32, [0] * (1 if half else size)),
                     "c16": K.Buf("f16", [0] * (size if half else 1)), "n": str(n),
                     "k": str(k), "half": "true" if half else "false"},
                    ["c16" if half else "c"])
        out = res["c16" if half else "c"]
        want = mma_ref([a[i * k:(i + 1) * k] for i in range(m)],
                       [[bt[j * k + r] for j in range(n)] for r in range(k)],
                       [[0] * n for _ in range(m)], "bf16", F32, tc, m, n, k)
        for p in (0, 1):
            for i in range(m):
                for j in range(n):
                    chk.eq("matmul_shared %dx%dx%d %s plane %d c[%d][%d]" % (m, n, k, tc, p, i, j),
                           out[p * 4096 + i * n + j], want[i][j])


# ---------------------------------------------------------------------------
# Planes whose units returned, fill values, uniform control flow.

PLANE_KERNELS = """
// 96 units: three planes. Plane 1 returns whole, plane 2 loses lanes 0..4
// first. Each remaining plane fills an accumulator with the value of its
// first running unit and stores it col-major at 256 * plane.
kernel @returned cube_dim(96) (%vals: buffer<f32, read>, %out: buffer<f32, read_write>) {
  %u = unit_pos : u32
  %pl = plane_pos : u32
  %lane = unit_pos_plane : u32
  %isp1 = eq %pl, 1:u32 : bool
  %isp2 = eq %pl, 2:u32 : bool
  %low = lt %lane, 5:u32 : bool
  %drop2 = and %isp2, %low : bool
  %drop = or %isp1, %drop2 : bool
  if %drop {
    return
  }
  %v = load %vals[%u] : f32
  %f = fragment matrix<accumulator, 16x16x16, f32>
  cmma_fill %f, %v
  %at = mul %pl, 256:u32 : u32
  cmma_store %out[%at], %f, 16:u32, col
}

// An f16 accumulator filled with a literal and a bf16 one with a scalar,
// stored with padded strides, inside a uniform loop (twice, the second time
// one line further).
kernel @fills cube_dim(32) (%x: bf16, %h: buffer<f16, write>, %bh: buffer<bf16, write>) {
  %fh = fragment matrix<accumulator, 32x8x16, f16>
  %fbh = fragment matrix<accumulator, 8x32x16, bf16>
  for %i = 0:u32 to 2:u32 {
    cmma_fill %fh, 1.5:f16
    cmma_fill %fbh, %x
    %oh = mul %i, 10:u32 : u32
    cmma_store %h[%oh], %fh, 10:u32, row
    %ob = mul %i, 9:u32 : u32
    cmma_store %bh[%ob], %fbh, 9:u32, col
  }
}
"""


def check_planes(kf, chk, rng):
    vals = [rnd(rng.uniform(-10, 10), F32) for _ in range(96)]
    res = K.run(kf, "returned", "1",
                {"vals": K.Buf(F32, vals), "out": K.Buf(F32, [SENTINEL[F32]] * 768)}, ["out"])
    firsts = {0: vals[0], 2: vals[64 + 5]}
    for e in range(768):
        p = e // 256
        want = firsts.get(p, SENTINEL[F32])
        chk.eq("returned out[%d] (plane %d)" % (e, p), res["out"][e], want)
    x = rnd(-0.375, "bf16")
    res = K.run(kf, "fills", "1", {"x": "-0.375",
                                    "h": K.Buf("f16", [SENTINEL["f16"]] * 330),
                                    "bh": K.Buf("bf16", [SENTINEL["bf16"]] * 300)}, ["h", "bh"])
    want_h = [SENTINEL["f16"]] * 330
    want_bh = [SENTINEL["bf16"]] * 300
    for i in range(2):
        for r in range(32):
            for c in range(8):
                want_h[i * 10 + r * 10 + c] = rnd(1.5, "f16")
        for r in range(8):
            for c in range(32):
                want_bh[i * 9 + c * 9 + r] = x
    for e in range(330):
        chk.eq("fills h[%d]" % e, res["h"][e], want_h[e])
    for e in range(300):
        chk.eq("fills bh[%d]" % e, res["bh"][e], want_bh[e])


# ---------------------------------------------------------------------------
# Bounds-checked variant only: windows partly out of bounds.

BOUNDS_KERNEL = """
// A window that starts in bounds and runs past the end: out-of-bounds
// elements load as 0 and are not stored; an index past the end loads all 0.
kernel @bounds cube_dim(32) (%x: buffer<f32, read>, %out: buffer<f32, write>,
                             %ox: u32, %oo: i32) {
  %f = fragment matrix<accumulator, 8x8x8, f32>
  cmma_load %f, %x[%ox], 8:u32, row
  cmma_store %out[%oo], %f, 8:u32, col
}
"""


def check_bounds(kf, chk, rng):
    x = [rnd(rng.uniform(1, 2), F32) for _ in range(40)]
    for ox, oo, out_len in [(20, 0, 64), (0, 30, 50), (4000000000, 0, 64), (0, -1, 64),
                            (2, 3, 70)]:
        res = K.run(kf, "bounds", "1", {"x": K.Buf(F32, x),
                                        "out": K.Buf(F32, [SENTINEL[F32]] * out_len),
                                        "ox": str(ox), "oo": str(oo)}, ["out"])
        want = [SENTINEL[F32]] * out_len
        for r in range(8):
            for c in range(8):
                src = ox + r * 8 + c
                v = x[src] if src < len(x) else 0
                dst = oo + c * 8 + r
                if 0 <= oo and dst < out_len:
                    want[dst] = v
        for e in range(out_len):
            chk.eq("bounds ox=%d oo=%d out[%d]" % (ox, oo, e), res["out"][e], want[e])


# ---------------------------------------------------------------------------

def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    rng = K.Rng(11)
    kf = os.path.join(work, "cmma.kiln")
    with open(kf, "w") as f:
        f.write("// Generated by test/Conformance/Inputs/cmma.py\n")
        for idx, case in enumerate(MMA_CASES):
            f.write(mma_kernel("mma%d" % idx, case, 32, cube=False) + "\n")
        f.write(CUBECL_KERNELS + MATMUL_KERNELS + PLANE_KERNELS + BOUNDS_KERNEL)
    K.roundtrip(kf)
    chk = K.Checker("cmma")
    for variant in ([], ["--no-bounds-check"]):
        K.EXTRA_OPTIONS[:] = variant
        chk.prefix = "[%s] " % (" ".join(variant) or "bounds-checked")
        check_mma(kf, chk, rng)
        check_cubecl(kf, chk, rng)
        check_matmul(kf, chk, rng)
        check_planes(kf, chk, rng)
    K.EXTRA_OPTIONS[:] = []
    chk.prefix = "[bounds-checked] "
    check_bounds(kf, chk, rng)
    chk.report()


if __name__ == "__main__":
    main()
