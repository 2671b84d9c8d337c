#!/usr/bin/env bash
# Runs on the GPU machine after scripts/device/gpu-check.sh has built build-gpu: one generated
# kernel under Nsight Compute (stall reasons, pipes, memory), for the questions the bench's
# CUPTI counters do not answer.
#   scripts/device/profile-kernel.sh FILE SCHEDULE.json "M=4096 N=4096 K=4096" KERNEL [SECTION...]
# FILE is a .te or liftable .cu program, KERNEL the generated kernel's name (a regex anchored at
# both ends). The plan runs once, unverified and without an L2 flush, so ncu sees one launch of
# the kernel after no warm-up; default sections: SpeedOfLight, WarpStateStats, SchedulerStats,
# ComputeWorkloadAnalysis, MemoryWorkloadAnalysis, Occupancy, LaunchStats, SourceCounters. The
# clocks are left as the card runs them (--clock-control none; the device METHOD.md).
# Output: $OUT/ncu-KERNEL.txt (and the generated program under $OUT/profile-KERNEL/).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/stitch-out}
file=$1 schedule=$2 sizes=$3 kernel=$4
shift 4
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(SpeedOfLight WarpStateStats SchedulerStats ComputeWorkloadAnalysis
    MemoryWorkloadAnalysis Occupancy LaunchStats SourceCounters)
dir="$OUT/profile-$kernel"
mkdir -p "$dir"
sizeArgs=()
for s in $sizes; do sizeArgs+=(--size "$s"); done
./build-gpu/app/cli/stitchcuda generate "$file" --schedule "$schedule" "${sizeArgs[@]}" --out "$dir"
plan=$(ls "$dir"/*.plan.json)
python3 - "$plan" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d.pop("reference", None)
d["measure"] = {"verify": False, "time": True, "warmup": 0, "repeats": 1, "flushL2": False, "profile": False}
json.dump(d, open(p, "w"), indent=2)
PY
sectionArgs=()
for s in "${sections[@]}"; do sectionArgs+=(--section "$s"); done
rc=0
ncu --clock-control none --target-processes all -k "regex:^${kernel}\$" --launch-count 1 "${sectionArgs[@]}" \
    ./build-gpu/app/cli/stitchcuda run --no-cache "$plan" > "$OUT/ncu-$kernel.txt" 2>&1 || rc=$?
if [ $rc -ne 0 ] || ! grep -q "Section:" "$OUT/ncu-$kernel.txt"; then
    echo "ncu did not profile $kernel (exit $rc):"; tail -20 "$OUT/ncu-$kernel.txt"; exit 1
fi
grep -E "Duration|Stall|Issue|Eligible|Throughput|Warp Cycles|Occupancy|Registers|Bank|Pipe|Executed Ipc" \
    "$OUT/ncu-$kernel.txt" | head -80
