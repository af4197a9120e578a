#!/usr/bin/env python3
# loop_of_first_fma.py ASM: prints the body of the innermost loop that holds
# the first vfmadd of ASM (kiln-compile --emit=asm), for llvm-mca.
import re
import sys
lines = open(sys.argv[1]).read().split('\n')
first = next(i for i, l in enumerate(lines) if 'vfmadd' in l)
# The first branch after it back to a label at or before it closes the loop.
for j in range(first, len(lines)):
    m = re.match(r'\s+j\w+\s+(\.LBB\w+)', lines[j])
    if m:
        lab = m.group(1) + ':'
        idx = [i for i, l in enumerate(lines[:first + 1]) if l.startswith(lab)]
        if idx:
            body = [l for l in lines[idx[-1] + 1:j + 1] if l.startswith('\t') and not l.startswith('\t.')]
            print('\n'.join(body)); break
