#!/usr/bin/env python3
"""report.py - Kiln beside native C++ in its own process, PoCL and the machine's limits.

Usage: report.py RUN_DIR [--maxload CORES] [--no-chart]

RUN_DIR holds what bench/run.sh wrote:
  raw.txt    RESULT <tag> <kernel> <metric> <value> lines from kiln-bench,
             pocl-bench and native-bench (tags kiln1, pocl_cold1, pocl_warm1,
             native1, ...: the mode is the tag without its trailing digits),
             and RESULT <tag> <system> <bench> <metric> <value> lines from
             kiln-corpus (tags corpus_<isa>_r<N>: the foreign-kernel corpus)
  load.txt   LOAD <tag> idle_before=.. wall_s=.. own_cpu_s=.. foreign_cores=..
  env.txt    machine, CPU flags, PoCL's device and package versions
and receives results.json, summary.md and chart.png (gnuplot, pngcairo).

The figures that count are kiln-bench's in-process ratios: per kernel, Kiln's
time over a native C++ version's on the same buffers and threads, the two
interleaved round by round, as the median and the 10th/90th percentiles of the
per-round ratios (over processes: the median of each). Times of other
processes (PoCL, native-bench) are shown beside them, not divided into them.

The corpus table gives, per ISA and benchmark, the median over processes of
each system's median time, and Kiln's time over PoCL's and over the native
loops' (per process, the three systems interleaved in it; then the median
over processes), with the geometric means of both ratios over the benchmarks.

A process during which other processes used more than MAXLOAD cores (default
0.3) is left out, unless that would leave its mode with no process at all: then
all of that mode's processes are used and the summary says "(noisy)". Nothing
here asserts a timing: targets are reported as met or not, never enforced.
"""
import argparse
import json
import math
import re
import shutil
import statistics as st
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

N = 1 << 24
MATMUL_FLOP = 2.0 * 1024 ** 3
# kernel -> (bytes or flop per launch, unit)
WORK = {
    "vadd": (12.0 * N, "GB/s"), "saxpy": (12.0 * N, "GB/s"),
    "reduce_sum": (4.0 * N, "GB/s"), "reduce_plane": (4.0 * N, "GB/s"),
    "reduce_plane2": (4.0 * N, "GB/s"),
    "softmax_rows": (8.0 * 4096 * 1024, "GB/s"),
    "hist_global": (4.0 * N, "GB/s"), "hist_local": (4.0 * N, "GB/s"),
    "matmul_tiled": (MATMUL_FLOP, "GFLOP/s"),
    "scan_plane": (8.0 * N, "GB/s"), "matmul_cmma": (MATMUL_FLOP, "GFLOP/s"),
    "matmul_cube_mma": (MATMUL_FLOP, "GFLOP/s"),
}
KERNELS = list(WORK)
# What "native" is for each kernel in kiln-bench (same algorithm, same
# buffers and threads), and the other references it is timed against.
NATIVE_WHAT = {
    "vadd": "OpenMP loop", "saxpy": "OpenMP loop, no contraction",
    "reduce_sum": "per-block vector sums", "reduce_plane": "per-block vector sums",
    "reduce_plane2": "per-block vector sums",
    "softmax_rows": "vector expf (libmvec)", "hist_global": "one atomic per element",
    "hist_local": "private bins per thread",
    "matmul_tiled": "its own algorithm by hand (16 x 16 tiles staged)",
    "scan_plane": "sequential per-block scan", "matmul_cmma": "blocked i-k-j loops",
    "matmul_cube_mma": "blocked i-k-j loops",
}
EXTRA_REFS = {
    "vadd": ["triad"], "saxpy": ["native_fma", "triad"], "softmax_rows": ["native_scalar"],
    "hist_global": ["native_private"], "matmul_tiled": ["openblas", "native_blocked"],
    "matmul_cmma": ["openblas", "kiln_tiled"],
    "matmul_cube_mma": ["openblas", "kiln_tiled", "kiln_cmma"],
}
# The suite's targets (docs/Performance.md, "The targets"): (reference, the
# largest time ratio Kiln/reference, text)
TARGETS = {
    "vadd": ("native", 1 / 0.95, ">= 95 % of native (ratio <= 1.053)"),
    "saxpy": ("native", 1 / 0.95, ">= 95 % of native (ratio <= 1.053)"),
    "reduce_sum": ("native", 1.5, "<= 1.5x native"),
    "reduce_plane": ("native", 1.3, "<= 1.3x native"),
    "reduce_plane2": ("native", 1.3, "<= 1.3x native"),
    "softmax_rows": ("native", 1.3, "<= 1.3x vectorised native"),
    "hist_global": ("native_private", 2.0, "<= 2x native (private bins)"),
    "hist_local": ("native", 1.5, "<= 1.5x native"),
    "matmul_tiled": ("openblas", 1 / 0.7, ">= 70 % of OpenBLAS (ratio <= 1.43)"),
}
POCL = ["pocl_cold", "pocl_warm"]


