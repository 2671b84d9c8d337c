#!/usr/bin/env bash
# Run 21, call 4 (session 19; device tool, no carry): the generated layer norm against hand-edited
# copies (programs/): layernorm_hoist.cu tests `active_` once per row in the output loop and not at
# all in the sums (an inactive row's partial sums are never used), and takes the scale rsqrt once
# per row (call 3: the generated kernel executes 26.0 M instructions where the prototype executes
# 19.1 M, 1.1% slower); layernorm_bases.cu indexes every item from per-thread float4 bases.
# Each beside the prototype in mode lngen (flush by writes, then by reads, twice), then ncu counts.
# Issue 34: the record keeps programs/layernorm_hoist.cu and layernorm_bases.cu as diffs against the
# generated layernorm.cu, which it does not keep either (git show 6c4069f:bench/results/2026-12-01/run21-ncu/programs/layernorm.cu);
# first, from the repository root: bench/tools/restore_twins.sh bench/results/2026-12-01/run21-ncu/programs (writes them).
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
for v in layernorm layernorm_hoist layernorm_bases; do
    nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v -DGENERATED_PROGRAM="\"../results/2026-12-01/run21-ncu/programs/$v.cu\"" \
        -o /tmp/lrl2_$v bench/tools/long_row_l2.cu > /tmp/ptxas-$v.txt 2>&1 &
done
wait
for v in layernorm layernorm_hoist layernorm_bases; do
    echo "== $v: $(grep -A1 "mean_Y" /tmp/ptxas-$v.txt | grep -o "Used [0-9]* registers")"
    /tmp/lrl2_$v lngen 2>&1 | grep -E "x7 |generated|flush by|copy"
done 2>&1 | tee "$OUT/lngen.txt"
for v in layernorm layernorm_hoist; do
    timeout 100 ncu --clock-control none --metrics smsp__inst_executed.sum,gpu__time_duration.sum \
        --kernel-name mean_Y --launch-skip 5 --launch-count 3 /tmp/lrl2_$v lngen 2>&1 | grep -E "inst_executed|gpu__time" | sed "s/^/$v /"
done | tee "$OUT/ncu.txt"
