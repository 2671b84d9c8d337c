#!/usr/bin/env bash
# Run 21, call 5 (session 19; device tool, carry [".devcarry"]): the code to land. The row kernels
# test `active_` once around each element loop (call 4: 19% fewer executed instructions in the long
# layer norm); the runner flushes L2 by reads and warms up for 20 ms after a settle; the baselines
# flush by reads. Every row GPU test and the sampled row schedules, the runner GPU tests, then every
# softmax and layer-norm shape's default beside PyTorch and the copy.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu test_runner_gpu" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
( timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*RowGroups*:*RowBulk*:*RowCombine*:*RowPrefetch*:*RowDecision*' \
    > "$OUT/tests-rows.log" 2>&1; echo "row decision tests: exit $?" ) &
( timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*softmax*:*layernorm*-*RowBulk*:*RowPrefetch*:*RowGroups*' \
    > "$OUT/tests-sampled.log" 2>&1; echo "sampled row tests: exit $?" ) &
wait
( cd build-gpu && timeout 240 ./tests/runner/test_runner_gpu > "$OUT/tests-runner.log" 2>&1; echo "runner GPU tests: exit $?" )
grep -hE "^\[ +(FAILED|PASSED|SKIPPED) +\]|Failure|median without" "$OUT"/tests-*.log | head -24
grep -h -A8 "Failure" "$OUT"/tests-*.log | head -30
echo "tests done in $((SECONDS - t0)) s"
for n in 1 2; do
    timeout 200 $cli bench --verbose --out "$OUT/ours-$n.json" --only softmax --only layernorm --max-candidates 1 > /dev/null 2> "$OUT/bench-$n.log"
    echo "bench $n: exit $?"; grep -v "^  " "$OUT/bench-$n.log" | grep -v "^$" | cut -c1-75 | head -8
done
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax --only layernorm > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
for n in 1 2; do
    python3 bench/report.py --ours "$OUT/ours-$n.json" --baselines "$OUT/baselines.json" > "$OUT/report-$n.md" 2>&1
    grep -E "copy bandwidth|^\| [0-9]+x[0-9]+ " "$OUT/report-$n.md" | sed -e 's/ \[row_reduction\].*erf=library |/ |/'
done
cat "$OUT"/tests-*.log | gzip -9 > "$OUT/tests.log.gz"; rm -f "$OUT"/tests-*.log "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
