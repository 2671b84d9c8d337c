#!/usr/bin/env python3
"""PyTorch baselines (cuBLAS, eager, torch.compile) for StitchCUDA's benchmark cases.

Prints one JSON document to stdout; progress and warnings go to stderr. Cases use the
same (case, shape) keys as `stitchcuda bench --json`, so bench/report.py can join them.

    python3 bench/torch_baselines.py > baselines.json
    python3 bench/torch_baselines.py --only softmax --quick > softmax.json
    python3 bench/torch_baselines.py --list          # no GPU and no torch needed

Timing: per implementation, warm-up runs (torch.compile: compiled first, untimed, and its
output checked against eager), then `--repeats` timed runs. Before every timed run the L2
cache is flushed by reading a buffer of twice the L2 size (a sum: clean lines; a flush by writes
would leave dirty lines for the timed work to write back, run 21), outside the timed region;
each run is bracketed by its own pair of CUDA events. Reported: median, min, max (ms),
and TFLOP/s (2*M*N*K) for GEMMs or GB/s (inputs read once + outputs written once) for
memory-bound cases, both from the median.

Only the standard library and torch are used.
"""

import argparse
import importlib
import json
import os
import statistics
import sys
import time
import traceback
import zlib

# The case table: bench/torch_cases.py, beside this file.
from torch_cases import build_groups, case_id, parse_shape, selected

SCHEMA = "stitchcuda-torch-baselines/1"
FALLBACK_L2_BYTES = 60 * (1 << 20)

def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


# ----------------------------------------------------------------------------------------
# Everything below needs torch; it is imported in main() after argument parsing.
# ----------------------------------------------------------------------------------------

torch = None  # set in main()


def set_tf32(on):
    """TF32 for cuBLAS matmuls through the legacy flag, as specified.

    In torch >= 2.9 the legacy setter updates both the legacy and the new
    (fp32_precision) state, so inductor's reads of either stay consistent. Never mix in
    the new setter here: setting only the new API makes later reads of allow_tf32 raise
    "mix of the legacy and new APIs".
    """
    torch.backends.cuda.matmul.allow_tf32 = bool(on)


def tf32_state():
    state = {}
    try:
        state["allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
    except Exception as e:  # noqa: BLE001
        state["allow_tf32"] = "error: %s" % e
    try:
        if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
            state["fp32_precision"] = str(torch.backends.cuda.matmul.fp32_precision)
    except Exception as e:  # noqa: BLE001
        state["fp32_precision"] = "error: %s" % e
    return state


class Timer:
    """CUDA-event timing with an L2 flush before every timed run."""

    def __init__(self, repeats, warmup, flush_bytes):
        self.repeats = repeats
        self.warmup = warmup
        self.flush = torch.zeros(max(1, flush_bytes // 4), dtype=torch.float32, device="cuda")

    def run(self, fn):
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.repeats)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.repeats)]
        # Let the host run ahead of the GPU so that no launch latency falls between the
        # events: a short device-side spin first, then every run is enqueued back to back
        # (flush, start event, work, end event) and synchronised once at the end.
        try:
            torch.cuda._sleep(20_000_000)  # ~10 ms at ~2 GHz
        except Exception:  # noqa: BLE001  (private helper; purely an optimisation)
            pass
        for i in range(self.repeats):
            self.flush.sum()            # outside the timed region: reads, leaves L2 clean
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        return {
            "median_ms": statistics.median(times),
            "min_ms": min(times),
            "max_ms": max(times),
            "mean_ms": statistics.fmean(times),
            "repeats": len(times),
            "times_ms": [round(t, 6) for t in times],
        }


def rel_error(out, ref):
    """max |out - ref| / max |ref| in float64; inf on shape mismatch or non-finite output."""
    if tuple(out.shape) != tuple(ref.shape):
        return float("inf")
    o = out.detach().double()
    r = ref.detach().double()
    if not bool(torch.isfinite(o).all()) and bool(torch.isfinite(r).all()):
        return float("inf")
    diff = (o - r).abs().max().item()
    scale = r.abs().max().item()
    return diff / scale if scale > 0 else diff


