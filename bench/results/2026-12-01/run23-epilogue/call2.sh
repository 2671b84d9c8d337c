#!/usr/bin/env bash
# Run 23, call 2 (session 21; device tool, carry [".devcarry"]): the held-out test of the model of
# 7823212 (the code run once per block, the instruction-cache refetch), on shapes no issue-5 set
# had and no constant was fitted on, timed after the model was fixed: every candidate of GEMM + bias
# + GELU 8192x4096x256, GEMM 8192x8192x128 (short K, unfused) and GEMM 2048^3 (bench --shape),
# then softmax and layer norm 16384x2048 and the 5-op chain 16384x4096. bench --calibration, no
# CUPTI; calibrate --summary ranks as run.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
B=./build-gpu/app/cli/stitchcuda
timeout 340 $B bench --verbose --out "$OUT/gemm.json" --calibration "$OUT/gemm.csv" \
    --shape gemm_bias_gelu:8192x4096x256 --shape gemm:8192x8192x128 --shape gemm:2048x2048x2048 > /dev/null 2> "$OUT/gemm.log"
echo "gemm bench exit $? at $((SECONDS - t0)) s"
timeout 150 $B bench --verbose --out "$OUT/rows.json" --calibration "$OUT/rows.csv" \
    --shape softmax:16384x2048 --shape layernorm:16384x2048 --shape chain5:16384x4096 > /dev/null 2> "$OUT/rows.log"
echo "rows bench exit $? at $((SECONDS - t0)) s"
grep -hv "^  " "$OUT/gemm.log" "$OUT/rows.log" | grep -v "^bench on\|^hardware" | tail -12
for f in gemm rows; do $B calibrate --summary "$OUT/$f.csv"; done
rm -f "$OUT/build.log"
gzip -9 "$OUT/gemm.log" "$OUT/rows.log"
echo "call done in $((SECONDS - t0)) s"
