#!/usr/bin/env bash
# Run 24, call 3 (session 22; device tool, carry [".devcarry"]): issue 5's own problems timed afresh
# with the model of 8472af8 (as call 2): every candidate of GEMM 4096^3, then the first 80 of
# softmax 65536x512, layer norm 65536x512 and the 5-op element-wise chain (the bench's shapes).
# bench --calibration, no CUPTI; calibrate --summary ranks as run.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
B=./build-gpu/app/cli/stitchcuda
timeout 170 $B bench --verbose --out "$OUT/gemm.json" --calibration "$OUT/gemm.csv" \
    --only gemm:4096x4096x4096 > /dev/null 2> "$OUT/gemm.log"
echo "gemm bench exit $? at $((SECONDS - t0)) s"
timeout 340 $B bench --verbose --out "$OUT/rows.json" --calibration "$OUT/rows.csv" --max-candidates 80 \
    --only softmax:65536 --only layernorm:65536x512 --only chain5 > /dev/null 2> "$OUT/rows.log"
echo "rows bench exit $? at $((SECONDS - t0)) s"
grep -hv "^  " "$OUT/gemm.log" "$OUT/rows.log" | grep -v "^bench on\|^hardware" | tail -8
for f in gemm rows; do $B calibrate --summary "$OUT/$f.csv"; done
rm -f "$OUT/build.log"
gzip -9 "$OUT/gemm.log" "$OUT/rows.log"
echo "call done in $((SECONDS - t0)) s"
