#!/usr/bin/env bash
# Run 12, call 6 (device tool, carry [".devcarry"]): Nsight Compute on the long-row kernels as they
# stand: softmax 256x262144 with its default schedule (clusters of 16 x 128, 3 blocks per SM,
# combine=online) and layer norm with the sweep's best (clusters of 8 x 512): where the last 15-30%
# to the copy bandwidth go (stall reasons, DRAM throughput, issue slots).
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=./build-gpu/app/cli/stitchcuda
$cli generate examples/softmax.te --size M=256 --size N=262144 --no-compile --out /tmp/sm > /dev/null
$cli generate examples/layernorm.te --size M=256 --size N=262144 --no-compile --out /tmp/ln > /dev/null
python3 - <<'PY'
import json
s = json.load(open("/tmp/ln/layernorm.schedule.json"))
s["groups"][0]["decisions"].update({"threads_per_row": 512, "cluster": 8, "row_steps": 1, "min_blocks": 1})
json.dump(s, open("/tmp/ln/best.schedule.json", "w"))
PY
sections="SpeedOfLight WarpStateStats SchedulerStats MemoryWorkloadAnalysis Occupancy LaunchStats"
# shellcheck disable=SC2086
bash scripts/device/profile-kernel.sh examples/softmax.te /tmp/sm/softmax_rows.schedule.json "M=256 N=262144" rowMax_Y $sections
echo "softmax profile: exit $?"
mv "$OUT/ncu-rowMax_Y.txt" "$OUT/ncu-softmax.txt" 2>/dev/null
# shellcheck disable=SC2086
bash scripts/device/profile-kernel.sh examples/layernorm.te /tmp/ln/best.schedule.json "M=256 N=262144" mean_Y $sections
echo "layer norm profile: exit $?"
mv "$OUT/ncu-mean_Y.txt" "$OUT/ncu-layernorm.txt" 2>/dev/null
rm -rf "$OUT"/profile-* "$OUT/build.log"
for f in softmax layernorm; do
    echo "== $f"; grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Issue Slots Busy|No Eligible|Registers Per|Warp Cycles Per Issued|Eligible Warps" "$OUT/ncu-$f.txt" | head -14
done
