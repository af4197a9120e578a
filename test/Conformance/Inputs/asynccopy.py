# Barrier objects and asynchronous copies through kiln-run.
"""Usage: asynccopy.py WORKDIR

docs/LangRef.md §13, each kernel run in the bounds-checked and in the
unchecked variant (the out-of-bounds kernel in the checked one only), with
references computed here from the inputs:
- the runtime tests of cubecl's barrier.rs, written fresh as Kiln kernels:
  a unit's barrier guarding a copy of one element into shared memory; a
  cube's barrier with every unit copying the whole source (one_load); each
  unit copying half of two sources, one barrier (two_loads) and one barrier
  per source (two_independent_loads), then a dot product of its half;
- a pipeline over many cubes: tiles copied into shared memory phase after
  phase on one cube barrier, tokens from barrier_arrive (they are the phase
  numbers 0, 1, 2, ...) and barrier_wait, in f32, i64, u8 and vec<4 x f32>;
- transaction counts as a TMA load uses them: unit 0 copies a tile with
  memcpy_async_tx, every unit arrives with barrier_arrive_tx (unit 0
  expecting the tile's bytes), then waits; and barrier_expect_tx before the
  copy;
- copies between every pair of memories: buffer -> shared, shared -> buffer,
  buffer -> local, local -> buffer, shared -> shared, buffer -> buffer, with
  value offsets and counts that differ per unit;
- bounds (checked variant): elements read from outside the source are 0,
  elements written outside the destination are dropped;
- misuse the verifier cannot see (docs/LangRef.md §13.5): a wait whose phase
  never completes (a cube barrier expecting more arrivals than the cube has
  units; a unit's wait on a token it never arrived at), more arrivals than
  a phase expects, and a zero arrival count: kiln-run fails at once with a
  kernel fault naming the operation, never hangs.
Every kernel file round-trips through kiln-compile --emit=ir.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32v(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def f32_round(x):
    return f32v(f32(x))


# ---------------------------------------------------------------------------
# cubecl's barrier.rs

CUBECL = """
kernel @async_copy_test cube_dim(1) (%input: buffer<f32, read>,
                                     %output: buffer<f32, write>) {
  %bar = barrier_unit
  %smem = shared f32[1]
  memcpy_async %bar, %input[2], %smem[0], 1:u32
  barrier_arrive_and_wait %bar
  %v = load %smem[0] : f32
  store %output[0], %v
}

kernel @one_load cube_dim(2) (%lhs: buffer<f32, read>, %output: buffer<f32, write>) {
  %smem = shared f32[4]
  %cd = cube_dim : u32
  %bar = barrier_cube %cd
  memcpy_async %bar, %lhs[0], %smem[0], 4:u32
  barrier_arrive_and_wait %bar
  %u = unit_pos.x : u32
  %start = mul %u, 2:u32 : u32
  %end = add %start, 2:u32 : u32
  for %i = %start to %end {
    %v = load %smem[%i] : f32
    store %output[%i], %v
  }
}

kernel @two_loads cube_dim(2) (%lhs: buffer<f32, read>, %rhs: buffer<f32, read>,
                               %output: buffer<f32, write>, %num: u32) {
  %ls = shared f32[64]
  %rs = shared f32[64]
  %cd = cube_dim : u32
  %bar = barrier_cube %cd
  %u = unit_pos.x : u32
  %half = div %num, 2:u32 : u32
  %start = mul %u, %half : u32
  %end = add %start, %half : u32
  memcpy_async %bar, %lhs[%start], %ls[%start], %half
  memcpy_async %bar, %rhs[%start], %rs[%start], %half
  barrier_arrive_and_wait %bar
  %acc = var f32
  set %acc, 0.0:f32
  for %i = %start to %end {
    %a = load %ls[%i] : f32
    %b = load %rs[%i] : f32
    %p = mul %a, %b : f32
    %s = get %acc : f32
    %t = add %s, %p : f32
    set %acc, %t
  }
  %r = get %acc : f32
  store %output[%u], %r
}

