#!/usr/bin/env bash
# Run 18, call 5 (session 16; device tool, carry [".devcarry"]): the transpose_b=on winner of call 3
# (256x128, BK 32, 4 stages, swizzle 8) and its pass over B under Nsight Compute at 4096^3, for
# what is left to cuBLAS.
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
BUILD_TARGETS="stitchcuda stitchcuda-worker" source scripts/device/build-gpu.sh || exit 1
t0=$SECONDS
S=bench/profiles/gemm-tf32-wgmma-transposed-4096.schedule.json
timeout 240 bash scripts/device/profile-kernel.sh examples/matmul.te $S "M=4096 N=4096 K=4096" C > "$OUT/profile-C.log" 2>&1
timeout 120 bash scripts/device/profile-kernel.sh examples/matmul.te $S "M=4096 N=4096 K=4096" C_transpose_b SpeedOfLight MemoryWorkloadAnalysis > "$OUT/profile-T.log" 2>&1
for f in "$OUT"/ncu-C.txt "$OUT"/ncu-C_transpose_b.txt; do
  echo "== $f"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps|L1/TEX Hit|Shared|Executed Ipc A|Registers Per|Tensor|Achieved Occupancy|Warp Cycles Per Issued" "$f" | head -40
done
tail -5 "$OUT/profile-C.log" "$OUT/profile-T.log"
gzip -9 "$OUT"/ncu-*.txt
rm -rf "$OUT"/profile-C "$OUT"/profile-C_transpose_b
echo "call done in $((SECONDS - t0)) s"
rm -f "$OUT/build.log"
