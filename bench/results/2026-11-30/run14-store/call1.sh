#!/usr/bin/env bash
# Run 14, call 1 (device tool, carry [".devcarry"]): run 13 found the plain FP32 GEMM 4096^3
# (64x128 stream-K) 3.7% slower than the fused GEMM + bias + GELU with the same k-loop, with 126
# of its 1024 FFMAs moving their accumulator. Hypothesis: the plain epilogue stores the
# accumulators themselves with STG.E.128, which needs each 4 of them in an aligned register quad;
# ptxas meets that by moving accumulators inside the k-loop. The fused epilogue stores fresh GELU
# values. Variants (variants/): *_s1 four 32-bit stores, *_s2 two 64-bit stores, *_fadd the float4
# store of acc + 0.0f. Times interleaved with the run-13 kernels (3 rounds), FFMA bank statistics,
# and cuBLAS 4096^3 in the same call.
# Issue 34: this record's variants/ and run 13's variants4096/ keep their programs as diffs (the
# twins) and a commit (run 13's generated ones: git show 9594308:bench/results/2026-11-30/run13-fused/variants4096/NAME.cu).
# First, from the repository root (run 13's folder too: this call also times its fused4096_base.cu):
#   bench/tools/restore_twins.sh bench/results/2026-11-30/run14-store/variants bench/results/2026-11-30/run13-fused/variants4096
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
R13=bench/results/2026-11-30/run13-fused/variants4096
V=bench/results/2026-11-30/run14-store/variants
median() { python3 -c "
import json, sys
def find(d, k):
    if isinstance(d, dict):
        if k in d: return d[k]
        for v in d.values():
            r = find(v, k)
            if r is not None: return r
    return None
t = find(json.load(open(sys.argv[1])), 'timing') or {}
print('median %.4f min %.4f max %.4f' % (t['medianMs'], t['minMs'], t['maxMs']))" "$1" 2>&1 | tail -1; }
plans="$R13/gemm4096_sk64 $V/gemm4096_sk64_s1 $V/gemm4096_sk64_s2 $V/gemm4096_sk64_fadd $R13/fused4096_base $R13/gemm4096_base $V/gemm4096_base_s1 $V/gemm4096_base_fadd"
for round in 1 2 3; do
    for p in $plans; do
        $cli run --no-cache --json $p.plan.json > /tmp/t.json 2>&1; echo "round $round $(basename $p): $(median /tmp/t.json)"
    done
done
for p in $plans; do
    v=$(basename $p)
    nvcc -cubin -arch=sm_90 -O3 -o /tmp/$v.cubin $p.cu 2> /dev/null && cuobjdump -sass /tmp/$v.cubin > /tmp/$v.sass
    python3 bench/tools/sass_ffma_banks.py /tmp/$v.sass | sed 's#^/tmp/##'
    cuobjdump -res-usage /tmp/$v.cubin 2>/dev/null | grep -o 'REG:[0-9]*' | head -1
done
python3 bench/torch_baselines.py --only gemm:4096x4096x4096:cublas 2>&1 >/dev/null | grep -i "median\|cublas" | tail -3
rm -f "$OUT/build.log"