def parse_run(run, maxload):
    """Returns (data, processes, notes): data[mode][kernel][metric] = [values]."""
    load = {}
    lt = run / "load.txt"
    if lt.exists():
        for line in lt.read_text().splitlines():
            m = re.match(r"LOAD (\S+) (.*)", line)
            if not m:
                continue
            fields = dict(kv.split("=", 1) for kv in m.group(2).split())
            load[m.group(1)] = fields
    per_tag = defaultdict(list)
    for line in (run / "raw.txt").read_text().splitlines():
        p = line.split()
        if len(p) != 5 or p[0] != "RESULT":
            continue
        try:
            per_tag[p[1]].append((p[2], p[3], float(p[4])))
        except ValueError:
            continue
    by_mode = defaultdict(list)
    for tag in per_tag:
        by_mode[re.sub(r"\d+$", "", tag)].append(tag)
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    processes, notes = {}, []
    for mode, tags in sorted(by_mode.items()):

        def foreign(t):
            try:
                return float(load.get(t, {}).get("foreign_cores", "0"))
            except ValueError:
                return 0.0

        clean = [t for t in tags if foreign(t) <= maxload]
        used = clean if clean else tags
        if not clean:
            notes.append(f"{mode}: every process ran under foreign load > "
                         f"{maxload} cores; all {len(tags)} used (noisy)")
        for t in tags:
            processes[t] = {"mode": mode, "used": t in used,
                            **{k: v for k, v in load.get(t, {}).items()}}
        for t in used:
            for k, m, v in per_tag[t]:
                data[mode][k][m].append(v)
    return data, processes, notes


# The foreign-kernel corpus (kiln-corpus): its ISAs as bench/run.sh runs them.
CORPUS_ISAS = {
    "avx512": "512-bit code: Kiln with the host's features, the native loops "
              "-march=native",
    "avx2": "AVX2 code: Kiln --mattr=-avx512f, the native loops "
            "-march=x86-64-v3",
    "sse42": "x86-64-v2 code (SSE4.2, no AVX): Kiln "
             "--mattr=-avx,-avx2,-avx512f, the native loops -march=x86-64-v2",
}
CORPUS_SYSTEMS = ("kiln", "opencl", "native")


def parse_corpus(run, maxload):
    """Returns (runs, processes, notes): runs[isa][tag][bench][system][metric]
    = value, for the processes of each ISA that ran under little foreign load
    (all of them, noted, when none did)."""
    load = {}
    lt = run / "load.txt"
    if lt.exists():
        for line in lt.read_text().splitlines():
            m = re.match(r"LOAD (\S+) (.*)", line)
            if m:
                load[m.group(1)] = dict(kv.split("=", 1) for kv in m.group(2).split())
    per_tag = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for line in (run / "raw.txt").read_text().splitlines():
        p = line.split()
        if len(p) != 6 or p[0] != "RESULT" or not p[1].startswith("corpus_"):
            continue
        try:
            per_tag[p[1]][p[3]][p[2]][p[4]] = float(p[5])
        except ValueError:
            continue
    by_isa = defaultdict(list)
    for tag in per_tag:
        m = re.match(r"corpus_(\w+?)_r\d+$", tag)
        by_isa[m.group(1) if m else tag].append(tag)
    runs, processes, notes = {}, {}, []
    for isa, tags in sorted(by_isa.items()):

        def foreign(t):
            try:
                return float(load.get(t, {}).get("foreign_cores", "0"))
            except ValueError:
                return 0.0

        clean = [t for t in tags if foreign(t) <= maxload]
        used = clean if clean else tags
        if not clean:
            notes.append(f"corpus_{isa}: every process ran under foreign load > "
                         f"{maxload} cores; all {len(tags)} used (noisy)")
        for t in tags:
            processes[t] = {"mode": f"corpus_{isa}", "used": t in used,
                            **{k: v for k, v in load.get(t, {}).items()}}
        runs[isa] = {t: per_tag[t] for t in sorted(used)}
    return runs, processes, notes


