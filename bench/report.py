#!/usr/bin/env python3
"""Compare `stitchcuda bench --json` (ours) with bench/torch_baselines.py (baselines).

    python3 bench/report.py --ours ours.json --baselines baselines.json [--output report.md] [--strict]

Prints Markdown to stdout: one table per case family (shape | ours | cuBLAS | eager |
torch.compile | ratios | target), then a summary of the issue's targets. Either input may
be left out; a missing side shows as "—". Results of ours with "verified" not true are
shown as FAILED and never count as met. Only the standard library is used.

Ours (exactly what `stitchcuda bench --json` writes):
    {"device": "...", "cases": [{"case": "gemm", "shape": "4096x4096x4096",
      "schedule": "...", "median_ms": 2.9, "min_ms": 2.8, "max_ms": 3.0, "verified": true,
      "rel_error": 1.2e-7, "tflops": 47.1, "gbps": null}, ...]}
    case: gemm | gemm_tf32 | gemm_bias_gelu (shape "MxNxK"), softmax | layernorm | chain5
    (shape "MxN"), copy (shape = bytes of the buffer copied, e.g. "1073741824").

Baselines: {"device": ..., "results": [{"case", "shape", "impl", "median_ms", ...}]} with
impl cublas (gemm, gemm_tf32), torch (copy), eager / compile (softmax, layernorm, chain5,
gemm_bias_gelu) and cublas_gemm (gemm_bias_gelu: the GEMM alone).

Ratios are speed ratios, baseline time / our time (> 1: ours is faster). TFLOP/s and GB/s
are recomputed for both sides from the shape with the same formulas as the baselines
(GEMM: 2*M*N*K flops; softmax 2*M*N*4, layer norm 2*M*N*4 + 2*N*4, chain5 3*M*N*4,
copy 2*bytes), so that percentages of the copy bandwidth compare like with like.
"""

import argparse
import gzip
import json
import math
import re
import sys

DASH = "—"

GEMM_FAMILIES = ("gemm", "gemm_tf32")
MEM_FAMILIES = ("softmax", "layernorm", "chain5")
FAMILY_ORDER = ("gemm", "gemm_tf32", "gemm_bias_gelu", "softmax", "layernorm", "chain5", "copy")
FAMILY_TITLE = {
    "gemm": "FP32 GEMM (TF32 off)",
    "gemm_tf32": "GEMM with TF32",
    "gemm_bias_gelu": "GEMM + bias + GELU (fused)",
    "softmax": "Softmax over rows",
    "layernorm": "Layer norm over the last dimension",
    "chain5": "5-op element-wise chain",
    "copy": "Copy bandwidth",
}
IMPL_TITLE = {"cublas": "cuBLAS", "cublas_gemm": "cuBLAS GEMM alone", "eager": "eager",
              "compile": "torch.compile", "torch": "torch copy_"}


# ---------------------------------------------------------------------------------------
# input

class InputError(Exception):
    pass


def load_json(path, what):
    try:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            return json.load(f)
    except OSError as e:
        raise InputError("cannot read %s file %s: %s" % (what, path, e))
    except ValueError as e:
        raise InputError("%s file %s is not valid JSON: %s" % (what, path, e))


_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?)b?\s*$", re.I)


def norm_shape(case, shape):
    """Canonical shape key: 'MxN[xK]' lower-case without spaces; copy: the byte count."""
    if shape is None:
        return None
    s = str(shape).strip()
    if case == "copy":
        m = _SIZE_RE.match(s)
        if m:
            num, unit, binary = float(m.group(1)), m.group(2).lower(), m.group(3)
            base = 1024 if (binary or unit == "") else 1000
            power = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}[unit]
            return str(int(round(num * base ** power)))
        return s
    s = s.lower().replace("×", "x").replace("*", "x").replace(",", "x")
    return re.sub(r"\s+", "", s)


def dims(shape):
    try:
        return [int(p) for p in shape.split("x")]
    except (AttributeError, ValueError):
        return None


