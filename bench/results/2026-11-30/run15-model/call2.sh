#!/usr/bin/env bash
# Run 15, call 2 (session 13; device tool, carry [".devcarry"]): every GPU test but the eight sampled
# programs (call 3 runs those): ctest -L gpu, the first full run of the label since session 7.
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu test_corpus_gpu test_gpu test_runner_gpu bench_worker_overhead" \
    source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 520 ctest --test-dir build-gpu -j8 -L gpu -E "^Programs/CodegenGpu" --timeout 300 --output-on-failure > "$OUT/ctest-gpu.log" 2>&1
echo "ctest exit $? in $((SECONDS - t0)) s"
grep -E "tests passed|tests failed|Failed|\*\*\*|Skipped|Not Run" "$OUT/ctest-gpu.log" | tail -30
gzip -9 "$OUT/ctest-gpu.log"; rm -f "$OUT/build.log"
