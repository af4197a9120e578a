# Tensor metadata (docs/LangRef.md §16) through kiln-run.
"""Usage: tensormeta.py WORKDIR

cubecl's tensor metadata tests written as Kiln kernels, each run in the
bounds-checked and the unchecked variant, against values computed here from
the bindings:
- three rank-4 tensors: the kernel writes their 12 shape values;
- tensors of ranks 4, 3, 2: their shapes, then their ranks;
- the strides of tensors of ranks 4, 3, 2;
- tensor_len of three tensors (120, 504, 110) whose buffers hold only 12
  elements each: the shape is metadata, never checked against the buffer;
- len of a buffer of 64 u32 bound with shape [2,2,2,2] and strides
  [32,16,4,1] stays 64, the bound buffer's element count;
- a dimension at or past the rank reads shape 1 and stride 0, from a
  literal, a kernel scalar and a per-unit (divergent) dimension;
- a buffer bound without a shape: rank 1, shape [count], strides [1];
- strides defaulted from a shape alone: contiguous row-major;
- launch errors naming the parameter: a rank of 0 or 9, strides of another
  length, values and products past u32.
Every kernel file round-trips through kiln-compile --emit=ir.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import kconf as K  # noqa: E402

KERNELS = """
kernel @shapes cube_dim(1) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                            %c: buffer<f32, read>, %out: buffer<u32, write>) {
  for %d = 0:u32 to 4:u32 {
    %sa = shape %a, %d : u32
    %sb = shape %b, %d : u32
    %sc = shape %c, %d : u32
    %ib = add %d, 4:u32 : u32
    %ic = add %d, 8:u32 : u32
    store %out[%d], %sa
    store %out[%ib], %sb
    store %out[%ic], %sc
  }
}

kernel @shapes_ranks cube_dim(1) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                                  %c: buffer<f32, read>, %out: buffer<u32, write>) {
  %a0 = shape %a, 0:u32 : u32
  %a1 = shape %a, 1:u32 : u32
  %a2 = shape %a, 2:u32 : u32
  %a3 = shape %a, 3:u32 : u32
  %b0 = shape %b, 0:u32 : u32
  %b1 = shape %b, 1:u32 : u32
  %b2 = shape %b, 2:u32 : u32
  %c0 = shape %c, 0:u32 : u32
  %c1 = shape %c, 1:u32 : u32
  %ra = rank %a : u32
  %rb = rank %b : u32
  %rc = rank %c : u32
  store %out[0], %a0
  store %out[1], %a1
  store %out[2], %a2
  store %out[3], %a3
  store %out[4], %b0
  store %out[5], %b1
  store %out[6], %b2
  store %out[7], %c0
  store %out[8], %c1
  store %out[9], %ra
  store %out[10], %rb
  store %out[11], %rc
}

kernel @strides cube_dim(1) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                             %c: buffer<f32, read>, %out: buffer<u32, write>) {
  %a0 = stride %a, 0:u32 : u32
  %a1 = stride %a, 1:u32 : u32
  %a2 = stride %a, 2:u32 : u32
  %a3 = stride %a, 3:u32 : u32
  %b0 = stride %b, 0:u32 : u32
  %b1 = stride %b, 1:u32 : u32
  %b2 = stride %b, 2:u32 : u32
  %c0 = stride %c, 0:u32 : u32
  %c1 = stride %c, 1:u32 : u32
  store %out[0], %a0
  store %out[1], %a1
  store %out[2], %a2
  store %out[3], %a3
  store %out[4], %b0
  store %out[5], %b1
  store %out[6], %b2
  store %out[7], %c0
  store %out[8], %c1
}

kernel @lens cube_dim(1) (%a: buffer<f32, read>, %b: buffer<f32, read>,
                          %c: buffer<f32, read>, %out: buffer<u32, write>) {
  %la = tensor_len %a : u32
  %lb = tensor_len %b : u32
  %lc = tensor_len %c : u32
  %na = len %a : u32
  store %out[0], %la
  store %out[1], %lb
  store %out[2], %lc
  store %out[3], %na
}

