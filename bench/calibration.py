#!/usr/bin/env python3
"""Rank correlation of the rubric's predicted times with the measured ones, per bench case.

Reads the CSV `stitchcuda bench --calibration FILE` writes (one line per timed candidate) and
prints, per case and shape, the number of schedules and Spearman's rho between predicted and
measured medians (issue 5 asks for rho >= 0.85 per problem over >= 200 schedules in all).
Standard library only.
"""
import argparse
import csv
import sys
from collections import defaultdict


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2.0 + 1.0  # ties share their mean rank
        i = j + 1
    return out


def spearman(xs, ys):
    if len(xs) < 3:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return cov / (vx * vy) ** 0.5 if vx > 0 and vy > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="file written by stitchcuda bench --calibration")
    args = ap.parse_args()
    groups = defaultdict(list)
    with open(args.csv, newline="") as f:
        for row in csv.DictReader(f):
            predicted = float(row["predicted_ms"])
            if predicted > 0:
                groups[(row["case"], row["shape"])].append((float(row["measured_ms"]), predicted))
    print("| case | shape | schedules | Spearman rho (predicted vs measured) | target >= 0.85 |")
    print("|---|---|---|---|---|")
    total = 0
    for (case, shape), pairs in sorted(groups.items()):
        rho = spearman([p for _, p in pairs], [m for m, _ in pairs])
        total += len(pairs)
        print(f"| {case} | {shape} | {len(pairs)} | {rho:.3f} | {'met' if rho >= 0.85 else 'missed'} |")
    print(f"\n{total} schedules in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