def seeded(group, salt=""):
    torch.manual_seed(zlib.crc32((group["case"] + ":" + group["shape"] + salt).encode()) & 0x7FFFFFFF)


def free_memory():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


# ---- family setups: return {impl: (callable, reference-or-None, tolerance)} -------------
# The reference of a compiled implementation is eager's output on the same inputs.

def chain5_fn(x, y):
    t0 = x * y
    t1 = t0 + 1
    t2 = torch.tanh(t1)
    t3 = t2 * 0.5 - x
    return torch.relu(t3)


def gemm_bias_gelu_fn(a, w, bias):
    return torch.nn.functional.gelu(torch.mm(a, w) + bias)  # approximate="none": exact erf


def softmax_fn(x):
    return torch.softmax(x, dim=-1)


def make_layernorm_fn(n):
    def layernorm_fn(x, weight, bias):
        return torch.nn.functional.layer_norm(x, (n,), weight, bias, eps=1e-5)
    return layernorm_fn


def compile_fn(fn, mode):
    importlib.import_module("torch._dynamo").reset()  # explicit: torch imports it lazily
    if mode and mode != "default":
        return torch.compile(fn, mode=mode, dynamic=False)
    return torch.compile(fn, dynamic=False)


def setup_group(group, compile_mode):
    """Allocate the inputs; return (impls dict, keep-alive tensors)."""
    case = group["case"]
    dev = "cuda"
    f32 = torch.float32
    seeded(group)
    impls = {}

    if case in ("gemm", "gemm_tf32"):
        m, n, k = group["dims"]
        a = torch.randn(m, k, device=dev, dtype=f32)
        b = torch.randn(k, n, device=dev, dtype=f32)
        c = torch.empty(m, n, device=dev, dtype=f32)
        impls["cublas"] = dict(fn=lambda: torch.mm(a, b, out=c))
        return impls

    if case == "copy":
        (nbytes,) = group["dims"]
        src = torch.randn(nbytes // 4, device=dev, dtype=f32)
        dst = torch.empty_like(src)
        impls["torch"] = dict(fn=lambda: dst.copy_(src))
        return impls

    if case == "softmax":
        m, n = group["dims"]
        x = torch.randn(m, n, device=dev, dtype=f32)
        impls["eager"] = dict(fn=lambda: softmax_fn(x))
        impls["compile"] = dict(compile=lambda: compile_fn(softmax_fn, compile_mode), args=(x,),
                                ref=lambda: softmax_fn(x), tol=1e-4)
        return impls

    if case == "layernorm":
        m, n = group["dims"]
        x = torch.randn(m, n, device=dev, dtype=f32)
        weight = torch.randn(n, device=dev, dtype=f32)
        bias = torch.randn(n, device=dev, dtype=f32)
        fn = make_layernorm_fn(n)
        impls["eager"] = dict(fn=lambda: fn(x, weight, bias))
        impls["compile"] = dict(compile=lambda: compile_fn(fn, compile_mode), args=(x, weight, bias),
                                ref=lambda: fn(x, weight, bias), tol=1e-4)
        return impls

    if case == "chain5":
        m, n = group["dims"]
        x = torch.randn(m, n, device=dev, dtype=f32)
        y = torch.randn(m, n, device=dev, dtype=f32)
        impls["eager"] = dict(fn=lambda: chain5_fn(x, y))
        impls["compile"] = dict(compile=lambda: compile_fn(chain5_fn, compile_mode), args=(x, y),
                                ref=lambda: chain5_fn(x, y), tol=1e-5)
        return impls

    if case == "gemm_bias_gelu":
        m, n, k = group["dims"]
        a = torch.randn(m, k, device=dev, dtype=f32)
        w = torch.randn(k, n, device=dev, dtype=f32)
        bias = torch.randn(n, device=dev, dtype=f32)
        c = torch.empty(m, n, device=dev, dtype=f32)
        impls["cublas_gemm"] = dict(fn=lambda: torch.mm(a, w, out=c))
        impls["eager"] = dict(fn=lambda: gemm_bias_gelu_fn(a, w, bias))
        impls["compile"] = dict(compile=lambda: compile_fn(gemm_bias_gelu_fn, compile_mode),
                                args=(a, w, bias), ref=lambda: gemm_bias_gelu_fn(a, w, bias),
                                tol=1e-3)
        return impls

    raise ValueError("unknown case %r" % case)


def derived(group, median_ms):
    out = {"tflops": None, "gbps": None}
    if median_ms and median_ms > 0:
        sec = median_ms * 1e-3
        if group["flops"] is not None:
            out["tflops"] = group["flops"] / sec / 1e12
        if group["bytes"] is not None and group["case"] not in ("gemm", "gemm_tf32"):
            out["gbps"] = group["bytes"] / sec / 1e9
    return out


def short_error(e):
    msg = "%s: %s" % (type(e).__name__, e)
    return msg if len(msg) <= 2000 else msg[:2000] + " ...[truncated]"


def run_impl(group, impl_name, spec, timer):
    rec = dict(case=group["case"], shape=group["shape"], impl=impl_name,
               flops=group["flops"], bytes=group["bytes"],
               median_ms=None, min_ms=None, max_ms=None, tflops=None, gbps=None,
               verified=None, rel_error=None, error=None)
    t0 = time.time()
    if "compile" in spec:
        compiled = spec["compile"]()
        args = spec["args"]
        out = compiled(*args)           # compiles here, untimed
        torch.cuda.synchronize()
        rec["compile_s"] = round(time.time() - t0, 3)
        ref = spec["ref"]()
        torch.cuda.synchronize()
        err = rel_error(out, ref)
        rec["rel_error"] = err
        rec["verified"] = bool(err <= spec["tol"])
        rec["tolerance"] = spec["tol"]
        del out, ref
        if not rec["verified"]:
            log("  WARNING %s: compiled output differs from eager (rel_error %.3g > %.3g)"
                % (case_id(group["case"], group["shape"], impl_name), err, spec["tol"]))
        fn = lambda: compiled(*args)  # noqa: E731
    else:
        fn = spec["fn"]
    stats = timer.run(fn)
    rec.update(stats)
    rec.update(derived(group, stats["median_ms"]))
    return rec


def run_group(group, only, timer, compile_mode):
    names = [i for i in group["impls"] if selected(case_id(group["case"], group["shape"], i), only)]
    if not names:
        return []
    results = []
    tf32 = group["case"] == "gemm_tf32"
    impls = None
    try:
        set_tf32(tf32)
        try:
            impls = setup_group(group, compile_mode)
        except Exception as e:  # noqa: BLE001  inputs could not be made: every impl fails
            log("[setup] %s:%s FAILED: %s" % (group["case"], group["shape"], short_error(e)))
            for name in names:
                results.append(dict(case=group["case"], shape=group["shape"], impl=name,
                                     error="setup: " + short_error(e),
                                     traceback=traceback.format_exc()[-4000:]))
            return results
        for name in names:
            cid = case_id(group["case"], group["shape"], name)
            log("[run] %s" % cid)
            try:
                rec = run_impl(group, name, impls[name], timer)
                rec["tf32"] = tf32
                extra = ""
                if rec.get("tflops") is not None:
                    extra += "  %.2f TFLOP/s" % rec["tflops"]
                if rec.get("gbps") is not None:
                    extra += "  %.1f GB/s" % rec["gbps"]
                if rec.get("verified") is False:
                    extra += "  (UNVERIFIED)"
                log("      median %.4f ms  min %.4f  max %.4f%s"
                    % (rec["median_ms"], rec["min_ms"], rec["max_ms"], extra))
            except Exception as e:  # noqa: BLE001  one failure must not stop the rest
                log("      FAILED: %s" % short_error(e))
                rec = dict(case=group["case"], shape=group["shape"], impl=name, tf32=tf32,
                           error=short_error(e), traceback=traceback.format_exc()[-4000:])
            results.append(rec)
            try:
                free_memory()
            except Exception:  # noqa: BLE001
                pass
    finally:
        impls = None
        try:
            set_tf32(False)
        except Exception:  # noqa: BLE001
            pass
        try:
            torch._dynamo.reset()
        except Exception:  # noqa: BLE001
            pass
        try:
            free_memory()
        except Exception:  # noqa: BLE001
            pass
    return results


def environment(args, l2_bytes, l2_source, flush_bytes):
    props = torch.cuda.get_device_properties(0)
    env = {
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
        "capability": "%d.%d" % torch.cuda.get_device_capability(0),
        "sm_count": getattr(props, "multi_processor_count", None),
        "total_memory_bytes": getattr(props, "total_memory", None),
        "l2_cache_bytes": l2_bytes,
        "l2_cache_source": l2_source,
        "l2_flush_bytes": flush_bytes,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "compile_mode": args.compile_mode,
        "python": sys.version.split()[0],
        "argv": sys.argv[1:],
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    try:
        import triton  # noqa: F401
        env["triton_version"] = getattr(triton, "__version__", None)
    except Exception:  # noqa: BLE001
        env["triton_version"] = None
    try:
        env["cudnn_version"] = torch.backends.cudnn.version()
    except Exception:  # noqa: BLE001
        env["cudnn_version"] = None
    return env


# ----------------------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Measure PyTorch baselines (cuBLAS, eager, torch.compile) and print JSON to stdout.")
    p.add_argument("--list", action="store_true",
                   help="print the cases (case:shape:impl) and exit; needs neither torch nor a GPU")
    p.add_argument("--only", action="append", default=[], metavar="SUBSTRING",
                   help="run only cases whose id 'case:shape:impl' contains SUBSTRING "
                        "(repeatable; a case runs if any matches)")
    p.add_argument("--shape", action="append", default=[], metavar="FAMILY:SHAPE",
                   help="time FAMILY (gemm, gemm_tf32, gemm_bias_gelu, softmax, layernorm, chain5, copy) "
                        "at SHAPE instead of the fixed table, as `stitchcuda bench --shape` "
                        "(repeatable; e.g. gemm:12288x8192x160)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed runs per implementation (default 30, or 10 with --quick)")
    p.add_argument("--warmup", type=int, default=None,
                   help="untimed warm-up runs per implementation (default 5, or 2 with --quick)")
    p.add_argument("--quick", action="store_true", help="fewer repeats and warm-up runs")
    p.add_argument("--compile-mode", default="default",
                   help="torch.compile mode: default, reduce-overhead, max-autotune, ... (default: default)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="also write the JSON document to FILE")
    args = p.parse_args(argv)
    if args.repeats is None:
        args.repeats = 10 if args.quick else 30
    if args.warmup is None:
        args.warmup = 2 if args.quick else 5
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    if args.warmup < 0:
        p.error("--warmup must be >= 0")
    try:
        args.shapes = [parse_shape(t) for t in args.shape]
    except ValueError as e:
        p.error(str(e))
    return args


def list_cases(only, shapes=None):
    groups = build_groups(shapes)
    n = 0
    for g in groups:
        for impl in g["impls"]:
            cid = case_id(g["case"], g["shape"], impl)
            if not selected(cid, only):
                continue
            n += 1
            fig = []
            if g["flops"] is not None:
                fig.append("flops=%d" % g["flops"])
            if g["bytes"] is not None and g["case"] not in ("gemm", "gemm_tf32"):
                fig.append("bytes=%d" % g["bytes"])
            print("%-40s %s" % (cid, " ".join(fig)))
    print("# %d case(s)" % n, file=sys.stderr)
    return 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.list:
        return list_cases(args.only, args.shapes)

    # Keep stdout clean for the JSON document: anything that torch, inductor, triton or a
    # compiler subprocess prints to fd 1 while benchmarking goes to stderr instead.
    sys.stdout.flush()
    saved_stdout_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        doc, rc = run_all(args)
    except BaseException as e:  # noqa: BLE001  still print a JSON document saying why
        doc = {"schema": SCHEMA, "tool": "bench/torch_baselines.py", "results": [],
               "error": short_error(e), "traceback": traceback.format_exc()[-4000:]}
        rc = 130 if isinstance(e, KeyboardInterrupt) else 2
        log("FAILED: %s" % doc["error"])
    finally:
        sys.stdout.flush()
        os.dup2(saved_stdout_fd, 1)
        os.close(saved_stdout_fd)
    try:
        text = json.dumps(doc, indent=2, allow_nan=False, default=str)
    except ValueError:  # a stray NaN/inf that sanitize() missed
        text = json.dumps(sanitize(doc), indent=2, default=str)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
        log("wrote %s" % args.output)
    return rc


def sanitize(obj):
    """JSON has no NaN/Infinity: write them as strings."""
    if isinstance(obj, float):
        if obj != obj:
            return "nan"
        if obj in (float("inf"), float("-inf")):
            return "inf" if obj > 0 else "-inf"
        return obj
    if isinstance(obj, dict):
        return {k: sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [sanitize(v) for v in obj]
    return obj


def run_all(args):
    global torch
    doc = {"schema": SCHEMA, "tool": "bench/torch_baselines.py", "results": []}
    try:
        import torch as _torch
        torch = _torch
    except Exception as e:  # noqa: BLE001
        doc["error"] = "cannot import torch: " + short_error(e)
        log(doc["error"])
        return doc, 2
    if not torch.cuda.is_available():
        doc["error"] = "torch.cuda.is_available() is False"
        doc["torch_version"] = torch.__version__
        log(doc["error"])
        return doc, 2

    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", None)
    if isinstance(l2, int) and l2 > 0:
        l2_bytes, l2_source = l2, "torch.cuda.get_device_properties(0).L2_cache_size"
    else:
        l2_bytes, l2_source = FALLBACK_L2_BYTES, "fallback (60 MiB)"
    flush_bytes = 2 * l2_bytes
    doc.update(environment(args, l2_bytes, l2_source, flush_bytes))
    log("torch %s, CUDA %s, %s (sm_%s), L2 %.1f MiB (%s), flush %.1f MiB, repeats %d, warm-up %d"
        % (doc["torch_version"], doc["cuda_version"], doc["device"], doc["capability"].replace(".", ""),
           l2_bytes / 2**20, l2_source, flush_bytes / 2**20, args.repeats, args.warmup))

    set_tf32(False)
    doc["tf32_state_default"] = tf32_state()
    timer = Timer(args.repeats, args.warmup, flush_bytes)

    groups = build_groups(args.shapes)
    t_start = time.time()
    for g in groups:
        try:
            doc["results"].extend(run_group(g, args.only, timer, args.compile_mode))
        except Exception as e:  # noqa: BLE001  last line of defence
            log("  group %s:%s FAILED: %s" % (g["case"], g["shape"], short_error(e)))
            doc["results"].append(dict(case=g["case"], shape=g["shape"], impl=None,
                                       error=short_error(e), traceback=traceback.format_exc()[-4000:]))
    doc["total_s"] = round(time.time() - t_start, 1)
    doc["tf32_state_end"] = tf32_state()
    n_err = sum(1 for r in doc["results"] if r.get("error"))
    n_unv = sum(1 for r in doc["results"] if r.get("verified") is False)
    log("done: %d result(s), %d error(s), %d unverified, %.1f s"
        % (len(doc["results"]), n_err, n_unv, doc["total_s"]))
    if not doc["results"]:
        log("no case matched --only %s" % args.only)
    return sanitize(doc), 0


if __name__ == "__main__":
    sys.exit(main())
