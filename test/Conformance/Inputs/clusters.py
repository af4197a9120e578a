# Checks the cube-cluster builtins and launch rule (docs/LangRef.md §15) through kiln-run.
"""Usage: clusters.py KERNEL_FILE WORKDIR

Runs the kernels of KERNEL_FILE (test/Conformance/clusters.kiln) with
kiln-run in the bounds-checked and the unchecked variant and compares every
output element with the reference below. The file must round-trip through
`kiln-compile --emit=ir`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

SENTINEL = 0xDEADBEEF


def cube_positions(count):
    """(linear, x, y, z) of every cube of a launch, in linear order."""
    cx, cy, cz = count
    for lin in range(cx * cy * cz):
        yield lin, lin % cx, (lin // cx) % cy, lin // (cx * cy)


def cubecl_case(kf, chk):
    # cubecl's expectation, with its own formula for CUBE_POS_CLUSTER:
    # rank_z * dim_y + rank_y * dim_x + rank_x (for (1, 2, 3) this is the
    # linear rank that Kiln defines).
    dim = (1, 2, 3)
    count = (2, 2, 6)
    n = 4 + 4 * 24
    res = K.run(kf, "cubecl_cluster", "2,2,6", {"out": K.Buf("u32", [SENTINEL] * n)}, ["out"])
    out = res["out"]
    chk.eq("cubecl CUBE_CLUSTER_DIM", out[0:4], [6, 1, 2, 3])
    for lin, x, y, z in cube_positions(count):
        rx, ry, rz = x % dim[0], y % dim[1], z % dim[2]
        want = [rz * dim[1] + ry * dim[0] + rx, rx, ry, rz]
        chk.eq("cubecl cube %d (%d,%d,%d)" % (lin, x, y, z), out[4 + 4 * lin:8 + 4 * lin], want)


def metadata(kf, chk, kernel, cube_dim, dim, count):
    units = cube_dim[0] * cube_dim[1] * cube_dim[2]
    cubes = count[0] * count[1] * count[2]
    n = cubes * units * 12
    res = K.run(kf, kernel, ",".join(map(str, count)),
                {"out": K.Buf("u32", [SENTINEL] * n)}, ["out"])
    out = res["out"]
    clusters = [count[d] // dim[d] for d in range(3)]
    for lin, x, y, z in cube_positions(count):
        pos = (x, y, z)
        r = [pos[d] % dim[d] for d in range(3)]
        c = [pos[d] // dim[d] for d in range(3)]
        want = ([r[0] + r[1] * dim[0] + r[2] * dim[0] * dim[1]] + r +
                [dim[0] * dim[1] * dim[2]] + list(dim) +
                [c[0] + c[1] * clusters[0] + c[2] * clusters[0] * clusters[1]] + c)
        for u in range(units):
            at = (lin * units + u) * 12
            chk.eq("%s cubes %s cube %d unit %d" % (kernel, count, lin, u), out[at:at + 12], want)


def launch_rule(kf, chk):
    # Not a multiple of cluster_dim in some dimension: refused, naming both.
    for kernel, count, axis in [("meta_2x1x1", "3,3,1", "x"), ("meta_2x2x2", "4,3,2", "y"),
                                ("meta_2x2x2", "2,2,1", "z"), ("cubecl_cluster", "2,2,4", "z")]:
        p = K.run(kf, kernel, count, {"out": K.Buf("u32", [0] * 4096)}, [], expect_fail=True)
        chk.ok("%s --cubes=%s is refused" % (kernel, count), p.returncode != 0,
               "exit %d" % p.returncode)
        shown = "(" + count.replace(",", ", ") + ")"
        chk.ok("%s --cubes=%s names the count, the cluster and the axis" % (kernel, count),
               "cube count %s is not a multiple of the kernel's cluster_dim(" % shown in p.stderr
               and (") in %s:" % axis) in p.stderr, p.stderr.strip()[-400:])
    # A count with a zero runs nothing and succeeds, whether the other
    # dimensions tile the clusters or not.
    for kernel, count in [("meta_2x1x1", "0,3,1"), ("meta_2x2x2", "3,0,1"),
                          ("cubecl_cluster", "1,1,0")]:
        res = K.run(kf, kernel, count, {"out": K.Buf("u32", [SENTINEL] * 8)}, ["out"])
        chk.eq("%s --cubes=%s runs nothing" % (kernel, count), res["out"], [SENTINEL] * 8)


def all_checks(kf, chk):
    cubecl_case(kf, chk)
    metadata(kf, chk, "meta_2x1x1", (3, 1, 1), (2, 1, 1), (4, 3, 1))
    metadata(kf, chk, "meta_2x1x1", (3, 1, 1), (2, 1, 1), (2, 1, 1))
    metadata(kf, chk, "meta_2x2x2", (2, 2, 1), (2, 2, 2), (4, 2, 4))
    metadata(kf, chk, "meta_2x2x2", (2, 2, 1), (2, 2, 2), (2, 6, 2))
    metadata(kf, chk, "meta_1x4", (1, 1, 1), (1, 4, 1), (3, 8, 2))
    metadata(kf, chk, "meta_none", (2, 1, 1), (1, 1, 1), (3, 2, 5))
    launch_rule(kf, chk)


def main():
    kfile, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    ir = K.roundtrip(kfile)
    with open(ir) as f:
        text = f.read()
    if "cluster_dim(1, 2, 3)" not in text or "cluster_dim(2)" not in text:
        K.fail("kiln-compile --emit=ir lost a cluster_dim attribute")
    chk = K.Checker("clusters")
    all_checks(kfile, chk)
    K.EXTRA_OPTIONS[:] = ["--no-bounds-check"]
    chk.prefix = "[--no-bounds-check] "
    all_checks(kfile, chk)
    chk.report()


if __name__ == "__main__":
    main()
