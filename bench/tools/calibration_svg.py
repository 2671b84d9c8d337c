#!/usr/bin/env python3
"""Scatter plots of the performance model's predicted times against the measured ones, one panel
per (case, shape), from `stitchcuda bench --calibration` CSVs (or `calibrate --out` ones), as one
SVG file with no dependencies beyond the standard library.

    python3 bench/tools/calibration_svg.py -o docs/images/calibration.svg A.csv [B.csv ...]

Both axes are logarithmic; each panel's title gives the problem, the schedules and Spearman's rho
(ties ranked by their mean rank, as `stitchcuda calibrate` ranks them).
"""
import argparse
import csv
import gzip
import math
import sys
from collections import OrderedDict

PANEL_W, PANEL_H, MARGIN, PAD = 330, 260, 46, 18


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for t in range(i, j + 1):
            out[order[t]] = (i + j) / 2.0
        i = j + 1
    return out


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den > 0 else float("nan")


def open_text(path):
    """A text file, gunzipped when its name ends with .gz (the large records under bench/results are)."""
    return gzip.open(path, "rt", newline="", errors="replace") if path.endswith(".gz") else open(path, newline="", errors="replace")


def read_problems(paths):
    problems = OrderedDict()
    for path in paths:
        with open_text(path) as f:
            for row in csv.DictReader(f):
                try:
                    m, p = float(row["measured_ms"]), float(row["predicted_ms"])
                except (KeyError, ValueError):
                    continue
                if m > 0 and p > 0:
                    problems.setdefault((row["case"], row["shape"]), []).append((m, p))
    return problems


def panel(x0, y0, title, points):
    lo = min(min(m, p) for m, p in points)
    hi = max(max(m, p) for m, p in points)
    llo, lhi = math.log10(lo) - 0.02, math.log10(hi) + 0.02
    w, h = PANEL_W - MARGIN - PAD, PANEL_H - MARGIN - PAD

    def px(v):
        return x0 + MARGIN + (math.log10(v) - llo) / (lhi - llo) * w

    def py(v):
        return y0 + PAD + h - (math.log10(v) - llo) / (lhi - llo) * h

    rho = spearman([m for m, _ in points], [p for _, p in points])
    out = ['<g font-family="DejaVu Sans, sans-serif" font-size="11">',
           '<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="none" stroke="#888"/>'
           % (x0 + MARGIN, y0 + PAD, w, h),
           '<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#bbb" stroke-dasharray="4 3"/>'
           % (px(10 ** llo), py(10 ** llo), px(10 ** lhi), py(10 ** lhi)),
           '<text x="%.1f" y="%.1f" text-anchor="middle" font-weight="bold" font-size="10">%s (%d, rho %.3f)</text>'
           % (x0 + MARGIN + w / 2, y0 + PAD - 5, title, len(points), rho)]
    for m, p in points:
        out.append('<circle cx="%.1f" cy="%.1f" r="2" fill="#1f5fa8" fill-opacity="0.55"/>' % (px(m), py(p)))
    for v, anchor in ((10 ** (llo + 0.02), "start"), (10 ** (lhi - 0.02), "end")):
        out.append('<text x="%.1f" y="%.1f" text-anchor="%s">%.3g</text>' % (px(v), y0 + PAD + h + 14, anchor, v))
        out.append('<text x="%.1f" y="%.1f" text-anchor="end">%.3g</text>' % (x0 + MARGIN - 4, py(v) + 4, v))
    out.append('<text x="%.1f" y="%.1f" text-anchor="middle">measured ms (log)</text>' % (x0 + MARGIN + w / 2, y0 + PAD + h + 30))
    out.append('<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle">predicted ms (log)</text>'
               % (x0 + 12, y0 + PAD + h / 2))
    out.append('</g>')
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="calibration CSV files")
    ap.add_argument("-o", "--output", required=True, help="SVG file to write")
    ap.add_argument("--columns", type=int, default=4, help="panels per row (default 4)")
    args = ap.parse_args(argv)
    problems = read_problems(args.csv)
    if not problems:
        print("no rows with measured_ms and predicted_ms in %s" % ", ".join(args.csv), file=sys.stderr)
        return 2
    cols = max(1, min(args.columns, len(problems)))
    rows = (len(problems) + cols - 1) // cols
    body = []
    for i, ((case, shape), points) in enumerate(problems.items()):
        body += panel((i % cols) * PANEL_W, (i // cols) * PANEL_H, "%s %s" % (case, shape), points)
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
           % (cols * PANEL_W, rows * PANEL_H, cols * PANEL_W, rows * PANEL_H),
           '<rect width="100%" height="100%" fill="white"/>'] + body + ['</svg>']
    with open(args.output, "w") as f:
        f.write("\n".join(svg) + "\n")
    print("wrote %s: %d problems" % (args.output, len(problems)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
