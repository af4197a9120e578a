# Tensor maps (TMA-style tile copies) through kiln-run.
"""Usage: tensormap.py WORKDIR

docs/LangRef.md §17, each kernel run in the bounds-checked and in the
unchecked variant, against references computed here from the inputs:
- cubecl's tensor map tests written as Kiln kernels: a [16, 32] box of a
  64 x 64 f32 tensor holding 0..4095 loaded at (0, 8) by a cube of (32, 16)
  units (out[i*32+j] = i*64 + j + 8); a 32 x 16 input stored as a [16, 32]
  box at (16, 8) of a 64 x 64 tensor of zeros; shape(0) of tensor maps over
  tensors of shape [6, 7] and [4, 5] (and their other metadata);
- boxes partly and wholly outside the tensor, negative coordinates
  included: a load fills zeros there, a store skips those elements;
- 1-D to 5-D boxes over tensors with padded (non-contiguous) and permuted
  strides, random coordinates, loads and stores, in u32 and in lines of
  vec<2 x u16>; a tensor whose shape reaches past its buffer;
- the box's bytes are the barrier's transaction bytes: a wait that expects
  more bytes than the load brings is a kernel fault (docs/LangRef.md §13.5);
- bindings the launch refuses and kiln-run spec errors, naming the
  parameter.
Every kernel file round-trips through kiln-compile --emit=ir.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402


f32 = K.f32_bits
dims = K.dims


def map_suffix(shape, box, strides=None):
    s = ":shape=" + dims(shape)
    if strides is not None:
        s += ":strides=" + dims(strides)
    return s + ":box=" + dims(box)


def row_major(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return list(reversed(out))


def box_points(box):
    """Every box index, row-major (the last dimension fastest)."""
    pts = [[]]
    for b in box:
        pts = [p + [i] for p in pts for i in range(b)]
    return pts


def tensor_index(shape, strides, coords, idx, count):
    """The buffer element of box index idx at coords, or None outside the
    tensor or the buffer."""
    x = [c + i for c, i in zip(coords, idx)]
    if any(v < 0 or v >= s for v, s in zip(x, shape)):
        return None
    e = sum(v * st for v, st in zip(x, strides))
    return e if e < count else None


def ref_load(src, lanes, shape, strides, box, coords):
    count = len(src) // lanes
    out = []
    for idx in box_points(box):
        e = tensor_index(shape, strides, coords, idx, count)
        out += src[e * lanes:(e + 1) * lanes] if e is not None else [0] * lanes
    return out


def ref_store(dst, lanes, tile, shape, strides, box, coords):
    dst = list(dst)
    count = len(dst) // lanes
    for n, idx in enumerate(box_points(box)):
        e = tensor_index(shape, strides, coords, idx, count)
        if e is not None:
            dst[e * lanes:(e + 1) * lanes] = tile[n * lanes:(n + 1) * lanes]
    return dst


CUBECL = """
kernel @tma_load cube_dim(32, 16) (%input: tensor_map<f32, read>,
                                   %output: buffer<f32, write>) {
  %u = unit_pos : u32
  %smem = shared f32[512]
  %cd = cube_dim : u32
  %bar = barrier_cube %cd
  %elected = eq %u, 0:u32 : bool
  if %elected {
    tma_load %bar, %smem, 0:u32, %input, 0:i32, 8:i32
  }
  %bytes = select %elected, 2048:u32, 0:u32 : u32
  %tok = barrier_arrive_tx %bar, 1:u32, %bytes : u32
  barrier_wait %bar, %tok
  %v = load %smem[%u] : f32
  store %output[%u], %v
}

kernel @tma_store cube_dim(32, 16) (%input: buffer<f32, read>,
                                    %output: tensor_map<f32, write>) {
  %u = unit_pos : u32
  %smem = shared f32[512]
  %v = load %input[%u] : f32
  store %smem[%u], %v
  sync_cube
  %elected = eq %u, 0:u32 : bool
  if %elected {
    tma_store %smem, 0:u32, %output, 16:i32, 8:i32
    tma_commit
    tma_wait_read 0:u32
  }
}

