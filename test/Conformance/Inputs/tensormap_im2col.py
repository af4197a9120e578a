# Im2col tensor maps (TMA im2col loads) through kiln-run.
"""Usage: tensormap_im2col.py WORKDIR

docs/LangRef.md §17.7, each kernel run in the bounds-checked and in the
unchecked variant, against a reference computed here by enumerating the
pixel boxes of the images one after the other:
- cubecl's im2col test: a 1 x 3 x 3 x 8 NHWC f32 tensor holding 1..72,
  pixel box corners (-1, -1) and (0, 0), 8 channels, 16 pixels, one load
  per position of a 2 x 2 filter at (0, -1, -1, 0), the expected columns
  also written out literally;
- 3-D, 4-D and 5-D maps (1 to 3 spatial dimensions) of u32 and of lines of
  vec<2 x u16> over contiguous and padded strides and shapes reaching past
  their buffer, with random corners, offsets, channel counts and starts;
- fewer channels per pixel than the tensor has, from a channel offset, and
  channels past the last one (zeros);
- a column that runs from one image into the next, and one that runs past
  the last image (zeros);
- pixels wholly outside the tensor (large offsets), and a start outside
  the pixel box (a column of zeros);
- a wait that expects more bytes than a column brings is a kernel fault;
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


def im2col_suffix(shape, lower, upper, chans, pixels, strides=None):
    s = ":shape=" + dims(shape)
    if strides is not None:
        s += ":strides=" + dims(strides)
    return s + ":im2col=%s/%s/%d/%d" % (dims(lower), dims(upper), chans, pixels)


def row_major(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return list(reversed(out))


def box_positions(lower, ext):
    """The positions of one image's pixel box, the last dimension fastest."""
    pts = [[]]
    for lo, e in zip(lower, ext):
        pts = [p + [lo + i] for p in pts for i in range(e)]
    return pts


def ref_im2col(src, lanes, shape, strides, lower, upper, chans, pixels,
               coords, offsets):
    """The column a load copies: pixels x chans elements, pixel-major."""
    count = len(src) // lanes
    n_img, spatial, c_dim = shape[0], shape[1:-1], shape[-1]
    ext = [s + u - lo for s, u, lo in zip(spatial, upper, lower)]
    start = coords[1:-1]
    zero = [0] * (pixels * chans * lanes)
    if any(not (lo <= c < lo + e) for c, lo, e in zip(start, lower, ext)):
        return zero  # a start outside the pixel box
    # The boxes of images n0 - 1 .. past the column's end, laid end to end.
    per_image = box_positions(lower, ext)
    first = min(coords[0], 0) - 1
    last = max(coords[0], n_img) + pixels // len(per_image) + 2
    seq = [(n, p) for n in range(first, last) for p in per_image]
    at = seq.index((coords[0], start))
    out = []
    for n, pos in seq[at:at + pixels]:
        x = [p + o for p, o in zip(pos, offsets)]
        for j in range(chans):
            ch = coords[-1] + j
            full = [n] + x + [ch]
            e = None
            if all(0 <= v < s for v, s in zip(full, shape)):
                e = sum(v * st for v, st in zip(full, strides))
            if e is not None and e < count:
                out += src[e * lanes:(e + 1) * lanes]
            else:
                out += [0] * lanes
    return out


CUBECL = """
kernel @im2col cube_dim(128, 4) (%input: tensor_map<f32, read, im2col>,
                                 %output: buffer<f32, write>) {
  %u = unit_pos : u32
  %stage = shared f32[512]
  %cd = cube_dim : u32
  %bar = barrier_cube %cd
  %elected = eq %u, 0:u32 : bool
  if %elected {
    tma_load_im2col %bar, %stage, 0:u32, %input, 0:i32, -1:i32, -1:i32, 0:i32 offsets 0:u16, 0:u16
    tma_load_im2col %bar, %stage, 128:u32, %input, 0:i32, -1:i32, -1:i32, 0:i32 offsets 0:u16, 1:u16
    tma_load_im2col %bar, %stage, 256:u32, %input, 0:i32, -1:i32, -1:i32, 0:i32 offsets 1:u16, 0:u16
    tma_load_im2col %bar, %stage, 384:u32, %input, 0:i32, -1:i32, -1:i32, 0:i32 offsets 1:u16, 1:u16
  }
  %bytes = select %elected, 2048:u32, 0:u32 : u32
  %tok = barrier_arrive_tx %bar, 1:u32, %bytes : u32
  barrier_wait %bar, %tok
  %v = load %stage[%u] : f32
  store %output[%u], %v
}
"""

