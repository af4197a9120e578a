#!/usr/bin/env python3
"""Writes a kernel at or just past one of the kernel-size limits of
docs/LangRef.md §7.1, to standard output.

  big-kernel.py operations N   N operations in all (straight-line arithmetic)
  big-kernel.py cases N        one switch of N cases
  big-kernel.py cases2 N       one switch of N cases of two labels each
  big-kernel.py depth N        N `for` loops nested in one another
  big-kernel.py sync N         N sync_cube barriers
"""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
out = ["kernel @big cube_dim(64) (%b: buffer<u32, read_write>) {"]
if kind == "operations":
    # unit_pos, load, store and N-3 adds: N operations.
    out.append("  %u = unit_pos : u32")
    out.append("  %x0 = load %b[%u] : u32")
    for i in range(1, n - 2):
        out.append("  %%x%d = add %%x%d, 3:u32 : u32" % (i, i - 1))
    out.append("  store %%b[%%u], %%x%d" % (n - 3))
elif kind == "cases":
    out.append("  %u = unit_pos : u32")
    out.append("  switch %u {")
    for i in range(n):
        out.append("    case %d {" % i)
        out.append("      store %%b[%%u], %d:u32" % (i + 1))
        out.append("    }")
    out.append("  }")
elif kind == "cases2":
    out.append("  %u = unit_pos : u32")
    out.append("  switch %u {")
    for i in range(n):
        out.append("    case %d, %d {" % (2 * i, 2 * i + 1))
        out.append("      store %%b[%%u], %d:u32" % (i + 1))
        out.append("    }")
    out.append("  }")
elif kind == "depth":
    out.append("  %u = unit_pos : u32")
    for i in range(n):
        out.append("  " * (i + 1) + "for %%i%d = 0:u32 to 2:u32 step 1:u32 {" % i)
    out.append("  " * (n + 1) + "%x = atomic_add %b[%u], 1:u32 : u32")
    for i in reversed(range(n)):
        out.append("  " * (i + 1) + "}")
elif kind == "sync":
    out.append("  %u = unit_pos : u32")
    for i in range(n):
        out.append("  sync_cube")
    out.append("  store %b[%u], %u")
else:
    sys.exit("unknown kind " + kind)
out.append("}")
print("\n".join(out))
