#!/usr/bin/env bash
# Run 13, call 4 (device tool, carry [".devcarry"]): the 2-way bank conflict of the A tile's
# transposed cp.async stores (16 lanes along k write rows 260 floats apart: 8 banks, twice each).
# variants4096/: the FP32 GEMM 4096^3 winner (256x128, 16x8, BK 16, 4 stages) and the fused
# GEMM + bias + GELU winner (64x128, 8x8, stream-K, 3 stages, 3 blocks per SM) as generated
# (`base`) and with 8 lanes along k and 4 along m per warp (`cf`: 32 distinct banks, and still 4
# sectors per global request). Each verified at 512^3, then timed at 4096^3 in three rounds.
# Issue 34: the record keeps variants4096/'s programs as diffs (the twins) and a commit (the generated
# *_base.cu and gemm4096_sk64.cu: git show 9594308:bench/results/2026-11-30/run13-fused/variants4096/NAME.cu).
# First, from the repository root: bench/tools/restore_twins.sh bench/results/2026-11-30/run13-fused/variants4096
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
V=bench/results/2026-11-30/run13-fused/variants4096
field() { python3 -c "
import json, sys
def find(d, k):
    if isinstance(d, dict):
        if k in d: return d[k]
        for v in d.values():
            r = find(v, k)
            if r is not None: return r
    return None
d = json.load(open(sys.argv[1])); t = find(d, 'timing') or {}; v = find(d, 'verification') or {}
print('verified', v.get('verified'), [round(o.get('relativeError', -1), 9) for o in v.get('outputs') or []]) if sys.argv[2] == 'v' else print('median %.4f min %.4f max %.4f' % (t['medianMs'], t['minMs'], t['maxMs']))
" "$1" "$2" 2>&1 | tail -1; }
for v in gemm4096_base gemm4096_cf fused4096_base fused4096_cf; do
    $cli run --no-cache --json $V/$v.small.plan.json > /tmp/s.json 2>&1; echo "$v 512^3: $(field /tmp/s.json v)"
done
for round in 1 2 3; do
    for v in gemm4096_base gemm4096_cf fused4096_base fused4096_cf; do
        $cli run --no-cache --json $V/$v.plan.json > /tmp/t.json 2>&1; echo "round $round $v: $(field /tmp/t.json t)"
    done
done
timeout 100 python3 bench/torch_baselines.py --only gemm:4096x4096x4096 --only gemm_bias_gelu:4096 > "$OUT/baselines.json" 2> /dev/null
python3 -c "
import json
for r in json.load(open('$OUT/baselines.json'))['results']: print(r['case'], r['shape'], r['impl'], round(r['median_ms'], 4))"
rm -f "$OUT/build.log"
