#!/usr/bin/env bash
# Run 24, call 7 (session 22; device tool, carry [".devcarry"]): call 6 again on the build of 27e8dce, whose
# static streams count stream-K's partial sums (15d165e): bench --metrics over the first 40 candidates
# of GEMM 1024^3 (the bundled example's shape: 64 tiles of 128x128, stream-K's 264 blocks), then
# calibrate --dimensions (each static score beside its CUPTI counterpart) and --summary.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
B=./build-gpu/app/cli/stitchcuda
timeout 300 $B bench --verbose --out "$OUT/gemm.json" --calibration "$OUT/gemm.csv" --metrics --max-candidates 40 \
    --shape gemm:1024x1024x1024 > /dev/null 2> "$OUT/gemm.log"
echo "bench exit $? at $((SECONDS - t0)) s"
grep -v "^  " "$OUT/gemm.log" | grep -v "^bench on\|^hardware" | tail -3
$B calibrate --summary "$OUT/gemm.csv"
$B calibrate --dimensions "$OUT/gemm.dimensions.csv" | tee "$OUT/dimensions.md" | head -14
python3 - "$OUT/gemm.dimensions.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['dimension'] == 'occupancy']
print("candidate static measured (occupancy; the first 12)")
for r in rows[:12]:
    print(r['candidate'], r['static_value'][:6], r['measured_value'][:6], r['static_score'], r['measured_score'])
PY
gzip -9 "$OUT/gemm.log" "$OUT/gemm.dimensions.csv"
rm -f "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
