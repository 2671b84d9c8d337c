#!/usr/bin/env python3
"""The corpus table of issue 31: every lift-corpus program scored as written beside the default
schedule (`stitchcuda rubric FILE --json`), each dimension and the predicted time, and which program
is kept (never lose to the input). Writes Markdown to stdout.

    python3 scripts/docs/rubric_corpus_table.py build/dev/bin/stitchcuda > docs/rubric-corpus.md
"""
import glob
import json
import os
import subprocess
import sys

DIMS = ["coalescing", "arithmetic_intensity", "divergence", "occupancy", "instruction_mix", "bank_conflicts"]
SHORT = {"coalescing": "coal", "arithmetic_intensity": "AI", "divergence": "div", "occupancy": "occ",
         "instruction_mix": "mix", "bank_conflicts": "bank"}


def ms(v):
    if v is None:
        return "-"
    return f"{v:.3f} ms" if v >= 1 else f"{v * 1000:.1f} us"


def scores(doc):
    out = {}
    for s in doc.get("scores", []):
        out[s["dimension"]] = s.get("score")
    return out


def cell(a, b):
    fa = "-" if a is None else f"{a:.1f}"
    fb = "-" if b is None else f"{b:.1f}"
    return f"{fa} / {fb}"


def main():
    cli = sys.argv[1] if len(sys.argv) > 1 else "build/dev/bin/stitchcuda"
    files = sorted(f for f in glob.glob("tests/lift/corpus/*.cu") if not os.path.basename(f).startswith("refused_"))
    files += sorted(glob.glob("examples/*.cu"))
    print("| program | " + " | ".join(SHORT[d] for d in DIMS) + " | as written | default schedule | kept |")
    print("|---|" + "---|" * len(DIMS) + "---:|---:|---|")
    kept_input = total = 0
    for f in files:
        r = subprocess.run([cli, "rubric", f, "--json"], capture_output=True, text=True)
        try:
            doc = json.loads(r.stdout)
        except json.JSONDecodeError:
            print(f"| {os.path.basename(f)} | " + " | ".join("" for _ in DIMS) + f" | | | not scored: {r.stderr.strip()[:80]} |")
            continue
        written = doc.get("asWritten") or {}
        a, d = scores(written), scores(doc)
        tw, td = written.get("predictedMs"), doc.get("predictedMs") if doc.get("program") == "schedule" else None
        keep = "input" if tw is not None and td is not None and td >= tw else ("schedule" if td is not None and tw is not None else "measure on a GPU")
        total += 1
        kept_input += keep == "input"
        print(f"| {os.path.basename(f)} | " + " | ".join(cell(a.get(x), d.get(x)) for x in DIMS) +
              f" | {ms(tw)} | {ms(td)} | {keep} |")
    print()
    print(f"Cells: as written / default schedule (0-5; - not scored). {total} programs; the input is kept for "
          f"{kept_input} where the default schedule is not predicted faster; 'measure on a GPU' where the model "
          "has no strategy the program as written maps onto.")


if __name__ == "__main__":
    main()
