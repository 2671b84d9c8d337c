#!/usr/bin/env bash
# Run 11, call 3 (device tool, carry [".devcarry"]): the FP32 GEMM, the fused GEMM + bias + GELU at
# 4096^3 and the fused one at 8192x8192x128, each over every 16-deep cp.async candidate (stream_k on
# and off), then cuBLAS / eager / torch.compile for the same cases, in one call.
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
ninja -C build-gpu -j16 stitchcuda stitchcuda-worker > "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -30; exit 1; }
rm -f "$OUT/configure.log" "$OUT/build.log"
echo "built in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,serial,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
timeout 330 ./build-gpu/app/cli/stitchcuda bench --verbose --out "$OUT/ours.json" --calibration "$OUT/calibration.csv" \
    --only gemm:4096x4096x4096 --only gemm_bias_gelu:4096 --only gemm_bias_gelu:8192x8192x128 \
    --where block_k=16 --where copy=async > /dev/null 2> "$OUT/bench.log"
echo "bench: exit $?"; grep -v "^  " "$OUT/bench.log" | tail -4
for c in "gemm:4096" "gemm_bias_gelu:4096" "gemm_bias_gelu:8192"; do
    echo "--- $c, fastest in the sweep"; grep "^  $c" "$OUT/bench.log" | sort -k2 -n | head -6
done
echo "bench done at $(( $(date +%s) - t0 )) s"
timeout 150 python3 bench/torch_baselines.py --only gemm:4096x4096x4096 --only gemm_bias_gelu:4096 --only gemm_bias_gelu:8192x8192x128 \
    > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -B2 -A6 "## FP32 GEMM\|## GEMM + bias" "$OUT/report.md" | grep "^|"
echo "all done at $(( $(date +%s) - t0 )) s"
