#!/usr/bin/env bash
# Run 23, call 3 (session 21; device tool, carry [".devcarry"]): the model of this session as it
# stands after call 2 (the code run once per block, the instruction-cache refetch, the loop's own
# spills), on more shapes no constant was fitted on, timed after the model was fixed: every
# candidate of GEMM 4096x4096x512, GEMM + bias + GELU 4096x8192x192 and GEMM 6144x2048x1024, then
# the first 80 of softmax and layer norm 16384x2048 (their whole sweeps did not compile within
# call 2's row limit). bench --calibration, no CUPTI; calibrate --summary ranks as run.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
B=./build-gpu/app/cli/stitchcuda
timeout 260 $B bench --verbose --out "$OUT/gemm.json" --calibration "$OUT/gemm.csv" \
    --shape gemm:4096x4096x512 --shape gemm_bias_gelu:4096x8192x192 --shape gemm:6144x2048x1024 > /dev/null 2> "$OUT/gemm.log"
echo "gemm bench exit $? at $((SECONDS - t0)) s"
timeout $((520 - SECONDS + t0)) $B bench --verbose --out "$OUT/rows.json" --calibration "$OUT/rows.csv" --max-candidates 80 \
    --shape softmax:16384x2048 --shape layernorm:16384x2048 > /dev/null 2> "$OUT/rows.log"
echo "rows bench exit $? at $((SECONDS - t0)) s"
grep -hv "^  " "$OUT/gemm.log" "$OUT/rows.log" | grep -v "^bench on\|^hardware" | tail -12
for f in gemm rows; do $B calibrate --summary "$OUT/$f.csv"; done
rm -f "$OUT/build.log"
gzip -9 "$OUT/gemm.log" "$OUT/rows.log"
echo "call done in $((SECONDS - t0)) s"
