#!/usr/bin/env bash
# Run 19, call 11 (session 17; device tool, carry [".devcarry"]): the code of call 10, unchanged. The
# softmax 256 x 262144 family of the default (clusters of 16 x 128, 3 blocks per SM, combine=online)
# over grid (rows, resident), bulk_store (off, on) and exp (precise, fast), twice in one call, so
# that the default is chosen from times of the same call; PyTorch and the copy beside them.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
F="--only softmax:256 --where threads_per_row=128 --where cluster=16 --where min_blocks=3 --where combine=online"
for n in 1 2; do
    # shellcheck disable=SC2086
    timeout 200 $cli bench --verbose --out "$OUT/ours-$n.json" $F > /dev/null 2> "$OUT/bench-$n.log"
    echo "bench $n: exit $?"; grep -v "^  " "$OUT/bench-$n.log" | head -4
    grep "^  " "$OUT/bench-$n.log" | sed -e 's/rowMax_Y \[row_reduction\] threads_per_row=128 rows_per_block=1 cluster=16 row_steps=1//; s/ vector=4 cache=registers prefetch=off//; s/ reduce=shuffle combine=online//; s/ min_blocks=3 erf=library//' | sort -k2 -n
done
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax:256 > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
python3 bench/report.py --ours "$OUT/ours-1.json" --baselines "$OUT/baselines.json" 2>&1 | grep -E "copy bandwidth|^\| [0-9]+x[0-9]+ "
rm -f "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
