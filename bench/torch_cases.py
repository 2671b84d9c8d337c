"""The benchmark cases of bench/torch_baselines.py: shapes, implementations, groups and case ids.

Pure data and the standard library (no torch), so `torch_baselines.py --list` works anywhere.
The (case, shape) keys are `stitchcuda bench --json`'s, so bench/report.py can join them.
"""

GIB = 1 << 30

GEMM_SHAPES = [(4096, 4096, 4096), (4097, 4097, 4097), (1000, 3000, 700), (128, 8192, 8192)]
GEMM_TF32_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]
ROW_SHAPES = [(32768, 8192), (65536, 512), (256, 262144)]      # softmax and layer norm
CHAIN_SHAPES = [(8192, 8192)]
GBG_SHAPES = [(8192, 8192, 128), (8192, 8192, 64), (4096, 4096, 4096)]  # M, N, K
COPY_BYTES = [GIB]

# What each implementation name means, per case family (also read by report.py's docs).
IMPLS = {
    "gemm": ["cublas"],                              # torch.mm, TF32 off
    "gemm_tf32": ["cublas"],                         # torch.mm, TF32 on
    "copy": ["torch"],                               # dst.copy_(src)
    "softmax": ["eager", "compile"],
    "layernorm": ["eager", "compile"],
    "chain5": ["eager", "compile"],
    "gemm_bias_gelu": ["cublas_gemm", "eager", "compile"],  # GEMM alone (TF32 off), mm+add+gelu, compiled
}


def mnk_str(m, n, k):
    return "%dx%dx%d" % (m, n, k)


def mn_str(m, n):
    return "%dx%d" % (m, n)


# Dimensions of each family's shape, as `stitchcuda bench --shape FAMILY:SHAPE` spells it
# (MxNxK for the GEMMs, MxN for the row and element-wise cases, a byte count for the copy).
SHAPE_DIMS = {"gemm": 3, "gemm_tf32": 3, "gemm_bias_gelu": 3, "softmax": 2, "layernorm": 2, "chain5": 2, "copy": 1}


def table_shapes():
    """The fixed case table, as (family, dims) pairs."""
    return ([("gemm", d) for d in GEMM_SHAPES] + [("gemm_tf32", d) for d in GEMM_TF32_SHAPES] +
            [("copy", (b,)) for b in COPY_BYTES] + [("softmax", d) for d in ROW_SHAPES] +
            [("layernorm", d) for d in ROW_SHAPES] + [("chain5", d) for d in CHAIN_SHAPES] +
            [("gemm_bias_gelu", d) for d in GBG_SHAPES])


def parse_shape(text):
    """'FAMILY:SHAPE' (as `stitchcuda bench --shape`) -> (family, dims); ValueError saying why."""
    family, sep, shape = text.partition(":")
    if not sep or family not in SHAPE_DIMS:
        raise ValueError("--shape %r: expected FAMILY:SHAPE with FAMILY one of %s"
                         % (text, ", ".join(sorted(SHAPE_DIMS))))
    parts = shape.split("x")
    want = SHAPE_DIMS[family]
    if len(parts) != want or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError("--shape %r: %s takes %s of positive integers" % (
            text, family, {3: "MxNxK", 2: "MxN", 1: "a byte count"}[want]))
    return family, tuple(int(p) for p in parts)


def make_group(case, dims):
    """One group = one (case, shape) with its inputs shared by its implementations."""
    if case in ("gemm", "gemm_tf32", "gemm_bias_gelu"):
        m, n, k = dims
        extra = n if case == "gemm_bias_gelu" else 0
        g = dict(case=case, shape=mnk_str(m, n, k), dims=dims, flops=2 * m * n * k,
                 bytes=4 * (m * k + k * n + extra + m * n))
    elif case == "copy":
        g = dict(case=case, shape=str(dims[0]), dims=dims, flops=None, bytes=2 * dims[0])
    else:
        m, n = dims
        per_row = {"softmax": 2 * n * 4, "layernorm": 2 * n * 4, "chain5": 3 * n * 4}[case]
        g = dict(case=case, shape=mn_str(m, n), dims=dims, flops=None,
                 bytes=m * per_row + (2 * n * 4 if case == "layernorm" else 0))
    g["impls"] = list(IMPLS[case])
    return g


def build_groups(shapes=None):
    """The groups of `shapes` ((family, dims) pairs, from --shape), else of the fixed table."""
    return [make_group(case, dims) for case, dims in (shapes or table_shapes())]


def case_id(case, shape, impl):
    return "%s:%s:%s" % (case, shape, impl)


def selected(cid, only):
    return not only or any(s in cid for s in only)
