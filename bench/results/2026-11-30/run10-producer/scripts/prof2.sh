#!/usr/bin/env bash
cd "$(dirname "$0")/.."
prefix=/tmp/stitch-prefix
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
[ -x build-gpu/app/cli/stitchcuda ] || bash exp/run.sh > /dev/null
S=./build-gpu/app/cli/stitchcuda
for v in v0 v2; do
  timeout 200 ncu --clock-control none --target-processes all -k regex:^C$ -c 1 \
     --metrics "regex:^smsp__average_warps_issue_stalled_[a-z_]*_per_issue_active\.ratio$,regex:^sm__pipe_tensor.*cycles_active\.avg\.pct_of_peak_sustained_active$,regex:^sm__inst_executed_pipe_[a-z_]*\.sum$,smsp__inst_executed.sum" \
     $S run exp/$v/prof.plan.json --no-cache > $OUT/ncu-$v.txt 2>&1
  echo "== $v"; grep -E "stalled|tensor" $OUT/ncu-$v.txt | awk '$NF+0 >= 0.1' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | head -30
done
