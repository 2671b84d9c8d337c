#!/usr/bin/env bash
# Run 19, call 9 (session 17; device tool, carry [".devcarry"]): the generator's grid=resident and
# bulk_store=on. The row GPU tests (the new CodegenGpuRowBulk, the row-decision, prefetch and sampled
# row-schedule tests, two processes), then the bench over softmax and layer norm at 256 x 262144:
# the new default, and the long-row sweep on a resident grid (bulk_store on and off; every
# candidate timed, the fastest verified), the rows of the table's other shapes' defaults, with
# PyTorch and the 1 GiB copy in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
( timeout 420 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*RowBulk*:*RowCombine*:*RowPrefetch*' \
    > "$OUT/tests-rows.log" 2>&1; echo "row decision tests: exit $?" ) &
( timeout 420 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*softmax*:*layernorm*-*RowBulk*:*RowPrefetch*' \
    > "$OUT/tests-sampled.log" 2>&1; echo "sampled row tests: exit $?" ) &
wait
grep -hE "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure" "$OUT"/tests-*.log | head -30
grep -h -A8 "Failure" "$OUT"/tests-*.log | head -40
echo "tests done in $((SECONDS - t0)) s"
n=0
for f in "--only softmax:256 --max-candidates 1" \
         "--only softmax:256 --where grid=resident" \
         "--only layernorm:256 --max-candidates 1" \
         "--only layernorm:256 --where grid=resident"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 240 $cli bench --verbose --out "$OUT/ours-$n.json" $f > /dev/null 2> "$OUT/bench-$n.log"
    echo "bench $n ($f): exit $?"; grep -v "^  " "$OUT/bench-$n.log" | head -4
    grep "^  " "$OUT/bench-$n.log" | sort -t'|' -k1 | head -0
done
python3 - "$OUT/ours.json" "$OUT"/ours-[1-4].json <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[2:]]
merged = docs[0]
for d in docs[1:]:
    merged["cases"] = merged.get("cases", []) + d.get("cases", [])
json.dump(merged, open(sys.argv[1], "w"), indent=1)
PY
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax:256 --only layernorm:256 > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "copy bandwidth|^\| [0-9]+x[0-9]+ " "$OUT/report.md"
cat "$OUT"/tests-*.log | gzip -9 > "$OUT/tests.log.gz"; rm -f "$OUT"/tests-*.log "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