kernel @buffer_len cube_dim(1) (%t: buffer<u32, read_write>, %out: buffer<u32, write>) {
  %n = len %t : u32
  %l = tensor_len %t : u32
  %r = rank %t : u32
  store %out[0], %n
  store %out[1], %l
  store %out[2], %r
  // Accesses stay checked against the buffer, not the shape.
  %last = sub %n, 1:u32 : u32
  store %t[%last], 7:u32
}

kernel @dims cube_dim(10) (%t: buffer<i32, read>, %out: buffer<u32, write>,
                           %dim: u32) {
  %u = unit_pos : u32
  // Each unit reads its own dimension, past the rank included.
  %s = shape %t, %u : u32
  %st = stride %t, %u : u32
  %i = mul %u, 2:u32 : u32
  %j = add %i, 1:u32 : u32
  store %out[%i], %s
  store %out[%j], %st
  %first = eq %u, 0:u32 : bool
  if %first {
    %s7 = shape %t, 7:u32 : u32
    %t7 = stride %t, 7:u32 : u32
    %sbig = shape %t, 4294967295:u32 : u32
    %tbig = stride %t, 4294967295:u32 : u32
    %sd = shape %t, %dim : u32
    %td = stride %t, %dim : u32
    store %out[20], %s7
    store %out[21], %t7
    store %out[22], %sbig
    store %out[23], %tbig
    store %out[24], %sd
    store %out[25], %td
  }
}
"""


def suffix(shape, strides=None):
    s = ":shape=" + "x".join(str(d) for d in shape)
    if strides is not None:
        s += ":strides=" + "x".join(str(d) for d in strides)
    return s


def row_major(shape):
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return list(reversed(out))


def tensors(shapes, strides=None, count=12):
    names = ("a", "b", "c")
    args = {}
    for i, shape in enumerate(shapes):
        st = strides[i] if strides else None
        args[names[i]] = K.Buf("f32", [0] * count, suffix=suffix(shape, st))
    return args


def check(chk, variants):
    with open("meta.kiln", "w") as f:
        f.write(KERNELS)
    K.roundtrip("meta.kiln")
    for variant, extra in variants:
        chk.prefix = "[%s] " % variant
        # (a) three rank-4 tensors.
        shapes = [[2, 3, 4, 5], [9, 8, 7, 6], [10, 11, 12, 13]]
        args = tensors(shapes, [row_major(s) for s in shapes])
        args["out"] = K.Buf("u32", [0] * 12)
        res = K.run("meta.kiln", "shapes", "1", args, ["out"], extra)
        chk.eq("shapes rank 4", res["out"], sum(shapes, []))
        # (b) ranks 4, 3, 2: shapes, then ranks.
        shapes = [[2, 3, 4, 5], [9, 8, 7], [10, 11]]
        args = tensors(shapes, [row_major(s) for s in shapes])
        args["out"] = K.Buf("u32", [0] * 12)
        res = K.run("meta.kiln", "shapes_ranks", "1", args, ["out"], extra)
        chk.eq("shapes and ranks", res["out"], sum(shapes, []) + [4, 3, 2])
        # (c) strides of ranks 4, 3, 2 (not row-major: any values bind).
        strides = [[1, 2, 3, 4], [4, 5, 6], [3, 2]]
        args = tensors(shapes, strides)
        args["out"] = K.Buf("u32", [0] * 9)
        res = K.run("meta.kiln", "strides", "1", args, ["out"], extra)
        chk.eq("strides", res["out"], sum(strides, []))
        # Strides defaulted from the shape: contiguous row-major.
        args = tensors(shapes)
        args["out"] = K.Buf("u32", [0] * 9)
        res = K.run("meta.kiln", "strides", "1", args, ["out"], extra)
        chk.eq("default strides", res["out"], sum((row_major(s) for s in shapes), []))
        # (d) tensor_len is the shape's product, past the 12-element buffers.
        args = tensors(shapes)
        args["out"] = K.Buf("u32", [0] * 4)
        res = K.run("meta.kiln", "lens", "1", args, ["out"], extra)
        chk.eq("tensor_len", res["out"], [120, 504, 110, 12])
        # No shape given: rank 1, shape [count], strides [1].
        args = {n: K.Buf("f32", [0] * c) for n, c in (("a", 5), ("b", 17), ("c", 1))}
        args["out"] = K.Buf("u32", [0] * 9)
        res = K.run("meta.kiln", "strides", "1", args, ["out"], extra)
        chk.eq("default strides of a plain buffer", res["out"], [1, 0, 0, 0, 1, 0, 0, 1, 0])
        args["out"] = K.Buf("u32", [0] * 4)
        res = K.run("meta.kiln", "lens", "1", args, ["out"], extra)
        chk.eq("default tensor_len", res["out"], [5, 17, 1, 5])
        args["out"] = K.Buf("u32", [0] * 12)
        res = K.run("meta.kiln", "shapes_ranks", "1", args, ["out"], extra)
        chk.eq("default shapes and ranks", res["out"],
               [5, 1, 1, 1, 17, 1, 1, 1, 1, 1, 1, 1])
        # (e) len is the buffer's element count whatever the shape.
        res = K.run("meta.kiln", "buffer_len", "1",
                    {"t": K.Buf("u32", [0] * 64, suffix=suffix([2, 2, 2, 2], [32, 16, 4, 1])),
                     "out": K.Buf("u32", [0] * 3)}, ["out", "t"], extra)
        chk.eq("len of a shaped buffer", res["out"], [64, 16, 4])
        chk.eq("store at len-1", res["t"], [0] * 63 + [7])
        # (f) dimensions past the rank, constant or not.
        for dim in (0, 2, 3, 9):
            shape, st = [6, 5, 4], [40, 8, 2]
            res = K.run("meta.kiln", "dims", "1",
                        {"t": K.Buf("i32", [0] * 4, suffix=suffix(shape, st)),
                         "out": K.Buf("u32", [0] * 26), "dim": str(dim)}, ["out"], extra)
            want = []
            for u in range(10):
                want += [shape[u], st[u]] if u < 3 else [1, 0]
            want += [1, 0, 1, 0]
            want += [shape[dim], st[dim]] if dim < 3 else [1, 0]
            chk.eq("dims (dim %d)" % dim, res["out"], want)


def check_errors(chk):
    """Bindings the launch refuses, naming the parameter."""
    chk.prefix = ""
    cases = [
        ("shape=" + "x".join(["1"] * 9), "a tensor binding has rank 1 to 8, got 9"),
        ("shape=2x3:strides=3", "the shape has 2 dimension(s) but the strides 1"),
        ("shape=4294967296", "shape[0] = 4294967296 does not fit u32"),
        ("shape=2:strides=4294967296", "strides[0] = 4294967296 does not fit u32"),
        ("shape=65536x65536", "the shape's product (the tensor_len) exceeds u32"),
        ("shape=2x2:box=1x1", "box= binds a tensor map, but %a is a buffer parameter"),
        ("strides=1", "strides= needs a shape="),
        ("shape=2xx3", "shape='2xx3' is not a list of numbers"),
        ("shape=2:shape=3", "'shape=' is given twice"),
    ]
    for spec, message in cases:
        p = K.run("meta.kiln", "lens", "1",
                  {"a": K.Buf("f32", [0] * 4, suffix=":" + spec), "b": K.Buf("f32", [0]),
                   "c": K.Buf("f32", [0]), "out": K.Buf("u32", [0] * 4)}, [], expect_fail=True)
        chk.refused(spec, p, message)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    variants = (("checked", []), ("unchecked", ["--no-bounds-check"]))
    chk = K.Checker("tensor metadata")
    check(chk, variants)
    check_errors(chk)
    chk.report()


if __name__ == "__main__":
    main()
