# Every plane operation on every plain scalar type and plane size, through
# kiln-run, against a Python reference.
"""Usage: planevec.py WORKDIR

docs/LangRef.md (plane operations) and docs/Lowering.md section 6. Plane
sizes 4, 8, 16, 32 and 64 run the vector form, 3 and 128 the scalar one;
each cube has two full planes and a partial one. For each size and type, a
kernel without `return` and one whose units return first (at random, a whole
plane, and lane 0 of the first plane) run:
- plane_sum/prod/min/max, the four scans: integers exact (wrapping); floats
  rounded after each operation, in the documented order: the halving
  butterfly and Hillis-Steele in the vector form (returned lanes and lanes
  past a partial plane neutral: -0.0 for sums, 1 for products), lane order
  in the scalar form. The inputs make the two orders differ (checked).
- plane_broadcast/shuffle/shuffle_xor/up/down with literal lanes, lanes
  loaded per unit (some huge), a lane recomputed per unit
  (plane_dim - 1 - unit_pos_plane) and uniform ones (a parameter, past
  the partial plane's last lane, and one less, recomputed per unit): a
  source outside the plane gives the
  unit its own value; a source lane that returned is not checked.
- plane_all/any/ballot/elect (u32 kernels) over the units still running.
Units that returned write nothing. Both variants run at plane size 32 and
4; the bounds-checked one elsewhere. On an AVX-512 host the float and u32
kernels at sizes 4 and 32 also run as AVX2 code (--mattr=-avx512f): the
orders, hence the bits, do not depend on the target; so do the i64 and u64
kernels, whose product scans AVX2 code runs as loops.
"""

import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "f32", "f64"]
SIZES = [3, 4, 8, 16, 32, 64, 128]
REDUCE = ["plane_sum", "plane_prod", "plane_min", "plane_max", "plane_inclusive_sum",
          "plane_exclusive_sum", "plane_inclusive_prod", "plane_exclusive_prod"]
# (op, lane operand): literals, %lv (loaded per unit), %rev (recomputed),
# %k (a parameter: uniform, P/2 + 1, past the partial plane's last lane),
# %k1 (%k - 1, uniform and recomputed per unit).
LANE = [("plane_broadcast", "3:u32"), ("plane_broadcast", "%lv"), ("plane_shuffle", "%lv"),
        ("plane_shuffle", "%rev"), ("plane_shuffle_xor", "1:u32"),
        ("plane_shuffle_xor", "5:u32"), ("plane_shuffle_xor", "%lv"),
        ("plane_shuffle_up", "1:u32"), ("plane_shuffle_up", "%lv"),
        ("plane_shuffle_down", "2:u32"), ("plane_shuffle_down", "%lv"),
        ("plane_broadcast", "%k"), ("plane_shuffle_up", "%k"), ("plane_shuffle_xor", "%k"),
        ("plane_shuffle", "%k1"), ("plane_shuffle_xor", "%k1"), ("plane_shuffle_up", "%k1"),
        ("plane_shuffle_down", "%k1")]
NOPS = len(REDUCE) + len(LANE)
NBOOL = 7  # all, any, ballot[0..3], elect


def vector_form(P):
    return 4 <= P <= 64 and P & (P - 1) == 0


