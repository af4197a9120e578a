# Runs the classic GPU-pattern kernels of test/Conformance/*.kiln through kiln-run and checks them.
"""Usage: patterns.py KERNEL_FILE PATTERN WORKDIR

Each PATTERN function below generates inputs, runs the kernels of
KERNEL_FILE with kiln-run and compares every output element with a reference
computed here, in Python, from the same inputs (floats bit-exact, emulating
the kernel's order of operations with IEEE round to nearest even). The file
must also round-trip through `kiln-compile --emit=ir`.
"""

import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

F = "f32"


def r32(v):
    """Round an exact value to f32 bits."""
    return K.round_to_bits(v, F)


def fx(b, t=F):
    """Exact value of float bits."""
    return K.bits_to_fraction(b, t)


def add32(a, b):
    return r32(fx(a) + fx(b))


def rand_f32(rng, lo=-4.0, hi=4.0):
    return r32(rng.uniform(lo, hi))


# ---------------------------------------------------------------------------

def elementwise(kf, chk):
    rng = K.Rng(1)
    for n, cubes in [(1, 1), (63, 1), (64, 1), (65, 2), (1000, 16), (1000, 20)]:
        size = cubes * 64 + 5
        a = [rand_f32(rng) for _ in range(size)]
        b = [rand_f32(rng) for _ in range(size)]
        sentinel = r32(-7.25)
        res = K.run(kf, "vadd", str(cubes), {"a": K.Buf(F, a), "b": K.Buf(F, b),
                                             "c": K.Buf(F, [sentinel] * size), "n": str(n)}, ["c"])
        for i in range(size):
            want = add32(a[i], b[i]) if i < n else sentinel
            chk.eq("vadd n=%d c[%d]" % (n, i), res["c"][i], want)
    for n, cubes in [(100, 1), (300, 3), (1, 2)]:
        size = cubes * 128 + 3
        x = [rand_f32(rng) for _ in range(size)]
        y = [rand_f32(rng) for _ in range(size)]
        alpha = rand_f32(rng)
        res = K.run(kf, "saxpy", str(cubes), {"x": K.Buf(F, x), "y": K.Buf(F, y),
                                              "alpha": K.fhex(alpha, F), "n": str(n)}, ["y"])
        for i in range(size):
            want = r32(fx(alpha) * fx(x[i]) + fx(y[i])) if i < n else y[i]
            chk.eq("saxpy n=%d y[%d]" % (n, i), res["y"][i], want)
    for rows, cols, grid in [(5, 13, "2,2"), (9, 9, "2,3"), (1, 1, "1,1"), (17, 30, "4,5")]:
        size = rows * cols + 4
        m = [K.wrap(rng.u64(), "i64") for _ in range(size)]
        res = K.run(kf, "grid2d", grid, {"m": K.Buf("i64", m), "rows": str(rows),
                                         "cols": str(cols)}, ["m"])
        for idx in range(size):
            if idx < rows * cols:
                r, c = divmod(idx, cols)
                want = K.wrap(m[idx] * 3 - r + c, "i64")
            else:
                want = m[idx]
            chk.eq("grid2d %dx%d m[%d]" % (rows, cols, idx), res["m"][idx], want)
    for n, cubes in [(1000, 3), (5, 1), (4096, 7)]:
        a = [rng.below(256) for _ in range(n + 9)]
        res = K.run(kf, "stride", str(cubes), {"a": K.Buf("u8", a), "n": str(n)}, ["a"])
        for i in range(n + 9):
            want = (a[i] * 7 + 1) & 255 if i < n else a[i]
            chk.eq("stride n=%d a[%d]" % (n, i), res["a"][i], want)


# ---------------------------------------------------------------------------

def reduce(kf, chk):
    rng = K.Rng(2)
    for n, cubes in [(256, 1), (1000, 4), (3000, 12), (5, 1)]:
        data = [rand_f32(rng, -100, 100) for _ in range(max(n, 1))]
        res = K.run(kf, "tree_f32", str(cubes), {"in": K.Buf(F, data),
                                                 "partial": K.Buf(F, [0] * cubes), "n": str(n)},
                    ["partial"])
        for c in range(cubes):
            tile = [data[c * 256 + u] if c * 256 + u < n else 0 for u in range(256)]
            s = 128
            while s:
                for u in range(s):
                    tile[u] = add32(tile[u], tile[u + s])
                s >>= 1
            chk.eq("tree_f32 n=%d partial[%d]" % (n, c), res["partial"][c], tile[0])
    for cubes in [1, 3, 16]:
        data = [K.wrap(rng.u64(), "i64") for _ in range(cubes * 100)]
        res = K.run(kf, "loop_i64", str(cubes), {"in": K.Buf("i64", data),
                                                 "out": K.Buf("i64", [0] * cubes)}, ["out"])
        for c in range(cubes):
            chk.eq("loop_i64 out[%d]" % c, res["out"][c],
                   K.wrap(sum(data[c * 100:(c + 1) * 100]), "i64"))
    for rows, cols in [(3, 200), (5, 64), (2, 1), (7, 130)]:
        m = [rng.u64() & 0xffffffff for _ in range(rows * cols)]
        res = K.run(kf, "rowmax_u32", str(rows), {"m": K.Buf("u32", m),
                                                  "out": K.Buf("u32", [7] * rows),
                                                  "cols": str(cols)}, ["out"])
        for r in range(rows):
            chk.eq("rowmax_u32 %dx%d out[%d]" % (rows, cols, r), res["out"][r],
                   max(m[r * cols:(r + 1) * cols]))


