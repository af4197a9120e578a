#!/usr/bin/env python3
"""Interleaved cold compiles: ctime.py N BIN[,BIN2] [-- extra kiln-run args]
KERNELS env: comma list (default softmax_rows,plane_ops29,reduce_sum,matmul_tiled,hist_local,vadd)."""
import os, re, subprocess, sys, statistics
n = int(sys.argv[1]); bins = sys.argv[2].split(',')
extra = sys.argv[sys.argv.index('--')+1:] if '--' in sys.argv else []
root = '/work/main/bench/kernels'
ks = os.environ.get('KERNELS', 'softmax_rows,plane_ops29,reduce_sum,matmul_tiled,hist_local,vadd').split(',')
def params(k):
    src = open(f'{root}/{k}.kiln').read()
    m = re.search(r'kernel @' + k + r'\b.*?\)\s*\((.*?)\)\s*\{', src, re.S)
    out = []
    parts, depth, cur = [], 0, ''
    for ch in m.group(1):
        depth += ch == '<'; depth -= ch == '>'
        if ch == ',' and depth == 0: parts.append(cur); cur = ''
        else: cur += ch
    parts.append(cur)
    for p in parts:
        p = p.strip()
        if not p: continue
        name, ty = [x.strip() for x in p.split(':', 1)]
        name = name.lstrip('%')
        bm = re.match(r'buffer<\s*(\w+)', ty)
        if bm: out.append(f'--arg={name}={bm.group(1)}[1]:zeros')
        elif ty.startswith('f'): out.append(f'--arg={name}=1.0')
        else: out.append(f'--arg={name}=1')
    return out
res = {}
for i in range(n):
    for k in ks:
        for b in bins:
            r = subprocess.run([b, f'{root}/{k}.kiln', '--kernel', k, '--no-store', '--stats', '--cubes=0'] + params(k) + extra,
                               capture_output=True, text=True)
            ph = dict(re.findall(r'compile: (\w+): ([0-9.]+) ms', r.stderr))
            if not ph: print(r.stderr, file=sys.stderr); sys.exit(1)
            res.setdefault((k, b), []).append([float(ph.get(x, 0)) for x in ('lower', 'optimize', 'codegen')])
print('kernel bin lower opt codegen | total median [min max] (ms, n=%d)' % n)
for (k, b), v in res.items():
    tot = sorted(sum(x) for x in v)
    med = [statistics.median(x[j] for x in v) for j in range(3)]
    print(f'{k:13s} {b:28s} {med[0]:5.1f} {med[1]:6.1f} {med[2]:6.1f} | {statistics.median(tot):6.1f} [{tot[0]:6.1f} {tot[-1]:6.1f}]')