kernel @two_independent_loads cube_dim(2) (%lhs: buffer<f32, read>,
    %rhs: buffer<f32, read>, %output: buffer<f32, write>, %num: u32) {
  %ls = shared f32[64]
  %rs = shared f32[64]
  %cd = cube_dim : u32
  %bar0 = barrier_cube %cd
  %bar1 = barrier_cube %cd
  sync_cube
  %u = unit_pos.x : u32
  %half = div %num, 2:u32 : u32
  %start = mul %u, %half : u32
  %end = add %start, %half : u32
  for %i = %start to %end {
    store %ls[%i], 0.0:f32
    store %rs[%i], 0.0:f32
  }
  memcpy_async %bar0, %lhs[%start], %ls[%start], %half
  memcpy_async %bar1, %rhs[%start], %rs[%start], %half
  %acc = var f32
  set %acc, 0.0:f32
  barrier_arrive_and_wait %bar0
  barrier_arrive_and_wait %bar1
  for %i = %start to %end {
    %a = load %ls[%i] : f32
    %b = load %rs[%i] : f32
    %p = mul %a, %b : f32
    %s = get %acc : f32
    %t = add %s, %p : f32
    set %acc, %t
  }
  %r = get %acc : f32
  store %output[%u], %r
}
"""


def check_cubecl(chk, variants):
    with open("cubecl.kiln", "w") as f:
        f.write(CUBECL)
    K.roundtrip("cubecl.kiln")
    for variant, extra in variants:
        chk.prefix = "[%s] " % variant
        src = [f32(x) for x in (0.0, 1.0, 2.0, 3.0, 4.0)]
        res = K.run("cubecl.kiln", "async_copy_test", "1",
                    {"input": K.Buf("f32", src), "output": K.Buf("f32", [0])},
                    ["output"], extra)
        chk.eq("async_copy_test", res["output"], [f32(2.0)])
        lhs = [f32(x) for x in (10.0, 11.0, 12.0, 13.0)]
        res = K.run("cubecl.kiln", "one_load", "1",
                    {"lhs": K.Buf("f32", lhs), "output": K.Buf("f32", [0] * 4)},
                    ["output"], extra)
        chk.eq("one_load", res["output"], lhs)
        for kernel in ("two_loads", "two_independent_loads"):
            for num in (4, 10, 64):
                data = [float(i) for i in range(num)]
                rdata = [float(3 * i % 7) - 2.5 for i in range(num)]
                want = []
                for lo, hi in ((0, num // 2), (num // 2, num)):
                    acc = 0.0
                    for a, b in zip(data[lo:hi], rdata[lo:hi]):
                        acc = f32_round(acc + f32_round(a * b))
                    want.append(f32(acc))
                res = K.run("cubecl.kiln", kernel, "1",
                            {"lhs": K.Buf("f32", [f32(x) for x in data]),
                             "rhs": K.Buf("f32", [f32(x) for x in rdata]),
                             "output": K.Buf("f32", [0, 0]), "num": str(num)},
                            ["output"], extra)
                chk.eq("%s num=%d" % (kernel, num), res["output"], want)


# ---------------------------------------------------------------------------
# A pipeline of phases on one cube barrier, with tokens

PIPE_UNITS = 16
PIPE_TILES = 3


def pipe_kernel(t):
    """Cube c handles PIPE_TILES tiles of PIPE_UNITS elements: for each tile,
    every unit copies its element into shared memory, arrives (the token is
    the phase), waits, and writes the element of the unit mirrored to it plus
    the token. out[c][tile][u] = in[c][tile][15 - u] (+ token for ints)."""
    lines = [
        "kernel @pipe_%s cube_dim(%d) (%%src: buffer<%s, read>, %%dst: buffer<%s, write>," % (
            t.replace("<", "").replace(">", "").replace(" ", ""), PIPE_UNITS, t, t),
        "    %tok: buffer<u32, write>) {",
        "  %stage = shared " + t + "[%d]" % PIPE_UNITS,
        "  %%bar = barrier_cube %d:u32" % PIPE_UNITS,
        "  %u = unit_pos : u32",
        "  %c = cube_pos : u32",
        "  %%mirror = sub %d:u32, %%u : u32" % (PIPE_UNITS - 1),
        "  for %%tile = 0:u32 to %d:u32 {" % PIPE_TILES,
        "    %%base = mul %%c, %d:u32 : u32" % (PIPE_UNITS * PIPE_TILES),
        "    %%tb = mul %%tile, %d:u32 : u32" % PIPE_UNITS,
        "    %b2 = add %base, %tb : u32",
        "    %at = add %b2, %u : u32",
        "    memcpy_async %bar, %src[%at], %stage[%u], 1:u32",
        "    %t = barrier_arrive %bar : u32",
        "    barrier_wait %bar, %t",
        "    %v = load %stage[%mirror] : " + t,
    ]
    if t in ("i64", "u8"):
        lines += ["    %%tk = cast %%t : %s" % t, "    %%w = add %%v, %%tk : %s" % t,
                  "    store %dst[%at], %w"]
    else:
        lines += ["    store %dst[%at], %v"]
    lines += [
        "    %%ti = mul %%c, %d:u32 : u32" % (PIPE_UNITS * PIPE_TILES),
        "    %tj = add %ti, %tb : u32",
        "    %tt = add %tj, %u : u32",
        "    store %tok[%tt], %t",
        "    sync_cube",
        "  }",
        "}", ""]
    return "\n".join(lines)


PIPE_TYPES = [("f32", 1), ("i64", 1), ("u8", 1), ("vec<4 x f32>", 4)]


def check_pipeline(chk, variants, rng):
    src = "".join(pipe_kernel(t) for t, _ in PIPE_TYPES)
    with open("pipe.kiln", "w") as f:
        f.write(src)
    K.roundtrip("pipe.kiln")
    cubes = 5
    n = cubes * PIPE_TILES * PIPE_UNITS
    for t, lanes in PIPE_TYPES:
        scalar = "f32" if lanes == 4 else t
        if scalar == "f32":
            vals = [f32(rng.uniform(-100, 100)) for _ in range(n * lanes)]
        else:
            vals = [K.wrap(rng.u64(), scalar) for _ in range(n)]
        name = "pipe_" + t.replace("<", "").replace(">", "").replace(" ", "")
        for variant, extra in variants:
            chk.prefix = "[%s] " % variant
            res = K.run("pipe.kiln", name, str(cubes),
                        {"src": K.Buf(t, vals, lanes), "dst": K.Buf(t, [0] * (n * lanes), lanes),
                         "tok": K.Buf("u32", [0] * n)},
                        ["dst", "tok"], extra)
            for c in range(cubes):
                for tile in range(PIPE_TILES):
                    for u in range(PIPE_UNITS):
                        at = (c * PIPE_TILES + tile) * PIPE_UNITS + u
                        frm = (c * PIPE_TILES + tile) * PIPE_UNITS + PIPE_UNITS - 1 - u
                        # The token is the phase: tile number within the cube.
                        chk.eq("%s token c%d tile%d u%d" % (name, c, tile, u), res["tok"][at], tile)
                        got = res["dst"][at * lanes:(at + 1) * lanes]
                        want = vals[frm * lanes:(frm + 1) * lanes]
                        if scalar in ("i64", "u8"):
                            want = [K.wrap(want[0] + tile, scalar)]
                        chk.eq("%s dst c%d tile%d u%d" % (name, c, tile, u), got, want)


# ---------------------------------------------------------------------------
# Transaction counts (the TMA pattern) and every pair of memories

TX = """
kernel @tx_load cube_dim(32) (%src: buffer<f32, read>, %dst: buffer<f32, write>) {
  %tile = shared f32[64]
  %bar = barrier_cube 32:u32
  %u = unit_pos : u32
  %c = cube_pos : u32
  %off = mul %c, 64:u32 : u32
  %first = eq %u, 0:u32 : bool
  if %first {
    memcpy_async_tx %bar, %src[%off], %tile[0], 64:u32
  }
  %bytes = select %first, 256:u32, 0:u32 : u32
  %t = barrier_arrive_tx %bar, 1:u32, %bytes : u32
  barrier_wait %bar, %t
  %i0 = mul %u, 2:u32 : u32
  %i1 = add %i0, 1:u32 : u32
  %a = load %tile[%i0] : f32
  %b = load %tile[%i1] : f32
  %s = add %a, %b : f32
  %o = mul %c, 32:u32 : u32
  %oi = add %o, %u : u32
  store %dst[%oi], %s
}

