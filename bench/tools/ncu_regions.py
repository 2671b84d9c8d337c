#!/usr/bin/env python3
"""Splits an Nsight Compute source page (SASS) of one GEMM kernel into the code before its k-loop,
the k-loop (the widest backward branch) and the code after it, and prints per region: static
instructions, instructions executed (warp level), share of the warp-state samples, samples per 1000
executed instructions and the top stall reasons.

    ncu -i REPORT --page source --csv --print-source sass > K.source.csv
    python3 bench/tools/ncu_regions.py K.source.csv [...]
"""
import collections
import csv
import gzip
import re
import sys


def open_text(path):
    """A text file, gunzipped when its name ends with .gz (the large records under bench/results are)."""
    return gzip.open(path, "rt", newline="", errors="replace") if path.endswith(".gz") else open(path, newline="", errors="replace")


def regions(path):
    with open_text(path) as f:
        rows = list(csv.reader(f))
    header, data = rows[1], rows[2:]
    col = {h: i for i, h in enumerate(header)}
    address = [int(r[0], 16) for r in data]
    base = address[0]
    source = [r[1].strip() for r in data]
    loop = None  # (span, first, last) of the widest backward branch
    for i, text in enumerate(source):
        m = re.search(r'BRA\S* (?:`\()?(0x[0-9a-f]+)', text)
        if not m:
            continue
        target = int(m.group(1), 16)
        target = target if target >= base else base + target
        if target < address[i] and (loop is None or address[i] - target > loop[0]):
            loop = (address[i] - target, target, address[i])
    if loop is None:
        raise SystemExit(f'{path}: no backward branch (no k-loop)')
    _, first, last = loop
    stalls = [h for h in header if h.startswith('stall_') and '(Not Issued)' not in h]
    out = collections.OrderedDict((k, collections.Counter()) for k in ('before', 'loop', 'after'))
    for r, a in zip(data, address):
        c = out['before' if a < first else 'loop' if a <= last else 'after']
        c['static'] += 1
        c['samples'] += int(r[col['Warp Stall Sampling (All Samples)']] or 0)
        c['executed'] += int(r[col['Instructions Executed']] or 0)
        for s in stalls:
            c[s] += int(r[col[s]] or 0)
    return out, stalls


def main():
    print('| kernel | region | static | executed | samples | per 1000 executed | top stalls |')
    print('|---|---|---|---|---|---|---|')
    for path in sys.argv[1:]:
        out, stalls = regions(path)
        total = sum(c['samples'] for c in out.values())
        name = path.split('/')[-1].split('.')[0]
        for region, c in out.items():
            top = sorted(((c[s], s) for s in stalls), reverse=True)[:4]
            reasons = ', '.join(f'{s[6:]} {100 * v / max(1, c["samples"]):.0f} %' for v, s in top)
            print(f'| {name} | {region} | {c["static"]} | {c["executed"]} | {100 * c["samples"] / total:.1f} % | '
                  f'{1000 * c["samples"] / max(1, c["executed"]):.2f} | {reasons} |')


if __name__ == '__main__':
    main()