def corpus_summary(runs):
    """Per ISA: per benchmark the medians, ratios and checks; the geometric
    means of the ratios."""
    out = {}
    for isa, tags in runs.items():
        benches = sorted({b for t in tags.values() for b in t})
        rows = {}
        for b in benches:
            row = {"launches": float("nan")}
            for sys_ in CORPUS_SYSTEMS:
                ms = [t[b][sys_]["median_ms"] for t in tags.values()
                      if "median_ms" in t.get(b, {}).get(sys_, {})]
                ok = [t[b][sys_]["correct"] for t in tags.values()
                      if "correct" in t.get(b, {}).get(sys_, {})]
                row[f"{sys_}_ms"] = st.median(ms) if ms else float("nan")
                row[f"{sys_}_correct"] = ("–" if not ok else
                                         "yes" if all(v == 1 for v in ok) else "NO")
                n = [t[b][sys_]["launches"] for t in tags.values()
                     if "launches" in t.get(b, {}).get(sys_, {})]
                if n:
                    row["launches"] = n[0]
            for other in ("opencl", "native"):
                q = [t[b]["kiln"]["median_ms"] / t[b][other]["median_ms"]
                     for t in tags.values()
                     if t.get(b, {}).get("kiln", {}).get("median_ms", 0) > 0
                     and t.get(b, {}).get(other, {}).get("median_ms", 0) > 0]
                row[f"kiln_over_{other}"] = st.median(q) if q else float("nan")
            rows[b] = row
        geo = {}
        for other in ("opencl", "native"):
            q = [r[f"kiln_over_{other}"] for r in rows.values()
                 if r[f"kiln_over_{other}"] == r[f"kiln_over_{other}"]]
            geo[f"kiln_over_{other}"] = (math.exp(sum(map(math.log, q)) / len(q))
                                         if q else float("nan"))
            geo[f"{other}_count"] = len(q)
        out[isa] = {"processes": len(tags), "benchmarks": rows, "geomean": geo}
    return out


def corpus_markdown(C):
    if not C:
        return []
    o = ["## The foreign-kernel corpus (kiln-corpus)\n"]
    o.append("Rodinia's OpenCL kernels translated one to one into Kiln IR "
             "(bench/corpus/), run in one process per ISA and repetition on Kiln, "
             "on PoCL (the same OpenCL C) and as native OpenMP loops (one parallel "
             "loop per launch), the three interleaved round by round, same threads. "
             "Times in ms of a benchmark's whole launch sequence (its host program's "
             "run): the median over processes of each process's median. A ratio is "
             "Kiln's time over the other's in the same process, then the median "
             "over processes; below 1 Kiln is faster.\n")
    order = list(CORPUS_ISAS)
    for isa in sorted(C, key=lambda i: (order.index(i) if i in order else len(order), i)):
        c = C[isa]
        n = c["processes"]
        o.append(f"### {CORPUS_ISAS.get(isa, isa)} ({n} process{'es' if n != 1 else ''})\n")
        o.append("| benchmark | launches | Kiln ms | PoCL ms | native ms | Kiln/PoCL "
                 "| Kiln/native | correct (Kiln/PoCL/native) |")
        o.append("|---|---|---|---|---|---|---|---|")
        for b, r in c["benchmarks"].items():
            n = r["launches"]
            o.append(f"| {b} | {'–' if n != n else int(n)} | {fmt(r['kiln_ms'])} | "
                     f"{fmt(r['opencl_ms'])} | {fmt(r['native_ms'])} | "
                     f"{fmt(r['kiln_over_opencl'])} | {fmt(r['kiln_over_native'])} | "
                     f"{r['kiln_correct']}/{r['opencl_correct']}/{r['native_correct']} |")
        g = c["geomean"]
        o.append(f"| geometric mean | | | | | {fmt(g['kiln_over_opencl'])} "
                 f"({g['opencl_count']}) | {fmt(g['kiln_over_native'])} "
                 f"({g['native_count']}) | |")
        o.append("")
    return o


