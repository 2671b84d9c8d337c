#!/usr/bin/env bash
# Run 22, call 1 (session 20; device tool, carry [".devcarry"]): issue 5's ranking on fresh H200
# measurements with the model of e6a893b (three-source bank conflicts, the replayed k-loop in the
# FFMA ring). Every schedule the search offers for the five FP32 GEMM problems (221 each; the
# stream-K, 32-bit-store neighbourhood of the large-GEMM default, 25 of 4096^3's measured before),
# timed one after the other (bench --calibration, no CUPTI), then `calibrate --summary` (the model
# as run) and `calibrate` (re-predicted from the cached compiles: the same model).
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 480 ./build-gpu/app/cli/stitchcuda bench --verbose --out "$OUT/ours.json" --calibration "$OUT/calibration.csv" \
    --only gemm:4096x4096x4096 --only gemm:4097 --only gemm:1000x3000 --only gemm:128x8192 \
    --only gemm_bias_gelu:4096 > /dev/null 2> "$OUT/bench.log"
echo "bench exit $? at $((SECONDS - t0)) s"; grep -v "^  " "$OUT/bench.log" | tail -8
./build-gpu/app/cli/stitchcuda calibrate --summary "$OUT/calibration.csv"
gzip -9 "$OUT/bench.log"; rm -f "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
