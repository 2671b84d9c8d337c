#!/usr/bin/env bash
cd "$(dirname "$0")/.."
prefix=/tmp/stitch-prefix
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
[ -x build-gpu/app/cli/stitchcuda ] || bash exp/run.sh > /dev/null
S=./build-gpu/app/cli/stitchcuda
echo "== v4 (v2 without the consumers' proxy fence)"; $S run exp/v4/matmul.plan.json --no-cache 2>&1 | grep -E "median|verif"
for v in v0 v2; do
  echo "== ncu $v"
  timeout 200 ncu --clock-control none --target-processes all -k regex:^C$ -c 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
     $S run exp/$v/prof.plan.json --no-cache 2>&1 | grep -vE "^==PROF==|^\s*$|----" | grep -E "Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|Active Warps|Theoretical|No Eligible|Registers|Pipe" | head -40
done
