#!/usr/bin/env bash
# Run 18, call 1 (session 16; device tool, carry [".devcarry"]): the TF32 warpgroup-MMA GEMM with
# both operands read by descriptor from B already transposed (variants/sst.cu: Bt[N][K], both tiles
# copied by 16-byte cp.async), alone (sst) and after a transpose kernel (sstx), the transpose alone
# (tr), against the kernel as generated (run 17's rs.cu). Each plan times 20 runs, L2 flushed; the
# small shapes verify against the CPU interpreter; the large shapes run twice, interleaved. cuBLAS
# TF32 in the same call. VARIANTS picks the variants; BASELINES=0 skips cuBLAS.
# Issue 34: variants/sst.cu and run 17's rs.cu and ssf.cu are not kept; first, from the repository root:
# V=bench/results/2026-12-01/run17-wgmma-ss/variants; git show 1c86eca:$V/rs.cu > $V/rs.cu; python3 $V/mk.py $V/ssf.cu 4 fast;
#   python3 bench/results/2026-12-01/run18-pretransposed/variants/mk.py (as the README of this run says)
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
cli=$PWD/build-gpu/app/cli/stitchcuda
V=bench/results/2026-12-01/run18-pretransposed/variants
t0=$SECONDS
show() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    def find(d, k):
        if isinstance(d, dict):
            if k in d: return d[k]
            for v in d.values():
                r = find(v, k)
                if r is not None: return r
        return None
    t = find(d, "timing") or {}; ver = find(d, "verification") or {}
    if not d.get("ok"): print(sys.argv[2], "ERROR", json.dumps(d.get("error"))[:600])
    print(sys.argv[2], "verified", ver.get("verified"), json.dumps(ver.get("outputs"))[:200],
          {k: t.get(k) for k in ("medianMs", "minMs", "maxMs")})
except Exception as e:
    print(sys.argv[2], "unreadable", e, open(sys.argv[1]).read()[:600])
PY
}
for round in 1 2; do
  for s in 4096x4096x4096 8192x8192x8192 1000x3000x700 128x8192x8192 1000x1000x1000; do
    case $s in 4096*|8192*) ;; *) [ $round = 2 ] && continue ;; esac
    for v in ${VARIANTS:-rs sst sstx tr}; do
      timeout 120 $cli run --no-cache --json $V/$v-$s.plan.json > $OUT/r.json 2>&1
      show $OUT/r.json "$v $s round $round"
    done
  done
done
rm -f $OUT/r.json
[ "${BASELINES:-1}" = 1 ] && python3 bench/torch_baselines.py --only gemm_tf32 --output $OUT/baselines.json > /dev/null 2> $OUT/baselines.err
[ "${BASELINES:-1}" = 1 ] && python3 -c "
import json
for r in json.load(open('$OUT/baselines.json'))['results']: print(r['case'], r['shape'], r['impl'], r['median_ms'], r.get('error'))
" 2>&1 | head -20; tail -3 $OUT/baselines.err
echo "call done in $((SECONDS - t0)) s"
rm -f $OUT/build.log
