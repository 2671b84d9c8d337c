#!/usr/bin/env bash
# Run 17, call 3 (session 15): the sampled-schedule GPU tests after sampleSchedules draws the GEMMs'
# samples from their whole legal space (schedule::sampleLegal; before, the walk's first 100000 legal
# schedules never reached block_m=64). One process per program, all at once; each schedule verified
# against the interpreter.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
for p in matmul_odd matmul_aligned softmax_odd softmax_long layernorm_odd chain_odd chain_aligned gemm_bias_gelu_odd; do
  ( timeout 500 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter="Programs/CodegenGpu.SampledSchedulesMatchTheInterpreter/$p" \
      > "$OUT/sampled-$p.log" 2>&1; echo "$p: exit $?" ) &
done
wait
grep -h "schedules verified\|Failure\|FAILED  \]\|  PASSED\|SKIPPED" "$OUT"/sampled-*.log | head -40
grep -h -A3 "Failure" "$OUT"/sampled-*.log | head -40
gzip -9 "$OUT"/sampled-*.log
echo "call done in $((SECONDS - t0)) s"
rm -f "$OUT/build.log"