# cubecl's expected columns: per filter position, pixel v - 1's 8 channels
# for each v, 8 zeros for 0.
CUBECL_PIXELS = [
    [0, 0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9],
    [0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0],
    [0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0, 0, 0, 0],
    [1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9, 0, 0, 0, 0, 0],
]


def check_cubecl(chk, variants):
    with open("cubecl.kiln", "w") as f:
        f.write(CUBECL)
    K.roundtrip("cubecl.kiln")
    shape = [1, 3, 3, 8]
    src = [f32(float(i + 1)) for i in range(72)]
    want = []
    for pix in CUBECL_PIXELS:
        for v in pix:
            want += [f32(float((v - 1) * 8 + c + 1)) if v else 0 for c in range(8)]
    ref = []
    for ky in range(2):
        for kx in range(2):
            ref += ref_im2col(src, 1, shape, row_major(shape), [-1, -1], [0, 0],
                              8, 16, [0, -1, -1, 0], [ky, kx])
    chk.prefix = ""
    chk.eq("the reference gives cubecl's columns", ref, want)
    for variant, extra in variants:
        chk.prefix = "[%s] " % variant
        res = K.run("cubecl.kiln", "im2col", "1",
                    {"input": K.Buf("f32", src,
                                    suffix=im2col_suffix(shape, [-1, -1], [0, 0], 8, 16)),
                     "output": K.Buf("f32", [0] * 512)}, ["output"], extra)
        chk.eq("cubecl im2col", res["output"], want)


def generic_kernel(rank, elem, name):
    """Unit 0 loads a column of %src at %c* with offsets %o* into the tile
    from %soff on; the cube waits for it (expecting %bytes) and copies the
    %n elements from %soff on to %out."""
    cs = ", ".join("%%c%d" % i for i in range(rank))
    os_ = ", ".join("%%o%d" % i for i in range(rank - 2))
    params = ", ".join("%%c%d: i32" % i for i in range(rank)) + ", " + \
        ", ".join("%%o%d: u16" % i for i in range(rank - 2))
    return """
kernel @%s cube_dim(64) (%%src: tensor_map<%s, read, im2col>,
                        %%out: buffer<%s, write>, %%bytes: u32, %%n: u32,
                        %%soff: u32, %s) {
  %%u = unit_pos : u32
  %%tile = shared %s[1024]
  %%bar = barrier_cube 64:u32
  %%elected = eq %%u, 0:u32 : bool
  if %%elected {
    tma_load_im2col %%bar, %%tile, %%soff, %%src, %s offsets %s
  }
  %%want = select %%elected, %%bytes, 0:u32 : u32
  %%tok = barrier_arrive_tx %%bar, 1:u32, %%want : u32
  barrier_wait %%bar, %%tok
  for %%i = %%u to %%n step 64:u32 {
    %%j = add %%i, %%soff : u32
    %%v = load %%tile[%%j] : %s
    store %%out[%%i], %%v
  }
}
""" % (name, elem, elem, params, elem, cs, os_, elem)


ELEMS = (("u32", 1, 4), ("vec<2 x u16>", 2, 4))


def kname(rank, elem):
    return "im2col%d_%s" % (rank, elem[:3])


def write_generic():
    text = ""
    for rank in range(3, 6):
        for elem, _, _ in ELEMS:
            text += generic_kernel(rank, elem, kname(rank, elem))
    with open("generic.kiln", "w") as f:
        f.write(text)
    K.roundtrip("generic.kiln")


