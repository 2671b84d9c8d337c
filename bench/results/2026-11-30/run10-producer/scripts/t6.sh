#!/usr/bin/env bash
cd "$(dirname "$0")/.."
prefix=/tmp/stitch-prefix
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
[ -d build-gpu ] || bash exp/run.sh > /dev/null
ninja -C build-gpu -j16 stitchcuda stitchcuda-worker test_codegen_gpu > /tmp/build.log 2>&1 || grep error /tmp/build.log | head
S=./build-gpu/app/cli/stitchcuda
for v in v0 v6 v2 v6; do echo "== $v"; $S run exp/$v/matmul.plan.json --no-cache 2>&1 | grep -E "median|verif"; done
echo "== racecheck small6"; timeout 120 compute-sanitizer --tool racecheck --target-processes all $S run exp/small6/matmul.plan.json --no-cache 2>&1 | grep -E "RACECHECK SUMMARY|verif" | head -4
echo "== synccheck small6"; timeout 120 compute-sanitizer --tool synccheck --target-processes all $S run exp/small6/matmul.plan.json --no-cache 2>&1 | grep -E "SUMMARY|verif" | head -4
timeout 300 ./build-gpu/tests/codegen/test_codegen_gpu --gtest_filter='*Wgmma*' 2>&1 | grep -E "^\[ +(OK|FAILED)|PASSED|FAILED|verified" | tail -20
