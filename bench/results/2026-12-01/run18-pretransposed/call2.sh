#!/usr/bin/env bash
# Run 18, call 2 (session 16; device tool, carry [".devcarry"]): transpose_b=on as generated (a kernel
# writes B transposed and rounded to TF32, then the warpgroup MMAs read both operands by descriptor).
# The warpgroup-MMA GPU tests (every wgmmaVariants schedule, now with transpose_b=on twins, against
# the interpreter; one process per case), the bench over the transpose_b=on candidates at 4096^3 and
# 8192^3 (every candidate timed, the fastest verified and timed after 2 s idle), cuBLAS TF32.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
for c in matmul_128 matmul_257x131x77 matmul_1000x3000x700 matmul_4097x257x1031 matmul_tt_odd matmul_tt_aligned \
         gemm_bias_gelu_odd gemm_bias_gelu_512; do
  ( timeout 400 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter="Wgmma/CodegenGpuWgmma.*/$c" \
      > "$OUT/wgmma-$c.log" 2>&1; echo "$c: exit $?" ) &
done
wait
grep -h "verified\|Failure\|FAILED  \]\|  PASSED\|SKIPPED" "$OUT"/wgmma-*.log | head -40
grep -h -A6 "Failure" "$OUT"/wgmma-*.log | head -60
gzip -9 "$OUT"/wgmma-*.log
echo "tests done in $((SECONDS - t0)) s"
timeout 420 $cli bench --verbose --only gemm_tf32 --where transpose_b=on --out "$OUT/ours.json" > "$OUT/bench.json" 2> "$OUT/bench.log"
echo "bench exit $?"; tail -60 "$OUT/bench.log"
python3 bench/torch_baselines.py --only gemm_tf32 --output "$OUT/baselines.json" > /dev/null 2> "$OUT/baselines.err"
python3 -c "
import json
for r in json.load(open('$OUT/baselines.json'))['results']: print(r['case'], r['shape'], r['impl'], r['median_ms'], r.get('error'))
" 2>&1 | head; tail -2 "$OUT/baselines.err"
echo "call done in $((SECONDS - t0)) s"
rm -f "$OUT/build.log"
