#!/usr/bin/env bash
# Run 14, call 5 (device tool, carry [".devcarry"]): the store round as committed (every FP32
# candidate within 5% of the first round's fastest, at most 48): the full FP32 GEMM 4096^3 and
# fused GEMM + bias + GELU 4096^3 sweeps beside cuBLAS and PyTorch in the same call.
MODE=bench METRICS=0 BENCH_TIMEOUT=420 BENCH_ARGS="--only gemm:4096x4096x4096 --only gemm_bias_gelu:4096" \
    BASE_ARGS="--only gemm:4096x4096x4096 --only gemm_bias_gelu:4096" bash scripts/device/gpu-check.sh
rm -f "${OUT:-/tmp/stitch-out}"/build.log "${OUT:-/tmp/stitch-out}"/clocks-*.csv
gzip -9 "${OUT:-/tmp/stitch-out}"/bench.log
