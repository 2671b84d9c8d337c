#!/usr/bin/env bash
# Run 24, call 1 (session 22; device tool, no carry): GEMM 8192x8192x128 (unfused, short K), the
# pairs the model of 339b30a still mis-ranks (calibrate on run 23 call 2). Five generated programs
# (programs/, `stitchcuda generate examples/matmul.te --size M=8192 --size N=8192 --size K=128
# --schedule programs/NAME/matmul.schedule.json`): a and b, one block of 8 warps per SM, 128x256
# tiles of 8x16 and their transpose 256x128 of 16x8 (cp.async, 3 stages; a measured 0.519 ms, b
# 0.445, predicted alike); c, d and e, register-staged: 128x64 of 8x8 at 3 blocks of 4 warps, 128x128
# of 8x8 at 2 blocks of 8 warps, 128x128 of 16x8 at 2 blocks of 4 warps (three or four warps per
# scheduler are predicted 5-15 % slow against two). Each built with
# bench/tools/gemm_program_driver.cu (nvcc, and NVRTC as the bench builds it), timed (30 runs), then
# NVRTC's launch under ncu: warp states, scheduler, instructions and source counters (per SASS
# instruction: the k-loop's FFMAs that move their accumulator against those that do not).
set -uo pipefail
OUT=${OUT:-/tmp/stitch-out}
HERE=bench/results/2026-12-01/run24-stores
W=$(mktemp -d)
t0=$SECONDS
for p in $(ls $HERE/programs); do
    nvcc -O3 -std=c++17 -arch=sm_90 -DGEMM_M=8192 -DGEMM_N=8192 -DGEMM_K=128 \
        -DPROGRAM="\"$PWD/$HERE/programs/$p/matmul.cu\"" -o "$W/$p" bench/tools/gemm_program_driver.cu \
        -lnvrtc -lcuda > "$W/$p.build.log" 2>&1 || { echo "build $p failed"; tail -5 "$W/$p.build.log"; } &
done
wait
echo "built in $((SECONDS - t0)) s"
launch() { case $1 in a_*|b_*) echo "2048 256";; c_*) echo "8192 128";; d_*) echo "4096 256";; e_*) echo "4096 128";; esac; }
mkdir -p "$W/rep"
for p in $(ls $HERE/programs); do
    "$W/$p" "$HERE/programs/$p/matmul.cu" 30 $(launch $p) 2>&1 | sed "s|^|$p |" | tee -a "$W/rep/times.txt"
done
echo "timed at $((SECONDS - t0)) s"
for p in $(ls $HERE/programs); do
    timeout 100 ncu --clock-control none -k C --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats \
        --section SourceCounters --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
        -o "$W/rep/$p" -f "$W/$p" "$HERE/programs/$p/matmul.cu" 2 $(launch $p) > "$W/rep/$p.ncu.log" 2>&1
    ncu -i "$W/rep/$p.ncu-rep" --page details --csv > "$W/rep/$p.details.csv" 2>&1
    ncu -i "$W/rep/$p.ncu-rep" --page raw --csv > "$W/rep/$p.raw.csv" 2>&1
    ncu -i "$W/rep/$p.ncu-rep" --page source --csv --print-source sass > "$W/rep/$p.source.csv" 2>&1
    echo "$p profiled at $((SECONDS - t0)) s: $(wc -c < "$W/rep/$p.source.csv") bytes of source page"
done
rm -f "$W"/rep/*.ncu-rep
tar -C "$W/rep" -czf "$OUT/call1.tar.gz" .
cp "$W/rep/times.txt" "$OUT/times.txt"
echo "call done in $((SECONDS - t0)) s"
