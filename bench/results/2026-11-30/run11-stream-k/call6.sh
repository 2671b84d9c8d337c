#!/usr/bin/env bash
# Run 11, call 6 (device tool, carry [".devcarry"]): after the stream-K kernel runs its segments from
# the last back to the first (the shared blocks walk k together) and the last block to arrive at a
# shared tile sums it (no waits): the stream-K GPU tests on all 9 shapes, racecheck and memcheck on
# two small shapes, then stream_k on/off for the TF32 wgmma GEMMs (4096^3, 8192^3), the FP32 GEMM
# (256x128) and the fused one (64x128, 3 blocks per SM) at 4096^3, with cuBLAS in the same call.
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
rm -f "$OUT/configure.log" "$OUT/build.log"
echo "built in $(( $(date +%s) - t0 )) s"
t=./build-gpu/tests/codegen/test_codegen_gpu
big='StreamK*matmul_1000x3000x700:StreamK*matmul_4097x257x1031'
timeout 200 $t --gtest_filter="$big" > "$OUT/streamk-big.log" 2>&1 &
bigpid=$!
timeout 200 $t --gtest_filter="StreamK*-$big" > "$OUT/streamk-small.log" 2>&1
echo "stream-K GPU tests (7 shapes): exit $?"
small='StreamK*matmul_1024x1000x70:StreamK*gemm_bias_gelu_odd'
for tool in racecheck memcheck; do
    timeout 100 compute-sanitizer --tool $tool --target-processes all --error-exitcode 3 $t --gtest_filter="$small" > /tmp/san-$tool.log 2>&1
    echo "$tool: exit $?, $(grep -c '^\[       OK' /tmp/san-$tool.log) tests OK, $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' /tmp/san-$tool.log | sort | uniq -c | tr '\n' ' ')"
done
wait $bigpid
echo "stream-K GPU tests (2 large shapes): exit $?"
cat "$OUT/streamk-small.log" "$OUT/streamk-big.log" | grep -E "^\[ +(OK|FAILED) +\]|Failure" | head -20
echo "tests done at $(( $(date +%s) - t0 )) s"
cli=./build-gpu/app/cli/stitchcuda
timeout 120 $cli bench --verbose --out "$OUT/ours-tf32.json" --only gemm_tf32 --where block_m=256 --where block_n=128 \
    --where stages=4 --where block_k=32 --where swizzle=8 > /dev/null 2> "$OUT/bench-tf32.log"
echo "bench tf32: exit $?"; grep "gemm_tf32" "$OUT/bench-tf32.log" | grep "wgmma" | grep "copy=async"
timeout 150 $cli bench --verbose --out "$OUT/ours-fp32.json" --only gemm:4096x4096x4096 --only gemm_bias_gelu:4096 \
    --where block_k=16 --where stages=4 --where swizzle=8 --where copy=async --where thread_m=16 --where block_m=256 > /dev/null 2> "$OUT/bench-fp32.log"
echo "bench fp32: exit $?"; grep "gemm" "$OUT/bench-fp32.log" | grep "block_m=256"
timeout 120 $cli bench --verbose --out "$OUT/ours-fused.json" --only gemm_bias_gelu:4096 --where block_m=64 --where block_n=128 \
    --where min_blocks=3 --where block_k=16 --where stages=4 > /dev/null 2> "$OUT/bench-fused.log"
echo "bench fused: exit $?"; grep "gemm" "$OUT/bench-fused.log"
echo "benches done at $(( $(date +%s) - t0 )) s"
timeout 120 python3 bench/torch_baselines.py --only gemm_tf32 --only gemm:4096x4096x4096 --only gemm_bias_gelu:4096 \
    > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
for n in tf32 fp32 fused; do
    python3 bench/report.py --ours "$OUT/ours-$n.json" --baselines "$OUT/baselines.json" > "/tmp/report-$n.md" 2>&1
    grep "^| [0-9]" "/tmp/report-$n.md" | grep -v "| — |"
done
echo "all done at $(( $(date +%s) - t0 )) s"
