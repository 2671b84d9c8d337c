#!/usr/bin/env bash
# Run 21, call 10 (session 19; device tool, carry [".devcarry"]): the new default for large FP32 GEMMs
# (core/schedule/Heuristics.cpp largeGemmDefault: 128 x 128 tiles, stream-K, 4 stages, two blocks
# per SM, 32-bit stores; 16 x 8 per thread and BK 8, or 8 x 8 and BK 16 with an epilogue), each shape's
# default alone (--max-candidates 1: the default schedule, verified), beside cuBLAS.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
timeout 300 $cli bench --verbose --out "$OUT/ours.json" --max-candidates 1 --only gemm:4096x4096x4096 \
    --only gemm:4097 --only gemm:1000x3000x700 --only gemm:128x8192x8192 --only gemm_bias_gelu \
    > /dev/null 2> "$OUT/bench.log"
echo "bench: exit $? ($((SECONDS - t0)) s)"; grep -v "^  \|^$\|^bench on" "$OUT/bench.log" | cut -c1-100
timeout 240 python3 bench/torch_baselines.py --only gemm: --only gemm_bias_gelu > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $? ($((SECONDS - t0)) s)"
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "^\| [0-9]+x[0-9]+" "$OUT/report.md" | sed -e 's/ \[gemm\][^|]*|/ |/'
rm -f "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
