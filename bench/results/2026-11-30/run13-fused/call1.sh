#!/usr/bin/env bash
# Run 13, call 1 (device tool, carry [".devcarry"]): where the fused GEMM + bias + GELU at
# 8192x8192x128 spends its time. The sweep's best schedule (128x128, 8x8, BK 16, cp.async 2 stages,
# 2 blocks per SM) as generated, and hand-edited twins of it (variants/): the bias only, no
# epilogue math, the GELU by erfcf, the GELU by an erfc-based rational (Numerical Recipes' erfcc).
# Each variant is verified at 1024x1024x128 against the interpreter, then timed at 8192x8192x128
# (30 runs, L2 flushed); Nsight Compute on the generated one and the no-epilogue one; baselines.
# Issue 34: the record keeps variants/'s programs as diffs (the twins) and a commit (the generated
# fused_gelu.cu: git show 6e96cd5:bench/results/2026-11-30/run13-fused/variants/fused_gelu.cu).
# First, from the repository root: bench/tools/restore_twins.sh bench/results/2026-11-30/run13-fused/variants
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
V=bench/results/2026-11-30/run13-fused/variants
SKIP_NCU=${SKIP_NCU:-0}
for round in 1 2; do
  for v in gelu bias none nr erfc; do
    if [ $round = 1 ]; then
      $cli run --no-cache --json $V/fused_$v.small.plan.json > $OUT/small-$v.json 2>&1
      python3 - $OUT/small-$v.json $v <<'PY'
import json, sys
try:
    def find(d, k):
        if isinstance(d, dict):
            if k in d: return d[k]
            for v in d.values():
                r = find(v, k)
                if r is not None: return r
        return None
    ver = find(json.load(open(sys.argv[1])), "verification") or {}
    print(sys.argv[2], "small: verified", ver.get("verified"), json.dumps(ver.get("outputs"))[:300])
except Exception as e:
    print(sys.argv[2], "small: unreadable", e, open(sys.argv[1]).read()[:400])
PY
    fi
    $cli run --no-cache --json $V/fused_$v.plan.json > $OUT/time-$v-$round.json 2>&1
    python3 - $OUT/time-$v-$round.json $v $round <<'PY'
import json, sys
try:
    def find(d, k):
        if isinstance(d, dict):
            if k in d: return d[k]
            for v in d.values():
                r = find(v, k)
                if r is not None: return r
        return None
    t = find(json.load(open(sys.argv[1])), "timing") or {}
    print(sys.argv[2], "round", sys.argv[3], {k: t.get(k) for k in ("medianMs", "minMs", "maxMs")})
except Exception as e:
    print(sys.argv[2], "unreadable", e, open(sys.argv[1]).read()[:400])
PY
  done
done
rm -f $OUT/time-*.json $OUT/small-*.json
for v in gelu none; do
  [ "$SKIP_NCU" = 1 ] && break
  python3 - $V/fused_$v.plan.json /tmp/ncu-$v.plan.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["source"] = d["source"]
d["measure"] = {"verify": False, "time": True, "warmup": 0, "repeats": 1, "flushL2": False, "profile": False}
json.dump(d, open(sys.argv[2], "w"))
PY
  cp $V/fused_$v.cu /tmp/
  ncu --clock-control none --target-processes all -k "regex:^G_Y\$" --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
      --section InstructionStats --section Occupancy \
      $cli run --no-cache /tmp/ncu-$v.plan.json > $OUT/ncu-$v.txt 2>&1
  echo "== ncu $v"; grep -E "Duration|Issue Slots|Issued Ipc|No Eligible|Eligible Warps|Active Warps|Warp Cycles Per Issued|Executed Instructions  |FMA|Achieved Occ" $OUT/ncu-$v.txt | head -20
done
[ "$SKIP_NCU" = 1 ] || python3 bench/torch_baselines.py --only gemm_bias_gelu:8192x8192x128 --only gemm:8192x8192x128 --output $OUT/baselines.json > /dev/null 2> $OUT/baselines.err
[ "$SKIP_NCU" = 1 ] || python3 -c "
import json
for r in json.load(open('$OUT/baselines.json'))['results']: print(r['case'], r['shape'], r['impl'], r['median_ms'], r.get('error'))
" 2>&1 | head -20; tail -3 $OUT/baselines.err
rm -f $OUT/build.log
