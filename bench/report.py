#!/usr/bin/env python3
"""report.py - Kiln vs PoCL vs the machine's limits: JSON, table and chart.

Usage: report.py RUN_DIR [--maxload CORES] [--no-chart]

RUN_DIR holds what bench/run.sh wrote:
  raw.txt    RESULT <tag> <kernel> <metric> <value> lines from kiln-bench,
             PoCL's bench and native (tags kiln1, pocl_cold1, pocl_warm1,
             native1, ...: the mode is the tag without its trailing digits)
  load.txt   LOAD <tag> idle_before=.. wall_s=.. own_cpu_s=.. foreign_cores=..
  env.txt    machine and package versions (copied into the JSON)
and receives results.json, summary.md and chart.png (gnuplot, pngcairo).

A process during which other processes used more than MAXLOAD cores (default
0.3) is left out, unless that would leave its mode with no process at all: then
all of that mode's processes are used and the table says "(noisy)". Nothing
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
# kernel -> (bytes or flop per launch, unit), as PoCL's summarize.py counts them
WORK = {
    "vadd": (12.0 * N, "GB/s"), "saxpy": (12.0 * N, "GB/s"),
    "reduce_sum": (4.0 * N, "GB/s"),
    "softmax_rows": (8.0 * 4096 * 1024, "GB/s"),
    "hist_global": (4.0 * N, "GB/s"), "hist_local": (4.0 * N, "GB/s"),
    "matmul_tiled": (MATMUL_FLOP, "GFLOP/s"),
}
KERNELS = list(WORK)
NATIVE_OF = {"vadd": "vadd", "saxpy": "saxpy", "reduce_sum": "reduce_sum",
             "softmax_rows": "softmax_rows", "hist_global": "histogram",
             "hist_local": "histogram", "matmul_tiled": "matmul_blocked"}
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


def correct(data, modes, k):
    c = [v for m in ("correct", "batch_correct", "warm_correct")
         for v in vals(data, modes, k, m)]
    if not c:
        return "–"
    return "yes" if all(v == 1 for v in c) else "NO"


def build_summary(data):
    """The numbers of the tables, as a dict (also written to the JSON)."""
    S = {"steady": {}, "compile": {}, "limits": {}, "latency": {}, "many32": {}}
    L = S["limits"]
    L["stream_triad_1t_GBps"] = med(data, "native", "stream_triad_1t", "GBps_median")
    L["stream_triad_2t_GBps"] = med(data, "native", "stream_triad_2t", "GBps_median")
    # the element-wise limit: the better of the 1- and 2-thread triad (on a
    # shared machine the 2-thread figure is the one foreign load hurts most)
    L["stream_triad_GBps"] = max((x for x in (L["stream_triad_1t_GBps"],
                                              L["stream_triad_2t_GBps"]) if x == x),
                                 default=float("nan"))
    L["stream_copy_2t_GBps"] = med(data, "native", "stream_copy_2t", "GBps_median")
    L["fma_peak_avx2_2t_GFLOPs"] = med(data, "native", "fma_peak_2t", "GFLOPs_median")
    L["matmul_blocked_GFLOPs"] = med(data, "native", "matmul_blocked", "GFLOPs")
    L["sgemm_openblas_GFLOPs"] = med(data, "native", "sgemm_openblas", "GFLOPs")
    for k, (amt, unit) in WORK.items():
        km = med(data, "kiln", k, "kernel_ms_median")
        pm = med(data, POCL, k, "kernel_ms_median")
        nm = med(data, "native", NATIVE_OF[k], "kernel_ms_median")
        row = {"unit": unit, "kiln_ms": km, "pocl_ms": pm, "native_ms": nm,
               "kiln_unchecked_ms": med(data, "kiln_unchecked", k, "kernel_ms_median"),
               "kiln_rate": amt / km / 1e6, "pocl_rate": amt / pm / 1e6,
               "native_rate": amt / nm / 1e6, "kiln_over_pocl_time": km / pm,
               "kiln_correct": correct(data, "kiln", k),
               "pocl_correct": correct(data, POCL, k)}
        if k in ("vadd", "saxpy"):
            row["limit"] = "STREAM triad"
            row["kiln_fraction_of_limit"] = row["kiln_rate"] / L["stream_triad_GBps"]
            row["target"] = ">= 0.90 of STREAM triad"
            row["met"] = row["kiln_fraction_of_limit"] >= 0.90
        elif k == "matmul_tiled":
            row["limit"] = "30 GFLOP/s (native blocked: %s)" % fmt(L["matmul_blocked_GFLOPs"])
            row["kiln_fraction_of_limit"] = row["kiln_rate"] / 30.0
            row["target"] = ">= 30 GFLOP/s"
            row["met"] = row["kiln_rate"] >= 30.0
        else:
            row["limit"] = "native " + NATIVE_OF[k]
            row["kiln_over_native_time"] = km / nm
            row["target"] = "time <= 1.5x native"
            row["met"] = row["kiln_over_native_time"] <= 1.5
        if math.isnan(km):
            row["met"] = None
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
    S["latency"] = {
        "kiln_launch_us_median": med(data, "kiln", "empty", "launch_us_median"),
        "kiln_launch_us_mean": med(data, "kiln", "empty", "launch_us_mean"),
        "kiln_batched_us_per_launch": med(data, "kiln", "empty", "batched_us_per_launch"),
        "pocl_launch_us_median": med(data, POCL, "empty", "launch_us_median"),
        "pocl_launch_us_mean": med(data, POCL, "empty", "launch_us_mean"),
        "pocl_batched_us_per_launch": med(data, POCL, "empty", "batched_us_per_launch"),
    }
    S["many32"] = {
        "kiln_sequential_ms_per_kernel": med(data, "kiln", "many32", "compile_ms_per_kernel")
        + med(data, "kiln", "many32", "first_launch_ms_per_kernel"),
        "kiln_sequential_total_ms": med(data, "kiln", "many32", "total_ms"),
        "kiln_batch_total_ms": med(data, "kiln", "many32", "batch_total_ms"),
        "kiln_batch_ms_per_kernel": med(data, "kiln", "many32", "batch_ms_per_kernel"),
        "kiln_batch_store_total_ms": med(data, "kiln", "many32", "batch_store_total_ms"),
        "kiln_warm_total_ms": med(data, "kiln", "many32", "warm_total_ms"),
        "kiln_correct": correct(data, "kiln", "many32"),
        "pocl_cold_total_ms": med(data, "pocl_cold", "many32", "total_ms"),
        "pocl_warm_total_ms": med(data, "pocl_warm", "many32", "total_ms"),
        "pocl_cold_ms_per_kernel": med(data, "pocl_cold", "many32", "build_ms_per_kernel")
        + med(data, "pocl_cold", "many32", "first_launch_ms_per_kernel"),
        "pocl_warm_ms_per_kernel": med(data, "pocl_warm", "many32", "build_ms_per_kernel")
        + med(data, "pocl_warm", "many32", "first_launch_ms_per_kernel"),
    }
    return S


def rate(x, unit):
    return "–" if x != x else f"{fmt(x)} {unit}"


def yesno(b):
    return "–" if b is None else ("yes" if b else "**no**")


def markdown(S, data, processes, notes, run):
    o = []
    o.append(f"# Kiln vs PoCL vs the machine's limits ({run.name})\n")
    used = defaultdict(int)
    for p in processes.values():
        used[p["mode"]] += p["used"]
    iters = sorted({int(v) for v in vals(data, "kiln", "vadd", "iters")})
    o.append("Medians over processes (one process per repetition and mode: "
             + ", ".join(f"{m}={n}" for m, n in sorted(used.items()))
             + "); within a process, the median of "
             + ("/".join(map(str, iters)) if iters else "BENCH_ITERS")
             + " launches after the first and 3 warm-ups (PoCL's method). "
             "Times in ms unless noted.\n")
    for n in notes:
        o.append(f"- note: {n}")
    if notes:
        o.append("")
    unchecked = "kiln_unchecked" in data
    o.append("## Steady state: kernel time and rate\n")
    o.append("| kernel | Kiln ms | Kiln rate | PoCL ms | PoCL rate | native ms | "
             "Kiln/PoCL time | Kiln vs limit | target | met | correct (Kiln/PoCL) |")
    o.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for k, r in S["steady"].items():
        if "kiln_over_native_time" in r:
            vs = f"{fmt(r['kiln_over_native_time'])}x native time"
        elif k == "matmul_tiled":
            vs = f"{fmt(r['kiln_rate'])} GFLOP/s (native blocked {fmt(S['limits']['matmul_blocked_GFLOPs'])})"
        else:
            vs = f"{fmt(100 * r['kiln_fraction_of_limit'])} % of triad ({fmt(S['limits']['stream_triad_GBps'])} GB/s)"
        o.append(f"| {k} | {fmt(r['kiln_ms'])} | {rate(r['kiln_rate'], r['unit'])} | "
                 f"{fmt(r['pocl_ms'])} | {rate(r['pocl_rate'], r['unit'])} | "
                 f"{fmt(r['native_ms'])} | {fmt(r['kiln_over_pocl_time'])}x | {vs} | "
                 f"{r['target']} | {yesno(r['met'])} | {r['kiln_correct']}/{r['pocl_correct']} |")
    o.append("")
    if unchecked:
        o.append("### The same with Kiln's unchecked variant (`--unchecked`: no bounds checks)\n")
        o.append("| kernel | Kiln unchecked ms | rate | checked/unchecked time | "
                 "unchecked/PoCL time | vs limit | met | correct |")
        o.append("|---|---|---|---|---|---|---|---|")
        for k, r in S["steady"].items():
            u = r["kiln_unchecked_ms"]
            amt = WORK[k][0]
            rt = amt / u / 1e6
            if k in ("vadd", "saxpy"):
                frac = rt / S["limits"]["stream_triad_GBps"]
                vs, met = f"{fmt(100 * frac)} % of triad", frac >= 0.90
            elif k == "matmul_tiled":
                vs, met = f"{fmt(rt)} GFLOP/s", rt >= 30.0
            else:
                ratio = u / r["native_ms"]
                vs, met = f"{fmt(ratio)}x native time", ratio <= 1.5
            o.append(f"| {k} | {fmt(u)} | {rate(rt, r['unit'])} | {fmt(r['kiln_ms'] / u)}x | "
                     f"{fmt(u / r['pocl_ms'])}x | {vs} | {yesno(None if u != u else met)} | "
                     f"{correct(data, 'kiln_unchecked', k)} |")
        o.append("")
    L = S["limits"]
    o.append("## Machine limits (native, same run, 2 threads)\n")
    o.append("| measurement | median |")
    o.append("|---|---|")
    o.append(f"| STREAM triad, 1 thread (GB/s, 24 B/elem) | {fmt(L['stream_triad_1t_GBps'])} |")
    o.append(f"| STREAM triad, 2 threads (GB/s, 24 B/elem) | {fmt(L['stream_triad_2t_GBps'])} |")
    o.append(f"| STREAM copy (GB/s, 16 B/elem) | {fmt(L['stream_copy_2t_GBps'])} |")
    o.append(f"| AVX2 FMA peak (GFLOP/s) | {fmt(L['fma_peak_avx2_2t_GFLOPs'])} |")
    o.append(f"| native blocked matmul 1024 (GFLOP/s) | {fmt(L['matmul_blocked_GFLOPs'])} |")
    o.append(f"| OpenBLAS sgemm 1024 (GFLOP/s) | {fmt(L['sgemm_openblas_GFLOPs'])} |")
    o.append("")
    o.append("## Compile, load and first launch per kernel (ms)\n")
    o.append("Kiln cold compile: Device::getKernel of a verified kernel the process "
             "has not compiled (lower, O3, object code, JIT link). Kiln warm load: "
             "the same kernel served from the store to a new device (read, "
             "decompress, check, link). PoCL: "
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
    o.append("## Launch latency (empty kernel, one cube), µs\n")
    o.append("| metric | Kiln | PoCL | target |")
    o.append("|---|---|---|---|")
    o.append(f"| launch + wait, median of 1000 | {fmt(Lt['kiln_launch_us_median'])} | "
             f"{fmt(Lt['pocl_launch_us_median'])} | <= 5 µs (Kiln: "
             f"{yesno(None if math.isnan(Lt['kiln_launch_us_median']) else Lt['kiln_launch_us_median'] <= 5)}) |")
    o.append(f"| launch + wait, mean of 1000 | {fmt(Lt['kiln_launch_us_mean'])} | "
             f"{fmt(Lt['pocl_launch_us_mean'])} | |")
    o.append(f"| 1000 launches then one wait, per launch | {fmt(Lt['kiln_batched_us_per_launch'])} | "
             f"{fmt(Lt['pocl_batched_us_per_launch'])} | |")
    o.append("")
    M = S["many32"]
    o.append("## 32 distinct small kernels (vadd variants)\n")
    o.append("| | Kiln | PoCL |")
    o.append("|---|---|---|")
    o.append(f"| one after another, per kernel (compile + first launch; PoCL: build + first launch, empty cache) | "
             f"{fmt(M['kiln_sequential_ms_per_kernel'])} | {fmt(M['pocl_cold_ms_per_kernel'])} |")
    o.append(f"| one after another, total for 32 | {fmt(M['kiln_sequential_total_ms'])} | "
             f"{fmt(M['pocl_cold_total_ms'])} |")
    o.append(f"| as one batch (Device::getKernels, all cores, no store), total for 32 | "
             f"{fmt(M['kiln_batch_total_ms'])} | – (no batch API) |")
    o.append(f"| as one batch into an empty store, total for 32 | "
             f"{fmt(M['kiln_batch_store_total_ms'])} | – |")
    o.append(f"| warm (Kiln: one batch from the store to a new device; PoCL: "
             f"build + first launch with its cache warm), total for 32 | {fmt(M['kiln_warm_total_ms'])} | "
             f"{fmt(M['pocl_warm_total_ms'])} |")
    o.append(f"| correct | {M['kiln_correct']} | {correct(data, POCL, 'many32')} |")
    o.append("")
    cold = [r["kiln_cold_compile_ms"] for k, r in S["compile"].items()
            if k in ("vadd", "saxpy", "empty")]
    warm = [r["kiln_warm_load_ms"] for k, r in S["compile"].items()
            if k in ("vadd", "saxpy", "empty")]
    cold = [c for c in cold if not math.isnan(c)]
    warm = [w for w in warm if not math.isnan(w)]
    o.append("## Targets of the compile side\n")
    o.append("| target | measured | met |")
    o.append("|---|---|---|")
    o.append(f"| cold compile of a small kernel (vadd, saxpy, empty) <= 30 ms | "
             f"{', '.join(fmt(c) for c in cold) or '–'} | "
             f"{yesno(max(cold) <= 30 if cold else None)} |")
    o.append(f"| warm load <= 0.2 ms | {', '.join(fmt(w) for w in warm) or '–'} | "
             f"{yesno(max(warm) <= 0.2 if warm else None)} |")
    o.append("")
    o.append("## Processes and foreign load\n")
    o.append("```")
    for t, p in processes.items():
        o.append(f"{t}: used={p['used']} " + " ".join(
            f"{k}={v}" for k, v in p.items() if k not in ("mode", "used")))
    o.append("```")
    return "\n".join(o) + "\n"


def chart(S, run):
    """Bar chart of each kernel's rate as a fraction of its reference."""
    gp = shutil.which("gnuplot")
    if not gp:
        print("report.py: gnuplot not found, no chart", file=sys.stderr)
        return None
    rows = []
    unchecked = any(r["kiln_unchecked_ms"] == r["kiln_unchecked_ms"]
                    for r in S["steady"].values())
    for k, r in S["steady"].items():
        times = [r["kiln_ms"], r["pocl_ms"], r["native_ms"]]
        if unchecked:
            times.insert(1, r["kiln_unchecked_ms"])
        if k in ("vadd", "saxpy"):
            ref = S["limits"]["stream_triad_GBps"]
            norm = [WORK[k][0] / t / 1e6 / ref for t in times]
        elif k == "matmul_tiled":
            norm = [WORK[k][0] / t / 1e6 / 30.0 for t in times]
        else:
            norm = [r["native_ms"] / t for t in times]
        rows.append((k, norm))
    dat = run / "chart.dat"
    with dat.open("w") as f:
        f.write("kernel Kiln " + ("Kiln_unchecked " if unchecked else "") + "PoCL native\n")
        for k, n in rows:
            f.write(k + "".join(" ?" if not (x > 0) else f" {x:.4f}" for x in n) + "\n")
    png = run / "chart.png"
    colors = ["#d95f02", "#e6ab02", "#7570b3", "#1b9e77"] if unchecked else \
        ["#d95f02", "#7570b3", "#1b9e77"]
    series = [f"'{dat}' using 2:xtic(1) title columnheader(2) lc rgb '{colors[0]}'"]
    for i, c in enumerate(colors[1:], start=3):
        series.append(f"'' using {i} title columnheader({i}) lc rgb '{c}'")
    series.append("1 with lines dt 2 lc rgb 'black' notitle")
    plot = "plot " + ", \\\n     ".join(series)
    script = f"""
set terminal pngcairo size 1100,560 font ",10" noenhanced
set datafile missing "?"
set output '{png}'
set title "Steady-state speed relative to the reference (higher is better)\\n" . \
"vadd/saxpy: rate / STREAM triad; matmul: GFLOP/s / 30; others: native time / time"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [0.005:10]
set ytics (0.01, 0.03, 0.1, 0.3, 1, 3, 10)
set grid ytics
set key outside right top
set xtics rotate by -20
{plot}
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
    env = (a.run / "env.txt").read_text() if (a.run / "env.txt").exists() else ""

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
    md = markdown(S, data, processes, notes, a.run)
    (a.run / "summary.md").write_text(md)
    if not a.no_chart:
        chart(S, a.run)
    sys.stdout.write(md)


if __name__ == "__main__":
    main()
