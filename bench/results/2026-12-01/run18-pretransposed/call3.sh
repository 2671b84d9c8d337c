#!/usr/bin/env bash
# Run 18, call 3 (session 16; device tool, carry [".devcarry"]): transpose_b=on with the 64 x 64
# float4 transposing kernel. The warpgroup-MMA GPU tests (one process per case, exit codes and
# verification lines), then the bench at 4096^3 and 8192^3 over the 256x128, BK 32, 4-stage family
# with transpose_b=on and with off (every candidate timed, the fastest verified and timed after 2 s
# idle), cuBLAS TF32 in the same call.
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
grep -h "schedules\|Failure\|FAILED  \]\|  PASSED\|SKIPPED" "$OUT"/wgmma-*.log | sort | uniq -c | head -20
grep -h -A6 "Failure" "$OUT"/wgmma-*.log | head -40
cat "$OUT"/wgmma-*.log | gzip -9 > "$OUT/wgmma-tests.log.gz"; rm -f "$OUT"/wgmma-*.log
echo "tests done in $((SECONDS - t0)) s"
F="--where block_m=256 --where block_n=128 --where block_k=32 --where stages=4"
for tb in on off; do
  timeout 300 $cli bench --verbose --only gemm_tf32 $F --where transpose_b=$tb --out "$OUT/ours-$tb.json" > /dev/null 2> "$OUT/bench-$tb.log"
  echo "bench $tb exit $?"; grep -E "^ |^gemm" "$OUT/bench-$tb.log" | sed -e 's/ split_k=1//; s/ vector=4 smem_pad=0 store=vector copy=async//; s/ erf=library//; s/ thread_m=8 thread_n=16//'
done
python3 bench/torch_baselines.py --only gemm_tf32 --output "$OUT/baselines.json" > /dev/null 2> "$OUT/baselines.err"
python3 -c "
import json
for r in json.load(open('$OUT/baselines.json'))['results']: print(r['case'], r['shape'], r['impl'], r['median_ms'], r.get('error'))
" 2>&1 | head; tail -2 "$OUT/baselines.err"
echo "call done in $((SECONDS - t0)) s"
rm -f "$OUT/build.log"
