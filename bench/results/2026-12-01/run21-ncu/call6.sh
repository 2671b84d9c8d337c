#!/usr/bin/env bash
# Run 21, call 6 (session 19; device tool, carry [".devcarry"]): issue 4's other targets again with
# the final code and the new timing (L2 flushed by reads, 20 ms warm-up after the settle): the best
# FP32 GEMM 4096^3 schedule (run 14), the fused GEMM + bias + GELU (4096^3 best schedule, K = 128
# and 64 short sweeps), the TF32 default, the 5-op chain default; cuBLAS, PyTorch and the copy in the
# same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
run() { # name, bench arguments
    local name=$1; shift
    timeout 240 $cli bench --verbose --out "$OUT/ours-$name.json" "$@" > /dev/null 2> "$OUT/bench-$name.log"
    echo "bench $name: exit $? ($((SECONDS - t0)) s)"; grep -v "^  \|^$\|^bench on" "$OUT/bench-$name.log" | cut -c1-90
}
run gemm --only gemm:4096x4096x4096 --where block_m=128 --where block_n=128 --where thread_m=16 --where thread_n=8 \
    --where stream_k=on --where block_k=8 --where stages=4 --where min_blocks=2 --where store=scalar
run fused4096 --only gemm_bias_gelu:4096 --where block_m=128 --where block_n=128 --where thread_m=8 --where thread_n=8 \
    --where stream_k=on --where block_k=16 --where stages=4 --where min_blocks=2 --where store=scalar
run fused128 --only gemm_bias_gelu:8192x8192x128 --where block_m=64 --where block_n=128 --where thread_m=8 \
    --where thread_n=8 --where block_k=16 --where stages=4 --where min_blocks=2 --where copy=async --where stream_k=off
run fused64 --only gemm_bias_gelu:8192x8192x64 --where block_m=128 --where block_n=128 --where stages=2 \
    --where copy=async --max-candidates 6
run tf32 --only gemm_tf32:4096 --max-candidates 1
run chain --only chain5 --max-candidates 1
timeout 300 python3 bench/torch_baselines.py --only gemm:4096x4096x4096 --only gemm_tf32:4096 --only gemm_bias_gelu \
    --only chain5 --only copy > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $? ($((SECONDS - t0)) s)"
python3 - "$OUT/ours.json" "$OUT"/ours-*.json <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[2:]]
merged = docs[0]
for d in docs[1:]:
    merged["cases"] = merged.get("cases", []) + d.get("cases", [])
json.dump(merged, open(sys.argv[1], "w"), indent=1)
PY
rm -f "$OUT"/ours-*.json "$OUT/build.log"
cat "$OUT"/bench-*.log > "$OUT/bench.log"; rm -f "$OUT"/bench-*.log
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "copy bandwidth|^\| [0-9]+x[0-9]+" "$OUT/report.md" | sed -e 's/ \[gemm\][^|]*|/ |/; s/ \[elementwise\][^|]*|/ |/'
echo "call done in $((SECONDS - t0)) s"
