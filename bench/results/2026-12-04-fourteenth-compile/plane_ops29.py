#!/usr/bin/env python3
"""plane_ops29's compile time in a process that has compiled before.

Usage: plane_ops29.py KILN_COMPILE [ROUNDS]

Makes 11 copies of bench/kernels/plane_ops29.kiln under other kernel names
(so that each is compiled, not found in the store), then per round and per
ISA (the host's, and AVX2 with --mattr=-avx512f) times one
`kiln-compile --store=TMP -j 1` process over the first copy and one over
all 11, each into an empty store. The second minus the first, over 10, is
the time of a compile after the process's first: what the issue's "a
kernel with 29 plane operations compiles in <= 60 ms" measures, without
the process's start and its first compile's one-time costs.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

kiln_compile = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
here = os.path.dirname(os.path.abspath(__file__))
source = open(os.path.join(here, "..", "..", "kernels", "plane_ops29.kiln")).read()
work = tempfile.mkdtemp()
files = []
for i in range(11):
    path = os.path.join(work, f"p{i:02d}.kiln")
    with open(path, "w") as f:
        f.write(source.replace("@plane_ops29", f"@plane_ops29_{i}"))
    files.append(path)
store = os.path.join(work, "store")


def timed(paths, extra):
    shutil.rmtree(store, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([kiln_compile] + extra + [f"--store={store}", "-j", "1"] + paths,
                   check=True, capture_output=True)
    return time.perf_counter() - start


for r in range(rounds):
    for extra in ([], ["--mattr=-avx512f"]):
        one = timed(files[:1], extra)
        eleven = timed(files, extra)
        print(f"round {r} {' '.join(extra) or 'host ISA'}: one compile "
              f"{one * 1000:.0f} ms, each further one {(eleven - one) / 10 * 1000:.1f} ms")
shutil.rmtree(work)