kernel @tma_metadata cube_dim(1) (%a: tensor_map<f32, read>,
                                  %b: tensor_map<f32, read_write>,
                                  %out: buffer<u32, write>) {
  %a0 = shape %a, 0:u32 : u32
  %b0 = shape %b, 0:u32 : u32
  %a1 = shape %a, 1:u32 : u32
  %ra = rank %a : u32
  %la = tensor_len %a : u32
  %sa = stride %a, 0:u32 : u32
  %tb = tensor_len %b : u32
  store %out[0], %a0
  store %out[1], %b0
  store %out[2], %a1
  store %out[3], %ra
  store %out[4], %la
  store %out[5], %sa
  store %out[6], %tb
}
"""


def check_cubecl(chk, variants):
    with open("cubecl.kiln", "w") as f:
        f.write(CUBECL)
    K.roundtrip("cubecl.kiln")
    for variant, extra in variants:
        chk.prefix = "[%s] " % variant
        src = [f32(float(i)) for i in range(4096)]
        res = K.run("cubecl.kiln", "tma_load", "1",
                    {"input": K.Buf("f32", src, suffix=map_suffix([64, 64], [16, 32])),
                     "output": K.Buf("f32", [0] * 512)}, ["output"], extra)
        chk.eq("tma_load", res["output"],
               [f32(float(i * 64 + j + 8)) for i in range(16) for j in range(32)])
        inp = [f32(float(i)) for i in range(512)]
        res = K.run("cubecl.kiln", "tma_store", "1",
                    {"input": K.Buf("f32", inp),
                     "output": K.Buf("f32", [0] * 4096,
                                     suffix=map_suffix([64, 64], [16, 32]))},
                    ["output"], extra)
        want = [0] * 4096
        for y in range(16):
            for x in range(32):
                want[(y + 16) * 64 + x + 8] = f32(float(y * 32 + x))
        chk.eq("tma_store", res["output"], want)
        res = K.run("cubecl.kiln", "tma_metadata", "1",
                    {"a": K.Buf("f32", [0] * 42, suffix=map_suffix([6, 7], [2, 2])),
                     "b": K.Buf("f32", [0] * 20, suffix=map_suffix([4, 5], [1, 5], [10, 2])),
                     "out": K.Buf("u32", [0] * 7)}, ["out"], extra)
        chk.eq("tensor map metadata", res["out"], [6, 4, 7, 2, 42, 7, 20])


def generic_kernel(rank, elem, name):
    """Unit 0 loads a box of %src at %c* into shared memory, the cube waits
    for it (expecting %bytes), every unit copies a share of the tile to
    %out, then unit 0 stores the tile into %dst at %d*."""
    cs = ", ".join("%%c%d" % i for i in range(rank))
    ds = ", ".join("%%d%d" % i for i in range(rank))
    params = ", ".join("%%c%d: i32" % i for i in range(rank)) + ", " + \
        ", ".join("%%d%d: i32" % i for i in range(rank))
    return """
