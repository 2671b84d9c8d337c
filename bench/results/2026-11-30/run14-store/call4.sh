#!/usr/bin/env bash
# Run 14, call 4 (device tool, carry [".devcarry"]): the whole FP32 GEMM sweep (4096^3 again, 4097^3,
# 1000x3000x700, 128x8192x8192) and the fused 4096^3 sweep with the store round (fdf8c24), the
# model's predictions for every candidate, and the cuBLAS / PyTorch baselines in the same call.
MODE=bench METRICS=0 BENCH_TIMEOUT=480 BENCH_ARGS="--only gemm: --only gemm_bias_gelu:4096" \
    BASE_ARGS="--only gemm: --only gemm_bias_gelu:4096" bash scripts/device/gpu-check.sh
rm -f "${OUT:-/tmp/stitch-out}"/build.log "${OUT:-/tmp/stitch-out}"/clocks-*.csv
gzip -9 "${OUT:-/tmp/stitch-out}"/bench.log