def work(case, shape):
    """(flops, bytes) of one run, by the shared formulas; None where not applicable."""
    d = dims(shape)
    if d is None:
        return None, None
    if case in GEMM_FAMILIES and len(d) == 3:
        m, n, k = d
        return 2 * m * n * k, None
    if case == "gemm_bias_gelu" and len(d) == 3:
        m, n, k = d
        return 2 * m * n * k, 4 * (m * k + k * n + n + m * n)
    if case == "softmax" and len(d) == 2:
        return None, 2 * d[0] * d[1] * 4
    if case == "layernorm" and len(d) == 2:
        return None, 2 * d[0] * d[1] * 4 + 2 * d[1] * 4
    if case == "chain5" and len(d) == 2:
        return None, 3 * d[0] * d[1] * 4
    if case == "copy" and len(d) == 1:
        return None, 2 * d[0]
    return None, None


def num(x):
    """A finite float, or None (JSON null, strings such as 'inf', garbage)."""
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def read_ours(doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise InputError('ours: expected an object with a "cases" list (stitchcuda bench --json)')
    entries, problems = {}, []
    for i, c in enumerate(doc["cases"]):
        if not isinstance(c, dict) or "case" not in c or "shape" not in c:
            problems.append("ours: cases[%d] has no case/shape: %s" % (i, json.dumps(c)[:200]))
            continue
        case = str(c["case"])
        key = (case, norm_shape(case, c["shape"]))
        e = {
            "case": case, "shape": key[1], "raw_shape": c["shape"],
            "schedule": c.get("schedule"),
            "median_ms": num(c.get("median_ms")), "min_ms": num(c.get("min_ms")),
            "max_ms": num(c.get("max_ms")),
            "verified": c.get("verified") is True,
            "rel_error": c.get("rel_error"),
            "tflops": num(c.get("tflops")), "gbps": num(c.get("gbps")),
            "error": c.get("error"),
        }
        entries.setdefault(key, []).append(e)
    chosen = {}
    for key, lst in entries.items():
        # Several entries for one case and shape (e.g. several schedules): the fastest
        # verified one stands for ours; failing ones only if none passed.
        ok = [e for e in lst if e["verified"] and e["median_ms"] is not None]
        best = min(ok, key=lambda e: e["median_ms"]) if ok else lst[0]
        best = dict(best)
        best["count"] = len(lst)
        chosen[key] = best
    return chosen, problems


def read_baselines(doc):
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise InputError('baselines: expected an object with a "results" list (torch_baselines.py)')
    table, problems = {}, []
    if doc.get("error"):
        problems.append("baselines: run failed: %s" % doc["error"])
    for i, r in enumerate(doc["results"]):
        if not isinstance(r, dict) or "case" not in r or "shape" not in r:
            problems.append("baselines: results[%d] has no case/shape" % i)
            continue
        case = str(r["case"])
        key = (case, norm_shape(case, r["shape"]))
        impl = r.get("impl") or "?"
        rec = {
            "impl": impl,
            "median_ms": num(r.get("median_ms")), "min_ms": num(r.get("min_ms")),
            "max_ms": num(r.get("max_ms")),
            "verified": r.get("verified"), "rel_error": r.get("rel_error"),
            "error": r.get("error"),
        }
        if rec["error"]:
            problems.append("baselines: %s:%s:%s failed: %s"
                            % (case, key[1], impl, str(rec["error"]).splitlines()[0][:300]))
        if r.get("verified") is False:
            problems.append("baselines: %s:%s:%s output differs from eager (rel_error %s); its time is shown marked '(unverified)'"
                            % (case, key[1], impl, r.get("rel_error")))
        table.setdefault(key, {})[impl] = rec
    return table, problems


# ---------------------------------------------------------------------------------------
# formatting

def esc(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def fmt_ms(ms):
    if ms >= 100:
        return "%.1f ms" % ms
    if ms >= 1:
        return "%.3f ms" % ms
    return "%.4f ms" % ms


def figure(case, shape, ms):
    flops, nbytes = work(case, shape)
    if ms is None or ms <= 0:
        return None
    if case in GEMM_FAMILIES or case == "gemm_bias_gelu":
        return "%.1f TFLOP/s" % (flops / (ms * 1e-3) / 1e12) if flops else None
    return "%.0f GB/s" % (nbytes / (ms * 1e-3) / 1e9) if nbytes else None


def gbps_of(case, shape, ms):
    _, nbytes = work(case, shape)
    if ms is None or ms <= 0 or not nbytes:
        return None
    return nbytes / (ms * 1e-3) / 1e9


def cell_time(case, shape, ms):
    fig = figure(case, shape, ms)
    return fmt_ms(ms) + (" · " + fig if fig else "")


def ours_cell(case, shape, o):
    if o is None:
        return DASH
    if not o["verified"]:
        t = (" (%s)" % fmt_ms(o["median_ms"])) if o["median_ms"] is not None else ""
        return "**FAILED**" + t
    if o["median_ms"] is None:
        return DASH + " (no time)"
    s = cell_time(case, shape, o["median_ms"])
    if o.get("count", 1) > 1:
        s += " (best of %d)" % o["count"]
    return s


def base_cell(case, shape, b):
    if b is None:
        return DASH
    if b.get("error"):
        return "error"
    if b["median_ms"] is None:
        return DASH
    s = cell_time(case, shape, b["median_ms"])
    if b.get("verified") is False:
        s += " (unverified)"
    return s


def ours_ok(o):
    return o is not None and o["verified"] and o["median_ms"] is not None and o["median_ms"] > 0


def base_ok(b):
    return b is not None and not b.get("error") and b["median_ms"] is not None and b["median_ms"] > 0


def speed(o, b):
    """Baseline time / our time, or None."""
    if ours_ok(o) and base_ok(b):
        return b["median_ms"] / o["median_ms"]
    return None


def fmt_ratio(r):
    return DASH if r is None else "%.2fx" % r


def fmt_pct(p):
    return DASH if p is None else "%.0f%%" % (100 * p)


# ---------------------------------------------------------------------------------------
# targets

def criteria(case, shape):
    """List of (kind, ref impl or None, threshold, label)."""
    if case == "gemm":
        t = 0.95 if shape == "4096x4096x4096" else 0.85
        return [("speed", "cublas", t, ">= %.2fx cuBLAS" % t)]
    if case == "gemm_tf32":
        return [("speed", "cublas", 0.80, ">= 0.80x cuBLAS TF32")]
    if case in ("softmax", "layernorm"):
        return [("copy", None, 0.85, ">= 85% of copy BW")]
    if case == "chain5":
        return [("copy", None, 0.90, ">= 90% of copy BW")]
    if case == "gemm_bias_gelu":
        if shape in ("8192x8192x128", "8192x8192x64"):
            return [("speed", "eager", 1.5, ">= 1.5x eager"),
                    ("speed", "compile", 1.3, ">= 1.3x torch.compile")]
        if shape == "4096x4096x4096":
            # ours_fused_time <= 1.05 * cublas_gemm_time  <=>  speed >= 1 / 1.05
            return [("time_le", "cublas_gemm", 1.05, "time <= 1.05x cuBLAS GEMM alone")]
    return []


def evaluate(case, shape, o, base, copy_bw):
    """-> (status, detail). status: met | missed | FAILED | no result | incomplete | ''."""
    crit = criteria(case, shape)
    if not crit:
        return "", ""
    label = "; ".join(c[3] for c in crit)
    if o is None:
        return "no result", label
    if not o["verified"]:
        return "FAILED", label + " (unverified: never met)"
    if o["median_ms"] is None:
        return "no result", label
    parts, states = [], []
    for kind, ref, thr, lab in crit:
        if kind == "speed":
            r = speed(o, base.get(ref))
            if r is None:
                states.append(None)
                parts.append("%s: no %s" % (lab, IMPL_TITLE.get(ref, ref)))
            else:
                states.append(r >= thr)
                parts.append("%s: %.2fx" % (lab, r))
        elif kind == "time_le":
            b = base.get(ref)
            if not base_ok(b):
                states.append(None)
                parts.append("%s: no %s" % (lab, IMPL_TITLE.get(ref, ref)))
            else:
                q = o["median_ms"] / b["median_ms"]
                states.append(q <= thr)
                parts.append("%s: %.3fx" % (lab, q))
        elif kind == "copy":
            g = gbps_of(case, shape, o["median_ms"])
            if g is None or copy_bw is None:
                states.append(None)
                parts.append("%s: no copy bandwidth" % lab)
            else:
                states.append(g / copy_bw >= thr)
                parts.append("%s: %.1f%%" % (lab, 100 * g / copy_bw))
    if any(s is False for s in states):
        status = "missed"
    elif all(s is True for s in states):
        status = "met"
    else:
        status = "incomplete"
    return status, "; ".join(parts)


def status_cell(status):
    return {"met": "**met**", "missed": "**missed**", "FAILED": "**FAILED**",
            "no result": DASH + " (no result)", "incomplete": DASH + " (baseline missing)",
            "": DASH}[status]


# ---------------------------------------------------------------------------------------

def copy_reference(ours, base):
    """Measured copy bandwidth (GB/s): torch copy_ of the largest buffer, else ours."""
    best = None
    for (case, shape), impls in base.items():
        if case != "copy":
            continue
        b = impls.get("torch") or next(iter(impls.values()))
        if base_ok(b):
            g = gbps_of(case, shape, b["median_ms"])
            size = int(shape) if shape.isdigit() else 0
            if g is not None and (best is None or size > best[0]):
                best = (size, g, "torch copy_ of %s bytes (baselines)" % shape)
    if best is None:
        for (case, shape), o in ours.items():
            if case == "copy" and ours_ok(o):
                g = gbps_of(case, shape, o["median_ms"])
                size = int(shape) if shape.isdigit() else 0
                if g is not None and (best is None or size > best[0]):
                    best = (size, g, "ours copy of %s bytes (no baseline copy)" % shape)
    return (best[1], best[2]) if best else (None, None)


def family_rows(family, ours, base):
    keys = []
    for (case, shape) in list(base.keys()) + list(ours.keys()):
        if case == family and (case, shape) not in keys:
            keys.append((case, shape))
    return keys


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(esc(c) for c in r) + " |")
    return out


def render(ours_doc, base_doc, ours, base, problems):
    lines = ["# StitchCUDA benchmark report", ""]
    dev_o = ours_doc.get("device") if isinstance(ours_doc, dict) else None
    dev_b = base_doc.get("device") if isinstance(base_doc, dict) else None
    lines.append("- ours: %s" % ("device %s" % dev_o if ours_doc is not None else "not given"))
    if base_doc is not None:
        lines.append("- baselines: device %s, torch %s, CUDA %s, %s timed runs (median), L2 flushed (%s bytes)"
                     % (dev_b, base_doc.get("torch_version"), base_doc.get("cuda_version"),
                        base_doc.get("repeats"), base_doc.get("l2_flush_bytes")))
    else:
        lines.append("- baselines: not given")
    if dev_o and dev_b and str(dev_o).strip() != str(dev_b).strip():
        lines.append("- **warning: the two sides ran on different devices**")
    copy_bw, copy_src = copy_reference(ours, base)
    lines.append("- copy bandwidth reference: %s" % (("%.0f GB/s, %s" % (copy_bw, copy_src)) if copy_bw else DASH))
    lines.append("- ratios are speed ratios, baseline time / our time (> 1: ours is faster)")
    lines.append("")

    summary = []   # (family, shape, status, detail)
    for family in FAMILY_ORDER:
        keys = family_rows(family, ours, base)
        if not keys:
            continue
        lines.append("## %s" % FAMILY_TITLE[family])
        lines.append("")
        rows = []
        for key in keys:
            case, shape = key
            o = ours.get(key)
            b = base.get(key, {})
            sched = (o.get("schedule") if o else None) or DASH
            relerr = DASH
            if o is not None and o.get("rel_error") is not None:
                relerr = ("%.2g" % o["rel_error"]) if num(o["rel_error"]) is not None else str(o["rel_error"])
            status, detail = evaluate(case, shape, o, b, copy_bw)
            if status:
                summary.append((case, shape, status, detail))
            if family in GEMM_FAMILIES:
                header = ["shape (MxNxK)", "ours", "schedule", "rel err", IMPL_TITLE["cublas"] + (" TF32" if family == "gemm_tf32" else ""),
                          "ours vs cuBLAS", "target", "status"]
                rows.append([shape, ours_cell(case, shape, o), sched, relerr,
                             base_cell(case, shape, b.get("cublas")),
                             fmt_ratio(speed(o, b.get("cublas"))), detail or DASH, status_cell(status)])
            elif family == "gemm_bias_gelu":
                header = ["shape (MxNxK)", "ours", "schedule", "rel err", "cuBLAS GEMM alone", "eager",
                          "torch.compile", "vs cuBLAS GEMM", "vs eager", "vs compile", "target", "status"]
                rows.append([shape, ours_cell(case, shape, o), sched, relerr,
                             base_cell(case, shape, b.get("cublas_gemm")),
                             base_cell(case, shape, b.get("eager")),
                             base_cell(case, shape, b.get("compile")),
                             fmt_ratio(speed(o, b.get("cublas_gemm"))),
                             fmt_ratio(speed(o, b.get("eager"))),
                             fmt_ratio(speed(o, b.get("compile"))),
                             detail or DASH, status_cell(status)])
            elif family in MEM_FAMILIES:
                header = ["shape (MxN)", "ours", "schedule", "rel err", "eager", "torch.compile",
                          "vs eager", "vs compile", "% of copy BW", "target", "status"]
                pct = None
                if ours_ok(o) and copy_bw:
                    g = gbps_of(case, shape, o["median_ms"])
                    pct = g / copy_bw if g is not None else None
                rows.append([shape, ours_cell(case, shape, o), sched, relerr,
                             base_cell(case, shape, b.get("eager")),
                             base_cell(case, shape, b.get("compile")),
                             fmt_ratio(speed(o, b.get("eager"))),
                             fmt_ratio(speed(o, b.get("compile"))),
                             fmt_pct(pct), detail or DASH, status_cell(status)])
            else:  # copy
                header = ["bytes", "ours", "schedule", "rel err", "torch copy_", "ours vs torch"]
                rows.append([shape, ours_cell(case, shape, o), sched, relerr,
                             base_cell(case, shape, b.get("torch")),
                             fmt_ratio(speed(o, b.get("torch")))])
            # Ours' own figures should agree with the shared formulas.
            if ours_ok(o):
                flops, nbytes = work(case, shape)
                sec = o["median_ms"] * 1e-3
                for name, mine, theirs in (("TFLOP/s", flops / sec / 1e12 if flops else None, o.get("tflops")),
                                           ("GB/s", nbytes / sec / 1e9 if nbytes and family != "gemm_bias_gelu" else None,
                                            o.get("gbps"))):
                    if mine and theirs and abs(theirs - mine) > 0.02 * mine:
                        problems.append("ours: %s:%s reports %.4g %s, the shared formula gives %.4g (the report uses the latter)"
                                        % (case, shape, theirs, name, mine))
        lines.extend(table(header, rows))
        lines.append("")

    known = set(FAMILY_ORDER)
    for (case, shape) in ours:
        if case not in known:
            problems.append("ours: unknown case %r (shape %s) left out" % (case, shape))
    for (case, shape) in base:
        if case not in known:
            problems.append("baselines: unknown case %r (shape %s) left out" % (case, shape))

    lines.append("## Targets")
    lines.append("")
    counts = {}
    for _, _, st, _ in summary:
        counts[st] = counts.get(st, 0) + 1
    order = ["met", "missed", "FAILED", "incomplete", "no result"]
    lines.append("%d target(s): " % len(summary) + ", ".join("%d %s" % (counts[k], k) for k in order if k in counts))
    lines.append("")
    lines.extend(table(["case", "shape", "status", "detail"],
                       [[c, s, status_cell(st), d] for c, s, st, d in summary]))
    lines.append("")
    if problems:
        lines.append("## Notes")
        lines.append("")
        for p in problems:
            lines.append("- " + esc(p))
        lines.append("")
    return "\n".join(lines), summary


def main(argv=None):
    p = argparse.ArgumentParser(description="Markdown report: StitchCUDA (ours) against the PyTorch baselines.")
    p.add_argument("--ours", metavar="FILE", help="JSON from `stitchcuda bench --json`")
    p.add_argument("--baselines", metavar="FILE", help="JSON from bench/torch_baselines.py")
    p.add_argument("--output", "-o", metavar="FILE", help="also write the Markdown to FILE")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a target is missed, FAILED, incomplete or has no result")
    args = p.parse_args(argv)
    if not args.ours and not args.baselines:
        p.error("give --ours and/or --baselines")
    problems = []
    ours_doc = base_doc = None
    ours, base = {}, {}
    try:
        if args.ours:
            ours_doc = load_json(args.ours, "ours")
            ours, pr = read_ours(ours_doc)
            problems += pr
        if args.baselines:
            base_doc = load_json(args.baselines, "baselines")
            base, pr = read_baselines(base_doc)
            problems += pr
    except InputError as e:
        sys.stderr.write("report.py: %s\n" % e)
        return 2
    text, summary = render(ours_doc, base_doc, ours, base, problems)
    sys.stdout.write(text + "\n")
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    if args.strict and any(st != "met" for _, _, st, _ in summary):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
