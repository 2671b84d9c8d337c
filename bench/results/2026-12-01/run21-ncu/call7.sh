#!/usr/bin/env bash
# Run 21, call 7 (session 19; device tool, carry [".devcarry"]): the rest of issue 4's GEMM targets with
# the final code and timing: the FP32 sweep shapes' best schedules (run 14) and the TF32 8192^3
# default, beside cuBLAS in the same call.
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
SK="--where block_m=128 --where block_n=128 --where thread_m=16 --where thread_n=8 --where stream_k=on --where block_k=8 --where stages=4 --where min_blocks=2"
run g4097 --only gemm:4097x4097x4097 $SK
run g128 --only gemm:128x8192x8192 $SK --where store=scalar
run g1000 --only gemm:1000x3000x700 --where block_m=64 --where block_n=128 --where thread_m=8 --where thread_n=8 \
    --where block_k=16 --where stages=3 --where copy=async --where store=copy
run tf32 --only gemm_tf32:8192 --max-candidates 1
timeout 300 python3 bench/torch_baselines.py --only gemm: --only gemm_tf32:8192 > "$OUT/baselines.json" 2> "$OUT/baselines.log"
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
grep -E "^\| [0-9]+x[0-9]+" "$OUT/report.md" | sed -e 's/ \[gemm\][^|]*|/ |/'
echo "call done in $((SECONDS - t0)) s"