# OpenBLAS's kernels for CPUs without AVX: on an AVX2 or AVX-512 machine
# one of them means OpenBLAS did not recognise the CPU (DYNAMIC_ARCH falls
# back), and sgemm is then no reference.
GENERIC_BLAS = ("Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom",
                "Opteron", "Barcelona", "Bobcat")


def generic_blas_notes(env):
    flags = next((l for l in env.splitlines() if l.startswith("flags:")), "")
    if " avx2" not in f" {flags[6:]} ":
        return []
    out = []
    for line in env.splitlines():
        m = re.match(r"INFO (\S+) blas OpenBLAS core (\w+)", line)
        if m and m.group(2) in GENERIC_BLAS:
            out.append(f"{m.group(1)}: OpenBLAS ran its generic {m.group(2)} kernel on "
                       "this AVX2 CPU: the OpenBLAS sgemm ratios are no reference "
                       "(name the kernel with OPENBLAS_CORETYPE)")
    return out


def vals(data, modes, k, m):
    if isinstance(modes, str):
        modes = [modes]
    return [v for mo in modes for v in data.get(mo, {}).get(k, {}).get(m, [])]


def med(data, modes, k, m):
    v = vals(data, modes, k, m)
    return st.median(v) if v else float("nan")


def fmt(x, nd=3):
    """Three significant digits, '–' for a missing value."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    dec = max(0, nd - 1 - mag)
    return f"{x:.{dec}f}"


def correct(data, modes, k, metrics=("correct", "batch_correct", "warm_correct")):
    c = [v for m in metrics for v in vals(data, modes, k, m)]
    if not c:
        return "–"
    return "yes" if all(v == 1 for v in c) else "NO"


def build_summary(data):
    """The numbers of the tables, as a dict (also written to the JSON)."""
    S = {"steady": {}, "compile": {}, "latency": {}, "many32": {}, "limits": {}}
    L = S["limits"]
    for name in ("stream_copy", "stream_triad", "triad_f32"):
        for t in ("1t", "nt"):
            L[f"{name}_{t}_GBps"] = med(data, "native", f"{name}_{t}", "GBps")
    for t in ("1t", "nt"):
        # A peak is the best run: another tenant's work only ever lowers it,
        # and a median can read below what sgemm reaches in the same run
        # (docs/Performance.md, "Known limits of the method").
        best = vals(data, "native", f"fma_peak_{t}", "GFLOPs_best")
        L[f"fma_peak_{t}_GFLOPs"] = max(best) if best else float("nan")
    L["fma_vector_width"] = med(data, "native", "fma_peak_nt", "vector_width")
    for k in ("vadd", "saxpy", "reduce_sum", "softmax_rows", "softmax_rows_scalar",
              "hist_atomic", "histogram", "matmul_blocked", "matmul_tiled16",
              "sgemm_openblas"):
        L[f"{k}_ms"] = med(data, "native", k, "kernel_ms_median")
    for k, (amt, unit) in WORK.items():
        km = med(data, "kiln", k, "kernel_ms_median")
        pm = med(data, POCL, k, "kernel_ms_median")
        row = {"unit": unit, "kiln_ms": km, "kiln_rate": amt / km / 1e6,
               "kiln_ms_p10": med(data, "kiln", k, "kernel_ms_p10"),
               "kiln_ms_p90": med(data, "kiln", k, "kernel_ms_p90"),
               "pocl_ms": pm, "kiln_over_pocl_time": km / pm,
               "native_what": NATIVE_WHAT[k],
               "kiln_correct": correct(data, "kiln", k),
               "pocl_correct": correct(data, POCL, k), "refs": {}}
        for ref in ["native"] + EXTRA_REFS.get(k, []):
            row["refs"][ref] = {
                "ms": med(data, "kiln", k, f"{ref}_ms_median"),
                "ratio_median": med(data, "kiln", k, f"ratio_{ref}_median"),
                "ratio_p10": med(data, "kiln", k, f"ratio_{ref}_p10"),
                "ratio_p90": med(data, "kiln", k, f"ratio_{ref}_p90"),
                "correct": correct(data, "kiln", k, (f"{ref}_correct",)),
            }
        if k in ("vadd", "saxpy"):
            row["triad_fraction_median"] = med(data, "kiln", k, "triad_fraction_median")
            row["triad_fraction_p10"] = med(data, "kiln", k, "triad_fraction_p10")
            row["triad_fraction_p90"] = med(data, "kiln", k, "triad_fraction_p90")
        # scan_plane and matmul_cmma have no target.
        ref, limit, text = TARGETS.get(k, ("native", float("inf"), "–"))
        r = row["refs"].get(ref, {}).get("ratio_median", float("nan"))
        row["target"] = text
        row["target_ratio"] = r
        row["met"] = None if r != r or k not in TARGETS else r <= limit
        S["steady"][k] = row
    for k in ["init"] + KERNELS + ["empty"]:
        S["compile"][k] = {
            "kiln_cold_compile_ms": med(data, "kiln", k, "cold_compile_ms"),
            "kiln_warm_load_ms": med(data, "kiln", k, "warm_load_ms"),
            "kiln_first_launch_ms": med(data, "kiln", k, "first_launch_ms"),
            "pocl_build_cold_ms": med(data, "pocl_cold", k, "build_ms"),
            "pocl_build_warm_ms": med(data, "pocl_warm", k, "build_ms"),
            "pocl_first_launch_cold_ms": med(data, "pocl_cold", k, "first_launch_ms"),
            "pocl_first_launch_warm_ms": med(data, "pocl_warm", k, "first_launch_ms"),
        }
    Lt = {}
    for m in ("launch_arena64_us", "launch_inline1_us", "native_region_us"):
        for q in ("median", "p10", "p90"):
            Lt[f"kiln_{m}_{q}"] = med(data, "kiln", "empty", f"{m}_{q}")
    Lt["pocl_launch_us_median"] = med(data, POCL, "empty", "launch_us_median")
    Lt["pocl_batched_us_per_launch"] = med(data, POCL, "empty", "batched_us_per_launch")
    S["latency"] = Lt
    S["many32"] = {
        "kiln_sequential_ms_per_kernel": med(data, "kiln", "many32", "compile_ms_per_kernel")
        + med(data, "kiln", "many32", "first_launch_ms_per_kernel"),
        "kiln_sequential_total_ms": med(data, "kiln", "many32", "total_ms"),
        "kiln_batch_total_ms": med(data, "kiln", "many32", "batch_total_ms"),
        "kiln_batch_store_total_ms": med(data, "kiln", "many32", "batch_store_total_ms"),
        "kiln_warm_total_ms": med(data, "kiln", "many32", "warm_total_ms"),
        "kiln_correct": correct(data, "kiln", "many32"),
        "pocl_cold_total_ms": med(data, "pocl_cold", "many32", "total_ms"),
        "pocl_warm_total_ms": med(data, "pocl_warm", "many32", "total_ms"),
        "pocl_cold_ms_per_kernel": med(data, "pocl_cold", "many32", "build_ms_per_kernel")
        + med(data, "pocl_cold", "many32", "first_launch_ms_per_kernel"),
    }
    return S


def rate(x, unit):
    return "–" if x != x else f"{fmt(x)} {unit}"


def yesno(b):
    return "–" if b is None else ("yes" if b else "**no**")


def spread(r):
    if r["ratio_median"] != r["ratio_median"]:
        return "–"
    return f"{fmt(r['ratio_median'])} [{fmt(r['ratio_p10'])}, {fmt(r['ratio_p90'])}]"


REF_LABEL = {"triad": "f32 triad", "native_scalar": "native, scalar expf",
             "native_private": "native, private bins", "openblas": "OpenBLAS sgemm",
             "native_blocked": "native, blocked i-k-j loops"}


def markdown(S, data, processes, notes, run, env, corpus=None):
    o = []
    o.append(f"# Kiln beside native C++, PoCL and the machine's limits ({run.name})\n")
    used = defaultdict(int)
    for p in processes.values():
        used[p["mode"]] += p["used"]
    iters = sorted({int(v) for v in vals(data, "kiln", "vadd", "iters")})
    gap = sorted({int(v) for v in vals(data, "kiln", "setup", "gap_us")})
    threads = sorted({int(v) for v in vals(data, "kiln", "setup", "threads")})
    o.append("Processes per mode: " + ", ".join(f"{m}={n}" for m, n in sorted(used.items()))
             + ". In each kiln-bench process, every kernel is timed in "
             + ("/".join(map(str, iters)) if iters else "N")
             + " rounds of one Kiln launch and one run of each native reference "
             "(same buffers, " + ("/".join(map(str, threads)) if threads else "the device's")
             + " threads, a pause of " + ("/".join(map(str, gap)) if gap else "?")
             + " µs before each run, the order alternating); a ratio is Kiln's time "
             "over the reference's in the same round: median [p10, p90] over rounds, "
             "then the median over processes. Times in ms.\n")
    for line in env.splitlines():
        if line.startswith(("cpu:", "pocl_device", "pocl_version", "pocl_isa", "kiln",
                                    "openblas_coretype", "INFO")):
            o.append(f"- {line}")
    o.append("")
    for n in notes:
        o.append(f"- note: {n}")
    if notes:
        o.append("")
    o.append("## In-process ratios: Kiln / native on the same buffers and threads\n")
    o.append("| kernel | Kiln ms [p10, p90] | native | native ms | Kiln/native median [p10, p90] "
             "| other reference: Kiln/it | PoCL ms | target | met | correct (Kiln/native/PoCL) |")
    o.append("|---|---|---|---|---|---|---|---|---|---|")
    for k, r in S["steady"].items():
        nat = r["refs"]["native"]
        others = []
        for ref in EXTRA_REFS.get(k, []):
            x = r["refs"][ref]
            others.append(f"{REF_LABEL.get(ref, ref)} ({fmt(x['ms'])} ms): {spread(x)}")
        o.append(f"| {k} | {fmt(r['kiln_ms'])} [{fmt(r['kiln_ms_p10'])}, {fmt(r['kiln_ms_p90'])}] | "
                 f"{r['native_what']} | {fmt(nat['ms'])} | {spread(nat)} | "
                 f"{'; '.join(others) or '–'} | {fmt(r['pocl_ms'])} | {r['target']} | "
                 f"{yesno(r['met'])} | {r['kiln_correct']}/{nat['correct']}/{r['pocl_correct']} |")
    o.append("")
    o.append("### Element-wise kernels against the f32 triad of the same size\n")
    o.append("Kiln's GB/s over the triad's (`a = b + 3c`, 2^24 floats, both counted "
             "as 12 B an element), per round, in the same process. vadd writes a "
             "stream it does not read, as the triad does, so its fraction should not "
             "exceed 1 by more than the noise; saxpy updates y in place (no "
             "write-allocate traffic: 12 B an element really moved against the "
             "triad's 16), so it may reach about 1.33.\n")
    o.append("| kernel | Kiln GB/s | triad ms | Kiln / triad GB/s: median [p10, p90] |")
    o.append("|---|---|---|---|")
    for k in ("vadd", "saxpy"):
        r = S["steady"][k]
        o.append(f"| {k} | {fmt(r['kiln_rate'])} | {fmt(r['refs']['triad']['ms'])} | "
                 f"{fmt(r.get('triad_fraction_median'))} [{fmt(r.get('triad_fraction_p10'))}, "
                 f"{fmt(r.get('triad_fraction_p90'))}] |")
    o.append("")
    L = S["limits"]
    o.append("## Machine limits (native-bench, a process of its own)\n")
    o.append("| measurement | 1 thread | all threads |")
    o.append("|---|---|---|")
    o.append(f"| STREAM copy, f64 (GB/s, 16 B/elem) | {fmt(L['stream_copy_1t_GBps'])} | {fmt(L['stream_copy_nt_GBps'])} |")
    o.append(f"| STREAM triad, f64 (GB/s, 24 B/elem) | {fmt(L['stream_triad_1t_GBps'])} | {fmt(L['stream_triad_nt_GBps'])} |")
    o.append(f"| triad f32, 2^24 (GB/s, 12 B/elem) | {fmt(L['triad_f32_1t_GBps'])} | {fmt(L['triad_f32_nt_GBps'])} |")
    o.append(f"| FMA peak, {fmt(L['fma_vector_width'])}-wide (GFLOP/s, the best run) | {fmt(L['fma_peak_1t_GFLOPs'])} | {fmt(L['fma_peak_nt_GFLOPs'])} |")
    o.append("")
    o.append("Native versions in that process (ms): " + ", ".join(
        f"{k} {fmt(L[k + '_ms'])}" for k in ("vadd", "saxpy", "reduce_sum", "softmax_rows",
                                              "softmax_rows_scalar", "hist_atomic", "histogram",
                                              "matmul_blocked", "matmul_tiled16",
                                              "sgemm_openblas")) + ".\n")
    o.append("## Compile, load and first launch per kernel (ms)\n")
    o.append("Kiln cold compile: Device::getKernel of a verified kernel the process "
             "has not compiled (lower, O3, object code, JIT link). Kiln warm load: "
             "the same kernel served from the store to a new device. PoCL: "
             "clBuildProgram with an empty / a warm cache; its first launch includes "
             "the work-group function JIT when cold.\n")
    o.append("| kernel | Kiln cold compile | Kiln warm load | Kiln first launch | "
             "PoCL build cold | PoCL first launch cold | PoCL build warm | PoCL first launch warm |")
    o.append("|---|---|---|---|---|---|---|---|")
    for k, r in S["compile"].items():
        o.append(f"| {k} | {fmt(r['kiln_cold_compile_ms'])} | {fmt(r['kiln_warm_load_ms'])} | "
                 f"{fmt(r['kiln_first_launch_ms'])} | {fmt(r['pocl_build_cold_ms'])} | "
                 f"{fmt(r['pocl_first_launch_cold_ms'])} | {fmt(r['pocl_build_warm_ms'])} | "
                 f"{fmt(r['pocl_first_launch_warm_ms'])} |")
    o.append("")
    Lt = S["latency"]

    def lat(m):
        return (f"{fmt(Lt[f'kiln_{m}_median'])} [{fmt(Lt[f'kiln_{m}_p10'])}, "
                f"{fmt(Lt[f'kiln_{m}_p90'])}]")
    o.append("## Launch latency, empty kernel, back to back (µs)\n")
    o.append("| launch + wait | median [p10, p90] |")
    o.append("|---|---|")
    o.append(f"| Kiln, 64 cubes through the launch arena (MinWorkPerThreadMicroseconds = 0) | {lat('launch_arena64_us')} |")
    o.append(f"| Kiln, one cube: the inline path (runs on the calling thread, no arena) | {lat('launch_inline1_us')} |")
    o.append(f"| native: an empty OpenMP parallel region, same threads | {lat('native_region_us')} |")
    o.append(f"| PoCL: one work-item, clEnqueueNDRangeKernel + clFinish | {fmt(Lt['pocl_launch_us_median'])} |")
    o.append(f"| PoCL: 1000 launches then one clFinish, per launch | {fmt(Lt['pocl_batched_us_per_launch'])} |")
    o.append("")
    M = S["many32"]
    o.append("## 32 distinct small kernels (vadd variants), ms\n")
    o.append("| | Kiln | PoCL |")
    o.append("|---|---|---|")
    o.append(f"| one after another, per kernel (compile/build + first launch) | "
             f"{fmt(M['kiln_sequential_ms_per_kernel'])} | {fmt(M['pocl_cold_ms_per_kernel'])} |")
    o.append(f"| one after another, total | {fmt(M['kiln_sequential_total_ms'])} | "
             f"{fmt(M['pocl_cold_total_ms'])} |")
    o.append(f"| one batch (Device::getKernels), total | {fmt(M['kiln_batch_total_ms'])} | – |")
    o.append(f"| warm (Kiln: from the store; PoCL: its cache warm), total | "
             f"{fmt(M['kiln_warm_total_ms'])} | {fmt(M['pocl_warm_total_ms'])} |")
    o.append(f"| correct | {M['kiln_correct']} | {correct(data, POCL, 'many32')} |")
    o.append("")
    o += corpus_markdown(corpus)
    o.append("## Processes and foreign load\n")
    o.append("```")
    for t, p in processes.items():
        o.append(f"{t}: used={p['used']} " + " ".join(
            f"{k}={v}" for k, v in p.items() if k not in ("mode", "used")))
    o.append("```")
    return "\n".join(o) + "\n"


def chart(S, run):
    """Bar chart: per kernel, the in-process ratio reference time / Kiln time
    (higher is better for Kiln), with the p10-p90 spread."""
    gp = shutil.which("gnuplot")
    if not gp:
        print("report.py: gnuplot not found, no chart", file=sys.stderr)
        return None
    dat = run / "chart.dat"
    with dat.open("w") as f:
        f.write("kernel speed lo hi\n")
        for k, r in S["steady"].items():
            if k not in TARGETS:  # scan_plane, matmul_cmma: no target
                continue
            ref = TARGETS[k][0]
            x = r["refs"].get(ref, {})
            m = x.get("ratio_median", float("nan"))
            if m == m and m > 0:
                f.write(f"{k}({ref}) {1 / m:.4f} {1 / x['ratio_p90']:.4f} {1 / x['ratio_p10']:.4f}\n")
    png = run / "chart.png"
    script = f"""
