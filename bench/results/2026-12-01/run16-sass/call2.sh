#!/usr/bin/env bash
# Run 16, call 2 (session 14; device tool, carry [".devcarry"]):
#  1. test_gpu as one process: the illegal-address test now faults in a child (gtest's threadsafe
#     death test), so the tests after it keep a clean GPU (call 1: 22 failed after it);
#  2. issue 5's dimension table on the current build (last run in session 7): bench --metrics over
#     the first 100 schedules of GEMM 4096³ (stream-K and the store round included), the 5-op chain,
#     softmax and layer norm 65536x512, then calibrate --summary and --dimensions.
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 120 ./build-gpu/tests/gpu/test_gpu > "$OUT/test_gpu.log" 2>&1
echo "test_gpu (one process): exit $?"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/test_gpu.log" | head -8
timeout 420 ./build-gpu/app/cli/stitchcuda bench --verbose --out "$OUT/ours.json" --calibration "$OUT/calibration.csv" \
    --metrics --max-candidates 100 --only gemm:4096x4096x4096 --only chain5 --only softmax:65536 --only layernorm:65536 \
    > /dev/null 2> "$OUT/bench.log"
echo "bench exit $? at $((SECONDS - t0)) s"; grep -v "^  " "$OUT/bench.log" | tail -12
./build-gpu/app/cli/stitchcuda calibrate --summary "$OUT/calibration.csv"
[ -s "$OUT/calibration.dimensions.csv" ] &&
    ./build-gpu/app/cli/stitchcuda calibrate --dimensions "$OUT/calibration.dimensions.csv" | tee "$OUT/dimensions.md"
gzip -9 "$OUT/bench.log" "$OUT/test_gpu.log"; rm -f "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
