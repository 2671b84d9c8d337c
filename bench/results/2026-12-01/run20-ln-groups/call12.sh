#!/usr/bin/env bash
# Run 20, call 12 (session 18; device tool, carry [".devcarry"]): the final code. Long softmax rows
# default to the row groups too; the GPU row tests share one helper (expectRowScheduleVerified).
# Every row GPU test and the sampled row schedules; every softmax and layer-norm shape's default;
# PyTorch and the copy in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
( timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*RowGroups*:*RowBulk*:*RowCombine*:*RowPrefetch*:*RowDecision*' \
    > "$OUT/tests-rows.log" 2>&1; echo "row decision tests: exit $?" ) &
( timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*softmax*:*layernorm*-*RowBulk*:*RowPrefetch*:*RowGroups*' \
    > "$OUT/tests-sampled.log" 2>&1; echo "sampled row tests: exit $?" ) &
wait
grep -hE "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure" "$OUT"/tests-*.log | head -24
grep -h -A8 "Failure" "$OUT"/tests-*.log | head -30
echo "tests done in $((SECONDS - t0)) s"
n=0
for f in "--only softmax --only layernorm --max-candidates 1"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 200 $cli bench --verbose --out "$OUT/ours-$n.json" $f > /dev/null 2> "$OUT/bench-$n.log"
    echo "bench $n: exit $?"; grep -v "^  " "$OUT/bench-$n.log" | head -8
    grep "^  " "$OUT/bench-$n.log" | sed -e 's/ \[row_reduction\]//; s/ vector=4 cache=registers//; s/ bulk_store=off reduce=shuffle//; s/ exp=precise min_blocks=1 erf=library//; s/ row_steps=1 grid=resident//' | sort -k2 -n | head -12
done
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax --only layernorm > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
python3 - "$OUT/ours.json" "$OUT"/ours-1.json <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[2:]]
merged = docs[0]
for d in docs[1:]:
    merged["cases"] = merged.get("cases", []) + d.get("cases", [])
json.dump(merged, open(sys.argv[1], "w"), indent=1)
PY
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "copy bandwidth|^\| [0-9]+x[0-9]+ " "$OUT/report.md"
cat "$OUT"/tests-*.log | gzip -9 > "$OUT/tests.log.gz"; rm -f "$OUT"/tests-*.log "$OUT/build.log" "$OUT"/ours-1.json
echo "call done in $((SECONDS - t0)) s"
