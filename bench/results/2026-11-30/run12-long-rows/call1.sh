#!/usr/bin/env bash
# Run 12, call 1 (device tool, carry [".devcarry"]): the long-row decisions of session 10
# (combine=online, exp=fast, min_blocks for row kernels; bench/tools/long_row_proto.cu measured
# the design first): their GPU tests and the shared-memory prefetch ones, then softmax and layer
# norm over 256 rows of 262144 for the clusters of 16 x 128, 8 x 512 and the 256-thread blocks,
# with the copy bandwidth and PyTorch in the same call.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 240 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*RowCombine*:*RowPrefetch*' > "$OUT/tests.log" 2>&1
echo "row GPU tests: exit $?"; grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure|rel " "$OUT/tests.log" | head -30
echo "tests done at $((SECONDS - t0)) s"
cli=./build-gpu/app/cli/stitchcuda
n=0
for f in "--only softmax:256 --where threads_per_row=128 --where cluster=16" \
         "--only softmax:256 --where threads_per_row=512 --where cluster=8" \
         "--only softmax:256 --where threads_per_row=256" \
         "--only layernorm:256 --where threads_per_row=128 --where cluster=16" \
         "--only layernorm:256 --where threads_per_row=512 --where cluster=8"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 200 $cli bench --verbose --out "$OUT/ours-$n.json" $f > /dev/null 2> "/tmp/bench-$n.log"
    echo "bench $n ($f): exit $?"
    grep -E "ms" "/tmp/bench-$n.log" | sort -k2 -n | head -8
    echo "  at $((SECONDS - t0)) s"
done
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax:256 --only layernorm:256 \
    > "$OUT/baselines.json" 2> /tmp/baselines.log
echo "baselines exit $?"; tail -5 /tmp/baselines.log
for i in 1 2 3 4 5; do
    python3 bench/report.py --ours "$OUT/ours-$i.json" --baselines "$OUT/baselines.json" 2>&1 | grep -E "softmax|layer|copy" | head -6
done
cat /tmp/bench-[1-5].log > "$OUT/bench.log"
rm -f "$OUT/build.log"
echo "all done at $((SECONDS - t0)) s"