def run_case(chk, variants, rng, label, elem, shape, lower, upper, chans,
             pixels, coords, offsets, strides=None, count=None, soff=0):
    rank = len(shape)
    lanes, esize = [(lanes, size) for e, lanes, size in ELEMS if e == elem][0]
    strides = strides or row_major(shape)
    if count is None:
        count = max(s * st for s, st in zip(shape, strides))
    mask = (1 << (8 * esize // lanes)) - 1
    src = [rng.u64() & mask for _ in range(count * lanes)]
    n = pixels * chans
    args = {"src": K.Buf(elem, src, lanes,
                         suffix=im2col_suffix(shape, lower, upper, chans, pixels,
                                              strides)),
            "out": K.Buf(elem, [0] * (n * lanes), lanes),
            "bytes": str(n * esize), "n": str(n), "soff": str(soff)}
    for d in range(rank):
        args["c%d" % d] = str(coords[d])
    for d in range(rank - 2):
        args["o%d" % d] = str(offsets[d])
    want = ref_im2col(src, lanes, shape, strides, lower, upper, chans, pixels,
                      coords, offsets)
    for variant, extra in variants:
        chk.prefix = "[%s] " % variant
        res = K.run("generic.kiln", kname(rank, elem), "1", args, ["out"], extra)
        chk.eq("%s %s shape %s strides %s corners %s/%s %d ch x %d px at %s "
               "offsets %s" % (label, elem, shape, strides, lower, upper, chans,
                               pixels, coords, offsets), res["out"], want)


def check_named(chk, variants, rng):
    # One spatial dimension (3-D) and three (5-D), contiguous.
    run_case(chk, variants, rng, "3-D", "u32", [2, 5, 3], [-2], [0], 3, 7,
             [0, -2, 0], [1])
    run_case(chk, variants, rng, "5-D", "u32", [1, 3, 2, 3, 4], [-1, 0, -1],
             [0, 0, 0], 4, 20, [0, -1, 0, -1, 1], [1, 0, 1])
    # Three of eight channels from channel 4, and two from 6 (then past C).
    run_case(chk, variants, rng, "channel offset", "u32", [1, 3, 3, 8],
             [-1, -1], [0, 0], 3, 16, [0, -1, -1, 4], [1, 0])
    run_case(chk, variants, rng, "channels past C", "u32", [1, 3, 3, 8],
             [-1, -1], [0, 0], 4, 16, [0, -1, -1, 6], [0, 0], soff=5)
    # From image 0 into image 1 (9 pixels per box), and past the last image.
    run_case(chk, variants, rng, "into the next image", "u32", [2, 2, 2, 3],
             [-1, -1], [0, 0], 3, 16, [0, -1, 0, 0], [1, 1])
    run_case(chk, variants, rng, "past the last image", "u32", [2, 2, 2, 3],
             [-1, -1], [0, 0], 3, 16, [1, 0, -1, 0], [0, 1])
    # Every pixel outside: large offsets; a start outside the pixel box.
    run_case(chk, variants, rng, "pixels outside", "u32", [1, 3, 3, 2],
             [0, 0], [0, 0], 2, 9, [0, 0, 0, 0], [300, 3])
    run_case(chk, variants, rng, "start outside the box", "u32", [1, 3, 3, 2],
             [0, 0], [0, 0], 2, 9, [0, 0, 3, 0], [0, 0])


def check_random(chk, variants, rng):
    for rank in range(3, 6):
        for elem, _, _ in ELEMS:
            for trial in range(4):
                spatial = rank - 2
                shape = [1 + rng.below(3)] + \
                    [1 + rng.below(5 if spatial < 3 else 3) for _ in range(spatial)] + \
                    [1 + rng.below(6)]
                lower, upper = [], []
                for s in shape[1:-1]:
                    lo = -rng.below(3)
                    up = rng.below(3) - 1
                    while s + up - lo < 1:
                        up += 1
                    lower.append(lo)
                    upper.append(up)
                ext = [s + u - lo for s, u, lo in zip(shape[1:-1], upper, lower)]
                per_image = 1
                for e in ext:
                    per_image *= e
                chans = 1 + rng.below(shape[-1] + 2)
                pixels = 1 + rng.below(min(64, 2 * per_image + 3))
                coords = [rng.below(shape[0] + 1) - (1 if trial == 3 else 0)]
                coords += [lo + rng.below(e) for lo, e in zip(lower, ext)]
                coords += [rng.below(shape[-1] + 1) - 1]
                offsets = [rng.below(3) for _ in range(spatial)]
                strides, count = None, None
                if trial % 2 == 1:
                    padded = [s + rng.below(3) for s in shape]
                    strides = row_major(padded)
                    count = 1
                    for p in padded:
                        count *= p
                    if trial == 3:
                        count = max(1, count - 5)  # the shape reaches past it
                run_case(chk, variants, rng, "random trial %d" % trial, elem,
                         shape, lower, upper, chans, pixels, coords, offsets,
                         strides, count, soff=rng.below(8))


FAULT = """
kernel @short cube_dim(4) (%src: tensor_map<u32, read, im2col>, %out: buffer<u32, write>) {
  %u = unit_pos : u32
  %tile = shared u32[16]
  %bar = barrier_cube 4:u32
  %elected = eq %u, 0:u32 : bool
  if %elected {
    tma_load_im2col %bar, %tile, 0:u32, %src, 0:i32, -1:i32, -1:i32, 0:i32 offsets 0:u16, 0:u16
  }
  // Four bytes more than the 4 pixels x 2 channels of u32 bring.
  %want = select %elected, 36:u32, 0:u32 : u32
  %tok = barrier_arrive_tx %bar, 1:u32, %want : u32
  barrier_wait %bar, %tok
  %v = load %tile[%u] : u32
  store %out[%u], %v
}

kernel @meta cube_dim(1) (%src: tensor_map<u32, read, im2col>, %out: buffer<u32, write>) {
  %r = rank %src : u32
  store %out[0], %r
}

kernel @tiled cube_dim(1) (%src: tensor_map<u32, read>, %out: buffer<u32, write>) {
  %r = rank %src : u32
  store %out[0], %r
}
"""


def check_faults_and_errors(chk):
    chk.prefix = ""
    with open("fault.kiln", "w") as f:
        f.write(FAULT)
    K.roundtrip("fault.kiln")
    good = im2col_suffix([1, 3, 3, 2], [-1, -1], [0, 0], 2, 4)
    for extra in ([], ["--no-bounds-check"]):
        p = K.run("fault.kiln", "short", "1",
                  {"src": K.Buf("u32", list(range(18)), suffix=good),
                   "out": K.Buf("u32", [0] * 4)}, [], extra, expect_fail=True)
        chk.ok("missing transaction bytes %s" % extra,
               p.returncode == 1 and "kernel fault: barrier_wait %bar at 13:3" in p.stderr
               and "0 arrival(s) and 4 transaction byte(s)" in p.stderr,
               "exit %d: %s" % (p.returncode, p.stderr.strip()[-600:]))
    refused = "launch of kernel '%s': argument 0 (%%src): "
    cases = [
        ("short", ":shape=1x3x3x2x1:im2col=-1x-1x0/0x0x0/2/4",
         refused % "short" + "the kernel's tensor map copies use rank 4, the "
         "binding has rank 5"),
        ("meta", ":shape=3x2:im2col=/0/2/4",
         refused % "meta" + "an im2col tensor map binding has rank 3 to 5, got 2"),
        ("short", ":shape=1x3x3x2:im2col=-1/0x0/2/4",
         "pixel_box_lower_corner has 1 entry(ies), the tensor 2 spatial "
         "dimension(s) (rank - 2)"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0/2/4",
         "pixel_box_upper_corner has 1 entry(ies), the tensor 2 spatial"),
        ("short", ":shape=1x3x3x2:im2col=-32769x-1/0x0/2/4",
         "pixel_box_lower_corner[0] = -32769: a corner is -32768 to 32767"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0x32768/2/4",
         "pixel_box_upper_corner[1] = 32768: a corner is -32768 to 32767"),
        ("short", ":shape=1x3x3x2:im2col=2x-1/-2x0/2/4",
         "the pixel box of spatial dimension 0 is empty: shape 3 + upper "
         "corner -2 - lower corner 2 = -1"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0x0/0/4",
         "channels_per_pixel = 0: it is 1 to 256"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0x0/257/4",
         "channels_per_pixel = 257: it is 1 to 256"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0x0/2/1025",
         "pixels_per_column = 1025: it is 1 to 1024"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0x0/2/0",
         "pixels_per_column = 0: it is 1 to 1024"),
        # kiln-run's spec errors.
        ("short", ":shape=1x3x3x2",
         "%src is an im2col tensor_map parameter: give its shape and im2col "
         "parameters"),
        ("short", ":shape=1x3x3x2:box=1x1x1x1",
         "%src is an im2col tensor_map parameter"),
        ("short", ":im2col=-1x-1/0x0/2/4", "im2col= needs a shape="),
        ("short", ":shape=1x3x3x2:box=1x1x1x1:im2col=-1x-1/0x0/2/4",
         "box= (a tiled tensor map) and im2col= (an im2col one) exclude each other"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0x0/2",
         "im2col='-1x-1/0x0/2' has 3 part(s), expected 4 separated by '/'"),
        ("short", ":shape=1x3x3x2:im2col=-1x+1/0x0/2/4",
         "has corner entry '+1', not a signed 64-bit number"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0x0/two/4",
         "channels per pixel 'two' is not a number below 2^64"),
        ("short", ":shape=1x3x3x2:im2col=-1x-1/0x0/2/4:im2col=-1x-1/0x0/2/4",
         "'im2col=' is given twice"),
        ("tiled", ":shape=1x3x3x2:im2col=-1x-1/0x0/2/4",
         "im2col= binds an im2col tensor map, but %src is a tiled tensor_map "
         "parameter"),
    ]
    for kernel, suffix, message in cases:
        p = K.run("fault.kiln", kernel, "1",
                  {"src": K.Buf("u32", list(range(18)), suffix=suffix),
                   "out": K.Buf("u32", [0] * 4)}, [], expect_fail=True)
        chk.refused("%s %s" % (kernel, suffix), p, message)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    variants = (("checked", []), ("unchecked", ["--no-bounds-check"]))
    rng = K.Rng(1777)
    chk = K.Checker("im2col tensor maps")
    check_cubecl(chk, variants)
    write_generic()
    check_named(chk, variants, rng)
    check_random(chk, variants, rng)
    check_faults_and_errors(chk)
    chk.report()


if __name__ == "__main__":
    main()
