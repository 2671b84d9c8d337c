#!/usr/bin/env bash
# Run 12, call 4 (device tool, carry [".devcarry"]): the final code: the GPU tests whose helper
# changed (row decisions, shared-memory prefetch, stream-K on its small shapes, the sampled row
# schedules), the new default schedule of softmax over 256 x 262144 (combine=online, expf, clusters
# of 16 x 128, 3 blocks per SM), and the other row shapes of the table after the row kernels lost
# their impossible tests and got one reciprocal per row, with PyTorch and the copy in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
big='StreamK*matmul_1000x3000x700:StreamK*matmul_4097x257x1031:StreamK*4096*'
timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu \
    --gtest_filter="*RowCombine*:*RowPrefetch*:*softmax*:*layernorm*:*chain*:*Tf32*matmul_128:*Wgmma*matmul_128:StreamK*-$big" > "$OUT/tests.log" 2>&1
echo "GPU tests: exit $?"; grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure" "$OUT/tests.log" | head -30
echo "tests done at $((SECONDS - t0)) s"
cli=./build-gpu/app/cli/stitchcuda
n=0
for f in "--only softmax:256 --max-candidates 1" \
         "--only softmax:32768 --where threads_per_row=512 --where cache=registers --where cluster=1" \
         "--only softmax:65536 --where threads_per_row=32 --where cache=registers --where row_steps=1 --where min_blocks=1" \
         "--only layernorm:32768 --where threads_per_row=512 --where cache=registers --where cluster=1" \
         "--only layernorm:65536 --where threads_per_row=32 --where cache=registers --where row_steps=1 --where min_blocks=1"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 120 $cli bench --verbose --out "/tmp/ours-$n.json" $f > /dev/null 2> "/tmp/bench-$n.log"
    echo "bench $n ($f): exit $?"; grep -v "^  " "/tmp/bench-$n.log" | head -3
done
python3 - "$OUT/ours.json" /tmp/ours-[1-5].json <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[2:]]
merged = docs[0]
for d in docs[1:]:
    merged["cases"] = merged.get("cases", []) + d.get("cases", [])
json.dump(merged, open(sys.argv[1], "w"), indent=1)
PY
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax --only layernorm > "$OUT/baselines.json" 2> /tmp/baselines.log
echo "baselines exit $?"
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "copy bandwidth|^\| [0-9]+x[0-9]+ " "$OUT/report.md"
cat /tmp/bench-[1-5].log > "$OUT/bench.log"
rm -f "$OUT/build.log"
echo "all done at $((SECONDS - t0)) s"
