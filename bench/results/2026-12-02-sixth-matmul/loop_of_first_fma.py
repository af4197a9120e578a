#!/usr/bin/env python3
import re, subprocess, sys
# loop_of_first_fma.py ASM: prints the body of the innermost loop that holds
# the first vfmadd of ASM (kiln-compile --emit=asm), for llvm-mca.
lines = open(sys.argv[1]).read().split('\n')
first = next(i for i, l in enumerate(lines) if 'vfmadd' in l)
# find backward branch after first whose target label is at or before first
for j in range(first, len(lines)):
    m = re.match(r'\s+j\w+\s+(\.LBB\w+)', lines[j])
    if m:
        lab = m.group(1) + ':'
        idx = [i for i, l in enumerate(lines[:first + 1]) if l.startswith(lab)]
        if idx:
            body = [l for l in lines[idx[-1] + 1:j + 1] if l.startswith('\t') and not l.startswith('\t.')]
            print('\n'.join(body)); break
