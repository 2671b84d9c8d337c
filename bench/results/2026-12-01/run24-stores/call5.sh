#!/usr/bin/env bash
# Run 24, call 5 (session 22; device tool, no carry): PyTorch's side of call 2's held-out shapes
# (bench/torch_baselines.py --shape, new): cuBLAS for the three GEMMs, cuBLAS's GEMM alone, eager
# and torch.compile for GEMM + bias + GELU. 30 timed runs each, L2 flushed, as the table's baselines.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
python3 bench/torch_baselines.py --shape gemm:12288x8192x160 --shape gemm:3072x3072x3072 \
    --shape gemm:2000x5000x900 --shape gemm_bias_gelu:2048x12288x768 -o "$OUT/baselines.json" \
    > /dev/null 2> "$OUT/baselines.log"
echo "baselines exit $?"
tail -12 "$OUT/baselines.log"
python3 bench/report.py --ours bench/results/2026-12-01/run24-stores/call2/gemm.json \
    --baselines "$OUT/baselines.json" -o "$OUT/report.md" > /dev/null 2>&1; echo "report exit $?"
cat "$OUT/report.md" | head -30
