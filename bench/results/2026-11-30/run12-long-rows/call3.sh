#!/usr/bin/env bash
# Run 12, call 3 (device tool, carry [".devcarry"]): after call 2 showed the generated online/fast
# kernels 12-20% slower than the hand-written ones: exp=fast now ex2.approx.ftz (not exp2f), one
# reciprocal per row hoisted out of the element loop, and no per-item tests that cannot fail
# (exact spans, one row per block). The prototype harness times the new generated variants beside
# its own kernels; then the row GPU tests (the new decisions, shared-memory prefetch, the sampled
# softmax and layer-norm schedules), and the bench over the long rows with PyTorch and the copy.
# Issue 34: generated_variants_call3.cuh is not kept; first, from the repository root:
#   git show 89706d4:bench/results/2026-11-30/run12-long-rows/generated_variants_call3.cuh > bench/results/2026-11-30/run12-long-rows/generated_variants_call3.cuh
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
mkdir -p "$OUT"
D=bench/results/2026-11-30/run12-long-rows
nvcc -O3 -std=c++17 -arch=sm_90 -DGENERATED_VARIANTS="\"../../$D/generated_variants_call3.cuh\"" \
    -o /tmp/lrp bench/tools/long_row_proto.cu 2> /dev/null && /tmp/lrp > "$OUT/proto.txt" 2>&1
echo "prototype harness: exit $?"; grep -E "^copy|^reg c16 t128 mb3 online fast warp0 x256|^gen_|^zeros|WRONG" "$OUT/proto.txt"
BUILD_TARGETS="stitchcuda stitchcuda-worker test_codegen_gpu" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
timeout 240 ./build-gpu/tests/codegen/test_codegen_gpu \
    --gtest_filter='*RowCombine*:*RowPrefetch*:*softmax*:*layernorm*' > "$OUT/tests.log" 2>&1
echo "row GPU tests: exit $?"; grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure" "$OUT/tests.log" | head -20
echo "tests done at $((SECONDS - t0)) s"
cli=./build-gpu/app/cli/stitchcuda
n=0
for f in "--only softmax:256 --where threads_per_row=128 --where cluster=16 --where row_steps=1" \
         "--only layernorm:256 --where threads_per_row=128 --where cluster=16 --where row_steps=1" \
         "--only layernorm:256 --where threads_per_row=512 --where cluster=8"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 150 $cli bench --verbose --out "$OUT/ours-$n.json" $f > /dev/null 2> "/tmp/bench-$n.log"
    echo "bench $n ($f): exit $?"
    grep -E "ms" "/tmp/bench-$n.log" | sort -k2 -n | head -6
    echo "  at $((SECONDS - t0)) s"
done
timeout 120 python3 bench/torch_baselines.py --only copy --only softmax:256 --only layernorm:256 \
    > "$OUT/baselines.json" 2> /tmp/baselines.log
echo "baselines exit $?"
for i in 1 2 3; do
    python3 bench/report.py --ours "$OUT/ours-$i.json" --baselines "$OUT/baselines.json" 2>&1 | grep -E "^\| 256x" | head -2
done
cat /tmp/bench-[1-3].log > "$OUT/bench.log"
rm -f "$OUT/build.log"
echo "all done at $((SECONDS - t0)) s"
