#!/usr/bin/env bash
# Run 19, call 10 (session 17; device tool, carry [".devcarry"]): after the fix of call 9's early
# cluster arrive (combine=online on a resident grid arrived at its first step, not its last). The
# row GPU tests again; the generated resident kernels (generated_variants_call10.cuh, made here by
# bench/tools/generated_variants.sh from this commit) timed in the prototype harness beside the
# hand-written kernels; the bench over softmax 256 x 262144 (the default, and the resident sweep
# of clusters of 16 x 128), PyTorch and the copy in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
R=bench/results/2026-12-01/run19-resident-bulk
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
( timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*RowBulk*:*RowCombine*' \
    > "$OUT/tests-rows.log" 2>&1; echo "row decision tests: exit $?" ) &
( nvcc -O3 -std=c++17 -arch=sm_90 -DGENERATED_VARIANTS="\"$PWD/$R/generated_variants_call10.cuh\"" -o /tmp/lrl2 \
    bench/tools/long_row_l2.cu > "$OUT/nvcc.log" 2>&1; echo "harness build: exit $?" ) &
wait
grep -hE "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure" "$OUT"/tests-rows.log | head -20
/tmp/lrl2 gen 2>&1 | tee "$OUT/harness.txt"
n=0
for f in "--only softmax:256 --max-candidates 1" \
         "--only softmax:256 --where grid=resident --where threads_per_row=128 --where cluster=16"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 200 $cli bench --verbose --out "$OUT/ours-$n.json" $f > /dev/null 2> "$OUT/bench-$n.log"
    echo "bench $n ($f): exit $?"; grep -v "^  " "$OUT/bench-$n.log" | head -4
done
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax:256 > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
python3 bench/report.py --ours "$OUT/ours-1.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "copy bandwidth|^\| [0-9]+x[0-9]+ " "$OUT/report.md"
gzip -9 "$OUT/tests-rows.log"; rm -f "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
