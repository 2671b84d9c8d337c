#!/usr/bin/env bash
# Run 11, call 1 (device tool, carry [".devcarry"]): builds the CLI, the worker and the codegen GPU
# tests; runs the stream-K GPU tests; benchmarks stream_k on/off at 4096^3 (FP32 GEMM, fused
# GEMM + bias + GELU, TF32 wgmma 4096^3 and 8192^3) beside cuBLAS in the same call.
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
cli=./build-gpu/app/cli/stitchcuda
timeout 240 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='StreamK*' > "$OUT/streamk-tests.log" 2>&1
echo "stream-K GPU tests: exit $?"; grep -E "^\[ +(OK|FAILED) +\]|PASSED|FAILED|Failure" "$OUT/streamk-tests.log" | head -30
echo "tests done at $(( $(date +%s) - t0 )) s"
bench() { # name, args...
    local name=$1; shift
    timeout 150 $cli bench --verbose --out "$OUT/ours-$name.json" --calibration "$OUT/calibration-$name.csv" "$@" > /dev/null 2> "$OUT/bench-$name.log"
    echo "bench $name: exit $?"; grep -v "^  " "$OUT/bench-$name.log" | tail -8
}
bench fp32 --only gemm:4096x4096x4096 --only gemm_bias_gelu:4096 --where block_m=256 --where block_n=128 --where stages=4
bench tf32 --only gemm_tf32 --where block_m=256 --where block_n=128 --where stages=4 --where block_k=32
bench fp32-sk --only gemm:4096x4096x4096 --where stream_k=on --where block_k=16
echo "benches done at $(( $(date +%s) - t0 )) s"
timeout 150 python3 bench/torch_baselines.py --only gemm:4096x4096x4096 --only gemm_tf32 --only gemm_bias_gelu:4096 > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"; tail -3 "$OUT/baselines.log"
for n in fp32 tf32; do python3 bench/report.py --ours "$OUT/ours-$n.json" --baselines "$OUT/baselines.json" > "$OUT/report-$n.md" 2>&1; cat "$OUT/report-$n.md"; done
echo "all done at $(( $(date +%s) - t0 )) s"
