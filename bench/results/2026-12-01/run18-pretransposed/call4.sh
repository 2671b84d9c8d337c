#!/usr/bin/env bash
# Run 18, call 4 (session 16; device tool, carry [".devcarry"]): the sampled GPU tests of the GEMM
# programs again. The new decision transpose_b takes a draw of sampleLegal's generator at every
# GEMM sample, so the samples of run 17 call 3 changed (FP32: transpose_b is illegal without
# math=tf32_wgmma, but the draws after it moved). One process per program, every sample against
# the interpreter.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
for p in matmul_odd matmul_aligned gemm_bias_gelu_odd; do
  ( timeout 500 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter="Programs/CodegenGpu.SampledSchedulesMatchTheInterpreter/$p" \
      > "$OUT/sampled-$p.log" 2>&1; echo "$p: exit $?" ) &
done
wait
grep -h "schedules verified\|Failure\|FAILED  \]\|  PASSED\|SKIPPED" "$OUT"/sampled-*.log | head -20
grep -h -A3 "Failure" "$OUT"/sampled-*.log | head -40
gzip -9 "$OUT"/sampled-*.log
echo "call done in $((SECONDS - t0)) s"
rm -f "$OUT/build.log"
