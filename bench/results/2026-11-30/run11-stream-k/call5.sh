#!/usr/bin/env bash
# Run 11, call 5 (device tool, carry [".devcarry"]): Nsight Compute (SpeedOfLight, WarpStateStats,
# SchedulerStats) on the TF32 wgmma kernel at 4096^3 with stream_k off and on, and on the issue-5
# register-cap twins (FP32 128x64, block_k 8, 3 stages, min_blocks 2 and 3: same PTX but for
# .minnctapersm, 167 registers each, 3.385 and 3.258 ms in run 5); the SASS opcode counts of the
# two wgmma kernels (cuobjdump).
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
mkdir -p "$OUT"
prefix=/tmp/stitch-prefix
mkdir -p "$prefix"
for f in .devcarry/debs/*.deb; do dpkg -x "$f" "$prefix"; done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTITCHCUDA_BUILD_STUDIO=OFF \
    -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DSTITCHCUDA_DEPS_DIR="$PWD/.devcarry" > /tmp/configure.log 2>&1 || { tail -30 /tmp/configure.log; exit 1; }
ninja -C build-gpu -j16 stitchcuda stitchcuda-worker > /tmp/build.log 2>&1 || { grep -E "error|FAILED" /tmp/build.log | head -30; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
S=bench/results/2026-11-30/run11-stream-k/schedules
for name in tf32-wgmma-256x128 tf32-wgmma-256x128-stream-k fp32-128x64-bk8-s3-mb2 fp32-128x64-bk8-s3-mb3; do
    echo "=== $name"
    OUT=/tmp/prof-$name timeout 120 bash scripts/device/profile-kernel.sh examples/matmul.te "$S/$name.schedule.json" \
        "M=4096 N=4096 K=4096" C SpeedOfLight WarpStateStats SchedulerStats > /tmp/prof-$name.summary 2>&1
    echo "exit $?"
    cp /tmp/prof-$name/ncu-C.txt "$OUT/ncu-$name.txt" 2>/dev/null
    grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Eligible Warps|No Eligible|Stall" "$OUT/ncu-$name.txt" | head -14
done
for name in tf32-wgmma-256x128 tf32-wgmma-256x128-stream-k; do
    src=$(ls /tmp/prof-$name/profile-C/*.cu)
    nvcc -arch=sm_90a -cubin -o /tmp/$name.cubin "$src" 2> /tmp/$name.nvcc.log
    cuobjdump -sass /tmp/$name.cubin > /tmp/$name.sass
    echo "--- $name: $(grep -cE '^\s+/\*[0-9a-f]+\*/' /tmp/$name.sass) SASS instructions;" \
        "$(grep -c HGMMA /tmp/$name.sass) HGMMA, $(grep -c 'WARPGROUP.DEPBAR' /tmp/$name.sass) WARPGROUP.DEPBAR," \
        "$(grep -c 'WARPGROUP.ARRIVE' /tmp/$name.sass) WARPGROUP.ARRIVE, $(grep -c 'BAR.SYNC' /tmp/$name.sass) BAR.SYNC,"\
        "$(grep -c 'LDGSTS' /tmp/$name.sass) LDGSTS, $(grep -c 'STL\|LDL' /tmp/$name.sass) local; nvcc: $(grep -ci warn /tmp/$name.nvcc.log) warnings"
    grep -i warn /tmp/$name.nvcc.log | head -3
    gzip -c /tmp/$name.sass > "$OUT/$name.sass.gz"
done
echo "all done at $(( $(date +%s) - t0 )) s"