def kernel(name, T, U, ret):
    lines = ["kernel @%s cube_dim(%d) (%%x: buffer<%s, read>, %%l: buffer<u32, read>, %%k: u32," % (
        name, U, T),
        "    %%b: buffer<bool, read>, %%g: buffer<bool, read>, %%o: buffer<%s, write>," % T,
        "    %ob: buffer<u32, write>) {",
        "  %i = absolute_pos : u32"]
    if ret:
        lines += ["  %gone = load %g[%i] : bool", "  if %gone {", "    return", "  }"]
    lines += ["  %%v = load %%x[%%i] : %s" % T, "  %lv = load %l[%i] : u32",
              "  %p = load %b[%i] : bool", "  %lane = unit_pos_plane : u32",
              "  %pd = plane_dim : u32", "  %rev0 = sub %pd, 1:u32 : u32",
              "  %rev = sub %rev0, %lane : u32", "  %k1 = sub %k, 1:u32 : u32",
              "  %%base = mul %%i, %d:u32 : u32" % NOPS]
    k = 0
    for op in REDUCE:
        lines.append("  %%r%d = %s %%v : %s" % (k, op, T))
        k += 1
    for op, arg in LANE:
        lines.append("  %%r%d = %s %%v, %s : %s" % (k, op, arg, T))
        k += 1
    for j in range(k):
        lines += ["  %%a%d = add %%base, %d:u32 : u32" % (j, j), "  store %%o[%%a%d], %%r%d" % (j, j)]
    if T == "u32":
        lines += ["  %bb = mul %i, 7:u32 : u32",
                  "  %all = plane_all %p : bool", "  %any = plane_any %p : bool",
                  "  %bal = plane_ballot %p : vec<4 x u32>", "  %el = plane_elect : bool"]
        vals = ["%allu", "%anyu", "%w0", "%w1", "%w2", "%w3", "%elu"]
        lines += ["  %allu = cast %all : u32", "  %anyu = cast %any : u32",
                  "  %elu = cast %el : u32"]
        lines += ["  %%w%d = extract %%bal[%d] : u32" % (w, w) for w in range(4)]
        for j, v in enumerate(vals):
            lines += ["  %%c%d = add %%bb, %d:u32 : u32" % (j, j), "  store %%ob[%%c%d], %s" % (j, v)]
    lines += ["}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Reference arithmetic: ints wrap; floats are bit patterns, rounded per step.

def fadd(a, b, t):
    fa, fb = K.bits_to_fraction(a, t), K.bits_to_fraction(b, t)
    if fa == 0 and fb == 0:  # -0 + -0 = -0, else +0
        neg = (a >> (K.width(t) - 1)) & (b >> (K.width(t) - 1)) & 1
        return K.round_to_bits(-0.0 if neg else 0.0, t)
    return K.round_to_bits(fa + fb, t)


def fmul(a, b, t):
    return K.round_to_bits(K.bits_to_fraction(a, t) * K.bits_to_fraction(b, t), t)


def ops_for(t):
    """(combine, neutral in the vector form, identity) for sum and prod."""
    if K.is_int(t):
        return {"sum": (lambda a, b: K.wrap(a + b, t), 0, 0),
                "prod": (lambda a, b: K.wrap(a * b, t), 1, 1)}
    one = K.round_to_bits(1.0, t)
    return {"sum": (lambda a, b: fadd(a, b, t), K.round_to_bits(-0.0, t),
                    K.round_to_bits(0.0, t)),
            "prod": (lambda a, b: fmul(a, b, t), one, one)}


def key(v, t):
    return v if K.is_int(t) else K.bits_to_fraction(v, t)


def reduce_ref(vals, act, kind, t, P):
    """The plane reduction of the active lanes of vals (one plane)."""
    live = [v for v, a in zip(vals, act) if a]
    if kind in ("min", "max"):
        f = min if kind == "min" else max
        return f(live, key=lambda v: key(v, t))
    op, neutral, ident = ops_for(t)[kind]
    if vector_form(P):
        return K.plane_reduce_order([v if a else neutral for v, a in zip(vals, act)], op,
                                    neutral, P)
    acc = ident
    for v in live:
        acc = op(acc, v)
    return acc


def scan_ref(vals, act, kind, t, P):
    """(inclusive, exclusive) per lane of one plane."""
    op, neutral, ident = ops_for(t)[kind]
    if vector_form(P):
        inc = K.plane_scan_order([v if a else neutral for v, a in zip(vals, act)], op,
                                 neutral, P)
        return inc, [ident] + inc[:-1]
    inc, exc, acc = [], [], ident
    for v, a in zip(vals, act):
        exc.append(acc)
        if a:
            acc = op(acc, v)
        inc.append(acc)
    return inc, exc


def source_lane(op, lane, arg, size):
    """The source lane, or the lane itself when outside the plane."""
    arg &= 0xffffffff
    if op == "plane_shuffle_xor":
        src = lane ^ arg
    elif op == "plane_shuffle_up":
        src = lane - arg
    elif op == "plane_shuffle_down":
        src = lane + arg
    else:
        src = arg
    return src if 0 <= src < size else lane


# ---------------------------------------------------------------------------
# Inputs

def inputs(rng, t, n):
    if K.is_int(t):
        return [K.wrap(rng.u64() if rng.below(4) else rng.below(7) - 3, t) for _ in range(n)]
    # +-(1 + r), r with more bits than the type holds: sums round at almost
    # every step, so the sequential and tree orders give different sums;
    # products of up to 128 of them stay finite (f16: r < 1/16).
    mant = K.fparams(t)[1]
    scale = 16 if t == "f16" else 1
    out = []
    for _ in range(n):
        r = Fraction(int(rng.below(1 << (mant + 3))), (1 << (mant + 3)) * scale)
        out.append(K.round_to_bits((-1 if rng.below(2) else 1) * (1 + r), t))
    return out


def lanes_in(rng, P, n):
    out = []
    for _ in range(n):
        r = rng.below(10)
        out.append(0xffffffff if r == 0 else 0x80000000 if r == 1 else int(rng.below(P + 3)))
    return out


# ---------------------------------------------------------------------------

def check(chk, P, U, cubes, t, ret, xs, ls, bs, gone, res):
    o, ob = res["o"], res.get("ob")
    diff = [0]
    for c in range(cubes):
        for p0 in range(0, U, P):
            units = [c * U + k for k in range(p0, min(p0 + P, U))]
            size = len(units)
            act = [not (ret and gone[u]) for u in units]
            if not any(act):
                for u in units:
                    chk.eq("%s P=%d unit %d returned" % (t, P, u), o[u * NOPS:(u + 1) * NOPS],
                           [SENT[t]] * NOPS)
                continue
            v = [xs[u] for u in units]
            want = {}
            for kind in ("sum", "prod", "min", "max"):
                want["plane_" + kind] = [reduce_ref(v, act, kind, t, P)] * size
            for kind in ("sum", "prod"):
                inc, exc = scan_ref(v, act, kind, t, P)
                want["plane_inclusive_" + kind], want["plane_exclusive_" + kind] = inc, exc
            if K.is_float(t) and all(act) and size == P:
                seq = ops_for(t)["sum"][2]
                for x in v:
                    seq = ops_for(t)["sum"][0](seq, x)
                diff[0] += seq != want["plane_sum"][0]
            for k, u in enumerate(units):
                got = o[u * NOPS:(u + 1) * NOPS]
                if not act[k]:
                    chk.eq("%s P=%d unit %d returned, untouched" % (t, P, u), got,
                           [SENT[t]] * NOPS)
                    continue
                for j, op in enumerate(REDUCE):
                    chk.eq("%s P=%d ret=%d unit %d (lane %d) %s" % (t, P, ret, u, k, op),
                           got[j], want[op][k])
                for j, (op, arg) in enumerate(LANE):
                    a = (int(arg.split(":")[0]) if ":" in arg else ls[u] if arg == "%lv"
                         else P // 2 + 1 if arg == "%k" else P // 2 if arg == "%k1"
                         else P - 1 - k)
                    src = source_lane(op, k, a, size)
                    if not act[src]:
                        continue  # unspecified
                    chk.eq("%s P=%d ret=%d unit %d (lane %d) %s %s" % (t, P, ret, u, k, op, arg),
                           got[len(REDUCE) + j], v[src])
                if ob is not None:
                    live = [i for i in range(size) if act[i]]
                    ballot = [0, 0, 0, 0]
                    for i in live:
                        if bs[units[i]] and i < 128:
                            ballot[i // 32] |= 1 << (i % 32)
                    wantb = [int(all(bs[units[i]] for i in live)),
                             int(any(bs[units[i]] for i in live))] + ballot + [int(k == live[0])]
                    chk.eq("P=%d ret=%d unit %d all/any/ballot/elect" % (P, ret, u),
                           ob[u * NBOOL:(u + 1) * NBOOL], wantb)
    return diff[0]


SENT = {}


def host_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return any(l.startswith("flags") and " avx512f" in l for l in f)
    except OSError:
        return False


AVX512 = K.TARGET_X86 and host_has_avx512()


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    chk = K.Checker("plane vector form")
    cubes = 2
    order_differs = 0
    for P in SIZES:
        U = 2 * P + P // 2 + 1
        both = P in (4, 32)
        types = INTS + FLOATS if both else ["i8", "u16", "u32", "i64", "f32", "f64"]
        fname = "planes%d.kiln" % P
        with open(fname, "w") as f:
            for t in types:
                for ret in (0, 1):
                    f.write(kernel("k_%s_%d" % (t, ret), t, U, ret))
        K.roundtrip(fname)
        for t in types:
            rng = K.Rng(P * 1009 + len(t) * 31 + ord(t[0]) + int(t[1:]))
            n = cubes * U
            xs = inputs(rng, t, n)
            ls = lanes_in(rng, P, n)
            bs = [int(rng.below(4) != 0) for _ in range(n)]
            for i in range(P):
                bs[i] = 1  # one plane all true
            gone = [int(rng.below(4) == 0) for _ in range(n)]
            gone[0] = 1  # the elected lane is not lane 0
            for i in range(P, 2 * P):
                gone[i] = 1  # a whole plane returned
            SENT[t] = K.wrap(0x5A5A5A5A5A5A5A5A, t) if K.is_int(t) else (
                0x5A5A5A5A5A5A5A5A & ((1 << K.width(t)) - 1))
            variants = [("checked", [])] + ([("unchecked", ["--no-bounds-check"])] if both else [])
            if both and AVX512 and (K.is_float(t) or t in ("u32", "i64", "u64")):
                # AVX2 code on an AVX-512 host: the same bits (i64 and u64
                # product scans as loops there, SerialProductScans.h).
                variants.append(("avx2", ["--mattr=-avx512f"]))
            for ret in (0, 1):
                for variant, extra in variants:
                    chk.prefix = "[%s] " % variant
                    args = {"x": K.Buf(t, xs), "l": K.Buf("u32", ls), "b": K.Buf("bool", bs),
                            "g": K.Buf("bool", gone), "k": str(P // 2 + 1),
                            "o": K.Buf(t, [SENT[t]] * (n * NOPS)),
                            "ob": K.Buf("u32", [0x5A5A5A5A] * (n * NBOOL))}
                    outs = ["o", "ob"] if t == "u32" else ["o"]
                    res = K.run(fname, "k_%s_%d" % (t, ret), str(cubes), args, outs,
                                extra=["--plane-dim=%d" % P] + extra, may_fail=chk)
                    if res is None:
                        continue
                    d = check(chk, P, U, cubes, t, ret, xs, ls, bs, gone, res)
                    if vector_form(P) and t in ("f32", "f64"):
                        order_differs += d
    chk.ok("the inputs tell the tree order from the sequential one", order_differs > 0,
           "no full plane whose f32/f64 sum depends on the order")
    chk.report()


if __name__ == "__main__":
    main()
