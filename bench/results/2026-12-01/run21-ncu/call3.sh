#!/usr/bin/env bash
# Run 21, call 3 (session 19; device tool, carry [".devcarry"]): the runner's L2 flush by reads
# (core/runner/L2Flush.*) and the baselines' (bench/torch_baselines.py: a sum instead of zero_()).
# The runner GPU tests (a new one: without the flush an 8 MiB add runs from L2, with it from DRAM);
# every softmax and layer-norm shape's default beside PyTorch and the copy, all flushed by reads;
# then the prototype's and the generated layer norm's warp stall reasons under ncu.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
R=bench/results/2026-12-01/run21-ncu
BUILD_TARGETS="stitchcuda stitchcuda-worker test_runner_gpu" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
t0=$SECONDS
nvcc -O3 -std=c++17 -arch=sm_90 -DGENERATED_PROGRAM="\"../results/2026-12-01/run21-ncu/programs/layernorm.cu\"" \
    -o /tmp/lrl2g bench/tools/long_row_l2.cu > /tmp/ptxas-ln.txt 2>&1 &
( cd build-gpu && timeout 240 ./tests/runner/test_runner_gpu > "$OUT/tests-runner.log" 2>&1; echo "runner GPU tests: exit $?" )
grep -hE "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure|median without" "$OUT/tests-runner.log" | head -40
timeout 200 $cli bench --verbose --out "$OUT/ours.json" --only softmax --only layernorm --max-candidates 1 > /dev/null 2> "$OUT/bench.log"
echo "bench: exit $?"; grep "^  " "$OUT/bench.log" | sed -e 's/ \[row_reduction\]//; s/ vector=4 cache=registers//; s/ bulk_store=off reduce=shuffle//; s/ exp=precise min_blocks=1 erf=library//; s/ row_steps=1 grid=resident//' | head -12
timeout 150 python3 bench/torch_baselines.py --only copy --only softmax --only layernorm > "$OUT/baselines.json" 2> "$OUT/baselines.log"
echo "baselines exit $?"
python3 bench/report.py --ours "$OUT/ours.json" --baselines "$OUT/baselines.json" > "$OUT/report.md" 2>&1
grep -E "copy bandwidth|^\| [0-9]+x[0-9]+ " "$OUT/report.md"
wait
STALLS="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
for what in "mean_Y 5 generated" "regex:lnGroups 40 prototype"; do
    set -- $what
    timeout 120 ncu --clock-control none --section SpeedOfLight --section SchedulerStats --section InstructionStats \
        --metrics "$STALLS,smsp__inst_executed.sum,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum" \
        --kernel-name "$1" --launch-skip "$2" --launch-count 1 /tmp/lrl2g lngen > "$OUT/ncu-ln-$3.txt" 2>&1
    echo "ncu $3: exit $? $(grep -E -m1 'Duration' "$OUT/ncu-ln-$3.txt") $(grep -m1 'Grid Size' "$OUT/ncu-ln-$3.txt")"
done
python3 - "$OUT/ncu-ln-generated.txt" "$OUT/ncu-ln-prototype.txt" <<'PY'
import re, sys
vals = []
for p in sys.argv[1:]:
    d = {}
    for line in open(p):
        parts = line.split()
        if len(parts) >= 2 and re.match(r"(smsp__average_warps_issue_stalled_|smsp__inst_executed|sm__cycles_active|dram__bytes)", parts[0]):
            name = parts[0].replace("smsp__average_warps_issue_stalled_", "stall ").replace("_per_issue_active.ratio", "")
            try:
                d[name + ("" if len(parts) == 2 else " [" + parts[1] + "]")] = float(parts[-1].replace(",", ""))
            except ValueError:
                pass
    vals.append(d)
keys = sorted(set(vals[0]) | set(vals[1]), key=lambda k: -max(vals[0].get(k, 0), vals[1].get(k, 0)))
print("%-34s %14s %14s" % ("", "generated", "prototype"))
for k in keys:
    print("%-34s %14.4g %14.4g" % (k, vals[0].get(k, 0), vals[1].get(k, 0)))
PY
gzip -9 "$OUT/tests-runner.log"; rm -f "$OUT/build.log"
echo "call done in $((SECONDS - t0)) s"
