#!/usr/bin/env python3
"""Fits the compile-free register prediction of SIMT GEMM kernels (math=simt) from NVRTC's counts.

Data: every `bench --calibration` CSV under bench/results, plain or gzipped (`*.csv`, `*.csv.gz`: the
H200 runs' candidates, each with the registers NVRTC/ptxas gave its main kernel), one row per distinct
(case, shape, schedule).
Model: registers = min(launch-bounds cap, thread_m * thread_n + sum(weight * feature)), the
accumulators counted exactly; fitted by least squares on the rows below their cap.
Validation: held out by shape, the shapes of resources/agents/heldout.txt (never fitted on).
Writes resources/model/registers-sm_90.json (read by core/schedule, docs/RUBRIC.md).

    python3 bench/tools/fit_registers.py [--out resources/model/registers-sm_90.json]
"""
import argparse
import csv
import glob
import gzip
import json
import os
import re
import sys

FEATURES = ["constant", "thread_m+thread_n", "block_k", "stages", "copy=async", "vector", "stream_k=on", "epilogue"]


def cap(d, threads):
    """ptxas's register cap under __launch_bounds__(threads, min_blocks): 64 Ki registers per SM."""
    return min(255, (65536 // (threads * max(int(d.get("min_blocks", 1)), 1))) // 8 * 8)


def features(case, d):
    return [1.0, int(d["thread_m"]) + int(d["thread_n"]), int(d["block_k"]), int(d["stages"]),
            1.0 if d.get("copy") == "async" else 0.0, int(d["vector"]),
            1.0 if d.get("stream_k", "off") not in ("off", "0") else 0.0, 1.0 if case == "gemm_bias_gelu" else 0.0]


def open_text(path):
    """A CSV as text, gunzipped when its name ends with .gz."""
    return gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")


def solve(xs, ys, ridge=1e-3):
    n = len(xs[0])
    a = [[sum(x[i] * x[j] for x in xs) + (ridge if i == j else 0.0) for j in range(n)] for i in range(n)]
    b = [sum(x[i] * y for x, y in zip(xs, ys)) for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(a[r][i]))
        a[i], a[p], b[i], b[p] = a[p], a[i], b[p], b[i]
        for r in range(n):
            if r != i:
                f = a[r][i] / a[i][i]
                a[r] = [u - f * v for u, v in zip(a[r], a[i])]
                b[r] -= f * b[i]
    return [b[i] / a[i][i] for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    ap.add_argument("--results", default=os.path.join(root, "bench", "results"))
    ap.add_argument("--heldout", default=os.path.join(root, "resources", "agents", "heldout.txt"))
    ap.add_argument("--out", default=os.path.join(root, "resources", "model", "registers-sm_90.json"))
    args = ap.parse_args()
    heldout = {l.strip().split(":")[1] for l in open(args.heldout) if ":" in l and not l.startswith("#")}
    rows, files = {}, set()
    paths = glob.glob(os.path.join(args.results, "**", "*.csv"), recursive=True) + \
        glob.glob(os.path.join(args.results, "**", "*.csv.gz"), recursive=True)
    # Sorted by the name without ".gz", so a compressed file keeps its place (later rows win).
    for path in sorted(paths, key=lambda p: p[:-3] if p.endswith(".gz") else p):
        with open_text(path) as f:
            reader = csv.DictReader(f)
            if not reader.fieldnames or "registers" not in reader.fieldnames or "schedule" not in reader.fieldnames:
                continue
            for r in reader:
                if not r["case"].startswith("gemm"):
                    continue
                d = dict(re.findall(r"(\w+)=(\w+)", r["schedule"].split(";")[0]))
                if d.get("math", "simt") != "simt" or "thread_m" not in d:
                    continue
                try:
                    regs, threads = int(r["registers"]), int(r["threads"])
                except ValueError:
                    continue
                rows[(r["case"], r["shape"], tuple(sorted(d.items())))] = (r["case"], r["shape"], d, regs, threads)
                files.add(os.path.relpath(path, root))
    data = list(rows.values())
    train = [(features(c, d), r - int(d["thread_m"]) * int(d["thread_n"]), r, cap(d, t), d)
             for c, s, d, r, t in data if s not in heldout]
    test = [(features(c, d), r - int(d["thread_m"]) * int(d["thread_n"]), r, cap(d, t), d)
            for c, s, d, r, t in data if s in heldout]
    fit = [(x, y) for x, y, r, cp, d in train if r < cp - 1]
    w = solve([x for x, _ in fit], [y for _, y in fit])

    def predict(x, d, cp):
        return min(cp, int(d["thread_m"]) * int(d["thread_n"]) + sum(a * b for a, b in zip(w, x)))

    def old(d):
        tm, tn = int(d["thread_m"]), int(d["thread_n"])
        return tm * tn + tm + tn + 28

    def report(rows_):
        e = [abs(predict(x, d, cp) - r) for x, _, r, cp, d in rows_]
        o = [abs(min(cp, old(d)) - r) for x, _, r, cp, d in rows_]
        return {"rows": len(rows_), "mean_abs_error": round(sum(e) / len(e), 1),
                "within_16": round(sum(1 for v in e if v <= 16) / len(e), 3),
                "previous_formula_mean_abs_error": round(sum(o) / len(o), 1)}

    out = {
        "schema": "stitchcuda-register-model/1",
        "arch": "sm_90",
        "applies_to": "the main kernel of a SIMT GEMM group (math=simt)",
        "model": "min(launch-bounds cap, thread_m * thread_n + sum(weights[f] * f))",
        "weights": {n: round(v, 3) for n, v in zip(FEATURES, w)},
        "provenance": {
            "command": "python3 bench/tools/fit_registers.py",
            "data": "registers NVRTC (ptxas, sm_90) gave each candidate of the H200 bench runs' --calibration CSVs",
            "files": sorted(files),
            "distinct_rows": len(data),
            "fitted_on": "rows of shapes not in resources/agents/heldout.txt, below their cap",
        },
        "validation": {"training_shapes": report(train),
                       "held_out_shapes": report(test) if test else None,
                       "held_out": sorted({s for _, s, *_ in data if s in heldout})},
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    json.dump({k: out[k] for k in ("weights", "validation")}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
