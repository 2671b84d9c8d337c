#!/usr/bin/env bash
# Experiment: copy=producer variants of the 4096^3 wgmma kernel, timed side by side.
cd "$(dirname "$0")/.."
prefix=/tmp/stitch-prefix; mkdir -p $prefix
for f in .devcarry/debs/*.deb; do dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTITCHCUDA_BUILD_STUDIO=OFF -DCUDAToolkit_ROOT=/usr/local/cuda \
  -DCMAKE_PREFIX_PATH="$prefix/usr" -DSTITCHCUDA_DEPS_DIR="$PWD/.devcarry" > /tmp/conf.log 2>&1 || tail -20 /tmp/conf.log
ninja -C build-gpu -j16 stitchcuda stitchcuda-worker > /tmp/build.log 2>&1 || grep -E "error" /tmp/build.log | head
S=./build-gpu/app/cli/stitchcuda
for round in 1 2; do for v in v0 v1 v2 v3; do echo "== $v"; $S run exp/$v/matmul.plan.json --no-cache 2>&1 | grep -iE "median|verif|error|ms" | head -4; done; done
for v in small small2; do echo "== racecheck $v"; timeout 120 compute-sanitizer --tool racecheck --target-processes all $S run exp/$v/matmul.plan.json --no-cache 2>&1 | grep -E "RACECHECK SUMMARY|verif|Error|hazard" | head -6; done
