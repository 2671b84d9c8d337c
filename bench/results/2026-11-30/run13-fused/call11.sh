#!/usr/bin/env bash
# Run 13, call 11 (device tool, carry [".devcarry"]): a trial (reverted after it) of the bench sweep also trying the
# rasterization groups 1, 4 and 16 (with and without stream-K) for the 64x128 tiles at three
# blocks per SM, the fused GEMM's fastest family at 4096^3. Those candidates (BK 16) of the fused
# and the plain GEMM, then cuBLAS beside them.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=./build-gpu/app/cli/stitchcuda
timeout 240 $cli bench --verbose --out "$OUT/ours.json" --only gemm_bias_gelu:4096 --only gemm:4096x4096x4096 \
    --where block_m=64 --where block_n=128 --where min_blocks=3 --where block_k=16 > /dev/null 2> "$OUT/bench.log"
echo "bench: exit $?"; grep -v "^  " "$OUT/bench.log" | tail -3 | cut -c1-260
for c in "gemm_bias_gelu:4096" "gemm:4096"; do
    echo "--- $c, fastest in the sweep"; grep "^  $c" "$OUT/bench.log" | sort -k2 -n | head -5 | cut -c1-250
done
timeout 120 python3 bench/torch_baselines.py --only gemm:4096x4096x4096 --only gemm_bias_gelu:4096 > "$OUT/baselines.json" 2> /dev/null
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "^\| (gemm|gemm_bias_gelu) \|" "$OUT/report.md"
rm -f "$OUT/build.log"