def matmul(kf, chk):
    rng = K.Rng(3)
    for m, n, k in [(8, 8, 8), (13, 7, 21), (1, 1, 1), (20, 33, 5), (16, 16, 40)]:
        a = [rand_f32(rng, -2, 2) for _ in range(m * k)]
        b = [rand_f32(rng, -2, 2) for _ in range(k * n)]
        grid = "%d,%d" % ((n + 7) // 8, (m + 7) // 8)
        res = K.run(kf, "matmul_f32", grid, {"a": K.Buf(F, a), "b": K.Buf(F, b),
                                             "c": K.Buf(F, [0] * (m * n)), "m": str(m),
                                             "n": str(n), "k": str(k)}, ["c"])
        for i in range(m):
            for j in range(n):
                acc = r32(0)
                for kk in range(k):
                    acc = add32(acc, r32(fx(a[i * k + kk]) * fx(b[kk * n + j])))
                chk.eq("matmul_f32 %dx%dx%d c[%d][%d]" % (m, n, k, i, j), res["c"][i * n + j],
                       acc)
    # Jammed by 8 with 512-bit code, by 4 with AVX2 code: both checked.
    for extra in K.x86_variants(["--mattr=-avx512f"]):
        for n in [16, 32]:
            a = [rand_f32(rng, -2, 2) for _ in range(n * n)]
            b = [rand_f32(rng, -2, 2) for _ in range(n * n)]
            res = K.run(kf, "matmul_fma16", "%d,%d" % (n // 16, n // 16),
                        {"a": K.Buf(F, a), "b": K.Buf(F, b), "c": K.Buf(F, [0] * (n * n)),
                         "n": str(n)}, ["c"], extra=extra)
            fa = [fx(v) for v in a]
            fb = [fx(v) for v in b]
            for i in range(n):
                for j in range(n):
                    acc = r32(0)
                    for kk in range(n):
                        acc = r32(fa[i * n + kk] * fb[kk * n + j] + fx(acc))
                    chk.eq("matmul_fma16 %s n=%d c[%d][%d]" % (" ".join(extra), n, i, j),
                           res["c"][i * n + j], acc)
    # Several tiles of C a cube: jammed by 2, or only B's rows sunk (AVX2 x4).
    # The same inputs for both ISAs; x4 checks the first cube column (every
    # lane of every row of units, whose order jamming changes), not all 64.
    for tiles, n, cols in [(2, 32, 32), (4, 64, 16)]:
        a = [rand_f32(rng, -2, 2) for _ in range(n * n)]
        b = [rand_f32(rng, -2, 2) for _ in range(n * n)]
        fa = [fx(v) for v in a]
        fb = [fx(v) for v in b]
        want = {}
        for i in range(n):
            for j in range(cols):
                acc = r32(0)
                for kk in range(n):
                    acc = r32(fa[i * n + kk] * fb[kk * n + j] + fx(acc))
                want[i, j] = acc
        name = "matmul_fma16_x%d" % tiles
        for extra in K.x86_variants(["--mattr=-avx512f"]):
            res = K.run(kf, name, "%d,%d" % (n // 16, n // (16 * tiles)),
                        {"a": K.Buf(F, a), "b": K.Buf(F, b), "c": K.Buf(F, [0] * (n * n)),
                         "n": str(n)}, ["c"], extra=extra)
            for (i, j), acc in want.items():
                chk.eq("%s %s n=%d c[%d][%d]" % (name, " ".join(extra), n, i, j),
                       res["c"][i * n + j], acc)
    for s, batches in [(4, 1), (8, 3), (12, 2)]:
        a = [K.wrap(rng.u64(), "i32") for _ in range(s * s * batches)]
        b = [K.wrap(rng.u64(), "i32") for _ in range(s * s * batches)]
        res = K.run(kf, "bmm_i32", "%d,%d,%d" % (s // 4, s // 4, batches),
                    {"a": K.Buf("i32", a), "b": K.Buf("i32", b),
                     "c": K.Buf("i32", [0] * (s * s * batches)), "s": str(s)}, ["c"])
        for z in range(batches):
            o = z * s * s
            for i in range(s):
                for j in range(s):
                    want = K.wrap(sum(a[o + i * s + kk] * b[o + kk * s + j] for kk in range(s)),
                                  "i32")
                    chk.eq("bmm_i32 s=%d batch %d c[%d][%d]" % (s, z, i, j),
                           res["c"][o + i * s + j], want)


def scan(kf, chk):
    rng = K.Rng(4)
    for cubes in [1, 5]:
        data = [rng.u64() & 0xffffffff for _ in range(cubes * 128)]
        res = K.run(kf, "scan_u32", str(cubes), {"in": K.Buf("u32", data),
                                                 "inc": K.Buf("u32", [0] * len(data)),
                                                 "exc": K.Buf("u32", [0] * len(data))},
                    ["inc", "exc"])
        for c in range(cubes):
            run = 0
            for u in range(128):
                i = c * 128 + u
                chk.eq("scan_u32 exc[%d]" % i, res["exc"][i], run)
                run = (run + data[i]) & 0xffffffff
                chk.eq("scan_u32 inc[%d]" % i, res["inc"][i], run)
    for cubes in [1, 3]:
        data = [rand_f32(rng, -10, 10) for _ in range(cubes * 64)]
        res = K.run(kf, "scan_f32", str(cubes), {"in": K.Buf(F, data),
                                                 "inc": K.Buf(F, [0] * len(data))}, ["inc"])
        for c in range(cubes):
            cur = data[c * 64:(c + 1) * 64]
            for step in range(6):
                off = 1 << step
                cur = [add32(cur[u - off], cur[u]) if u >= off else cur[u] for u in range(64)]
            for u in range(64):
                chk.eq("scan_f32 inc[%d]" % (c * 64 + u), res["inc"][c * 64 + u], cur[u])


    for extra in K.x86_variants(["--mattr=-avx512f"]):
        for cubes in [1, 3]:
            data = [rng.u64() & 0xffffffff for _ in range(cubes * 256)]
            tab = [rng.u64() & 0xffffffff for _ in range(256)]
            res = K.run(kf, "scan_planes", str(cubes),
                        {"in": K.Buf("u32", data), "out": K.Buf("u32", [0] * len(data)),
                         "tab": K.Buf("u32", tab), "tri": K.Buf("u32", [0] * len(data))},
                        ["out", "tri"], extra=extra)
            for c in range(cubes):
                run = 0
                for u in range(256):
                    i = c * 256 + u
                    run = (run + data[i]) & 0xffffffff
                    chk.eq("scan_planes %s out[%d]" % (extra, i), res["out"][i], run)
                    t = 7
                    for j in range(0, u + 1, 3):
                        t = (t * 3 + tab[j]) & 0xffffffff
                    chk.eq("scan_planes %s tri[%d]" % (extra, i), res["tri"][i], t)


def kernel_text(kf, name):
    """The text of kernel @name in file kf (from 'kernel @name' to the first
    line that is a lone '}')."""
    text = open(kf).read()
    start = text.index("kernel @%s " % name)
    end = text.index("\n}\n", start) + 3
    return text[start:end]


def rmw_ref(init, vs, t):
    """Final cells 0..8 after the RMW ops of @rmw_* in any order."""
    s = sum(vs)
    out = [K.wrap(init[0] + s, t), K.wrap(init[1] - s, t), min([init[2]] + vs),
           max([init[3]] + vs)]
    a, o, x = init[4], init[5], init[6]
    for v in vs:
        a &= v
        o |= v
        x ^= v
    out += [K.wrap(a, t), K.wrap(o, t), K.wrap(x, t), None, K.wrap(init[8] + s, t)]
    return out


def check_exchange(chk, label, init, vs, olds, final):
    chk.ok(label + " exchange", sorted(olds + [final]) == sorted([init] + vs),
           "returned values and the final value are not a permutation of the initial and "
           "exchanged values")


def atomics(kf, chk):
    rng = K.Rng(5)
    # Histograms.
    for n, cubes, nbins in [(10000, 8, 37), (100, 1, 256), (65536, 32, 1), (5000, 3, 1000)]:
        data = [rng.u64() & 0xffffffff for _ in range(n)]
        res = K.run(kf, "hist_global", str(cubes), {"data": K.Buf("u32", data),
                                                    "bins": K.Buf("u32", [0] * nbins),
                                                    "n": str(n), "nbins": str(nbins)}, ["bins"])
        want = [0] * nbins
        for v in data:
            want[v % nbins] += 1
        chk.eq("hist_global n=%d nbins=%d" % (n, nbins), res["bins"], want)
    for n, cubes in [(50000, 16), (1000, 1), (7, 2)]:
        data = [rng.below(256) if rng.below(4) else 42 for _ in range(n)]
        base = [rng.below(1000) for _ in range(256)]
        res = K.run(kf, "hist_shared", str(cubes), {"data": K.Buf("u8", data),
                                                    "bins": K.Buf("u64", base), "n": str(n)},
                    ["bins"])
        want = list(base)
        for v in data:
            want[v] += 1
        chk.eq("hist_shared n=%d" % n, res["bins"], want)
    # Every RMW op on every atomic type, buffers and shared memory.
    texts = []
    for t in ["i32", "u32", "i64", "u64"]:
        for name in ["rmw", "rmw_shared"]:
            texts.append(kernel_text(kf, name + "_i32").replace("i32", t))
    with open("atomics-types.kiln", "w") as f:
        f.write("\n".join(texts))
    K.roundtrip("atomics-types.kiln")
    for t in ["i32", "u32", "i64", "u64"]:
        for small in (False, True):
            cubes = 8
            n = cubes * 32
            if small:
                vs = [1 + rng.below(1000) for _ in range(n)]
            else:
                vs = [K.wrap(rng.u64() | (1 << rng.below(K.width(t))), t) for _ in range(n)]
            init = [K.wrap(rng.u64(), t) for _ in range(9)]
            if small:
                init = [rng.below(100) for _ in range(9)]
            init[4] = K.wrap(-1, t)  # and: start from all ones
            cells = init + [0] + [0] * n + [0] * 6  # cell 9 is unused
            res = K.run("atomics-types.kiln", "rmw_" + t, str(cubes),
                        {"x": K.Buf(t, vs), "cell": K.Buf(t, cells), "ex": K.Buf(t, [0] * n),
                         "adds": K.Buf(t, [0] * n)}, ["cell", "ex", "adds"])
            got = res["cell"]
            want = rmw_ref(init, vs, t)
            label = "rmw_%s%s" % (t, " small" if small else "")
            for k, w in enumerate(want):
                if w is not None:
                    chk.eq("%s cell %d" % (label, k), got[k], w)
            check_exchange(chk, label, init[7], vs, res["ex"], got[7])
            for i in range(n):
                chk.eq("%s store/load cell %d" % (label, 10 + i), got[10 + i], K.wrap(2 * vs[i], t))
            chk.eq("%s cells past the end untouched" % label, got[10 + n:], [0] * 6)
            if small:
                # The values atomic_add returned chain up: sorted by the old
                # value, each old plus its addend is the next old.
                order = sorted(range(n), key=lambda i: res["adds"][i])
                cur = init[0]
                ok = True
                for i in order:
                    ok = ok and res["adds"][i] == cur
                    cur += vs[i]
                chk.ok(label + " atomic_add old values", ok and cur == got[0],
                       "the returned old values are not the partial sums of one order")
            # Shared memory: 48 units per cube.
            cubes = 5
            n = cubes * 48
            vs2 = (vs * 2)[:n]
            res = K.run("atomics-types.kiln", "rmw_shared_" + t, str(cubes),
                        {"x": K.Buf(t, vs2), "init": K.Buf(t, init),
                         "cell": K.Buf(t, [0] * (9 * cubes)), "ex": K.Buf(t, [0] * n)},
                        ["cell", "ex"])
            for c in range(cubes):
                part = vs2[c * 48:(c + 1) * 48]
                want = rmw_ref(init, part, t)
                for k, w in enumerate(want):
                    if w is not None:
                        chk.eq("%s shared cube %d cell %d" % (label, c, k), res["cell"][c * 9 + k],
                               w)
                check_exchange(chk, "%s shared cube %d" % (label, c), init[7], part,
                               res["ex"][c * 48:(c + 1) * 48], res["cell"][c * 9 + 7])
    # f32 atomic_add.
    cubes = 20
    vals = [r32(rng.below(200) - 100) for _ in range(cubes * 64)]
    res = K.run(kf, "fadd", str(cubes), {"x": K.Buf(F, vals),
                                         "sum": K.Buf(F, [r32(0.5)] + [0] * cubes)}, ["sum"])
    total = sum(fx(v) for v in vals)
    chk.eq("fadd buffer sum", res["sum"][0], r32(total + Fraction(1, 2)))
    for c in range(cubes):
        chk.eq("fadd shared sum cube %d" % c, res["sum"][c + 1],
               r32(sum(fx(v) for v in vals[c * 64:(c + 1) * 64])))


def plane(kf, chk):
    """Lanes of a plane are units [p*P, min((p+1)*P, units)). Where the
    contract is silent, docs/Lowering.md section 6 decides: a shuffle whose
    source lane is outside the plane gives the unit its own value, units that
    returned take no part."""
    rng = K.Rng(6)
    cubes, units = 3, 80
    n = cubes * units
    xs = [rng.u64() & 0xffffffff if rng.below(3) else rng.below(5) for _ in range(n)]
    bs = [int(rng.below(5) != 0) for _ in range(n)]
    # Make one plane all true and one all false.
    for i in range(32):
        bs[i] = 1
        bs[units + 32 + i] = 0
    fs = [r32(rng.below(2000) - 1000) for _ in range(n)]
    res = K.run(kf, "plane_u32", str(cubes), {"x": K.Buf("u32", xs), "b": K.Buf("bool", bs),
                                              "f": K.Buf(F, fs), "r": K.Buf("u32", [0] * (n * 24)),
                                              "fr": K.Buf(F, [0] * (n * 3))}, ["r", "fr"])
    r, fr = res["r"], res["fr"]
    P = r[21]
    chk.ok("plane_dim", P in (4, 8, 16, 32, 64), "plane_dim is %d" % P)
    M = 0xffffffff

    def s32(v):
        return K.wrap(v, "i32")
    for c in range(cubes):
        for p0 in range(0, units, P):
            lanes = list(range(c * units + p0, c * units + min(p0 + P, units)))
            size = len(lanes)
            v = [xs[i] for i in lanes]

            def at(lane, own):
                return v[lane] if 0 <= lane < size else own
            bf = list(v)
            m = P >> 1
            while m:
                bf = [(bf[k] + (bf[k ^ m] if (k ^ m) < size else bf[k])) & M for k in range(size)]
                m >>= 1
            prod = 1
            for x in v:
                prod = prod * x & M
            ballot = [0, 0, 0, 0]
            for k in range(size):
                if bs[lanes[k]]:
                    ballot[k // 32] |= 1 << (k % 32)
            run = 0
            frun = Fraction(0)
            for k, i in enumerate(lanes):
                o = r[i * 24:(i + 1) * 24]
                want = [sum(v) & M, prod, min(v), max(v), (run + v[k]) & M, run, at(3, v[k]),
                        at((k * 5 + 1) % P, v[k]), at(k ^ 1, v[k]), at(k - 1, v[k]),
                        at(k + 2, v[k]), bf[k], int(k == 0), int(all(bs[j] for j in lanes)),
                        int(any(bs[j] for j in lanes))] + ballot + [k, p0 // P, P,
                                                                   to32(min(s32(x) for x in v)),
                                                                   to32(max(s32(x) for x in v))]
                names = ["plane_sum", "plane_prod", "plane_min", "plane_max", "inclusive_sum",
                         "exclusive_sum", "broadcast lane 3", "shuffle", "shuffle_xor 1",
                         "shuffle_up 1", "shuffle_down 2", "butterfly", "elect", "all", "any",
                         "ballot[0]", "ballot[1]", "ballot[2]", "ballot[3]", "unit_pos_plane",
                         "plane_pos", "plane_dim", "plane_min i32", "plane_max i32"]
                for j in range(24):
                    chk.eq("unit %d (cube %d lane %d) %s" % (i, c, k, names[j]), o[j], want[j])
                run = (run + v[k]) & M
                fsum = sum(fx(fs[j]) for j in lanes)
                chk.eq("unit %d f32 plane_sum" % i, fr[i * 3], r32(fsum))
                chk.eq("unit %d f32 plane_max" % i, fr[i * 3 + 1],
                       r32(max(fx(fs[j]) for j in lanes)))
                chk.eq("unit %d f32 plane_exclusive_sum" % i, fr[i * 3 + 2], r32(frun))
                frun += fx(fs[i])
    # Returned units take no part.
    cubes, units = 2, 64
    n = cubes * units
    xs = [rng.below(1000) for _ in range(n)]
    gone = [int(rng.below(3) == 0) for _ in range(n)]
    gone[0] = gone[1] = 1  # the elected lane is not lane 0
    for i in range(32, 64):
        gone[i] = 1  # a whole plane returned
    sentinel = 0xdeadbeef
    res = K.run(kf, "plane_return", str(cubes), {"x": K.Buf("u32", xs),
                                                 "gone": K.Buf("bool", gone),
                                                 "r": K.Buf("u32", [sentinel] * (n * 4))}, ["r"])
    r = res["r"]
    for c in range(cubes):
        for p0 in range(0, units, P):
            lanes = [c * units + p0 + k for k in range(min(P, units - p0))]
            live = [i for i in lanes if not gone[i]]
            ballot = 0
            for i in live:
                ballot |= 1 << ((i - c * units - p0) % 32)
            run = 0
            for i in lanes:
                o = r[i * 4:(i + 1) * 4]
                if gone[i]:
                    chk.eq("plane_return unit %d returned, untouched" % i, o, [sentinel] * 4)
                    continue
                run += xs[i]
                chk.eq("plane_return unit %d plane_sum" % i, o[0], sum(xs[j] for j in live))
                chk.eq("plane_return unit %d elect" % i, o[1], int(i == live[0]))
                if P <= 32:
                    chk.eq("plane_return unit %d ballot[0]" % i, o[2], ballot)
                chk.eq("plane_return unit %d inclusive_sum" % i, o[3], run)


def to32(v):
    return v & 0xffffffff


def mul32(a, b):
    return r32(fx(a) * fx(b))


def dot32(x, y):
    acc = mul32(x[0], y[0])
    for j in range(1, len(x)):
        acc = add32(acc, mul32(x[j], y[j]))
    return acc


def sqrt32(b):
    v = K.bits_to_float(b, F)
    cand = r32(v ** 0.5)
    # Correct rounding checked with exact squares of the neighbours.
    return min((cand - 1, cand, cand + 1), key=lambda c: abs(fx(c) ** 2 - fx(b)))


def div32(a, b):
    return r32(fx(a) / fx(b))


def lines(kf, chk):
    rng = K.Rng(7)
    n = 48
    a = [rand_f32(rng, -3, 3) for _ in range(4 * n)]
    b = [rand_f32(rng, -3, 3) for _ in range(4 * n)]
    a[0:4] = [r32(3.0), r32(4.0), r32(0.0), r32(-12.0)]
    k = [rand_f32(rng) for _ in range(4)]
    res = K.run(kf, "lines_f32", str(n // 16), {
        "a": K.Buf("vec<4 x f32>", a, 4), "b": K.Buf("vec<4 x f32>", b, 4),
        "out": K.Buf("vec<4 x f32>", [0] * (4 * 6 * n), 4), "s": K.Buf(F, [0] * (3 * n)),
        "k": ",".join(K.fhex(v, F) for v in k)}, ["out", "s"])
    out, s = res["out"], res["s"]
    c = [r32(1.0), r32(-2.0), r32(0.5), 0x7f800000]
    one = [r32(1.0)] * 4
    for i in range(n):
        x, y = a[4 * i:4 * i + 4], b[4 * i:4 * i + 4]
        mag = sqrt32(dot32(x, x))
        lane = i % 4
        ins = [y[lane]] * 4
        ins[lane] = x[0]
        w = list(y)
        w[2] = x[1]
        want = [[add32(mul32(x[j], y[j]), k[j]) for j in range(4)],
                [x[j] if fx(x[j]) < fx(y[j]) else y[j] for j in range(4)],
                [div32(x[j], mag) for j in range(4)],
                [x[3], x[2], x[1], x[0]], ins,
                [add32(w[j], c[j]) if j != 3 else 0x7f800000 for j in range(4)]]
        names = ["x*y+k", "select(lt)", "normalize", "vector/extract", "splat/insert",
                 "insert/const"]
        for j in range(6):
            got = out[(6 * i + j) * 4:(6 * i + j + 1) * 4]
            chk.eq("lines_f32 %d %s" % (i, names[j]), [K.fhex(g, F) for g in got],
                   [K.fhex(g, F) for g in want[j]])
        chk.eq("lines_f32 %d dot" % i, K.fhex(s[3 * i], F), K.fhex(dot32(x, y), F))
        chk.eq("lines_f32 %d magnitude" % i, K.fhex(s[3 * i + 1], F), K.fhex(mag, F))
        chk.eq("lines_f32 %d dot with ones" % i, K.fhex(s[3 * i + 2], F), K.fhex(dot32(x, one), F))
    n = 24
    a = [K.wrap(rng.u64(), "i16") for _ in range(3 * n)]
    res = K.run(kf, "lines_i16", str(n // 8), {"a": K.Buf("vec<3 x i16>", a, 3),
                                               "d": K.Buf("i16", [0] * n)}, ["a", "d"])
    for i in range(n):
        x = a[3 * i:3 * i + 3]
        z = [K.wrap(v * 2, "i16") >> 2 for v in x]
        chk.eq("lines_i16 %d" % i, res["a"][3 * i:3 * i + 3], [max(x[j], z[j]) for j in range(3)])
        chk.eq("lines_i16 %d dot" % i, res["d"][i], K.wrap(sum(v * v for v in x), "i16"))


def control(kf, chk):
    rng = K.Rng(8)
    n = 96
    lims = [rng.below(40) for _ in range(n)]
    lims[:8] = [0, 1, 5, 6, 10, 22, 23, 55]
    res = K.run(kf, "divergent", str(n // 32), {"n": K.Buf("u32", lims),
                                                "out": K.Buf("u32", [0] * (3 * n))}, ["out"])
    for i, lim in enumerate(lims):
        acc, j = 0, 0
        while j < lim:
            jv = j
            j += 1
            if jv % 3 == 1:
                continue
            if jv == 5:
                acc += 1000
            elif jv == 21:
                break
            elif jv == 9:
                acc *= 2
            else:
                acc += jv
        cnt = 0
        for p in range(-lim, lim, 3):
            for q in range(p, 4):
                if q != 2:
                    cnt += 1
        start = (lim + 200) & 255
        u8n = len(range(start, 255, 7))
        chk.eq("divergent lim=%d loop/switch" % lim, res["out"][3 * i], acc & 0xffffffff)
        chk.eq("divergent lim=%d nested signed for" % lim, res["out"][3 * i + 1], cnt)
        chk.eq("divergent lim=%d u8 for" % lim, res["out"][3 * i + 2], u8n)
    cubes = 4
    n = cubes * 64
    gone = [int(rng.below(4) == 0) for _ in range(n)]
    gone[64:128] = [1] * 63 + [0]  # one survivor in cube 1
    nb = []
    for i in range(n):
        c = i // 64
        live = [u for u in range(64) if not gone[c * 64 + u]]
        u = i % 64
        later = [v for v in live if v > u]
        nb.append((later[0] if later else live[0]) if live else 0)
    sentinel = 0xabcdef
    res = K.run(kf, "return_barrier", str(cubes), {"gone": K.Buf("bool", gone),
                                                   "nb": K.Buf("u32", nb),
                                                   "out": K.Buf("u32", [sentinel] * n)}, ["out"])
    for c in range(cubes):
        val = {u: (c * 64 + u) * 10 for u in range(64) if not gone[c * 64 + u]}
        for rnd in range(3):
            val = {u: (v + val[nb[c * 64 + u]] + rnd) & 0xffffffff for u, v in val.items()}
        for u in range(64):
            i = c * 64 + u
            chk.eq("return_barrier unit %d" % i, res["out"][i],
                   sentinel if gone[i] else val[u])
    for rounds in [0, 1, 4]:
        cubes = 3
        res = K.run(kf, "all_return", str(cubes), {"out": K.Buf("u32", [sentinel] * 48),
                                                   "rounds": str(rounds)}, ["out"])
        acc = list(range(16))
        for _ in range(rounds):
            acc = [acc[15 - u] + 1 for u in range(16)]
        for c in range(cubes):
            for u in range(16):
                chk.eq("all_return rounds=%d out[%d]" % (rounds, c * 16 + u),
                       res["out"][c * 16 + u], sentinel if c == 1 else acc[u])
    xs = [K.wrap(rng.u64() >> rng.below(40), "i32") for _ in range(64)]
    for mode in [1, 0]:
        res = K.run(kf, "ifelse", "2", {"x": K.Buf("i32", xs), "out": K.Buf("i32", [0] * 64),
                                        "mode": str(mode)}, ["out"])
        r = [K.wrap(v * -3, "i32") if v < 0 else K.wrap(v + 7, "i32") for v in xs]
        for c in range(2):
            part = r[c * 32:(c + 1) * 32]
            if mode == 1:
                want = [part[31 - u] for u in range(32)]
            else:
                want = [K.wrap(part[u] + part[(u + 1) % 32], "i32") for u in range(32)]
            chk.eq("ifelse mode=%d cube %d" % (mode, c), res["out"][c * 32:(c + 1) * 32], want)
    for limit in [0, 2, 6, 50, 1000]:
        res = K.run(kf, "uswitch", "3", {"out": K.Buf("u32", [sentinel] * 48),
                                         "limit": str(limit)}, ["out"])
        acc = list(range(16))
        kv = 0
        returned = False
        while True:
            m = kv % 4
            cur = kv
            kv += 1
            if m == 0:
                acc = [(acc[u] + acc[15 - u]) & 0xffffffff for u in range(16)]
            elif m == 1:
                continue
            elif m == 2:
                if cur >= limit:
                    break
                acc = [a * 3 & 0xffffffff for a in acc]
            else:
                if cur >= 100:
                    returned = True
                    break
                acc = [a + 1 & 0xffffffff for a in acc]
        want = [sentinel] * 16 if returned else acc
        for c in range(3):
            chk.eq("uswitch limit=%d cube %d" % (limit, c), res["out"][c * 16:(c + 1) * 16], want)
    buf = [rng.u64() & 0xffffffff for _ in range(16)]
    res = K.run(kf, "recompute", "2", {"buf": K.Buf("u32", buf), "out": K.Buf("u32", [0] * 32)},
                ["buf", "out"])
    for i in range(16):
        chk.eq("recompute unit %d" % i, res["out"][2 * i:2 * i + 2],
               [i % 8 + 1, (buf[i] + 5) & 0xffffffff])
    chk.eq("recompute buf", res["buf"], [7] * 16)
    for n in [0, 1, 3, 10, 100]:
        res = K.run(kf, "interchange", "2", {"out": K.Buf("u32", [0] * 16), "n": str(n)}, ["out"])
        fin = {}
        early = {}
        for u in range(8):
            acc = 0
            for k in range(n):
                if k == u:
                    break
                if k & 1:
                    continue
                acc += k
                if u == 5 and k >= 2:
                    early[u] = acc + 1000
                    break
            if u not in early:
                fin[u] = acc
        for c in range(2):
            for u in range(8):
                if u in early:
                    want = early[u]
                elif 7 - u in fin:
                    want = fin[7 - u] + fin[u]
                else:
                    continue  # reads the slot of a unit that returned: unspecified
                chk.eq("interchange n=%d unit %d" % (n, c * 8 + u), res["out"][c * 8 + u], want)
    for lo, hi, st in [(250, 255, 10), (0, 255, 50), (3, 3, 1), (200, 255, 7), (0, 16, 3),
                       (9, 2, 1)]:
        res = K.run(kf, "uniform_for", "2", {"out": K.Buf("u32", [0] * 80), "lo": str(lo),
                                             "hi": str(hi), "st": str(st)}, ["out"])
        ks = list(range(lo, hi, st))
        for c in range(2):
            for u in range(8):
                arr = [u] * 4
                for k in ks:
                    arr[k & 3] += k
                # absolute_pos of a (4, 2) cube in a 1-D grid of 2 cubes
                i = c * 4 + u % 4 + (u // 4) * 8
                chk.eq("uniform_for %d..%d step %d unit %d" % (lo, hi, st, i),
                       res["out"][5 * i:5 * i + 5], [u * len(ks)] + arr)


def bounds(kf, chk):
    rng = K.Rng(9)
    la, lb, lc = 37, 20, 9
    n = 64
    a = [rng.u64() & 0xffffffff for _ in range(la)]
    b0 = [5] * lb
    perm = list(range(lb))
    for i in range(lb - 1, 0, -1):
        j = rng.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    oob = [la, la + 1, lb, 2 ** 31, 2 ** 32 - 1, 2 ** 31 - 1, 100000]
    idx = []
    for i in range(n):
        idx.append(perm.pop() if perm and rng.below(2) else oob[rng.below(len(oob))])
    for variant, indices in [("checked", idx), ("checked, in bounds", [i % lc for i in range(n)]),
                             ("unchecked, in bounds", [i % lc for i in range(n)])]:
        extra = ["--no-bounds-check"] if variant.startswith("unchecked") else []
        bsize = lb if variant == "checked" else n
        c0 = [0] * lc
        res = K.run(kf, "oob_u32", str(n // 16), {
            "a": K.Buf("u32", a), "b": K.Buf("u32", [5] * bsize), "c": K.Buf("u32", c0),
            "idx": K.Buf("u32", indices), "out": K.Buf("u32", [0] * (3 * n))},
            ["b", "c", "out"], extra=extra)
        wantb = [5] * bsize
        wantc = list(c0)
        for i, k in enumerate(indices):
            if k < bsize and variant == "checked":
                wantb[k] = 1000 + i
            if k < lc:
                wantc[k] += 1
        if variant != "checked":
            # Several units store to b[k] for the same k: any of them may win.
            for k in range(bsize):
                writers = [1000 + i for i, kk in enumerate(indices) if kk == k]
                chk.ok("oob_u32 %s b[%d]" % (variant, k),
                       res["b"][k] in (writers or [5]), "got %d" % res["b"][k])
        else:
            chk.eq("oob_u32 %s b" % variant, res["b"], wantb)
        chk.eq("oob_u32 %s c" % variant, res["c"], wantc)
        olds = {}
        for i, k in enumerate(indices):
            o = res["out"][3 * i:3 * i + 3]
            chk.eq("oob_u32 %s unit %d load a[%d]" % (variant, i, k), o[0],
                   a[k] if k < la else 0)
            chk.eq("oob_u32 %s unit %d len" % (variant, i), o[2], la)
            if k >= lc:
                chk.eq("oob_u32 %s unit %d atomic old at %d" % (variant, i, k), o[1], 0)
            else:
                olds.setdefault(k, []).append(o[1])
        for k, vals in olds.items():
            chk.eq("oob_u32 %s old values at c[%d]" % (variant, k), sorted(vals),
                   list(range(len(vals))))
    # Signed, 64-bit, shared and local indices.
    units, la = 8, 5
    a = [rand_f32(rng) for _ in range(la)]
    si = [0, -1, 2, 8, 4, -2 ** 31, 6, 100]
    wi = [2 ** 32, 1, 2 ** 63, 3, 4, 8, 2 ** 64 - 1, 7]
    res = K.run(kf, "oob_mixed", "1", {"a": K.Buf(F, a), "si": K.Buf("i32", si),
                                       "wi": K.Buf("u64", wi),
                                       "out": K.Buf(F, [0] * (7 * units))}, ["a", "out"])
    wanta = list(a)
    for u in range(units):
        s, w = si[u], wi[u]
        o = res["out"][7 * u:7 * u + 7]
        want = [a[s] if 0 <= s < la else 0, a[w] if w < la else 0,
                r32(s) if 0 <= s < 8 else 0, r32(s) if 0 <= s < 4 else 0,
                r32(w) if w < 8 else 0]
        loc = [r32(j) for j in range(4)]
        if w < 4:
            loc[w] = r32(99)
        want.append(add32(loc[0], loc[3]))
        mine = r32(77) if w == u else r32(u)
        if s == u:
            mine = add32(mine, r32(0.5))
        want.append(mine)
        if 0 <= s < la:
            wanta[s] = r32(-float(u))  # neg of 0.0 is -0.0
        chk.eq("oob_mixed unit %d (s=%d, w=%d)" % (u, s, w), [K.fhex(v, F) for v in o],
               [K.fhex(v, F) for v in want])
    chk.eq("oob_mixed a after", [K.fhex(v, F) for v in res["a"]],
           [K.fhex(v, F) for v in wanta])


def builtins(kf, chk):
    dx, dy, dz = 3, 2, 4
    for X, Y, Z in [(1, 1, 1), (2, 3, 4), (5, 1, 2), (1, 4, 1)]:
        total = X * Y * Z * dx * dy * dz
        res = K.run(kf, "where", "%d,%d,%d" % (X, Y, Z), {"out": K.Buf("u32", [0] * (19 * total))},
                    ["out"])
        out = res["out"]
        seen = 0
        for cz in range(Z):
            for cy in range(Y):
                for cx in range(X):
                    for uz in range(dz):
                        for uy in range(dy):
                            for ux in range(dx):
                                ax, ay, az = cx * dx + ux, cy * dy + uy, cz * dz + uz
                                a = ax + ay * (X * dx) + az * (X * dx) * (Y * dy)
                                want = [ux + uy * dx + uz * dx * dy, ux, uy, uz,
                                        cx + cy * X + cz * X * Y, cx, cy, cz, dx * dy * dz, dx,
                                        dy, dz, X * Y * Z, X, Y, Z, ax, ay, az]
                                chk.eq("where grid %d,%d,%d unit at %d" % (X, Y, Z, a),
                                       out[19 * a:19 * a + 19], want)
                                seen += 1
        chk.eq("where grid %d,%d,%d units" % (X, Y, Z), seen, total)
    res = K.run(kf, "planes", "2", {"out": K.Buf("u32", [0] * (3 * 140))}, ["out"])
    P = res["out"][2]
    for at in range(140):
        u = at % 70
        chk.eq("planes unit %d" % at, res["out"][3 * at:3 * at + 3], [u % P, u // P, P])
    rng = K.Rng(10)
    n = 64
    data = [K.wrap(rng.u64(), "i16") for _ in range(8 * n)]
    res = K.run(kf, "state", str(n // 32), {"in": K.Buf("i16", data),
                                            "out": K.Buf("i16", [0] * (8 * n)),
                                            "lens": K.Buf("u32", [0] * 3)}, ["out", "lens"])
    for i in range(n):
        row = data[8 * i:8 * i + 8]
        acc = K.wrap(sum(row), "i16")
        want = [K.wrap(v * 3 + acc - 4, "i16") for v in reversed(row)]
        chk.eq("state unit %d" % i, res["out"][8 * i:8 * i + 8], want)
    chk.eq("state len of buffer, local array, buffer", res["lens"], [8 * n, 8, 3])


def scratch(kf, chk):
    rng = K.Rng(12)
    cubes = 6
    n = cubes * 24
    a = [rng.u64() for _ in range(n)]
    a[5] |= 7  # some units return
    sent = 0x5555555555555555
    for extra in ([], ["--threads=1"], ["--threads=2", "--repeat=2"]):
        res = K.run(kf, "keep", str(cubes), {
            "a": K.Buf("u64", a), "out": K.Buf("u64", [sent] * (4 * n)),
            "lines": K.Buf("vec<3 x f32>", [0] * (3 * n), 3),
            "bytes": K.Buf("vec<16 x u8>", [0] * (16 * n), 16)},
            ["out", "lines", "bytes"], extra=extra)
        tag = " ".join(extra) or "default threads"

        def absolute(c, u):
            # 3-D cube (4, 3, 2) in a 1-D grid of `cubes`: the linear absolute_pos.
            ux, uy, uz = u % 4, u // 4 % 3, u // 12
            return c * 4 + ux + uy * (cubes * 4) + uz * (cubes * 4 * 3)
        for i in range(n):
            c = next(cc for cc in range(cubes) for uu in range(24) if absolute(cc, uu) == i)
            u = next(uu for uu in range(24) if absolute(c, uu) == i)
            x = a[i]
            b8 = K.wrap(x, "i8")
            o = res["out"][4 * i:4 * i + 4]
            if x & 7 == 7:
                chk.eq("keep (%s) unit %d returned" % (tag, i), o, [sent] * 4)
                continue
            partner = absolute(c, 23 - u)
            if a[partner] & 7 == 7:
                o[0] = None  # the partner returned before writing: unspecified
            flag = b8 > 0
            h = K.bits_to_float(K.round_to_bits(b8, "f16"), "f16")
            want = [None if o[0] is None else a[partner], int(h + h) & 0xffffffffffffffff
                    if h + h >= 0 else 0, b8 if b8 >= 0 else 0,
                    int(flag) | 2 * int(flag) | 4 * int(not flag) | 8 | 16 * int(flag)
                    | (x & 255) << 8 | u << 16 | (x & 0xffff) << 24 | 4 << 40]
            chk.eq("keep (%s) unit %d" % (tag, i), o, want)
            chk.eq("keep (%s) unit %d line" % (tag, i), res["lines"][3 * i:3 * i + 3],
                   [r32(2 * u)] * 3)
            chk.eq("keep (%s) unit %d bytes" % (tag, i), res["bytes"][16 * i:16 * i + 16],
                   [x & 255] * 16)


# ---------------------------------------------------------------------------

PATTERNS = {fn.__name__: fn for fn in [elementwise, reduce, matmul, scan, atomics, plane, lines,
                                        control, bounds, builtins, scratch]}


def main():
    kfile, pattern, work = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    K.roundtrip(kfile)
    chk = K.Checker(pattern)
    PATTERNS[pattern](kfile, chk)
    # Every access of these kernels is in bounds (bounds.kiln excepted), so
    # the unchecked variant must give the same results.
    if pattern != "bounds":
        K.EXTRA_OPTIONS[:] = ["--no-bounds-check"]
        chk.prefix = "[--no-bounds-check] "
        PATTERNS[pattern](kfile, chk)
    chk.report()


if __name__ == "__main__":
    main()
