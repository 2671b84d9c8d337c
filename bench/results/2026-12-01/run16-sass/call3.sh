#!/usr/bin/env bash
# Run 16, call 3 (session 14; device tool, carry [".devcarry"]):
#  1. the stream-K GPU tests after the tile rule became one expression (schedule::streamKTilesExpr,
#     printed into the kernel; the launcher's grid checked against it by StreamK.GridAndKernelShareTheOneTileRule);
#  2. the rest of call 2's dimension table: bench --metrics over the first 45 schedules of the 5-op
#     chain and of layer norm 65536x512 (call 2's bench stopped at its limit before them).
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 200 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='StreamK*' > "$OUT/streamk.log" 2>&1
echo "StreamK GPU tests: exit $? in $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED  \]" "$OUT/streamk.log" | head -12
timeout 330 ./build-gpu/app/cli/stitchcuda bench --verbose --out "$OUT/ours.json" --calibration "$OUT/calibration.csv" \
    --metrics --max-candidates 45 --only chain5 --only layernorm:65536 > /dev/null 2> "$OUT/bench.log"
echo "bench exit $? at $((SECONDS - t0)) s"; grep -v "^  " "$OUT/bench.log" | tail -6
./build-gpu/app/cli/stitchcuda calibrate --summary "$OUT/calibration.csv"
[ -s "$OUT/calibration.dimensions.csv" ] &&
    ./build-gpu/app/cli/stitchcuda calibrate --dimensions "$OUT/calibration.dimensions.csv" | head -14 | tee "$OUT/dimensions-head.md"
[ -s "$OUT/calibration.dimensions.csv" ] &&
    ./build-gpu/app/cli/stitchcuda calibrate --dimensions "$OUT/calibration.dimensions.csv" > "$OUT/dimensions.md"
gzip -9 "$OUT/bench.log" "$OUT/streamk.log"; rm -f "$OUT/build.log" "$OUT/dimensions-head.md"
echo "call done in $((SECONDS - t0)) s"
