#!/usr/bin/env bash
# Run 14, call 3 (device tool, carry [".devcarry"]): the `store` decision (vector | scalar | copy)
# and the bench's second round, now the fastest candidate of each of the 6 fastest tile families
# (fdf8c24). As call 2 without the GPU tests: the full FP32 GEMM 4096^3 sweep with the model's
# predictions (calibration) and the fused 4096^3 sweep (cp.async, as in run 13) beside cuBLAS.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
cli=./build-gpu/app/cli/stitchcuda
timeout 300 $cli bench --verbose --out "$OUT/ours-gemm.json" --calibration "$OUT/gemm4096.csv" \
    --only gemm:4096x4096x4096 > /dev/null 2> /tmp/bench-gemm.log
echo "bench gemm: exit $?"; grep -v "^  " /tmp/bench-gemm.log | tail -3
echo "--- fastest in the sweep"; grep "^  gemm" /tmp/bench-gemm.log | sort -k2 -n | head -8 | cut -c1-260
echo "--- second round"; grep "^  gemm.*store=\(scalar\|copy\)" /tmp/bench-gemm.log | cut -c1-260
$cli calibrate --summary "$OUT/gemm4096.csv"
echo "gemm done at $((SECONDS - t0)) s"
timeout 120 $cli bench --verbose --out "$OUT/ours-fused.json" --only gemm_bias_gelu:4096 \
    --where block_k=16 --where copy=async > /dev/null 2> /tmp/bench-fused.log
echo "bench fused: exit $?"; grep -v "^  " /tmp/bench-fused.log | tail -3
echo "--- fastest in the sweep"; grep "^  gemm" /tmp/bench-fused.log | sort -k2 -n | head -4 | cut -c1-260
echo "fused done at $((SECONDS - t0)) s"
timeout 100 python3 bench/torch_baselines.py --only gemm:4096x4096x4096:cublas --only gemm_bias_gelu:4096 \
    > "$OUT/baselines.json" 2> /tmp/baselines.log
echo "baselines: exit $?"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
ours = json.load(open(out + "/ours-gemm.json"))["cases"] + json.load(open(out + "/ours-fused.json"))["cases"]
base = json.load(open(out + "/baselines.json"))["results"]
for o in ours:
    for b in base:
        if b["case"] == o["case"] and b["shape"] == o["shape"] and b.get("median_ms"):
            print("%s:%s ours %.4f ms (%s) vs %s %.4f ms: %.4fx its speed" % (o["case"], o["shape"], o["median_ms"],
                  "verified" if o["verified"] else "WRONG", b["impl"], b["median_ms"], b["median_ms"] / o["median_ms"]))
PY
cp /tmp/bench-gemm.log /tmp/bench-fused.log "$OUT/" && gzip -9 "$OUT"/*.log
echo "all done at $((SECONDS - t0)) s"
rm -f "$OUT/build.log"
