#!/usr/bin/env bash
# Run 15, call 1 (session 13; device tool, carry [".devcarry"]): a fresh, held-out sweep for the
# session-13 model (the stream-K hot loop and rounds, docs/RUBRIC.md "Issue 5, session 13 round"):
# every FP32 GEMM shape and the fused 4096^3 sweep with the store round, the model's predictions
# written beside each measured time, and the cuBLAS / PyTorch baselines in the same call.
MODE=bench METRICS=0 BENCH_TIMEOUT=500 BENCH_ARGS="--only gemm: --only gemm_bias_gelu:4096" \
    BASE_ARGS="--only gemm: --only gemm_bias_gelu:4096" bash scripts/device/gpu-check.sh
rm -f "${OUT:-/tmp/stitch-out}"/build.log "${OUT:-/tmp/stitch-out}"/clocks-*.csv
gzip -9 "${OUT:-/tmp/stitch-out}"/bench.log
