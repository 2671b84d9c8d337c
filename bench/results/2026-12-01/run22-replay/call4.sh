#!/usr/bin/env bash
# Run 22, call 4 (session 20; device tool, carry [".devcarry"]): the model of f618cd6 on GEMMs it
# was not shaped on: every candidate of the fused GEMM + bias + GELU at 8192x8192x128 and x64
# (306 each, short K: no issue-5 set has them), and FP32 1000x3000x700's 221 again (call 1's
# figures re-timed: how much of its 0.853 the measurement moves). bench --calibration, no CUPTI;
# calibrate --summary ranks as run (the bench now predicts with the SASS).
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 500 ./build-gpu/app/cli/stitchcuda bench --verbose --out "$OUT/ours.json" --calibration "$OUT/calibration.csv" \
    --only gemm_bias_gelu:8192x8192x128 --only gemm_bias_gelu:8192x8192x64 --only gemm:1000x3000 > /dev/null 2> "$OUT/bench.log"
echo "bench exit $? at $((SECONDS - t0)) s"; grep -v "^  " "$OUT/bench.log" | tail -5
./build-gpu/app/cli/stitchcuda calibrate --summary "$OUT/calibration.csv"
gzip -9 "$OUT/bench.log"; rm -f "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