kernel @tx_expect cube_dim(8) (%src: buffer<i32, read>, %dst: buffer<i32, write>) {
  %tile = shared i32[8]
  %bar = barrier_cube 1:u32
  %u = unit_pos : u32
  %c = cube_pos : u32
  %first = eq %u, 0:u32 : bool
  if %first {
    barrier_expect_tx %bar, 32:u32
  }
  %off = mul %c, 8:u32 : u32
  %at = add %off, %u : u32
  memcpy_async_tx %bar, %src[%at], %tile[%u], 1:u32
  if %first {
    %t = barrier_arrive %bar : u32
  }
  barrier_wait %bar, 0:u32
  %m = sub 7:u32, %u : u32
  %v = load %tile[%m] : i32
  store %dst[%at], %v
}

kernel @pairs cube_dim(4) (%src: buffer<u16, read>, %mid: buffer<u16, read_write>,
                           %dst: buffer<u16, write>) {
  %sh = shared u16[32]
  %sh2 = shared u16[32]
  %loc = local_array u16[8]
  %bar = barrier_unit
  %u = unit_pos : u32
  %c = cube_pos : u32
  %base = mul %c, 32:u32 : u32
  %mine = mul %u, 8:u32 : u32
  %gat = add %base, %mine : u32
  // buffer -> local (the unit's 8 elements, reversed into the local array by
  // copying one element at a time), local -> shared, shared -> shared,
  // shared -> buffer, buffer -> buffer.
  for %k = 0:u32 to 8:u32 {
    %from = add %gat, %k : u32
    %to = sub 7:u32, %k : u32
    memcpy_async %bar, %src[%from], %loc[%to], 1:u32
  }
  barrier_arrive_and_wait %bar
  memcpy_async %bar, %loc[0], %sh[%mine], 8:u32
  barrier_arrive_and_wait %bar
  sync_cube
  %len = add %u, 5:u32 : u32
  %n = min %len, 8:u32 : u32
  memcpy_async %bar, %sh[%mine], %sh2[%mine], %n
  barrier_arrive_and_wait %bar
  sync_cube
  memcpy_async %bar, %sh2[%mine], %mid[%gat], 8:u32
  barrier_arrive_and_wait %bar
  memcpy_async %bar, %mid[%gat], %dst[%gat], 8:u32
  barrier_arrive_and_wait %bar
}
"""


def check_tx_and_pairs(chk, variants, rng):
    with open("tx.kiln", "w") as f:
        f.write(TX)
    K.roundtrip("tx.kiln")
    cubes = 3
    src = [f32(rng.uniform(-10, 10)) for _ in range(cubes * 64)]
    want = []
    for c in range(cubes):
        for u in range(32):
            a, b = f32v(src[c * 64 + 2 * u]), f32v(src[c * 64 + 2 * u + 1])
            want.append(f32(f32_round(a + b)))
    isrc = [K.wrap(rng.u64(), "i32") for _ in range(cubes * 8)]
    iwant = [isrc[c * 8 + 7 - u] for c in range(cubes) for u in range(8)]
    usrc = [rng.below(65536) for _ in range(cubes * 32)]
    # pairs: dst[c][u*8 + k] = src reversed per unit, and sh2 holds only the
    # first min(u+5, 8) elements copied from sh; mid/dst get sh2, whose other
    # elements are whatever shared memory held: only the copied ones are
    # checked.
    for variant, extra in variants:
        chk.prefix = "[%s] " % variant
        res = K.run("tx.kiln", "tx_load", str(cubes),
                    {"src": K.Buf("f32", src), "dst": K.Buf("f32", [0] * (cubes * 32))},
                    ["dst"], extra)
        chk.eq("tx_load", res["dst"], want)
        res = K.run("tx.kiln", "tx_expect", str(cubes),
                    {"src": K.Buf("i32", isrc), "dst": K.Buf("i32", [0] * (cubes * 8))},
                    ["dst"], extra)
        chk.eq("tx_expect", res["dst"], iwant)
        res = K.run("tx.kiln", "pairs", str(cubes),
                    {"src": K.Buf("u16", usrc), "mid": K.Buf("u16", [0] * (cubes * 32)),
                     "dst": K.Buf("u16", [0] * (cubes * 32))},
                    ["mid", "dst"], extra)
        for c in range(cubes):
            for u in range(4):
                n = min(u + 5, 8)
                for k in range(n):
                    at = c * 32 + u * 8 + k
                    exp = usrc[c * 32 + u * 8 + 7 - k]
                    chk.eq("pairs mid c%d u%d k%d" % (c, u, k), res["mid"][at], exp)
                for k in range(8):
                    at = c * 32 + u * 8 + k
                    chk.eq("pairs dst=mid c%d u%d k%d" % (c, u, k), res["dst"][at],
                           res["mid"][at])


# ---------------------------------------------------------------------------
# Bounds (checked variant)

BOUNDS = """
kernel @oob cube_dim(1) (%src: buffer<i32, read>, %dst: buffer<i32, write>,
                         %soff: i32, %doff: u32, %n: u32) {
  %bar = barrier_unit
  %sh = shared i32[8]
  for %k = 0:u32 to 8:u32 {
    store %sh[%k], -1:i32
  }
  memcpy_async %bar, %src[%soff], %sh[%doff], %n
  barrier_arrive_and_wait %bar
  memcpy_async %bar, %sh[0], %dst[0], 8:u32
  barrier_arrive_and_wait %bar
}
"""


def check_bounds(chk):
    with open("bounds.kiln", "w") as f:
        f.write(BOUNDS)
    K.roundtrip("bounds.kiln")
    chk.prefix = "[checked] "
    src = [100 + i for i in range(6)]
    for soff, doff, n in ((4, 0, 5), (-2, 1, 5), (0, 6, 5), (-3, 5, 6), (2, 9, 3), (0, 0, 0)):
        res = K.run("bounds.kiln", "oob", "1",
                    {"src": K.Buf("i32", src), "dst": K.Buf("i32", [0] * 8),
                     "soff": str(soff), "doff": str(doff), "n": str(n)},
                    ["dst"])
        want = [-1] * 8
        for k in range(n):
            d, s = doff + k, soff + k
            if 0 <= d < 8:
                want[d] = src[s] if 0 <= s < len(src) else 0
        chk.eq("oob soff=%d doff=%d n=%d" % (soff, doff, n), res["dst"], want)


# ---------------------------------------------------------------------------
# Faults

FAULTS = """
kernel @never cube_dim(4) (%out: buffer<u32, write>) {
  %bar = barrier_cube 5:u32
  %u = unit_pos : u32
  store %out[%u], 1:u32
  barrier_arrive_and_wait %bar
  store %out[%u], 2:u32
}

