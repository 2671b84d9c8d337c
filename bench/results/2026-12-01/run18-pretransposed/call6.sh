#!/usr/bin/env bash
# Run 18, calls 6 and 7 (session 16; device tool, carry [".devcarry"]; SHAPE=8192 for call 7): the whole TF32 sweep as
# `stitchcuda bench` runs it by default (122 candidates: mma.sync, wgmma with and without the
# producer and transpose_b, stream-K), its verified winner, and cuBLAS TF32 in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
timeout 290 $cli bench --verbose --only gemm_tf32:${SHAPE:-4096} --out "$OUT/ours.json" > /dev/null 2> "$OUT/bench.log"
echo "bench exit $?"
grep -E "^ " "$OUT/bench.log" | sort -k2 -n | head -8 | sed -e 's/ split_k=1//; s/ vector=4//; s/ erf=library//'
grep -E "^gemm" "$OUT/bench.log"
python3 bench/torch_baselines.py --only gemm_tf32:${SHAPE:-4096} --output "$OUT/baselines.json" > /dev/null 2> "$OUT/baselines.err"
python3 -c "
import json
for r in json.load(open('$OUT/baselines.json'))['results']: print(r['case'], r['shape'], r['impl'], r['median_ms'], r.get('error'))
" 2>&1 | head -4
gzip -9 "$OUT/bench.log"
echo "call done in $((SECONDS - t0)) s"
rm -f "$OUT/build.log"
