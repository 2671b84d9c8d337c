#!/usr/bin/env bash
# Run 17, call 2: Nsight Compute on the two variants of call 1 at 4096^3 (one launch each, clocks
# left alone): where the SS twin's time goes.
# Issue 34: variants/rs.cu (generated) and the twins mk.py writes from it are not kept; first, from the
# repository root: V=bench/results/2026-12-01/run17-wgmma-ss/variants; git show 1c86eca:$V/rs.cu > $V/rs.cu;
#   python3 $V/mk.py $V/ss.cu; python3 $V/mk.py $V/ssf.cu 4 fast
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
V=bench/results/2026-12-01/run17-wgmma-ss/variants
for v in ${VARIANTS:-rs ss}; do
  python3 - $V/$v-4096x4096x4096.plan.json /tmp/ncu-$v.plan.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["source"] = sys.argv[1].rsplit("/", 1)[0] + "/" + d["source"]
d["measure"] = {"verify": False, "time": True, "warmup": 0, "repeats": 1, "flushL2": False, "profile": False}
json.dump(d, open(sys.argv[2], "w"))
PY
  sed -i "s#\"source\": \"#\"source\": \"$PWD/#" /tmp/ncu-$v.plan.json
  ncu --clock-control none --target-processes all -k "regex:^C\$" --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section InstructionStats \
      $cli run --no-cache /tmp/ncu-$v.plan.json > $OUT/ncu-$v.txt 2>&1
  echo "== ncu $v"; grep -E "Duration|Issue Slots|No Eligible|Warp Cycles Per Issued|Executed Instructions  |Shared|L1/TEX|Pipe|Stall|Bank" $OUT/ncu-$v.txt | head -40
done
rm -f $OUT/build.log
