#!/usr/bin/env bash
# Run 13, call 3 (device tool, carry [".devcarry"]): erf=erfc (1 + erf(z) by one branch-free
# erfc approximation, the default for GELU epilogues) and the epilogue's column loads (bias[j])
# hoisted out of the row loop. GPU tests (the device function's accuracy, GELU both ways, the
# sampled GEMM schedules, stream-K), then the fused sweeps (cp.async, BK 16) at 8192x8192x128,
# 8192x8192x64 and 4096^3 beside PyTorch.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 200 ./build-gpu/tests/codegen/test_codegen_gpu \
    --gtest_filter='*Erf*:*gemm*:*StreamK*' > "$OUT/tests.log" 2>&1
echo "GPU tests: exit $?"; grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure|  z >= " "$OUT/tests.log" | head -30
echo "tests done at $((SECONDS - t0)) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
cli=./build-gpu/app/cli/stitchcuda
timeout 300 $cli bench --verbose --out "$OUT/ours.json" \
    --only gemm_bias_gelu:8192x8192x128 --only gemm_bias_gelu:8192x8192x64 --only gemm_bias_gelu:4096 \
    --where block_k=16 --where copy=async > /dev/null 2> "$OUT/bench.log"
echo "bench: exit $?"; grep -v "^  " "$OUT/bench.log" | tail -4
for c in "gemm_bias_gelu:8192x8192x128" "gemm_bias_gelu:8192x8192x64" "gemm_bias_gelu:4096"; do
    echo "--- $c, fastest in the sweep"; grep "^  $c" "$OUT/bench.log" | sort -k2 -n | head -4 | cut -c1-250
done
echo "bench done at $((SECONDS - t0)) s"
timeout 150 python3 bench/torch_baselines.py --only gemm_bias_gelu > "$OUT/baselines.json" 2> /tmp/baselines.log
echo "baselines: exit $?"
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "gemm_bias_gelu|GELU" "$OUT/report.md" | head -12
echo "all done at $((SECONDS - t0)) s"
rm -f "$OUT/build.log"
