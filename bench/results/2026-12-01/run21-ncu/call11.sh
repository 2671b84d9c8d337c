#!/usr/bin/env bash
# Run 21, call 11 (session 19; device tool, carry [".devcarry"]): the final code's GEMM GPU tests (the
# sampled schedules of every program, the stream-K and store decisions) after the large-GEMM default.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 400 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='Programs/*:StreamK/*:CodegenGpuStore*' \
    > "$OUT/tests-gemm.log" 2>&1
echo "GEMM GPU tests: exit $? ($((SECONDS - t0)) s)"
grep -hE "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure|verified" "$OUT/tests-gemm.log" | head -40
gzip -9 "$OUT/tests-gemm.log"; rm -f "$OUT/build.log"
