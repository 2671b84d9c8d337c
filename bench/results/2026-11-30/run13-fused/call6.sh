#!/usr/bin/env bash
# Run 13, call 6 (device tool, carry [".devcarry"]): call 5 found the plain GEMM's stream-K 64x128
# kernel 3.7% slower than the fused one with the same k-loop source (2.927 against 2.821 ms), and
# its accumulating FFMAs sharing register banks about twice as often (ptxas's allocation). Does
# the order of the FMAs in the source move that? variants4096/*_jmajor (columns outer) and
# *_snake (rows, each other row's columns reversed) of the plain 64x128 stream-K kernel and the
# plain sweep's winner (256x128, 16x8): times interleaved (3 rounds) and FFMA bank statistics.
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
vs="gemm4096_sk64 gemm4096_sk64_jmajor gemm4096_sk64_snake fused4096_base gemm4096_base gemm4096_base_jmajor gemm4096_base_snake"
for round in 1 2 3; do
    for v in $vs; do
        $cli run --no-cache --json $V/$v.plan.json > /tmp/t.json 2>&1; echo "round $round $v: $(median /tmp/t.json)"
    done
done
for v in $vs; do
    nvcc -cubin -arch=sm_90 -O3 -o /tmp/$v.cubin $V/$v.cu 2> /dev/null && cuobjdump -sass /tmp/$v.cubin > /tmp/$v.sass
    python3 bench/tools/sass_ffma_banks.py /tmp/$v.sass | sed 's#^/tmp/##'
done
rm -f "$OUT/build.log"
