#!/usr/bin/env bash
# Run 16, call 1 (session 14; device tool, carry [".devcarry"]):
#  1. the SASS scan against cuobjdump on generated GEMM kernels (RubricSass.AgreesWithCuobjdump skips
#     where the toolkit has no cuobjdump, as on CI) and the scan's own tests;
#  2. the runner with a non-blocking launch stream again, ordered by the context synchronisation
#     alone (session 13 had both): the runner's and driver's GPU tests alongside the 11 processes of
#     run 15 call 3, all at once (the load under which the missing ordering showed).
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda-worker test_core test_rubric test_gpu test_runner_gpu test_codegen_gpu test_corpus_gpu" \
    source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
./build-gpu/tests/rubric/test_rubric --gtest_filter='RubricSass*' > "$OUT/sass.log" 2>&1; echo "RubricSass: exit $?"
./build-gpu/tests/core/test_core --gtest_filter='SassScan*:Cubin*' >> "$OUT/sass.log" 2>&1; echo "SassScan: exit $?"
grep -E "OK|FAILED|SKIPPED|Failure|Expected|Which|variant" "$OUT/sass.log" | head -40
( timeout 400 ./build-gpu/tests/runner/test_runner_gpu > "$OUT/r-runner.log" 2>&1; echo "test_runner_gpu: exit $?" ) &
( timeout 400 ./build-gpu/tests/gpu/test_gpu > "$OUT/r-gpu.log" 2>&1; echo "test_gpu: exit $?" ) &
bash bench/results/2026-11-30/run15-model/call3.sh
wait
grep -hE "^\[  (PASSED|FAILED) " "$OUT"/r-runner.log "$OUT"/r-gpu.log
echo "call done in $((SECONDS - t0)) s"
