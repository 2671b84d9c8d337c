#!/usr/bin/env bash
# Run 19, call 12 (session 17; device tool, carry [".devcarry"]): what separates the generated
# resident bulk-store softmax (call 10: 0.154 ms in the harness) from the hand-written one (0.148).
# generated_variants_call12.cuh holds, from this commit's generator with the always-true row tests
# left out on a resident grid: bulk_on, bulk_off, and two hand edits of bulk_on: _fold (one multiply
# per output, c_rowSum_ * rc0_0_ taken once per row) and _fold_wait (also the wait for the copy
# engine's reads moved before the row's first barrier, one __syncthreads less per row).
# Issue 34: generated_variants_call12.cuh is kept as a diff against call 10's header, which is not
# kept either (git show 8016dee:bench/results/2026-12-01/run19-resident-bulk/generated_variants_call10.cuh);
# first, from the repository root: bench/tools/restore_twins.sh bench/results/2026-12-01/run19-resident-bulk (writes both)
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
R=bench/results/2026-12-01/run19-resident-bulk
nvcc -O3 -std=c++17 -arch=sm_90 -DGENERATED_VARIANTS="\"$PWD/$R/generated_variants_call12.cuh\"" -o /tmp/lrl2 \
    bench/tools/long_row_l2.cu > "$OUT/nvcc.log" 2>&1; echo "harness build: exit $?"
/tmp/lrl2 gen 2>&1 | tee "$OUT/harness-1.txt"
/tmp/lrl2 gen 2>&1 | tee "$OUT/harness-2.txt" | grep gen_