kernel @%s cube_dim(64) (%%src: tensor_map<%s, read>, %%dst: tensor_map<%s, write>,
                        %%out: buffer<%s, write>, %%bytes: u32, %%n: u32, %s) {
  %%u = unit_pos : u32
  %%tile = shared %s[1024]
  %%bar = barrier_cube 64:u32
  %%elected = eq %%u, 0:u32 : bool
  if %%elected {
    tma_load %%bar, %%tile, 0:u32, %%src, %s
  }
  %%want = select %%elected, %%bytes, 0:u32 : u32
  %%tok = barrier_arrive_tx %%bar, 1:u32, %%want : u32
  barrier_wait %%bar, %%tok
  for %%i = %%u to %%n step 64:u32 {
    %%v = load %%tile[%%i] : %s
    store %%out[%%i], %%v
  }
  sync_cube
  if %%elected {
    tma_store %%tile, 0:u32, %%dst, %s
    tma_commit
    tma_wait_read 0:u32
    tma_wait 0:u32
  }
}
""" % (name, elem, elem, elem, params, elem, cs, elem, ds)


def padded_strides(shape, rng):
    """Row-major over a shape padded by 0..2 per dimension: injective and,
    with some padding, not contiguous."""
    padded = [s + rng.below(3) for s in shape]
    return row_major(padded), padded


def check_ranks(chk, variants, rng):
    # (element type, scalar, lanes, bytes per element)
    elems = (("u32", "u32", 1, 4), ("vec<2 x u16>", "u16", 2, 4))
    text = ""
    for rank in range(1, 6):
        for elem, _, _, _ in elems:
            text += generic_kernel(rank, elem, "box%d_%s" % (rank, elem[:3]))
    with open("ranks.kiln", "w") as f:
        f.write(text)
    K.roundtrip("ranks.kiln")
    for rank in range(1, 6):
        for elem, _, lanes, esize in elems:
            for trial in range(4):
                shape = [1 + rng.below(7 if rank > 2 else 20) for _ in range(rank)]
                box = [1 + rng.below(4 if rank > 3 else 8) for _ in range(rank)]
                if trial % 2 == 0:
                    strides, padded = padded_strides(shape, rng)
                    count = 1
                    for p in padded:
                        count *= p
                else:
                    # Permuted: the outermost dimension varies fastest.
                    strides, acc = [0] * rank, 1
                    for d in range(rank):
                        strides[d] = acc
                        acc *= shape[d]
                    count = acc
                if trial == 3:
                    count = max(1, count - 3)  # the shape reaches past the buffer
                dshape = [1 + rng.below(7 if rank > 2 else 20) for _ in range(rank)]
                dstrides, dpadded = padded_strides(dshape, rng)
                dcount = 1
                for p in dpadded:
                    dcount *= p
                coords = [rng.below(s + 4) - 3 for s in shape]
                dcoords = [rng.below(s + 4) - 3 for s in dshape]
                if trial == 2:
                    coords[0] = shape[0] + 1  # wholly outside
                    dcoords[-1] = -box[-1]    # wholly outside
                n = 1
                for b in box:
                    n *= b
                mask = (1 << (8 * esize // lanes)) - 1
                src = [rng.u64() & mask for _ in range(count * lanes)]
                dst = [rng.u64() & mask for _ in range(dcount * lanes)]
                name = "box%d_%s" % (rank, elem[:3])
                args = {"src": K.Buf(elem, src, lanes, suffix=map_suffix(shape, box, strides)),
                        "dst": K.Buf(elem, dst, lanes,
                                     suffix=map_suffix(dshape, box, dstrides)),
                        "out": K.Buf(elem, [0] * (n * lanes), lanes),
                        "bytes": str(n * esize), "n": str(n)}
                for d in range(rank):
                    args["c%d" % d] = str(coords[d])
                    args["d%d" % d] = str(dcoords[d])
                for variant, extra in variants:
                    chk.prefix = "[%s] " % variant
                    res = K.run("ranks.kiln", name, "1", args, ["out", "dst"], extra)
                    tile = ref_load(src, lanes, shape, strides, box, coords)
                    label = "%s trial %d shape %s strides %s box %s at %s" % (
                        name, trial, shape, strides, box, coords)
                    chk.eq("load " + label, res["out"], tile)
                    chk.eq("store %s into %s at %s" % (name, dshape, dcoords), res["dst"],
                           ref_store(dst, lanes, tile, dshape, dstrides, box, dcoords))


FAULT = """
kernel @short cube_dim(4) (%src: tensor_map<u32, read>, %out: buffer<u32, write>) {
  %u = unit_pos : u32
  %tile = shared u32[16]
  %bar = barrier_cube 4:u32
  %elected = eq %u, 0:u32 : bool
  if %elected {
    tma_load %bar, %tile, 0:u32, %src, -1:i32, -1:i32
  }
  // Four bytes more than the 2 x 2 box of u32 brings.
  %want = select %elected, 20:u32, 0:u32 : u32
  %tok = barrier_arrive_tx %bar, 1:u32, %want : u32
  barrier_wait %bar, %tok
  %v = load %tile[%u] : u32
  store %out[%u], %v
}
"""


def check_faults_and_errors(chk):
    chk.prefix = ""
    with open("fault.kiln", "w") as f:
        f.write(FAULT)
    K.roundtrip("fault.kiln")
    for extra in ([], ["--no-bounds-check"]):
        p = K.run("fault.kiln", "short", "1",
                  {"src": K.Buf("u32", list(range(16)), suffix=map_suffix([4, 4], [2, 2])),
                   "out": K.Buf("u32", [0] * 4)}, [], extra, expect_fail=True)
        chk.ok("missing transaction bytes %s" % extra,
               p.returncode == 1 and "kernel fault: barrier_wait %bar at 13:3" in p.stderr
               and "0 arrival(s) and 4 transaction byte(s)" in p.stderr,
               "exit %d: %s" % (p.returncode, p.stderr.strip()[-600:]))
    cases = [
        (":shape=4x4", "%src is a tensor_map parameter: give its shape and box"),
        (":shape=4x4x1:box=2x2x1",
         "the kernel's tensor map copies use rank 2, the binding has rank 3"),
        (":shape=4x4:box=2", "the box has 1 dimension(s), the tensor 2"),
        (":shape=4x4:box=2x257", "box[1] = 257: a box dimension is 1 to 256"),
        (":shape=4x4:box=2x0", "box[1] = 0: a box dimension is 1 to 256"),
        (":shape=1x1x1x1x1x1:box=1x1x1x1x1x1", "a tensor map binding has rank 1 to 5, got 6"),
        (":shape=4x4:strides=1:box=2x2", "the shape has 2 dimension(s) but the strides 1"),
    ]
    for suffix, message in cases:
        p = K.run("fault.kiln", "short", "1",
                  {"src": K.Buf("u32", list(range(16)), suffix=suffix),
                   "out": K.Buf("u32", [0] * 4)}, [], expect_fail=True)
        chk.refused(suffix, p, message)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    variants = (("checked", []), ("unchecked", ["--no-bounds-check"]))
    rng = K.Rng(1511)
    chk = K.Checker("tensor maps")
    check_cubecl(chk, variants)
    check_ranks(chk, variants, rng)
    check_faults_and_errors(chk)
    chk.report()


if __name__ == "__main__":
    main()
