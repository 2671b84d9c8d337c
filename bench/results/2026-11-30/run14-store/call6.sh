#!/usr/bin/env bash
# Run 14, call 6 (device tool, carry [".devcarry"]): the sampled-schedule GPU test of the fused
# GEMM + bias + GELU (its legal space includes store=scalar and, with split K, store=copy), and the
# bench after its candidate timing moved into a class (SweepTimer): a small sweep with the store
# round and the calibration CSV, end to end.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 160 ./build-gpu/tests/codegen/test_codegen_gpu \
    --gtest_filter='Programs/CodegenGpu.SampledSchedulesMatchTheInterpreter/gemm_bias_gelu_odd' > "$OUT/tests.log" 2>&1
echo "GPU test: exit $?"; grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure" "$OUT/tests.log" | head
echo "schedules naming store=scalar / store=copy: $(grep -c 'store=scalar' "$OUT/tests.log") / $(grep -c 'store=copy' "$OUT/tests.log")"
echo "tests done at $((SECONDS - t0)) s"
timeout 80 ./build-gpu/app/cli/stitchcuda bench --verbose --out "$OUT/ours.json" --calibration "$OUT/calibration.csv" \
    --only gemm:1000x3000x700 --where copy=async --where block_k=16 > /dev/null 2> "$OUT/bench.log"
echo "bench: exit $?"; grep -v "^  " "$OUT/bench.log" | tail -2
echo "second round: $(grep -c '^  gemm.*store=\(scalar\|copy\)' "$OUT/bench.log") candidates; rows in the calibration CSV: $(($(wc -l < "$OUT/calibration.csv") - 1))"
./build-gpu/app/cli/stitchcuda calibrate --summary "$OUT/calibration.csv" | grep "^| gemm"
gzip -9 "$OUT"/*.log
echo "all done at $((SECONDS - t0)) s"
rm -f "$OUT/build.log.gz"
