#!/usr/bin/env bash
# Run 24, call 2 (session 22; device tool, carry [".devcarry"]): the held-out test of the model of
# 8472af8 (a cp.async ring's round exposes one block's stores, at asyncStoreFactor), on shapes no
# issue-5 set had and no constant was fitted on, timed after the model was fixed: every candidate of
# GEMM 12288x8192x160 (short K, unfused: the class run 23 missed), GEMM 3072^3, GEMM 2000x5000x900
# (unaligned: edge tiles, scalar loads) and GEMM + bias + GELU 2048x12288x768 (bench --shape).
# bench --calibration, no CUPTI; calibrate --summary ranks as run.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
B=./build-gpu/app/cli/stitchcuda
timeout 520 $B bench --verbose --out "$OUT/gemm.json" --calibration "$OUT/gemm.csv" \
    --shape gemm:12288x8192x160 --shape gemm:3072x3072x3072 --shape gemm:2000x5000x900 \
    --shape gemm_bias_gelu:2048x12288x768 > /dev/null 2> "$OUT/gemm.log"
echo "gemm bench exit $? at $((SECONDS - t0)) s"
grep -hv "^  " "$OUT/gemm.log" | grep -v "^bench on\|^hardware" | tail -8
$B calibrate --summary "$OUT/gemm.csv"
rm -f "$OUT/build.log"
gzip -9 "$OUT/gemm.log"
echo "call done in $((SECONDS - t0)) s"
