#!/usr/bin/env bash
# Run 19, call 13 (session 17; device tool, carry [".devcarry"]): the final code. On a resident grid
# with one row per block the row tests are left out (steps_ stops at the last row: call 12 measured
# them as the difference between the generated and the hand-written kernels) and the wait for the
# copy engine's reads moves before the row's first barrier. The row GPU tests (the new
# CodegenGpuRowBulk, the row-decision, prefetch and sampled row-schedule tests); the softmax
# 256 x 262144 family of the default over grid, bulk_store and exp; layer norm's default; PyTorch
# and the copy in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
( timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*RowBulk*:*RowCombine*:*RowPrefetch*' \
    > "$OUT/tests-rows.log" 2>&1; echo "row decision tests: exit $?" ) &
( timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*softmax*:*layernorm*-*RowBulk*:*RowPrefetch*' \
    > "$OUT/tests-sampled.log" 2>&1; echo "sampled row tests: exit $?" ) &
wait
grep -hE "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure" "$OUT"/tests-*.log | head -20
grep -h -A8 "Failure" "$OUT"/tests-*.log | head -30
echo "tests done in $((SECONDS - t0)) s"
n=0
for f in "--only softmax:256 --where threads_per_row=128 --where cluster=16 --where min_blocks=3 --where combine=online" \
         "--only layernorm:256 --max-candidates 1"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 200 $cli bench --verbose --out "$OUT/ours-$n.json" $f > /dev/null 2> "$OUT/bench-$n.log"
    echo "bench $n: exit $?"; grep -v "^  " "$OUT/bench-$n.log" | head -4
    grep "^  " "$OUT/bench-$n.log" | sed -e 's/rowMax_Y \[row_reduction\] threads_per_row=128 rows_per_block=1 cluster=16 row_steps=1//; s/ vector=4 cache=registers prefetch=off//; s/ reduce=shuffle combine=online//; s/ min_blocks=3 erf=library//' | sort -k2 -n
done
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax:256 --only layernorm:256 > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
python3 - "$OUT/ours.json" "$OUT"/ours-[12].json <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[2:]]
merged = docs[0]
for d in docs[1:]:
    merged["cases"] = merged.get("cases", []) + d.get("cases", [])
json.dump(merged, open(sys.argv[1], "w"), indent=1)
PY
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "copy bandwidth|^\| [0-9]+x[0-9]+ " "$OUT/report.md"
cat "$OUT"/tests-*.log | gzip -9 > "$OUT/tests.log.gz"; rm -f "$OUT"/tests-*.log "$OUT/build.log" "$OUT"/ours-[12].json
echo "call done in $((SECONDS - t0)) s"
