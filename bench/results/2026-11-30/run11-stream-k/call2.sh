#!/usr/bin/env bash
# Run 11, call 2 (device tool, carry [".devcarry"]): the stream-K GPU tests on all 9 shapes (the two
# large ones in a second process, their CPU references take about 45 s each), racecheck and memcheck
# on two small shapes, then the fused GEMM + bias + GELU at 4096^3 over every 16-deep cp.async
# candidate (stream_k on and off) beside cuBLAS in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
mkdir -p "$OUT"
prefix=/tmp/stitch-prefix
mkdir -p "$prefix"
for f in .devcarry/debs/*.deb; do dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTITCHCUDA_BUILD_STUDIO=OFF \
    -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DSTITCHCUDA_DEPS_DIR="$PWD/.devcarry" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
ninja -C build-gpu -j16 stitchcuda stitchcuda-worker test_codegen_gpu > "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -30; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
t=./build-gpu/tests/codegen/test_codegen_gpu
big='StreamK*matmul_1000x3000x700:StreamK*matmul_4097x257x1031'
timeout 280 $t --gtest_filter="$big" > "$OUT/streamk-big.log" 2>&1 &
bigpid=$!
timeout 280 $t --gtest_filter="StreamK*-$big" > "$OUT/streamk-small.log" 2>&1
echo "stream-K GPU tests (7 shapes): exit $?"
small='StreamK*matmul_1024x1000x70:StreamK*gemm_bias_gelu_odd'
for tool in racecheck memcheck; do
    timeout 200 compute-sanitizer --tool $tool --target-processes all --error-exitcode 3 $t --gtest_filter="$small" > "$OUT/san-$tool.log" 2>&1
    echo "$tool: exit $?, $(grep -c '^\[       OK' "$OUT/san-$tool.log") tests OK, $(grep -h 'ERROR SUMMARY' "$OUT/san-$tool.log" | sort | uniq -c | tr '\n' ' ')"
done
wait $bigpid
echo "stream-K GPU tests (2 large shapes): exit $?"
cat "$OUT/streamk-small.log" "$OUT/streamk-big.log" | grep -E "^\[ +(OK|FAILED) +\]|Failure|not legal" | head -40
echo "tests done at $(( $(date +%s) - t0 )) s"
timeout 200 ./build-gpu/app/cli/stitchcuda bench --verbose --out "$OUT/ours-fused.json" --calibration "$OUT/calibration-fused.csv" \
    --only gemm_bias_gelu:4096 --where block_k=16 --where copy=async > /dev/null 2> "$OUT/bench-fused.log"
echo "bench: exit $?"; grep -v "^  " "$OUT/bench-fused.log" | tail -4
sort -k2 -n <(grep "^  gemm" "$OUT/bench-fused.log") | head -12
timeout 120 python3 bench/torch_baselines.py --only gemm:4096x4096x4096 --only gemm_bias_gelu:4096 > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
python3 bench/report.py --ours "$OUT/ours-fused.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -A4 "GEMM + bias + GELU" "$OUT/report.md"
grep -A4 "## FP32 GEMM" "$OUT/report.md"
rm -f "$OUT/configure.log" "$OUT/build.log"
echo "all done at $(( $(date +%s) - t0 )) s"
