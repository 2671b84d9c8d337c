#!/usr/bin/env bash
# Run 24, call 4 (session 22; device tool, carry [".devcarry"]): issue 5's dimension table afresh on
# the build of 8472af8 (as calls 2 and 3): bench --metrics over the first schedules of FP32 GEMM
# 4096^3 (40), softmax and layer norm 65536x512 (60 each) and the 5-op chain (36), then calibrate
# --summary (the model as run) and --dimensions (each static score beside its CUPTI counterpart).
# The same commands as run 22 call 2.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
B=./build-gpu/app/cli/stitchcuda
timeout 200 $B bench --verbose --out "$OUT/gemm.json" --calibration "$OUT/gemm.csv" --metrics --max-candidates 40 \
    --only gemm:4096x4096x4096 > /dev/null 2> "$OUT/gemm.log"
echo "gemm bench exit $? at $((SECONDS - t0)) s"
timeout 330 $B bench --verbose --out "$OUT/rows.json" --calibration "$OUT/rows.csv" --metrics --max-candidates 60 \
    --only softmax:65536 --only layernorm:65536x512 --only chain5 > /dev/null 2> "$OUT/rows.log"
echo "rows bench exit $? at $((SECONDS - t0)) s"
grep -hv "^  " "$OUT/gemm.log" "$OUT/rows.log" | grep -v "^bench on\|^hardware"
for f in gemm rows; do $B calibrate --summary "$OUT/$f.csv"; done
python3 - "$OUT/gemm.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"SASS facts in the bench's GEMM rows: {sum(r['sass_loop_instructions'] not in ('', '0') for r in rows)} of {len(rows)}")
PY
head -1 "$OUT/gemm.dimensions.csv" > "$OUT/calibration.dimensions.csv"
tail -q -n +2 "$OUT/gemm.dimensions.csv" "$OUT/rows.dimensions.csv" >> "$OUT/calibration.dimensions.csv"
$B calibrate --dimensions "$OUT/calibration.dimensions.csv" | tee "$OUT/dimensions.md" | head -16
rm -f "$OUT/gemm.dimensions.csv" "$OUT/rows.dimensions.csv" "$OUT/build.log"
gzip -9 "$OUT/gemm.log" "$OUT/rows.log" "$OUT/calibration.dimensions.csv"
echo "call done in $((SECONDS - t0)) s"