kernel @wrong_token cube_dim(2) (%out: buffer<u32, write>) {
  %bar = barrier_unit
  %t = barrier_arrive %bar : u32
  %next = add %t, 1:u32 : u32
  barrier_wait %bar, %next
}

kernel @too_many cube_dim(2) (%out: buffer<u32, write>) {
  %bar = barrier_cube 2:u32
  %t = barrier_arrive_tx %bar, 3:u32, 0:u32 : u32
  barrier_wait %bar, %t
}

kernel @zero_count cube_dim(2) (%out: buffer<u32, write>, %n: u32) {
  %bar = barrier_cube %n
  barrier_arrive_and_wait %bar
}

kernel @tx_short cube_dim(2) (%src: buffer<u32, read>, %out: buffer<u32, write>) {
  %sh = shared u32[4]
  %bar = barrier_cube 2:u32
  %u = unit_pos : u32
  %t = barrier_arrive_tx %bar, 1:u32, 8:u32 : u32
  memcpy_async_tx %bar, %src[0], %sh[0], 1:u32
  barrier_wait %bar, %t
}
"""


def check_faults(chk):
    with open("faults.kiln", "w") as f:
        f.write(FAULTS)
    K.roundtrip("faults.kiln")
    chk.prefix = ""
    def site(text):
        """'TEXT at LINE:COL' for the line of FAULTS that holds TEXT."""
        for n, line in enumerate(FAULTS.split("\n"), 1):
            if text in line:
                return "at %d:%d" % (n, line.index(text.split(" = ")[-1].split(" ")[0]) + 1)
        K.fail("no line holds " + text)

    cases = [
        ("never", "4", {}, "barrier_arrive_and_wait %bar " + site("barrier_arrive_and_wait") +
         " (operation #3) can never complete: every unit of the cube that could arrive has "
         "reached it, and the phase still expects 1 arrival(s) and 0 transaction byte(s)"),
        ("wrong_token", "3", {}, "barrier_wait %bar " + site("barrier_wait %bar, %next") +
         " (operation #3) can never complete"),
        ("too_many", "1", {}, "barrier_arrive_tx %bar " + site("barrier_arrive_tx %bar, 3") +
         " (operation #1) arrives more often than the barrier's phase expects (2 arrival(s) "
         "were pending)"),
        ("zero_count", "2", {"n": "0"}, "%bar = barrier_cube " +
         site("barrier_cube %n") + " (operation #0) has an arrival count of 0"),
        ("tx_short", "1", {"src": K.Buf("u32", [7])},
         "the phase still expects 0 arrival(s) and 8 transaction byte(s)"),
    ]
    for kernel, cubes, args, message in cases:
        for extra in ([], ["--no-bounds-check"], ["--threads=2"]):
            a = {"out": K.Buf("u32", [0] * 4)}
            a.update(args)
            p = K.run("faults.kiln", kernel, cubes, a, [], extra, expect_fail=True)
            chk.ok("fault %s %s exits 1" % (kernel, extra), p.returncode == 1,
                   "exit %d: %s" % (p.returncode, p.stderr.strip()[-400:]))
            chk.ok("fault %s %s message" % (kernel, extra),
                   "kernel fault: " in p.stderr and message in p.stderr,
                   "stderr: %s" % p.stderr.strip()[-600:])


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    variants = (("checked", []), ("unchecked", ["--no-bounds-check"]))
    rng = K.Rng(1211)
    chk = K.Checker("async copies")
    check_cubecl(chk, variants)
    check_pipeline(chk, variants, rng)
    check_tx_and_pairs(chk, variants, rng)
    check_bounds(chk)
    check_faults(chk)
    chk.report()


if __name__ == "__main__":
    main()
