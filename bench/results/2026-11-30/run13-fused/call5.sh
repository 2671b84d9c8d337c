#!/usr/bin/env bash
# Run 13, call 5 (device tool, carry [".devcarry"]): the fused GEMM + bias + GELU 4096^3 kernel
# (64x128, 8x8, stream-K, 3 stages, 3 blocks per SM) measured 2.81-2.82 ms in the sweeps while
# the plain GEMM with the same schedule measured 2.93 (run 11), though their k-loops are the same
# source and both compile to 167 registers. Time the plain one (`gemm4096_sk64`) interleaved with
# the fused one and the plain sweep's winner (256x128) on random inputs, and compare the SASS.
# Issue 34: the record keeps variants4096/'s programs as diffs (the twins) and a commit (the generated
# *_base.cu and gemm4096_sk64.cu: git show 9594308:bench/results/2026-11-30/run13-fused/variants4096/NAME.cu).
# First, from the repository root: bench/tools/restore_twins.sh bench/results/2026-11-30/run13-fused/variants4096
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
V=bench/results/2026-11-30/run13-fused/variants4096
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
for round in 1 2 3; do
    for v in gemm4096_sk64 fused4096_base gemm4096_base; do
        $cli run --no-cache --json $V/$v.plan.json > /tmp/t.json 2>&1; echo "round $round $v: $(median /tmp/t.json)"
    done
done
for v in gemm4096_sk64 fused4096_base; do
    nvcc -cubin -arch=sm_90 -O3 -o /tmp/$v.cubin $V/$v.cu 2> /dev/null && cuobjdump -sass /tmp/$v.cubin > "$OUT/sass-$v.txt"
    grep -E '^\s+/\*[0-9a-f]{4}\*/' "$OUT/sass-$v.txt" | sed -E 's#^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?##; s#[ ;].*##' \
        | sort | uniq -c | sort -rn | head -12 | tr '\n' ' '; echo " <- $v (whole kernel)"
done
gzip -9 "$OUT"/sass-*.txt
rm -f "$OUT/build.log"
