# Checks the kernels of the cubecl IR features (switch or-patterns, ...) through kiln-run.
"""Usage: irfeatures.py KERNEL_FILE PATTERN WORKDIR

Each PATTERN function generates inputs, runs the kernels of KERNEL_FILE with
kiln-run and compares every output element with a reference computed here,
in Python, from the same inputs. The file must round-trip through
`kiln-compile --emit=ir`, and every pattern runs twice: in the
bounds-checked default variant and with --no-bounds-check (all accesses of
these kernels are in bounds).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402


def f32(v):
    return K.round_to_bits(v, "f32")


# ---------------------------------------------------------------------------

def switch_or(kf, chk):
    # cubecl's lit_match_value: 0 => a, 1 | 2 => b, _ => c.
    sels = [0, 1, 2, 3, 4, 0xFFFFFFFF, 2, 1, 0, 5, 6, 7, 100, 1, 0, 3]
    res = K.run(kf, "match_arms", "2", {"sel": K.Buf("u32", sels),
                                        "out": K.Buf("f32", [0] * 16),
                                        "outi": K.Buf("i64", [0] * 16)}, ["out", "outi"])
    for i, s in enumerate(sels):
        arm = 0 if s == 0 else 1 if s in (1, 2) else 2
        chk.eq("match_arms sel=%d out" % s, res["out"][i], f32([10, 20, 30][arm]))
        chk.eq("match_arms sel=%d outi" % s, K.wrap(res["outi"][i], "i64"), [-10, -20, -30][arm])

    sels = list(range(-128, 128))
    res = K.run(kf, "signed_labels", "16", {"sel": K.Buf("i8", [K.to_bits(v, "i8") for v in sels]),
                                            "out": K.Buf("u32", [0] * 256)}, ["out"])
    for i, s in enumerate(sels):
        want = 1 if s in (-128, 127) else 2 if s in (-1, 0, 1) else 3 if s in (5, 64) else 4
        chk.eq("signed_labels sel=%d" % s, res["out"][i], want)

    sels = [-2**63, 2**63 - 1, 2**32, 0, -2**32, 1, 2**32 - 1, -1]
    res = K.run(kf, "wide_labels", "1", {"sel": K.Buf("i64", [K.to_bits(v, "i64") for v in sels]),
                                         "out": K.Buf("u32", [99] * 8)}, ["out"])
    for i, s in enumerate(sels):
        want = 1 if s in (-2**63, 2**63 - 1) else 2 if s in (2**32, 0, -2**32) else 99
        chk.eq("wide_labels sel=%d" % s, res["out"][i], want)

    rng = K.Rng(11)
    n = [rng.below(20) for _ in range(64)]
    res = K.run(kf, "or_in_loop", "2", {"n": K.Buf("u32", n), "out": K.Buf("u32", [0] * 64)},
                ["out"])
    for i in range(64):
        acc = 0
        for j in range(n[i]):
            r = (i + j) % 5
            if r in (0, 3):
                acc += 1
            elif r in (4, 1):
                acc += 10
                continue
            elif r == 2 and j >= 4:
                break
        chk.eq("or_in_loop unit %d n=%d" % (i, n[i]), res["out"][i], acc)

    x = [rng.below(1 << 20) for _ in range(3 * 64)]
    for mode in [0, 1, 2, 3, 7, 8]:
        res = K.run(kf, "uniform_or_barrier", "3", {"mode": "%d" % mode, "x": K.Buf("u32", x),
                                                    "out": K.Buf("u32", [7] * 3)}, ["out"])
        for c in range(3):
            part = x[64 * c:64 * c + 64]
            want = sum(part) if mode in (1, 2) else max(part) if mode == 7 else 0
            chk.eq("uniform_or_barrier mode=%d cube %d" % (mode, c), res["out"][c], want)


def uniform_load(kf, chk):
    res = K.run(kf, "gate", "1", {"out": K.Buf("u32", [0] * 64)}, ["out"])
    for u in range(64):
        chk.eq("gate unit %d" % u, res["out"][u], 3)

    rng = K.Rng(21)
    for cubes in (1, 3):
        flags = [1 if rng.below(3) else 0 for _ in range(64 * cubes)]
        if cubes == 3:
            flags[64:128] = [0] * 64  # a cube whose count is 0: no step
        res = K.run(kf, "atomic_count", str(cubes), {"flags": K.Buf("u32", flags),
                                                     "out": K.Buf("u32", [9] * 64 * cubes),
                                                     "sums": K.Buf("u32", [9] * cubes)},
                    ["out", "sums"])
        for c in range(cubes):
            n = sum(flags[64 * c:64 * c + 64])
            for u in range(64):
                chk.eq("atomic_count cube %d unit %d" % (c, u), res["out"][64 * c + u], n)
            chk.eq("atomic_count cube %d sum" % c, res["sums"][c], n * (n + 1) // 2)

    res = K.run(kf, "line", "1", {"out": K.Buf("vec<4 x f32>", [0] * 256, lanes=4)}, ["out"])
    want = [f32(7.0), f32(-1.5), f32(0.25), f32(3.0)]
    for u in range(64):
        chk.eq("line unit %d" % u, res["out"][4 * u:4 * u + 4], want)

    res = K.run(kf, "barriers", "4", {"seed": "500", "out": K.Buf("u32", [0] * 48 * 4)},
                ["out"])
    for c in range(4):
        for u in range(48):
            chk.eq("barriers cube %d unit %d" % (c, u), res["out"][48 * c + u], 500 + c)


# ---------------------------------------------------------------------------

PATTERNS = {fn.__name__: fn for fn in [switch_or, uniform_load]}


def main():
    kfile, pattern, work = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    K.roundtrip(kfile)
    chk = K.Checker(pattern)
    PATTERNS[pattern](kfile, chk)
    K.EXTRA_OPTIONS[:] = ["--no-bounds-check"]
    chk.prefix = "[--no-bounds-check] "
    PATTERNS[pattern](kfile, chk)
    chk.report()


if __name__ == "__main__":
    main()