set terminal pngcairo size 1000,520 font ",10" noenhanced
set output '{png}'
set title "Kiln's speed relative to the reference of its target, same process\\n(reference time / Kiln time per round: median, bars p10-p90; higher is better)"
set style fill solid 0.8 border -1
set boxwidth 0.6
set logscale y
set yrange [0.05:5]
set ytics (0.1, 0.2, 0.5, 1, 2, 5)
set grid ytics
set xtics rotate by -20
plot '{dat}' using 0:2:xtic(1) with boxes lc rgb '#d95f02' notitle, \\
     '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0 notitle, \\
     1 with lines dt 2 lc rgb 'black' notitle
"""
    res = subprocess.run([gp], input=script, text=True, capture_output=True)
    if res.returncode != 0:
        print(f"report.py: gnuplot failed: {res.stderr.strip()}", file=sys.stderr)
        return None
    return png


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--maxload", type=float, default=0.3)
    ap.add_argument("--no-chart", action="store_true")
    a = ap.parse_args()
    if not (a.run / "raw.txt").exists():
        sys.exit(f"report.py: error: no raw.txt in {a.run}")
    data, processes, notes = parse_run(a.run, a.maxload)
    S = build_summary(data)
    corpus_runs, corpus_processes, corpus_notes = parse_corpus(a.run, a.maxload)
    processes.update(corpus_processes)
    notes += corpus_notes
    S["corpus"] = corpus_summary(corpus_runs)
    env = (a.run / "env.txt").read_text() if (a.run / "env.txt").exists() else ""
    notes += generic_blas_notes(env)

    def clean(x):  # JSON has no NaN
        if isinstance(x, float) and math.isnan(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    doc = {"run": a.run.name, "env": env, "maxload": a.maxload, "notes": notes,
           "processes": processes, "summary": clean(S),
           "raw": {m: {k: dict(ms) for k, ms in ks.items()} for m, ks in data.items()}}
    (a.run / "results.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    md = markdown(S, data, processes, notes, a.run, env, S["corpus"])
    (a.run / "summary.md").write_text(md)
    if not a.no_chart:
        chart(S, a.run)
    sys.stdout.write(md)


if __name__ == "__main__":
    main()
